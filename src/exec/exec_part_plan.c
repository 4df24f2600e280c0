/*
 * exec_part_plan.c — how each rule version runs partitioned (issue 14).
 *
 * A rule version runs in every partition on that partition's part of its
 * MAIN atom (the delta atom of a semi-naive version, else its first atom),
 * and gives exactly the rule's answer over all partitions when every atom
 * it reads is either
 *   - partitioned on the same variable V (at whatever column V stands in
 *     that atom): then every binding with V = v meets all its tuples in the
 *     partition that owns v, and nowhere else; or
 *   - replicated (complete in every partition).
 * Negated atoms obey the same rule (an anti-join sees every row that could
 * match) as long as some POSITIVE atom is partitioned (so a binding is made
 * in one partition only).  When no positive atom is partitioned every atom
 * is read replicated and the version runs in partition 0 only.
 *
 * V is one of the main atom's variables, chosen to replicate as little as
 * possible: replicating the main atom costs most, then derived relations of
 * the stratum, then large tables; tables under the replication threshold
 * cost nothing (they are replicated anyway).  A tie goes to the V that
 * leaves derived tuples in the partition that derives them (no exchange).
 * Two atoms reading the same relation version of one predicate (same
 * predicate and source) must use one layout, so when they would want
 * different keys both are replicated (SG's two edge atoms).
 */
#include "exec_part_int.h"

#include <string.h>

/* The predicate column where variable v stands in a prepared atom, or -1. */
static int
atom_col(const PlanAtom *pa, int v)
{
	int			k;

	for (k = 0; k < pa->nvars; k++)
		if (pa->vars[k] == v)
			return pa->cols[k];
	return -1;
}

static bool
has_atom(const PlanStep *s)
{
	return s->kind == PSTEP_START || s->kind == PSTEP_JOIN || s->kind == PSTEP_ANTI;
}

/* An extensional table under the replication threshold. */
static bool
small_table(PartRun *pr, int pid)
{
	return pr->a->preds[pid].is_edb && pr->preds[pid].nrows < pr->min_rows;
}

/* Cost of replicating an atom's relation. */
static int
replicate_cost(PartRun *pr, int pid)
{
	if (pr->preds[pid].in_stratum)
		return 100;
	if (small_table(pr, pid))
		return 0;
	return 10;
}

/*
 * The step of a rule version whose atom should be split over the
 * partitions: the delta atom of a semi-naive version (the planner may
 * start from another atom, sorted for grouping), else the starting atom;
 * -1 when the body has no positive atom.
 */
int
part_main_step(const PlanRule *r)
{
	int			i;

	for (i = 0; i < r->nsteps && r->delta_lit >= 0; i++)
		if (has_atom(&r->steps[i]) && r->steps[i].atom.lit == r->delta_lit)
			return i;
	return r->nsteps > 0 && r->steps[0].kind == PSTEP_START ? 0 : -1;
}

/* Layout keys of every atom step when the partition variable is v; returns the cost. */
static int
keys_for(PartRun *pr, const PlanRule *r, int main, int v, int *key)
{
	int			i,
				j,
				cost = 0;
	bool	   *clash = gdl_alloc(sizeof(bool) * (r->nsteps + 1));

	for (i = 0; i < r->nsteps; i++)
	{
		const PlanStep *s = &r->steps[i];

		key[i] = -1;
		if (!has_atom(s))
			continue;
		key[i] = atom_col(&s->atom, v);
		if (i != main && key[i] >= 0 && small_table(pr, s->atom.pred))
			key[i] = -1;
	}
	/* one layout per (predicate, source) in a rule */
	for (i = 0; i < r->nsteps; i++)
		for (j = 0; j < r->nsteps; j++)
			if (i != j && has_atom(&r->steps[i]) && has_atom(&r->steps[j]) &&
				r->steps[i].atom.pred == r->steps[j].atom.pred &&
				r->steps[i].atom.src == r->steps[j].atom.src && key[i] != key[j])
				clash[i] = true;
	for (i = 0; i < r->nsteps; i++)
	{
		if (clash[i])
			key[i] = -1;
		if (has_atom(&r->steps[i]) && key[i] < 0)
			cost += i == main ? 1000 : replicate_cost(pr, r->steps[i].atom.pred);
	}
	gdl_free(clash);
	return cost;
}

