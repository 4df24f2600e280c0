#!/usr/bin/env python3
"""bench/popper/load.py — a Popper task folder as SQL for gpudl.

    python3 load.py TASKDIR SCHEMA PROGRAM > task.sql   (meta on stderr as KEY=VALUE)

Reads bias.pl (head_pred, body_pred, type/2, constant/2, max_body, max_vars,
enable_recursion),
bk.pl (ground facts) and exs.pl (pos/neg) with a small reader of ground
Prolog facts (stdlib only), and writes: one table per background predicate
(SCHEMA.bk_NAME, columns c1..cN) and SCHEMA.pos / SCHEMA.neg for the
examples, a gpudl program PROGRAM with each body predicate bound to its
table.  Column types: arguments that share a declared type (type/2), or
share a value, form one group; a group whose values are all integers is
bigint, otherwise text (so columns that may join have one SQL type).
The declared types are printed as gpudl_learn's 'types' argument.
"""
import os
import shlex
import re
import sys

FACT = re.compile(r"^\s*([a-z][A-Za-z0-9_]*)\s*\((.*)\)\s*\.\s*(%.*)?$")
INT = re.compile(r"^-?\d+$")


def split_args(s):
    """Split a Prolog argument list at top-level commas."""
    out, depth, cur, q = [], 0, [], None
    for ch in s:
        if q:
            cur.append(ch)
            if ch == q:
                q = None
            continue
        if ch in "'\"":
            q = ch
            cur.append(ch)
        elif ch in "([{":
            depth += 1
            cur.append(ch)
        elif ch in ")]}":
            depth -= 1
            cur.append(ch)
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur or out:
        out.append("".join(cur).strip())
    return [a[1:-1] if len(a) >= 2 and a[0] == a[-1] == "'" else a for a in out]


def read_facts(path):
    """Ground facts of a file: {pred: [tuple, ...]}; rules and directives skipped."""
    facts, skipped = {}, 0
    if not os.path.exists(path):
        return facts, skipped
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.strip()
        if not line or line.startswith("%") or line.startswith(":-"):
            continue
        if ":-" in line:
            skipped += 1
            continue
        m = FACT.match(line)
        if not m:
            continue
        facts.setdefault(m.group(1), []).append(tuple(split_args(m.group(2))))
    return facts, skipped


def read_bias(path):
    text = open(path, encoding="utf-8").read()
    text = "\n".join(l.split("%", 1)[0] for l in text.splitlines())
    head = re.search(r"head_pred\(\s*([a-z]\w*)\s*,\s*(\d+)\s*\)", text)
    body = [(n, int(a)) for n, a in re.findall(r"^\s*body_pred\(\s*([a-z]\w*)\s*,\s*(\d+)\s*\)\s*\.", text, re.M)]
    types = {n: [t.strip() for t in ts.split(",") if t.strip()]
             for n, ts in re.findall(r"^\s*type\(\s*([a-z]\w*)\s*,\s*\(([^)]*)\)\s*\)\s*\.", text, re.M)}
    consts = re.findall(r"^\s*constant\(\s*([a-z]\w*)\s*,\s*([a-z]\w*)\s*\)\s*\.", text, re.M)
    if re.search(r"body_pred\(\s*([A-Z]\w*)\s*,\s*1\s*\)\s*:-\s*constant\(\s*\1", text):
        body += [(c, 1) for c, _ in consts]
    if re.search(r"type\(\s*([A-Z]\w*)\s*,\s*\(\s*([A-Z]\w*)\s*,\s*\)\s*\)\s*:-\s*constant\(\s*\1\s*,\s*\2", text):
        for c, t in consts:
            types.setdefault(c, [t])
    mb = re.search(r"max_body\(\s*(\d+)\s*\)", text)
    mv = re.search(r"max_vars\(\s*(\d+)\s*\)", text)
    rec = re.search(r"^\s*enable_recursion\s*\.", text, re.M) is not None
    return (head.group(1), int(head.group(2))), body, types, \
        int(mb.group(1)) if mb else None, int(mv.group(1)) if mv else None, rec


