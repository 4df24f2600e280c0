/*
 * maint_unfold.c — a maintained target's rules over base tables and the
 * target only, by unfolding the other derived predicates they read.
 *
 * A body atom p(t1, ..., tn) of a derived predicate p other than the target
 * is replaced, once per rule p(s1, ..., sn) :- B of p, by B with B's
 * variables renamed apart and each si unified with ti (a variable takes the
 * other side's term; two non-variables become an equality).  Unfolding
 * keeps the relation the rules derive, so the delta rules of maint_sql.c
 * then see only base tables and the target: a view-like predicate, a chain
 * of them, or a predicate mutually recursive with the target through the
 * target itself (even/odd) are maintained incrementally.  It stops with a
 * reason when a predicate recurses apart from the target (unfolding would
 * not end), aggregates, or would give more than MAX_UNFOLDED rules, and
 * never unfolds into an aggregating rule (its aggregate is over its own
 * bindings).
 */
#include "maint/gpudl_maint.h"

#include "miscadmin.h"

#define MAX_UNFOLDED 256

/* A clause being unfolded: the AST, the predicate and assignment flag per literal. */
typedef struct Unfolded
{
	GdlClause  *clause;
	int		   *lit_pred;
	bool	   *lit_assigns;
} Unfolded;

/*
 * Does predicate 'from' reach predicate 'to' through the rules of derived
 * predicates, passing neither through 'avoid' (-1: none) nor through
 * predicates read from a table (tables, when given)?
 */
bool
gpudl_maint_reaches(const GdlAnalysis *a, int from, int to, int avoid, GpudlMaintTable **tables)
{
	bool	   *seen = palloc0(sizeof(bool) * (a->npreds + 1));
	List	   *todo = list_make1_int(from);

	while (todo != NIL)
	{
		int			x = linitial_int(todo);
		int			i,
					l;

		todo = list_delete_first(todo);
		for (i = 0; i < a->preds[x].nclauses; i++)
		{
			const GdlClauseInfo *info = &a->clauses[a->preds[x].clauses[i]];

			for (l = 0; l < info->clause->nbody; l++)
			{
				int			lp = info->lit_pred[l];

				if (lp == to)
					return true;
				if (lp < 0 || seen[lp] || lp == avoid || a->preds[lp].is_edb ||
					(tables != NULL && tables[lp] != NULL))
					continue;
				seen[lp] = true;
				todo = lappend_int(todo, lp);
			}
		}
	}
	return false;
}

/* Follow a variable's bindings to the term it stands for. */
static GdlTerm *
resolve(GdlTerm *t, GdlTerm **subst)
{
	while (t->kind == GDL_TERM_VAR && subst[t->var] != NULL)
		t = subst[t->var];
	return t;
}

/* t with the variables of clause space shifted by 'shift' (D's variables renamed apart). */
static GdlTerm *
shift_term(const GdlTerm *t, int shift)
{
	GdlTerm    *copy;

	if (t == NULL)
		return NULL;
	copy = palloc(sizeof(GdlTerm));
	*copy = *t;
	if (t->kind == GDL_TERM_VAR)
		copy->var += shift;
	copy->left = shift_term(t->left, shift);
	copy->right = shift_term(t->right, shift);
	copy->arg = shift_term(t->arg, shift);
	return copy;
}

/* t with every bound variable replaced by its term. */
static GdlTerm *
apply_subst(GdlTerm *t, GdlTerm **subst)
{
	GdlTerm    *copy;

	if (t == NULL)
		return NULL;
	t = resolve(t, subst);
	if (t->kind == GDL_TERM_VAR || t->kind == GDL_TERM_ANON)
		return t;
	copy = palloc(sizeof(GdlTerm));
	*copy = *t;
	copy->left = apply_subst(t->left, subst);
	copy->right = apply_subst(t->right, subst);
	copy->arg = apply_subst(t->arg, subst);
	return copy;
}

