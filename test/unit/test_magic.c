/*
 * test_magic.c — the magic-sets rewrite (src/lang/lang_magic.c): on random
 * tables, for every derived predicate and binding pattern of a set of
 * programs (linear and non-linear recursion, mutual recursion, negation,
 * aggregates, arithmetic, constants, facts, text), the rewritten program run
 * through gdl_run on the CPU backend answers the goal exactly like the
 * original program does.  Also: the printed rewrite of the ancestor
 * example, the cases without a rewrite, predicates frozen where demand
 * would recurse through negation or aggregation, and that a bound goal
 * derives far fewer tuples.
 */
#include "test_util.h"
#include "test_tables.h"

#include <string.h>

#include "../../src/exec/gdl_engine.h"

/* ------------------------------------------------------------ fake tables */

/* (the tables, their resolver and loader: test_tables.h) */

static const char *const words[] = {
	"abe", "bart", "cy", "dee", "eve", "fay", "gus", "hal", "ivy", "jo", "kim", "lou"
};

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

/* The next number of this file's xorshift64 sequence (test_util.c). */
static uint64_t
rnd(void)
{
	return gdl_test_xorshift(&rng_state);
}

/* ----------------------------------------------------------------- runs */

/* The goal of a run: predicate of the original, constants where bound. */
typedef struct Goal
{
	int			pred;
	int			arity;
	bool		bound[3];
	int64_t		ival[3];		/* int constant */
	const char *sval[3];		/* text constant */
} Goal;

typedef struct LoadArg
{
	const GdlMagic *m;			/* NULL: no seed */
	const Goal *goal;
	const GdlType *types;		/* goal predicate's types (original) */
} LoadArg;

/* Encoded constant of goal argument k. */
static int64_t
goal_value(const LoadArg *la, int k, GdlDict *dict)
{
	if (la->types[k] == GDL_TYPE_TEXT)
		return gdl_dict_intern(dict, la->goal->sval[k], strlen(la->goal->sval[k]));
	return la->goal->ival[k];
}

/* The engine's loader: tables, and the seed of a rewritten program. */
static void
load_edb(void *arg, const GdlPred *pred, GdlDict *dict, GdlColumns *out)
{
	LoadArg    *la = arg;
	int			c;

	if (la->m && strcmp(pred->name, la->m->seed_name) == 0)
	{
		out->ncols = la->m->nseed;
		out->nrows = 1;
		out->cols = gdl_alloc(sizeof(int64_t *) * (out->ncols + 1));
		for (c = 0; c < out->ncols; c++)
		{
			out->cols[c] = gdl_alloc(sizeof(int64_t));
			out->cols[c][0] = goal_value(la, la->m->seed_args[c], dict);
		}
		return;
	}
	tables_load(pred->name, dict, out);
}

/* Answers of a run as sorted printable rows. */
typedef struct Answers
{
	int			n;
	char	  **rows;
	int64_t		tuples;			/* tuples derived by the run */
} Answers;

/* qsort comparator for strings. */
static int
cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *) x, *(char *const *) y);
}

/* Run a plan for a goal; 'pred' is the goal predicate in the plan's analysis. */
static Answers
run_goal(const GdlPlan *plan, int pred, const Goal *g, const GdlType *types, const GdlMagic *m)
{
	GdlRunInput in;
	GdlGoal		goal;
	GdlGoalBinding binds[3];
	GdlDict    *dict = gdl_dict_create();
	LoadArg		la = {m, g, types};
	GdlResult  *res;
	Answers		ans;
	size_t		r;
	int			k;

	memset(&in, 0, sizeof(in));
	in.load_edb = load_edb;
	in.load_arg = &la;
	in.device = GDL_DEVICE_CPU;
	in.max_iterations = 1000;
	in.want_rows = true;
	memset(&goal, 0, sizeof(goal));
	goal.pred = pred;
	goal.bindings = binds;
	for (k = 0; k < g->arity; k++)
		if (g->bound[k])
		{
			binds[goal.nbindings].arg = k;
			binds[goal.nbindings].value = goal_value(&la, k, dict);
			goal.nbindings++;
		}
	res = gdl_run(plan, &in, dict, &goal);
	ans.n = (int) res->rows.nrows;
	ans.tuples = res->stats.tuples_derived;
	ans.rows = gdl_alloc(sizeof(char *) * (ans.n + 1));
	for (r = 0; r < res->rows.nrows; r++)
	{
		GdlBuf		b;

		gdl_buf_init(&b);
		for (k = 0; k < res->rows.ncols; k++)
		{
			int64_t		v = res->rows.cols[k][r];

			if (res->types[k] == GDL_TYPE_TEXT)
			{
				size_t		len;
				const char *s = gdl_dict_string(dict, (int32_t) v, &len);

				gdl_buf_append(&b, "%s%.*s", k ? "," : "", (int) len, s);
			}
			else
				gdl_buf_append(&b, "%s%lld", k ? "," : "", (long long) v);
		}
		ans.rows[r] = b.data;
	}
	qsort(ans.rows, ans.n, sizeof(char *), cmp_str);
	return ans;
}

