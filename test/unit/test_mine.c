/*
 * test_mine.c — the mining core (src/mine) against a naive reference.
 *
 * The reference enumerates every syntactic rule of the language (head r,
 * 1..max_body atoms over X, Y, Z, W, no reflexive atom, no atom twice, no
 * atom equal to the head, closed, connected), brings each to canonical form
 * with gdl_mine_canonical, drops duplicates, evaluates each by brute force
 * (nested loops over entities) and applies the same thresholds.  Random
 * small graphs, sparse and dense, with duplicate facts and self-loops, are
 * mined both ways and every rule and every measure must agree.  With
 * options.constants (on about half of the graphs) the reference also
 * enumerates every rule with constants from the language's definition
 * (const_rule_ok) over every entity and measures it by brute force.  Also:
 * canonical forms by hand, thread-count independence, graph lookups,
 * prediction on a graph whose ranking is known by hand, and rules with
 * constants measured and ranked by hand.
 */
#include "test_util.h"
#include "../../src/mine/gdl_mine.h"
#include "../../src/mine/mine_int.h"

#include <math.h>
#include <string.h>

static uint64_t rng = 12345;
static int64_t rules_compared;	/* rules found by both, over the run */
static int64_t shapes_seen[4];	/* of those, by body length */
static int64_t const_compared;	/* of those, rules with constants */

/* The next number of this file's splitmix64 sequence (test_util.c). */
static uint64_t
next_rand(void)
{
	return gdl_test_splitmix(&rng);
}

/* ------------------------------------------------------------ a test KG */

#define MAXN 16
#define MAXR 6

typedef struct Kg
{
	int			nent;
	int			nrels;
	int64_t		val[MAXN];		/* value of entity i */
	bool		has[MAXR][MAXN][MAXN];
	GdlMineRelation rels[MAXR];
	char		names[MAXR][8];
} Kg;

/* A random graph: n entities, R relations, about f facts each (with repeats). */
static void
random_kg(Kg *k, int n, int R, int f, bool selfloops)
{
	memset(k, 0, sizeof(*k));
	k->nent = n;
	k->nrels = R;
	for (int i = 0; i < n; i++)
		k->val[i] = -50 + 7 * i + (int64_t) (next_rand() % 3);	/* ascending */
	for (int r = 0; r < R; r++)
	{
		int			m = f + (int) (next_rand() % (f + 1));
		GdlColumns *c = &k->rels[r].rows;

		snprintf(k->names[r], sizeof(k->names[r]), "p%d", r);
		k->rels[r].name = k->names[r];
		gdl_test_pair_columns(c, m + 2);
		for (int i = 0; i < m; i++)
		{
			int			a = (int) (next_rand() % n),
						b = (int) (next_rand() % n);

			if (a == b && !selfloops)
				b = (a + 1) % n;
			c->cols[0][i] = k->val[a];
			c->cols[1][i] = k->val[b];
			k->has[r][a][b] = true;
		}
		/* a duplicate of the first fact, and of a reversed one */
		c->cols[0][m] = c->cols[0][0];
		c->cols[1][m] = c->cols[1][0];
		c->cols[0][m + 1] = c->cols[0][m / 2];
		c->cols[1][m + 1] = c->cols[1][m / 2];
	}
	/* entities no fact mentions are not entities of the graph: renumber */
	{
		bool		used[MAXN] = {0};
		int			map[MAXN],
					m = 0;
		Kg			old = *k;

		for (int r = 0; r < R; r++)
			for (int a = 0; a < n; a++)
				for (int b = 0; b < n; b++)
					if (k->has[r][a][b])
						used[a] = used[b] = true;
		for (int i = 0; i < n; i++)
			map[i] = used[i] ? m++ : -1;
		memset(k->has, 0, sizeof(k->has));
		for (int i = 0; i < n; i++)
			if (map[i] >= 0)
				k->val[map[i]] = old.val[i];
		for (int r = 0; r < R; r++)
			for (int a = 0; a < n; a++)
				for (int b = 0; b < n; b++)
					if (old.has[r][a][b])
						k->has[r][map[a]][map[b]] = true;
		k->nent = m;
	}
}

/* ---------------------------------------------------- the naive reference */

/*
 * Rule order for qsort: head, head form and constant, body length, atoms
 * (rel, a, b, value): the miner's own mine_rule_cmp.
 */
static int
rule_qcmp(const void *a, const void *b)
{
	return mine_rule_cmp(a, b);
}

/* Closed (every variable in two atoms, head counted) and connected. */
static bool
rule_ok(const GdlMineRule *r)
{
	int			occ[4] = {1, 1, 0, 0};
	int			comp[4] = {0, 0, 2, 3};	/* X and Y joined by the head */
	bool		changed = true;

	for (int i = 0; i < r->nbody; i++)
	{
		const GdlMineAtom *a = &r->body[i];

		if (a->a == a->b)
			return false;
		if (a->rel == r->head && a->a == 0 && a->b == 1)
			return false;
		for (int j = 0; j < i; j++)
			if (memcmp(a, &r->body[j], sizeof(*a)) == 0)
				return false;
		occ[(int) a->a]++;
		occ[(int) a->b]++;
	}
	for (int v = 0; v < 4; v++)
		if (occ[v] == 1)
			return false;
	while (changed)
	{
		changed = false;
		for (int i = 0; i < r->nbody; i++)
		{
			int			a = r->body[i].a,
						b = r->body[i].b;
			int			m = comp[a] < comp[b] ? comp[a] : comp[b];

			if (comp[a] != m || comp[b] != m)
			{
				comp[a] = comp[b] = m;
				changed = true;
			}
		}
	}
	for (int v = 0; v < 4; v++)
		if (occ[v] > 0 && comp[v] != 0)
			return false;
	return true;
}

/* The entity of a value (-1: none). */
static int
ent_of(const Kg *k, int64_t value)
{
	for (int i = 0; i < k->nent; i++)
		if (k->val[i] == value)
			return i;
	return -1;
}

/*
 * Object identity on X (options.object_identity): in a rule without
 * constants no other variable binds X's entity.
 */
static bool ref_oi;
static bool rule_has_constant(const GdlMineRule *r);

/* Is the body true for X = x, Y = y (some Z, W)?  Constants as written. */
static bool
body_true(const Kg *k, const GdlMineRule *r, int x, int y)
{
	bool		usez = false,
				usew = false;
	bool		oi = ref_oi && r->head_const == GDL_MINE_HEAD_VARS && !rule_has_constant(r);

	for (int i = 0; i < r->nbody; i++)
	{
		usez |= r->body[i].a == 2 || r->body[i].b == 2;
		usew |= r->body[i].a == 3 || r->body[i].b == 3;
	}
	for (int z = 0; z < (usez ? k->nent : 1); z++)
		for (int w = 0; w < (usew ? k->nent : 1); w++)
		{
			int			v[5] = {x, y, z, w, -1};
			bool		ok = true;

			if (oi && (y == x || (usez && z == x) || (usew && w == x)))
				continue;

			for (int i = 0; i < r->nbody && ok; i++)
			{
				const GdlMineAtom *at = &r->body[i];
				int			a,
							b;

				v[4] = ent_of(k, at->value);
				a = v[(int) at->a];
				b = v[(int) at->b];
				ok = a >= 0 && b >= 0 && k->has[at->rel][a][b];
			}
			if (ok)
				return true;
		}
	return false;
}

/* Does the rule derive rel(s, o) (its head's relation)? */
static bool
derives(const Kg *k, const GdlMineRule *r, int s, int o)
{
	int			c = ent_of(k, r->head_value);

	switch (r->head_const)
	{
		case GDL_MINE_HEAD_OBJECT:
			return o == c && body_true(k, r, s, -1);
		case GDL_MINE_HEAD_SUBJECT:
			return s == c && body_true(k, r, o, -1);
		default:
			return body_true(k, r, s, o);
	}
}

/*
 * The language of rules with constants, checked generically (gdl_mine.h
 * lists its forms; this is the definition they were derived from): at most
 * one constant per atom, one or two per rule, at most two body atoms, no
 * reflexive or repeated atom, no body atom equal to the head, closed (every
 * variable twice, the head counted), the body atoms connected through
 * shared variables, and with a constant head no variable Y; the one open
 * form excepted (r(X, c) :- l(X, Z), Z free).
 */