def main():
    task, schema, prog = sys.argv[1], sys.argv[2], sys.argv[3]
    (target, arity), body, types, max_body, max_vars, recursion = read_bias(os.path.join(task, "bias.pl"))
    bk, skipped = read_facts(os.path.join(task, "bk.pl"))
    exs, _ = read_facts(os.path.join(task, "exs.pl"))
    pos = [split_args(t[0][len(target) + 1:-1]) for t in exs.get("pos", []) if t[0].startswith(target + "(")]
    neg = [split_args(t[0][len(target) + 1:-1]) for t in exs.get("neg", []) if t[0].startswith(target + "(")]
    seen, preds = set(), []
    for n, a in (body or [(p, len(r[0])) for p, r in sorted(bk.items()) if p != target]):
        if n in seen or n == target:
            continue
        seen.add(n)
        rows = [r for r in bk.get(n, []) if len(r) == a]
        if not rows:
            print("# NOTICE: body predicate %s/%d has no facts in bk.pl: left out" % (n, a), file=sys.stderr)
            continue
        preds.append((n, a, rows))
    # columns: (pred, i); union-find over declared types and shared values
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a, b):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    cols = [(target, i, [r[i] for r in pos + neg]) for i in range(arity)]
    cols += [(n, i, [r[i] for r in rows]) for n, a, rows in preds for i in range(a)]
    by_type, by_val = {}, {}
    for n, i, vals in cols:
        find((n, i))
        t = types.get(n)
        if t and i < len(t):
            by_type.setdefault(t[i], []).append((n, i))
        for v in set(vals):
            if v in by_val:
                union(by_val[v], (n, i))
            else:
                by_val[v] = (n, i)
    for members in by_type.values():
        for m in members[1:]:
            union(members[0], m)
    allint = {}
    for n, i, vals in cols:
        g = find((n, i))
        allint[g] = allint.get(g, True) and all(INT.match(v) for v in vals)

    def sqltype(n, i):
        return "bigint" if allint[find((n, i))] else "text"

    def lit(v, t):
        return v if t == "bigint" else v.replace("\\", "\\\\").replace("\t", " ")

    out = sys.stdout
    out.write("SET client_min_messages = warning;\nDROP SCHEMA IF EXISTS %s CASCADE;\nCREATE SCHEMA %s;\n" % (schema, schema))
    out.write("SELECT gpudl_drop_program('%s') FROM gpudl.programs WHERE name = '%s';\n" % (prog, prog))
    out.write("SELECT gpudl_create_program('%s');\n" % prog)

    def table(name, a, rows, owner):
        ts = [sqltype(owner, i) for i in range(a)]
        out.write("CREATE TABLE %s.%s (%s);\n" % (schema, name, ", ".join("c%d %s" % (i + 1, t) for i, t in enumerate(ts))))
        out.write("COPY %s.%s FROM stdin;\n" % (schema, name))
        for r in rows:
            out.write("\t".join(lit(v, t) for v, t in zip(r, ts)) + "\n")
        out.write("\\.\n")
        return ts

    for n, a, rows in preds:
        table("bk_" + n, a, rows, n)
        out.write("SELECT gpudl_bind('%s', '%s', '%s.bk_%s');\n" % (prog, n, schema, n))
    tts = table("pos", arity, pos, target)
    table("neg", arity, neg, target)
    tstr = "; ".join("%s(%s)" % (n, ", ".join(types[n])) for n in [target] + [p[0] for p in preds]
                     if n in types and len(types[n]) == (arity if n == target else dict((p[0], p[1]) for p in preds)[n]))
    meta = {"TARGET": target, "ARITY": arity, "COLTYPES": ",".join(tts), "TYPES": tstr,
            "BIAS_MAX_BODY": max_body or "", "RECURSION": int(recursion), "BIAS_MAX_VARS": max_vars or "", "NPOS": len(pos), "NNEG": len(neg),
            "NPREDS": len(preds), "MAXARITY": max([arity] + [p[1] for p in preds]), "NFACTS": sum(len(p[2]) for p in preds), "SKIPPED_RULES": skipped}
    for k, v in meta.items():
        print("%s=%s" % (k, shlex.quote(str(v))), file=sys.stderr)


if __name__ == "__main__":
    main()
