#!/usr/bin/env python3
"""Which src/ modules call which: a module calls another when it calls a private function
(OPARA__PRIVATE / OPARA__PRIVATE_TOOL) defined there. Layers call only downward: src/ is in layer
folders, listed bottom-up in LAYERS; a module may call modules of its own folder or of a folder
below, never one above or a peer on the same level (cpu and cuda know nothing of each other), and
the calls between modules must have no cycle. Prints the calls with --print; exits 1 naming every
upward or sideways call and every pair of modules that reach each other.
usage: layers.py [--print] [SRC_DIR]"""
import glob
import os
import re
import sys

# Bottom-up; folders on one line are peers.
LAYERS = [["core"], ["ir"], ["model"], ["plan"], ["cpu", "cuda"], ["onnx"], ["api"], ["sim"]]
LEVEL = {folder: i for i, peers in enumerate(LAYERS) for folder in peers}


def module_calls(src):
    files = sorted(glob.glob(os.path.join(src, "**", "*.c"), recursive=True))
    text = {f: open(f, encoding="utf-8", errors="replace").read() for f in files}
    defined = {}
    for f, t in text.items():
        for m in re.finditer(r"^OPARA__PRIVATE(?:_TOOL)?[^\n(]*?\b(opara__\w+)\s*\(", t, re.M):
            # Defined twice: a compiled-out part's stand-in (api/opara_features.c) and the part
            # itself; calls go to the part, the lower of the two.
            home = defined.get(m.group(1))
            if home is None or level_of(src, f) < level_of(src, home):
                defined[m.group(1)] = f
    calls = {f: set() for f in files}
    for f, t in text.items():
        used = set(re.findall(r"\b(opara__\w+)\s*\(", t))
        for name in used:
            home = defined.get(name)
            if home and home != f:
                calls[f].add(home)
    return calls


def level_of(src, f):
    return LEVEL.get(folder(src, f), len(LAYERS))


def folder(src, f):
    rel = os.path.relpath(f, src)
    return rel.split(os.sep)[0] if os.sep in rel else ""


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


def layer_errors(src, calls):
    errors = []
    for a in sorted(calls):
        fa = folder(src, a)
        if fa not in LEVEL:
            errors.append("%s is in no layer folder (%s)" % (os.path.relpath(a, src), ", ".join(sum(LAYERS, []))))
            continue
        for b in sorted(calls[a]):
            fb = folder(src, b)
            if fb == fa or fb not in LEVEL or LEVEL[fb] < LEVEL[fa]:
                continue
            how = "a peer on its level" if LEVEL[fb] == LEVEL[fa] else "a layer above"
            errors.append("upward call: %s (%s/) calls %s (%s/, %s)" % (os.path.basename(a), fa, os.path.basename(b), fb, how))
    return errors


def main(argv):
    show = "--print" in argv
    args = [a for a in argv if a != "--print"]
    src = args[0] if args else "src"
    calls = module_calls(src)
    if show:
        for f in sorted(calls):
            print(os.path.relpath(f, src), "->", " ".join(sorted(os.path.basename(c) for c in calls[f])))
    bad = cycles(calls)
    for a, b in bad:
        print("cycle: %s and %s call each other (directly or through others)" % (os.path.basename(a), os.path.basename(b)))
    errors = layer_errors(src, calls)
    for e in errors:
        print(e)
    return 1 if bad or errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