static bool
const_rule_ok(const GdlMineRule *r)
{
	int			occ[4] = {1, r->head_const == GDL_MINE_HEAD_VARS, 0, 0};
	int			nconst = r->head_const != GDL_MINE_HEAD_VARS;

	if (r->nbody > 2)
		return false;
	for (int i = 0; i < r->nbody; i++)
	{
		const GdlMineAtom *a = &r->body[i];

		if (a->a == a->b)
			return false;
		if (a->a == GDL_MINE_C || a->b == GDL_MINE_C)
			nconst++;
		if (a->rel == r->head)
		{
			if (r->head_const == GDL_MINE_HEAD_VARS && a->a == 0 && a->b == 1)
				return false;
			if (r->head_const == GDL_MINE_HEAD_OBJECT && a->a == 0 && a->b == GDL_MINE_C &&
				a->value == r->head_value)
				return false;
			if (r->head_const == GDL_MINE_HEAD_SUBJECT && a->b == 0 && a->a == GDL_MINE_C &&
				a->value == r->head_value)
				return false;
		}
		for (int j = 0; j < i; j++)
			if (mine_rule_cmp(&(GdlMineRule) {.nbody = 1, .body = {*a}},
						 &(GdlMineRule) {.nbody = 1, .body = {r->body[j]}}) == 0)
				return false;
		if (a->a != GDL_MINE_C)
			occ[(int) a->a]++;
		if (a->b != GDL_MINE_C)
			occ[(int) a->b]++;
		if (r->head_const != GDL_MINE_HEAD_VARS && (a->a == GDL_MINE_Y || a->b == GDL_MINE_Y))
			return false;
	}
	if (nconst < 1 || nconst > 2)
		return false;
	/* the one open form: r(X, c) :- l(X, Z) (or l(Z, X)), Z only there */
	if (r->head_const != GDL_MINE_HEAD_VARS && r->nbody == 1 && nconst == 1 &&
		occ[GDL_MINE_Z] == 1 && occ[GDL_MINE_W] == 0 && occ[GDL_MINE_X] == 2)
		return true;
	for (int v = 0; v < 4; v++)
		if (occ[v] == 1)
			return false;
	if (r->nbody == 2)
	{
		const GdlMineAtom *p = &r->body[0],
				   *q = &r->body[1];
		bool		share = false;

		for (int u = 0; u < 2; u++)
			for (int w = 0; w < 2; w++)
			{
				int			pu = u ? p->b : p->a,
							qw = w ? q->b : q->a;

				share |= pu != GDL_MINE_C && pu == qw;
			}
		if (!share)
			return false;
	}
	return true;
}

/* Measure a rule with a constant head by brute force (over its X). */
static void
measure_const_head(const Kg *k, GdlMineRule *r, int64_t *sup, int64_t *bs, int64_t *pca)
{
	int			c = ent_of(k, r->head_value);

	for (int x = 0; x < k->nent; x++)
	{
		bool		dom = false,
					fact;

		if (!body_true(k, r, x, -1))
			continue;
		for (int y = 0; y < k->nent; y++)
			dom |= r->head_const == GDL_MINE_HEAD_OBJECT ? k->has[r->head][x][y] : k->has[r->head][y][x];
		fact = r->head_const == GDL_MINE_HEAD_OBJECT ? k->has[r->head][x][c] : k->has[r->head][c][x];
		(*bs)++;
		*pca += dom;
		*sup += fact;
	}
}

/* Measure a rule with the head r(X, Y) by brute force (over pairs). */
static void
measure_var_head(const Kg *k, GdlMineRule *r, int64_t *sup, int64_t *bs, int64_t *pca)
{
	for (int x = 0; x < k->nent; x++)
	{
		bool		dom = false;

		for (int y = 0; y < k->nent; y++)
			dom |= k->has[r->head][x][y];
		for (int y = 0; y < k->nent; y++)
		{
			if (!body_true(k, r, x, y))
				continue;
			(*bs)++;
			*pca += dom;
			*sup += k->has[r->head][x][y];
		}
	}
}

/* Has a rule a constant in its head or body? */
static bool
rule_has_constant(const GdlMineRule *r)
{
	if (r->head_const != GDL_MINE_HEAD_VARS)
		return true;
	for (int i = 0; i < r->nbody; i++)
		if (r->body[i].a == GDL_MINE_C || r->body[i].b == GDL_MINE_C)
			return true;
	return false;
}

/* The head coverage bound of rules with constants (options.constants_min_head_coverage). */
static double
const_min_hc(const GdlMineOptions *o)
{
	return o->constants_min_head_coverage < 0 ? o->min_head_coverage : o->constants_min_head_coverage;
}

/* Append every rule with constants (syntactically, then const_rule_ok) to all. */
static void
naive_const_rules(const Kg *k, const GdlMineOptions *o, GdlMineRule **all, int64_t *n, int64_t *cap)
{
	int			maxa = k->nrels * (6 + 6 * k->nent);
	GdlMineAtom *atoms = gdl_alloc(sizeof(GdlMineAtom) * (maxa + 1));
	int			na = 0;
	int			maxb = o->max_body_constants > 0 ? o->max_body_constants
		: o->max_body < 2 ? o->max_body : 2;

	memset(atoms, 0, sizeof(GdlMineAtom) * (maxa + 1));
	for (int r = 0; r < k->nrels; r++)
		for (int a = 0; a < 3; a++)
		{
			for (int b = 0; b < 3; b++)
				if (a != b)
					atoms[na++] = (GdlMineAtom) {r, (int8_t) a, (int8_t) b};
			for (int e = 0; e < k->nent; e++)
			{
				atoms[na++] = (GdlMineAtom) {r, (int8_t) a, GDL_MINE_C, 0, k->val[e]};
				atoms[na++] = (GdlMineAtom) {r, GDL_MINE_C, (int8_t) a, 0, k->val[e]};
			}
		}
	for (int h = 0; h < k->nrels; h++)
	{
		if (o->target >= 0 && h != o->target)
			continue;
		for (int form = 0; form < 3; form++)
			for (int c = 0; c < (form ? k->nent : 1); c++)
				for (int nb = 1; nb <= maxb; nb++)
					for (int i0 = 0; i0 < na; i0++)
						for (int i1 = (nb == 2 ? i0 + 1 : 0); i1 < (nb == 2 ? na : 1); i1++)
						{
							GdlMineRule r;

							memset(&r, 0, sizeof(r));
							r.head = h;
							r.head_const = form;
							r.head_value = form ? k->val[c] : 0;
							r.nbody = nb;
							r.body[0] = atoms[i0];
							if (nb == 2)
								r.body[1] = atoms[i1];
							if (!const_rule_ok(&r))
								continue;
							gdl_mine_canonical(&r);
							if (*n == *cap)
							{
								*cap *= 2;
								*all = gdl_realloc(*all, sizeof(GdlMineRule) * *cap);
							}
							(*all)[(*n)++] = r;
						}
	}
	gdl_free(atoms);
}

