#!/usr/bin/env python3
"""bench/popper/make_recursive.py — recursive ILP tasks in Popper's format.

    python3 make_recursive.py OUTDIR [SEED]

Writes OUTDIR/{ancestor,pointsto,grid-path,grandparent-pi,scc-pi}/ with bias.pl (head_pred,
body_pred, max_body, max_vars, enable_recursion), bk.pl and exs.pl, so that
bench/popper/run.sh learns them through its own loader like any Popper task:

  ancestor    ancestor/2 from father/2 and mother/2 (two families of five
              generations; every ancestor pair positive, every other pair of
              the same family negative)
  pointsto    pt/2 from addr/2, assgn/2, load/2, store/2 of a random C-like
              program (Andersen's analysis: load and store read pt twice)
  grid-path   reach/2 on a 6 x 6 grid moving east or north (west/south given)
  grandparent-pi  grandparent/2 from father/2 and mother/2: smallest with an
              invented helper (the union of the two)
  scc-pi      same_scc/2 (each node reaches the other) from edge/2 of a
              random directed graph: needs a recursive helper (the closure)

The solutions (not given to the learner):
  ancestor(A,B) :- father(A,B).   ancestor(A,B) :- mother(A,B).
  ancestor(A,B) :- ancestor(A,C), ancestor(C,B).   (or parent-step forms)
  pt(A,B) :- addr(A,B).   pt(A,B) :- assgn(A,C), pt(C,B).
  pt(A,B) :- load(A,C), pt(C,D), pt(D,B).   pt(A,B) :- store(C,D), pt(C,A), pt(D,B).
  reach(A,B) :- east(A,B).   reach(A,B) :- north(A,B).   reach(A,B) :- reach(A,C), reach(C,B).
  grandparent(A,B) :- inv(A,C), inv(C,B).   inv(A,B) :- father(A,B).   inv(A,B) :- mother(A,B).
  same_scc(A,B) :- inv(A,B), inv(B,A).   inv(A,B) :- edge(A,B).   inv(A,B) :- edge(A,C), inv(C,B).
"""
import os
import random
import sys


def write_task(out, name, head, body, max_body, max_vars, bk, pos, neg):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "bias.pl"), "w") as f:
        f.write("head_pred(%s,2).\n" % head)
        for b in body:
            f.write("body_pred(%s,2).\n" % b)
        f.write("max_body(%d).\nmax_vars(%d).\nenable_recursion.\n" % (max_body, max_vars))
    with open(os.path.join(d, "bk.pl"), "w") as f:
        for p, rows in bk.items():
            for a, b in rows:
                f.write("%s(%s,%s).\n" % (p, a, b))
    with open(os.path.join(d, "exs.pl"), "w") as f:
        for a, b in sorted(pos):
            f.write("pos(%s(%s,%s)).\n" % (head, a, b))
        for a, b in sorted(neg):
            f.write("neg(%s(%s,%s)).\n" % (head, a, b))


def closure(edges):
    succ = {}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)
    out = set()
    for a in list(succ):
        seen, stack = set(), [a]
        while stack:
            for b in succ.get(stack.pop(), ()):
                if b not in seen:
                    seen.add(b)
                    stack.append(b)
        out |= {(a, b) for b in seen}
    return out


def two_families(rng, prefix, ngens):
    """Two families of ngens generations of six people (PREFIX<family>_<generation>_<i>);
    each person after the first generation gets a father (an even i) and a mother (an
    odd i) drawn from the generation before.  Returns the father and mother pairs and
    each family's people, for the tasks over a family tree."""
    father, mother, people = [], [], []
    for fam in (1, 2):
        gens = [["%s%d_%d_%d" % (prefix, fam, g, i) for i in range(6)] for g in range(ngens)]
        people.append([p for g in gens for p in g])
        for g in range(1, ngens):
            for c in gens[g]:
                father.append((gens[g - 1][2 * rng.randrange(3)], c))
                mother.append((gens[g - 1][2 * rng.randrange(3) + 1], c))
    return father, mother, people


def ancestor(out, rng):
    father, mother, people = two_families(rng, "p", 5)
    anc = closure(father + mother)
    pos = set(anc)
    neg = {(a, b) for fam in people for a in fam for b in fam if (a, b) not in anc}
    write_task(out, "ancestor", "ancestor", ["father", "mother"], 2, 3,
               {"father": father, "mother": mother}, pos, neg)


def pointsto(out, rng):
    nv, no = 60, 30
    var = ["v%d" % i for i in range(nv)]
    obj = ["o%d" % i for i in range(no)]
    addr = [(rng.choice(var), rng.choice(obj)) for _ in range(nv // 2)]
    assgn = [(rng.choice(var), rng.choice(var)) for _ in range(nv // 2)]
    load = [(rng.choice(var), rng.choice(var)) for _ in range(nv // 4)]
    store = [(rng.choice(var), rng.choice(var)) for _ in range(nv // 4)]
    pt = set(addr)
    changed = True
    while changed:
        new = set()
        for a, b in assgn:
            new |= {(a, y) for (x, y) in pt if x == b}
        for a, b in load:
            mid = {y for (x, y) in pt if x == b}
            new |= {(a, y) for (x, y) in pt if x in mid}
        for a, b in store:
            tgt = {y for (x, y) in pt if x == a}
            src = {y for (x, y) in pt if x == b}
            new |= {(t, s) for t in tgt for s in src}
        changed = not new <= pt
        pt |= new
    every = var + obj
    neg = {(a, b) for a in every for b in every if (a, b) not in pt}
    write_task(out, "pointsto", "pt", ["addr", "assgn", "load", "store"], 3, 4,
               {"addr": addr, "assgn": assgn, "load": load, "store": store}, pt, neg)


def grid(out, rng):
    side = 6
    cell = lambda i, j: "c%d_%d" % (i, j)
    east = [(cell(i, j), cell(i, j + 1)) for i in range(side) for j in range(side - 1)]
    north = [(cell(i, j), cell(i + 1, j)) for i in range(side - 1) for j in range(side)]
    reach = closure(east + north)
    cells = [cell(i, j) for i in range(side) for j in range(side)]
    neg = {(a, b) for a in cells for b in cells if (a, b) not in reach}
    write_task(out, "grid-path", "reach", ["east", "north", "west", "south"], 2, 3,
               {"east": east, "north": north, "west": [(b, a) for a, b in east],
                "south": [(b, a) for a, b in north]}, reach, neg)


def grandparent(out, rng):
    father, mother, people = two_families(rng, "g", 4)
    par = father + mother
    gp = {(a, d) for (a, b) in par for (c, d) in par if b == c}
    neg = {(a, b) for fam in people for a in fam for b in fam if (a, b) not in gp}
    write_task(out, "grandparent-pi", "grandparent", ["father", "mother"], 2, 3,
               {"father": father, "mother": mother}, gp, neg)


def scc(out, rng):
    n = 30
    node = ["n%d" % i for i in range(n)]
    edge = sorted({(rng.choice(node), rng.choice(node)) for _ in range(n + n // 3)})
    reach = closure(edge)
    pos = {(a, b) for (a, b) in reach if (b, a) in reach}
    neg = {(a, b) for a in node for b in node if (a, b) not in pos}
    write_task(out, "scc-pi", "same_scc", ["edge"], 2, 3, {"edge": edge}, pos, neg)


def main():
    out = sys.argv[1]
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    ancestor(out, rng)
    pointsto(out, rng)
    grid(out, rng)
    grandparent(out, rng)
    scc(out, rng)


if __name__ == "__main__":
    main()
