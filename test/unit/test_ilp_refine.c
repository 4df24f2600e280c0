/*
 * test_ilp_refine.c — unit tests of the refinement search (issue 15,
 * src/ilp/ilp_refine.h): a ternary target over a ternary table, a planted
 * five-atom rule, argument tags keeping types apart, canonical keys, the
 * time budget (returns within it, marked), the noise setting, relations
 * left out with a note, bad parameters, and coverage by independent parts
 * and tabled rests (same answers as the plain join, far fewer steps) on an
 * eight-puzzle-shaped world whose four-atom rule is then learned.
 */
#include "test_util.h"
#include "../../src/ilp/ilp_refine.h"

#include <string.h>

/* A relation of up to 4 integer columns, filled tuple by tuple. */
typedef struct Tab
{
	int			arity;
	size_t		n;
	int64_t		c[4][4096];
	int64_t    *cols[4];
	GdlColumns	ex;				/* the columns as examples (problem()) */
} Tab;

/* Empty n tables (their arity too). */
static void
tabs_clear(Tab *const *tabs, int n)
{
	for (int i = 0; i < n; i++)
		memset(tabs[i], 0, sizeof(Tab));
}

/* Append a tuple (unused columns ignored). */
static void
put(Tab *t, int64_t a, int64_t b, int64_t c)
{
	t->c[0][t->n] = a;
	t->c[1][t->n] = b;
	t->c[2][t->n] = c;
	t->n++;
}

/* The table as a background relation (or example columns). */
static GdlIlpRelation
rel_of(const char *name, Tab *t)
{
	GdlIlpRelation r;

	memset(&r, 0, sizeof(r));
	r.name = name;
	r.arity = t->arity;
	for (int k = 0; k < t->arity; k++)
	{
		r.types[k] = GDL_TYPE_BIGINT;
		t->cols[k] = t->c[k];
	}
	r.rows.ncols = t->arity;
	r.rows.nrows = t->n;
	r.rows.cols = t->cols;
	return r;
}

/*
 * A problem over relations with integer examples: the rows of pos, and of
 * neg (NULL: none), which hold the example columns the problem points to.
 */
static GdlIlpProblem
problem(const char *target, int arity, GdlIlpRelation *rels, int nrels, Tab *pos, Tab *neg)
{
	GdlIlpProblem p = {.target = target, .arity = arity, .rels = rels, .nrels = nrels};

	for (int k = 0; k < arity; k++)
		p.types[k] = GDL_TYPE_BIGINT;
	pos->ex = rel_of("pos", pos).rows;
	p.positives = &pos->ex;
	if (neg)
	{
		neg->ex = rel_of("neg", neg).rows;
		p.negatives = &neg->ex;
	}
	return p;
}

/* A deal world: sale of some arity, cheap/1, deal examples of sale's arity. */
typedef struct Deal
{
	Tab			sale,
				cheap,
				pos,
				neg;
	GdlIlpRelation rels[2];
	GdlIlpProblem prob;
	GdlIlpParams params;
} Deal;

/* Empty a deal world whose sale and examples have the given arity. */
static void
deal_begin(Deal *d, int arity)
{
	tabs_clear((Tab *[]) {&d->sale, &d->cheap, &d->pos, &d->neg}, 4);
	d->sale.arity = d->pos.arity = d->neg.arity = arity;
	d->cheap.arity = 1;
}

/* The filled deal world's problem (deal over sale and cheap), default parameters. */
static void
deal_problem(Deal *d)
{
	d->rels[0] = rel_of("sale", &d->sale);
	d->rels[1] = rel_of("cheap", &d->cheap);
	d->prob = problem("deal", d->sale.arity, d->rels, 2, &d->pos, &d->neg);
	gdl_ilp_params_default(&d->params);
}