/* Every rule of the language, canonical and distinct, measured and filtered. */
static GdlMineRule *
naive_mine(const Kg *k, const GdlMineOptions *o, int64_t *nout)
{
	int			natoms = k->nrels * 12;
	GdlMineAtom *atoms = gdl_alloc(sizeof(GdlMineAtom) * natoms);
	int64_t		cap = 1024,
				n = 0,
				m = 0;
	GdlMineRule *all = gdl_alloc(sizeof(GdlMineRule) * cap);
	int			na = 0;

	memset(atoms, 0, sizeof(GdlMineAtom) * natoms);
	for (int r = 0; r < k->nrels; r++)
		for (int a = 0; a < 4; a++)
			for (int b = 0; b < 4; b++)
				if (a != b)
				{
					atoms[na].rel = r;
					atoms[na].a = (int8_t) a;
					atoms[na].b = (int8_t) b;
					na++;
				}
	for (int h = 0; h < k->nrels; h++)
	{
		if (o->target >= 0 && h != o->target)
			continue;
		for (int nb = 1; nb <= o->max_body; nb++)
		{
			int			idx[3] = {0, 0, 0};

			for (;;)
			{
				GdlMineRule r;

				memset(&r, 0, sizeof(r));
				r.head = h;
				r.nbody = nb;
				for (int i = 0; i < nb; i++)
					r.body[i] = atoms[idx[i]];
				if (rule_ok(&r))
				{
					gdl_mine_canonical(&r);
					if (n == cap)
					{
						cap *= 2;
						all = gdl_realloc(all, sizeof(GdlMineRule) * cap);
					}
					all[n++] = r;
				}
				/* next combination (ordered; duplicates removed below) */
				{
					int			i = 0;

					while (i < nb && ++idx[i] == na)
						idx[i++] = 0;
					if (i == nb)
						break;
				}
			}
		}
	}
	if (o->constants)
		naive_const_rules(k, o, &all, &n, &cap);
	qsort(all, n, sizeof(GdlMineRule), rule_qcmp);
	for (int64_t i = 0; i < n; i++)
	{
		GdlMineRule *r = &all[i];
		int64_t		sup = 0,
					bs = 0,
					pca = 0,
					nh = 0;
		int64_t		minsup = o->min_support < 1 ? 1 : o->min_support;

		if (i > 0 && mine_rule_cmp(r, &all[i - 1]) == 0)
			continue;
		for (int x = 0; x < k->nent; x++)
			for (int y = 0; y < k->nent; y++)
				nh += k->has[r->head][x][y];
		if (r->head_const != GDL_MINE_HEAD_VARS)
			measure_const_head(k, r, &sup, &bs, &pca);
		else
			measure_var_head(k, r, &sup, &bs, &pca);
		if (sup < minsup)
			continue;
		r->support = sup;
		r->body_size = bs;
		r->pca_body_size = pca;
		r->head_coverage = (double) sup / (double) nh;
		r->std_confidence = (double) sup / bs;
		r->pca_confidence = (double) sup / pca;
		if (r->head_coverage < (r->head_const != GDL_MINE_HEAD_VARS || rule_has_constant(r)
								 ? const_min_hc(o) : o->min_head_coverage) ||
			r->pca_confidence < o->min_confidence || r->std_confidence < o->min_std_confidence)
			continue;
		all[m++] = *r;
	}
	*nout = m;
	return all;
}

/* ------------------------------------------------------------- the tests */

/* Compare the miner and the reference on one graph and option set. */
static void
compare(const Kg *k, const GdlMineOptions *o, const char *what)
{
	GdlMineGraph *g = gdl_mine_graph_build(k->nrels, k->rels);
	GdlMineResult *res = gdl_mine(g, o);
	int64_t		nref;
	GdlMineRule *ref = naive_mine(k, o, &nref);
	int64_t		i = 0,
				j = 0;
	int			bad = 0;

	CHECK(gdl_mine_graph_nentities(g) == k->nent);
	while ((i < res->nrules || j < nref) && bad < 5)
	{
		int			c = i >= res->nrules ? 1 : j >= nref ? -1 : mine_rule_cmp(&res->rules[i], &ref[j]);

		if (c == 0)
		{
			GdlMineRule *a = &res->rules[i],
					   *b = &ref[j];

			if (a->support != b->support || a->body_size != b->body_size ||
				a->pca_body_size != b->pca_body_size || a->head_coverage != b->head_coverage ||
				a->std_confidence != b->std_confidence || a->pca_confidence != b->pca_confidence)
			{
				bad++;
				CHECK_MSG(false, "%s: %s: measures %ld/%ld/%ld, reference %ld/%ld/%ld", what,
						  gdl_mine_rule_text(g, a), (long) a->support, (long) a->body_size,
						  (long) a->pca_body_size, (long) b->support, (long) b->body_size,
						  (long) b->pca_body_size);
			}
			rules_compared++;
			shapes_seen[res->rules[i].nbody]++;
			if (a->head_const != GDL_MINE_HEAD_VARS || a->body[0].a == GDL_MINE_C ||
				a->body[0].b == GDL_MINE_C || (a->nbody > 1 && (a->body[1].a == GDL_MINE_C ||
																a->body[1].b == GDL_MINE_C)))
				const_compared++;
			i++;
			j++;
		}
		else if (c < 0)
		{
			bad++;
			CHECK_MSG(false, "%s: mined but not in the reference: %s (%ld/%ld/%ld)", what,
					  gdl_mine_rule_text(g, &res->rules[i]), (long) res->rules[i].support,
					  (long) res->rules[i].body_size, (long) res->rules[i].pca_body_size);
			i++;
		}
		else
		{
			bad++;
			CHECK_MSG(false, "%s: in the reference but not mined: %s (%ld/%ld/%ld)", what,
					  gdl_mine_rule_text(g, &ref[j]), (long) ref[j].support,
					  (long) ref[j].body_size, (long) ref[j].pca_body_size);
			j++;
		}
	}
	CHECK_MSG(res->nrules == nref, "%s: %ld rules, reference %ld", what, (long) res->nrules, (long) nref);
	/* prediction derives exactly the (answer, rule) pairs whose body holds */
	for (int h = 0; h < k->nrels && res->nrules > 0; h++)
		for (int e = 0; e < k->nent; e += 2)
			for (int sb = 0; sb < 2; sb++)
			{
				GdlPredictQuery q = {h, sb == 1, k->val[e]};
				GdlPredictOptions po;
				GdlPredictResult *p;
				int64_t		nder = 0,
							nref_der = 0;
				bool		reflexive = false;	/* the query's own entity is an answer only then */

				for (int x = 0; x < k->nent; x++)
					reflexive |= k->has[h][x][x];
				gdl_predict_options_init(&po);
				po.object_identity = o->object_identity;
				p = gdl_predict(g, res->rules, res->nrules, &q, &po);
				for (int64_t a = 0; a < p->nanswers; a++)
				{
					int32_t		other = gdl_mine_graph_entity(g, p->answers[a].value);

					CHECK(a == 0 || p->answers[a].rank >= p->answers[a - 1].rank);
					CHECK(p->answers[a].value != k->val[e] || reflexive);
					for (int32_t m = 0; m < p->answers[a].nrules; m++)
					{
						const GdlMineRule *r = &res->rules[p->answers[a].rules[m]];

						CHECK(r->head == h && (sb ? derives(k, r, e, other) : derives(k, r, other, e)));
						nder++;
					}
				}
				for (int64_t i = 0; i < res->nrules; i++)
					if (res->rules[i].head == h)
						for (int o2 = 0; o2 < k->nent; o2++)
							if (o2 != e || reflexive)
								nref_der += sb ? derives(k, &res->rules[i], e, o2) : derives(k, &res->rules[i], o2, e);
				CHECK_MSG(nder == nref_der, "%s: predict %s %d: %ld derivations, reference %ld", what,
						  sb ? "subject" : "object", e, (long) nder, (long) nref_der);
			}
	/* gdl_predict_many on worker threads answers every query as gdl_predict does */
	if (res->nrules > 0)
	{
		int64_t		nq = 0,
					j = 0;
		GdlPredictJob *jobs;
		GdlPredictOptions po;
		/* every other job through the prepared rules (gdl_predict_index): the same answers */
		GdlPredictIndex *ix = gdl_predict_index(g, res->rules, res->nrules);

		gdl_predict_options_init(&po);
		po.object_identity = o->object_identity;
		po.aggregation = (k->nent & 1) ? GDL_PREDICT_NOISY_OR : GDL_PREDICT_MAX;
		po.exclude_known = (k->nrels & 1) != 0;
		nq = (int64_t) k->nrels * k->nent * 2;
		jobs = calloc(nq, sizeof(GdlPredictJob));
		for (int h = 0; h < k->nrels; h++)
			for (int e = 0; e < k->nent; e++)
				for (int sb = 0; sb < 2; sb++, j++)
				{
					jobs[j].rules = res->rules;
					jobs[j].nrules = res->nrules;
					jobs[j].index = (j & 1) ? ix : NULL;
					jobs[j].q.rel = h;
					jobs[j].q.subject_bound = sb == 1;
					jobs[j].q.value = k->val[e];
				}
		gdl_set_threads(3);
		gdl_predict_many(g, jobs, nq, &po);
		gdl_set_threads(0);
		for (j = 0; j < nq; j++)
		{
			GdlPredictResult *p = gdl_predict(g, res->rules, res->nrules, &jobs[j].q, &po);
			bool		same = jobs[j].res != NULL && p->nanswers == jobs[j].res->nanswers;

			for (int64_t a = 0; same && a < p->nanswers; a++)
			{
				const GdlPredictAnswer *x = &p->answers[a],
						   *y = &jobs[j].res->answers[a];

				same = x->value == y->value && x->score == y->score && x->rank == y->rank &&
					x->nrules == y->nrules &&
					memcmp(x->rules, y->rules, sizeof(int32_t) * x->nrules) == 0;
			}
			CHECK_MSG(same, "%s: gdl_predict_many%s differs from gdl_predict on query %ld", what,
					  jobs[j].index ? " with gdl_predict_index" : "", (long) j);
			gdl_predict_result_free(jobs[j].res);
		}
		free(jobs);
		gdl_predict_index_free(ix);
	}
	/* the same with another thread count */
	{
		GdlMineOptions o2 = *o;
		GdlMineResult *r2;

		o2.threads = o->threads == 1 ? 3 : 1;
		r2 = gdl_mine(g, &o2);
		CHECK(r2->nrules == res->nrules &&
			  memcmp(r2->rules, res->rules, sizeof(GdlMineRule) * res->nrules) == 0);
	}
}

