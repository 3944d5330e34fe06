#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# The tables and what users read agree: every `-dM` word and every CLI command is documented
# and shown by the programs' own help.
#   - Each set word and clear word of the -dM option table (dbg_options[] of
#     src/debug/pool-debug-parse.c) appears in pool_parse_debugging(3) and in each debug help text
#     given (`pools debug help` from a server, `pools -dMhelp`).
#   - Each command of the CLI's table (cli_commands[] of src/introspect/pool-cli.c: its words,
#     "pools show", "show pools", ...) and each literal word of its usage line ("byname",
#     "json", "rate", ...) appears in pools(1); each usage line appears in `pools help` (the
#     answer of a server at level admin) and each command's words in the tool's own --help.
#   - Each of the socket's own commands (socket_commands[] of the same file: "set status",
#     "level", "quit") and the words of its usage appear in pool_cli_listen(3), and its usage
#     line in `pools help`.
# Words are matched whole (a word of letters, digits and '-', not part of a longer one), in the
# man pages as mandoc renders them (so that roff's fonts and escapes do not hide a word), with
# runs of blanks read as one space.
#
# Usage: check-cli-words.py TOP DEBUG_HELP... -- CLI_HELP TOOL_HELP
#   DEBUG_HELP: files holding a -dM help text; CLI_HELP: the answer to `help`; TOOL_HELP: the
#   output of `pools --help`.   Exit 0: they agree; 1: each disagreement printed.
import os
import re
import subprocess
import sys

DBG_ROW = re.compile(r'\{\s*POOL_DBG_\w+\s*,\s*"([^"]+)"\s*,\s*"([^"]+)"\s*,')
STR = r'(?:"(?:[^"\\]|\\.)*"\s*)+'
CLI_ROW = re.compile(r'\{\s*"([^"]+)"\s*,\s*(?:"([^"]+)"|NULL)\s*,\s*POOL_CLI_\w+\s*,'
                     r'\s*(?:\w+|NULL)\s*,\s*(' + STR + r'|NULL)\s*,\s*(?:' + STR +
                     r'|NULL)\s*,\s*(&\w+|NULL)\s*\}')


def table(path, name):
    """The text of the C array `name` of the file: from its '= {' to its closing '};'."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    m = re.search(r"\b" + re.escape(name) + r"\[\]\s*=\s*\{(.*?)\n\};", text, re.S)
    if not m:
        sys.exit(f"check-cli-words: no table {name}[] in {path}")
    return m.group(1)


def c_string(lits):
    """The value of adjacent C string literals (only the escapes the tables use)."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', lits)
    return "".join(parts).replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")


def norm(text):
    return re.sub(r"\s+", " ", text)


def has_word(text, word):
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text) is not None


def render(page):
    """A man page as text: mandoc's ASCII output, overstrikes removed, one long line a block."""
    out = subprocess.run(["mandoc", "-Tascii", "-Owidth=400", page], check=True,
                         capture_output=True, text=True).stdout
    return norm(re.sub(r".\x08", "", out))


def usage_words(usage):
    """The literal words of a usage line: not its <placeholders>, not [ ] | ... punctuation."""
    return re.findall(r"(?<![\w-])[a-z][a-z0-9-]*(?![\w-])", re.sub(r"<[^>]*>", " ", usage))