/* deal(S, I, P) :- sale(S, I, P), cheap(P): learned exactly, by the refinement search. */
static void
test_ternary(void)
{
	static Deal d;
	GdlIlpResult *r;

	deal_begin(&d, 3);
	for (int p = 0; p < 3; p++)
		put(&d.cheap, p, 0, 0);
	for (int s = 1; s <= 6; s++)
		for (int i = 1; i <= 8; i++)
		{
			int			p = (s * 7 + i * 3) % 10;

			put(&d.sale, s, i, p);
			if (p < 3)
			{
				put(&d.pos, s, i, p);
				put(&d.neg, s, i, (p + 1) % 3);
			}
			else
				put(&d.neg, s, i, p);
		}
	deal_problem(&d);
	CHECK(ilp_refine_needed(&d.prob, &d.params));
	r = gdl_ilp_learn(&d.prob, &d.params, NULL);
	CHECK(r->nrules == 1);
	CHECK_MSG(r->nrules == 1 && strcmp(r->rules[0].rule, "deal(X, Y, Z) :- cheap(Z), sale(X, Y, Z).") == 0,
			  "got %s", r->nrules > 0 ? r->rules[0].rule : "(none)");
	CHECK(r->train_precision == 1.0 && r->train_recall == 1.0);
	CHECK(strcmp(r->method, "refine") == 0 && !r->timed_out);
}

/* Zendo-like scenes: the five-atom rule is recovered; three atoms are not enough. */
static void
test_five_atoms(void)
{
	static Tab	piece,
				size,
				small,
				red,
				contact,
				pos,
				neg;
	GdlIlpRelation rels[5];
	GdlIlpProblem prob;
	GdlIlpParams params;
	GdlIlpResult *r;

	tabs_clear((Tab *[]) {&piece, &size, &small, &red, &contact, &pos, &neg}, 7);
	piece.arity = size.arity = contact.arity = 2;
	small.arity = red.arity = pos.arity = neg.arity = 1;
	put(&small, 1, 0, 0);
	for (int64_t s = 1; s <= 60; s++)
	{
		bool		yes = false;

		for (int64_t k = 1; k <= 4; k++)
		{
			int64_t		p = s * 10 + k;

			put(&piece, s, p, 0);
			put(&size, p, 1 + (p * 2654435761LL % 7919) % 3, 0);
			if ((p * 40503 % 7) < 3)
				put(&red, p, 0, 0);
		}
		for (int64_t a = 1; a <= 4; a++)
			for (int64_t b = 1; b <= 4; b++)
			{
				int64_t		p = s * 10 + a,
							q = s * 10 + b;

				if (a != b && (p * 31 + q * 17) % 5 == 0)
				{
					put(&contact, p, q, 0);
					if (1 + (p * 2654435761LL % 7919) % 3 == 1 && (q * 40503 % 7) < 3)
						yes = true;
				}
			}
		put(yes ? &pos : &neg, s, 0, 0);
	}
	rels[0] = rel_of("piece", &piece);
	rels[1] = rel_of("size", &size);
	rels[2] = rel_of("small", &small);
	rels[3] = rel_of("red", &red);
	rels[4] = rel_of("contact", &contact);
	prob = problem("zen", 1, rels, 5, &pos, &neg);
	gdl_ilp_params_default(&params);
	params.max_body = 5;
	r = gdl_ilp_learn(&prob, &params, NULL);
	CHECK_MSG(r->nrules == 1 && strcmp(r->rules[0].rule, "zen(X) :- contact(Y, Z), piece(X, Y), red(Z), "
									   "size(Y, W), small(W).") == 0,
			  "got %d rules: %s", r->nrules, r->nrules > 0 ? r->rules[0].rule : "(none)");
	CHECK(r->train_precision == 1.0 && r->train_recall == 1.0 && r->max_body_used == 5);
	/* the same again: deterministic */
	{
		GdlIlpResult *r2 = gdl_ilp_learn(&prob, &params, NULL);

		CHECK(r2->nrules == r->nrules && strcmp(r2->program, r->program) == 0);
	}
	params.max_body = 3;
	params.method = GDL_ILP_REFINE;
	r = gdl_ilp_learn(&prob, &params, NULL);
	CHECK(r->train_recall < 1.0 && (r->nrules == 0 || r->train_precision == 1.0));
	/* a tiny time budget: returns at once, marked, with a consistent best-so-far */
	params.max_body = 6;
	params.max_seconds = 0.0005;
	{
		double		t0 = ilp_now();

		r = gdl_ilp_learn(&prob, &params, NULL);
		CHECK(ilp_now() - t0 < 2.0);
		CHECK(r->timed_out);
		CHECK(strstr(r->message, "max_seconds ran out") != NULL);
		CHECK(r->nrules == 0 || r->train_precision == 1.0);
	}
}