/* compare() under GDL_TRY, in a frame of its own. */
static GdlError *
try_compare(const Kg *k, const GdlMineOptions *o, const char *what)
{
	return GDL_TRY(compare(k, o, what));
}

/* Many random graphs, sparse and dense, every body length and thresholds. */
static void
test_differential(void)
{
	int			ngraphs = 0;

	for (int seed = 0; seed < 60; seed++)
	{
		Kg			k;
		GdlMineOptions o;
		char		what[64];
		bool		dense = seed % 2 == 0;
		int			n = dense ? 4 + seed % 4 : 7 + seed % 6;
		int			R = 1 + seed % 3 + (seed % 7 == 0);
		int			f = dense ? n * n / 2 : n / 2 + 1;

		rng = 1000 + seed;
		random_kg(&k, n, R, f, seed % 3 != 1);
		gdl_mine_options_init(&o);
		o.threads = 1 + seed % 2;
		gdl_test_mine_vary(&o, seed, 30, 5);
		if (seed % 5 == 1)
		{
			o.min_head_coverage = 0.3;
			o.min_confidence = 0.2;
			o.min_std_confidence = 0.1;
		}
		if (seed % 11 == 3)
			o.target = seed % R;
		/* rules with constants on every other graph, with their own bounds on some */
		o.constants = seed % 2 == 1 || seed % 10 == 4;
		if (seed % 3 == 0)
			o.max_body_constants = 1 + seed % 2;
		if (seed % 4 == 1)
			o.constants_min_head_coverage = seed % 8 == 1 ? 0 : 0.2;
		/* an anytime budget that never runs out: the same rules, level by level */
		if (seed % 6 == 5)
			o.max_seconds = 3600;
		/* object identity on X on some graphs (AnyBURL's semantics) */
		o.object_identity = seed % 4 == 2 || seed % 9 == 7;
		ref_oi = o.object_identity;
		snprintf(what, sizeof(what), "seed %d (%s, n %d, R %d, body %d%s%s)", seed,
				 dense ? "dense" : "sparse", k.nent, R, o.max_body, o.constants ? ", constants" : "",
				 o.object_identity ? ", object identity" : "");
		{
			GdlError   *e = try_compare(&k, &o, what);

			CHECK_MSG(e == NULL, "%s: %s", what, e ? e->message : "");
		}
		ngraphs++;
		gdl_test_reset();
	}
	printf("  differential: %d graphs, %ld rules agree (%ld/%ld/%ld of 1/2/3 atoms; %ld with constants)\n",
		   ngraphs, (long) rules_compared, (long) shapes_seen[1], (long) shapes_seen[2],
		   (long) shapes_seen[3], (long) const_compared);
}

/* The canonical form of a rule of the n body atoms given (head 0). */
static GdlMineRule
canonical(int n, const GdlMineAtom *body)
{
	GdlMineRule r;

	memset(&r, 0, sizeof(r));
	r.nbody = n;
	memcpy(r.body, body, sizeof(GdlMineAtom) * n);
	gdl_mine_canonical(&r);
	return r;
}

/* Canonical forms by hand. */
static void
test_canonical(void)
{
	GdlMineRule r;

	/* sorted by (rel, a, b) */
	r = canonical(2, (GdlMineAtom[]) {{5, GDL_MINE_Z, GDL_MINE_Y}, {2, GDL_MINE_X, GDL_MINE_Z}});
	CHECK(r.body[0].rel == 2 && r.body[1].rel == 5);
	/* W alone becomes Z */
	r = canonical(2, (GdlMineAtom[]) {{1, GDL_MINE_X, GDL_MINE_W}, {1, GDL_MINE_W, GDL_MINE_Y}});
	CHECK(r.body[0].b == GDL_MINE_Z && r.body[1].a == GDL_MINE_Z);
	/* X-W-Z-Y: the renaming with Z next to X is smaller */
	r = canonical(3, (GdlMineAtom[]) {{3, GDL_MINE_Z, GDL_MINE_Y}, {2, GDL_MINE_W, GDL_MINE_Z},
									  {1, GDL_MINE_X, GDL_MINE_W}});
	CHECK(r.body[0].rel == 1 && r.body[0].a == GDL_MINE_X && r.body[0].b == GDL_MINE_Z);
	CHECK(r.body[1].rel == 2 && r.body[1].a == GDL_MINE_Z && r.body[1].b == GDL_MINE_W);
	CHECK(r.body[2].rel == 3 && r.body[2].a == GDL_MINE_W && r.body[2].b == GDL_MINE_Y);
	/* the same relation everywhere: p(X,Z), p(Z,W), p(W,Y) vs p(X,W), p(W,Z), p(Z,Y) */
	r = canonical(3, (GdlMineAtom[]) {{0, GDL_MINE_Z, GDL_MINE_Y}, {0, GDL_MINE_W, GDL_MINE_Z},
									  {0, GDL_MINE_X, GDL_MINE_W}});
	CHECK(r.body[0].a == GDL_MINE_X && r.body[0].b == GDL_MINE_Z);
	CHECK(r.body[1].a == GDL_MINE_Z && r.body[1].b == GDL_MINE_W);
	CHECK(r.body[2].a == GDL_MINE_W && r.body[2].b == GDL_MINE_Y);
	/* idempotent */
	{
		GdlMineRule s = r;

		gdl_mine_canonical(&s);
		CHECK(memcmp(&s, &r, sizeof(r)) == 0);
	}
}

