/*
 * test_ilp.c — unit tests of the rule-induction core (src/ilp): the bias
 * listed with deterministic ids, deduplication, the noisy-or gradient
 * against finite differences, Adam lowering the loss, learning small family
 * and graph tasks (judged on a second, unseen world), generated negatives,
 * and the error codes of bad parameters and badly shaped examples.
 */
#include "test_util.h"
#include "../../src/ilp/ilp_int.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ fixtures */

/* A growable binary (or unary) relation of integers. */
typedef struct Rows
{
	int			arity;
	size_t		n;
	int64_t		a[512];
	int64_t		b[512];
} Rows;

/* Append a tuple. */
static void
add2(Rows *r, int64_t a, int64_t b)
{
	r->a[r->n] = a;
	r->b[r->n] = b;
	r->n++;
}

/* The rows as GdlColumns (pointing into r). */
static GdlColumns
cols_of(Rows *r)
{
	GdlColumns	c;

	c.ncols = r->arity;
	c.nrows = r->n;
	c.cols = gdl_alloc(sizeof(int64_t *) * 2);
	c.cols[0] = r->a;
	c.cols[1] = r->b;
	return c;
}

/* A family world: father, mother, male, female, spouse, over nfam families. */
typedef struct Family
{
	Rows		father,
				mother,
				male,
				female,
				spouse;
	Rows		grandparent,
				husband,
				wife;
	GdlIlpRelation rels[5];
} Family;

/*
 * Each family k: grandparents g, gm; their son c1 (married to w) and
 * daughter c2 (married to h); c1's children s1, d1; c2's children s2, d2.
 */
static void
make_family(Family *f, int nfam, int base)
{
	memset(f, 0, sizeof(*f));
	f->father.arity = f->mother.arity = f->spouse.arity = 2;
	f->grandparent.arity = f->husband.arity = f->wife.arity = 2;
	f->male.arity = f->female.arity = 1;
	for (int k = 0; k < nfam; k++)
	{
		int64_t		o = base + 10 * k;
		int64_t		g = o,
					gm = o + 1,
					c1 = o + 2,
					c2 = o + 3,
					w = o + 4,
					h = o + 5,
					s1 = o + 6,
					d1 = o + 7,
					s2 = o + 8,
					d2 = o + 9;
		int64_t		gps[2] = {g, gm};
		int64_t		gcs[4] = {s1, d1, s2, d2};

		add2(&f->father, g, c1);
		add2(&f->father, g, c2);
		add2(&f->father, c1, s1);
		add2(&f->father, c1, d1);
		add2(&f->father, h, s2);
		add2(&f->father, h, d2);
		add2(&f->mother, gm, c1);
		add2(&f->mother, gm, c2);
		add2(&f->mother, w, s1);
		add2(&f->mother, w, d1);
		add2(&f->mother, c2, s2);
		add2(&f->mother, c2, d2);
		add2(&f->male, g, 0);
		add2(&f->male, c1, 0);
		add2(&f->male, h, 0);
		add2(&f->male, s1, 0);
		add2(&f->male, s2, 0);
		add2(&f->female, gm, 0);
		add2(&f->female, c2, 0);
		add2(&f->female, w, 0);
		add2(&f->female, d1, 0);
		add2(&f->female, d2, 0);
		add2(&f->spouse, g, gm);
		add2(&f->spouse, gm, g);
		add2(&f->spouse, c1, w);
		add2(&f->spouse, w, c1);
		add2(&f->spouse, h, c2);
		add2(&f->spouse, c2, h);
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 4; j++)
				add2(&f->grandparent, gps[i], gcs[j]);
		add2(&f->husband, g, gm);
		add2(&f->husband, c1, w);
		add2(&f->husband, h, c2);
		add2(&f->wife, gm, g);
		add2(&f->wife, w, c1);
		add2(&f->wife, c2, h);
	}
	{
		const char *names[5] = {"father", "mother", "male", "female", "spouse"};
		Rows	   *rows[5] = {&f->father, &f->mother, &f->male, &f->female, &f->spouse};

		for (int i = 0; i < 5; i++)
		{
			f->rels[i].name = names[i];
			f->rels[i].arity = rows[i]->arity;
			f->rels[i].types[0] = GDL_TYPE_BIGINT;
			f->rels[i].types[1] = GDL_TYPE_BIGINT;
			f->rels[i].rows = cols_of(rows[i]);
		}
	}
}

