/*
 * test_ilp_recursive.c — recursion through the target in the refinement
 * search (issue 22): planted recursive tasks learned from examples and then
 * checked where it matters, on data the learner never saw.
 *
 *   ancestor    over father and mother (two parent relations)
 *   points-to   Andersen's analysis from addr, assgn, load and store: the
 *               load and store rules read the target twice
 *   grid        reachability moving east or north (west and south given as
 *               distractors)
 *   invention   a helper the program needs or is smaller with: grandparent
 *               over a union of father and mother, and mutual reachability
 *               (same strongly connected component) over a recursive helper,
 *               the closure of the edges
 *
 * Each task is generated from a seed twice: a training world whose every
 * fact of the target is a positive and every other pair a negative, and a
 * larger held-out world.  The learned program (its text, as gpudl_learn
 * returns it) is parsed and run by the engine over the held-out world's
 * relations and must derive exactly the reference relation there, computed
 * here by a plain fixpoint loop.  Also: the programs are minimal (no more
 * rules than the known solution), a recursive rule never comes without a
 * base case, without allow_recursive no rule reads the target, and method
 * auto falls back from the bulk path to the refinement search.
 */
#include "test_host.h"
#include "../../src/ilp/ilp_refine.h"
#include "../../src/lang/gdl_lang.h"

#include <string.h>

/* A binary relation over small integer ids. */
typedef struct Tab
{
	const char *name;
	size_t		n;
	size_t		cap;
	int64_t    *c[2];
} Tab;

/* Append a pair. */
static void
put(Tab *t, int64_t a, int64_t b)
{
	if (t->n == t->cap)
	{
		t->cap = t->cap * 2 + 64;
		t->c[0] = realloc(t->c[0], sizeof(int64_t) * t->cap);
		t->c[1] = realloc(t->c[1], sizeof(int64_t) * t->cap);
	}
	t->c[0][t->n] = a;
	t->c[1][t->n] = b;
	t->n++;
}

/* Empty a relation (keeps its name). */
static void
clear(Tab *t)
{
	free(t->c[0]);
	free(t->c[1]);
	t->c[0] = t->c[1] = NULL;
	t->n = t->cap = 0;
}

/* A deterministic generator (the tests must not depend on libc's rand). */
static uint64_t rng_state;

static uint32_t
rng(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t) ((rng_state >> 33) % n);
}

/* One world: named background relations and the target as a matrix. */
typedef struct World
{
	int			nrels;
	Tab			rels[6];
	int			n;				/* entities 0..n-1 */
	bool	   *target;			/* n x n */
} World;

static void
world_free(World *w)
{
	for (int i = 0; i < w->nrels; i++)
		clear(&w->rels[i]);
	free(w->target);
	memset(w, 0, sizeof(*w));
}

/* ------------------------------------------------------------- learning */

/* Learn the target from every pair of the world: facts positive, the rest negative. */
static GdlIlpResult *
learn_with(World *w, const char *target, int max_body, int max_vars, bool recursive,
		   GdlIlpMethod method, bool invent)
{
	static Tab	pos,
				neg;
	GdlIlpRelation rels[6];
	GdlColumns	pc,
				nc;
	GdlIlpProblem prob;
	GdlIlpParams params;

	clear(&pos);
	clear(&neg);
	for (int a = 0; a < w->n; a++)
		for (int b = 0; b < w->n; b++)
			put(w->target[a * w->n + b] ? &pos : &neg, a, b);
	memset(rels, 0, sizeof(rels));
	for (int i = 0; i < w->nrels; i++)
	{
		rels[i].name = w->rels[i].name;
		rels[i].arity = 2;
		rels[i].types[0] = rels[i].types[1] = GDL_TYPE_BIGINT;
		rels[i].rows.ncols = 2;
		rels[i].rows.nrows = w->rels[i].n;
		rels[i].rows.cols = w->rels[i].c;
	}
	pc.ncols = nc.ncols = 2;
	pc.nrows = pos.n;
	pc.cols = pos.c;
	nc.nrows = neg.n;
	nc.cols = neg.c;
	memset(&prob, 0, sizeof(prob));
	prob.target = target;
	prob.arity = 2;
	prob.types[0] = prob.types[1] = GDL_TYPE_BIGINT;
	prob.rels = rels;
	prob.nrels = w->nrels;
	prob.positives = &pc;
	prob.negatives = &nc;
	gdl_ilp_params_default(&params);
	params.method = method;
	params.allow_recursive = recursive;
	params.invent = invent;
	params.max_body = max_body;
	params.max_vars = max_vars;
	params.max_seconds = 60;
	return gdl_ilp_learn(&prob, &params, NULL);
}