/* Graph lookups: ids, values, facts, duplicates counted once. */
static void
test_graph(void)
{
	int64_t		a[] = {10, 10, 30, 20, 20};
	int64_t		b[] = {20, 20, 10, 20, 30};
	int64_t    *cols[2] = {a, b};
	GdlMineRelation rel = {"p", {2, 5, cols}};
	GdlMineGraph *g = gdl_mine_graph_build(1, &rel);

	CHECK(gdl_mine_graph_nentities(g) == 3);
	CHECK(gdl_mine_graph_nfacts(g, 0) == 4);
	CHECK(gdl_mine_graph_entity(g, 20) == 1);
	CHECK(gdl_mine_graph_entity(g, 25) == -1);
	CHECK(gdl_mine_graph_value(g, 2) == 30);
	CHECK(gdl_mine_graph_has(g, 0, 0, 1));
	CHECK(gdl_mine_graph_has(g, 0, 1, 1));
	CHECK(!gdl_mine_graph_has(g, 0, 1, 0));
	CHECK(gdl_mine_graph_has(g, 0, 2, 0));
	CHECK(strcmp(gdl_mine_graph_relname(g, 0), "p") == 0);
	/* no relations, and a relation without rows: nothing to mine */
	{
		GdlMineRelation two[2] = {rel, {"q", {2, 0, cols}}};
		GdlMineGraph *g0 = gdl_mine_graph_build(0, NULL);
		GdlMineGraph *g2 = gdl_mine_graph_build(2, two);
		GdlMineOptions o;
		GdlMineResult *r;

		gdl_mine_options_init(&o);
		r = gdl_mine(g0, &o);
		CHECK(r->nrules == 0 && gdl_mine_graph_nentities(g0) == 0);
		o.min_head_coverage = 0;
		o.min_confidence = 0;
		r = gdl_mine(g2, &o);
		CHECK(r->nrules > 0 && gdl_mine_graph_nfacts(g2, 1) == 0);
		for (int64_t i = 0; i < r->nrules; i++)
			CHECK(r->rules[i].head == 0);
		o.max_body = 4;
		CHECK(GDL_TRY(gdl_mine(g2, &o)) != NULL);
		o.max_body = 3;
		o.target = 2;
		CHECK(GDL_TRY(gdl_mine(g2, &o)) != NULL);
		/* no device registered: a GPU run counts on the CPU */
		o.target = -1;
		o.device = GDL_DEVICE_GPU;
		r = gdl_mine(g2, &o);
		CHECK(r->device == GDL_DEVICE_CPU && r->nrules > 0);
	}
	gdl_test_reset();
}

/*
 * Are p's answers the n given (value, rank, score), in order?  A failed
 * check for a wrong count (then false) and for each answer that differs,
 * named by what.
 */
static bool
check_answers(const GdlPredictResult *p, int64_t n, const int64_t *v, const int64_t *rk,
			  const double *sc, const char *what)
{
	CHECK(p->nanswers == n);
	if (p->nanswers != n)
		return false;
	for (int i = 0; i < n; i++)
		CHECK_MSG(p->answers[i].value == v[i] && p->answers[i].rank == rk[i] &&
				  p->answers[i].score == sc[i], "%s answer %d: %ld rank %ld score %g", what, i,
				  (long) p->answers[i].value, (long) p->answers[i].rank, p->answers[i].score);
	return true;
}

/* A hand-made rule: head :- atoms, with support and denominators. */
static GdlMineRule
hand_rule(int head, int nbody, const GdlMineAtom *body, int64_t sup, int64_t bs, int64_t pca)
{
	GdlMineRule r;

	memset(&r, 0, sizeof(r));
	r.head = head;
	r.nbody = nbody;
	memcpy(r.body, body, sizeof(GdlMineAtom) * nbody);
	r.support = sup;
	r.body_size = bs;
	r.pca_body_size = pca;
	return r;
}

/*
 * Prediction on a graph ranked by hand.  likes(X,Y) with R0 :- friend(X,Y)
 * (conf 3/4), R1 :- knows(X,Y) (1/2), R2 :- friend(X,Z), friend(Z,Y) (7/8);
 * likes(1, ?) derives 2 [.75 .5], 3 [.75], 4 [.875], 5 [.875 .5], 6 [.75].
 */
/*
 * The prediction tests' graph: likes(1, 3); friend 1->2, 1->3, 2->4, 3->4,
 * 3->5, 1->6; knows 1->2, 1->5.
 */
static GdlMineGraph *
predict_graph(void)
{
	static int64_t fa[] = {1, 1, 2, 3, 3, 1},
				fb[] = {2, 3, 4, 4, 5, 6};
	static int64_t ka[] = {1, 1},
				kb[] = {2, 5};
	static int64_t la[] = {1},
				lb[] = {3};
	static int64_t *fc[2] = {fa, fb},
			   *kc[2] = {ka, kb},
			   *lc[2] = {la, lb};
	GdlMineRelation rels[3] = {{"likes", {2, 1, lc}}, {"friend", {2, 6, fc}}, {"knows", {2, 2, kc}}};

	return gdl_mine_graph_build(3, rels);
}

