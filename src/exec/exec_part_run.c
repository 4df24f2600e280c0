/*
 * exec_part_run.c — one partitioned run (issue 14), end to end: whether it
 * is partitioned at all (exec_part_try: NULL sends gdl_run down the
 * one-context path), a backend context per partition, the tables read once
 * on the host, the strata in order (exec_part.c), the goal's answer
 * gathered from the partitions' disjoint parts, the counters summed and
 * per partition (GdlRunStats.parts), and the contexts released.
 */
#include "exec_part_int.h"

#include <stdlib.h>
#include <string.h>

/* Partition p's part of the goal's answer: its part of the goal relation, filtered. */
static GdlBkRel *
goal_part(PartRun *pr, int p, const GdlGoal *goal, GdlBkRel *full)
{
	const GdlPred *pred = &pr->a->preds[goal->pred];
	GdlBkExpr  *filters,
			   *outs;
	GdlBkRel   *res = NULL;
	int			nf = expr_goal(goal, pred, &filters, &outs);

	part_select(pr, p);
	exec_check(&pr->es[p], pr->bk->map(pr->es[p].ctx, full, nf, filters, pred->arity, outs, &res),
			   "goal filter");
	expr_free_exprs(filters, nf, outs, pred->arity);
	return res;
}

/* Can the partitioned driver run this program?  Aggregates, nullary predicates: no. */
static bool
handled(const GdlAnalysis *a, const bool *need, int goal)
{
	int			i;

	if (a->preds[goal].is_edb)
		return false;
	for (i = 0; i < a->npreds; i++)
		if (need[i] && (a->preds[i].arity == 0 || a->preds[i].has_agg))
			return false;
	return true;
}

/*
 * gdl_run's partitioned path: NULL when the run is not partitioned
 * (gpudl.partitions <= 1 and one device) or the program is one it does not
 * handle; then gdl_run goes on unpartitioned.
 */