/* Learn on the refinement search. */
static GdlIlpResult *
learn(World *w, const char *target, int max_body, int max_vars, bool recursive)
{
	return learn_with(w, target, max_body, max_vars, recursive, GDL_ILP_REFINE, true);
}

/* ------------------------------------------- the program on another world */

static World *eval_world;

/* Resolver: the world's relations, two bigint columns each. */
static bool
resolve(void *arg, const char *name, GdlRelInfo *out)
{
	static GdlType types[2] = {GDL_TYPE_BIGINT, GDL_TYPE_BIGINT};
	static char *colnames[2] = {"a", "b"};
	static char *typnames[2] = {"bigint", "bigint"};

	for (int i = 0; i < eval_world->nrels; i++)
		if (strcmp(eval_world->rels[i].name, name) == 0)
		{
			out->relid = 100 + i;
			out->display_name = (char *) eval_world->rels[i].name;
			out->ncols = 2;
			out->types = types;
			out->colnames = colnames;
			out->typnames = typnames;
			return true;
		}
	return false;
}

/* Loader: a copy of the relation's columns. */
static void
load_edb(void *arg, const GdlPred *pred, GdlDict *dict, GdlColumns *out)
{
	for (int i = 0; i < eval_world->nrels; i++)
		if (strcmp(eval_world->rels[i].name, pred->name) == 0)
		{
			Tab		   *t = &eval_world->rels[i];

			out->ncols = 2;
			out->nrows = t->n;
			out->cols = gdl_alloc(sizeof(int64_t *) * 2);
			for (int k = 0; k < 2; k++)
			{
				out->cols[k] = gdl_alloc(sizeof(int64_t) * (t->n + 1));
				memcpy(out->cols[k], t->c[k], sizeof(int64_t) * t->n);
			}
			return;
		}
	gdl_error(GDL_ERR_UNDEFINED, NULL, NULL, "no table %s", pred->name);
}

/*
 * Run a learned program over world w with the engine; true when it derives
 * exactly w's target relation (mismatches counted into *wrong).
 */
static bool
derives_exactly(World *w, const char *program, const char *target, int64_t *wrong)
{
	GdlProgram *volatile p = NULL;
	GdlAnalysis *volatile a = NULL;
	GdlPlan    *volatile plan = NULL;
	GdlResult  *volatile res = NULL;
	GdlRunInput in = {.load_edb = load_edb, .device = GDL_DEVICE_CPU, .want_rows = true};
	GdlGoal		goal;
	GdlError   *e;
	bool	   *got = calloc((size_t) w->n * w->n + 1, 1);

	eval_world = w;
	memset(&goal, 0, sizeof(goal));
	e = GDL_TRY(p = gdl_parse(program); a = gdl_analyze(p, resolve, NULL);
				goal.pred = gdl_analysis_find_pred(a, target);
				plan = gdl_plan_compile(a);
				res = gdl_run(plan, &in, gdl_dict_create(), &goal));
	CHECK_MSG(e == NULL, "running <%s> failed: %s", program, e ? e->message : "");
	*wrong = 0;
	if (e == NULL)
		for (size_t r = 0; r < res->rows.nrows; r++)
		{
			int64_t		x = res->rows.cols[0][r],
						y = res->rows.cols[1][r];

			if (x >= 0 && y >= 0 && x < w->n && y < w->n)
				got[x * w->n + y] = true;
			else
				(*wrong)++;
		}
	for (int i = 0; i < w->n * w->n; i++)
		*wrong += got[i] != w->target[i];
	free(got);
	return e == NULL && *wrong == 0;
}

/* Common checks of a learned recursive program against a held-out world. */
static void
check_learned(const char *task, GdlIlpResult *r, World *heldout, const char *target,
			  int max_rules)
{
	int64_t		wrong = -1;
	int			nrec = 0;

	for (int i = 0; i < r->nrules; i++)
		nrec += r->rules[i].recursive;
	printf("  %s: %d rules (%d recursive), train precision %.3f recall %.3f (%s): %s",
		   task, r->nrules, nrec, r->train_precision, r->train_recall, r->message, r->program);
	CHECK_MSG(r->train_precision == 1.0 && r->train_recall == 1.0, "%s: %s", task, r->message);
	CHECK_MSG(nrec > 0 && nrec < r->nrules, "%s: a recursive rule and a base case", task);
	CHECK_MSG(r->nrules <= max_rules, "%s: %d rules, the solution needs %d", task, r->nrules,
			  max_rules);
	CHECK_MSG(derives_exactly(heldout, r->program, target, &wrong),
			  "%s: on the held-out world %lld pairs wrong", task, (long long) wrong);
}