static void
test_predict(void)
{
	GdlMineGraph *g = predict_graph();
	GdlMineAtom a0[] = {{1, GDL_MINE_X, GDL_MINE_Y}};
	GdlMineAtom a1[] = {{2, GDL_MINE_X, GDL_MINE_Y}};
	GdlMineAtom a2[] = {{1, GDL_MINE_X, GDL_MINE_Z}, {1, GDL_MINE_Z, GDL_MINE_Y}};
	GdlMineAtom a3[] = {{0, GDL_MINE_Y, GDL_MINE_X}};
	GdlMineRule rules[4];
	GdlPredictOptions o;
	GdlPredictQuery q = {0, true, 1};
	GdlPredictResult *p;

	rules[0] = hand_rule(0, 1, a0, 3, 6, 4);
	rules[1] = hand_rule(0, 1, a1, 1, 2, 2);
	rules[2] = hand_rule(1, 1, a3, 5, 5, 5);	/* another head: not used */
	rules[3] = hand_rule(0, 2, a2, 7, 8, 8);
	gdl_predict_options_init(&o);
	o.smoothing = 0;

	/* max: 5 > 4 > 2 > 3 = 6 */
	p = gdl_predict(g, rules, 4, &q, &o);
	if (check_answers(p, 5, (int64_t[]) {5, 4, 2, 3, 6}, (int64_t[]) {1, 2, 3, 4, 4},
					  (double[]) {0.875, 0.875, 0.75, 0.75, 0.75}, "max"))
	{
		CHECK(p->answers[0].nrules == 2 && p->answers[0].rules[0] == 3 && p->answers[0].rules[1] == 1);
		CHECK(p->answers[2].nrules == 2 && p->answers[2].rules[0] == 0 && p->answers[2].rules[1] == 1);
		CHECK(p->answers[3].nrules == 1 && p->answers[3].rules[0] == 0);
	}

	/* noisy-or: 5 (.9375), 2 = 4 (.875), 3 = 6 (.75) */
	o.aggregation = GDL_PREDICT_NOISY_OR;
	p = gdl_predict(g, rules, 4, &q, &o);
	check_answers(p, 5, (int64_t[]) {5, 2, 4, 3, 6}, (int64_t[]) {1, 2, 2, 4, 4},
				  (double[]) {0.9375, 0.875, 0.875, 0.75, 0.75}, "noisy-or");

	/*
	 * cluster_noisy_or, with a fifth rule over friend(X, Y) again (conf .5,
	 * R0's cluster: not counted beside R0): 5 (.9375), then 4 and 2 (.875
	 * each, 4 first by its best rule .875 > .75), then 3 = 6 (.75); plain
	 * noisy-or would count it (2: .9375, 3 and 6: .875)
	 */
	{
		GdlMineRule five[5];

		memcpy(five, rules, sizeof(rules));
		five[4] = hand_rule(0, 1, a0, 1, 2, 2);
		o.aggregation = GDL_PREDICT_CLUSTER_NOISY_OR;
		p = gdl_predict(g, five, 5, &q, &o);
		if (check_answers(p, 5, (int64_t[]) {5, 4, 2, 3, 6}, (int64_t[]) {1, 2, 3, 4, 4},
						  (double[]) {0.9375, 0.875, 0.875, 0.75, 0.75}, "cluster noisy-or"))
			CHECK(p->answers[2].nrules == 3);

		/*
		 * kind_noisy_or: the one-atom rules over variables are one kind (R0,
		 * R1 and the fifth), the two-atom path another, so 5 (R3 .875 and R1
		 * .5: .9375), then 4 (.875), then 2 (R0 .75; R1 and the fifth not
		 * counted beside it), 3 and 6 (.75), 2 first by its next rule
		 */
		o.aggregation = GDL_PREDICT_KIND_NOISY_OR;
		p = gdl_predict(g, five, 5, &q, &o);
		check_answers(p, 5, (int64_t[]) {5, 4, 2, 3, 6}, (int64_t[]) {1, 2, 3, 4, 4},
					  (double[]) {0.9375, 0.875, 0.75, 0.75, 0.75}, "kind noisy-or");
		{
			/* rules with constants: one kind per body constant, the open rules one */
			GdlMineAtom c1[] = {{1, GDL_MINE_X, GDL_MINE_C, 0, 3}};
			GdlMineAtom c2[] = {{1, GDL_MINE_X, GDL_MINE_C, 0, 6}};
			GdlMineAtom op1[] = {{1, GDL_MINE_X, GDL_MINE_Z}};
			GdlMineAtom op2[] = {{2, GDL_MINE_X, GDL_MINE_Z}};
			GdlMineRule cr[4];
			GdlPredictQuery cq = {0, true, 1};

			cr[0] = hand_rule(0, 1, c1, 1, 2, 2);	/* likes(X, 4) :- friend(X, 3): .5 */
			cr[1] = hand_rule(0, 1, c2, 1, 2, 2);	/* likes(X, 4) :- friend(X, 6): .5 */
			cr[2] = hand_rule(0, 1, op1, 1, 2, 2);	/* likes(X, 5) :- friend(X, Z): .5 */
			cr[3] = hand_rule(0, 1, op2, 1, 2, 2);	/* likes(X, 5) :- knows(X, Z): .5 */
			for (int i = 0; i < 4; i++)
			{
				cr[i].head_const = GDL_MINE_HEAD_OBJECT;
				cr[i].head_value = i < 2 ? 4 : 5;
			}
			p = gdl_predict(g, cr, 4, &cq, &o);
			/* 4: two constants, two kinds (.75); 5: two open rules, one kind (.5) */
			CHECK(p->nanswers == 2);
			if (p->nanswers == 2)
				CHECK_MSG(p->answers[0].value == 4 && p->answers[0].score == 0.75 &&
						  p->answers[1].value == 5 && p->answers[1].score == 0.5,
						  "kind noisy-or with constants: %ld %g, %ld %g", (long) p->answers[0].value,
						  p->answers[0].score, (long) p->answers[1].value, p->answers[1].score);
		}
		o.aggregation = GDL_PREDICT_NOISY_OR;
		p = gdl_predict(g, five, 5, &q, &o);
		CHECK(p->nanswers == 5 && p->answers[0].value == 2 && p->answers[0].score == 0.9375 &&
			  p->answers[0].rank == 1 && p->answers[1].rank == 1);
	}

	/* exclude known (likes(1, 3)) and a limit */
	o.aggregation = GDL_PREDICT_MAX;
	o.exclude_known = true;
	o.limit = 4;
	p = gdl_predict(g, rules, 4, &q, &o);
	CHECK(p->nanswers == 4);
	if (p->nanswers == 4)
		CHECK(p->answers[0].value == 5 && p->answers[1].value == 4 && p->answers[2].value == 2 &&
			  p->answers[3].value == 6 && p->answers[3].rank == 4);
	o.limit = 2;
	p = gdl_predict(g, rules, 4, &q, &o);
	CHECK(p->nanswers == 2 && p->answers[1].value == 4);

	/* the object bound: likes(?, 4) derives 1 [.875], 2 [.75], 3 [.75] */
	o.exclude_known = false;
	o.limit = 0;
	q.subject_bound = false;
	q.value = 4;
	p = gdl_predict(g, rules, 4, &q, &o);
	CHECK(p->nanswers == 3);
	if (p->nanswers == 3)
		CHECK(p->answers[0].value == 1 && p->answers[0].rank == 1 && p->answers[1].value == 2 &&
			  p->answers[1].rank == 2 && p->answers[2].value == 3 && p->answers[2].rank == 2);

	/* smoothing and std confidence: R0 = 3 / (6 + 5) */
	o.smoothing = 5;
	o.use_pca = false;
	q.subject_bound = true;
	q.value = 1;
	p = gdl_predict(g, rules, 4, &q, &o);
	CHECK(p->nanswers == 5);
	for (int64_t i = 0; i < p->nanswers; i++)
		if (p->answers[i].value == 3)
			CHECK(p->answers[i].score == 3.0 / 11.0);

	/* an unknown value has no answers */
	q.value = 99;
	p = gdl_predict(g, rules, 4, &q, &o);
	CHECK(p->nanswers == 0);

	/* mined rules predict what they were mined from */
	{
		GdlMineOptions mo;
		GdlMineResult *res;

		gdl_mine_options_init(&mo);
		mo.target = 0;
		mo.min_head_coverage = 0;
		mo.min_confidence = 0;
		res = gdl_mine(g, &mo);
		gdl_predict_options_init(&o);
		q.value = 1;
		p = gdl_predict(g, res->rules, res->nrules, &q, &o);
		CHECK(res->nrules > 0);
		{
			bool		found = false;

			for (int64_t i = 0; i < p->nanswers; i++)
				found |= p->answers[i].value == 3;
			CHECK(found);
		}
	}
	gdl_test_reset();
}

/*
 * The weighted aggregation: with the default weights (1 per kind, 0 for
 * the rest) it ranks as kind_noisy_or, its score -log(1 - theirs); a fit
 * on one held-out triple whose answer kind_noisy_or ranks third (tied with the fourth: the fit ranks
 * by the features alone, 3.5) learns
 * weights that rank it first (one-atom paths over two-atom ones, more
 * rules over fewer), and the fit's MRR says so.
 */