GdlResult *
exec_part_try(const GdlPlan *plan, const GdlRunInput *in, GdlDict *dict, const GdlGoal *goal)
{
	const GdlAnalysis *a = plan->a;
	const GdlBackend *bk;
	int			dev[GDL_PART_MAX];
	int			P,
				p,
				i,
				c;
	PartRun		pr;
	GdlResult  *res;
	bool	   *need;
	double		t_start,
				t0;
	GdlRunInput pin;
	PartPred   *gp;
	int64_t		off;

	if (gdl_engine_partitions() == 1 || (gdl_engine_partitions() == 0 && in->device != GDL_DEVICE_GPU))
		return NULL;			/* the common case: costs a compare */
	/* a context an error left (its host memory may be gone: abort only) */
	exec_part_abort();
	bk = gdl_backend_for(in->device);
	if (bk == NULL || in->load_edb == NULL)
		return NULL;
	P = part_choose(bk, in, dev);
	if (P <= 1)
		return NULL;			/* (gpudl.devices applies to partitioned runs only) */
	need = exec_needed_preds(a, goal->pred);
	if (!handled(a, need, goal->pred))
	{
		gdl_free(need);
		return NULL;
	}
	t_start = gdl_now_ms();
	res = gdl_alloc(sizeof(GdlResult));
	memset(&pr, 0, sizeof(pr));
	pr.plan = plan;
	pr.a = a;
	pr.bk = bk;
	pr.P = P;
	pr.cur_dev = -1;
	pr.min_rows = part_min_rows_setting();
	pr.trace = getenv("GDL_TRACE") != NULL;
	pr.dev = gdl_alloc(sizeof(int) * P);
	memcpy(pr.dev, dev, sizeof(int) * P);
	pr.es = gdl_alloc(sizeof(ExecState) * P);
	pr.pstats = gdl_alloc(sizeof(GdlRunStats) * P);
	pr.ps = gdl_alloc(sizeof(GdlPartStats) * P);
	pr.preds = gdl_alloc(sizeof(PartPred) * (a->npreds > 0 ? a->npreds : 1));
	for (i = 0; i < a->npreds; i++)
		pr.preds[i].lay = gdl_alloc(sizeof(PartLayout) * (a->preds[i].arity + 1));
	res->stats.backend = bk->name;
	res->stats.nstrata = a->nstrata;
	res->stats.stratum_iterations = gdl_alloc(sizeof(int64_t) * (a->nstrata > 0 ? a->nstrata : 1));
	res->stats.stratum_tuples = gdl_alloc(sizeof(int64_t) * (a->nstrata > 0 ? a->nstrata : 1));
	pr.pstats[0] = res->stats;	/* partition 0 keeps the run's strata counters */

	/* one context per partition; the limit of a device is shared by its partitions */
	pin = *in;
	{
		int			per_dev = 0;

		for (p = 0; p < P; p++)
			if (dev[p] == dev[0])
				per_dev++;
		if (pin.memory_limit > 0)
			pin.memory_limit = pin.memory_limit / per_dev > 0 ? pin.memory_limit / per_dev : 1;
	}
	part_live_begin(bk);
	for (p = 0; p < P; p++)
	{
		ExecState  *es = &pr.es[p];
		GdlBkConfig cfg;
		const char *errmsg = NULL;
		const int64_t *none[1] = {NULL};

		es->plan = plan;
		es->a = a;
		es->bk = bk;
		es->dict = dict;
		es->stats = &pr.pstats[p];
		es->batch_rows = exec_batch_rows();
		es->preds = gdl_alloc(sizeof(ExecPred) * (a->npreds > 0 ? a->npreds : 1));
		pr.ps[p].device = dev[p];
		part_select(&pr, p);
		memset(&cfg, 0, sizeof(cfg));
		cfg.nthreads = exec_threads();
		cfg.memory_limit = pin.memory_limit;
		es->ctx = bk->ctx_create(&cfg, &errmsg);
		if (es->ctx == NULL)
			gdl_error(GDL_ERR_DEVICE, errmsg, NULL, "could not start the %s backend for partition %d",
					  bk->name, p);
		part_live_set(p, es->ctx);
		exec_mem_init(es, &pin);
		/*
		 * partitions sharing a device without a set limit: each plans its
		 * join slices with its share of what the device had free, not all
		 * of it (the backend's capacity is the free memory it saw)
		 */
		if (pin.memory_limit <= 0 && es->mem_limit > 0)
		{
			int			q,
						share = 0;

			for (q = 0; q < P; q++)
				if (dev[q] == dev[p])
					share++;
			es->mem_limit /= share;
		}
		exec_check(es, bk->upload(es->ctx, 0, 1, none, &es->unit), "upload");
	}

	/* tables: read once on the host, split or replicated when a rule reads them */
	t0 = gdl_now_ms();
	for (i = 0; i < a->npreds; i++)
		if (need[i] && a->preds[i].is_edb)
		{
			PartPred   *pp = &pr.preds[i];

			in->load_edb(in->load_arg, &a->preds[i], dict, &pp->host);
			if (pp->host.ncols != a->preds[i].arity)
				gdl_error(GDL_ERR_DATATYPE, NULL, NULL,
						  "table of predicate %s has %d columns, expected %d",
						  a->preds[i].name, pp->host.ncols, a->preds[i].arity);
			pp->nrows = (int64_t) pp->host.nrows;
			pp->complete = true;
		}
	for (i = 0; i < a->nclauses; i++)
		if (need[a->clauses[i].head_pred])
			expr_intern_clause(a->clauses[i].clause, dict);
	if (plan->needs_ranks)
		for (p = 0; p < P; p++)
		{
			part_select(&pr, p);
			exec_check(&pr.es[p], bk->set_text_ranks(pr.es[p].ctx, gdl_dict_ranks(dict),
													 gdl_dict_size(dict)), "ranks");
		}
	res->stats.ms_load = gdl_now_ms() - t0;

	/* strata the goal depends on, in order */
	for (i = 0; i < plan->nstrata; i++)
		if (exec_stratum_needed(&plan->strata[i], need))
			part_eval_stratum(&pr, &plan->strata[i], in);

	/* the answer: the partitions' disjoint parts of the goal relation */
	gp = &pr.preds[goal->pred];
	{
		GdlBkRel  **ans = gdl_alloc(sizeof(GdlBkRel *) * P);
		int64_t    *n = gdl_alloc(sizeof(int64_t) * P);
		int			arity = a->preds[goal->pred].arity;

		res->count = 0;
		for (p = 0; p < P; p++)
		{
			ans[p] = goal_part(&pr, p, goal, gp->lay[gp->primary + 1].full[p]);
			n[p] = exec_size(&pr.es[p], ans[p]);
			res->count += n[p];
		}
		res->types = a->preds[goal->pred].types;
		res->rows.ncols = arity;
		if (in->want_rows)
		{
			int64_t   **cols = gdl_alloc(sizeof(int64_t *) * (arity + 1));

			res->rows.nrows = (size_t) res->count;
			res->rows.cols = gdl_alloc(sizeof(int64_t *) * (arity + 1));
			for (c = 0; c < arity; c++)
				res->rows.cols[c] = gdl_alloc(sizeof(int64_t) * (res->count > 0 ? res->count : 1));
			off = 0;
			for (p = 0; p < P; p++)
			{
				if (n[p] > 0)
				{
					for (c = 0; c < arity; c++)
						cols[c] = res->rows.cols[c] + off;
					cols[arity] = NULL;
					part_select(&pr, p);
					exec_check(&pr.es[p], bk->download(pr.es[p].ctx, ans[p], cols), "download");
				}
				off += n[p];
			}
			gdl_free(cols);
		}
		for (p = 0; p < P; p++)
		{
			part_select(&pr, p);
			bk->release(pr.es[p].ctx, ans[p]);
		}
		gdl_free(ans);
		gdl_free(n);
	}

	/* the run's counters: the partitions' summed, and each partition's own */
	{
		GdlRunStats *s = &res->stats;
		const GdlRunStats *s0 = &pr.pstats[0];

		/* (partition 0's strata arrays are the result's own) */
		s->iterations = s0->iterations;
		s->tuples_derived = s0->tuples_derived;
		for (p = 0; p < P; p++)
		{
			const GdlRunStats *q = &pr.pstats[p];
			GdlBkCounters cnt;

			s->ms_join += q->ms_join;
			s->ms_dedup += q->ms_dedup;
			s->ms_difference += q->ms_difference;
			s->ms_merge += q->ms_merge;
			s->launches_join += q->launches_join;
			s->launches_dedup += q->launches_dedup;
			s->launches_difference += q->launches_difference;
			s->launches_merge += q->launches_merge;
			s->batches += q->batches;
			if (bk->counters)
			{
				memset(&cnt, 0, sizeof(cnt));
				part_select(&pr, p);
				bk->counters(pr.es[p].ctx, &cnt);
				s->bytes_to_device += cnt.bytes_to_device;
				s->bytes_from_device += cnt.bytes_from_device;
				s->transfers += cnt.transfers;
				s->peak_bytes += cnt.peak_bytes;
				s->launches += cnt.launches;
				s->library_calls += cnt.library_calls;
				pr.ps[p].peak_bytes = cnt.peak_bytes;
			}
		}
		s->nparts = P;
		s->parts = pr.ps;
	}

	/* release everything: the contexts own every relation */
	for (p = 0; p < P; p++)
	{
		part_select(&pr, p);
		part_live_set(p, NULL);
		bk->ctx_destroy(pr.es[p].ctx);
		pr.es[p].ctx = NULL;
		gdl_free(pr.es[p].prep);
		gdl_free(pr.es[p].preds);
	}
	part_live_end();
	/* back to device 0, where the session's other GPU work (resident tables) lives */
	if (pr.cur_dev > 0 && bk->select_device)
		(void) bk->select_device(0);
	for (i = 0; i < a->npreds; i++)
	{
		PartPred   *pp = &pr.preds[i];
		int			k;

		for (k = 0; k <= a->preds[i].arity; k++)
			if (pp->lay[k].present)
			{
				gdl_free(pp->lay[k].full);
				gdl_free(pp->lay[k].delta);
				gdl_free(pp->lay[k].old);
			}
		for (c = 0; c < pp->host.ncols; c++)
			gdl_free(pp->host.cols[c]);
		gdl_free(pp->host.cols);
		gdl_free(pp->lay);
	}
	gdl_free(pr.preds);
	gdl_free(pr.es);
	gdl_free(pr.pstats);
	gdl_free(pr.dev);
	gdl_free(need);
	res->stats.ms_total = gdl_now_ms() - t_start;
	return res;
}

