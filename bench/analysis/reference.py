#!/usr/bin/env python3
"""bench/analysis/reference.py — a tiny reference fixpoint of the analysis
rules over extract.py's facts, for small inputs: the answer a later GPU/CPU
differential of gpudl compares against (issue 23).  Two independent ways:

  * hand-written Andersen, CSPA and CSDA (the published rules, coded);
  * a generic naive evaluator of the .dl files (positive rules, binary or
    not), so the rules files and the hand-written code must agree.

    python3 reference.py FACTS_DIR OUT_DIR    # writes pt, valueFlow, memoryAlias,
                                              # valueAlias, null .tsv; exit 1 on disagreement
Standard library only; quadratic in places, meant for the test's facts.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def read_facts(d):
    """{relation: set of (a, b)} from the .tsv files of directory d."""
    facts = {}
    for f in sorted(os.listdir(d)):
        if f.endswith('.tsv'):
            with open(os.path.join(d, f)) as fh:
                facts[f[:-4]] = {tuple(l.rstrip('\n').split('\t')) for l in fh if l.strip()}
    return facts


def by_first(rel):
    """Index a binary relation by its first column."""
    idx = {}
    for a, b in rel:
        idx.setdefault(a, set()).add(b)
    return idx


def andersen(f):
    """pt by Andersen's four rules, iterated to the fixpoint."""
    pt = set(f['addr'])
    while True:
        ptq = by_first(pt)
        new = set(pt)
        new |= {(p, a) for p, q in f['assgn'] for a in ptq.get(q, ())}                  # p = q
        new |= {(p, a) for p, q in f['load'] for r in ptq.get(q, ()) for a in ptq.get(r, ())}   # p = *q
        new |= {(r, a) for p, q in f['store'] for r in ptq.get(p, ()) for a in ptq.get(q, ())}  # *p = q
        if new == pt:
            return {'pt': pt}
        pt = new


def cspa(f):
    """valueFlow, memoryAlias, valueAlias by the published CSPA rules."""
    assign, deref = f['assign'], f['dereference']
    nodes_src = {x for x, _ in assign}
    nodes_dst = {y for _, y in assign}
    vf = set(assign) | {(x, x) for x in nodes_src | nodes_dst}
    ma = {(x, x) for x in nodes_src | nodes_dst}
    va = set()
    deref_of = by_first(deref)
    while True:
        vfi, mai = by_first(vf), by_first(ma)
        vf_rev = {}
        for z, x in vf:
            vf_rev.setdefault(z, set()).add(x)
        nvf = set(vf)
        nvf |= {(x, y) for x, z in assign for y in mai.get(z, ())}
        nvf |= {(x, y) for x, z in vf for y in vfi.get(z, ())}
        nva = {(x, y) for z, xs in vf_rev.items() for x in xs for y in xs}
        nva |= {(x, y) for z, xs in vf_rev.items() for w in mai.get(z, ()) for x in xs for y in vfi.get(w, ())}
        nma = set(ma)
        vai = by_first(va)
        nma |= {(x, w) for y, xs in deref_of.items() for z in vai.get(y, ())
                for x in xs for w in deref_of.get(z, ())}
        if nvf == vf and nma == ma and nva == va:
            return {'valueFlow': vf, 'memoryAlias': ma, 'valueAlias': va}
        vf, ma, va = nvf, nma, nva


def csda(f):
    """null by the published CSDA rules: null sites reaching values along arcs."""
    null, arc = set(f['nullEdge']), by_first(f['arc'])
    while True:
        new = null | {(x, y) for x, w in null for y in arc.get(w, ())}
        if new == null:
            return {'null': null}
        null = new


ATOM = re.compile(r'(\w+)\s*\(([^)]*)\)')


def parse_dl(text):
    """[(head, [body atoms])] of a .dl file; an atom is (name, [terms])."""
    text = re.sub(r'//[^\n]*', '', text)
    rules = []
    for stmt in text.split('.'):
        if ':-' not in stmt:
            continue
        head, body = stmt.split(':-')
        atoms = [(n, [t.strip() for t in a.split(',')]) for n, a in ATOM.findall(body)]
        n, a = ATOM.findall(head)[0]
        rules.append(((n, [t.strip() for t in a.split(',')]), atoms))
    return rules


def match(atom, rel, env):
    """Extensions of binding env by the tuples of rel that match atom."""
    for t in rel:
        e = dict(env)
        for term, v in zip(atom[1], t):
            if e.setdefault(term, v) != v:
                break
        else:
            yield e


def evaluate(rules, facts):
    """Naive fixpoint of positive rules over facts; returns the derived relations."""
    db = {k: set(v) for k, v in facts.items()}
    heads = {h[0] for h, _ in rules}
    for h in heads:
        db.setdefault(h, set())
    changed = True
    while changed:
        changed = False
        for (hn, hterms), body in rules:
            envs = [{}]
            for atom in body:
                envs = [e2 for e in envs for e2 in match(atom, db.get(atom[0], ()), e)]
            new = {tuple(e[t] for t in hterms) for e in envs} - db[hn]
            if new:
                db[hn] |= new
                changed = True
    return {h: db[h] for h in heads}


def main():
    """Both ways on every program; write the hand-written results; 1 on disagreement."""
    facts_dir, out = sys.argv[1], sys.argv[2]
    f = read_facts(facts_dir)
    os.makedirs(out, exist_ok=True)
    bad = 0
    for prog, coded in (('andersen', andersen), ('cspa', cspa), ('csda', csda)):
        mine = coded(f)
        with open(os.path.join(HERE, prog + '.dl')) as fh:
            generic = evaluate(parse_dl(fh.read()), f)
        for rel, rows in sorted(mine.items()):
            same = generic.get(rel) == rows
            print('%s: %s.dl and the coded rules agree on %s (%d tuples%s)'
                  % ('ok' if same else 'FAIL', prog, rel, len(rows),
                     '' if same else '; the .dl file gives %d' % len(generic.get(rel, ()))))
            bad += not same
            with open(os.path.join(out, rel + '.tsv'), 'w') as fh:
                fh.writelines(a + '\t' + b + '\n' for a, b in sorted(rows))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
