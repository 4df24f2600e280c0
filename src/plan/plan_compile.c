/*
 * plan_compile.c — the planner: from an analysed program to a GdlPlan.
 *
 * Per stratum (in evaluation order): facts with constant arguments become an
 * initial relation; non-recursive rules run once; a rule with k positive
 * atoms of its own stratum gets k semi-naive versions — version i reads
 * delta for its i-th recursive atom, "old" (full minus delta) for the
 * recursive atoms before it and full for those after it, so every new
 * combination of tuples is derived exactly once, also for non-linear rules.
 * Join order: a delta version starts from its delta atom; then greedily the
 * atom sharing the most bound variables (constants and body order break
 * ties).  Comparisons and assignments are placed as soon as their variables
 * are bound, negated atoms (anti-joins) likewise, and only the variables
 * needed later are kept after each step.
 */
#include "plan_int.h"

#include <string.h>

/* A growable list of ints. */
typedef struct IntList
{
	int			n;
	int			cap;
	int		   *v;
} IntList;

/* Append x. */
static void
il_push(IntList *l, int x)
{
	l->v = gdl_grow(l->v, l->n, &l->cap, 8, sizeof(int));
	l->v[l->n++] = x;
}

/* Is a term a constant literal (no variables)? */
bool
plan_term_is_const(const GdlTerm *t)
{
	switch (t->kind)
	{
		case GDL_TERM_INT:
		case GDL_TERM_FLOAT:
		case GDL_TERM_TEXT:
		case GDL_TERM_BOOL:
			return true;
		case GDL_TERM_NEG:
			return plan_term_is_const(t->left);
		case GDL_TERM_BINOP:
			return plan_term_is_const(t->left) && plan_term_is_const(t->right);
		default:
			return false;
	}
}

/* Mark the named variables of a term in 'mark'. */
static void
term_vars(const GdlTerm *t, bool *mark)
{
	if (t == NULL)
		return;
	switch (t->kind)
	{
		case GDL_TERM_VAR:
			mark[t->var] = true;
			break;
		case GDL_TERM_BINOP:
			term_vars(t->left, mark);
			term_vars(t->right, mark);
			break;
		case GDL_TERM_NEG:
			term_vars(t->left, mark);
			break;
		case GDL_TERM_AGG:
			term_vars(t->arg, mark);
			break;
		default:
			break;
	}
}

/* Are all named variables of t bound (_ counts as bound)? */
static bool
term_bound(const GdlTerm *t, const bool *bound)
{
	return gdl_term_bound(t, bound, true, true);
}

/* Prepare how a body atom is read: constants, repeated variables, columns. */
static void
make_atom(PlanAtom *pa, const GdlLiteral *lit, int litno, int pred, PlanSrc src, int nvars)
{
	const GdlAtom *at = &lit->atom;
	int		   *first = gdl_alloc(sizeof(int) * (nvars > 0 ? nvars : 1));
	IntList		vars = {0},
				cols = {0},
				cc = {0},
				ea = {0},
				eb = {0};
	int			k;

	memset(pa, 0, sizeof(*pa));
	pa->lit = litno;
	pa->pred = pred;
	pa->src = src;
	for (k = 0; k < nvars; k++)
		first[k] = -1;
	pa->const_term = gdl_alloc(sizeof(GdlTerm *) * (at->nargs > 0 ? at->nargs : 1));
	pa->trivial = true;
	for (k = 0; k < at->nargs; k++)
	{
		const GdlTerm *t = at->args[k];

		if (t->kind == GDL_TERM_VAR)
		{
			if (first[t->var] >= 0)
			{
				il_push(&ea, first[t->var]);
				il_push(&eb, k);
				pa->trivial = false;
			}
			else
			{
				first[t->var] = k;
				il_push(&vars, t->var);
				il_push(&cols, k);
			}
		}
		else if (t->kind == GDL_TERM_ANON)
			pa->trivial = false;
		else if (plan_term_is_const(t))
		{
			pa->const_term[cc.n] = (GdlTerm *) t;
			il_push(&cc, k);
			pa->trivial = false;
		}
		else
			gdl_error(GDL_ERR_UNSAFE, NULL,
					  "Bind the expression to a variable with \"V = expr\" instead.",
					  "expressions are not allowed as arguments of body atom \"%s\" (line %d)",
					  at->name, at->loc.line);
	}
	pa->nvars = vars.n;
	pa->vars = vars.v;
	pa->cols = cols.v;
	pa->nconst = cc.n;
	pa->const_col = cc.v;
	pa->neq = ea.n;
	pa->eq_a = ea.v;
	pa->eq_b = eb.v;
	gdl_free(first);
}

