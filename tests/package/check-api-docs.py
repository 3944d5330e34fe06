#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# The header, the man pages and doc/api.md agree on the public API: each public function and
# variable of include/pool/ (POOL_API or POOL_INLINE, not a pool__ internal)
#   - appears in the SYNOPSIS of exactly one section 3 page of man/, with the header's prototype
#     (return type, name, parameter types and names), and
#   - appears in doc/api.md with the same prototype (a `code span` or a line of a code block);
# and neither a SYNOPSIS nor doc/api.md shows the prototype of a pool_ function that the header
# does not declare. Prototypes are compared with comments removed and white space normalised
# ("struct pool_head *pool" and "struct pool_head* pool" are the same).
#
# How it reads each source: the header with comments and attributes removed, a declaration
# being what lies between two semicolons or braces at file scope; a SYNOPSIS line by line, the
# arguments of each .B/.BI/.BR/.IR request joined without the blanks between them (roff's
# alternating fonts), a prototype continuing while its parentheses are open or it ends with a
# comma; doc/api.md's `code spans` and the lines of its ``` blocks.
#
# Usage: check-api-docs.py [TOP]   (exit 0: they agree; 1: each disagreement printed)
import glob
import os
import re
import sys

PROTO = re.compile(r"^(?:extern\s+)?[A-Za-z_][\w\s\*]*?[\s\*](pool_[a-z0-9_]+)\s*(\(.*\))?$", re.S)


def norm(text):
    """A prototype in one canonical spelling: no 'extern', no ';', blanks only between words."""
    t = re.sub(r"\bextern\b", " ", text)
    t = t.strip().rstrip(";").strip()
    t = re.sub(r"\s+", " ", t)
    t = re.sub(r"\s*([\*\(\),\[\]])\s*", r"\1", t)
    return t


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def header_api(top):
    """name -> canonical prototype, for the public functions and variables of include/pool/."""
    api = {}
    for path in sorted(glob.glob(os.path.join(top, "include/pool/*.h"))):
        with open(path, encoding="utf-8") as fh:
            code = strip_comments(fh.read())
        # C++'s extern "C" braces are not C's; other preprocessor lines (macro bodies
        # included) are not declarations
        code = re.sub(r"^#\s*ifdef\s+__cplusplus\b.*?^#\s*endif", " ", code, flags=re.S | re.M)
        code = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", code, flags=re.M)
        code = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", " ", code)
        depth, start, i = 0, 0, 0
        while i < len(code):
            c = code[i]
            if c == "{":
                if depth == 0:
                    decl = code[start:i]
                    m = re.search(r"\bPOOL_INLINE\b(.*)$", decl, re.S)
                    if m:
                        add(api, m.group(1), path)
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    start = i + 1
            elif c == ";" and depth == 0:
                decl = code[start:i]
                m = re.search(r"\bPOOL_API\b(.*)$", decl, re.S)
                if m:
                    add(api, m.group(1), path)
                start = i + 1
            i += 1
    return api


def add(api, decl, where):
    decl = re.sub(r"\b__thread\b", " ", decl)
    m = PROTO.match(decl.strip())
    if not m or m.group(1).startswith("pool__"):
        return
    api[m.group(1)] = norm(decl)


ROFF_ARG = re.compile(r'"((?:[^"]|"")*)"|(\S+)')


def roff_text(line):
    """The text a .B/.BI/.BR/.I/.IR... request line prints, fonts dropped."""
    req, _, rest = line.partition(" ")
    words = [(m.group(2) if m.group(2) is not None else m.group(1)).replace('""', '"')
             for m in ROFF_ARG.finditer(rest)]
    # alternating-font requests print their arguments without blanks between them; .B and .I
    # print them separated by one blank
    sep = " " if req in (".B", ".I") else ""
    text = sep.join(words)
    return text.replace("\\-", "-").replace("\\e", "\\").replace("\\(dq", '"')


def man_synopses(top):
    """(page, name, canonical prototype) for each prototype of a pool_ name in a SYNOPSIS."""
    found = []
    for page in sorted(glob.glob(os.path.join(top, "man/*.3"))):
        with open(page, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        on, acc = False, ""
        for line in lines:
            if line.startswith(".SH"):
                on = line.split()[1:2] == ["SYNOPSIS"]
                acc = ""
                continue
            if not on or not re.match(r"\.(B|I|BI|IB|BR|RB|IR|RI)( |$)", line):
                acc = ""
                continue
            text = roff_text(line)
            acc = (acc + " " + text) if acc else text
            if acc.count("(") > acc.count(")") or acc.rstrip().endswith(","):
                continue
            m = PROTO.match(acc.strip().rstrip(";").strip())
            if m and not acc.lstrip().startswith("#") and (m.group(2) or "extern" in acc):
                found.append((os.path.relpath(page, top), m.group(1), norm(acc)))
            acc = ""
    return found


def api_md(top):
    """name -> set of canonical prototypes doc/api.md shows for it."""
    with open(os.path.join(top, "doc/api.md"), encoding="utf-8") as fh:
        text = fh.read()
    pieces = []
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.S | re.M):
        pieces.extend(block.split("\n"))
    text = re.sub(r"^```[a-z]*\n.*?^```", " ", text, flags=re.S | re.M)
    pieces.extend(re.findall(r"`([^`\n]+)`", text))
    shown = {}
    for p in pieces:
        p = p.replace("\\|", "|").strip()
        m = PROTO.match(p.rstrip(";").strip())
        if m and (m.group(2) or p.startswith(("unsigned", "extern"))):
            # a call in an example (`pool_gc(NULL)`) has no type before its name: PROTO needs one
            shown.setdefault(m.group(1), set()).add(norm(p))
    return shown


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else "."
    errors = []
    api = header_api(top)
    if not api:
        print("api-docs: no public declaration found in include/pool/")
        return 1

    pages = {}
    for page, name, proto in man_synopses(top):
        if name not in api:
            errors.append(f"{page}: SYNOPSIS shows {name}(), which include/pool/ does not declare")
            continue
        pages.setdefault(name, []).append(page)
        if proto != api[name]:
            errors.append(f"{page}: SYNOPSIS of {name} differs from the header:\n"
                          f"    man:    {proto}\n    header: {api[name]}")
    for name in sorted(api):
        where = pages.get(name, [])
        if len(where) != 1:
            errors.append(f"{name}: in the SYNOPSIS of {len(where)} section 3 pages "
                          f"({', '.join(where) or 'none'}), expected exactly one")

    shown = api_md(top)
    for name, protos in sorted(shown.items()):
        if name not in api:
            errors.append(f"doc/api.md shows {name}(), which include/pool/ does not declare")
            continue
        for p in sorted(protos - {api[name]}):
            errors.append(f"doc/api.md: {name} differs from the header:\n"
                          f"    api.md: {p}\n    header: {api[name]}")
    for name in sorted(api):
        if api[name] not in shown.get(name, set()):
            errors.append(f"doc/api.md does not show {name} with its prototype: {api[name]}")

    for e in errors:
        print("api-docs: " + e)
    print(f"api-docs: {len(api)} public names; man SYNOPSIS and doc/api.md "
          + ("agree with include/pool/" if not errors else f"disagree ({len(errors)})"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
