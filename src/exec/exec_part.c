/*
 * exec_part.c — the partitioned semi-naive driver (issue 14), its rounds:
 * one run spread over P partitions, each a backend context of its own (one per GPU
 * of gpudl.devices; several on one device, or CPU contexts, when
 * gpudl.partitions asks for more — that is how the path is tested without
 * several GPUs).
 *
 * Extensional tables are read once on the host and split by the hash of a
 * column, or replicated when small; derived relations are partitioned by
 * the hash of their primary key column (exec_part_plan.c chooses layouts
 * per rule version).  A round: every partition runs the rule versions over
 * its part of the delta (exec_rule.c, unchanged: the partition's relations
 * are bound into its ExecState before each rule); what each derives is
 * deduplicated locally and sent to the tuple's owner (exec_part_xchg.c),
 * which deduplicates it against its part of full; the new tuples are
 * re-keyed into the other layouts rules read; the fixpoint ends when the
 * sum over partitions of the new tuples is 0.  The goal's rows are the
 * concatenation of the partitions' (disjoint) parts.
 *
 * Programs with aggregates, nullary predicates or an extensional goal run
 * unpartitioned (exec_part_try returns NULL); stratified negation runs
 * partitioned (a negated atom is partitioned on the rule's variable or
 * replicated, like a positive one).  Partitions run one after the other
 * from the host thread: a backend context is used by one thread at a time.
 *
 * This file: layouts, binding, rounds of a stratum.  exec_part_run.c sets a
 * run up, answers the goal and tears down; exec_part_conf.c holds the
 * settings; exec_part_plan.c chooses layouts; exec_part_xchg.c exchanges.
 */
#include "exec_part_int.h"

#include <string.h>

/* Make partition p's device current (several GPUs). */
void
part_select(PartRun *pr, int p)
{
	if (pr->dev[p] < 0 || pr->bk->select_device == NULL || pr->cur_dev == pr->dev[p])
		return;
	if (pr->bk->select_device(pr->dev[p]) != 0)
		gdl_error(GDL_ERR_DEVICE, NULL, "Check gpudl.devices.", "could not select GPU %d",
				  pr->dev[p]);
	pr->cur_dev = pr->dev[p];
}

/* Host columns to a bag in partition p. */
GdlBkRel *
part_upload(PartRun *pr, int p, int ncols, int64_t nrows, int64_t *const *cols)
{
	GdlBkRel   *r = NULL;

	part_select(pr, p);
	exec_check(&pr->es[p], pr->bk->upload(pr->es[p].ctx, ncols, nrows,
										  (const int64_t *const *) cols, &r), "upload");
	return r;
}

/* A set from a bag in partition p (the bag is released). */
static GdlBkRel *
to_set(PartRun *pr, int p, GdlBkRel *bag)
{
	GdlBkRel   *set = NULL;
	ExecState  *es = &pr->es[p];
	ExecMark	m0;

	part_select(pr, p);
	m0 = exec_mark(es);
	exec_check(es, pr->bk->dedup(es->ctx, 1, &bag, &set), "dedup");
	pr->bk->release(es->ctx, bag);
	exec_charge(es, m0, &es->stats->ms_dedup, &es->stats->launches_dedup);
	return set;
}

/*
 * Replace partition p's relations of a layout, releasing those no longer
 * referenced (full, delta and old may share handles).
 */
static void
set_lay(PartRun *pr, PartLayout *L, int p, GdlBkRel *full, GdlBkRel *delta, GdlBkRel *old)
{
	GdlBkRel   *cur[3];
	int			i,
				j;

	cur[0] = L->full[p];
	cur[1] = L->delta[p];
	cur[2] = L->old[p];
	for (i = 0; i < 3; i++)
	{
		bool		keep = cur[i] == NULL || cur[i] == full || cur[i] == delta || cur[i] == old;

		for (j = 0; j < i && !keep; j++)
			if (cur[j] == cur[i])
				keep = true;
		if (!keep)
		{
			part_select(pr, p);
			pr->bk->release(pr->es[p].ctx, cur[i]);
		}
	}
	L->full[p] = full;
	L->delta[p] = delta;
	L->old[p] = old;
	L->version = ++pr->next_version;
}