/* Builder state of one rule version. */
typedef struct RuleBuild
{
	const GdlAnalysis *a;
	const GdlClauseInfo *info;
	const GdlClause *c;
	int			stratum;
	int		   *pred_stratum;
	PlanRule   *rule;
	bool	   *bound;
	bool	   *placed;
	IntList		pending;		/* comparison literals waiting for a MAP */
	bool		pending_assign;	/* an assignment waits for a MAP */
	int			nsteps;
	int			capsteps;
	PlanStep   *steps;
} RuleBuild;

/* Append an empty step. */
static PlanStep *
add_step(RuleBuild *rb, PlanStepKind kind)
{
	PlanStep   *s;

	rb->steps = gdl_grow(rb->steps, rb->nsteps, &rb->capsteps, 8, sizeof(PlanStep));
	s = &rb->steps[rb->nsteps++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	return s;
}

/* Emit a MAP for the pending comparisons and assignments, if any. */
static void
flush_pending(RuleBuild *rb, bool is_head)
{
	PlanStep   *s;

	if (!is_head && rb->pending.n == 0 && !rb->pending_assign)
		return;
	s = add_step(rb, PSTEP_MAP);
	s->nfilters = rb->pending.n;
	s->filters = rb->pending.v;
	s->is_head = is_head;
	memset(&rb->pending, 0, sizeof(rb->pending));
	rb->pending_assign = false;
}

/*
 * Place literal l as the assignment of variable v (the other side is bound):
 * v is bound from now on, and a MAP must compute it.  Returns true (the
 * placement changed).
 */
static bool
place_assign(RuleBuild *rb, int l, int v)
{
	rb->rule->assign_lit[v] = l;
	rb->bound[v] = true;
	rb->placed[l] = true;
	rb->pending_assign = true;
	return true;
}

/* Place every comparison or assignment whose variables are now bound. */
static void
place_cmps(RuleBuild *rb)
{
	const GdlClause *c = rb->c;
	bool		changed = true;
	int			l;

	while (changed)
	{
		changed = false;
		for (l = 0; l < c->nbody; l++)
		{
			const GdlLiteral *lit = &c->body[l];
			bool		lb,
						rbd;

			if (rb->placed[l] || lit->kind != GDL_LIT_CMP)
				continue;
			lb = term_bound(lit->lhs, rb->bound);
			rbd = term_bound(lit->rhs, rb->bound);
			if (lb && rbd)
			{
				il_push(&rb->pending, l);
				rb->placed[l] = true;
				changed = true;
			}
			else if (lit->cmp == GDL_CMP_EQ && lit->lhs->kind == GDL_TERM_VAR && !lb && rbd)
				changed = place_assign(rb, l, lit->lhs->var);
			else if (lit->cmp == GDL_CMP_EQ && lit->rhs->kind == GDL_TERM_VAR && !rbd && lb)
				changed = place_assign(rb, l, lit->rhs->var);
		}
	}
}

/* Place every negated atom whose variables are bound (after a MAP flush). */
static void
place_negs(RuleBuild *rb)
{
	const GdlClause *c = rb->c;
	int			l,
				k;

	for (l = 0; l < c->nbody; l++)
	{
		const GdlLiteral *lit = &c->body[l];
		bool		ok = true;
		PlanStep   *s;

		if (rb->placed[l] || lit->kind != GDL_LIT_NEG)
			continue;
		for (k = 0; k < lit->atom.nargs; k++)
			if (!term_bound(lit->atom.args[k], rb->bound))
				ok = false;
		if (!ok)
			continue;
		flush_pending(rb, false);
		s = add_step(rb, PSTEP_ANTI);
		make_atom(&s->atom, lit, l, rb->info->lit_pred[l], PLAN_SRC_FULL, rb->c->nvars);
		rb->placed[l] = true;
	}
}

/* Which relation a positive atom reads in this version. */
static PlanSrc
atom_src(RuleBuild *rb, int l)
{
	int			p = rb->info->lit_pred[l];

	if (rb->rule->delta_lit < 0 || rb->pred_stratum[p] != rb->stratum)
		return PLAN_SRC_FULL;
	if (l == rb->rule->delta_lit)
		return PLAN_SRC_DELTA;
	return l < rb->rule->delta_lit ? PLAN_SRC_OLD : PLAN_SRC_FULL;
}

/* Score of joining positive literal l next: shared bound vars first. */
static int
atom_score(RuleBuild *rb, int l)
{
	const GdlAtom *at = &rb->c->body[l].atom;
	int			shared = 0,
				consts = 0,
				k;

	for (k = 0; k < at->nargs; k++)
	{
		const GdlTerm *t = at->args[k];

		if (t->kind == GDL_TERM_VAR && rb->bound[t->var])
			shared++;
		else if (t->kind != GDL_TERM_VAR && t->kind != GDL_TERM_ANON)
			consts++;
	}
	/* full relations of the own stratum are the big ones: later */
	return shared * 1000 + consts * 10 +
		(rb->pred_stratum[rb->info->lit_pred[l]] == rb->stratum ? 0 : 1);
}

/* Bind the named variables of an atom. */
static void
bind_atom(RuleBuild *rb, const GdlAtom *at)
{
	int			k;

	for (k = 0; k < at->nargs; k++)
		if (at->args[k]->kind == GDL_TERM_VAR)
			rb->bound[at->args[k]->var] = true;
}

/* Position of variable v in a layout, or -1. */
static int
layout_pos(const int *vars, int n, int v)
{
	int			i;

	for (i = 0; i < n; i++)
		if (vars[i] == v)
			return i;
	return -1;
}

/* Mark the variables step s reads. */
static void
step_uses(const RuleBuild *rb, const PlanStep *s, bool *mark)
{
	const GdlClause *c = rb->c;
	int			k;

	switch (s->kind)
	{
		case PSTEP_JOIN:
		case PSTEP_ANTI:
			for (k = 0; k < s->atom.nvars; k++)
				mark[s->atom.vars[k]] = true;
			break;
		case PSTEP_MAP:
			for (k = 0; k < s->nfilters; k++)
			{
				term_vars(c->body[s->filters[k]].lhs, mark);
				term_vars(c->body[s->filters[k]].rhs, mark);
			}
			if (s->is_head)
				for (k = 0; k < c->head.nargs; k++)
					term_vars(c->head.args[k], mark);
			break;
		default:
			break;
	}
}

/*
 * Close 'mark' over assignments: a variable computed by an assignment that
 * is not materialized needs the variables of its expression.
 */
static void
close_assign(const RuleBuild *rb, bool *mark)
{
	const GdlClause *c = rb->c;
	bool		changed = true;
	int			v;

	while (changed)
	{
		changed = false;
		for (v = 0; v < c->nvars; v++)
		{
			int			l = rb->rule->assign_lit[v];
			bool		sub[256];
			bool	   *m;
			int			w;

			if (!mark[v] || l < 0)
				continue;
			m = c->nvars <= 256 ? sub : gdl_alloc(sizeof(bool) * c->nvars);
			memset(m, 0, sizeof(bool) * c->nvars);
			term_vars(c->body[l].lhs, m);
			term_vars(c->body[l].rhs, m);
			for (w = 0; w < c->nvars; w++)
				if (m[w] && !mark[w])
				{
					mark[w] = true;
					changed = true;
				}
			if (m != sub)
				gdl_free(m);
		}
	}
}

/* Compute each step's output layout from what later steps need. */
static void
compute_layouts(RuleBuild *rb)
{
	const GdlClause *c = rb->c;
	int			nv = c->nvars,
				i,
				k,
				v,
				lastjoin,
				h0;
	bool	  **needed = gdl_alloc(sizeof(bool *) * rb->nsteps);
	bool	   *sorted_on_first = gdl_alloc(sizeof(bool) * rb->nsteps);
	bool	  **bound_after = gdl_alloc(sizeof(bool *) * rb->nsteps);
	bool	   *bound = gdl_alloc(sizeof(bool) * (nv > 0 ? nv : 1));

	/* variables bound after each step */
	for (i = 0; i < rb->nsteps; i++)
	{
		PlanStep   *s = &rb->steps[i];

		bound_after[i] = gdl_alloc(sizeof(bool) * (nv > 0 ? nv : 1));
		if (s->kind == PSTEP_START || s->kind == PSTEP_JOIN)
			for (k = 0; k < s->atom.nvars; k++)
				bound[s->atom.vars[k]] = true;
		if (s->kind == PSTEP_MAP)
		{
			bool		changed = true;

			/* assignments (possibly chained) computed by this MAP */
			while (changed)
			{
				changed = false;
				for (v = 0; v < nv; v++)
				{
					int			l = rb->rule->assign_lit[v];
					bool		was;

					if (l < 0 || bound[v])
						continue;
					/* the assigned variable itself is still unbound: test the other side */
					was = bound[v];
					bound[v] = true;
					if (term_bound(c->body[l].lhs, bound) && term_bound(c->body[l].rhs, bound))
						changed = true;
					else
						bound[v] = was;
				}
			}
		}
		memcpy(bound_after[i], bound, sizeof(bool) * nv);
	}
	/* variables needed after each step */
	for (i = rb->nsteps - 1; i >= 0; i--)
	{
		needed[i] = gdl_alloc(sizeof(bool) * (nv > 0 ? nv : 1));
		if (i == rb->nsteps - 1)
		{
			if (rb->rule->is_agg)
				for (v = 0; v < nv; v++)
					needed[i][v] = true;
			continue;
		}
		memcpy(needed[i], needed[i + 1], sizeof(bool) * nv);
		step_uses(rb, &rb->steps[i + 1], needed[i]);
		if (rb->steps[i + 1].kind == PSTEP_MAP)
			close_assign(rb, needed[i]);
	}
	/*
	 * The last join's output is deduplicated next; when its left input is
	 * sorted on the head's first variable the output comes grouped by it,
	 * which dedups per group (cheap).  Put that variable first in the left
	 * layout and sort the left input (dedup) if it is not a stored set.
	 */
	lastjoin = -1;
	h0 = -1;
	for (i = 0; i < rb->nsteps; i++)
		if (rb->steps[i].kind == PSTEP_JOIN)
			lastjoin = i;
	if (!rb->rule->is_agg && c->head.nargs > 0 && c->head.args[0]->kind == GDL_TERM_VAR)
		h0 = c->head.args[0]->var;
	/* layouts */
	for (i = 0; i < rb->nsteps; i++)
	{
		PlanStep   *s = &rb->steps[i];
		PlanStep   *prev = i > 0 ? &rb->steps[i - 1] : NULL;
		IntList		lay = {0};

		switch (s->kind)
		{
			case PSTEP_UNIT:
				break;
			case PSTEP_START:
				for (k = 0; k < s->atom.nvars; k++)
					il_push(&lay, s->atom.vars[k]);
				break;
			case PSTEP_ANTI:
				for (k = 0; k < prev->nvars; k++)
					il_push(&lay, prev->vars[k]);
				break;
			case PSTEP_JOIN:
				for (k = 0; k < prev->nvars; k++)
					if (needed[i][prev->vars[k]])
						il_push(&lay, prev->vars[k]);
				for (k = 0; k < s->atom.nvars; k++)
					if (needed[i][s->atom.vars[k]] &&
						layout_pos(prev->vars, prev->nvars, s->atom.vars[k]) < 0)
						il_push(&lay, s->atom.vars[k]);
				break;
			case PSTEP_MAP:
				if (s->is_head && !rb->rule->is_agg)
				{
					for (k = 0; k < c->head.nargs; k++)
						il_push(&lay, -1);
					break;
				}
				for (v = 0; v < nv; v++)
					if (bound_after[i][v] && (needed[i][v] || (s->is_head && rb->rule->is_agg)))
						il_push(&lay, v);
				break;
		}
		if (i == lastjoin - 1 && h0 >= 0 && (s->kind == PSTEP_JOIN || s->kind == PSTEP_MAP) &&
			!s->is_head)
		{
			int			p = layout_pos(lay.v, lay.n, h0);

			if (p > 0)
			{
				memmove(lay.v + 1, lay.v, sizeof(int) * p);
				lay.v[0] = h0;
			}
		}
		if (i == lastjoin && h0 >= 0 && prev->nvars > 0 && prev->vars[0] == h0 &&
			(prev->kind == PSTEP_JOIN || prev->kind == PSTEP_MAP))
			s->sort_left = true;	/* cheap when already grouped; drops duplicates */
		s->nvars = lay.n;
		s->vars = lay.v;
		/* is the output sorted on its first column (known statically)? */
		switch (s->kind)
		{
			case PSTEP_START:
				sorted_on_first[i] = s->atom.trivial || s->atom.sorted;
				break;
			case PSTEP_ANTI:
				sorted_on_first[i] = sorted_on_first[i - 1];
				break;
			case PSTEP_MAP:
			case PSTEP_JOIN:
				sorted_on_first[i] = prev && sorted_on_first[i - 1] && s->nvars > 0 &&
					prev->nvars > 0 && s->vars[0] == prev->vars[0] && s->vars[0] >= 0;
				break;
			default:
				sorted_on_first[i] = false;
		}
		if (s->sort_left)
			sorted_on_first[i] = s->nvars > 0 && s->vars[0] == prev->vars[0];
		/* keys and sources of a join / anti-join */
		if (s->kind == PSTEP_JOIN || s->kind == PSTEP_ANTI)
		{
			IntList		lk = {0},
						rk = {0};

			for (k = 0; k < s->atom.nvars; k++)
			{
				int			p = layout_pos(prev->vars, prev->nvars, s->atom.vars[k]);

				if (p >= 0)
				{
					il_push(&lk, p);
					il_push(&rk, k);
				}
				else if (s->kind == PSTEP_ANTI)
					gdl_error(GDL_ERR_INTERNAL, NULL, NULL,
							  "negated atom variable not bound in plan");
			}
			s->nkeys = lk.n;
			s->lkeys = lk.v;
			s->rkeys = rk.v;
		}
		if (s->kind == PSTEP_JOIN)
		{
			s->refs = gdl_alloc(sizeof(PlanColRef) * (s->nvars > 0 ? s->nvars : 1));
			for (k = 0; k < s->nvars; k++)
			{
				int			p = layout_pos(prev->vars, prev->nvars, s->vars[k]);

				if (p >= 0)
				{
					s->refs[k].side = 0;
					s->refs[k].col = p;
				}
				else
				{
					s->refs[k].side = 1;
					s->refs[k].col = layout_pos(s->atom.vars, s->atom.nvars, s->vars[k]);
				}
			}
		}
	}
	for (i = 0; i < rb->nsteps; i++)
	{
		gdl_free(needed[i]);
		gdl_free(bound_after[i]);
	}
	gdl_free(needed);
	gdl_free(sorted_on_first);
	gdl_free(bound_after);
	gdl_free(bound);
}

/*
 * When the head is plain variables computed by the last JOIN, let that join
 * write the head tuples (in head order) and drop the projection: it saves a
 * pass over the largest intermediate of a round.
 */
static void
fold_head(RuleBuild *rb)
{
	const GdlClause *c = rb->c;
	const GdlPred *hp = &rb->a->preds[rb->rule->head_pred];
	PlanStep   *map,
			   *join;
	PlanColRef *refs;
	int		   *vars;
	int			k,
				n = rb->rule->nsteps;

	if (rb->rule->is_agg || n < 2)
		return;
	map = &rb->rule->steps[n - 1];
	join = &rb->rule->steps[n - 2];
	if (map->kind != PSTEP_MAP || !map->is_head || map->nfilters > 0 || join->kind != PSTEP_JOIN)
		return;
	refs = gdl_alloc(sizeof(PlanColRef) * (c->head.nargs > 0 ? c->head.nargs : 1));
	vars = gdl_alloc(sizeof(int) * (c->head.nargs > 0 ? c->head.nargs : 1));
	for (k = 0; k < c->head.nargs; k++)
	{
		const GdlTerm *t = c->head.args[k];
		int			p;
		GdlType		vt,
					ht;

		if (t->kind != GDL_TERM_VAR)
			break;
		p = layout_pos(join->vars, join->nvars, t->var);
		vt = rb->info->var_types ? rb->info->var_types[t->var] : GDL_TYPE_BIGINT;
		ht = hp->types ? hp->types[k] : GDL_TYPE_BIGINT;
		if (p < 0 || ((vt == GDL_TYPE_FLOAT8) != (ht == GDL_TYPE_FLOAT8)))
			break;
		refs[k] = join->refs[p];
		vars[k] = t->var;
	}
	if (k < c->head.nargs)
	{
		gdl_free(refs);
		gdl_free(vars);
		return;
	}
	join->refs = refs;
	join->vars = vars;
	join->nvars = c->head.nargs;
	rb->rule->nsteps = n - 1;
	rb->rule->head_in_join = true;
}

/* Does the clause's head hold an aggregate? */
static bool
head_has_agg(const GdlClause *c)
{
	int			k;

	for (k = 0; k < c->head.nargs; k++)
		if (c->head.args[k]->kind == GDL_TERM_AGG)
			return true;
	return false;
}

/* The head's first variable (its output groups by it), or -1. */
static int
grouping_var(RuleBuild *rb)
{
	const GdlClause *c = rb->c;

	if (head_has_agg(c) || c->head.nargs == 0 || c->head.args[0]->kind != GDL_TERM_VAR)
		return -1;
	return c->head.args[0]->var;
}

/* Does atom at hold variable v? */
static bool
atom_has_var(const GdlAtom *at, int v)
{
	int			k;

	for (k = 0; k < at->nargs; k++)
		if (at->args[k]->kind == GDL_TERM_VAR && at->args[k]->var == v)
			return true;
	return false;
}

/*
 * A delta version whose delta atom does not start with the head's first
 * variable h0 derives tuples in no useful order.  Starting instead from an
 * atom of a lower stratum (unchanged during the fixpoint) that holds h0 and
 * shares a variable with the delta atom, read sorted by h0, makes the
 * output come grouped by h0 (cheap dedup) and needs no per-round sort: the
 * sorted copy is made once.  Returns that atom's literal, or -1.
 */
static int
grouping_driver(RuleBuild *rb, int h0)
{
	const GdlClause *c = rb->c;
	const GdlAtom *dat = &c->body[rb->rule->delta_lit].atom;
	int			l,
				k;

	if (dat->nargs > 0 && dat->args[0]->kind == GDL_TERM_VAR && dat->args[0]->var == h0)
		return -1;
	for (l = 0; l < c->nbody; l++)
	{
		const GdlAtom *at = &c->body[l].atom;
		bool		shares = false;

		if (c->body[l].kind != GDL_LIT_ATOM || l == rb->rule->delta_lit ||
			rb->pred_stratum[rb->info->lit_pred[l]] == rb->stratum || !atom_has_var(at, h0))
			continue;
		for (k = 0; k < at->nargs; k++)
			if (at->args[k]->kind == GDL_TERM_VAR && atom_has_var(dat, at->args[k]->var))
				shares = true;
		if (shares)
			return l;
	}
	return -1;
}

/* Read a prepared atom with variable v as its first column, sorted. */
static void
sort_atom_by(PlanAtom *pa, int v)
{
	int			p,
				col;

	for (p = 0; p < pa->nvars; p++)
		if (pa->vars[p] == v)
			break;
	if (p == pa->nvars)
		return;
	if (p == 0 && pa->trivial)
		return;					/* a stored set is sorted on its first column */
	col = pa->cols[p];
	memmove(pa->vars + 1, pa->vars, sizeof(int) * p);
	memmove(pa->cols + 1, pa->cols, sizeof(int) * p);
	pa->vars[0] = v;
	pa->cols[0] = col;
	pa->trivial = false;
	pa->sorted = true;
}

/* Build one version of clause ci (delta_lit -1: every atom reads full). */
static void
build_rule(const GdlAnalysis *a, int *pred_stratum, int stratum, int ci, int delta_lit,
		   PlanRule *rule)
{
	const GdlClauseInfo *info = &a->clauses[ci];
	const GdlClause *c = info->clause;
	RuleBuild	rb;
	int			nv = c->nvars,
				l,
				v;

	memset(rule, 0, sizeof(*rule));
	rb = (RuleBuild)
	{
		.a = a, .info = info, .c = c, .stratum = stratum, .pred_stratum = pred_stratum, .rule = rule
	};
	rb.bound = gdl_alloc(sizeof(bool) * (nv > 0 ? nv : 1));
	rb.placed = gdl_alloc(sizeof(bool) * (c->nbody > 0 ? c->nbody : 1));
	rule->clause = ci;
	rule->delta_lit = delta_lit;
	rule->head_pred = info->head_pred;
	rule->is_agg = head_has_agg(c);
	rule->assign_lit = gdl_alloc(sizeof(int) * (nv > 0 ? nv : 1));
	for (v = 0; v < nv; v++)
		rule->assign_lit[v] = -1;

	/* start */
	{
		int			first = delta_lit,
					best = -1;

		if (first < 0)
			for (l = 0; l < c->nbody; l++)
				if (c->body[l].kind == GDL_LIT_ATOM)
				{
					int			sc = atom_score(&rb, l);

					if (first < 0 || sc > best)
					{
						first = l;
						best = sc;
					}
				}
		int			h0 = grouping_var(&rb);
		int			drv = delta_lit >= 0 && h0 >= 0 ? grouping_driver(&rb, h0) : -1;
		bool		sort_delta = false;

		if (drv >= 0)
			first = drv;
		else if (delta_lit >= 0 && h0 >= 0 && c->nbody > 1 &&
				 atom_has_var(&c->body[delta_lit].atom, h0))
			sort_delta = true;	/* the delta itself, read sorted by h0 */
		if (first >= 0)
		{
			PlanStep   *s = add_step(&rb, PSTEP_START);

			make_atom(&s->atom, &c->body[first], first, info->lit_pred[first],
					  atom_src(&rb, first), nv);
			if (drv >= 0 || sort_delta)
				sort_atom_by(&s->atom, h0);
			bind_atom(&rb, &c->body[first].atom);
			rb.placed[first] = true;
		}
		else
			add_step(&rb, PSTEP_UNIT);
	}
	/* joins, with comparisons and negations as early as possible */
	for (;;)
	{
		int			next = -1,
					best = -1;

		place_cmps(&rb);
		place_negs(&rb);
		for (l = 0; l < c->nbody; l++)
			if (!rb.placed[l] && c->body[l].kind == GDL_LIT_ATOM)
			{
				int			sc = atom_score(&rb, l);

				if (sc > best)
				{
					next = l;
					best = sc;
				}
			}
		if (next < 0)
			break;
		flush_pending(&rb, false);
		{
			PlanStep   *s = add_step(&rb, PSTEP_JOIN);

			make_atom(&s->atom, &c->body[next], next, info->lit_pred[next],
					  atom_src(&rb, next), nv);
			bind_atom(&rb, &c->body[next].atom);
			rb.placed[next] = true;
		}
	}
	for (l = 0; l < c->nbody; l++)
		if (!rb.placed[l])
			gdl_error(GDL_ERR_UNSAFE, NULL, NULL,
					  "cannot order the body of rule \"%s\": a variable is never bound",
					  c->text ? c->text : c->head.name);
	for (l = 0; l < c->head.nargs; l++)
		if (!term_bound(c->head.args[l], rb.bound))
			gdl_error(GDL_ERR_UNSAFE, NULL, NULL,
					  "head variable of rule \"%s\" is not bound by its body",
					  c->text ? c->text : c->head.name);
	flush_pending(&rb, true);
	rule->nsteps = rb.nsteps;
	rule->steps = rb.steps;
	compute_layouts(&rb);
	fold_head(&rb);
	gdl_free(rb.bound);
	gdl_free(rb.placed);
}

/* Whether a clause is a fact whose arguments are all constants. */
static bool
is_const_fact(const GdlClause *c)
{
	int			k;

	if (c->nbody != 0)
		return false;
	for (k = 0; k < c->head.nargs; k++)
		if (!plan_term_is_const(c->head.args[k]))
			return false;
	return true;
}

/* The type of a term of a clause (variables from the analysis). */
static GdlType
term_type(const GdlClauseInfo *info, const GdlTerm *t)
{
	switch (t->kind)
	{
		case GDL_TERM_VAR:
			return info->var_types ? info->var_types[t->var] : GDL_TYPE_BIGINT;
		case GDL_TERM_TEXT:
			return GDL_TYPE_TEXT;
		case GDL_TERM_FLOAT:
			return GDL_TYPE_FLOAT8;
		case GDL_TERM_BOOL:
			return GDL_TYPE_BOOL;
		case GDL_TERM_AGG:
			return t->arg ? term_type(info, t->arg) : GDL_TYPE_BIGINT;
		default:
			return GDL_TYPE_BIGINT;
	}
}

/* Does the clause compare text by order, or take min/max of text? */
static bool
clause_needs_ranks(const GdlClauseInfo *info)
{
	const GdlClause *c = info->clause;
	int			l,
				k;

	for (l = 0; l < c->nbody; l++)
	{
		const GdlLiteral *lit = &c->body[l];

		if (lit->kind == GDL_LIT_CMP && lit->cmp != GDL_CMP_EQ && lit->cmp != GDL_CMP_NE &&
			(term_type(info, lit->lhs) == GDL_TYPE_TEXT || term_type(info, lit->rhs) == GDL_TYPE_TEXT))
			return true;
	}
	for (k = 0; k < c->head.nargs; k++)
	{
		const GdlTerm *t = c->head.args[k];

		if (t->kind == GDL_TERM_AGG && (t->agg == GDL_AGG_MIN || t->agg == GDL_AGG_MAX) &&
			term_type(info, t) == GDL_TYPE_TEXT)
			return true;
	}
	return false;
}

/* Compile an analysed program into a plan. */
GdlPlan *
gdl_plan_compile(const GdlAnalysis *a)
{
	GdlPlan    *plan = gdl_alloc(sizeof(GdlPlan));
	int			s,
				i,
				p,
				l;

	plan->a = a;
	plan->nstrata = a->nstrata;
	plan->strata = gdl_alloc(sizeof(PlanStratum) * (a->nstrata > 0 ? a->nstrata : 1));
	plan->pred_stratum = gdl_alloc(sizeof(int) * (a->npreds > 0 ? a->npreds : 1));
	for (p = 0; p < a->npreds; p++)
		plan->pred_stratum[p] = -1;
	for (s = 0; s < a->nstrata; s++)
		for (i = 0; i < a->strata[s].npreds; i++)
			plan->pred_stratum[a->strata[s].preds[i]] = s;

	for (s = 0; s < a->nstrata; s++)
	{
		const GdlStratum *st = &a->strata[s];
		PlanStratum *ps = &plan->strata[s];
		IntList		facts = {0};
		int			ninit = 0,
					nrec = 0;

		ps->index = s;
		ps->npreds = st->npreds;
		ps->preds = st->preds;
		ps->recursive = st->recursive;
		ps->init = gdl_alloc(sizeof(PlanRule) * (st->nclauses > 0 ? st->nclauses : 1));
		/* count delta versions first */
		for (i = 0; i < st->nclauses; i++)
		{
			const GdlClauseInfo *info = &a->clauses[st->clauses[i]];

			for (l = 0; l < info->clause->nbody; l++)
				if (info->clause->body[l].kind == GDL_LIT_ATOM &&
					plan->pred_stratum[info->lit_pred[l]] == s)
					nrec++;
		}
		ps->rec = gdl_alloc(sizeof(PlanRule) * (nrec > 0 ? nrec : 1));
		nrec = 0;
		for (i = 0; i < st->nclauses; i++)
		{
			int			ci = st->clauses[i];
			const GdlClauseInfo *info = &a->clauses[ci];
			const GdlClause *c = info->clause;
			bool		rec = false;

			if (clause_needs_ranks(info))
				plan->needs_ranks = true;
			if (is_const_fact(c))
			{
				il_push(&facts, ci);
				continue;
			}
			for (l = 0; l < c->nbody; l++)
				if (c->body[l].kind == GDL_LIT_ATOM && plan->pred_stratum[info->lit_pred[l]] == s)
				{
					if (head_has_agg(c))
						gdl_error(GDL_ERR_STRATIFY, NULL, NULL,
								  "aggregate rule \"%s\" depends on its own stratum",
								  c->text ? c->text : c->head.name);
					build_rule(a, plan->pred_stratum, s, ci, l, &ps->rec[nrec++]);
					rec = true;
				}
			if (!rec)
				build_rule(a, plan->pred_stratum, s, ci, -1, &ps->init[ninit++]);
		}
		ps->ninit = ninit;
		ps->nrec = nrec;
		plan_mark_mirrors(a, ps);
		ps->nfacts = facts.n;
		ps->facts = facts.v;
		if (nrec > 0)
			ps->recursive = true;
	}
	return plan;
}

/* The analysis a plan was compiled from. */
const GdlAnalysis *
gdl_plan_analysis(const GdlPlan *p)
{
	return p->a;
}