static void
test_weighted(void)
{
	GdlMineGraph *g = predict_graph();
	GdlMineAtom a0[] = {{1, GDL_MINE_X, GDL_MINE_Y}};
	GdlMineAtom a1[] = {{2, GDL_MINE_X, GDL_MINE_Y}};
	GdlMineAtom a2[] = {{1, GDL_MINE_X, GDL_MINE_Z}, {1, GDL_MINE_Z, GDL_MINE_Y}};
	GdlMineRule rules[4];
	GdlPredictOptions o,
				w;
	GdlPredictQuery q = {0, true, 1};
	GdlPredictResult *pk,
			   *pw;
	GdlPredictFit *fit;
	double		weights[GDL_PREDICT_NWEIGHTS],
				before,
				after;

	rules[0] = hand_rule(0, 1, a0, 3, 6, 4);	/* likes(X, Y) :- friend(X, Y): .75 */
	rules[1] = hand_rule(0, 1, a1, 1, 2, 2);	/* likes(X, Y) :- knows(X, Y): .5 */
	rules[2] = hand_rule(0, 2, a2, 7, 8, 8);	/* the two-atom path: .875 */
	rules[3] = hand_rule(0, 1, a0, 1, 2, 2);	/* friend(X, Y) again: .5 */
	gdl_predict_options_init(&o);
	o.smoothing = 0;
	o.exclude_known = true;
	o.aggregation = GDL_PREDICT_KIND_NOISY_OR;
	w = o;
	w.aggregation = GDL_PREDICT_WEIGHTED;
	for (int pass = 0; pass < 2; pass++)
	{
		q.subject_bound = pass == 0;
		q.value = pass == 0 ? 1 : 4;
		pk = gdl_predict(g, rules, 4, &q, &o);
		pw = gdl_predict(g, rules, 4, &q, &w);
		CHECK_MSG(pk->nanswers == pw->nanswers && pk->nanswers > 0, "weighted answers %ld, kinds %ld",
				  (long) pw->nanswers, (long) pk->nanswers);
		for (int64_t i = 0; i < pk->nanswers && i < pw->nanswers; i++)
			CHECK_MSG(pk->answers[i].value == pw->answers[i].value && pk->answers[i].rank == pw->answers[i].rank &&
					  fabs(pw->answers[i].score + log(1.0 - pk->answers[i].score)) < 1e-9,
					  "answer %ld: weighted %ld rank %ld score %g, kinds %ld rank %ld score %g", (long) i,
					  (long) pw->answers[i].value, (long) pw->answers[i].rank, pw->answers[i].score,
					  (long) pk->answers[i].value, (long) pk->answers[i].rank, pk->answers[i].score);
	}

	/* likes(1, ?): 5 (path .875, knows .5), 4 (path), 2 (friend .75, knows, friend), 6 (friend) */
	q.subject_bound = true;
	q.value = 1;
	pk = gdl_predict(g, rules, 4, &q, &o);
	CHECK(pk->nanswers == 4 && pk->answers[2].value == 2);
	fit = gdl_predict_fit_create(g, 1, 1);
	gdl_predict_fit_truth(fit, 0, 1, 2);
	gdl_predict_fit_add(fit, rules, &q, 2, pk, &o);
	gdl_predict_fit_learn(fit, weights, &before, &after);
	CHECK_MSG(fabs(before - 1.0 / 3.5) < 1e-9 && after == 1.0, "fit MRR %g -> %g", before, after);
	memcpy(w.weights, weights, sizeof(weights));
	pw = gdl_predict(g, rules, 4, &q, &w);
	CHECK(pw->nanswers == 4 && pw->answers[0].value == 2 && pw->answers[1].rank == 2);
	for (int k = 0; k < GDL_PREDICT_NWEIGHTS; k++)
		CHECK(weights[k] >= 0 && isfinite(weights[k]));
	gdl_predict_fit_free(fit);

	/*
	 * A batch kept at once (features on worker threads) is the fit of its
	 * triples kept one at a time: likes(1, ?) wanting 2, 4 and 3 (not
	 * derived), likes(?, 5) wanting 1 and 3, two questions, five triples.
	 */
	{
		GdlPredictJob jobs[2];
		int64_t		wants[] = {2, 4, 3, 1, 3},
					from[] = {0, 3, 5};
		GdlPredictFit *one = gdl_predict_fit_create(g, 5, 5),
				   *many = gdl_predict_fit_create(g, 5, 5);
		double		w1[GDL_PREDICT_NWEIGHTS],
					wm[GDL_PREDICT_NWEIGHTS],
					b1,
					a1,
					bm,
					am;

		memset(jobs, 0, sizeof(jobs));
		for (int j = 0; j < 2; j++)
		{
			jobs[j].rules = rules;
			jobs[j].nrules = 4;
			jobs[j].q.rel = 0;
			jobs[j].q.subject_bound = j == 0;
			jobs[j].q.value = j == 0 ? 1 : 5;
		}
		gdl_set_threads(2);
		gdl_predict_many(g, jobs, 2, &o);
		for (int k = 0; k < 5; k++)
		{
			int			j = k < 3 ? 0 : 1;
			int64_t		s = j == 0 ? 1 : wants[k],
						t = j == 0 ? wants[k] : 5;

			gdl_predict_fit_truth(one, 0, s, t);
			gdl_predict_fit_truth(many, 0, s, t);
		}
		for (int k = 0; k < 5; k++)
			gdl_predict_fit_add(one, rules, &jobs[k < 3 ? 0 : 1].q, wants[k], jobs[k < 3 ? 0 : 1].res, &o);
		gdl_predict_fit_add_many(many, jobs, 2, wants, from, &o);
		CHECK(gdl_predict_fit_nqueries(one) == 5 && gdl_predict_fit_nqueries(many) == 5);
		gdl_predict_fit_learn(one, w1, &b1, &a1);
		gdl_predict_fit_learn(many, wm, &bm, &am);
		CHECK_MSG(b1 == bm && a1 == am && b1 > 0 && a1 >= b1, "fit one at a time %g -> %g, as a batch %g -> %g",
				  b1, a1, bm, am);
		CHECK(memcmp(w1, wm, sizeof(w1)) == 0);
		for (int j = 0; j < 2; j++)
			gdl_predict_result_free(jobs[j].res);
		gdl_predict_fit_free(one);
		gdl_predict_fit_free(many);
		gdl_set_threads(0);
	}
	gdl_test_reset();
}

/* Find the rule with this text among the results; NULL when absent. */
static const GdlMineRule *
find_rule(const GdlMineGraph *g, const GdlMineResult *res, const char *text)
{
	for (int64_t i = 0; i < res->nrules; i++)
		if (strcmp(gdl_mine_rule_text(g, &res->rules[i]), text) == 0)
			return &res->rules[i];
	return NULL;
}

/* A literal for the text tests: the value in angle brackets. */
static const char *
angle_literal(void *ctx, int64_t value)
{
	static char buf[32];

	(void) ctx;
	snprintf(buf, sizeof(buf), "<%lld>", (long long) value);
	return buf;
}

/*
 * Rule texts with the relations' names quoted once (gdl_mine_rule_text_q,
 * what the SQL layer uses) equal the texts quoted per atom
 * (gdl_mine_rule_text_lit), for every rule of every form, over names that
 * need quotes (Freebase's, spaces, a quote and a backslash) and one that
 * does not.
 */
static void
test_rule_texts(void)
{
	int64_t		a[] = {1, 2, 3, 4, 1},
				b[] = {2, 3, 4, 1, 3};
	int64_t		c[] = {2, 3, 4, 1, 4},
				d[] = {1, 2, 3, 4, 2};
	int64_t		e[] = {1, 2, 3, 4},
				f[] = {9, 9, 8, 9};
	int64_t    *ab[2] = {a, b},
			   *cd[2] = {c, d},
			   *ef[2] = {e, f};
	GdlMineRelation rels[4] = {{"/film/film/genre", {2, 5, ab}}, {"has \"quotes\" and \\", {2, 5, cd}},
	{"plain", {2, 4, ef}}, {"two words", {2, 5, ab}}};
	GdlMineGraph *g = gdl_mine_graph_build(4, rels);
	const char *qnames[4];
	GdlMineOptions o;
	GdlMineResult *res;
	int64_t		forms = 0;

	for (int i = 0; i < 4; i++)
		qnames[i] = gdl_pred_name_quote(rels[i].name);
	CHECK(strcmp(qnames[2], "plain") == 0 && qnames[0][0] == '"');
	gdl_mine_options_init(&o);
	o.min_head_coverage = 0;
	o.min_confidence = 0;
	o.max_body = 3;
	o.constants = true;
	o.constants_min_head_coverage = 0;
	res = gdl_mine(g, &o);
	CHECK(res->nrules > 50);
	for (int64_t i = 0; i < res->nrules; i++)
	{
		char	   *lit = gdl_mine_rule_text_lit(g, &res->rules[i], angle_literal, NULL);
		char	   *q = gdl_mine_rule_text_q(g, qnames, &res->rules[i], angle_literal, NULL);

		CHECK_MSG(strcmp(lit, q) == 0, "%s vs %s", lit, q);
		forms |= 1 << res->rules[i].head_const;
	}
	CHECK(forms == 7);			/* head(X, Y), head(X, c) and head(c, X) */
	gdl_test_reset();
}

/*
 * Rules with constants on a graph measured by hand.  People 1-5 (eve = 5
 * speaks nothing), cities 10, 11, languages 20-22:
 *   speaks: 1-20, 2-20, 3-21, 4-22        lives: 1-10, 2-10, 3-11, 4-10, 5-10
 * speaks(X, 20) :- lives(X, 10): support 2 (1, 2), body 4 (1, 2, 4, 5), PCA
 * body 3 (5 speaks nothing), head coverage 2/4.  lives(X, 10) :-
 * speaks(X, 20): 2 / 2 / 2, coverage 2/5.  speaks(X, 22) :- lives(X, 10):
 * 1 / 4 / 3.  Prediction speaks(5, ?) ranks 20 (2/3) before 22 (1/3);
 * speaks(?, 20) gives 1 and 2 (speaks(1, X) :- speaks(2, X), and back:
 * 1/1), then 4 and 5 (2/3).  The open rules (Z free) add the type-like
 * answers below.
 */