/* Allocate a layout's per-partition arrays. */
static PartLayout *
new_layout(PartRun *pr, int pid, int key)
{
	PartLayout *L = &pr->preds[pid].lay[key + 1];

	L->present = true;
	L->key = key;
	L->full = gdl_alloc(sizeof(GdlBkRel *) * pr->P);
	L->delta = gdl_alloc(sizeof(GdlBkRel *) * pr->P);
	L->old = gdl_alloc(sizeof(GdlBkRel *) * pr->P);
	L->version = ++pr->next_version;
	return L;
}

/*
 * The layout of a predicate keyed on 'key' (-1: replicated).  A complete
 * predicate's is built on first use: a table split on the host, a lower
 * stratum's relation exchanged from its primary layout.
 */
PartLayout *
part_layout(PartRun *pr, int pid, int key)
{
	PartPred   *pp = &pr->preds[pid];
	const GdlPred *pred = &pr->a->preds[pid];
	PartLayout *L = &pp->lay[key + 1];
	GdlBkRel  **bags;
	int			p;

	if (L->present)
		return L;
	if (!pp->complete)
		gdl_error(GDL_ERR_INTERNAL, NULL, NULL, "partition layout %d of %s missing", key, pred->name);
	bags = gdl_alloc(sizeof(GdlBkRel *) * pr->P);
	if (pred->is_edb)
		part_split_host(pr, &pp->host, key, bags);
	else
		part_exchange(pr, pp->lay[pp->primary + 1].full, pred->arity, key, bags);
	L = new_layout(pr, pid, key);
	for (p = 0; p < pr->P; p++)
		set_lay(pr, L, p, to_set(pr, p, bags[p]), NULL, NULL);
	gdl_free(bags);
	return L;
}

/* Bind the relations a rule version reads in partition p into its ExecState. */
static void
bind_rule(PartRun *pr, int p, const PlanRule *r, const PartBind *b)
{
	ExecState  *es = &pr->es[p];
	int			i;

	for (i = 0; i < r->nsteps; i++)
	{
		const PlanStep *s = &r->steps[i];

		if (s->kind == PSTEP_START || s->kind == PSTEP_JOIN || s->kind == PSTEP_ANTI)
		{
			ExecPred   *ep = &es->preds[s->atom.pred];

			ep->full = ep->delta = ep->old = NULL;
			ep->version = 0;
		}
	}
	es->preds[r->head_pred].full = NULL;
	for (i = 0; i < r->nsteps; i++)
	{
		const PlanStep *s = &r->steps[i];
		PartLayout *L;
		ExecPred   *ep;

		if (s->kind != PSTEP_START && s->kind != PSTEP_JOIN && s->kind != PSTEP_ANTI)
			continue;
		L = part_layout(pr, s->atom.pred, b->key[i]);
		ep = &es->preds[s->atom.pred];
		if (s->atom.src == PLAN_SRC_DELTA)
			ep->delta = L->delta[p];
		else if (s->atom.src == PLAN_SRC_OLD)
			ep->old = L->old[p];
		else
			ep->full = L->full[p];
		if (L->version > ep->version)
			ep->version = L->version;
	}
	/* what a split rule subtracts its pieces from: a part of the head's full is enough */
	if (es->preds[r->head_pred].full == NULL)
	{
		PartPred   *hp = &pr->preds[r->head_pred];

		es->preds[r->head_pred].full = hp->lay[hp->primary + 1].full[p];
	}
}

/* Run a rule version in the partitions it needs, adding what each derives to outs[p]. */
static void
run_rule(PartRun *pr, const PlanRule *r, const PartBind *b, ExecOuts *const *outs, int li)
{
	int			p;

	for (p = 0; p < pr->P; p++)
	{
		ExecState  *es = &pr->es[p];
		ExecMark	m0;
		double		other;

		if (p > 0 && !b->all_parts)
			break;
		bind_rule(pr, p, r, b);
		part_select(pr, p);		/* (building a layout may have used the other devices) */
		m0 = exec_mark(es);
		other = es->stats->ms_dedup + es->stats->ms_difference;
		exec_rule(es, r, &outs[p][li]);
		exec_charge(es, m0, &es->stats->ms_join, &es->stats->launches_join);
		es->stats->ms_join -= es->stats->ms_dedup + es->stats->ms_difference - other;
	}
}