/* Tags: persons and cities never share a variable; without them a coincidence fits. */
static void
test_types(void)
{
	static Tab	lives,
				big,
				pos,
				neg;
	GdlIlpRelation rels[2];
	GdlIlpProblem prob;
	GdlIlpParams params;
	GdlIlpResult *r;

	tabs_clear((Tab *[]) {&lives, &big, &pos, &neg}, 4);
	lives.arity = 2;
	big.arity = pos.arity = neg.arity = 1;
	for (int64_t p = 1; p <= 12; p++)
	{
		put(&lives, p, p <= 2 ? p : 3 + p % 2, 0);
		put(p <= 2 ? &pos : &neg, p, 0, 0);
	}
	put(&big, 1, 0, 0);
	put(&big, 2, 0, 0);
	rels[0] = rel_of("lives", &lives);
	rels[1] = rel_of("big", &big);
	prob = problem("town", 1, rels, 2, &pos, &neg);
	gdl_ilp_params_default(&params);
	params.method = GDL_ILP_REFINE;
	r = gdl_ilp_learn(&prob, &params, NULL);
	CHECK(r->nrules == 1 && strcmp(r->rules[0].rule, "town(X) :- big(X).") == 0);
	rels[0].tags[0] = prob.tags[0] = "person";
	rels[0].tags[1] = rels[1].tags[0] = "city";
	params.method = GDL_ILP_AUTO;
	CHECK(ilp_refine_needed(&prob, &params));
	r = gdl_ilp_learn(&prob, &params, NULL);
	CHECK_MSG(r->nrules == 1 && strcmp(r->rules[0].rule, "town(X) :- big(Y), lives(X, Y).") == 0,
			  "got %s", r->nrules > 0 ? r->rules[0].rule : "(none)");
}

/* The same rule written two ways has one canonical key. */
static void
test_canonical(void)
{
	static Tab	a,
				b;
	GdlIlpRelation rels[2];
	GdlIlpProblem prob;
	NxWorld    *w;
	NxRule		x,
				y;

	tabs_clear((Tab *[]) {&a, &b}, 2);
	a.arity = b.arity = 2;
	put(&a, 1, 2, 0);
	put(&b, 2, 3, 0);
	rels[0] = rel_of("a", &a);
	rels[1] = rel_of("b", &b);
	prob = problem("t", 2, rels, 2, &a, NULL);
	w = nx_world_build(&prob, 0, 2, false, false);
	memset(&x, -1, sizeof(x));
	memset(&y, -1, sizeof(y));
	/* t(X, Y) :- a(X, Z), b(Z, W), a(W, Y)  vs  a(W', Y), a(X, Z'), b(Z', W') */
	x.natoms = y.natoms = 3;
	x.nvars = y.nvars = 4;
	for (int v = 0; v < 4; v++)
		x.vcls[v] = y.vcls[v] = 0;
	x.atoms[0] = (NxAtom) {0, {0, 2, -1, -1, -1, -1, -1, -1}};
	x.atoms[1] = (NxAtom) {1, {2, 3, -1, -1, -1, -1, -1, -1}};
	x.atoms[2] = (NxAtom) {0, {3, 1, -1, -1, -1, -1, -1, -1}};
	y.atoms[0] = (NxAtom) {0, {2, 1, -1, -1, -1, -1, -1, -1}};
	y.atoms[1] = (NxAtom) {0, {0, 3, -1, -1, -1, -1, -1, -1}};
	y.atoms[2] = (NxAtom) {1, {3, 2, -1, -1, -1, -1, -1, -1}};
	nx_rule_canon(&x, 2);
	nx_rule_canon(&y, 2);
	CHECK(nx_rule_key(&x) == nx_rule_key(&y));
	CHECK(strcmp(nx_rule_text(w, &x), nx_rule_text(w, &y)) == 0);
	CHECK(w->generated_neg && w->nneg > 0);
}