/* Are two answer sets equal? */
static bool
same_answers(const Answers *x, const Answers *y)
{
	int			i;

	if (x->n != y->n)
		return false;
	for (i = 0; i < x->n; i++)
		if (strcmp(x->rows[i], y->rows[i]) != 0)
			return false;
	return true;
}

/* ------------------------------------------------------------- programs */

typedef struct Program
{
	const char *name;
	const char *src;
	bool		text;			/* reads par (text) instead of e/n/w (int) */
} Program;

static const Program programs[] = {
	{"tc left-linear", "tc(X, Y) :- e(X, Y). tc(X, Z) :- tc(X, Y), e(Y, Z).", false},
	{"tc right-linear", "tc(X, Y) :- e(X, Y). tc(X, Z) :- e(X, Y), tc(Y, Z).", false},
	{"tc non-linear", "tc(X, Y) :- e(X, Y). tc(X, Z) :- tc(X, Y), tc(Y, Z).", false},
	{"same generation",
		"sg(X, Y) :- e(P, X), e(P, Y), X != Y. sg(X, Y) :- e(A, X), sg(A, B), e(B, Y).", false},
	{"mutual recursion",
		"odd(X, Y) :- e(X, Y). odd(X, Z) :- even(X, Y), e(Y, Z). even(X, Z) :- odd(X, Y), e(Y, Z).",
	false},
	{"negation",
		"tc(X, Y) :- e(X, Y). tc(X, Z) :- tc(X, Y), e(Y, Z)."
		"unreach(X, Y) :- n(X), n(Y), !tc(X, Y)."
		"sink(X) :- n(X), !e(X, _)."
		"tosink(X, Y) :- tc(X, Y), sink(Y)."
		"nosink(X) :- n(X), !tosink(X, _).", false},
	{"negation inside recursion",
		"bad(Z) :- e(Z, Z). bad(Z) :- n(Z), Z > 5."
		"q(X, Y) :- e(X, Y), !bad(Y). q(X, Z) :- q(X, Y), e(Y, Z), !bad(Z).", false},
	{"aggregates",
		"tc(X, Y) :- e(X, Y). tc(X, Z) :- tc(X, Y), e(Y, Z)."
		"deg(X, count(Y)) :- e(X, Y). reach(X, count(Y)) :- tc(X, Y)."
		"heavy(X, sum(W)) :- w(X, Y, W). big(X) :- deg(X, D), D > 2."
		"far(X, Y) :- tc(X, Y), reach(Y, C), C > 1.", false},
	{"aggregate inside recursion",
		"cnt(Y, count(Z)) :- e(Y, Z)."
		"p(X, Y) :- e(X, Y). p(X, Z) :- p(X, Y), cnt(Y, C), C > 1, e(Y, Z).", false},
	{"arithmetic",
		"dist(X, Y, 1) :- e(X, Y). dist(X, Z, D) :- dist(X, Y, D0), e(Y, Z), D = D0 + 1, D < 5."
		"mind(X, Y, min(D)) :- dist(X, Y, D). next(X, N) :- n(X), N = X + 1.", false},
	{"constants and facts",
		"f(1, 2). f(2, 3). f(7, 7). g(X, Y) :- f(X, Y). g(X, Y) :- e(X, Y), X < 3."
		"h(X) :- g(X, 2). h(X) :- g(3, X). k(X, Y) :- g(X, Y), g(Y, 3)."
		"self(X, X) :- n(X). loop(X) :- k(X, X).", false},
	{"stratified chain",
		"t(Y) :- e(Y, Y). s(X) :- e(X, Y), !t(Y). r(X) :- n(X), !s(X)."
		"p(X, Y) :- e(X, Y). p(X, Y) :- p(X, Z), e(Z, Y), Z != 3. q(Y) :- p(2, Y), !r(Y)."
		"w(X, max(Y)) :- p(X, Y). top(X) :- w(X, M), !s(M).", false},
	{"text",
		"anc(X, Y) :- par(X, Y). anc(X, Z) :- anc(X, Y), par(Y, Z)."
		"sib(X, Y) :- par(P, X), par(P, Y), X != Y."
		"cousin(X, Y) :- par(A, X), par(B, Y), sib(A, B)."
		"lisa(X) :- anc(X, \"lisa\"). rel(X, Y) :- anc(X, Y), !sib(X, Y).", true},
};