/* ------------------------------------------------------------- ancestor */

/* A family of gens generations of size each; father/mother of the previous one. */
static void
make_family(World *w, int gens, int size, uint64_t seed)
{
	memset(w, 0, sizeof(*w));
	rng_state = seed;
	w->nrels = 2;
	w->rels[0].name = "father";
	w->rels[1].name = "mother";
	w->n = gens * size;
	w->target = calloc((size_t) w->n * w->n, 1);
	/* people 0..size-1 the first generation; even ids men, odd women */
	for (int g = 1; g < gens; g++)
		for (int i = 0; i < size; i++)
		{
			int			child = g * size + i;
			int			f = (g - 1) * size + 2 * (int) rng((uint32_t) size / 2);
			int			m = (g - 1) * size + 2 * (int) rng((uint32_t) size / 2) + 1;

			put(&w->rels[0], f, child);
			put(&w->rels[1], m, child);
			w->target[f * w->n + child] = true;
			w->target[m * w->n + child] = true;
		}
	/* ancestor: the closure, generations in order */
	for (int y = 0; y < w->n; y++)
		for (int z = 0; z < w->n; z++)
			if (w->target[z * w->n + y])
				for (int x = 0; x < w->n; x++)
					if (w->target[x * w->n + z])
						w->target[x * w->n + y] = true;
}

/* ancestor(X, Y) from father and mother: needs recursion over both. */
static void
test_ancestor(void)
{
	World		train,
				held;
	GdlIlpResult *r;

	make_family(&train, 5, 8, 11);
	make_family(&held, 7, 12, 12);
	r = learn(&train, "ancestor", 2, 3, true);
	check_learned("ancestor", r, &held, "ancestor", 4);
	/* without recursion no rule reads the target, and the fit is not exact */
	r = learn(&train, "ancestor", 2, 3, false);
	for (int i = 0; i < r->nrules; i++)
		CHECK(!r->rules[i].recursive && strstr(r->rules[i].rule, ":- ancestor") == NULL &&
			  strstr(r->rules[i].rule, " ancestor(") == NULL);
	CHECK(r->train_recall < 1.0 || r->train_precision < 1.0);
	world_free(&train);
	world_free(&held);
}

/* ------------------------------------------------------------ points-to */

/* Derive pt(x, y) in the n x n flags pt: true when it is new. */
static bool
derive(bool *pt, int n, int64_t x, int64_t y)
{
	if (pt[x * n + y])
		return false;
	pt[x * n + y] = true;
	return true;
}

/*
 * A random program of nv pointer variables and nv / 2 objects (ids nv..):
 * x = &o (addr), x = y (assgn), x = *y (load), *x = y (store), and pt by
 * Andersen's rules to a fixpoint.  Objects hold pointers only through
 * stores, as in C code.
 */
static void
make_pointsto(World *w, int nv, uint64_t seed)
{
	bool		changed = true;
	bool	   *pt;
	int			no = nv / 2,
				n = nv + no;

	memset(w, 0, sizeof(*w));
	rng_state = seed;
	w->nrels = 4;
	w->rels[0].name = "addr";
	w->rels[1].name = "assgn";
	w->rels[2].name = "load";
	w->rels[3].name = "store";
	w->n = n;
	pt = w->target = calloc((size_t) n * n, 1);
	for (int i = 0; i < nv / 2; i++)
		put(&w->rels[0], rng(nv), nv + rng(no));
	for (int i = 0; i < nv / 2; i++)
		put(&w->rels[1], rng(nv), rng(nv));
	for (int i = 0; i < nv / 4; i++)
		put(&w->rels[2], rng(nv), rng(nv));
	for (int i = 0; i < nv / 4; i++)
		put(&w->rels[3], rng(nv), rng(nv));
	for (size_t i = 0; i < w->rels[0].n; i++)
		pt[w->rels[0].c[0][i] * n + w->rels[0].c[1][i]] = true;
	while (changed)
	{
		changed = false;
		for (int y = 0; y < n; y++)
		{
			const Tab  *as = &w->rels[1],
					   *ld = &w->rels[2],
					   *st = &w->rels[3];

			/* pt(a, y) :- assgn(a, b), pt(b, y) */
			for (size_t i = 0; i < as->n; i++)
				if (pt[as->c[1][i] * n + y])
					changed |= derive(pt, n, as->c[0][i], y);
			/* pt(a, y) :- load(a, b), pt(b, z), pt(z, y) */
			for (size_t i = 0; i < ld->n; i++)
				for (int z = 0; z < n; z++)
					if (pt[ld->c[1][i] * n + z] && pt[z * n + y])
						changed |= derive(pt, n, ld->c[0][i], y);
			/* pt(z, y) :- store(a, b), pt(a, z), pt(b, y) */
			for (size_t i = 0; i < st->n; i++)
				for (int z = 0; z < n; z++)
					if (pt[st->c[0][i] * n + z] && pt[st->c[1][i] * n + y])
						changed |= derive(pt, n, z, y);
		}
	}
}