/*
 * Choose the partition variable of a rule version and its atoms' layouts;
 * head_key is the head predicate's primary key when known (-1: not yet).
 */
void
part_bind_rule(PartRun *pr, const PlanStratum *ps, const PlanRule *r, int head_key, PartBind *b)
{
	int		   *tmp = gdl_alloc(sizeof(int) * (r->nsteps + 1));
	int			main = part_main_step(r);
	int			best = -1,
				k,
				i;

	b->key = gdl_alloc(sizeof(int) * (r->nsteps + 1));
	b->var = -1;
	b->all_parts = false;
	for (i = 0; i < r->nsteps; i++)
		b->key[i] = -1;
	if (main >= 0)
	{
		const PlanAtom *da = &r->steps[main].atom;

		const GdlClause *c = pr->a->clauses[r->clause].clause;

		for (k = 0; k < da->nvars; k++)
		{
			int			cost = keys_for(pr, r, main, da->vars[k], tmp);
			int			h;

			/*
			 * a tie goes to the variable that keeps derived tuples where
			 * they are: at the head's primary key when known, else (a
			 * recursive version) where the driver is keyed
			 */
			if (head_key >= 0 || r->head_pred == da->pred)
			{
				for (h = 0; h < c->head.nargs; h++)
					if (c->head.args[h]->kind == GDL_TERM_VAR && c->head.args[h]->var == da->vars[k])
						break;
				if (h != (head_key >= 0 ? head_key : tmp[main]))
					cost++;
			}

			if (best < 0 || cost < best)
			{
				best = cost;
				b->var = da->vars[k];
				memcpy(b->key, tmp, sizeof(int) * r->nsteps);
			}
		}
	}
	/*
	 * a binding is made in one partition only when a POSITIVE atom is
	 * partitioned; else every partition would make all of them and a
	 * partitioned negated atom would remove only its part: all replicated
	 */
	for (i = 0; i < r->nsteps; i++)
		if (r->steps[i].kind != PSTEP_ANTI && has_atom(&r->steps[i]) && b->key[i] >= 0)
			b->all_parts = true;
	if (!b->all_parts)
	{
		b->var = -1;
		for (i = 0; i < r->nsteps; i++)
			b->key[i] = -1;
	}
	gdl_free(tmp);
}

/*
 * Rule i of the stratum's ninit + nrec, with its binding in *bind: the
 * rules that run once (init), then those run every round (rec), so that a
 * walk over every rule of the stratum is one loop.
 */
const PlanRule *
part_rule_at(const PlanStratum *ps, const PartBind *init, const PartBind *rec, int i,
			 const PartBind **bind)
{
	if (i < ps->ninit)
	{
		*bind = &init[i];
		return &ps->init[i];
	}
	*bind = &rec[i - ps->ninit];
	return &ps->rec[i - ps->ninit];
}

/*
 * The primary key of a derived predicate of the stratum: the column its
 * delta is partitioned on in the first recursive version driven by it (so
 * that version needs no re-keying); else -1 when init is NULL (the rules
 * run once are not bound yet); else the head column of the partition
 * variable of a rule defining it (its tuples then stay where they are
 * derived); else column 0.
 */
int
part_primary_key(PartRun *pr, const PlanStratum *ps, int pid, const PartBind *init,
				 const PartBind *rec)
{
	const GdlAnalysis *a = pr->a;
	int			i,
				k;

	for (i = 0; i < ps->nrec; i++)
	{
		int			m = part_main_step(&ps->rec[i]);
		const PlanStep *s = m >= 0 ? &ps->rec[i].steps[m] : NULL;

		if (s && s->atom.pred == pid && s->atom.src == PLAN_SRC_DELTA && rec[i].key[m] >= 0)
			return rec[i].key[m];
	}
	if (init == NULL)
		return -1;
	for (i = 0; i < ps->ninit + ps->nrec; i++)
	{
		const PartBind *bind;
		const PlanRule *r = part_rule_at(ps, init, rec, i, &bind);
		const GdlClause *c = a->clauses[r->clause].clause;

		if (r->head_pred != pid || bind->var < 0)
			continue;
		for (k = 0; k < c->head.nargs; k++)
			if (c->head.args[k]->kind == GDL_TERM_VAR && c->head.args[k]->var == bind->var)
				return k;
	}
	return 0;
}
