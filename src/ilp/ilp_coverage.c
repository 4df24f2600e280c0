/*
 * ilp_coverage.c — which examples a candidate derives.
 *
 * A candidate's body is compiled into a join plan (checks first, then
 * extensions along the hash/CSR indexes of the relations, scans only when
 * nothing is bound), and run once per example with the head variables bound
 * to the example's values: a semi-join driven from the examples, stopping at
 * the first solution.  A candidate's output is never materialised.  The
 * covered examples of all candidates are laid out as a sparse
 * example x candidate matrix in CSR form (COO lists -> counting sort).
 */
#include "ilp_int.h"

#include <string.h>

/* Priority of a literal given what is bound; -1 when it cannot run yet. */
static int
lit_score(const IlpLit *l, const bool *bound)
{
	if (l->pred < 0)
		return bound[l->a] && bound[l->b] ? 100 : -1;
	if (l->b < 0)
		return bound[l->a] ? 95 : 12;
	if (bound[l->a] && bound[l->b])
		return 90;
	if (bound[l->a] || bound[l->b])
		return 50;
	return 10;
}

/*
 * Compile a rule body into a plan, variables 0..nbound-1 being bound on
 * entry: repeatedly take the literal that is cheapest to run next.
 */
void
ilp_plan_build(const IlpRule *r, int nbound, IlpPlan *p)
{
	bool		bound[ILP_MAX_VARS] = {false};
	bool		done[ILP_MAX_LITS] = {false};

	for (int v = 0; v < nbound; v++)
		bound[v] = true;
	p->nsteps = 0;
	for (int k = 0; k < r->nlits; k++)
	{
		int			best = -1,
					bscore = -1;
		const IlpLit *l;
		IlpStep    *s = &p->steps[p->nsteps++];

		for (int i = 0; i < r->nlits; i++)
		{
			int			sc;

			if (done[i])
				continue;
			sc = lit_score(&r->lits[i], bound);
			if (sc > bscore)
			{
				bscore = sc;
				best = i;
			}
		}
		if (best < 0)
			gdl_error(GDL_ERR_INTERNAL, NULL, NULL, "rule body cannot be ordered");
		done[best] = true;
		l = &r->lits[best];
		s->pred = l->pred;
		s->a = l->a;
		s->b = l->b;
		if (l->pred < 0)
			s->op = ILP_OP_NE;
		else if (l->b < 0)
			s->op = bound[l->a] ? ILP_OP_CHECK1 : ILP_OP_SCAN1;
		else if (bound[l->a] && bound[l->b])
			s->op = ILP_OP_CHECK2;
		else if (bound[l->a])
			s->op = ILP_OP_FWD;
		else if (bound[l->b])
			s->op = ILP_OP_BWD;
		else
			s->op = ILP_OP_SCAN2;
		bound[l->a] = true;
		if (l->b >= 0)
			bound[l->b] = true;
	}
}

/*
 * ilp_solve's step over one adjacency (CSR off/adj over nd sources) of
 * its relation: every neighbour of the bound variable from bound to free,
 * the rest of the plan run on each.  FWD and BWD steps differ only in the
 * adjacency and the direction.
 */
static bool
solve_adjacent(IlpRel *const *rels, const IlpPlan *p, int step, int32_t *vals,
			   IlpSolutionFn fn, void *arg, int32_t nd, const int64_t *off,
			   const int32_t *adj, int from, int to)
{
	int32_t		u = vals[from];

	if (u < 0 || u >= nd)
		return false;
	for (int64_t k = off[u]; k < off[u + 1]; k++)
	{
		vals[to] = adj[k];
		if (ilp_solve(rels, p, step + 1, vals, fn, arg))
			return true;
	}
	return false;
}

/*
 * Run a plan from 'step' with the bindings in vals.  With fn NULL, report
 * whether any solution exists; else call fn on each solution until it
 * returns true.  Returns true when the search was stopped (a solution found).
 */