/* Noise: flipped labels give extra rules exactly, one rule with noise. */
static void
test_noise(void)
{
	static Deal d;
	GdlIlpResult *r;
	int			flipped = 0;

	deal_begin(&d, 2);
	put(&d.cheap, 0, 0, 0);
	put(&d.cheap, 1, 0, 0);
	for (int64_t i = 1; i <= 60; i++)
	{
		int64_t		p = (i * 7) % 5;
		bool		label = p < 2;

		put(&d.sale, i, p, 0);
		if (i % 15 == 0)
		{
			label = !label;		/* 4 outliers */
			flipped++;
		}
		put(label ? &d.pos : &d.neg, i, p, 0);
	}
	deal_problem(&d);
	d.params.method = GDL_ILP_REFINE;
	r = gdl_ilp_learn(&d.prob, &d.params, NULL);
	CHECK(flipped == 4 && r->train_precision == 1.0);
	CHECK(r->nrules != 1 || r->train_recall < 1.0);
	d.params.noise = 0.2;
	r = gdl_ilp_learn(&d.prob, &d.params, NULL);
	CHECK_MSG(r->nrules == 1 && strcmp(r->rules[0].rule, "deal(X, Y) :- cheap(Y), sale(X, Y).") == 0,
			  "got %d: %s", r->nrules, r->nrules > 0 ? r->rules[0].rule : "(none)");
}

/* Relations the search cannot use are noted; bad parameters raise. */
static void
test_notes_and_errors(void)
{
	static Tab	a,
				empty,
				pos;
	GdlIlpRelation rels[3];
	GdlIlpProblem prob;
	GdlIlpParams params;
	GdlIlpResult *r;
	GdlError   *e;

	tabs_clear((Tab *[]) {&a, &empty, &pos}, 3);
	a.arity = pos.arity = 3;
	empty.arity = 2;
	put(&a, 1, 2, 3);
	put(&pos, 1, 2, 3);
	rels[0] = rel_of("a", &a);
	rels[1] = rel_of("empty", &empty);
	rels[2] = rel_of("wide", &a);
	rels[2].arity = GDL_ILP_MAX_ARITY + 1;
	prob = problem("t", 3, rels, 3, &pos, NULL);
	gdl_ilp_params_default(&params);
	r = gdl_ilp_learn(&prob, &params, NULL);
	CHECK(r->nnotes == 2);
	CHECK(r->nnotes == 2 && strstr(r->notes[0], "\"empty\"") && strstr(r->notes[0], "no rows"));
	CHECK(r->nnotes == 2 && strstr(r->notes[1], "\"wide\"") && strstr(r->notes[1], "9 arguments"));
	params.max_body = GDL_ILP_MAX_BODY + 1;
	e = GDL_TRY(gdl_ilp_learn(&prob, &params, NULL));
	CHECK(e != NULL && e->code == GDL_ERR_PARAM);
	CHECK_ILP_BAD_PARAM(prob, params, noise, 1.0);
	CHECK_ILP_BAD_PARAM(prob, params, max_seconds, -1);
	/* a binary-only problem with more than 3 atoms: refinement, not an error */
	gdl_ilp_params_default(&params);
	params.max_body = 4;
	prob.nrels = 0;
	CHECK(ilp_refine_needed(&prob, &params));
}

/* Append a 4-tuple. */
static void
put4(Tab *t, int64_t a, int64_t b, int64_t c, int64_t d)
{
	t->c[3][t->n] = d;
	put(t, a, b, c);
}

