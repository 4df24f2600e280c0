#!/usr/bin/env python3
"""fuzz_gen.py — random calls over gpudl's SQL API, for test/t/16_fuzz.sh.

Usage: fuzz_gen.py SEED CALLS CHUNK OUTDIR
Writes OUTDIR/chunk_NNN.sql, each a psql script of CHUNK lines
    SELECT 'seq|' || fz($fz$<call>$fz$);
(fz, set up by 16_fuzz.sh, runs the call in a subtransaction and answers
'ok' or the SQLSTATE, with CHANGED when the catalog differs after a
refusal), and OUTDIR/calls.txt: "seq<TAB>call" for the report.  Seeded:
the same seed gives the same calls.  The API covered is the list of
functions of sql/gpudl--*.sql (kept below in FUNCS); the arguments are
drawn from valid values, odd names, NULLs, empty and very long strings,
huge and negative numbers.
"""
import os
import random
import sys

seed, ncalls, chunk, outdir = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
R = random.Random(seed)

PROGRAMS = ['fz_kg'] * 8 + ['fz_types', 'fz_odd', 'fz_kg2'] * 3 + ['fz_new', 'fz new', "fz'q", 'fz/é', '', 'nosuch']
VALID = False  # the call being drawn is near-valid: every argument valid but (perhaps) one
# tables set up by 16_fuzz.sh: graph relations with odd names, one table per column type
KG_TABLES = ['kg_a', 'kg_b', '"co-occurs_with"', '"/film/film/genre"', '"has car"', '"Parent"', '"é"']
KG_PREDS = ['kg_a', 'kg_b', 'co-occurs_with', '/film/film/genre', 'has car', 'Parent', 'é',
            "'co-occurs_with'", "'/film/film/genre'", 'tgt', 'q', 'r']
TYPES = open(os.path.join(outdir, 'types.txt')).read().split()
ROLES = ['fz_r1', 'fz_r2', 'PUBLIC', 'public', 'nosuchrole', '', "fz'x"]
PRIVS = ['use', 'modify', 'usage', 'all', 'USE', 'nosuch', '']
ENTITIES = ['e1', 'e2', 'e3', 'e4', 'e5', 'nosuch', '', 'é', 'a"b']


def sq(s):
    """A SQL literal (or NULL)."""
    if s is None:
        return 'NULL'
    return "'" + s.replace("'", "''") + "'"


def odd_text():
    return R.choice([None, '', ' ', 'x' * R.choice([1, 300, 5000, 20000]), "it's", '"quoted"',
                     'a/b/c', 'has space', 'é ü 中文', '\\', '%s%n', 'NULL', "');--", '\t\n',
                     '(((((', ')', '.', ':-', "'co-occurs_with'(X, Y)"])


def some_int():
    return R.choice([0, 1, 2, 3, 4, 8, 9, -1, -2147483648, 2147483647, 100000, None])


def some_bigint():
    return R.choice([0, 1, 5, -1, 9223372036854775807, -9223372036854775808, None])


def some_float():
    return R.choice(['0', '0.1', '0.5', '0.99', '1', '-1', '1e308', "'NaN'", "'Infinity'",
                     "'-Infinity'", '2', 'NULL'])


def num(v):
    return 'NULL' if v is None else str(v)


def bool_():
    return R.choice(['true', 'false', 'NULL'])


def program():
    return R.choice(PROGRAMS) if R.random() < 0.92 else odd_text()


def pred():
    return R.choice(KG_PREDS) if R.random() < 0.85 else odd_text()


def var():
    return R.choice(['X', 'Y', 'Z', 'W', '_', 'A'])


def atom(p=None, n=None):
    p = p or R.choice(['kg_a', 'kg_b', "'co-occurs_with'", "'/film/film/genre'", "'has car'",
                       'Parent', "'é'", 'q', 'r', 'tgt', 'person', 'ty_' + R.choice(TYPES)])
    n = n or R.choice([1, 2, 2, 2, 3])
    args = [R.choice([var(), var(), '"e1"', '7', '"é"', 'true', '1.5']) for _ in range(n)]
    return '%s(%s)' % (p, ', '.join(args))


def rule_text():
    k = R.random()
    if k < 0.1:
        return odd_text()
    head = atom(R.choice(['q', 'r', 'tgt', 's']))
    body = ', '.join(atom() for _ in range(R.choice([1, 1, 2, 3])))
    extra = R.choice(['', '', ', X != Y', ', X < Y', ', not kg_b(X, Y)', ', Z = X + 1', ''])
    txt = '%s :- %s%s.' % (head, body, extra)
    if R.random() < 0.2:
        txt += ' ' + '%s :- %s.' % (atom('q'), atom())
    return txt