bool
ilp_solve(IlpRel *const *rels, const IlpPlan *p, int step, int32_t *vals,
		  IlpSolutionFn fn, void *arg)
{
	const IlpStep *s;
	const IlpRel *r;

	if (step == p->nsteps)
		return fn == NULL ? true : fn(arg, vals);
	s = &p->steps[step];
	r = s->pred >= 0 ? rels[s->pred] : NULL;
	switch ((IlpOp) s->op)
	{
		case ILP_OP_NE:
			return vals[s->a] != vals[s->b] && ilp_solve(rels, p, step + 1, vals, fn, arg);
		case ILP_OP_CHECK1:
			return ilp_rel_has(r, vals[s->a], 0) && ilp_solve(rels, p, step + 1, vals, fn, arg);
		case ILP_OP_CHECK2:
			return ilp_rel_has(r, vals[s->a], vals[s->b]) &&
				ilp_solve(rels, p, step + 1, vals, fn, arg);
		case ILP_OP_SCAN1:
			for (int64_t i = 0; i < r->n; i++)
			{
				vals[s->a] = r->a[i];
				if (ilp_solve(rels, p, step + 1, vals, fn, arg))
					return true;
			}
			return false;
		case ILP_OP_FWD:
			return solve_adjacent(rels, p, step, vals, fn, arg, r->ndom[0], r->fwd_off, r->b,
								  s->a, s->b);
		case ILP_OP_BWD:
			return solve_adjacent(rels, p, step, vals, fn, arg, r->ndom[1], r->bwd_off, r->bwd,
								  s->b, s->a);
		case ILP_OP_SCAN2:
			for (int64_t i = 0; i < r->n; i++)
			{
				if (s->a == s->b && r->a[i] != r->b[i])
					continue;
				vals[s->a] = r->a[i];
				vals[s->b] = r->b[i];
				if (ilp_solve(rels, p, step + 1, vals, fn, arg))
					return true;
			}
			return false;
	}
	return false;
}

/* The relation of every predicate of a world, indexed by predicate. */
IlpRel **
ilp_world_rels(const IlpWorld *w)
{
	IlpRel	  **rels = gdl_alloc(sizeof(IlpRel *) * (w->npreds + 1));

	for (int i = 0; i < w->npreds; i++)
		rels[i] = w->preds[i].rel;
	return rels;
}

/* Marks the second head value of every solution with the current token. */
typedef struct YMark
{
	int32_t    *mark;
	int32_t		token;
} YMark;

/* IlpSolutionFn: mark the solution's Y. */
static bool
mark_y(void *arg, const int32_t *vals)
{
	YMark	   *m = arg;

	m->mark[vals[1]] = m->token;
	return false;
}

/*
 * Coverage of a binary-head rule over examples grouped by their first value:
 * once per distinct x, the rule is run with only X bound and every Y it
 * reaches is marked; then each example (x, y) of the group is a lookup.
 * When Y is not in the body yet (a partial rule), one existence check per x
 * answers the whole group.  Still driven from the examples: only the
 * subjects of examples are ever expanded.
 */
static int32_t
cover_grouped(const IlpWorld *w, IlpRel *const *rels, const IlpRule *r, bool y_bound,
			  const int32_t *from, int32_t nfrom, const int32_t *start, int32_t *out)
{
	int32_t		nx = w->dom[w->cls[0]].n;
	int32_t		ny = w->dom[w->cls[1]].n;
	int32_t    *fill = gdl_alloc(sizeof(int32_t) * ((int64_t) nx + 1));
	int32_t    *ord = gdl_alloc(sizeof(int32_t) * ((int64_t) nfrom + 1));
	bool	   *hit = gdl_alloc(sizeof(bool) * ((int64_t) nfrom + 1));
	YMark		m;
	IlpPlan		plan;
	int32_t		vals[ILP_MAX_VARS];
	int32_t		n = 0;

	m.mark = y_bound ? gdl_alloc(sizeof(int32_t) * ((int64_t) ny + 1)) : NULL;
	m.token = 0;
	ilp_plan_build(r, 1, &plan);
	memcpy(fill, start, sizeof(int32_t) * nx);
	for (int32_t i = 0; i < nfrom; i++)
		ord[fill[w->ex[0][from[i]]]++] = i;
	for (int32_t x = 0; x < nx; x++)
	{
		int32_t		lo = start[x],
					hi = start[x + 1];

		if (lo == hi)
			continue;
		vals[0] = x;
		if (!y_bound)
		{
			bool		ok = ilp_solve(rels, &plan, 0, vals, NULL, NULL);

			for (int32_t k = lo; k < hi; k++)
				hit[ord[k]] = ok;
			continue;
		}
		m.token++;
		ilp_solve(rels, &plan, 0, vals, mark_y, &m);
		for (int32_t k = lo; k < hi; k++)
			hit[ord[k]] = m.mark[w->ex[1][from[ord[k]]]] == m.token;
		if ((m.token & 1023) == 0)
			gdl_check_interrupts();
	}
	for (int32_t i = 0; i < nfrom; i++)
		if (hit[i])
			out[n++] = from[i];
	gdl_free(fill);
	gdl_free(ord);
	gdl_free(hit);
	gdl_free(m.mark);
	return n;
}