/* The chain lo -> lo + 1 -> ... -> hi into edge, its transitive closure into path. */
static void
add_chain(Rows *edge, Rows *path, int lo, int hi)
{
	for (int i = lo; i < hi; i++)
		add2(edge, i, i + 1);
	for (int i = lo; i <= hi; i++)
		for (int j = i + 1; j <= hi; j++)
			add2(path, i, j);
}

/* The rows of edge as the bigint relation edge/2. */
static GdlIlpRelation
edge_relation(Rows *edge)
{
	return (GdlIlpRelation) {"edge", 2, {GDL_TYPE_BIGINT, GDL_TYPE_BIGINT}, cols_of(edge)};
}

/* A problem of a binary bigint target over nrels relations (neg NULL: none). */
static GdlIlpProblem
binary_problem(GdlIlpRelation *rels, int nrels, const char *target, GdlColumns *pos, GdlColumns *neg)
{
	GdlIlpProblem p;

	memset(&p, 0, sizeof(p));
	p.nrels = nrels;
	p.rels = rels;
	p.target = target;
	p.arity = 2;
	p.types[0] = p.types[1] = GDL_TYPE_BIGINT;
	p.positives = pos;
	p.negatives = neg;
	return p;
}

/* A problem over a family world. */
static GdlIlpProblem
family_problem(Family *f, const char *target, GdlColumns *pos, GdlColumns *neg)
{
	return binary_problem(f->rels, 5, target, pos, neg);
}

/* Does 'program' derive exactly the rows of truth among all pairs of 0..maxv-1? */
static bool
derives_exactly(const GdlIlpProblem *world, const char *program, Rows *truth, int64_t lo, int64_t hi)
{
	Rows		all;
	GdlColumns	c;
	bool	   *d;
	bool		ok = true;
	int			errors = 0;

	memset(&all, 0, sizeof(all));
	all.arity = 2;
	for (int64_t x = lo; x < hi; x++)
		for (int64_t y = lo; y < hi && all.n < 512; y++)
			add2(&all, x, y);
	c = cols_of(&all);
	d = gdl_alloc(all.n);
	gdl_ilp_eval_program(world, program, &c, d);
	for (size_t i = 0; i < all.n; i++)
	{
		bool		want = false;

		for (size_t k = 0; k < truth->n && !want; k++)
			want = truth->a[k] == all.a[i] && truth->b[k] == all.b[i];
		if (want != d[i])
		{
			ok = false;
			if (errors++ < 3)
				fprintf(stderr, "  (%lld, %lld): derived %d, true %d\n",
						(long long) all.a[i], (long long) all.b[i], d[i], want);
		}
	}
	return ok;
}

/* --------------------------------------------------------------- tests */