def goal():
    if R.random() < 0.1:
        return odd_text()
    return atom(R.choice(['q', 'r', 'tgt', 'kg_a', 'kg_b', "'co-occurs_with'", 'Parent',
                          'ty_' + R.choice(TYPES), 'person', 'nosuch']))


def coldefs(n):
    return ', '.join('c%d %s' % (i, R.choice(['text', 'int', 'bigint', 'float8', 'bool',
                                              'timestamptz', 'date', 'uuid', 'numeric', 'point']))
                     for i in range(n))


def examples(arity=1):
    return R.choice(['SELECT a FROM fz_ex1', 'fz_ex1', 'SELECT a, b FROM fz_ex2', 'fz_ex2',
                     'SELECT * FROM fz_ex2 WHERE false', 'SELECT 1/0', 'nosuch_table',
                     'SELECT a, v FROM ty_' + R.choice(TYPES), None, '',
                     'SELECT a FROM fz_ex1 WHERE a <> ' + sq('y' * 5000)])


def types_arg():
    return R.choice([None, 'tgt(t)', 'tgt(t, t); kg_a(t, t)', 'tgt(t); ' + 'kg_a(t, t); ' * 500,
                     'garbage(', '', "tgt('a b')", 'tgt(t1, t2, t3, t4, t5, t6, t7, t8, t9)'])


def pick(valid, bad):
    """A valid value, or in a hostile call (or now and then) any of them."""
    if VALID and R.random() < 0.93:
        return R.choice(valid)
    return R.choice(valid + bad)


def call():
    global VALID
    VALID = R.random() < 0.6
    f = R.choice(FUNCS)
    return f()


def c_create():
    return 'SELECT gpudl_create_program(%s, %s, %s)' % (sq(program()), sq(rule_text() if R.random() < .8 else None),
                                                      sq(odd_text()))


def c_add():
    return 'SELECT gpudl_add_rules(%s, %s)' % (sq(program()), sq(rule_text()))


def c_drop():
    return 'SELECT gpudl_drop_program(%s)' % sq(R.choice(['fz_new', "fz'q", 'fz/é', 'nosuch', '']))


def c_bind():
    rel = R.choice(KG_TABLES + ['ty_' + R.choice(TYPES)] * 3 + ['12345', 'nosuch', 'pg_class', '0'])
    cols = R.choice([None, "ARRAY['a','b']::name[]", "ARRAY['v','a']::name[]", "ARRAY['nosuch']::name[]",
                     "ARRAY[]::name[]", "ARRAY[NULL]::name[]"])
    return 'SELECT gpudl_bind(%s, %s, %s, %s)' % (sq(program()), sq(pred()), sq(rel), cols or 'NULL')


def c_query():
    if VALID:
        prog, g, cols = R.choice([('fz_kg', 'q(X, Y)', 'a text, b text'), ('fz_kg', 'r("e1", Y)', 'a text, b text'),
                                  ('fz_kg2', 'q(X, Y)', 'a text, b text'),
                                  ('fz_types', 't_%s(A)' % R.choice(TYPES), 'a text'),
                                  ('fz_vals', 'v_%s(A, V)' % R.choice(TYPES), 'a text, v ' + R.choice(
                                      ['text', 'bigint', 'int', 'timestamptz', 'date', 'numeric', 'uuid', 'float8', 'bool']))])
        return 'SELECT * FROM gpudl_query(%s, %s) AS t(%s)' % (sq(prog), sq(g), cols)
    n = R.choice([1, 2, 2, 3])
    return 'SELECT * FROM gpudl_query(%s, %s) AS t(%s)' % (sq(program()), sq(goal()), coldefs(n))


def c_count():
    return 'SELECT gpudl_count(%s, %s)' % (sq(program()), sq(goal()))


def c_explain():
    return 'SELECT * FROM gpudl_explain(%s)' % sq(program())


def c_materialize():
    return 'SELECT gpudl_materialize(%s, %s, %s, %s)' % (
        sq(program()), sq(R.choice(['q', 'r', 'tgt', 'kg_a', 'nosuch', ''])),
        sq(R.choice(['fz_out', 'fz_out2', 'ty_' + R.choice(TYPES), 'nosuch.x', '', 'pg_class'])),
        sq(R.choice(['replace', 'append', 'nosuch', None])))


def c_derivations():
    return 'SELECT * FROM gpudl_derivations(%s, %s)' % (sq(program()), sq(goal()))


def c_sample_fp():
    return 'SELECT * FROM gpudl_sample_false_positives(%s, %s, %s, %s) AS t(%s)' % (
        sq(program()), sq(goal()), sq(examples()), num(some_int()), coldefs(R.choice([1, 2])))


