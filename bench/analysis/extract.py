#!/usr/bin/env python3
"""bench/analysis/extract.py — facts for the standard program-analysis Datalog
benchmarks (CSPA, CSDA, Andersen) from textual LLVM IR, the way Graspan's
front end makes its context-insensitive inputs, so that the same rules run on
real C code bases (issue 23).  Standard library only.

    python3 extract.py -o OUTDIR a.ll b.ll ...

Input: .ll files from `clang-14 -S -emit-llvm -O0 -fno-discard-value-names`
(typed pointers; `ptr` is accepted too).  Output: one TSV per relation,
two text columns, rows sorted and distinct: assign, dereference (CSPA),
addr, assgn, load, store (Andersen), arc, nullEdge (CSDA).

Nodes.  A local value (parameter or instruction result) of function f is
`f:%x`; a global variable or function is `@g` (its address, as in the IR);
`*N` is the memory that the pointer N points to (Graspan's dereference node);
`obj:f:%x` / `obj:@g` is the abstract object of an alloca / a global
(Andersen only); `f:null#k` is the k-th null constant stored or passed in f,
in textual order (CSDA only).  A static (internal or private) function or
global is qualified by its file's base name (source_filename): locals
`lang_lex.c/advance:%p`, globals `@small.c/.str`, so that two files' static
helpers of one name stay apart.

Mapping (only pointer-typed values for CSPA and Andersen; every value for arc):

  IR                                CSPA                      Andersen       CSDA arc
  %r = alloca T                     -                         addr(r,obj:r)  -
  global @g / function @g           -                         addr(@g,obj:@g) -
  %r = load T* %p     (T pointer)   assign(*p,r) deref(p,*p)  load(r,p)      arc(*p,r)
  store T v, T* %p    (T pointer)   assign(v,*p) deref(p,*p)  store(p,v)     arc(v,*p)
  @g = global T* init (init has @h) assign(@h,*@g) deref(@g,*@g) store(@g,@h) arc(@h,*@g)
  %r = getelementptr T, T* %p, ...  assign(p,r)               assgn(r,p)     arc(op,r)
  %r = <cast> T v to U (T,U ptrs)   assign(v,r)               assgn(r,v)     arc(v,r)
  %r = phi T [v,..] / select c,v,w  assign(v,r) per operand   assgn(r,v)     arc(op,r)
  %r = call @f(.., a_i, ..) f defined: a_i to f's param i:
                                    assign(a_i,f:%p_i)        assgn(f:%p_i,a_i)  arc(a_i,f:%p_i)
                                    and f's `ret v` to r: assign(f:v,r) assgn(r,f:v) arc(f:v,r)
  any other instruction %r = op ..  -                         -              arc(op,r) per value operand
  null stored/passed/returned/phi'd into d:   nullEdge(f:null#k, d)  (d as the edge's target above)

`assign(src, dst)` is Graspan's edge src -a-> dst, i.e. `dst = src`: the
column order of Graspan's published inputs and of the published CSPA rules
(valueFlow(y, x) :- assign(y, x)).  Andersen's assgn(p, q) is `p = q`.
A store is never an assign between the stored value and the pointer: it is a
copy into the dereference node *p.  Field-insensitive (a GEP is its base);
indirect calls, external functions and llvm.* intrinsics (memcpy included)
add no edges.  Constant expressions (GEP/bitcast of a global) stand for the
globals they name.

Context sensitivity (`--clone N`, default 0: context-insensitive, one copy
of each function, as above).  With N > 0 a call site of a defined function
whose whole inlined subgraph (its own facts plus those of the callees it
would clone in turn) has at most N facts gets its own copy of that
subgraph, as Graspan's front end makes CSPA context-sensitive by inlining:
the copy's locals, dereference nodes, objects and null sites carry the call
path (`f:%x@/main#0/g#2`: main's first call of a defined function, and
in that copy g's third), so values passed to one call do not alias the results
of another.  Callees in a recursive cycle or over the bound are linked to
their one shared copy, as without cloning; every function also keeps its
shared copy (its callers outside the code base).  N bounds the facts a call
site can add, so the output grows with the number of call sites, not with
the call graph's paths.
"""
import argparse
import os
import re
import sys

