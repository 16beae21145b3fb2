#!/usr/bin/env python3
"""Which src/ modules call which: a module calls another when it calls a private function
(OPARA__PRIVATE / OPARA__PRIVATE_TOOL) defined there. Layers call only downward, so the calls
between modules must have no cycle. Prints the calls with --print; exits 1 naming every pair of
modules that reach each other. usage: layers.py [--print] [SRC_DIR]"""
import glob
import os
import re
import sys


def module_calls(src):
    files = sorted(glob.glob(os.path.join(src, "*.c")))
    text = {f: open(f, encoding="utf-8", errors="replace").read() for f in files}
    defined = {}
    for f, t in text.items():
        for m in re.finditer(r"^OPARA__PRIVATE(?:_TOOL)?[^\n(]*?\b(opara__\w+)\s*\(", t, re.M):
            defined.setdefault(m.group(1), f)
    calls = {f: set() for f in files}
    for f, t in text.items():
        used = set(re.findall(r"\b(opara__\w+)\s*\(", t))
        for name in used:
            home = defined.get(name)
            if home and home != f:
                calls[f].add(home)
    return calls


def cycles(calls):
    def reach(a):
        seen, todo = set(), [a]
        while todo:
            for b in calls[todo.pop()]:
                if b not in seen:
                    seen.add(b)
                    todo.append(b)
        return seen
    found = set()
    for a in calls:
        for b in calls[a]:
            if a in reach(b):
                found.add(tuple(sorted((a, b))))
    return sorted(found)


def main(argv):
    show = "--print" in argv
    args = [a for a in argv if a != "--print"]
    src = args[0] if args else "src"
    calls = module_calls(src)
    if show:
        for f in sorted(calls):
            print(os.path.basename(f), "->", " ".join(sorted(os.path.basename(c) for c in calls[f])))
    bad = cycles(calls)
    for a, b in bad:
        print("cycle: %s and %s call each other (directly or through others)" % (os.path.basename(a), os.path.basename(b)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