/* The bias of a tiny problem, exactly, with ids in sorted order. */
static void
test_candidates_small(void)
{
	Rows		p,
				q;
	GdlIlpRelation rels[2];
	GdlIlpProblem prob;
	GdlIlpCandidateList *l;
	static const char *want[] = {
		"t(X, Y) :- p(X, Y).",
		"t(X, Y) :- p(Y, X).",
		"t(X, Y) :- p(X, Y), X != Y.",
		"t(X, Y) :- p(Y, X), X != Y.",
	};

	memset(&p, 0, sizeof(p));
	memset(&q, 0, sizeof(q));
	p.arity = 2;
	q.arity = 1;
	add2(&p, 1, 2);
	add2(&p, 2, 3);
	add2(&q, 1, 0);
	rels[0] = (GdlIlpRelation) {"q", 1, {GDL_TYPE_BIGINT}, cols_of(&q)};
	rels[1] = (GdlIlpRelation) {"p", 2, {GDL_TYPE_BIGINT, GDL_TYPE_BIGINT}, cols_of(&p)};
	memset(&prob, 0, sizeof(prob));
	prob.nrels = 2;
	prob.rels = rels;
	prob.target = "t";
	prob.arity = 2;
	prob.types[0] = prob.types[1] = GDL_TYPE_BIGINT;

	l = gdl_ilp_candidates(&prob, 1, false);
	CHECK_MSG(l->n == 4, "got %d candidates", l->n);
	for (int i = 0; i < l->n && i < 4; i++)
	{
		CHECK(l->items[i].id == i);
		CHECK_MSG(strcmp(l->items[i].rule, want[i]) == 0, "id %d: %s", i, l->items[i].rule);
	}
	CHECK(l->n >= 1 && strcmp(l->items[0].template, "H(X, Y) :- P(X, Y).") == 0);

	/* recursion adds the target, never as the head itself */
	l = gdl_ilp_candidates(&prob, 1, true);
	CHECK(l->n > 4);
	for (int i = 0; i < l->n; i++)
		CHECK_MSG(strstr(l->items[i].rule, ":- t(X, Y)") == NULL, "%s", l->items[i].rule);
}

/* Ids are stable across runs and across the order relations are given in. */
static void
test_candidates_deterministic(void)
{
	Family		f;
	GdlIlpProblem a,
				b;
	GdlIlpRelation rev[5];
	GdlIlpCandidateList *la,
			   *lb,
			   *lc;
	bool		same = true,
				unique = true;

	make_family(&f, 2, 0);
	a = family_problem(&f, "target", NULL, NULL);
	for (int i = 0; i < 5; i++)
		rev[i] = f.rels[4 - i];
	b = a;
	b.rels = rev;
	la = gdl_ilp_candidates(&a, 2, true);
	lb = gdl_ilp_candidates(&b, 2, true);
	lc = gdl_ilp_candidates(&a, 2, true);
	CHECK(la->n == lb->n && la->n == lc->n);
	CHECK(la->n > 100);
	for (int i = 0; i < la->n && i < lb->n && i < lc->n; i++)
		same = same && strcmp(la->items[i].rule, lb->items[i].rule) == 0 &&
			strcmp(la->items[i].rule, lc->items[i].rule) == 0 &&
			strcmp(la->items[i].template, lb->items[i].template) == 0;
	CHECK(same);
	/* no two candidates alike (canonical forms are unique, so texts are) */
	for (int i = 0; i < la->n && unique; i++)
		for (int j = i + 1; j < la->n && unique; j++)
			unique = strcmp(la->items[i].rule, la->items[j].rule) != 0;
	CHECK(unique);
	/* shorter bodies come first */
	CHECK(strstr(la->items[0].rule, "),") == NULL);
	CHECK(strstr(la->items[la->n - 1].rule, "),") != NULL);
}

/* Renamed variables and reordered atoms give one canonical rule. */
static void
test_canonical_form(void)
{
	IlpRule		x,
				y;

	/* t(X, Y) :- p(X, Z), q(Z, Y)  vs  t(X, Y) :- q(W, Y), p(X, W) */
	memset(&x, 0, sizeof(x));
	x.natoms = x.nlits = 2;
	x.nvars = 3;
	x.lits[0] = (IlpLit) {0, 0, 2};
	x.lits[1] = (IlpLit) {1, 2, 1};
	memset(&y, 0, sizeof(y));
	y.natoms = y.nlits = 2;
	y.nvars = 4;
	y.lits[0] = (IlpLit) {1, 3, 1};
	y.lits[1] = (IlpLit) {0, 0, 3};
	ilp_rule_canon(&x, 2);
	ilp_rule_canon(&y, 2);
	CHECK(ilp_rule_cmp(&x, &y) == 0);
	CHECK(ilp_rule_hash(&x) == ilp_rule_hash(&y));
	CHECK(x.nvars == 3);
}