/* Index of a relation of the world by name. */
static int16_t
pred_of(const NxWorld *w, const char *name)
{
	for (int i = 0; i < w->nrels; i++)
		if (strcmp(w->rels[i].name, name) == 0)
			return (int16_t) i;
	return -1;
}

/* Append atom pred(a, b, c, d) (unused arguments -1) to a rule. */
static void
add_atom(NxRule *r, int16_t pred, int a, int b, int c, int d)
{
	NxAtom	   *at = &r->atoms[r->natoms++];
	int			args[4] = {a, b, c, d};

	memset(at->args, -1, sizeof(at->args));
	at->pred = pred;
	for (int k = 0; k < 4; k++)
	{
		at->args[k] = (int8_t) args[k];
		if (args[k] + 1 > r->nvars)
			r->nvars = (int8_t) (args[k] + 1);
	}
}

/*
 * An eight-puzzle-shaped world: states of a 3 x 3 board (cell(S, R, C, T),
 * tile 0 the blank), move(S, R, C) when the blank is one row below (R, C).
 * Build it into *prob (static storage).
 */
static void
puzzle_problem(GdlIlpProblem *prob, GdlIlpRelation *rels)
{
	static Tab	cell,
				blank,
				succ,
				pos,
				neg;

	tabs_clear((Tab *[]) {&cell, &blank, &succ, &pos, &neg}, 5);
	cell.arity = 4;
	blank.arity = 1;
	succ.arity = 2;
	pos.arity = neg.arity = 3;
	put(&blank, 0, 0, 0);
	put(&succ, 1, 2, 0);
	put(&succ, 2, 3, 0);
	for (int64_t s = 1; s <= 120; s++)
	{
		int64_t		br = 0,
					bc = 0;

		for (int64_t i = 0; i < 9; i++)
		{
			int64_t		t = (i + s * 5 + (s / 9) * 2) % 9;

			put4(&cell, 1000 + s, 1 + i / 3, 1 + i % 3, t);
			if (t == 0)
			{
				br = 1 + i / 3;
				bc = 1 + i % 3;
			}
		}
		for (int64_t r = 1; r <= 3; r++)
			for (int64_t c = 1; c <= 3; c++)
				put((r + 1 == br && c == bc) ? &pos : &neg, 1000 + s, r, c);
	}
	rels[0] = rel_of("cell", &cell);
	rels[1] = rel_of("blank", &blank);
	rels[2] = rel_of("succ", &succ);
	*prob = problem("move", 3, rels, 3, &pos, &neg);
	/* types as Popper's bias declares them (gpudl_learn's 'types') */
	rels[0].tags[0] = prob->tags[0] = "state";
	rels[0].tags[1] = rels[0].tags[2] = prob->tags[1] = prob->tags[2] = "pos";
	rels[2].tags[0] = rels[2].tags[1] = "pos";
	rels[0].tags[3] = rels[1].tags[0] = "tile";
}

/*
 * Coverage with independent parts and tabled rests (ilp_nsolve.c) answers
 * exactly what the plain join answers, in far fewer steps when a part does
 * not depend on every head variable: the cross-state part of
 * move(X, Y, Z) :- cell(X, U, Z, V), blank(V), succ(Y, U), cell(T, Y, Y, S), cell(T, Z, Y, S)
 * scans every state for each example when joined plainly.
 */