/* Andersen's points-to: the load and store rules read pt twice. */
static void
test_pointsto(void)
{
	World		train,
				held;
	GdlIlpResult *r;

	make_pointsto(&train, 60, 1);
	make_pointsto(&held, 90, 22);
	r = learn(&train, "pt", 3, 4, true);
	check_learned("points-to", r, &held, "pt", 4);
	/*
	 * method auto: a binary problem takes the bulk path, which cannot read
	 * pt twice; with explicit negatives and allow_recursive the refinement
	 * search is tried and wins
	 */
	r = learn_with(&train, "pt", 3, 4, true, GDL_ILP_AUTO, true);
	CHECK_MSG(strcmp(r->method, "refine") == 0 && strstr(r->message, "the bulk path fitted") != NULL,
			  "auto: %s", r->message);
	check_learned("points-to (auto)", r, &held, "pt", 4);
	world_free(&train);
	world_free(&held);
}

/* ----------------------------------------------------------------- grid */

/* A side x side grid: moves east, north (and west, south), reach by east/north. */
static void
make_grid(World *w, int side)
{
	int			n = side * side;

	memset(w, 0, sizeof(*w));
	w->nrels = 4;
	w->rels[0].name = "east";
	w->rels[1].name = "north";
	w->rels[2].name = "west";
	w->rels[3].name = "south";
	w->n = n;
	w->target = calloc((size_t) n * n, 1);
	for (int i = 0; i < side; i++)
		for (int j = 0; j < side; j++)
		{
			int			c = i * side + j;

			if (j + 1 < side)
			{
				put(&w->rels[0], c, c + 1);
				put(&w->rels[2], c + 1, c);
			}
			if (i + 1 < side)
			{
				put(&w->rels[1], c, c + side);
				put(&w->rels[3], c + side, c);
			}
			/* reach: every cell up and to the right, but itself */
			for (int i2 = i; i2 < side; i2++)
				for (int j2 = j; j2 < side; j2++)
					if (i2 != i || j2 != j)
						w->target[c * n + i2 * side + j2] = true;
		}
}

/* A path on a grid: reach(X, Y) through east and north moves. */
static void
test_grid(void)
{
	World		train,
				held;
	GdlIlpResult *r;

	make_grid(&train, 5);
	make_grid(&held, 8);
	r = learn(&train, "reach", 2, 3, true);
	check_learned("grid", r, &held, "reach", 4);
	world_free(&train);
	world_free(&held);
}

/* ------------------------------------------------------------ invention */

/* How many clauses of the program start with stem (a helper's head). */
static int
helpers_defined(const char *program, const char *stem)
{
	int			n = 0;

	for (const char *p = program; (p = strstr(p, stem)) != NULL; p++)
		if (p == program || p[-1] == '\n')
			n++;
	return n;
}