/* gdl_ilp_loss_grad agrees with central finite differences. */
static void
test_loss_grad_fd(void)
{
	Family		f;
	GdlColumns	pos,
				neg;
	GdlIlpProblem prob;
	GdlIlpCandidateList *l;
	double	   *p,
			   *g,
			   *g2,
				loss;
	int			bad = 0;

	make_family(&f, 2, 0);
	pos = cols_of(&f.husband);
	neg = cols_of(&f.wife);
	prob = family_problem(&f, "h", &pos, &neg);
	l = gdl_ilp_candidates(&prob, 2, false);
	CHECK(l->n > 10);
	p = gdl_alloc(sizeof(double) * l->n);
	g = gdl_alloc(sizeof(double) * l->n);
	g2 = gdl_alloc(sizeof(double) * l->n);
	for (int i = 0; i < l->n; i++)
		p[i] = 0.05 + 0.9 * ((i * 37) % 11) / 11.0;
	loss = gdl_ilp_loss_grad(&prob, 2, false, 0, p, l->n, g);
	CHECK(loss > 0 && isfinite(loss));
	for (int i = 0; i < l->n; i++)
	{
		double		h = 1e-6,
					keep = p[i],
					lp,
					lm,
					fd;

		p[i] = keep + h;
		lp = gdl_ilp_loss_grad(&prob, 2, false, 0, p, l->n, g2);
		p[i] = keep - h;
		lm = gdl_ilp_loss_grad(&prob, 2, false, 0, p, l->n, g2);
		p[i] = keep;
		fd = (lp - lm) / (2 * h);
		if (fabs(fd - g[i]) > 1e-4 * (1.0 + fabs(g[i])))
		{
			if (bad++ < 3)
				fprintf(stderr, "  grad[%d] = %g, finite difference %g\n", i, g[i], fd);
		}
	}
	CHECK(bad == 0);
	/* the uncovered-positive cost: with every p = 0 the loss is npos * -log(eps) */
	for (int i = 0; i < l->n; i++)
		p[i] = 0.0;
	loss = gdl_ilp_loss_grad(&prob, 2, false, 0, p, l->n, g);
	CHECK(fabs(loss - 6 * -log(GDL_ILP_EPS)) < 1e-6);
}

/* The logit gradient used in training agrees with finite differences too. */
static void
test_loss_grad_w_fd(void)
{
	/* 3 examples (2 positive) x 3 candidates */
	int32_t		c0[] = {0, 2};
	int32_t		c1[] = {0, 1};
	int32_t		c2[] = {1, 2};
	int32_t    *cov[3] = {c0, c1, c2};
	int32_t		ncov[3] = {2, 2, 2};
	IlpCsr	   *m = ilp_csr_build(3, 3, ncov, cov);
	double		w[3] = {-0.3, 0.8, -1.2},
				p[3],
				g[3];
	bool		ok = true;

	CHECK(m->off[3] == 6 && m->idx[0] == 0 && m->idx[1] == 1);
	for (int i = 0; i < 3; i++)
		p[i] = 1.0 / (1.0 + exp(-w[i]));
	ilp_loss_grad_w(m, 2, p, g, true);
	for (int i = 0; i < 3; i++)
	{
		double		h = 1e-6,
					pp[3],
					lp,
					lm;

		for (int k = 0; k < 3; k++)
			pp[k] = 1.0 / (1.0 + exp(-(w[k] + (k == i ? h : 0))));
		lp = ilp_loss_forward(m, 2, pp, NULL);
		for (int k = 0; k < 3; k++)
			pp[k] = 1.0 / (1.0 + exp(-(w[k] - (k == i ? h : 0))));
		lm = ilp_loss_forward(m, 2, pp, NULL);
		ok = ok && fabs((lp - lm) / (2 * h) - g[i]) < 1e-5;
	}
	CHECK(ok);
}

