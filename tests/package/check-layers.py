#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 libpool developers
#
# The layer order of src/, one folder per layer (LAYERS below is the record of it), checked
# from the code itself: a file may include the headers and call the functions and use the
# variables of its own layer and of the layers below it, never of a layer above; files of one
# layer may depend on each other in one direction only (no circle); tools/ use the public
# headers only.
#
# How it reads the code: comments and strings are removed; a function or variable "belongs" to
# the src/*/*.c file that defines it at file scope (a line that starts a definition, not a
# declaration ending in ';'); a use is the name followed by '(' (calls) or the bare name
# (variables) in another file. A file's layer is the folder it is in (LAYERS below).
#
# Usage: check-layers.py [TOP]   (exit 0: the order holds; 1: each breach printed)
import os
import re
import sys

# Layers, bottom to top: each is a folder of src/, and a file's layer is its folder. A folder
# not listed here, or a source file directly in src/, is an error: give every new file its
# place. The slab tier sits above debug (its reports) and below the shared tier, which takes
# its objects from it.
LAYERS = [
    ("os", "os"),
    ("debug", "debug"),
    ("config", "config"),
    ("slab tier", "slab"),
    ("shared tier", "shared"),
    ("thread-cache tier", "tcache"),
    ("pool heads", "core"),
    ("introspection", "introspect"),
]
# src/base/ holds the headers of types, constants and pure inline helpers (pool-head-t.h,
# pool-assert.h, pool-lock.h, ...): below every layer, any file may include them, and they may
# include only each other.
NEUTRAL_DIR = "base"


def layer_table(src):
    """Map "folder/file" of every source file of src/ to its layer index (None: neutral)."""
    table, errors = {}, []
    dirs = {d: i for i, (_, d) in enumerate(LAYERS)}
    for entry in sorted(os.listdir(src)):
        path = os.path.join(src, entry)
        if not os.path.isdir(path):
            if entry.endswith((".c", ".h")):
                errors.append(f"src/{entry}: a source file outside the layer folders "
                              f"(move it into the folder of its layer)")
            continue
        if entry != NEUTRAL_DIR and entry not in dirs:
            errors.append(f"src/{entry}/: not a layer folder of tests/package/check-layers.py "
                          f"(add it to LAYERS in its place)")
            continue
        for f in sorted(os.listdir(path)):
            if f.endswith((".c", ".h")):
                table[f"{entry}/{f}"] = None if entry == NEUTRAL_DIR else dirs[entry]
    return table, errors


def strip_code(text):
    """Remove comments, string and character literals (keep line structure)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


DEF_FUNC = re.compile(r"^(?!static\b)(?:[A-Za-z_][\w \t\*]*?[\s\*])?(pool_{1,2}[a-z0-9_]+)\s*\(",
                      re.M)
DEF_VAR = re.compile(r"^(?!static\b)(?!extern\b)[A-Za-z_][\w \t\*]*?[\s\*](pool_{1,2}[a-z0-9_]+)"
                     r"(?:\s*\[[^\]]*\])?\s*(?:=|;|__attribute__)", re.M)
INCLUDE = re.compile(r'^#\s*include\s+"([^"]+)"', re.M)


def definitions(code):
    names = set()
    for m in DEF_FUNC.finditer(code):
        # a definition: the parameter list is followed by '{' before any ';'
        rest = code[m.end():]
        depth, k = 1, 0
        while k < len(rest) and depth:
            depth += {"(": 1, ")": -1}.get(rest[k], 0)
            k += 1
        tail = rest[k:].lstrip()
        if tail.startswith("{"):
            names.add(m.group(1))
    for m in DEF_VAR.finditer(code):
        names.add(m.group(1))
    return names


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else "."
    src = os.path.join(top, "src")
    table, errors = layer_table(src)
    code = {}
    for f in table:
        with open(os.path.join(src, f), encoding="utf-8") as fh:
            raw = fh.read()
        code[f] = (raw, strip_code(raw))

    def name(layer):
        return "base" if layer is None else LAYERS[layer][0]

    owner = {}
    for f, (_, c) in code.items():
        if f.endswith(".c"):
            for n in definitions(c):
                owner[n] = f

    edges = {}
    for f, (raw, c) in code.items():
        lf = table[f]
        for inc in INCLUDE.findall(raw):
            if inc not in table:
                errors.append(f"src/{f}: includes \"{inc}\", which is no file of a layer "
                              f"folder (includes name it from src/, as \"os/pool-os.h\")")
                continue
            li = table[inc]
            if inc == f:
                continue
            if lf is None and li is not None:
                errors.append(f"src/{f} (base) includes \"{inc}\" of layer {name(li)}: "
                              f"base headers include only each other")
                continue
            if li is None:
                continue
            if li > lf:
                errors.append(f"src/{f} ({name(lf)}) includes \"{inc}\" of a higher "
                              f"layer ({name(li)})")
            edges.setdefault(f, set()).add(inc[:-2] + ".c" if inc[:-2] + ".c" in code else inc)
        if not f.endswith(".c"):
            continue
        for n, where in owner.items():
            if where == f:
                continue
            if re.search(r"\b" + re.escape(n) + r"\b", c):
                lw = table[where]
                if lw > lf:
                    errors.append(f"src/{f} ({name(lf)}) uses {n}() of src/{where} "
                                  f"({name(lw)}), a higher layer")
                edges.setdefault(f, set()).add(where)

    # circles among .c files (through calls and includes of their headers)
    def cfile(x):
        return x if x.endswith(".c") else (x[:-2] + ".c" if x[:-2] + ".c" in code else None)

    graph = {f: {cfile(t) for t in ts if cfile(t) and cfile(t) != f} for f, ts in edges.items()}
    state, stack = {}, []

    def visit(f):
        state[f] = 1
        stack.append(f)
        for t in sorted(graph.get(f, ())):
            if state.get(t) == 1:
                cyc = stack[stack.index(t):] + [t]
                errors.append("circle: " + " -> ".join("src/" + x for x in cyc))
            elif not state.get(t):
                visit(t)
        stack.pop()
        state[f] = 2

    for f in sorted(graph):
        if not state.get(f):
            visit(f)

    # tools use the public API only
    tools = os.path.join(top, "tools")
    if os.path.isdir(tools):
        for f in sorted(os.listdir(tools)):
            if not f.endswith((".c", ".h")):
                continue
            with open(os.path.join(tools, f), encoding="utf-8") as fh:
                for inc in INCLUDE.findall(fh.read()):
                    if inc in table:
                        errors.append(f"tools/{f}: includes the private header \"{inc}\"")

    for e in errors:
        print("layers: " + e)
    print(f"layers: {len(code)} files in {len(LAYERS)} layers, {len(owner)} names, "
          f"{sum(len(v) for v in graph.values())} dependencies: "
          + ("OK" if not errors else f"{len(errors)} breaches"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