/* grandparent(X, Y) over father and mother: one rule over an invented union. */
static void
test_invent_union(void)
{
	World		train,
				held;
	GdlIlpResult *r;
	int64_t		wrong = -1;

	make_family(&train, 4, 10, 31);
	make_family(&held, 6, 12, 32);
	/* the target: two generations apart (father or mother at each step) */
	for (World *w = &train; w; w = w == &train ? &held : NULL)
	{
		bool	   *par = calloc((size_t) w->n * w->n, 1);

		for (int k = 0; k < 2; k++)
			for (size_t i = 0; i < w->rels[k].n; i++)
				par[w->rels[k].c[0][i] * w->n + w->rels[k].c[1][i]] = true;
		memset(w->target, 0, (size_t) w->n * w->n);
		for (int x = 0; x < w->n; x++)
			for (int z = 0; z < w->n; z++)
				if (par[x * w->n + z])
					for (int y = 0; y < w->n; y++)
						if (par[z * w->n + y])
							w->target[x * w->n + y] = true;
		free(par);
	}
	r = learn(&train, "grandparent", 2, 3, true);
	printf("  invention (union): %d rules, precision %.3f recall %.3f: %s", r->nrules,
		   r->train_precision, r->train_recall, r->program);
	CHECK_MSG(r->train_precision == 1.0 && r->train_recall == 1.0, "union: %s", r->message);
	CHECK_MSG(r->nrules == 1 && r->invented && r->rules[0].aux != NULL &&
			  strstr(r->program, "father_or_mother(X, Y) :- father(X, Y).") != NULL,
			  "union: one rule over the helper, not four: %s", r->program);
	CHECK_MSG(derives_exactly(&held, r->program, "grandparent", &wrong),
			  "union: on the held-out world %lld pairs wrong", (long long) wrong);
	/* method auto: the bulk path fits with four rules; the refinement search's helper is smaller */
	r = learn_with(&train, "grandparent", 2, 3, true, GDL_ILP_AUTO, true);
	CHECK_MSG(strcmp(r->method, "refine") == 0 && r->nrules == 1 && r->invented &&
			  strstr(r->message, "smaller than the bulk path's 4 rules, 12 literals") != NULL,
			  "auto: %s: %s", r->message, r->program);
	/* without invent: the four rules over father and mother, no helper */
	r = learn_with(&train, "grandparent", 2, 3, true, GDL_ILP_REFINE, false);
	CHECK_MSG(r->nrules == 4 && !r->invented && strstr(r->program, "_or_") == NULL,
			  "no invent: %s", r->program);
	world_free(&train);
	world_free(&held);
}

/*
 * A random directed graph with cycles; the target: X and Y on a common
 * cycle (each reaches the other), which no rule over the edges and the
 * target alone expresses.
 */
static void
make_scc(World *w, int n, uint64_t seed)
{
	bool	   *reach;

	memset(w, 0, sizeof(*w));
	rng_state = seed;
	w->nrels = 2;
	w->rels[0].name = "edge";
	w->rels[1].name = "color";	/* a distractor over the same nodes */
	w->n = n;
	for (int i = 0; i < n + n / 3; i++)
		put(&w->rels[0], rng(n), rng(n));
	for (int i = 0; i < n; i++)
		put(&w->rels[1], i, rng(3));
	reach = calloc((size_t) n * n, 1);
	for (size_t i = 0; i < w->rels[0].n; i++)
		reach[w->rels[0].c[0][i] * n + w->rels[0].c[1][i]] = true;
	for (int z = 0; z < n; z++)
		for (int x = 0; x < n; x++)
			if (reach[x * n + z])
				for (int y = 0; y < n; y++)
					if (reach[z * n + y])
						reach[x * n + y] = true;
	w->target = calloc((size_t) n * n, 1);
	for (int x = 0; x < n; x++)
		for (int y = 0; y < n; y++)
			w->target[x * n + y] = reach[x * n + y] && reach[y * n + x];
	free(reach);
}

/* same_scc(X, Y) :- edge_plus(X, Y), edge_plus(Y, X): a recursive helper. */
static void
test_invent_closure(void)
{
	World		train,
				held;
	GdlIlpResult *r;
	int64_t		wrong = -1;

	make_scc(&train, 30, 41);
	make_scc(&held, 50, 42);
	r = learn(&train, "same_scc", 2, 3, true);
	printf("  invention (closure): %d rules, precision %.3f recall %.3f: %s", r->nrules,
		   r->train_precision, r->train_recall, r->program);
	CHECK_MSG(r->train_precision == 1.0 && r->train_recall == 1.0, "closure: %s", r->message);
	CHECK_MSG(r->invented && helpers_defined(r->program, "edge_plus(X, Y) :- ") == 2 &&
			  strstr(r->program, "edge_plus(X, Y) :- edge(X, Z), edge_plus(Z, Y).") != NULL,
			  "closure: the recursive helper defined once: %s", r->program);
	CHECK_MSG(derives_exactly(&held, r->program, "same_scc", &wrong),
			  "closure: on the held-out world %lld pairs wrong", (long long) wrong);
	/* without invent: no helper (what the target alone can fit on these examples, if anything) */
	r = learn_with(&train, "same_scc", 2, 3, true, GDL_ILP_REFINE, false);
	CHECK_MSG(!r->invented && strstr(r->program, "_plus") == NULL, "no invent: %s", r->program);
	world_free(&train);
	world_free(&held);
}

int
main(void)
{
	gdl_test_host_install();
	test_ancestor();
	test_pointsto();
	test_grid();
	test_invent_union();
	test_invent_closure();
	return gdl_test_summary("test_ilp_recursive");
}