/* Adam over the noisy-or loss lowers it, and more epochs lower it more. */
static void
test_adam_decreases(void)
{
	Family		f;
	GdlColumns	pos;
	GdlIlpProblem prob;
	IlpWorld   *w;
	IlpBias		bias = {2, true, false, true, 1, 100000};
	IlpCandSet *cs;
	int32_t   **cov;
	int32_t    *ncov;
	IlpCsr	   *m;
	IlpTrainOut t0,
				t10,
				t100;

	make_family(&f, 3, 0);
	pos = cols_of(&f.grandparent);
	prob = family_problem(&f, "gp", &pos, NULL);
	w = ilp_world_build(&prob, true, false, &(IlpNegSpec) {GDL_ILP_NEG_PCA, 4, 2, 7});
	cs = ilp_candidates(w, &bias);
	CHECK_MSG(cs->n > 5, "%d", cs->n);
	cov = gdl_alloc(sizeof(int32_t *) * cs->n);
	ncov = gdl_alloc(sizeof(int32_t) * cs->n);
	for (int i = 0; i < cs->n; i++)
	{
		cov[i] = cs->c[i].cov;
		ncov[i] = cs->c[i].ncov;
	}
	m = ilp_csr_build(w->npos + w->nneg, cs->n, ncov, cov);
	ilp_train(m, w->npos, 0, 0.1, &t0);
	ilp_train(m, w->npos, 10, 0.1, &t10);
	ilp_train(m, w->npos, 100, 0.1, &t100);
	CHECK(t0.epochs == 0);
	CHECK_MSG(t10.loss < t0.loss, "%g !< %g", t10.loss, t0.loss);
	CHECK_MSG(t100.loss < t10.loss, "%g !< %g", t100.loss, t10.loss);
	/* a step is deterministic */
	{
		IlpTrainOut again;

		ilp_train(m, w->npos, 100, 0.1, &again);
		CHECK(again.loss == t100.loss);
	}
}

/* Learn grandparent (four father/mother chains) with generated negatives. */
static void
test_learn_grandparent(void)
{
	Family		train,
				test;
	GdlColumns	pos;
	GdlIlpProblem prob,
				tprob;
	GdlIlpParams params;
	GdlIlpResult *r;

	make_family(&train, 3, 0);
	make_family(&test, 4, 100);
	pos = cols_of(&train.grandparent);
	prob = family_problem(&train, "grandparent", &pos, NULL);
	gdl_ilp_params_default(&params);
	params.max_body = 2;
	r = gdl_ilp_learn(&prob, &params, NULL);
	CHECK(r->nrules >= 1 && r->nrules <= 4);
	CHECK(r->train_recall == 1.0 && r->train_precision == 1.0);
	CHECK(r->nnegatives > 0);
	CHECK(r->epochs > 0 && r->final_loss > 0);
	for (int i = 0; i < r->nrules; i++)
	{
		CHECK(r->rules[i].rank == i + 1);
		CHECK(r->rules[i].probability > 0 && r->rules[i].probability < 1);
		CHECK(r->rules[i].precision == 1.0);
		CHECK(r->rules[i].std_confidence > 0 && r->rules[i].head_coverage > 0);
		CHECK(i == 0 || r->rules[i].loss <= r->rules[i - 1].loss + 1e-9);
	}
	tprob = family_problem(&test, "grandparent", NULL, NULL);
	CHECK_MSG(derives_exactly(&tprob, r->program, &test.grandparent, 100, 122), "%s", r->program);
}