/* Copy an atom's arguments through a term function. */
static void
copy_atom(GdlAtom *dst, const GdlAtom *src, int shift, GdlTerm **subst)
{
	int			k;

	*dst = *src;
	dst->args = palloc(sizeof(GdlTerm *) * (src->nargs + 1));
	for (k = 0; k < src->nargs; k++)
		dst->args[k] = subst ? apply_subst(src->args[k], subst) : shift_term(src->args[k], shift);
}

/*
 * Clause u with its body literal 'lit' (a positive atom of a derived
 * predicate) replaced by the body of that predicate's rule d.
 */
static Unfolded *
unfold_one(const Unfolded *u, int lit, const GdlClauseInfo *d)
{
	const GdlClause *c = u->clause;
	const GdlClause *dc = d->clause;
	const GdlAtom *call = &c->body[lit].atom;
	int			nvars = c->nvars + dc->nvars;
	int			shift = c->nvars;
	int			maxlits = c->nbody - 1 + dc->nbody + dc->head.nargs;
	GdlTerm   **subst = palloc0(sizeof(GdlTerm *) * (nvars + 1));
	GdlLiteral *lits = palloc0(sizeof(GdlLiteral) * (maxlits + 1));
	int		   *lit_pred = palloc0(sizeof(int) * (maxlits + 1));
	bool	   *lit_assigns = palloc0(sizeof(bool) * (maxlits + 1));
	GdlTerm   **eq_left = palloc0(sizeof(GdlTerm *) * (dc->head.nargs + 1));
	GdlTerm   **eq_right = palloc0(sizeof(GdlTerm *) * (dc->head.nargs + 1));
	Unfolded   *out = palloc0(sizeof(Unfolded));
	GdlClause  *nc = palloc0(sizeof(GdlClause));
	int			neq = 0,
				n = 0,
				k,
				l;

	/* unify the call's arguments with the rule's head, renamed apart */
	for (k = 0; k < call->nargs; k++)
	{
		GdlTerm    *x = resolve(call->args[k], subst);
		GdlTerm    *y = resolve(shift_term(dc->head.args[k], shift), subst);

		if (x->kind == GDL_TERM_ANON || y->kind == GDL_TERM_ANON)
			continue;
		if (x->kind == GDL_TERM_VAR && y->kind == GDL_TERM_VAR && x->var == y->var)
			continue;
		if (y->kind == GDL_TERM_VAR)
			subst[y->var] = x;
		else if (x->kind == GDL_TERM_VAR)
			subst[x->var] = y;
		else
		{
			eq_left[neq] = x;
			eq_right[neq++] = y;
		}
	}

	/* the clause's other literals, then the rule's body, then the equalities */
	for (l = 0; l < c->nbody + dc->nbody; l++)
	{
		const GdlLiteral *src = l < c->nbody ? &c->body[l] : &dc->body[l - c->nbody];
		GdlLiteral *dst = &lits[n];

		if (l == lit)
			continue;
		*dst = *src;
		if (src->kind == GDL_LIT_CMP)
		{
			dst->lhs = apply_subst(l < c->nbody ? src->lhs : shift_term(src->lhs, shift), subst);
			dst->rhs = apply_subst(l < c->nbody ? src->rhs : shift_term(src->rhs, shift), subst);
		}
		else
		{
			GdlAtom		shifted;

			copy_atom(&shifted, &src->atom, l < c->nbody ? 0 : shift, NULL);
			copy_atom(&dst->atom, &shifted, 0, subst);
		}
		lit_pred[n] = l < c->nbody ? u->lit_pred[l] : d->lit_pred[l - c->nbody];
		lit_assigns[n] = l < c->nbody ? u->lit_assigns[l]
			: (d->lit_assigns != NULL && d->lit_assigns[l - c->nbody]);
		n++;
	}
	for (k = 0; k < neq; k++)
	{
		lits[n].kind = GDL_LIT_CMP;
		lits[n].cmp = GDL_CMP_EQ;
		lits[n].lhs = apply_subst(eq_left[k], subst);
		lits[n].rhs = apply_subst(eq_right[k], subst);
		lit_pred[n++] = -1;
	}

	*nc = *c;
	copy_atom(&nc->head, &c->head, 0, subst);
	nc->nbody = n;
	nc->body = lits;
	nc->nvars = nvars;
	nc->varnames = palloc0(sizeof(char *) * (nvars + 1));
	for (k = 0; k < nvars; k++)
		nc->varnames[k] = k < c->nvars ? c->varnames[k] : psprintf("%s_%d", dc->varnames[k - shift], shift);
	out->clause = nc;
	out->lit_pred = lit_pred;
	out->lit_assigns = lit_assigns;
	return out;
}

