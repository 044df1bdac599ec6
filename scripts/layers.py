#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The import circles among the driver's objects.

Each built object of drivers/sroce/ points at the objects that define the
symbols it leaves undefined (nm). A strongly connected component of that
graph is a circle of files that call each other; Documentation/design.rst
(Layers) says which one sroce keeps and why. Prints every circle, and
with -v the references inside the largest.

Usage: layers.py OBJDIR [--max N] [-v]
Exit status 1 when a circle has more than N objects (default 5).
"""
import argparse
import collections
import os
import subprocess
import sys


def graph(objdir):
    objs = sorted(f[:-2] for f in os.listdir(objdir)
                  if f.endswith('.o') and not f.endswith('.mod.o')
                  and f != 'sroce.o')
    if not objs:
        sys.exit(f'layers: no objects in {objdir}')
    defs, undefs = {}, collections.defaultdict(set)
    for o in objs:
        out = subprocess.run(['nm', os.path.join(objdir, o + '.o')],
                             capture_output=True, text=True, check=True)
        for line in out.stdout.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in 'TDBR':
                defs[f[2]] = o
            elif len(f) == 2 and f[0] == 'U':
                undefs[o].add(f[1])
    edges = collections.defaultdict(lambda: collections.defaultdict(list))
    for o, syms in undefs.items():
        for s in syms:
            if defs.get(s, o) != o:
                edges[o][defs[s]].append(s)
    return objs, edges


def circles(objs, edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], 0
    for root in objs:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = n
        n += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n
                    n += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out, key=len, reverse=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('objdir')
    ap.add_argument('--max', type=int, default=5)
    ap.add_argument('-v', action='store_true')
    a = ap.parse_args()
    objs, edges = graph(a.objdir)
    cs = circles(objs, edges)
    for c in cs:
        print(f'circle of {len(c)}: {" ".join(c)}')
    if a.v and cs:
        for src in cs[0]:
            for dst in sorted(edges[src]):
                if dst in cs[0]:
                    print(f'  {src} -> {dst}: {" ".join(sorted(edges[src][dst]))}')
    big = len(cs[0]) if cs else 0
    print(f'{len(objs)} objects, largest circle {big} (at most {a.max})')
    return 1 if big > a.max else 0


if __name__ == '__main__':
    sys.exit(main())