/* Fresh random tables for one trial. */
static void
random_tables(int range)
{
	int			i;
	Table	   *n;

	ntables = 0;
	tables_random_ints(&rng_state, "e", 2, 10 + (int) (rnd() % 40), range);
	tables_random_ints(&rng_state, "w", 3, 10 + (int) (rnd() % 30), range);
	n = table("n", 1, GDL_TYPE_INT);
	for (i = 0; i < range; i++)
		n->ival[i][0] = i;
	n->nrows = range;
	tables_random_text(&rng_state, "par", 8 + (int) (rnd() % 20), words, 12);
	/* make "lisa" occur now and then */
	if (rnd() % 2)
	{
		tables[3].sval[0][1] = "lisa";
		tables[3].sval[1][0] = "lisa";
	}
}

static int	nrewritten;
static int	nfallback;
static int	ncompared;

/* Compare original and rewritten answers for one goal. */
static void
check_goal(const GdlAnalysis *a, const GdlPlan *plan, const Goal *g, const char *progname)
{
	const GdlPred *p = &a->preds[g->pred];
	GdlMagic   *m = NULL;
	GdlAnalysis *ma = NULL;
	GdlPlan    *mplan = NULL;
	GdlError   *err;
	Answers		want,
				got;
	int			mp;

	err = GDL_TRY(m = gdl_magic_rewrite(a, g->pred, g->bound));
	CHECK_MSG(err == NULL, "%s: rewrite of %s failed: %s", progname, p->name,
			  err ? err->message : "");
	if (err)
		return;
	if (m == NULL)
	{
		nfallback++;
		return;
	}
	err = GDL_TRY(ma = gdl_magic_analyze(a, m));
	CHECK_MSG(err == NULL, "%s: rewritten program for %s/%s does not analyse: %s (%s)",
			  progname, p->name, m->pattern, err ? err->message : "",
			  err && err->detail ? err->detail : "");
	if (err)
		return;
	err = GDL_TRY(mplan = gdl_plan_compile(ma));
	CHECK(err == NULL);
	if (err)
		return;
	mp = gdl_analysis_find_pred(ma, m->goal_name);
	CHECK(mp >= 0);
	if (mp < 0)
		return;
	err = GDL_TRY(want = run_goal(plan, g->pred, g, p->types, NULL));
	CHECK(err == NULL);
	if (err)
		return;
	err = GDL_TRY(got = run_goal(mplan, mp, g, p->types, m));
	CHECK_MSG(err == NULL, "%s: rewritten run failed: %s", progname, err ? err->message : "");
	if (err)
		return;
	nrewritten++;
	ncompared += want.n;
	CHECK_MSG(same_answers(&want, &got), "%s: goal %s/%s: %d answers, rewritten %d",
			  progname, p->name, m->pattern, want.n, got.n);
}