/* Does variable v occur in some atom of the body? */
static bool
var_in_atoms(const IlpRule *r, int v)
{
	for (int i = 0; i < r->natoms; i++)
		if (r->lits[i].a == v || r->lits[i].b == v)
			return true;
	return false;
}

/*
 * The examples among from[0..nfrom-1] that the rule derives, written to out
 * in the same (ascending) order; returns how many.  Per example by default;
 * grouped by subject (cover_grouped) when examples share subjects enough to
 * pay for it and Y is reached through the joins (or not at all).
 */
int32_t
ilp_cover(const IlpWorld *w, IlpRel *const *rels, const IlpRule *r,
		  const int32_t *from, int32_t nfrom, int32_t *out)
{
	IlpPlan		plan;
	int32_t		vals[ILP_MAX_VARS];
	int32_t		n = 0;

	if (w->arity == 2 && nfrom >= 512)
	{
		bool		y_in = var_in_atoms(r, 1);

		if (!y_in || ilp_rule_linked(r, 2))
		{
			int32_t		nx = w->dom[w->cls[0]].n;
			int32_t    *start = gdl_alloc(sizeof(int32_t) * ((int64_t) nx + 2));
			int32_t		groups = 0;

			for (int32_t i = 0; i < nfrom; i++)
				start[w->ex[0][from[i]] + 1]++;
			for (int32_t x = 0; x < nx; x++)
			{
				groups += start[x + 1] > 0;
				start[x + 1] += start[x];
			}
			if (nfrom >= 3 * groups)
				n = cover_grouped(w, rels, r, y_in, from, nfrom, start, out);
			gdl_free(start);
			if (nfrom >= 3 * groups)
				return n;
		}
	}
	ilp_plan_build(r, w->arity, &plan);
	for (int32_t i = 0; i < nfrom; i++)
	{
		int32_t		e = from[i];

		vals[0] = w->ex[0][e];
		vals[1] = w->ex[1][e];
		if (ilp_solve(rels, &plan, 0, vals, NULL, NULL))
			out[n++] = e;
		if ((i & 8191) == 8191)
			gdl_check_interrupts();
	}
	return n;
}

/*
 * Lay per-candidate coverage lists (ascending examples) out as a CSR matrix
 * by example; each row lists its candidates in ascending id.
 */
IlpCsr *
ilp_csr_build(int32_t nrows, int32_t ncols, const int32_t *ncov, int32_t *const *cov)
{
	IlpCsr	   *m = gdl_alloc(sizeof(IlpCsr));
	int64_t    *fill;
	int64_t		nnz = 0;

	m->nrows = nrows;
	m->ncols = ncols;
	m->wneg = 1.0;
	m->off = gdl_alloc(sizeof(int64_t) * ((int64_t) nrows + 1));
	for (int32_t c = 0; c < ncols; c++)
	{
		for (int32_t k = 0; k < ncov[c]; k++)
			m->off[cov[c][k] + 1]++;
		nnz += ncov[c];
	}
	for (int32_t r = 0; r < nrows; r++)
		m->off[r + 1] += m->off[r];
	m->idx = gdl_alloc(sizeof(int32_t) * (nnz + 1));
	fill = gdl_alloc(sizeof(int64_t) * ((int64_t) nrows + 1));
	memcpy(fill, m->off, sizeof(int64_t) * ((int64_t) nrows + 1));
	for (int32_t c = 0; c < ncols; c++)
		for (int32_t k = 0; k < ncov[c]; k++)
			m->idx[fill[cov[c][k]]++] = c;
	gdl_free(fill);
	return m;
}