NAME = r'(?:[-a-zA-Z$._][-a-zA-Z$._0-9]*|\d+|"[^"]*")'
VALUE_RE = re.compile(r'([%@])(' + NAME + r')')
CASTS = {'bitcast', 'addrspacecast', 'inttoptr', 'ptrtoint', 'trunc', 'zext',
         'sext', 'fptrunc', 'fpext', 'fptoui', 'fptosi', 'uitofp', 'sitofp'}
RELATIONS = ['assign', 'dereference', 'addr', 'assgn', 'load', 'store', 'arc', 'nullEdge']


def split_top(s):
    """Split s at commas outside (), [], {}, <> and quotes."""
    out, depth, cur, quote = [], 0, [], False
    for ch in s:
        if quote:
            cur.append(ch)
            quote = ch != '"'
            continue
        if ch == '"':
            quote = True
        elif ch in '([{<':
            depth += 1
        elif ch in ')]}>':
            depth -= 1
        elif ch == ',' and depth == 0:
            out.append(''.join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if ''.join(cur).strip():
        out.append(''.join(cur).strip())
    return out


def matching_paren(s, i):
    """Index of the ')' closing the '(' at s[i]."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == '(':
            depth += 1
        elif s[j] == ')':
            depth -= 1
            if depth == 0:
                return j
    return len(s) - 1


def is_ptr(t):
    """Whether the type text t is a pointer type (typed `T*` or opaque `ptr`)."""
    t = t.strip()
    return t.endswith('*') or t == 'ptr' or t.startswith('ptr ')


def piece_type(piece):
    """The type text of a typed operand `T v` (v a name, constant or constant expression)."""
    m = re.search(r'\b(getelementptr|bitcast|addrspacecast|inttoptr|ptrtoint)\b', piece)
    if m:
        return piece[:m.start()].strip()
    return re.sub(r'\s*\S+$', '', piece.strip())


def strip_meta(line):
    """The instruction without its comment, trailing `, align N` and `, !md` parts."""
    line = line.split(';', 1)[0] if '"' not in line else line
    line = re.sub(r',\s*!\w+\s+!\d+', '', line)
    line = re.sub(r',\s*align\s+\d+', '', line)
    return line.strip()


class Module:
    """One .ll file: type names, globals, and the functions' bodies."""

    def __init__(self, text, path):
        self.types, self.globals, self.funcs, self.inits = set(), set(), [], []
        self.internal, self.file = set(), os.path.basename(path)
        cur = None
        for raw in text.splitlines():
            line = raw.rstrip()
            m = re.match(r'^source_filename\s*=\s*"([^"]*)"', line)
            if m:
                self.file = os.path.basename(m.group(1))
            m = re.match(r'^%(' + NAME + r')\s*=\s*type\b', line)
            if m:
                self.types.add(m.group(1))
                continue
            m = re.match(r'^@(' + NAME + r')\s*=\s*(.*)$', line)
            if m:
                self.globals.add(m.group(1))
                if re.match(r'(private|internal)\b', m.group(2)):
                    self.internal.add(m.group(1))
                self.inits.append((m.group(1), m.group(2)))
                continue
            m = re.match(r'^(define|declare)\b.*?@(' + NAME + r')\s*\(', line)
            if m:
                self.globals.add(m.group(2))
                if re.match(r'^define\s+(private|internal)\b', line):
                    self.internal.add(m.group(2))
                if m.group(1) == 'define':
                    start = line.index('(', m.end() - 1)
                    params = parse_params(line[start + 1:matching_paren(line, start)])
                    cur = {'name': m.group(2), 'params': params, 'body': []}
                    self.funcs.append(cur)
                continue
            if cur is not None:
                if line.startswith('}'):
                    cur = None
                elif line.startswith('  '):
                    cur['body'].append(strip_meta(line))


def parse_params(s):
    """[(type, %name)] of a define's parameter list."""
    out = []
    for piece in split_top(s):
        names = re.findall(r'%(' + NAME + r')', piece)
        if names:
            out.append((piece[:piece.rindex('%' + names[-1])], names[-1]))
    return out


class Extractor:
    """Collects the facts of every module, with functions known across modules."""

    def __init__(self, clone=0):
        self.facts = {r: set() for r in RELATIONS}
        self.defined = {}           # function name -> (params, [return operand pieces])
        self.pending = []           # (caller, result, callee, args, result type)
        self.clone = clone          # the largest subgraph (facts) a call site copies
        self.own = {}               # function -> its own facts [(rel, a, b)] (cloning only)
        self.cur = None             # the function whose facts add() records (cloning only)

    def key(self, name):
        """A function's or global's name made unique: file/name when it is static (internal)."""
        return self.mod.file + '/' + name if name in self.mod.internal else name

    def add(self, rel, a, b):
        """Record one fact: into the current function's own facts when cloning."""
        if self.cur is not None:
            self.cur.append((rel, a, b))
        else:
            self.facts[rel].add((a, b))

    def values(self, fn, piece, local):
        """Nodes named by a typed operand or constant expression (types excluded)."""
        out = []
        for sigil, name in VALUE_RE.findall(piece):
            if sigil == '%' and name in local:
                out.append(fn + ':%' + name)
            elif sigil == '@' and name in self.mod.globals and not name.startswith('llvm.'):
                out.append('@' + self.key(name))
        return out

    def is_null(self, piece):
        """Whether a typed operand is the null pointer constant."""
        return re.search(r'\bnull$', piece.strip()) is not None

    def null_into(self, fn, dst, rename=None):
        """A null constant flowing into node dst: a fresh null site of fn (of its copy
        rename names, when linking a cloned call)."""
        self.nulls[fn] = self.nulls.get(fn, 0) + 1
        site = '%s:null#%d' % (fn, self.nulls[fn])
        self.add('nullEdge', rename(site) if rename else site, dst)

    def copy(self, fn, piece, dst, ptr, local):
        """A copy of the operand piece into node dst: assign/assgn if ptr, arc always."""
        for v in self.values(fn, piece, local):
            self.add('arc', v, dst)
            if ptr:
                self.add('assign', v, dst)
                self.add('assgn', dst, v)
        if ptr and self.is_null(piece):
            self.null_into(fn, dst)

    def module(self, text, path):
        """Extract one .ll file."""
        self.mod = Module(text, path)
        self.nulls = getattr(self, 'nulls', {})
        for g in sorted(self.mod.globals):
            if not g.startswith('llvm.'):
                self.add('addr', '@' + self.key(g), 'obj:@' + self.key(g))
        for g, init in self.mod.inits:
            self.global_init(g, init)
        for f in self.mod.funcs:
            self.function(f)

    def global_init(self, g, init):
        """A global whose initializer names globals: stores into *@g."""
        m = re.match(r'.*?\b(global|constant)\s+(.*)$', init)
        if not m:
            return
        g = '@' + self.key(g)
        for v in self.values('', m.group(2), set()):
            if v != g:
                self.add('store', g, v)
                self.add('assign', v, '*' + g)
                self.add('dereference', g, '*' + g)
                self.add('arc', v, '*' + g)

    def function(self, f):
        """Extract one defined function's instructions."""
        fn = self.key(f['name'])
        local = {p for _, p in f['params']}
        for ins in f['body']:
            m = re.match(r'^%(' + NAME + r')\s*=', ins)
            if m:
                local.add(m.group(1))
        rets = []
        self.defined[fn] = (f['params'], rets)
        if self.clone > 0:
            self.cur = self.own.setdefault(fn, [])
        for ins in f['body']:
            self.instruction(fn, ins, local, rets)
        self.cur = None

    def instruction(self, fn, ins, local, rets):
        """Extract one instruction (see the table at the top)."""
        m = re.match(r'^(?:%(' + NAME + r')\s*=\s*)?(\w+)\s*(.*)$', ins)
        if not m or ins.endswith(':') or re.match(r'^' + NAME + r':', ins):
            return
        res, op, rest = m.group(1), m.group(2), m.group(3)
        r = fn + ':%' + res if res else None
        if op in ('tail', 'musttail', 'notail') and rest.startswith('call'):
            op, rest = 'call', rest[4:].strip()
        if op == 'alloca':
            self.add('addr', r, 'obj:' + r)
        elif op == 'load':
            parts = split_top(re.sub(r'^(atomic\s+)?(volatile\s+)?', '', rest))
            for p in self.values(fn, parts[1], local):
                self.add('arc', '*' + p, r)
                if is_ptr(parts[0]):
                    self.add('assign', '*' + p, r)
                    self.add('dereference', p, '*' + p)
                    self.add('load', r, p)
        elif op == 'store':
            parts = split_top(re.sub(r'^(atomic\s+)?(volatile\s+)?', '', rest))
            ptr = is_ptr(piece_type(parts[0]))
            for p in self.values(fn, parts[1], local):
                for v in self.values(fn, parts[0], local):
                    self.add('arc', v, '*' + p)
                    if ptr:
                        self.add('assign', v, '*' + p)
                        self.add('store', p, v)
                if ptr:
                    self.add('dereference', p, '*' + p)
                    if self.is_null(parts[0]):
                        self.null_into(fn, '*' + p)
        elif op == 'getelementptr':
            parts = split_top(re.sub(r'^inbounds\s+', '', rest))
            self.copy(fn, parts[1], r, True, local)
            for idx in parts[2:]:
                self.copy(fn, idx, r, False, local)
        elif op in CASTS:
            mm = re.match(r'^(.*)\bto\s+(.*)$', rest)
            src, dst = mm.group(1).strip(), mm.group(2)
            both = is_ptr(dst) and is_ptr(piece_type(src))
            self.copy(fn, src, r, both, local)
        elif op == 'phi':
            ty, _, arms = rest.partition('[')
            for arm in re.findall(r'\[\s*(.*?),\s*%' + NAME + r'\s*\]', '[' + arms):
                self.copy(fn, ty + ' ' + arm, r, is_ptr(ty), local)
        elif op == 'select':
            parts = split_top(rest)
            self.copy(fn, parts[0], r, False, local)
            for p in parts[1:]:
                self.copy(fn, p, r, is_ptr(piece_type(p)), local)
        elif op == 'call' or op == 'invoke':
            self.call(fn, r, rest, local)
        elif op == 'ret':
            if rest != 'void':
                rets.append((fn, self.values(fn, rest, local), self.is_null(rest)))
        elif r is not None:
            for v in self.values(fn, rest, local):
                self.add('arc', v, r)

    def call(self, fn, r, rest, local):
        """A direct call: remembered, matched with the callee once all files are read."""
        m = re.search(r'@(' + NAME + r')\s*\(', rest)
        if not m or m.group(1).startswith('llvm.'):
            return
        start = m.end() - 1
        args = split_top(rest[start + 1:matching_paren(rest, start)])
        rtype = rest[:m.start()]
        self.pending.append((fn, r, self.key(m.group(1)), [(a, self.values(fn, a, local), self.is_null(a)) for a in args],
                             is_ptr(re.sub(r'\(.*$', '', rtype).split()[-1] if rtype.split() else '')))

    def link(self):
        """Arguments to parameters and return values to results of defined callees."""
        if self.clone > 0:
            return self.link_cloned()
        for fn, r, callee, args, rptr in self.pending:
            if callee not in self.defined:
                continue
            params, rets = self.defined[callee]
            for (ptype, pname), (piece, vals, null) in zip(params, args):
                dst = callee + ':%' + pname
                ptr = is_ptr(ptype.split()[0] if ptype.split() else '') or is_ptr(ptype)
                self.flow(fn, vals, dst, ptr, null)
            if r is None:
                continue
            for cfn, vals, null in rets:
                self.flow(cfn, vals, r, rptr, null)

    def link_cloned(self):
        """Every function's shared copy, each with its call sites linked: a copy of the
        callee per call path where the callee is cloneable (see the docstring)."""
        self.calls = {}
        for call in self.pending:
            if call[2] in self.defined:
                mine = self.calls.setdefault(call[0], [])
                mine.append(('%s#%d' % (call[0], len(mine)),) + call)
        self.recursive = recursive_functions(self.calls)
        self.size = {}
        for fn in sorted(self.defined):
            self.instance(fn, '')

    def inlined_size(self, fn):
        """Facts of fn's copy with its cloneable callees copied in (memoized, bottom-up)."""
        if fn not in self.size:
            self.size[fn] = self.clone + 1          # a bound while fn is being sized
            n = len(self.own.get(fn, []))
            for call in self.calls.get(fn, []):
                n += len(call[4]) + 1 + (self.inlined_size(call[3]) if self.cloneable(call[3]) else 0)
            self.size[fn] = n
        return self.size[fn]

    def cloneable(self, fn):
        """Whether a call site of fn gets its own copy of fn."""
        return fn not in self.recursive and self.inlined_size(fn) <= self.clone

    def instance(self, fn, ctx):
        """Emit fn's facts under call path ctx ('' the shared copy) and link its calls."""
        rename = localizer(fn, ctx)
        for rel, a, b in self.own.get(fn, []):
            self.facts[rel].add((rename(a), rename(b)))
        for site, _, r, callee, args, rptr in self.calls.get(fn, []):
            cctx = ctx + '/' + str(site) if self.cloneable(callee) else ''
            if cctx:
                self.instance(callee, cctx)
            to_callee = localizer(callee, cctx)
            params, rets = self.defined[callee]
            for (ptype, pname), (piece, vals, null) in zip(params, args):
                ptr = is_ptr(ptype.split()[0] if ptype.split() else '') or is_ptr(ptype)
                self.flow(fn, [rename(v) for v in vals], to_callee(callee + ':%' + pname), ptr, null, rename)
            if r is not None:
                for cfn, vals, null in rets:
                    self.flow(cfn, [to_callee(v) for v in vals], rename(r), rptr, null, to_callee)

    def flow(self, fn, vals, dst, ptr, null, rename=None):
        """Values vals flowing into dst (an argument into its parameter, a return value into
        the call's result): an arc each; for a pointer also assign and assgn, and the null
        of fn when the value may be null."""
        for v in vals:
            self.add('arc', v, dst)
            if ptr:
                self.add('assign', v, dst)
                self.add('assgn', dst, v)
        if ptr and null:
            self.null_into(fn, dst, rename)

    def write(self, outdir):
        """One sorted TSV per relation in outdir; returns {relation: rows}."""
        os.makedirs(outdir, exist_ok=True)
        sizes = {}
        for rel in RELATIONS:
            rows = sorted(self.facts[rel])
            with open(os.path.join(outdir, rel + '.tsv'), 'w') as fh:
                for a, b in rows:
                    fh.write(a + '\t' + b + '\n')
            sizes[rel] = len(rows)
        return sizes


def localizer(fn, ctx):
    """A function renaming fn's local nodes (values, their dereference nodes, objects,
    null sites) into its copy for call path ctx; other nodes are unchanged."""
    if not ctx:
        return lambda node: node
    prefix = fn + ':'

    def rename(node):
        bare = node.lstrip('*')
        bare = bare[4:] if bare.startswith('obj:') else bare
        return node + '@' + ctx if bare.startswith(prefix) else node
    return rename


def recursive_functions(calls):
    """Functions on a cycle of the call graph (Tarjan's strongly connected components,
    iterative): they are never cloned."""
    index, low, stack, on, out, counter = {}, {}, [], set(), set(), [0]
    succ = {fn: sorted({c[3] for c in cs}) for fn, cs in calls.items()}
    for root in sorted(succ):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter[0]
                counter[0] += 1
                stack.append(v)
                on.add(v)
            nxt = succ.get(v, [])
            if i < len(nxt):
                work.append((v, i + 1))
                w = nxt[i]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            for w in nxt:
                if w in on:
                    low[v] = min(low[v], low[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in succ.get(v, []):
                    out.update(comp)
    return out


def main():
    """Parse the arguments, extract every file, write the TSVs, print sizes."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('-o', '--out', required=True, help='output directory')
    ap.add_argument('--clone', type=int, default=0, metavar='N',
                    help='copy a callee per call site when its inlined subgraph has <= N facts '
                         '(context sensitivity; 0: none)')
    ap.add_argument('files', nargs='+', help='.ll files')
    a = ap.parse_args()
    ex = Extractor(a.clone)
    for path in sorted(a.files):
        with open(path) as fh:
            ex.module(fh.read(), path)
    ex.link()
    for rel, n in ex.write(a.out).items():
        print('%s\t%d' % (rel, n))


if __name__ == '__main__':
    sys.exit(main())