/* Random goals over every derived predicate and binding pattern. */
static void
test_random(void)
{
	int			trial;
	size_t		pi;

	for (pi = 0; pi < sizeof(programs) / sizeof(programs[0]); pi++)
		for (trial = 0; trial < 16; trial++)
		{
			const Program *pr = &programs[pi];
			GdlProgram *prog;
			GdlAnalysis *a = NULL;
			GdlPlan    *plan = NULL;
			GdlError   *err;
			int			range = 6 + (int) (rnd() % 10);
			int			p;

			random_tables(range);
			prog = gdl_parse(pr->src);
			err = GDL_TRY(a = gdl_analyze(prog, tables_resolve, NULL));
			CHECK_MSG(err == NULL, "%s: %s", pr->name, err ? err->message : "");
			if (err)
			{
				gdl_test_reset();
				continue;
			}
			plan = gdl_plan_compile(a);
			for (p = 0; p < a->npreds; p++)
			{
				const GdlPred *pd = &a->preds[p];
				int			mask;

				if (pd->is_edb)
					continue;
				for (mask = 1; mask < (1 << pd->arity); mask++)
				{
					Goal		g;
					int			k;

					memset(&g, 0, sizeof(g));
					g.pred = p;
					g.arity = pd->arity;
					for (k = 0; k < pd->arity; k++)
					{
						g.bound[k] = (mask >> k) & 1;
						/* mostly values that occur, sometimes one that does not */
						g.ival[k] = (int64_t) (rnd() % (uint64_t) (range + 2));
						g.sval[k] = rnd() % 5 == 0 ? "nobody" : words[rnd() % 12];
					}
					check_goal(a, plan, &g, pr->name);
				}
			}
			gdl_test_reset();
		}
}

/* ------------------------------------------------------------ fixed cases */

/* Rewrite a program's goal; the analysis is returned in *a_out. */
static GdlMagic *
rewrite(const char *src, const char *goal, const char *pattern, GdlAnalysis **a_out)
{
	GdlAnalysis *a = gdl_analyze(gdl_parse(src), tables_resolve, NULL);
	bool		bound[8];
	int			k;

	for (k = 0; pattern[k]; k++)
		bound[k] = pattern[k] == 'b';
	if (a_out)
		*a_out = a;
	return gdl_magic_rewrite(a, gdl_analysis_find_pred(a, goal), bound);
}

/* The whole rewritten program as text, one clause or decl per line. */
static char *
program_text(const GdlMagic *m)
{
	GdlBuf		b;
	int			i;

	gdl_buf_init(&b);
	for (i = 0; i < m->prog->nitems; i++)
	{
		const GdlItem *it = &m->prog->items[i];

		gdl_buf_append(&b, "%s\n", it->kind == GDL_ITEM_CLAUSE ?
					   gdl_clause_to_string(it->clause) : gdl_decl_to_string(it->decl));
	}
	return b.data;
}

/* The ancestor example of the file comment, printed. */
static void
test_ancestor_text(void)
{
	GdlMagic   *m;
	char	   *txt;

	random_tables(8);
	m = rewrite("anc(X, Y) :- e(X, Y). anc(X, Z) :- anc(X, Y), e(Y, Z).", "anc", "bf", NULL);
	CHECK(m != NULL);
	if (m == NULL)
		return;
	txt = program_text(m);
	CHECK_MSG(strcmp(txt,
					 "\"anc@bf\"(X, Y) :- \"m@anc@bf\"(X), e(X, Y).\n"
					 "\"anc@bf\"(X, Z) :- \"m@anc@bf\"(X), \"anc@bf\"(X, Y), e(Y, Z).\n"
					 "\"m@anc@bf\"(V0) :- \"s@anc@bf\"(V0).\n"
					 ".decl \"anc@bf\"(a1: bigint, a2: bigint)\n"
					 ".decl \"m@anc@bf\"(a1: bigint)\n") == 0, "got:\n%s", txt);
	CHECK(strcmp(m->goal_name, "anc@bf") == 0);
	CHECK(strcmp(m->seed_name, "s@anc@bf") == 0);
	CHECK(m->nseed == 1 && m->seed_args[0] == 0);
	CHECK(m->nmagic_rules == 0);

	/* bound second argument: the edge atom goes first, demand runs backwards */
	m = rewrite("anc(X, Y) :- e(X, Y). anc(X, Z) :- anc(X, Y), e(Y, Z).", "anc", "fb", NULL);
	CHECK(m != NULL);
	if (m == NULL)
		return;
	txt = program_text(m);
	CHECK_MSG(strstr(txt, "\"m@anc@fb\"(Y) :- \"m@anc@fb\"(Z), e(Y, Z).\n") != NULL, "got:\n%s", txt);
	CHECK_MSG(strstr(txt, "\"anc@fb\"(X, Z) :- \"m@anc@fb\"(Z), e(Y, Z), \"anc@fb\"(X, Y).\n") != NULL,
			  "got:\n%s", txt);
	gdl_test_reset();
}