/* Learn husband from wives as negatives: needs the gender literal. */
static void
test_learn_husband(void)
{
	Family		train,
				test;
	GdlColumns	pos,
				neg;
	GdlIlpProblem prob,
				tprob;
	GdlIlpParams params;
	GdlIlpResult *r,
			   *r2;

	make_family(&train, 3, 0);
	make_family(&test, 2, 200);
	pos = cols_of(&train.husband);
	neg = cols_of(&train.wife);
	prob = family_problem(&train, "husband", &pos, &neg);
	gdl_ilp_params_default(&params);
	r = gdl_ilp_learn(&prob, &params, NULL);
	CHECK_MSG(r->nrules == 1, "%d rules: %s", r->nrules, r->program);
	CHECK(r->max_body_used == 2);
	tprob = family_problem(&test, "husband", NULL, NULL);
	CHECK_MSG(derives_exactly(&tprob, r->program, &test.husband, 200, 220), "%s", r->program);
	/* the same inputs give the same answer */
	r2 = gdl_ilp_learn(&prob, &params, NULL);
	CHECK(strcmp(r->program, r2->program) == 0 && r->final_loss == r2->final_loss);
}

/* Learn reachability on a chain from half of its pairs: recursion. */
static void
test_learn_recursive(void)
{
	Rows		edge,
				pos,
				neg,
				tedge,
				tpath;
	GdlIlpRelation rel,
				trel;
	GdlColumns	pc,
				nc;
	GdlIlpProblem prob,
				tprob;
	GdlIlpParams params;
	GdlIlpResult *r;

	memset(&edge, 0, sizeof(edge));
	memset(&pos, 0, sizeof(pos));
	memset(&neg, 0, sizeof(neg));
	memset(&tedge, 0, sizeof(tedge));
	memset(&tpath, 0, sizeof(tpath));
	edge.arity = pos.arity = neg.arity = tedge.arity = tpath.arity = 2;
	for (int i = 0; i < 12; i++)
		add2(&edge, i, i + 1);
	for (int i = 0; i <= 12; i++)
		for (int j = 0; j <= 12; j++)
		{
			if (i < j && (i * 31 + j * 17) % 5 < 3)
				add2(&pos, i, j);
			else if (i >= j && (i + j) % 3 == 0)
				add2(&neg, i, j);
		}
	add_chain(&tedge, &tpath, 50, 66);
	rel = edge_relation(&edge);
	trel = edge_relation(&tedge);
	pc = cols_of(&pos);
	nc = cols_of(&neg);
	prob = binary_problem(&rel, 1, "path", &pc, &nc);
	gdl_ilp_params_default(&params);
	params.allow_recursive = true;
	r = gdl_ilp_learn(&prob, &params, NULL);
	CHECK(r->train_recall == 1.0 && r->train_precision == 1.0);
	{
		bool		rec = false;

		for (int i = 0; i < r->nrules; i++)
			rec = rec || r->rules[i].recursive || r->rules[i].aux != NULL;
		CHECK_MSG(rec, "%s", r->program);
	}
	tprob = prob;
	tprob.rels = &trel;
	CHECK_MSG(derives_exactly(&tprob, r->program, &tpath, 50, 67), "%s", r->program);

	/* without recursion the chain cannot be learned exactly */
	params.allow_recursive = false;
	r = gdl_ilp_learn(&prob, &params, NULL);
	CHECK(!(r->train_recall == 1.0 && r->train_precision == 1.0));
}

/* Generated negatives: partial completeness, seeded, never a positive. */
static void
test_generated_negatives(void)
{
	Family		f;
	GdlColumns	pos;
	GdlIlpProblem prob;
	IlpWorld   *a,
			   *b,
			   *c;
	bool		same = true,
				differ = false;

	make_family(&f, 3, 0);
	pos = cols_of(&f.grandparent);
	prob = family_problem(&f, "gp", &pos, NULL);
	a = ilp_world_build(&prob, true, false, &(IlpNegSpec) {GDL_ILP_NEG_PCA, 4, 2, 1});
	b = ilp_world_build(&prob, true, false, &(IlpNegSpec) {GDL_ILP_NEG_PCA, 4, 2, 1});
	c = ilp_world_build(&prob, true, false, &(IlpNegSpec) {GDL_ILP_NEG_PCA, 4, 2, 2});
	CHECK(a->npos == 24);
	CHECK(a->nneg > 0 && a->nneg <= 4 * a->npos);
	CHECK(a->nneg == b->nneg);
	for (int32_t e = a->npos; e < a->npos + a->nneg && e < a->npos + b->nneg; e++)
		same = same && a->ex[0][e] == b->ex[0][e] && a->ex[1][e] == b->ex[1][e];
	CHECK(same);
	for (int32_t e = a->npos; e < a->npos + a->nneg && e < c->npos + c->nneg; e++)
		differ = differ || a->ex[1][e] != c->ex[1][e];
	CHECK(differ);
	/* PCA: a negative t(x, y') has the subject of some positive, and is no positive */
	for (int32_t e = a->npos; e < a->npos + a->nneg; e++)
	{
		bool		subject = false,
					positive = false;

		for (int32_t k = 0; k < a->npos; k++)
		{
			subject = subject || a->ex[0][k] == a->ex[0][e];
			positive = positive || (a->ex[0][k] == a->ex[0][e] && a->ex[1][k] == a->ex[1][e]);
		}
		CHECK(subject && !positive);
	}
}