static void
test_memo_cover(void)
{
	GdlIlpRelation rels[3];
	GdlIlpProblem prob;
	NxWorld    *w;
	NxRule		rules[3];
	int32_t    *all,
			   *got;

	puzzle_problem(&prob, rels);
	w = nx_world_build(&prob, 0, 4, false, false);
	CHECK(w->npos + w->nneg == 1080 && w->npos > 60);
	all = gdl_alloc(sizeof(int32_t) * (w->npos + w->nneg));
	got = gdl_alloc(sizeof(int32_t) * (w->npos + w->nneg));
	for (int32_t i = 0; i < w->npos + w->nneg; i++)
		all[i] = i;
	memset(rules, 0, sizeof(rules));
	for (int i = 0; i < 3; i++)
	{
		rules[i].nvars = 3;
		add_atom(&rules[i], pred_of(w, "cell"), 0, 3, 2, 4);
		add_atom(&rules[i], pred_of(w, "blank"), 4, -1, -1, -1);
		add_atom(&rules[i], pred_of(w, "succ"), 1, 3, -1, -1);
	}
	/* a second state whose cells (Y, Y) and (Z, Y) hold one tile: only when Y = Z */
	add_atom(&rules[1], pred_of(w, "cell"), 5, 1, 1, 6);
	add_atom(&rules[1], pred_of(w, "cell"), 5, 2, 1, 6);
	/* the same, linked to the first part through U: one part, tabled rests */
	add_atom(&rules[2], pred_of(w, "cell"), 5, 3, 1, 6);
	add_atom(&rules[2], pred_of(w, "cell"), 5, 2, 1, 6);
	for (int i = 0; i < 3; i++)
	{
		NxSolver	plain,
					fast;
		NxPlan		p;
		int32_t		n,
					m = 0;
		int64_t		steps;
		bool		same = true;

		memset(&plain, 0, sizeof(plain));
		memset(&fast, 0, sizeof(fast));
		plain.w = fast.w = w;
		nx_plan(w, &rules[i], &p);
		n = nx_cover(&fast, &rules[i], all, w->npos + w->nneg, got);
		steps = fast.steps;
		for (int32_t e = 0; e < w->npos + w->nneg; e++)
		{
			int64_t		head[3] = {w->ex[0][e], w->ex[1][e], w->ex[2][e]};

			/* plain.memo is NULL: nx_derives joins without any table */
			if (nx_derives(&plain, &rules[i], &p, head))
				same = same && m < n && got[m++] == e;
		}
		CHECK_MSG(same && m == n, "rule %d: %d covered, plain join %d", i, n, m);
		/* a copy of the solver shares its table: no stale answer for another rule */
		if (i > 0)
		{
			NxSolver	copy = fast;

			CHECK(nx_cover(&copy, &rules[0], all, w->npos + w->nneg, got) == w->npos);
			CHECK(nx_cover(&fast, &rules[i], all, w->npos + w->nneg, got) == n);
		}
		if (i == 0)
			CHECK(n == w->npos && got[n - 1] == w->npos - 1);
		else
			CHECK_MSG(steps * 5 < plain.steps, "rule %d: %lld steps, plain %lld", i,
					  (long long) steps, (long long) plain.steps);
	}
}

/*
 * The eight-puzzle-shaped rule is learned exactly on its first search:
 * four atoms over a 4-ary table, a fresh body-only variable of the head's
 * class available (the cross-state joins the search must not drown in).
 */
static void
test_puzzle_rule(void)
{
	GdlIlpRelation rels[3];
	GdlIlpProblem prob;
	GdlIlpParams params;
	GdlIlpResult *r;

	puzzle_problem(&prob, rels);
	gdl_ilp_params_default(&params);
	params.max_body = 6;
	params.max_seconds = 30;
	r = gdl_ilp_learn(&prob, &params, NULL);
	CHECK_MSG(r->nrules == 1 && r->train_precision == 1.0 && r->train_recall == 1.0 && !r->timed_out,
			  "%s", r->message);
	CHECK_MSG(r->nrules == 1 && strcmp(r->rules[0].rule, "move(X, Y, Z) :- blank(W), cell(X, V, Z, W), "
									   "succ(Y, V).") == 0, "got %s", r->nrules ? r->rules[0].rule : "-");
}

int
main(void)
{
	gdl_test_host_install();
	test_ternary();
	test_five_atoms();
	test_types();
	test_canonical();
	test_noise();
	test_notes_and_errors();
	test_memo_cover();
	test_puzzle_rule();
	gdl_test_reset();
	return gdl_test_summary("test_ilp_refine");
}