/* The facts of one predicate of a stratum as a bag (NULL when none). */
static GdlBkRel *
facts_bag(PartRun *pr, const PlanStratum *ps, int pid)
{
	int			arity = pr->a->preds[pid].arity;
	int64_t    *cols[GDL_BK_MAX_ARITY];
	int64_t		n = exec_fact_columns(pr->a, ps, pid, pr->es[0].dict, cols);
	GdlBkRel   *bag;
	int			k;

	if (n == 0)
		return NULL;
	bag = part_upload(pr, 0, arity, n, cols);
	for (k = 0; k < arity; k++)
		gdl_free(cols[k]);
	return bag;
}

/* An empty relation in partition p. */
static GdlBkRel *
part_empty(PartRun *pr, int p, int arity)
{
	part_select(pr, p);
	return exec_empty(&pr->es[p], arity);
}

/*
 * The end of a round for one derived predicate (local index i of the
 * stratum): what every partition derived is deduplicated there, sent to
 * its owners, deduplicated against their part of full; the new tuples are
 * re-keyed into the predicate's other layouts.  Returns the new tuples of
 * all partitions.
 */
static int64_t
absorb_pred(PartRun *pr, int pid, ExecOuts *const *outs, int i, bool stay)
{
	int			P = pr->P,
				p,
				k;
	int			arity = pr->a->preds[pid].arity;
	PartPred   *pp = &pr->preds[pid];
	PartLayout *L0 = &pp->lay[pp->primary + 1];
	GdlBkRel  **local = gdl_alloc(sizeof(GdlBkRel *) * P);
	GdlBkRel  **bags = gdl_alloc(sizeof(GdlBkRel *) * P);
	bool		any = false;
	int64_t		total = 0;

	for (p = 0; p < P; p++)
	{
		ExecOuts   *o = &outs[p][i];
		ExecState  *es = &pr->es[p];
		ExecMark	m0;
		int			j;

		if (o->n == 0)
			continue;
		part_select(pr, p);
		m0 = exec_mark(es);
		exec_check(es, pr->bk->dedup(es->ctx, o->n, o->v, &local[p]), "dedup");
		for (j = 0; j < o->n; j++)
			pr->bk->release(es->ctx, o->v[j]);
		o->n = 0;
		o->reduced = 0;
		exec_charge(es, m0, &es->stats->ms_dedup, &es->stats->launches_dedup);
		any = true;
	}
	if (any)
	{
		/* derived where they are owned (stay): no exchange */
		if (!stay)
			part_exchange(pr, local, arity, pp->primary, bags);
		for (p = 0; p < P; p++)
		{
			ExecState  *es = &pr->es[p];
			GdlBkRel   *cand,
					   *nf = NULL,
					   *nd = NULL;
			ExecMark	m0;

			if (stay)
				cand = local[p] ? local[p] : part_empty(pr, p, arity);
			else
			{
				if (local[p])
				{
					part_select(pr, p);
					pr->bk->release(es->ctx, local[p]);
				}
				cand = to_set(pr, p, bags[p]);
			}
			part_select(pr, p);
			m0 = exec_mark(es);
			if (pr->bk->absorb)
			{
				exec_check(es, pr->bk->absorb(es->ctx, L0->full[p], cand, &nf, &nd), "merge");
				exec_charge(es, m0, &es->stats->ms_merge, &es->stats->launches_merge);
			}
			else
			{
				exec_check(es, pr->bk->difference(es->ctx, cand, L0->full[p], &nd), "difference");
				exec_charge(es, m0, &es->stats->ms_difference, &es->stats->launches_difference);
				m0 = exec_mark(es);
				exec_check(es, pr->bk->merge(es->ctx, L0->full[p], nd, &nf), "merge");
				exec_charge(es, m0, &es->stats->ms_merge, &es->stats->launches_merge);
			}
			pr->bk->release(es->ctx, cand);
			total += exec_size(es, nd);
			set_lay(pr, L0, p, nf, nd, L0->full[p]);
		}
	}
	else
		for (p = 0; p < P; p++)
			set_lay(pr, L0, p, L0->full[p], part_empty(pr, p, arity), L0->full[p]);
	/* the other layouts rules read: this round's new tuples, re-keyed */
	for (k = -1; k < arity; k++)
	{
		PartLayout *L = &pp->lay[k + 1];

		if (!L->present || k == pp->primary)
			continue;
		if (total > 0)
			part_exchange(pr, L0->delta, arity, k, bags);
		for (p = 0; p < P; p++)
		{
			ExecState  *es = &pr->es[p];
			GdlBkRel   *nd,
					   *nf = NULL;
			ExecMark	m0;

			if (total == 0)
			{
				set_lay(pr, L, p, L->full[p], part_empty(pr, p, arity), L->full[p]);
				continue;
			}
			nd = to_set(pr, p, bags[p]);
			m0 = exec_mark(es);
			exec_check(es, pr->bk->merge(es->ctx, L->full[p], nd, &nf), "merge");
			exec_charge(es, m0, &es->stats->ms_merge, &es->stats->launches_merge);
			set_lay(pr, L, p, nf, nd, L->full[p]);
		}
	}
	gdl_free(local);
	gdl_free(bags);
	return total;
}

