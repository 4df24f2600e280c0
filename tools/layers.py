#!/usr/bin/env python3
"""tools/layers.py — check the source layout of docs/DESIGN.md ("Layers"):
the folders of src/ and cuda/ include each other without a circle, and no
folder holds more than 25 C files.  Prints the folder graph in layer order
(lowest first) and exits 1 on a circle or an oversized folder.

An include is an edge from the including file's folder to the folder of the
file it names, found as the compiler finds it (next to the includer, then
under src/, the -I of the Makefile).
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MAX_C_FILES = 25
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folders():
    """Every folder of src/ (src/<name>) and cuda/ with its source files."""
    out = {}
    for top in ("src", "cuda"):
        base = os.path.join(ROOT, top)
        for dirpath, _, files in os.walk(base):
            srcs = [f for f in files if f.endswith((".c", ".h", ".cu", ".cuh"))]
            if not srcs:
                continue
            rel = os.path.relpath(dirpath, ROOT)
            name = rel[len("src/"):] if rel.startswith("src/") else rel
            out[name] = [os.path.join(dirpath, f) for f in sorted(srcs)]
    return out


def resolve(path, inc):
    """The file an include names: next to the includer, else under src/ (-Isrc)."""
    for base in (os.path.dirname(path), os.path.join(ROOT, "src")):
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.exists(cand):
            return cand
    return None


def folder_of(path):
    """A file's folder as folders() names it."""
    rel = os.path.relpath(os.path.dirname(path), os.path.normpath(ROOT))
    return rel[len("src/"):] if rel.startswith("src/") else rel


def edges(folder_files):
    """Folder -> {folder: [(file, header)]} for includes that cross folders."""
    graph = {f: {} for f in folder_files}
    for name, files in folder_files.items():
        for path in files:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            for inc in INCLUDE.findall(text):
                target = resolve(path, inc)
                if target is None:
                    continue
                head = folder_of(target)
                if head in graph and head != name:
                    graph[name].setdefault(head, []).append((os.path.relpath(path, ROOT), inc))
    return graph


def find_circle(graph):
    """One circle of folders as a list, or None (depth-first search)."""
    state = {}
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def layer_order(graph):
    """Folders lowest first: each after every folder it includes."""
    order, done = [], set()
    while len(done) < len(graph):
        ready = sorted(n for n in graph if n not in done and set(graph[n]) <= done)
        if not ready:
            break
        order.extend(ready)
        done.update(ready)
    return order


def main():
    ff = folders()
    graph = edges(ff)
    ok = True
    for name, files in sorted(ff.items()):
        nc = sum(1 for f in files if f.endswith(".c"))
        if nc > MAX_C_FILES:
            print(f"FAIL: {name} holds {nc} C files (at most {MAX_C_FILES})")
            ok = False
    circle = find_circle(graph)
    if circle:
        print("FAIL: include circle: " + " -> ".join(circle))
        for a, b in zip(circle, circle[1:]):
            for path, inc in graph[a][b][:3]:
                print(f"    {path} includes \"{inc}\"")
        ok = False
    else:
        for n in layer_order(graph):
            nc = sum(1 for f in ff[n] if f.endswith((".c", ".cu")))
            print(f"{n:8s} {nc:3d} files  includes: {', '.join(sorted(graph[n])) or '-'}")
    print("layers: ok" if ok else "layers: FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
