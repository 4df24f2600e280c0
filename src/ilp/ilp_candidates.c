/*
 * ilp_candidates.c — the bias: candidate rules for the target, enumerated
 * top-down (a body grows one atom at a time) and deduplicated up to variable
 * renaming and atom order by their canonical form.
 *
 * A new atom is a unary or binary predicate (the target only when recursion
 * is allowed, invented closures only when asked) whose arguments are
 * variables already in the rule (of the argument's value class) and at most
 * one fresh variable, so every body is connected to the head.  A rule is a
 * candidate when every head variable occurs in its body and, for a binary
 * head, the body joins the two head variables (AMIE's connected rules: no
 * cross products of two unrelated conditions); the target atom
 * that repeats the head is never used.  "V != W" is added to a candidate when
 * it matters structurally: two atoms of one predicate that would collapse
 * into one if V = W, or the two head arguments.
 *
 * With examples, coverage prunes the search: adding a literal only shrinks
 * the set of examples a body derives, so a body that covers fewer than
 * min_support positives is not refined, a candidate that covers no negative
 * is not refined either (a refinement can only lose positives), a refinement
 * that covers exactly what its (candidate) parent covers is not kept, and an
 * inequality is kept only when it removes some example ("where it helps").
 * Ids are positions in the sorted canonical order, so runs reproduce.
 * Coverage comes from the bulk coverage of the whole bias (ilp_bulk.c) when
 * the bias has at most two body atoms over a binary target, else from one
 * join per rule; the two agree.
 */
#include "ilp_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct Search
{
	const IlpWorld *w;
	const IlpBias *bias;
	IlpRel	  **rels;
	IlpRuleSet	seen;
	IlpCandSet *out;
	int32_t	   *buf[ILP_MAX_ATOMS + 2];	/* coverage scratch per depth */
	bool	   *pred_ok;
	IlpBulk    *bulk;			/* every body-2 coverage at once, or NULL */
} Search;

/*
 * The examples among from[0..nfrom-1] that r derives (from being a parent's
 * coverage, which contains r's): looked up in the bulk coverage when it
 * knows r's shape, else joined (ilp_cover).
 */
static int32_t
cover(Search *s, const IlpRule *r, const int32_t *from, int32_t nfrom, int32_t *out)
{
	int32_t		n;

	if (s->bulk != NULL && ilp_bulk_cover(s->bulk, r, out, &n))
		return n;
	return ilp_cover(s->w, s->rels, r, from, nfrom, out);
}

/* May this predicate appear in bodies under the bias? */
static bool
pred_allowed(const IlpWorld *w, const IlpBias *bias, int p)
{
	const IlpPred *pr = &w->preds[p];

	switch (pr->kind)
	{
		case ILP_PRED_TARGET:
			return bias->recursive;
		case ILP_PRED_CLOSURE:
			return bias->invented;
		default:
			return pr->rel->n > 0;
	}
}

/* Record a candidate with a copy of its coverage. */
static void
keep(Search *s, const IlpRule *r, const int32_t *cov, int32_t ncov, int32_t npos)
{
	IlpCandSet *cs = s->out;
	IlpCand    *c;

	if (cs->n >= s->bias->max_candidates)
		gdl_error(GDL_ERR_LIMIT, NULL, "Lower max_body or raise min_support.",
				  "more than %lld candidate rules for \"%s\"",
				  (long long) s->bias->max_candidates, s->w->target_name);
	if (cs->n == cs->cap)
	{
		cs->cap = cs->cap * 2 + 64;
		cs->c = gdl_realloc(cs->c, sizeof(IlpCand) * cs->cap);
	}
	c = &cs->c[cs->n++];
	memset(c, 0, sizeof(*c));
	c->rule = *r;
	c->ncov = ncov;
	c->npos = npos;
	if (ncov > 0)
	{
		c->cov = gdl_alloc(sizeof(int32_t) * ncov);
		memcpy(c->cov, cov, sizeof(int32_t) * ncov);
	}
	c->recursive = ilp_rule_uses(r, s->w, ILP_PRED_TARGET);
	c->invented = ilp_rule_uses(r, s->w, ILP_PRED_CLOSURE);
}

/*
 * Count the ids below bound in an ascending id list (a binary search): the
 * positives of a coverage list when bound is the number of positives.
 */