/* Evaluate one stratum to its fixpoint over the partitions. */
void
part_eval_stratum(PartRun *pr, const PlanStratum *ps, const GdlRunInput *in)
{
	const GdlAnalysis *a = pr->a;
	int			P = pr->P,
				i,
				k,
				p;
	PartBind   *init = gdl_alloc(sizeof(PartBind) * (ps->ninit + 1));
	PartBind   *rec = gdl_alloc(sizeof(PartBind) * (ps->nrec + 1));
	ExecOuts  **outs = gdl_alloc(sizeof(ExecOuts *) * P);
	int64_t    *dsize = gdl_alloc(sizeof(int64_t) * (ps->npreds + 1));
	bool	   *stay = gdl_alloc(sizeof(bool) * (ps->npreds + 1));
	int64_t		rounds = 0,
				total,
				tuples = 0;

	for (i = 0; i < ps->npreds; i++)
		pr->preds[ps->preds[i]].in_stratum = true;
	/* recursive versions first: they fix the primary keys the others route to */
	for (i = 0; i < ps->nrec; i++)
		part_bind_rule(pr, ps, &ps->rec[i], -1, &rec[i]);
	for (i = 0; i < ps->npreds; i++)
		pr->preds[ps->preds[i]].primary = part_primary_key(pr, ps, ps->preds[i], NULL, rec);
	for (i = 0; i < ps->ninit; i++)
		part_bind_rule(pr, ps, &ps->init[i], pr->preds[ps->init[i].head_pred].primary, &init[i]);
	for (p = 0; p < P; p++)
		outs[p] = gdl_alloc(sizeof(ExecOuts) * (ps->npreds + 1));

	/* the layouts of the stratum's predicates: primary, and those its rules read */
	for (i = 0; i < ps->npreds; i++)
	{
		int			pid = ps->preds[i];
		PartPred   *pp = &pr->preds[pid];
		int			arity = a->preds[pid].arity;
		bool	   *want = gdl_alloc(sizeof(bool) * (arity + 1));
		int			j;

		if (pp->primary < 0)
			pp->primary = part_primary_key(pr, ps, pid, init, rec);
		want[pp->primary + 1] = true;
		for (j = 0; j < ps->ninit + ps->nrec; j++)
		{
			const PartBind *bind;
			const PlanRule *r = part_rule_at(ps, init, rec, j, &bind);

			for (k = 0; k < r->nsteps; k++)
			{
				const PlanStep *s = &r->steps[k];

				if ((s->kind == PSTEP_START || s->kind == PSTEP_JOIN || s->kind == PSTEP_ANTI) &&
					s->atom.pred == pid)
					want[bind->key[k] + 1] = true;
			}
		}
		for (k = -1; k < arity; k++)
			if (want[k + 1])
			{
				PartLayout *L = new_layout(pr, pid, k);

				for (p = 0; p < P; p++)
				{
					GdlBkRel   *e = part_empty(pr, p, arity);

					set_lay(pr, L, p, e, e, e);
				}
			}
		gdl_free(want);
		if (pr->trace)
			gdl_log("partitions: %s keyed on column %d", a->preds[pid].name, pp->primary);
	}

	/*
	 * a predicate whose every rule is partitioned on a variable that its
	 * head holds at the primary key (and that has no facts) gets its tuples
	 * in their owner: the round's exchange is skipped
	 */
	for (i = 0; i < ps->npreds; i++)
	{
		int			pid = ps->preds[i],
					kp = pr->preds[pid].primary,
					j;

		stay[i] = pr->P > 1;
		for (j = 0; j < ps->nfacts; j++)
			if (a->clauses[ps->facts[j]].head_pred == pid)
				stay[i] = false;
		for (j = 0; j < ps->ninit + ps->nrec; j++)
		{
			const PartBind *bind;
			const PlanRule *r = part_rule_at(ps, init, rec, j, &bind);
			const GdlClause *c = a->clauses[r->clause].clause;

			if (r->head_pred != pid)
				continue;
			if (bind->var < 0 || kp < 0 || kp >= c->head.nargs ||
				c->head.args[kp]->kind != GDL_TERM_VAR || c->head.args[kp]->var != bind->var)
				stay[i] = false;
		}
	}

	/* facts and rules that run once */
	for (i = 0; i < ps->npreds; i++)
		exec_outs_add(&outs[0][i], facts_bag(pr, ps, ps->preds[i]));
	for (i = 0; i < ps->ninit; i++)
	{
		int			li;

		for (li = 0; li < ps->npreds && ps->preds[li] != ps->init[i].head_pred; li++)
			;
		run_rule(pr, &ps->init[i], &init[i], outs, li);
	}
	total = 0;
	for (i = 0; i < ps->npreds; i++)
		total += dsize[i] = absorb_pred(pr, ps->preds[i], outs, i, stay[i]);

	/* the fixpoint: every partition runs the delta versions on its part */
	while (ps->recursive && total > 0)
	{
		gdl_check_interrupts();
		exec_round_limit(in->max_iterations, rounds);
		rounds++;
		for (i = 0; i < ps->nrec; i++)
		{
			const PlanRule *r = &ps->rec[i];
			int			li,
						dl;
			int			dp = a->clauses[r->clause].lit_pred[r->delta_lit];

			for (dl = 0; dl < ps->npreds && ps->preds[dl] != dp; dl++)
				;
			if (dl < ps->npreds && dsize[dl] == 0)
				continue;
			for (li = 0; li < ps->npreds && ps->preds[li] != r->head_pred; li++)
				;
			run_rule(pr, r, &rec[i], outs, li);
		}
		total = 0;
		for (i = 0; i < ps->npreds; i++)
			total += dsize[i] = absorb_pred(pr, ps->preds[i], outs, i, stay[i]);
		if (pr->trace)
			gdl_log("partitions: stratum %d round %lld: %lld new", ps->index, (long long) rounds,
					(long long) total);
		if (in->progress)
		{
			GdlProgress pg;

			memset(&pg, 0, sizeof(pg));
			pg.phase = "evaluating";
			pg.stratum = ps->index;
			pg.nstrata = a->nstrata;
			pg.round = rounds;
			pg.tuples = pr->es[0].stats->tuples_derived;
			in->progress(in->progress_arg, &pg);
		}
	}

	/* the stratum is complete: keep full only */
	for (p = 0; p < P; p++)
	{
		part_select(pr, p);
		exec_prep_clear(&pr->es[p]);
	}
	for (i = 0; i < ps->npreds; i++)
	{
		int			pid = ps->preds[i];
		PartPred   *pp = &pr->preds[pid];

		for (k = -1; k < a->preds[pid].arity; k++)
			if (pp->lay[k + 1].present)
				for (p = 0; p < P; p++)
				{
					PartLayout *L = &pp->lay[k + 1];

					set_lay(pr, L, p, L->full[p], NULL, NULL);
					part_select(pr, p);
					if (k == pp->primary)
					{
						int64_t		n = exec_size(&pr->es[p], L->full[p]);

						tuples += n;
						pr->ps[p].tuples += n;
					}
				}
		pp->complete = true;
		pp->in_stratum = false;
	}
	pr->es[0].stats->stratum_iterations[ps->index] = ps->recursive ? rounds : 1;
	pr->es[0].stats->stratum_tuples[ps->index] = tuples;
	pr->es[0].stats->iterations += ps->recursive ? rounds : 1;
	pr->es[0].stats->tuples_derived += tuples;
	for (i = 0; i < ps->ninit; i++)
		gdl_free(init[i].key);
	for (i = 0; i < ps->nrec; i++)
		gdl_free(rec[i].key);
	for (p = 0; p < P; p++)
	{
		for (i = 0; i < ps->npreds; i++)
			gdl_free(outs[p][i].v);
		gdl_free(outs[p]);
	}
	gdl_free(outs);
	gdl_free(init);
	gdl_free(rec);
	gdl_free(dsize);
	gdl_free(stay);
}

