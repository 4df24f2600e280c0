/*
 * test_ilp_bulk.c — bulk coverage of the body-2 bias (src/ilp/ilp_bulk.c,
 * ilp_bulk.h, cuda/ilp_cover.cu) against the per-rule joins (ilp_cover).
 *
 * On random small worlds (binary relations with self-loops and hubs, unary
 * relations, a target with planted and random positives, some x = y
 * examples, generated negatives), every rule of one and two atoms the bias
 * can reach must have the same coverage from the bulk as from ilp_cover,
 * every linked two-atom rule must be known to the bulk, and the whole search
 * (ilp_candidates) must give the same candidates with the same coverage with
 * the bulk on and off.  Every binary relation of a random graph scored as
 * the target over one shared base world and adjacency (ilp_score_targets)
 * must give the candidates of its standalone world.  The CPU always; the GPU as well when $GDL_CUDA_LIB
 * (default ../../cuda/gpudl_cuda.so) loads and a GPU answers, else it says
 * "skipped" for the GPU part.
 */
#include "test_host.h"
#include "../../src/ilp/ilp_int.h"
#include "../../src/ilp/gdl_ilp_device.h"

#include <dlfcn.h>
#include <string.h>

static uint64_t rng = 7;

/* A pseudo-random number below n. */
static int64_t
rnd(int64_t n)
{
	rng = ilp_mix64(rng);
	return (int64_t) (rng % (uint64_t) n);
}

/* Columns of n random rows over [0, nent), a share of them on a hub. */
static GdlColumns
random_cols(int arity, int64_t n, int64_t nent, int hub_pct)
{
	GdlColumns	c;

	c.ncols = arity;
	c.nrows = n;
	c.cols = gdl_alloc(sizeof(int64_t *) * 2);
	for (int k = 0; k < arity; k++)
		c.cols[k] = gdl_alloc(sizeof(int64_t) * (n + 1));
	for (int64_t i = 0; i < n; i++)
		for (int k = 0; k < arity; k++)
			c.cols[k][i] = rnd(100) < hub_pct ? 0 : rnd(nent);
	return c;
}

/* A random problem: nrel binary and nun unary relations over nent values. */
static GdlIlpProblem
random_problem(int nrel, int nun, int64_t nent, int64_t facts)
{
	GdlIlpProblem prob;
	GdlIlpRelation *rels = gdl_alloc(sizeof(GdlIlpRelation) * (nrel + nun));
	GdlColumns *pos = gdl_alloc(sizeof(GdlColumns));
	int64_t		npos = facts / 2 + 2;

	for (int r = 0; r < nrel + nun; r++)
	{
		int			arity = r < nrel ? 2 : 1;

		rels[r].name = gdl_sprintf("p%d", r);
		rels[r].arity = arity;
		rels[r].types[0] = rels[r].types[1] = GDL_TYPE_BIGINT;
		rels[r].rows = random_cols(arity, r < nrel ? facts : nent / 3 + 1, nent, r % 3 == 0 ? 10 : 0);
		/* a few self-loops */
		if (arity == 2)
			for (int64_t i = 0; i < facts / 10; i++)
				rels[r].rows.cols[1][i] = rels[r].rows.cols[0][i];
	}
	/* positives: a composition of p0 and p1 where it exists, a copy of p2, noise, x = y */
	*pos = random_cols(2, npos, nent, 0);
	for (int64_t i = 0; i < npos; i++)
	{
		int64_t		k = rnd(facts);

		switch (i % 4)
		{
			case 0:
				for (int64_t j = 0; j < facts; j++)
					if (rels[1].rows.cols[0][j] == rels[0].rows.cols[1][k])
					{
						pos->cols[0][i] = rels[0].rows.cols[0][k];
						pos->cols[1][i] = rels[1].rows.cols[1][j];
						break;
					}
				break;
			case 1:
				pos->cols[0][i] = rels[2 % nrel].rows.cols[1][k];
				pos->cols[1][i] = rels[2 % nrel].rows.cols[0][k];
				break;
			case 2:
				if (i % 8 == 2)
					pos->cols[1][i] = pos->cols[0][i];
				break;
			default:
				break;
		}
	}
	memset(&prob, 0, sizeof(prob));
	prob.nrels = nrel + nun;
	prob.rels = rels;
	prob.target = "t";
	prob.arity = 2;
	prob.types[0] = prob.types[1] = GDL_TYPE_BIGINT;
	prob.example_types[0] = prob.example_types[1] = GDL_TYPE_UNKNOWN;
	prob.positives = pos;
	return prob;
}