/* Goals with no rewrite, and predicates frozen for soundness. */
static void
test_no_rewrite(void)
{
	GdlAnalysis *a;
	GdlMagic   *m;
	const char *tc = "tc(X, Y) :- e(X, Y). tc(X, Z) :- tc(X, Y), e(Y, Z)."
		"deg(X, count(Y)) :- e(X, Y). f(1, 2).";

	random_tables(8);
	CHECK(rewrite(tc, "e", "bf", NULL) == NULL);	/* a table */
	CHECK(rewrite(tc, "tc", "ff", NULL) == NULL);	/* nothing bound */
	CHECK(rewrite(tc, "f", "bf", NULL) == NULL);	/* facts only */
	CHECK(rewrite(tc, "deg", "fb", NULL) == NULL);	/* an aggregate result */
	m = rewrite(tc, "deg", "bb", &a);	/* the group binds, the count does not */
	CHECK(m != NULL && strcmp(m->pattern, "bf") == 0 && m->nseed == 1);

	/* demand from a recursion into an aggregate below it: cnt stays whole */
	m = rewrite("cnt(Y, count(Z)) :- e(Y, Z)."
				"p(X, Y) :- e(X, Y). p(X, Z) :- p(X, Y), cnt(Y, C), C > 1, e(Y, Z).",
				"p", "bf", NULL);
	CHECK(m != NULL && m->nfrozen == 1);
	if (m)
		CHECK_MSG(strstr(program_text(m), "cnt@") == NULL, "got:\n%s", program_text(m));
	/* the same through negation */
	m = rewrite("bad(Z) :- e(Z, Z). q(X, Y) :- e(X, Y), !bad(Y)."
				"q(X, Z) :- q(X, Y), e(Y, Z), !bad(Z).", "q", "bf", NULL);
	CHECK(m != NULL && m->nfrozen == 1);
	/* a negated call outside recursion keeps its demand */
	m = rewrite("tc(X, Y) :- e(X, Y). tc(X, Z) :- tc(X, Y), e(Y, Z)."
				"un(X, Y) :- n(X), n(Y), !tc(X, Y).", "un", "bf", NULL);
	CHECK(m != NULL && m->nfrozen == 0);
	if (m)
		CHECK_MSG(strstr(program_text(m), "!\"tc@bb\"(X, Y)") != NULL, "got:\n%s", program_text(m));
	gdl_test_reset();
}

/* A bound goal on a long chain derives a path, not the closure. */
static void
test_less_work(void)
{
	Table	   *e;
	GdlAnalysis *a;
	GdlAnalysis *ma;
	GdlMagic   *m;
	Goal		g;
	Answers		full,
				bound;
	int			i;

	ntables = 0;
	e = table("e", 2, GDL_TYPE_INT);
	for (i = 0; i < 300; i++)
	{
		e->ival[i][0] = i;
		e->ival[i][1] = i + 1;
	}
	e->nrows = 300;
	table("n", 1, GDL_TYPE_INT);
	m = rewrite("tc(X, Y) :- e(X, Y). tc(X, Z) :- tc(X, Y), e(Y, Z).", "tc", "bf", &a);
	CHECK(m != NULL);
	if (m == NULL)
		return;
	ma = gdl_magic_analyze(a, m);
	memset(&g, 0, sizeof(g));
	g.pred = gdl_analysis_find_pred(a, "tc");
	g.arity = 2;
	g.bound[0] = true;
	g.ival[0] = 150;
	full = run_goal(gdl_plan_compile(a), g.pred, &g, a->preds[g.pred].types, NULL);
	bound = run_goal(gdl_plan_compile(ma), gdl_analysis_find_pred(ma, m->goal_name), &g,
					 a->preds[g.pred].types, m);
	CHECK(same_answers(&full, &bound));
	CHECK(full.n == 150);
	CHECK_MSG(full.tuples > 40000 && bound.tuples < 400, "full %lld, bound %lld",
			  (long long) full.tuples, (long long) bound.tuples);
	gdl_test_reset();
}

int
main(void)
{
	gdl_test_host_install();
	test_ancestor_text();
	test_no_rewrite();
	test_less_work();
	test_random();
	printf("magic: %d goals rewritten (%d answers compared), %d without a rewrite\n",
		   nrewritten, ncompared, nfallback);
	CHECK(nrewritten > 500);
	return gdl_test_summary("test_magic");
}