def c_load():
    rel = R.choice(KG_TABLES + ['ty_' + R.choice(TYPES)] * 3 + ['12345', '0', 'fz_ex1'])
    return 'SELECT gpudl_%s(%s)' % (R.choice(['load', 'load', 'unload']), sq(rel))


def c_learn():
    args = [sq(pick(['fz_kg', 'fz_kg2', 'fz_types', 'fz_odd'], PROGRAMS)),
            sq(pick(['tgt'], ['q', 'kg_a', 'bad name', '', None])),
            sq(pick(['SELECT a FROM fz_ex1', 'SELECT a, b FROM fz_ex2', 'fz_ex2'], [examples()])),
            sq(pick([None, None, 'SELECT b, a FROM fz_ex2'], [examples()]))]
    named = []
    for name, gen in [('max_body', lambda: num(pick([1, 2, 3, 4], [8, 9, 0, -1]))),
                      ('max_rules', lambda: num(pick([1, 4], [0, -1, 100000]))),
                      ('epochs', lambda: num(pick([1, 10], [0, -5]))),
                      ('learning_rate', lambda: pick(['0.1', '0.5'], [some_float()])),
                      ('allow_recursive', lambda: pick(['true', 'false'], ['NULL'])),
                      ('min_support', lambda: num(pick([1, 2], [0, -1, 1000]))),
                      ('seed', lambda: num(pick([0, 7], [some_int()]))),
                      ('negative_sampling', lambda: sq(pick(['pca', 'closed_world'], ['nosuch', None]))),
                      ('max_seconds', lambda: pick(['0.5', '1', '0'], ['-1', 'NULL', "'NaN'", "'Infinity'"])),
                      ('noise', lambda: pick(['0', '0.1', '0.3'], ['1', '-0.5', 'NULL', "'NaN'"])),
                      ('types', lambda: sq(pick(['tgt(t)', 'tgt(t, t); kg_a(t, t)', None], [types_arg()]))),
                      ('max_vars', lambda: num(pick([3, 4, 12], [1, 13, 0, None]))),
                      ('method', lambda: sq(pick(['auto', 'bulk', 'refine'], ['nosuch', None]))),
                      ('commit', lambda: pick(['false', 'false', 'true'], ['NULL']))]:
        if R.random() < 0.3:
            named.append('%s => %s' % (name, gen()))
    if 'commit' not in ' '.join(named):
        named.append('max_seconds => 2' if not any(n.startswith('max_seconds') for n in named) else 'commit => false')
    return 'SELECT count(*) FROM gpudl_learn(%s)' % ', '.join(args + named)


def c_candidates():
    return 'SELECT count(*) FROM gpudl_candidates(%s, %s, %s, %s, %s)' % (
        sq(program()), sq(R.choice(['tgt', 'q', '', None])), num(R.choice([1, 2, 3, 0, -1, 9])),
        num(R.choice([1, 2, 3, 0, 9])), bool_())


def c_loss_grad():
    return 'SELECT * FROM gpudl_loss_grad(%s, %s, %s, %s, %s)' % (
        sq(program()), sq(R.choice(['tgt', 'q'])), sq(examples()), sq(examples()),
        R.choice(["ARRAY[0.5]::float8[]", "ARRAY[]::float8[]", 'NULL', "ARRAY[2, -1, 'NaN']::float8[]"]))


def c_commit_rule():
    return 'SELECT gpudl_commit_rule(%s, %s)' % (sq(program()), sq(rule_text()))


def c_mine():
    named = []
    for name, gen in [('max_body', lambda: num(pick([1, 2, 3], [4, 0, -1]))),
                      ('min_head_coverage', lambda: pick(['0.1', '0.3'], [some_float()])),
                      ('min_confidence', lambda: pick(['0.1', '0.5'], [some_float()])),
                      ('min_support', lambda: num(pick([1, 2], [some_bigint()]))),
                      ('commit', lambda: pick(['false', 'false', 'true'], ['NULL'])),
                      ('constants', lambda: pick(['true', 'false'], ['NULL']))]:
        if R.random() < 0.4:
            named.append('%s => %s' % (name, gen()))
    return 'SELECT count(*) FROM gpudl_mine(%s)' % ', '.join(
        [sq(pick(['fz_kg', 'fz_kg2'], PROGRAMS)), sq(pick(['kg_a', 'kg_b', 'co-occurs_with', '/film/film/genre', None], [pred()]))] + named)