/* Does every atom of r join the head variables (the bulk's linked shapes)? */
static bool
linked_two(const IlpWorld *w, const IlpRule *r)
{
	return r->natoms == 2 && r->nlits == 2 && r->nvars <= 3 && ilp_rule_linked(r, w->arity);
}

/* Compare bulk and per-rule coverage of r; counts what was compared. */
static void
compare_rule(const IlpWorld *w, IlpRel *const *rels, const IlpBulk *b, const IlpRule *r,
			 const int32_t *all, int32_t nex, int32_t *o1, int32_t *o2, int64_t *ncompared)
{
	int32_t		n1 = 0,
				n2;

	/* what the search asks for: any one atom, linked rules of two, their inequalities */
	if ((r->natoms == 2 || r->nlits > r->natoms) && !ilp_rule_linked(r, w->arity))
		return;
	if (!ilp_bulk_cover(b, r, o1, &n1))
	{
		CHECK_MSG(!linked_two(w, r), "linked rule unknown to the bulk: %s", ilp_rule_text(r, w));
		return;
	}
	n2 = ilp_cover(w, rels, r, all, nex, o2);
	(*ncompared)++;
	CHECK_MSG(n1 == n2 && memcmp(o1, o2, sizeof(int32_t) * n1) == 0,
			  "%s: bulk covers %d, joins %d", ilp_rule_text(r, w), n1, n2);
}

/* Every rule of one and two atoms: bulk against ilp_cover. */
static int64_t
compare_all_rules(const IlpWorld *w, const IlpBulk *b)
{
	IlpBias		bias = {2, false, false, true, 1, 2000000};
	IlpRel	  **rels = ilp_world_rels(w);
	int32_t		nex = w->npos + w->nneg;
	int32_t    *all = gdl_alloc(sizeof(int32_t) * (nex + 1));
	int32_t    *o1 = gdl_alloc(sizeof(int32_t) * (nex + 1));
	int32_t    *o2 = gdl_alloc(sizeof(int32_t) * (nex + 1));
	IlpRule		root;
	IlpRule    *d1;
	int			n1;
	int64_t		ncompared = 0;

	for (int32_t i = 0; i < nex; i++)
		all[i] = i;
	memset(&root, 0, sizeof(root));
	root.nvars = 2;
	root.vcls[0] = (int8_t) w->cls[0];
	root.vcls[1] = (int8_t) w->cls[1];
	n1 = ilp_refine(w, &bias, &root, &d1);
	for (int i = 0; i < n1; i++)
	{
		IlpRule    *d2;
		int			n2;

		compare_rule(w, rels, b, &d1[i], all, nex, o1, o2, &ncompared);
		n2 = ilp_refine(w, &bias, &d1[i], &d2);
		for (int j = 0; j < n2; j++)
			compare_rule(w, rels, b, &d2[j], all, nex, o1, o2, &ncompared);
		gdl_free(d2);
	}
	gdl_free(d1);
	return ncompared;
}

/* The whole search with the bulk on and off: same candidates, same coverage. */
static void
compare_search(const IlpWorld *w, int max_body)
{
	IlpBias		bias = {max_body, false, false, true, 1, 2000000};
	IlpCandSet *a,
			   *b;

	gdl_ilp_set_bulk(false);
	a = ilp_candidates(w, &bias);
	gdl_ilp_set_bulk(true);
	b = ilp_candidates(w, &bias);
	CHECK_MSG(a->n == b->n, "search: %d candidates per rule, %d with the bulk", a->n, b->n);
	for (int32_t i = 0; i < a->n && i < b->n; i++)
	{
		const IlpCand *x = &a->c[i],
				   *y = &b->c[i];

		if (ilp_rule_cmp(&x->rule, &y->rule) != 0 || x->ncov != y->ncov || x->npos != y->npos ||
			(x->ncov > 0 && memcmp(x->cov, y->cov, sizeof(int32_t) * x->ncov) != 0))
		{
			CHECK_MSG(false, "candidate %d: %s (%d) vs %s (%d)", i, ilp_rule_text(&x->rule, w),
					  x->ncov, ilp_rule_text(&y->rule, w), y->ncov);
			break;
		}
	}
}