int32_t
ilp_count_below(int32_t bound, const int32_t *ids, int32_t n)
{
	int32_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int32_t		mid = (lo + hi) / 2;

		if (ids[mid] < bound)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Count the positives in an ascending coverage list (positives come first). */
int32_t
ilp_count_pos(const IlpWorld *w, const int32_t *cov, int32_t n)
{
	return ilp_count_below(w->npos, cov, n);
}

/* Would atoms i and j be the same atom if variable v were u? */
static bool
collapse(const IlpRule *r, int u, int v)
{
	for (int i = 0; i < r->natoms; i++)
		for (int j = i + 1; j < r->natoms; j++)
		{
			const IlpLit *x = &r->lits[i];
			const IlpLit *y = &r->lits[j];
			int			xa = x->a == v ? u : x->a,
						xb = x->b == v ? u : x->b;
			int			ya = y->a == v ? u : y->a,
						yb = y->b == v ? u : y->b;

			if (x->pred == y->pred && xa == ya && xb == yb)
				return true;
		}
	return false;
}

/*
 * The rule with "u != v" added, canonical, when that inequality is in the
 * bias: same value class, and two atoms that would collapse if u = v (or the
 * two head arguments).  False otherwise.
 */
static bool
make_ineq(const IlpWorld *w, const IlpRule *r, int u, int v, IlpRule *c)
{
	if (r->nlits > r->natoms || r->vcls[u] != r->vcls[v])
		return false;
	if (!((w->arity == 2 && u == 0 && v == 1) || collapse(r, u, v) || collapse(r, v, u)))
		return false;
	*c = *r;
	c->lits[c->nlits].pred = -1;
	c->lits[c->nlits].a = u;
	c->lits[c->nlits].b = v;
	c->nlits++;
	ilp_rule_canon(c, w->arity);
	return true;
}

/* Add the useful "V != W" variants of a candidate (leaves of the search). */
static void
add_inequalities(Search *s, const IlpRule *r, const int32_t *cov, int32_t ncov)
{
	const IlpWorld *w = s->w;

	for (int u = 0; u < r->nvars; u++)
		for (int v = u + 1; v < r->nvars; v++)
		{
			IlpRule		c;
			int32_t		nc = 0,
						np = 0;

			if (!make_ineq(w, r, u, v, &c) || !ilp_ruleset_add(&s->seen, &c))
				continue;
			if (s->bias->use_examples)
			{
				nc = cover(s, &c, cov, ncov, s->buf[ILP_MAX_ATOMS + 1]);
				np = ilp_count_pos(w, s->buf[ILP_MAX_ATOMS + 1], nc);
				if (np < s->bias->min_support || nc == ncov)
					continue;
			}
			keep(s, &c, s->buf[ILP_MAX_ATOMS + 1], nc, np);
		}
}

/* Head variables that no atom of the rule binds yet. */
static int
unbound_head(const IlpRule *r, int arity)
{
	int			n = 0;

	for (int v = 0; v < arity; v++)
	{
		bool		found = false;

		for (int i = 0; i < r->natoms && !found; i++)
			found = r->lits[i].a == v || r->lits[i].b == v;
		n += found ? 0 : 1;
	}
	return n;
}

/*
 * The rule with atom p(a, b) added (b < 0 for unary), canonical, when that
 * is a valid refinement: not a repeated atom, not the head itself, and the
 * head still bindable within max_body atoms.  False otherwise.
 */
static bool
make_child(const IlpWorld *w, const IlpRule *r, int p, int a, int b, int max_body, IlpRule *c)
{
	int			depth = r->natoms + 1;

	for (int i = 0; i < r->natoms; i++)
		if (r->lits[i].pred == p && r->lits[i].a == a && r->lits[i].b == b)
			return false;
	if (w->preds[p].kind == ILP_PRED_TARGET && a == 0 && (w->arity == 1 || b == 1))
		return false;
	*c = *r;
	/* an inequality stays last */
	if (c->nlits > c->natoms)
		c->lits[c->nlits] = c->lits[c->natoms];
	c->lits[c->natoms].pred = p;
	c->lits[c->natoms].a = a;
	c->lits[c->natoms].b = b;
	if (a >= c->nvars)
		c->vcls[c->nvars++] = w->preds[p].cls[0];
	if (b >= c->nvars)
		c->vcls[c->nvars++] = w->preds[p].cls[1];
	c->natoms++;
	c->nlits++;
	if (unbound_head(c, w->arity) > 2 * (max_body - depth))
		return false;
	ilp_rule_canon(c, w->arity);
	return true;
}

typedef void (*AtomFn) (void *arg, int p, int a, int b);

/*
 * Call fn for every atom that may refine r: an allowed predicate whose
 * arguments are variables of r of the right class, or one fresh variable.
 */
static void
for_each_atom(const IlpWorld *w, const bool *pred_ok, const IlpRule *r, AtomFn fn, void *arg)
{
	int			nv = r->nvars;

	for (int p = 0; p < w->npreds; p++)
	{
		const IlpPred *pr = &w->preds[p];

		if (!pred_ok[p])
			continue;
		if (pr->arity == 1)
		{
			for (int a = 0; a < nv; a++)
				if (r->vcls[a] == pr->cls[0])
					fn(arg, p, a, -1);
			continue;
		}
		/* binary: each argument an existing variable or the fresh one, not both fresh */
		for (int a = 0; a <= nv; a++)
		{
			if (a < nv && r->vcls[a] != pr->cls[0])
				continue;
			if (a == nv && nv >= ILP_MAX_VARS)
				continue;
			for (int b = 0; b <= nv; b++)
			{
				if (b < nv && r->vcls[b] != pr->cls[1])
					continue;
				if (a == nv && b == nv)
					continue;
				if (b == nv && nv >= ILP_MAX_VARS)
					continue;
				fn(arg, p, a, b);
			}
		}
	}
}

static void expand(Search *s, const IlpRule *r, const int32_t *cov, int32_t ncov,
				   bool parent_safe);

/* Where the search is when it refines one rule. */
typedef struct VisitCtx
{
	Search	   *s;
	const IlpRule *r;
	const int32_t *cov;
	int32_t		ncov;
	bool		parent_safe;
} VisitCtx;

/*
 * Consider the child of r with one more atom p(a, b): deduplicate it,
 * compute its coverage, keep it when it is a useful candidate, refine it.
 */
static void
visit(void *arg, int p, int a, int b)
{
	VisitCtx   *v = arg;
	Search	   *s = v->s;
	const IlpWorld *w = s->w;
	const IlpBias *bias = s->bias;
	const int32_t *cov = v->cov;
	int32_t		ncov = v->ncov;
	IlpRule		c;
	int32_t		nc = 0,
				np = 0;
	int32_t    *cbuf = s->buf[v->r->natoms + 1];
	bool		safe;

	if (!make_child(w, v->r, p, a, b, bias->max_body, &c))
		return;
	if (!ilp_ruleset_add(&s->seen, &c))
		return;
	s->out->nodes++;
	if ((s->out->nodes & 1023) == 0)
		gdl_check_interrupts();
	safe = ilp_rule_linked(&c, w->arity);
	if (!safe && c.natoms >= bias->max_body)
		return;					/* a leaf that can never be a candidate */
	if (bias->use_examples)
	{
		nc = cover(s, &c, cov, ncov, cbuf);
		np = ilp_count_pos(w, cbuf, nc);
		if (np < bias->min_support)
			return;
	}
	if (safe)
	{
		bool		consistent = bias->use_examples && np == nc;

		if (!(bias->use_examples && v->parent_safe && nc == ncov))
			keep(s, &c, cbuf, nc, np);
		if (consistent)
			return;				/* refinements can only lose positives */
		add_inequalities(s, &c, cbuf, nc);
	}
	expand(s, &c, cbuf, nc, safe);
}

/* Refine a rule by every allowed atom. */
static void
expand(Search *s, const IlpRule *r, const int32_t *cov, int32_t ncov, bool parent_safe)
{
	VisitCtx	v = {s, r, cov, ncov, parent_safe};

	if (r->natoms >= s->bias->max_body)
		return;
	for_each_atom(s->w, s->pred_ok, r, visit, &v);
}

/* Collects one-step refinements. */
typedef struct RefineCtx
{
	const IlpWorld *w;
	const IlpRule *r;
	int			max_body;
	IlpRule    *out;
	int			n;
	int			cap;
} RefineCtx;

/* Append a refinement. */
static void
refine_add(RefineCtx *rc, const IlpRule *c)
{
	if (rc->n == rc->cap)
	{
		rc->cap = rc->cap * 2 + 64;
		rc->out = gdl_realloc(rc->out, sizeof(IlpRule) * rc->cap);
	}
	rc->out[rc->n++] = *c;
}

/* AtomFn collecting the valid child with atom p(a, b). */
static void
refine_atom(void *arg, int p, int a, int b)
{
	RefineCtx  *rc = arg;
	IlpRule		c;

	if (make_child(rc->w, rc->r, p, a, b, rc->max_body, &c))
		refine_add(rc, &c);
}

/*
 * Every one-step refinement of a rule under the bias (one more atom within
 * max_body, or the inequality where it is in the bias), canonical; the
 * array is written to *out and its length returned.
 */
int
ilp_refine(const IlpWorld *w, const IlpBias *bias, const IlpRule *r, IlpRule **out)
{
	RefineCtx	rc;
	bool	   *pred_ok = gdl_alloc(sizeof(bool) * (w->npreds + 1));

	memset(&rc, 0, sizeof(rc));
	rc.w = w;
	rc.r = r;
	rc.max_body = bias->max_body;
	for (int p = 0; p < w->npreds; p++)
		pred_ok[p] = pred_allowed(w, bias, p);
	if (r->natoms < bias->max_body)
		for_each_atom(w, pred_ok, r, refine_atom, &rc);
	for (int u = 0; u < r->nvars; u++)
		for (int v = u + 1; v < r->nvars; v++)
		{
			IlpRule		c;

			if (make_ineq(w, r, u, v, &c))
				refine_add(&rc, &c);
		}
	gdl_free(pred_ok);
	*out = rc.out;
	return rc.n;
}

/* qsort comparator: candidates by canonical rule. */
static int
cmp_cand(const void *x, const void *y)
{
	return ilp_rule_cmp(&((const IlpCand *) x)->rule, &((const IlpCand *) y)->rule);
}

/*
 * Enumerate the candidates of the bias over a world (with coverage of the
 * examples when bias->use_examples), sorted; a candidate's id is its index.
 */
IlpCandSet *
ilp_candidates(const IlpWorld *w, const IlpBias *bias)
{
	Search		s;
	IlpRule		root;
	int32_t		nex = bias->use_examples ? w->npos + w->nneg : 0;
	int32_t    *all = gdl_alloc(sizeof(int32_t) * (nex + 1));

	if (bias->max_body < 1 || bias->max_body > ILP_MAX_ATOMS)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "max_body must be between 1 and %d", ILP_MAX_ATOMS);
	memset(&s, 0, sizeof(s));
	s.w = w;
	s.bias = bias;
	s.rels = ilp_world_rels(w);
	s.out = gdl_alloc(sizeof(IlpCandSet));
	s.pred_ok = gdl_alloc(sizeof(bool) * (w->npreds + 1));
	for (int p = 0; p < w->npreds; p++)
		s.pred_ok[p] = pred_allowed(w, bias, p);
	for (int d = 0; d < ILP_MAX_ATOMS + 2; d++)
		s.buf[d] = gdl_alloc(sizeof(int32_t) * (nex + 1));
	for (int32_t i = 0; i < nex; i++)
		all[i] = i;
	ilp_ruleset_init(&s.seen);
	if (bias->use_examples)
		s.bulk = ilp_bulk_build(w, s.pred_ok, bias->max_body);

	memset(&root, 0, sizeof(root));
	root.nvars = w->arity;
	for (int v = 0; v < w->arity; v++)
		root.vcls[v] = w->cls[v];
	expand(&s, &root, all, nex, false);

	if (s.out->n > 1)
		qsort(s.out->c, s.out->n, sizeof(IlpCand), cmp_cand);
	ilp_ruleset_free(&s.seen);
	ilp_bulk_free(s.bulk);
	for (int d = 0; d < ILP_MAX_ATOMS + 2; d++)
		gdl_free(s.buf[d]);
	gdl_free(all);
	gdl_free(s.pred_ok);
	gdl_free(s.rels);
	return s.out;
}