static void
test_constants(void)
{
	int64_t		sa[] = {1, 2, 3, 4},
				sb[] = {20, 20, 21, 22};
	int64_t		la[] = {1, 2, 3, 4, 5},
				lb[] = {10, 10, 11, 10, 10};
	int64_t    *sc[2] = {sa, sb},
			   *lc[2] = {la, lb};
	GdlMineRelation rels[2] = {{"speaks", {2, 4, sc}}, {"lives", {2, 5, lc}}};
	GdlMineGraph *g = gdl_mine_graph_build(2, rels);
	GdlMineOptions o;
	GdlMineResult *res;
	const GdlMineRule *r;

	gdl_mine_options_init(&o);
	o.min_head_coverage = 0;
	o.min_confidence = 0;
	o.max_body = 1;
	res = gdl_mine(g, &o);
	CHECK(find_rule(g, res, "speaks(X, 20) :- lives(X, 10).") == NULL);
	o.constants = true;
	res = gdl_mine(g, &o);
	r = find_rule(g, res, "speaks(X, 20) :- lives(X, 10).");
	CHECK(r && r->support == 2 && r->body_size == 4 && r->pca_body_size == 3 &&
		  r->head_coverage == 0.5 && r->pca_confidence == 2.0 / 3 && r->std_confidence == 0.5);
	r = find_rule(g, res, "lives(X, 10) :- speaks(X, 20).");
	CHECK(r && r->support == 2 && r->body_size == 2 && r->pca_body_size == 2 && r->head_coverage == 0.4);
	r = find_rule(g, res, "speaks(X, 22) :- lives(X, 10).");
	CHECK(r && r->support == 1 && r->body_size == 4 && r->pca_body_size == 3);
	/* the head's subject constant: lives(10, X) is not a fact shape here; speaks(X, 21) :- lives(X, 11) */
	r = find_rule(g, res, "speaks(X, 21) :- lives(X, 11).");
	CHECK(r && r->support == 1 && r->body_size == 1 && r->pca_body_size == 1);
	/*
	 * open rules: speaks(X, 20) :- lives(X, Z): 1, 2 speak 20 and live
	 * somewhere; all five live somewhere; 1-4 also speak.  lives(X, 10) :-
	 * speaks(X, Z): 1, 2, 4 of the speakers 1-4 live in 10.
	 */
	r = find_rule(g, res, "speaks(X, 20) :- lives(X, Z).");
	CHECK(r && r->support == 2 && r->body_size == 5 && r->pca_body_size == 4);
	r = find_rule(g, res, "lives(X, 10) :- speaks(X, Z).");
	CHECK(r && r->support == 3 && r->body_size == 4 && r->pca_body_size == 4);
	/* min_support prunes the constant choices: only 20 and 10 remain */
	o.min_support = 2;
	res = gdl_mine(g, &o);
	CHECK(find_rule(g, res, "speaks(X, 20) :- lives(X, 10).") != NULL);
	CHECK(find_rule(g, res, "speaks(X, 22) :- lives(X, 10).") == NULL);
	for (int64_t i = 0; i < res->nrules; i++)
		CHECK(res->rules[i].support >= 2);

	/* prediction with the constant rules */
	{
		GdlPredictOptions po;
		GdlPredictQuery q = {0, true, 5};
		GdlPredictResult *p;

		o.min_support = 1;
		o.target = 0;
		res = gdl_mine(g, &o);
		gdl_predict_options_init(&po);
		po.smoothing = 0;
		p = gdl_predict(g, res->rules, res->nrules, &q, &po);
		/* 21 only by the open rule speaks(X, 21) :- lives(X, Z): 1 / 4 */
		CHECK(p->nanswers == 3);
		if (p->nanswers == 3)
			CHECK(p->answers[0].value == 20 && p->answers[0].score == 2.0 / 3 &&
				  p->answers[1].value == 22 && p->answers[1].score == 1.0 / 3 && p->answers[1].rank == 2 &&
				  p->answers[2].value == 21 && p->answers[2].score == 1.0 / 4 && p->answers[2].rank == 3);
		q.subject_bound = false;
		q.value = 20;
		p = gdl_predict(g, res->rules, res->nrules, &q, &po);
		/*
		 * 1 and 2 by speaks(1, X) :- speaks(2, X) and back (1/1), then 4, 5,
		 * then 3 by the open rules (lives(X, Z) or speaks(X, Z): 2 / 4); 4
		 * before 5: the open rules are 4's next best (ties broken by them)
		 */
		if (check_answers(p, 5, (int64_t[]) {1, 2, 4, 5, 3}, (int64_t[]) {1, 1, 3, 4, 5},
						  (double[]) {1, 1, 2.0 / 3, 2.0 / 3, 0.5}, "speaks(?, 20)"))
			CHECK(strcmp(gdl_mine_rule_text(g, &res->rules[p->answers[0].rules[0]]),
						 "speaks(1, X) :- speaks(2, X).") == 0);
		po.exclude_known = true;
		p = gdl_predict(g, res->rules, res->nrules, &q, &po);
		CHECK(p->nanswers == 3 && p->answers[0].value == 4 && p->answers[1].value == 5 &&
			  p->answers[2].value == 3);
	}
	gdl_test_reset();
}

/*
 * Anytime mining: a budget spent before the first level mines nothing and
 * says so; without a budget every level is complete; a budget that does not
 * run out mines what no budget mines (the differential test compares those
 * against the reference too).
 */
static void
test_anytime(void)
{
	Kg			k;
	GdlMineGraph *g;
	GdlMineOptions o;
	GdlMineResult *full,
			   *none,
			   *budget;

	rng = 777;
	random_kg(&k, 9, 3, 20, true);
	g = gdl_mine_graph_build(k.nrels, k.rels);
	gdl_mine_options_init(&o);
	o.min_head_coverage = 0;
	o.min_confidence = 0;
	o.constants = true;
	full = gdl_mine(g, &o);
	CHECK(!full->timed_out && full->complete_body == 3 && full->complete_body_constants == 2);
	CHECK(full->nrules > 0);
	o.max_seconds = 1e-300;		/* the deadline is the start: no level fits */
	none = gdl_mine(g, &o);
	CHECK(none->timed_out && none->nrules == 0 && none->complete_body == 0 &&
		  none->complete_body_constants == 0);
	o.max_seconds = 3600;
	budget = gdl_mine(g, &o);
	CHECK(!budget->timed_out && budget->nrules == full->nrules);
	for (int64_t i = 0; i < full->nrules && i < budget->nrules; i++)
		CHECK(memcmp(&full->rules[i], &budget->rules[i], sizeof(GdlMineRule)) == 0);
	o.max_seconds = -1;
	CHECK(GDL_TRY(gdl_mine(g, &o)) != NULL);
	o.max_seconds = 0;
	o.max_body_constants = 3;
	CHECK(GDL_TRY(gdl_mine(g, &o)) != NULL);
	gdl_test_reset();
}

/*
 * mine_sort_u64 (the enumeration's key sort) against an insertion sort of
 * the same keys: every length up to 300 and a few long ones, keys random,
 * from a few values (runs of equal keys), ascending and descending.
 */
static void
test_sort_u64(void)
{
	uint64_t	seed = 88172645463325252ULL;
	int64_t		lens[] = {100000, 4097, 1000};

	for (int64_t t = 0; t < 300 + 3; t++)
	{
		int64_t		n = t < 300 ? t : lens[t - 300];

		for (int kind = 0; kind < 4; kind++)
		{
			uint64_t   *v = malloc(sizeof(uint64_t) * (n + 1)),
					   *w = malloc(sizeof(uint64_t) * (n + 1));
			bool		same = true;

			for (int64_t i = 0; i < n; i++)
			{
				seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
				v[i] = kind == 0 ? seed : kind == 1 ? seed % 5 : kind == 2 ? (uint64_t) i : (uint64_t) (n - i);
				w[i] = v[i];
			}
			mine_sort_u64(v, n);
			if (n <= 4097)
				for (int64_t i = 1; i < n; i++)
					for (int64_t j = i; j > 0 && w[j] < w[j - 1]; j--)
					{
						uint64_t	x = w[j];

						w[j] = w[j - 1];
						w[j - 1] = x;
					}
			for (int64_t i = 1; i < n; i++)
				same &= v[i - 1] <= v[i];
			if (n <= 4097)
				same &= n == 0 || memcmp(v, w, sizeof(uint64_t) * n) == 0;
			CHECK_MSG(same, "mine_sort_u64: %ld keys of kind %d out of order", (long) n, kind);
			free(v);
			free(w);
		}
	}
}

int
main(void)
{
	gdl_test_host_install();
	test_sort_u64();
	test_graph();
	test_canonical();
	test_predict();
	test_weighted();
	test_constants();
	test_rule_texts();
	test_anytime();
	test_differential();
	ref_oi = false;
	return gdl_test_summary("test_mine");
}