/* One random world on the current device setting; returns whether the bulk ran on the device. */
static bool
one_world(int nrel, int nun, int64_t nent, int64_t facts, bool want_device)
{
	GdlIlpProblem prob = random_problem(nrel, nun, nent, facts);
	IlpWorld   *w = ilp_world_build(&prob, true, false, &(IlpNegSpec) {GDL_ILP_NEG_PCA, 3, 2, 5});
	bool	   *ok = gdl_alloc(sizeof(bool) * (w->npreds + 1));
	IlpBulk    *b;
	bool		dev;
	int64_t		n;

	for (int p = 0; p < w->npreds; p++)
		ok[p] = w->preds[p].kind == ILP_PRED_BG && w->preds[p].rel->n > 0;
	b = ilp_bulk_build(w, ok, 2);
	CHECK_MSG(b != NULL, "no bulk coverage for a one-class binary world");
	if (b == NULL)
		return false;
	dev = ilp_bulk_on_device(b);
	if (want_device)
		CHECK_MSG(dev, "bulk coverage not on the device: %s", gdl_ilp_timings.last_device_error);
	n = compare_all_rules(w, b);
	CHECK_MSG(n > 50, "only %lld rules compared", (long long) n);
	ilp_bulk_free(b);
	compare_search(w, 1);
	compare_search(w, 2);
	/* deeper biases and unary targets are not for the bulk */
	CHECK(ilp_bulk_build(w, ok, 3) == NULL);
	return dev;
}

/* What the ilp_score_targets callback compares against. */
typedef struct MultiCheck
{
	const GdlIlpRelation *rels;
	int			nrels;
	const IlpNegSpec *neg;
	const IlpBias *bias;
	int			scored;
	int64_t		shared_before;
} MultiCheck;

/*
 * ilp_score_targets callback: the target's candidates over the shared graph
 * must be those of the standalone world (ilp_world_build of the others).
 */
static void
multi_one(void *arg, int pred, const IlpWorld *w, const IlpCandSet *cs)
{
	MultiCheck *mc = arg;
	GdlIlpProblem prob;
	GdlIlpRelation *others = gdl_alloc(sizeof(GdlIlpRelation) * mc->nrels);
	const GdlIlpRelation *t = NULL;
	IlpWorld   *sw;
	IlpCandSet *sc;
	int			k = 0;

	for (int r = 0; r < mc->nrels; r++)
	{
		if (strcmp(mc->rels[r].name, w->target_name) == 0)
			t = &mc->rels[r];
		else
			others[k++] = mc->rels[r];
	}
	CHECK(t != NULL && w->target == pred);
	if (t == NULL)
		return;
	memset(&prob, 0, sizeof(prob));
	prob.nrels = k;
	prob.rels = others;
	prob.target = t->name;
	prob.arity = 2;
	prob.types[0] = prob.types[1] = GDL_TYPE_BIGINT;
	prob.example_types[0] = prob.example_types[1] = GDL_TYPE_UNKNOWN;
	prob.positives = &t->rows;
	sw = ilp_world_build(&prob, true, false, mc->neg);
	CHECK_MSG(sw->npos == w->npos && sw->nneg == w->nneg && sw->npreds == w->npreds &&
			  sw->target == w->target,
			  "%s: world %d+%d examples, %d preds vs %d+%d, %d preds standalone", t->name,
			  w->npos, w->nneg, w->npreds, sw->npos, sw->nneg, sw->npreds);
	CHECK(memcmp(sw->ex[0], w->ex[0], sizeof(int32_t) * (w->npos + w->nneg)) == 0 &&
		  memcmp(sw->ex[1], w->ex[1], sizeof(int32_t) * (w->npos + w->nneg)) == 0);
	sc = ilp_candidates(sw, mc->bias);
	CHECK_MSG(sc->n == cs->n, "%s: %d candidates shared, %d standalone", t->name, cs->n, sc->n);
	for (int32_t i = 0; i < sc->n && i < cs->n; i++)
	{
		const IlpCand *x = &sc->c[i],
				   *y = &cs->c[i];

		if (ilp_rule_cmp(&x->rule, &y->rule) != 0 || x->ncov != y->ncov || x->npos != y->npos ||
			(x->ncov > 0 && memcmp(x->cov, y->cov, sizeof(int32_t) * x->ncov) != 0))
		{
			CHECK_MSG(false, "%s: candidate %d: %s (%d) standalone, %s (%d) shared", t->name, i,
					  ilp_rule_text(&x->rule, sw), x->ncov, ilp_rule_text(&y->rule, w), y->ncov);
			break;
		}
	}
	ilp_candset_free(sc);
	mc->scored++;
}

/*
 * Every binary relation of a random graph as the target, over one base
 * world and one adjacency (ilp_score_targets), against standalone worlds.
 */