/* Bad parameters and badly shaped examples raise the documented codes. */
static void
test_errors(void)
{
	Family		f;
	GdlColumns	pos,
				unary,
				none;
	GdlIlpProblem prob;
	GdlIlpParams params;
	GdlError   *e;
	double		p[3] = {0.5, 0.5, 0.5},
				g[3];

	make_family(&f, 2, 0);
	pos = cols_of(&f.husband);
	prob = family_problem(&f, "husband", &pos, NULL);

	gdl_ilp_params_default(&params);
	params.max_body = 0;
	e = GDL_TRY(gdl_ilp_learn(&prob, &params, NULL));
	CHECK(e != NULL && e->code == GDL_ERR_PARAM);
	CHECK(e != NULL && strstr(e->message, "max_body") != NULL);
	/* bodies of 4..GDL_ILP_MAX_BODY atoms take the refinement search; more is an error */
	params.max_body = GDL_ILP_MAX_BODY + 1;
	e = GDL_TRY(gdl_ilp_learn(&prob, &params, NULL));
	CHECK(e != NULL && e->code == GDL_ERR_PARAM);
	params.max_body = 4;
	params.method = GDL_ILP_BULK;
	e = GDL_TRY(gdl_ilp_learn(&prob, &params, NULL));
	CHECK(e != NULL && e->code == GDL_ERR_PARAM);
	CHECK_ILP_BAD_PARAM(prob, params, max_rules, 0);
	CHECK_ILP_BAD_PARAM(prob, params, learning_rate, 0.0);
	CHECK_ILP_BAD_PARAM(prob, params, epochs, -1);
	CHECK_ILP_BAD_PARAM(prob, params, min_support, -2);
	e = GDL_TRY(gdl_ilp_candidates(&prob, 5, false));
	CHECK(e != NULL && e->code == GDL_ERR_PARAM);

	/* examples of the wrong arity or type */
	gdl_ilp_params_default(&params);
	unary = pos;
	unary.ncols = 1;
	prob.positives = &unary;
	e = GDL_TRY(gdl_ilp_learn(&prob, &params, NULL));
	CHECK(e != NULL && e->code == GDL_ERR_DATATYPE);
	prob.positives = &pos;
	prob.example_types[0] = GDL_TYPE_TEXT;
	e = GDL_TRY(gdl_ilp_learn(&prob, &params, NULL));
	CHECK(e != NULL && e->code == GDL_ERR_DATATYPE);
	CHECK(e != NULL && strstr(e->message, "husband") != NULL);
	prob.example_types[0] = GDL_TYPE_UNKNOWN;
	prob.arity = 3;				/* a ternary target with binary examples */
	e = GDL_TRY(gdl_ilp_learn(&prob, &params, NULL));
	CHECK(e != NULL && e->code == GDL_ERR_DATATYPE);
	prob.arity = GDL_ILP_MAX_ARITY + 1;
	e = GDL_TRY(gdl_ilp_learn(&prob, &params, NULL));
	CHECK(e != NULL && e->code == GDL_ERR_PARAM);
	prob.arity = 2;
	none = pos;
	none.nrows = 0;
	prob.positives = &none;
	e = GDL_TRY(gdl_ilp_learn(&prob, &params, NULL));
	CHECK(e != NULL && e->code == GDL_ERR_PARAM);
	prob.positives = &pos;

	/* loss_grad: one probability per candidate, each in [0, 1] */
	e = GDL_TRY(gdl_ilp_loss_grad(&prob, 1, false, 0, p, 3, g));
	CHECK(e != NULL && e->code == GDL_ERR_PARAM);
	p[0] = 1.5;
	e = GDL_TRY(gdl_ilp_loss_grad(&prob, 1, false, 0, p, 3, g));
	CHECK(e != NULL && e->code == GDL_ERR_PARAM);

	/* and a good call still works after the errors */
	e = GDL_TRY(gdl_ilp_learn(&prob, &params, NULL));
	CHECK(e == NULL);
}