def c_predict():
    q = R.choice(['%s("%s", Y)' % (R.choice(KG_PREDS), R.choice(ENTITIES)),
                  '%s(X, "%s")' % (R.choice(KG_PREDS), R.choice(ENTITIES)),
                  "'co-occurs_with'(\"e1\", _)", 'kg_a(X, Y)', 'kg_a("e1", "e2")',
                  'SELECT a, NULL FROM fz_ex2', 'fz_ex2', 'SELECT NULL, NULL', odd_text()])
    named = []
    for name, gen in [('aggregation', lambda: sq(pick(['max', 'noisy_or'], ['nosuch', None]))),
                      ('exclude_known', lambda: pick(['true', 'false'], ['NULL'])),
                      ('"limit"', lambda: num(pick([0, 10], [some_int()]))),
                      ('max_body', lambda: num(pick([1, 2, 3], [4, 0]))),
                      ('min_head_coverage', lambda: pick(['0.01'], [some_float()])),
                      ('min_confidence', lambda: pick(['0.1'], [some_float()])),
                      ('confidence', lambda: sq(pick(['std', 'pca'], ['nosuch', None]))),
                      ('smoothing', lambda: pick(['20', '0'], [some_float()])),
                      ('constants', lambda: pick(['true', 'false'], ['NULL']))]:
        if R.random() < 0.3:
            named.append('%s => %s' % (name, gen()))
    p = pick(['kg_a', 'kg_b', 'co-occurs_with'], [pred()])
    q = pick(['%s("e1", Y)' % p, '%s(X, "e2")' % p, 'SELECT a, NULL FROM fz_ex2'], [q])
    target = sq(p)
    if R.random() < 0.25:
        # a whole split (target NULL): (relation, subject, object) rows, or a goal
        target = 'NULL'
        q = pick(["SELECT 'kg_a', a, NULL FROM fz_ex2", "SELECT 'co-occurs_with', NULL, 'e2'",
                  "VALUES ('kg_b', 'e1', NULL), ('kg_a', NULL, 'e2')", '%s("e1", Y)' % p],
                 ["SELECT %s, 'e1', NULL" % sq(pred()), "SELECT NULL, 'e1', NULL",
                  "SELECT 'kg_a', 'e1', 'e2'", "SELECT 'kg_a', 1, NULL", 'SELECT a, NULL FROM fz_ex2', q])
    return 'SELECT count(*) FROM gpudl_predict(%s)' % ', '.join(
        [sq(pick(['fz_kg', 'fz_kg2'], PROGRAMS)), target, sq(q)] + named)


def c_grant():
    role = R.choice(ROLES)
    role_sql = sq(role) if R.random() < 0.7 else sq(role) + '::regrole'
    return 'SELECT gpudl_%s(%s, %s, %s)' % (R.choice(['grant', 'revoke']), sq(program()), role_sql,
                                           sq(R.choice(PRIVS)))


def c_misc():
    return R.choice(['SELECT count(*) FROM gpudl_cache_status()', 'SELECT count(*) FROM gpudl_stats()',
                     'SELECT count(*) FROM gpudl_device_info()', 'SELECT gpudl_learn_runs_sweep()',
                     'SELECT count(*) FROM gpudl_service_status()', 'SELECT count(*) FROM gpudl_progress',
                     'SELECT count(*) FROM gpudl_gpu_jobs'])


def c_as_role():
    """A call as a role without privileges (SET LOCAL ROLE inside fz's subtransaction)."""
    inner = R.choice([c_query, c_add, c_bind, c_mine, c_learn, c_grant, c_drop, c_predict])()
    return 'SET LOCAL ROLE fz_r1; ' + inner


FUNCS = ([c_create, c_add, c_drop, c_bind, c_commit_rule] * 2 +
         [c_query] * 5 + [c_count] * 3 + [c_explain, c_materialize, c_derivations, c_sample_fp] +
         [c_load] * 2 + [c_learn] * 4 + [c_candidates, c_loss_grad] + [c_mine] * 3 + [c_predict] * 3 +
         [c_grant] * 2 + [c_misc, c_as_role, c_as_role])

calls = []
for i in range(ncalls):
    c = call().replace('$fz$', '')
    calls.append(c)
with open(os.path.join(outdir, 'calls.txt'), 'w') as f:
    for i, c in enumerate(calls):
        f.write('%d\t%s\n' % (i, c.replace('\n', ' ').replace('\t', ' ')))
for k in range(0, ncalls, chunk):
    with open(os.path.join(outdir, 'chunk_%03d.sql' % (k // chunk)), 'w') as f:
        for i in range(k, min(ncalls, k + chunk)):
            f.write("SELECT '%d|' || fz($fz$%s$fz$);\n" % (i, calls[i]))