static void
multi_graph(int nrel, int nun, int64_t nent, int64_t facts, bool want_device)
{
	GdlIlpProblem prob = random_problem(nrel, nun, nent, facts);
	IlpNegSpec	neg = {GDL_ILP_NEG_PCA, 3, 2, 5};
	IlpBias		bias = {2, false, false, true, 1, 2000000};
	int		   *targets = gdl_alloc(sizeof(int) * nrel);
	MultiCheck	mc = {prob.rels, prob.nrels, &neg, &bias, 0, gdl_ilp_timings.bulk_shared};
	int64_t		dev_before = gdl_ilp_timings.bulk_device;
	int			n;

	for (int r = 0; r < nrel; r++)
		targets[r] = r;
	n = ilp_score_targets(prob.rels, prob.nrels, targets, nrel, &bias, &neg, multi_one, &mc, NULL);
	CHECK(n == nrel && mc.scored == nrel);
	CHECK_MSG(gdl_ilp_timings.bulk_shared - mc.shared_before >= nrel,
			  "only %lld of %d targets over the shared adjacency",
			  (long long) (gdl_ilp_timings.bulk_shared - mc.shared_before), nrel);
	if (want_device)
		CHECK_MSG(gdl_ilp_timings.bulk_device - dev_before >= 2 * nrel,
				  "shared bulk coverage not on the device: %s", gdl_ilp_timings.last_device_error);
}

/* The worlds, small to medium. */
static void
run_worlds(bool want_device)
{
	multi_graph(4, 1, 40, 120, want_device);
	multi_graph(5, 2, 3000, 6000, want_device);	/* large enough for worker threads */
	one_world(3, 1, 12, 30, want_device);
	one_world(4, 2, 30, 80, want_device);
	one_world(6, 0, 50, 200, want_device);
	one_world(8, 3, 200, 600, want_device);
	one_world(5, 2, 20, 300, want_device);	/* dense */
	for (int k = 0; k < 6; k++)
		one_world(2 + (int) rnd(6), (int) rnd(3), 5 + rnd(100), 10 + rnd(400), want_device);
	gdl_test_reset();
}

int
main(void)
{
	const char *lib = getenv("GDL_CUDA_LIB");
	void	   *h;
	GdlIlpDeviceEntryFn entry;
	const GdlIlpDevice *dev = NULL;

	gdl_test_host_install();
	gdl_ilp_set_device_mode(GDL_ILP_DEVICE_NEVER);
	run_worlds(false);
	printf("test_ilp_bulk: CPU: bulk %lld builds, %lld rule coverages looked up, %lld joined\n",
		   (long long) gdl_ilp_timings.bulk_builds, (long long) gdl_ilp_timings.bulk_hits,
		   (long long) gdl_ilp_timings.bulk_misses);

	if (lib == NULL)
		lib = "../../cuda/gpudl_cuda.so";
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	entry = h ? (GdlIlpDeviceEntryFn) dlsym(h, GDL_ILP_DEVICE_ENTRY_SYMBOL) : NULL;
	if (entry != NULL)
		dev = entry();
	if (dev == NULL || dev->abi != GDL_ILP_DEVICE_ABI || dev->cover == NULL)
		printf("test_ilp_bulk: GPU part skipped (cannot load %s with bulk coverage)\n", lib);
	else
	{
		/* a trivial call tells whether a GPU works */
		GdlIlpDevCoverIn in;
		int64_t		zero[2] = {0, 0};
		int32_t		ex[1] = {0};
		uint64_t   *out = NULL;
		int64_t		nout = 0;
		double		secs;
		char		err[256] = "";

		memset(&in, 0, sizeof(in));
		in.nent = 1;
		in.nex = 1;
		in.aoff = in.soff = in.uoff = zero;
		in.ex0 = in.ex1 = ex;
		in.max_entries = 100;
		in.skip_pred = -1;
		if (dev->cover(&in, &out, &nout, &secs, err, sizeof(err)) != 0)
			printf("test_ilp_bulk: GPU part skipped (no GPU: %s)\n", err);
		else
		{
			dev->cover_free(out);
			gdl_ilp_register_device(dev);
			gdl_ilp_set_device_mode(GDL_ILP_DEVICE_ALWAYS);
			run_worlds(true);
			printf("test_ilp_bulk: GPU: %lld bulk builds on the device\n",
				   (long long) gdl_ilp_timings.bulk_device);
			gdl_ilp_register_device(NULL);
		}
	}
	return gdl_test_summary("test_ilp_bulk");
}