/* The fixpoint hook sees each recursive trial program, as source text. */
static int	hook_calls;

static void
counting_hook(void *arg, const char *program, const char *target, int arity,
			  const GdlColumns *facts, bool *derived)
{
	GdlIlpProblem *world = arg;

	hook_calls++;
	CHECK(strcmp(target, "path") == 0 && arity == 2);
	gdl_ilp_eval_program(world, program, facts, derived);
}

/* With a hook, recursive programs are judged through it. */
static void
test_hook(void)
{
	Rows		edge,
				pos;
	GdlIlpRelation rel;
	GdlColumns	pc;
	GdlIlpProblem prob;
	GdlIlpParams params;
	GdlIlpEvalHook hook;
	GdlIlpResult *r;

	memset(&edge, 0, sizeof(edge));
	memset(&pos, 0, sizeof(pos));
	edge.arity = pos.arity = 2;
	/* every pair: negatives generated by partial completeness are then true ones */
	add_chain(&edge, &pos, 0, 10);
	rel = edge_relation(&edge);
	pc = cols_of(&pos);
	prob = binary_problem(&rel, 1, "path", &pc, NULL);
	gdl_ilp_params_default(&params);
	params.allow_recursive = true;
	params.invent = false;
	hook.fn = counting_hook;
	hook.arg = &prob;
	hook_calls = 0;
	r = gdl_ilp_learn(&prob, &params, &hook);
	CHECK(hook_calls > 0);
	CHECK_MSG(r->train_recall == 1.0 && r->train_precision == 1.0, "%s", r->message);
}

/* Nothing to learn from: no background, so no rule, and no crash. */
static void
test_learn_nothing(void)
{
	Rows		pos;
	GdlColumns	pc;
	GdlIlpProblem prob;
	GdlIlpParams params;
	GdlIlpResult *r;
	GdlError   *e;

	memset(&pos, 0, sizeof(pos));
	pos.arity = 2;
	add2(&pos, 1, 2);
	add2(&pos, 3, 4);
	pc = cols_of(&pos);
	memset(&prob, 0, sizeof(prob));
	prob.target = "t";
	prob.arity = 2;
	prob.types[0] = prob.types[1] = GDL_TYPE_BIGINT;
	prob.positives = &pc;
	gdl_ilp_params_default(&params);
	e = GDL_TRY(r = gdl_ilp_learn(&prob, &params, NULL));
	CHECK(e == NULL);
	CHECK(e != NULL || (r->nrules == 0 && r->train_recall == 0.0 && r->program[0] == '\0'));
}

int
main(void)
{
	gdl_test_host_install();
	test_candidates_small();
	test_candidates_deterministic();
	test_canonical_form();
	test_loss_grad_fd();
	test_loss_grad_w_fd();
	test_adam_decreases();
	test_learn_grandparent();
	test_learn_husband();
	test_learn_recursive();
	test_generated_negatives();
	test_errors();
	test_hook();
	test_learn_nothing();
	gdl_test_reset();
	return gdl_test_summary("test_ilp");
}