/*
 * Set mp->clauses to the target's rules with every positive atom of
 * another derived predicate unfolded.  Returns NULL, or why the rules
 * cannot be unfolded (mp->clauses are then the target's own rules).
 */
const char *
gpudl_maint_unfold(GpudlMaintPlan *mp)
{
	const GdlAnalysis *a = mp->analysis;
	List	   *todo = NIL;
	List	   *done = NIL;
	ListCell   *lc;
	int			i;

	for (i = 0; i < mp->nclauses; i++)
	{
		Unfolded   *u = palloc0(sizeof(Unfolded));
		const GdlClauseInfo *info = mp->clauses[i];

		u->clause = info->clause;
		u->lit_pred = info->lit_pred;
		u->lit_assigns = palloc0(sizeof(bool) * (info->clause->nbody + 1));
		if (info->lit_assigns)
			memcpy(u->lit_assigns, info->lit_assigns, sizeof(bool) * info->clause->nbody);
		todo = lappend(todo, u);
	}
	while (todo != NIL)
	{
		Unfolded   *u = linitial(todo);
		int			lit = -1,
					l;

		todo = list_delete_first(todo);
		CHECK_FOR_INTERRUPTS();
		for (l = 0; l < u->clause->nbody && lit < 0; l++)
		{
			int			lp = u->lit_pred[l];

			if (u->clause->body[l].kind == GDL_LIT_ATOM && lp >= 0 && lp != mp->pred &&
				mp->tables[lp] == NULL)
				lit = l;
		}
		if (lit < 0)
		{
			done = lappend(done, u);
			continue;
		}
		{
			int			p = u->lit_pred[lit];

			/* an aggregate is over its own rule's bindings: unfolded, one rule would become several */
			if (mp->group_cols != NULL)
				return psprintf("its aggregating rules read the derived predicate \"%s\"%s", a->preds[p].name,
								gpudl_maint_reaches(a, p, mp->pred, -1, NULL) ? "" : gpudl_maint_held_hint(mp, p));
			if (a->preds[p].has_agg)
				return psprintf("its rules read \"%s\", which aggregates", a->preds[p].name);
			if (gpudl_maint_reaches(a, p, p, mp->pred, mp->tables))
				return psprintf("its rules read \"%s\", which is recursive apart from \"%s\"%s",
								a->preds[p].name, a->preds[mp->pred].name,
								gpudl_maint_reaches(a, p, mp->pred, -1, NULL) ? "" : gpudl_maint_held_hint(mp, p));
			for (i = 0; i < a->preds[p].nclauses; i++)
				todo = lappend(todo, unfold_one(u, lit, &a->clauses[a->preds[p].clauses[i]]));
		}
		if (list_length(todo) + list_length(done) > MAX_UNFOLDED)
			return psprintf("unfolding the derived predicates its rules read gives more than %d rules",
							MAX_UNFOLDED);
	}

	/* the unfolded rules replace the target's own */
	mp->nclauses = 0;
	mp->clauses = palloc0(sizeof(GdlClauseInfo *) * (list_length(done) + 1));
	foreach(lc, done)
	{
		Unfolded   *u = lfirst(lc);
		GdlClauseInfo *info = palloc0(sizeof(GdlClauseInfo));

		info->clause = u->clause;
		info->head_pred = mp->pred;
		info->lit_pred = u->lit_pred;
		info->lit_assigns = u->lit_assigns;
		mp->clauses[mp->nclauses++] = info;
	}
	return NULL;
}