def read(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def main(argv):
    if "--" not in argv or len(argv) < 4:
        sys.exit("usage: check-cli-words.py TOP DEBUG_HELP... -- CLI_HELP TOOL_HELP")
    top = argv[1]
    sep = argv.index("--")
    debug_helps = argv[2:sep]
    cli_help, tool_help = argv[sep + 1:sep + 3]
    errors = []

    dbg = DBG_ROW.findall(table(os.path.join(top, "src/debug/pool-debug-parse.c"), "dbg_options"))
    if len(dbg) < 10:
        sys.exit(f"check-cli-words: read only {len(dbg)} rows of dbg_options[]")
    page = "man/pool_parse_debugging.3"
    man_dbg = render(os.path.join(top, page))
    helps = [(h, norm(read(h))) for h in debug_helps]
    for words in dbg:
        for w in words:
            if not has_word(man_dbg, w):
                errors.append(f"-dM word '{w}' is not in {page}")
            for h, text in helps:
                if not has_word(text, w):
                    errors.append(f"-dM word '{w}' is not in the debug help {h}")

    rows = CLI_ROW.findall(table(os.path.join(top, "src/introspect/pool-cli.c"),
                                 "cli_commands"))
    if len(rows) < 8:
        sys.exit(f"check-cli-words: read only {len(rows)} rows of cli_commands[]")
    page = "doc/pools.1"
    man_cli = render(os.path.join(top, page))
    raw_answer = read(cli_help)
    answer, tool = norm(raw_answer), norm(read(tool_help))
    for w1, w2, usage, spec in rows:
        cmd = f"{w1} {w2}" if w2 else w1
        if spec != "NULL":
            # a usage generated from the command's argument spec: as `help` prints it
            m = re.search(r"^  (" + re.escape(cmd) + r"(?: [^\n]*)?(?:\n    \S[^\n]*)*)",
                          raw_answer, re.M)
            if not m:
                errors.append(f"no usage of '{cmd}' in `pools help` ({cli_help})")
                continue
            lines = m.group(1).split("\n")
            # the first line up to the help text (after two blanks or more), then the rest
            usage = " ".join([re.split(r" {2,}", lines[0])[0]] + [l.strip() for l in lines[1:]])
            usage = '"' + usage.replace("\\", "\\\\").replace('"', '\\"') + '"'
        # the tool sends "pools " before every command but help, so its --help omits it
        tool_cmd = w2 if w1 == "pools" else cmd
        if not has_word(man_cli, cmd):
            errors.append(f"command '{cmd}' is not in {page}")
        if usage == "NULL":
            # an alias: the tool cannot send it (it puts "pools " before the command)
            if not has_word(answer, cmd) and not has_word(answer, f"'{cmd}"):
                errors.append(f"alias '{cmd}' is not named in `pools help` ({cli_help})")
            continue
        if not has_word(tool, tool_cmd):
            errors.append(f"command '{tool_cmd}' is not in pools --help ({tool_help})")
        usage = norm(c_string(usage))
        if usage not in answer:
            errors.append(f"usage '{usage}' of '{cmd}' is not in `pools help` ({cli_help})")
        for w in usage_words(usage):
            if not has_word(man_cli, w):
                errors.append(f"word '{w}' of '{usage}' is not in {page}")

    # the socket's own commands: in pool_cli_listen(3) and in `pools help`, not in the tool's
    # --help nor in pools(1) (the tool sends none of them)
    srows = CLI_ROW.findall(table(os.path.join(top, "src/introspect/pool-cli.c"),
                                  "socket_commands"))
    if len(srows) < 3:
        sys.exit(f"check-cli-words: read only {len(srows)} rows of socket_commands[]")
    page = "man/pool_cli_listen.3"
    man_sock = render(os.path.join(top, page))
    for w1, w2, usage, _ in srows:
        cmd = f"{w1} {w2}" if w2 else w1
        usage = norm(c_string(usage))
        if not has_word(man_sock, cmd):
            errors.append(f"socket command '{cmd}' is not in {page}")
        if usage not in answer:
            errors.append(f"usage '{usage}' of '{cmd}' is not in `pools help` ({cli_help})")
        for w in usage_words(usage):
            if not has_word(man_sock, w):
                errors.append(f"word '{w}' of '{usage}' is not in {page}")
    rows += srows

    for e in errors:
        print("FAIL: " + e)
    print(f"check-cli-words: {len(dbg)} -dM options, {len(rows)} CLI commands: "
          f"{len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
