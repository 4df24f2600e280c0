/*
 * exec_seminaive.c — gdl_run: the semi-naive driver.
 *
 * Loads the extensional predicates the goal depends on, evaluates the
 * strata the goal depends on in order — a non-recursive stratum once, a
 * recursive one to its least fixpoint: each round runs the delta versions of
 * its rules, dedups what they derived per predicate, and absorbs it into
 * full (delta = new minus full, full = full plus delta) — then filters the
 * goal and returns its count and, when asked, its rows.  Everything stays on
 * the backend between rounds; only sizes come back to the host.
 */
#include "exec_int.h"

#include <stdlib.h>
#include <string.h>

/*
 * Replace a predicate's relations, releasing those no longer referenced
 * (full, delta and old may share handles).
 */
static void
set_rels(ExecState *es, ExecPred *p, GdlBkRel *full, GdlBkRel *delta, GdlBkRel *old)
{
	GdlBkRel   *cur[3];
	int			i,
				j;

	cur[0] = p->full;
	cur[1] = p->delta;
	cur[2] = p->old;
	for (i = 0; i < 3; i++)
	{
		bool		keep = cur[i] == NULL || cur[i] == full || cur[i] == delta || cur[i] == old;

		for (j = 0; j < i && !keep; j++)
			if (cur[j] == cur[i])
				keep = true;	/* released already */
		if (!keep)
			es->bk->release(es->ctx, cur[i]);
	}
	p->full = full;
	p->delta = delta;
	p->old = old;
	p->version = ++es->next_version;
}

/*
 * Mark the predicates the goal depends on (transitively); shared with the
 * partitioned driver (exec_part_run.c).
 */
bool *
exec_needed_preds(const GdlAnalysis *a, int goal)
{
	bool	   *need = gdl_alloc(sizeof(bool) * (a->npreds > 0 ? a->npreds : 1));
	int		   *stack = gdl_alloc(sizeof(int) * (a->npreds > 0 ? a->npreds : 1));
	int			sp = 0,
				i,
				l;

	need[goal] = true;
	stack[sp++] = goal;
	while (sp > 0)
	{
		const GdlPred *p = &a->preds[stack[--sp]];

		for (i = 0; i < p->nclauses; i++)
		{
			const GdlClauseInfo *info = &a->clauses[p->clauses[i]];

			for (l = 0; l < info->clause->nbody; l++)
			{
				int			q = info->lit_pred[l];

				if (q >= 0 && !need[q])
				{
					need[q] = true;
					stack[sp++] = q;
				}
			}
		}
	}
	gdl_free(stack);
	return need;
}

/*
 * Does the goal need stratum ps (does it define a predicate marked in need,
 * exec_needed_preds)?  Both drivers evaluate exactly these strata.
 */
bool
exec_stratum_needed(const PlanStratum *ps, const bool *need)
{
	int			k;

	for (k = 0; k < ps->npreds; k++)
		if (need[ps->preds[k]])
			return true;
	return false;
}

/*
 * A resident table's columns for an extensional predicate, as a bag in the
 * run's context, when the host serves it that way; NULL otherwise.
 */
static GdlBkRel *
load_edb_resident(ExecState *es, const GdlRunInput *in, const GdlPred *pred)
{
	GdlResidentRef ref;
	GdlBkRel   *bag = NULL;
	int			st,
				c;

	if (in->load_edb_resident == NULL || es->bk->from_resident == NULL)
		return NULL;
	memset(&ref, 0, sizeof(ref));
	if (!in->load_edb_resident(in->load_arg, pred, es->bk, es->dict, &ref))
		return NULL;
	if (ref.ncols != pred->arity)
		gdl_error(GDL_ERR_INTERNAL, NULL, NULL, "resident table of predicate %s has %d columns, expected %d",
				  pred->name, ref.ncols, pred->arity);
	st = es->bk->from_resident(es->ctx, ref.resident, ref.ncols, ref.colidx,
							   (const int32_t *const *) ref.remap, ref.remap_len, &bag);
	for (c = 0; c < ref.ncols; c++)
		gdl_free(ref.remap[c]);
	gdl_free(ref.remap);
	gdl_free(ref.remap_len);
	gdl_free(ref.colidx);
	exec_check(es, st, "resident table");
	es->stats->resident_loads++;
	return bag;
}

/*
 * Load an extensional predicate: from a resident table, or host columns
 * uploaded; then dedup.
 */
static void
load_edb(ExecState *es, const GdlRunInput *in, int pid)
{
	const GdlPred *pred = &es->a->preds[pid];
	GdlColumns	cols;
	GdlBkRel   *bag = load_edb_resident(es, in, pred),
			   *set = NULL;
	int			c;

	if (bag == NULL)
	{
		memset(&cols, 0, sizeof(cols));
		if (in->load_edb == NULL)
			gdl_error(GDL_ERR_INTERNAL, NULL, NULL, "no loader for table of predicate %s", pred->name);
		in->load_edb(in->load_arg, pred, es->dict, &cols);
		if (cols.ncols != pred->arity)
			gdl_error(GDL_ERR_DATATYPE, NULL, NULL,
					  "table of predicate %s has %d columns, expected %d",
					  pred->name, cols.ncols, pred->arity);
		exec_check(es, es->bk->upload(es->ctx, cols.ncols, (int64_t) cols.nrows,
									  (const int64_t *const *) cols.cols, &bag), "upload");
		for (c = 0; c < cols.ncols; c++)
			gdl_free(cols.cols[c]);
		gdl_free(cols.cols);
	}
	exec_check(es, es->bk->dedup(es->ctx, 1, &bag, &set), "dedup");
	es->bk->release(es->ctx, bag);
	set_rels(es, &es->preds[pid], set, NULL, NULL);
	es->preds[pid].ready = true;
}

/*
 * The facts (constant clauses) of one predicate of a stratum as columns
 * (cols[0..arity), gdl_alloc'ed; the caller frees them); returns the
 * number of rows, 0 (nothing allocated) when there are none.  Shared with
 * the partitioned driver (exec_part.c).
 */
int64_t
exec_fact_columns(const GdlAnalysis *a, const PlanStratum *ps, int pid, GdlDict *dict,
				  int64_t **cols)
{
	const GdlPred *pred = &a->preds[pid];
	int64_t		n = 0;
	int			i,
				k;

	for (i = 0; i < ps->nfacts; i++)
		if (a->clauses[ps->facts[i]].head_pred == pid)
			n++;
	if (n == 0)
		return 0;
	for (k = 0; k < pred->arity; k++)
		cols[k] = gdl_alloc(sizeof(int64_t) * n);
	n = 0;
	for (i = 0; i < ps->nfacts; i++)
	{
		const GdlClause *c = a->clauses[ps->facts[i]].clause;

		if (a->clauses[ps->facts[i]].head_pred != pid)
			continue;
		for (k = 0; k < pred->arity; k++)
			cols[k][n] = expr_const_value(c->head.args[k],
										  pred->types ? pred->types[k] : GDL_TYPE_BIGINT, dict);
		n++;
	}
	return n;
}

/* The facts (constant clauses) of one predicate of a stratum, as one bag. */
static GdlBkRel *
facts_bag(ExecState *es, const PlanStratum *ps, int pid)
{
	int			arity = es->a->preds[pid].arity;
	int64_t    *cols[GDL_BK_MAX_ARITY];
	int64_t		n = exec_fact_columns(es->a, ps, pid, es->dict, cols);
	GdlBkRel   *bag = NULL;
	int			k;

	if (n == 0)
		return NULL;
	exec_check(es, es->bk->upload(es->ctx, arity, n, (const int64_t *const *) cols, &bag),
			   "upload");
	for (k = 0; k < arity; k++)
		gdl_free(cols[k]);
	return bag;
}

/* Position of predicate pid in the stratum. */
static int
local_index(const PlanStratum *ps, int pid)
{
	int			i;

	for (i = 0; i < ps->npreds; i++)
		if (ps->preds[i] == pid)
			return i;
	gdl_error(GDL_ERR_INTERNAL, NULL, NULL, "predicate not in its stratum");
}

/*
 * Raise the iteration limit's error when 'rounds' rounds have run and the
 * limit (0: none) allows no more: one message for both drivers (this one
 * and the partitioned exec_part.c).
 */
void
exec_round_limit(int64_t max_iterations, int64_t rounds)
{
	if (max_iterations > 0 && rounds >= max_iterations)
		gdl_error(GDL_ERR_LIMIT, NULL,
				  "Raise gpudl.max_iterations, or look for rules that derive new values without bound (arithmetic in recursion).",
				  "fixpoint not reached after %lld iterations", (long long) rounds);
}

/* Dedup what was derived for one predicate (a set); NULL when nothing. */
static GdlBkRel *
dedup_outs(ExecState *es, ExecOuts *o)
{
	GdlBkRel   *cand = NULL;
	ExecMark	m0 = exec_mark(es);
	int			i;

	if (o->n == 0)
		return NULL;
	if (o->reduced == o->n)
	{
		/* sets already: their union, without sorting them again */
		cand = o->v[0];
		for (i = 1; i < o->n; i++)
		{
			GdlBkRel   *m = NULL;

			exec_check(es, es->bk->merge(es->ctx, cand, o->v[i], &m), "merge");
			es->bk->release(es->ctx, cand);
			es->bk->release(es->ctx, o->v[i]);
			cand = m;
		}
		o->n = 0;
		o->reduced = 0;
		exec_charge(es, m0, &es->stats->ms_dedup, &es->stats->launches_dedup);
		return cand;
	}
	exec_check(es, es->bk->dedup(es->ctx, o->n, o->v, &cand), "dedup");
	for (i = 0; i < o->n; i++)
		es->bk->release(es->ctx, o->v[i]);
	o->n = 0;
	o->reduced = 0;
	exec_charge(es, m0, &es->stats->ms_dedup, &es->stats->launches_dedup);
	return cand;
}

/*
 * Run a rule version, timing it as join work (less the batches' own
 * dedups); under GDL_TRACE also log what it handed to the round (raw
 * rows, or a split join's new rows), its time, slices and their dedup and
 * difference time, so a slow round shows which version it was.
 */
static void
timed_rule(ExecState *es, const PlanRule *r, ExecOuts *out)
{
	ExecMark	m0 = exec_mark(es);
	double		other = es->stats->ms_dedup + es->stats->ms_difference;
	int64_t		other_launches = es->stats->launches_dedup + es->stats->launches_difference;
	int			n0 = out->n;
	double		t0 = m0.ms,
				dedup0 = es->stats->ms_dedup,
				diff0 = es->stats->ms_difference;
	int64_t		batches0 = es->stats->batches;

	exec_rule(es, r, out);
	if (es->trace)
	{
		int64_t		rows = 0;
		int			i;

		for (i = n0; i < out->n; i++)
			rows += exec_size(es, out->v[i]);
		gdl_log("rule %d (delta literal %d) of %s: %lld rows in %.1f ms (%lld slices; dedup %.1f ms, difference %.1f ms)",
				r->clause, r->delta_lit, es->a->preds[r->head_pred].name,
				(long long) rows, gdl_now_ms() - t0,
				(long long) (es->stats->batches - batches0),
				es->stats->ms_dedup - dedup0, es->stats->ms_difference - diff0);
	}
	exec_charge(es, m0, &es->stats->ms_join, &es->stats->launches_join);
	es->stats->ms_join -= es->stats->ms_dedup + es->stats->ms_difference - other;
	es->stats->launches_join -= es->stats->launches_dedup + es->stats->launches_difference -
		other_launches;
}

/*
 * Tell the host where the run is (GdlRunInput.progress): the stratum, its
 * round, the tuples derived so far and the backend's peak bytes.
 */
static void
report_progress(ExecState *es, const GdlRunInput *in, const char *phase, int stratum,
				int64_t round, const PlanStratum *ps)
{
	GdlProgress p;
	GdlBkCounters cnt;
	int			i;

	if (in->progress == NULL)
		return;
	memset(&p, 0, sizeof(p));
	p.phase = phase;
	p.stratum = stratum;
	p.nstrata = es->a->nstrata;
	p.round = round;
	p.tuples = es->stats->tuples_derived;
	for (i = 0; ps && i < ps->npreds; i++)
		p.tuples += exec_size(es, es->preds[ps->preds[i]].full);
	if (es->bk->counters)
	{
		memset(&cnt, 0, sizeof(cnt));
		es->bk->counters(es->ctx, &cnt);
		p.bytes = cnt.peak_bytes;
	}
	in->progress(in->progress_arg, &p);
}

/* Evaluate one stratum to its fixpoint. */
static void
eval_stratum(ExecState *es, const PlanStratum *ps, const GdlRunInput *in)
{
	int64_t		max_iterations = in->max_iterations;
	const GdlAnalysis *a = es->a;
	ExecOuts   *outs = gdl_alloc(sizeof(ExecOuts) * (ps->npreds > 0 ? ps->npreds : 1));
	bool	   *need_old = gdl_alloc(sizeof(bool) * (ps->npreds > 0 ? ps->npreds : 1));
	int64_t		rounds = 0,
				tuples = 0;
	int			i,
				k;

	/* which predicates a rule reads as "old" (full minus delta) */
	for (i = 0; i < ps->nrec; i++)
		for (k = 0; k < ps->rec[i].nsteps && !(es->mirrors && ps->rec[i].mirrored); k++)
		{
			const PlanStep *s = &ps->rec[i].steps[k];

			if ((s->kind == PSTEP_START || s->kind == PSTEP_JOIN) && s->atom.src == PLAN_SRC_OLD)
				need_old[local_index(ps, s->atom.pred)] = true;
		}
	for (i = 0; i < ps->npreds; i++)
	{
		GdlBkRel   *e = exec_empty(es, a->preds[ps->preds[i]].arity);

		set_rels(es, &es->preds[ps->preds[i]], e, NULL, e);
	}
	report_progress(es, in, "evaluating", ps->index, 0, NULL);
	/* facts and rules that run once */
	for (i = 0; i < ps->npreds; i++)
		exec_outs_add(&outs[i], facts_bag(es, ps, ps->preds[i]));
	for (i = 0; i < ps->ninit; i++)
		timed_rule(es, &ps->init[i], &outs[local_index(ps, ps->init[i].head_pred)]);
	for (i = 0; i < ps->npreds; i++)
	{
		ExecPred   *p = &es->preds[ps->preds[i]];
		GdlBkRel   *cand = dedup_outs(es, &outs[i]);

		if (cand == NULL)
			cand = p->full;		/* still empty */
		set_rels(es, p, cand, ps->recursive ? cand : NULL, p->full);
	}
	/* the fixpoint */
	while (ps->recursive)
	{
		bool		any = false;

		for (i = 0; i < ps->npreds; i++)
			if (exec_size(es, es->preds[ps->preds[i]].delta) > 0)
				any = true;
		if (!any)
			break;
		gdl_check_interrupts();
		exec_round_limit(max_iterations, rounds);
		rounds++;
		for (i = 0; i < ps->nrec; i++)
		{
			const PlanRule *r = &ps->rec[i];
			int			dp = a->clauses[r->clause].lit_pred[r->delta_lit];

			if (exec_size(es, es->preds[dp].delta) == 0 || (es->mirrors && r->mirrored))
				continue;
			timed_rule(es, r, &outs[local_index(ps, r->head_pred)]);
		}
		for (i = 0; i < ps->npreds; i++)
		{
			ExecPred   *p = &es->preds[ps->preds[i]];
			GdlBkRel   *cand = dedup_outs(es, &outs[i]);
			GdlBkRel   *nf = NULL,
					   *nd = NULL;
			ExecMark	m0 = exec_mark(es);

			if (cand == NULL)
			{
				/* nothing new: delta becomes empty, old becomes full */
				GdlBkRel   *e = exec_empty(es, a->preds[ps->preds[i]].arity);

				set_rels(es, p, p->full, e, need_old[i] ? p->full : NULL);
				continue;
			}
			if (es->bk->absorb)
			{
				exec_check(es, es->bk->absorb(es->ctx, p->full, cand, &nf, &nd), "merge");
				exec_charge(es, m0, &es->stats->ms_merge, &es->stats->launches_merge);
			}
			else
			{
				exec_check(es, es->bk->difference(es->ctx, cand, p->full, &nd), "difference");
				exec_charge(es, m0, &es->stats->ms_difference, &es->stats->launches_difference);
				m0 = exec_mark(es);
				exec_check(es, es->bk->merge(es->ctx, p->full, nd, &nf), "merge");
				exec_charge(es, m0, &es->stats->ms_merge, &es->stats->launches_merge);
			}
			if (es->trace)
				gdl_log("stratum %d round %lld: %s derived %lld distinct, %lld new, %lld in full",
						ps->index, (long long) rounds, a->preds[ps->preds[i]].name,
						(long long) exec_size(es, cand), (long long) exec_size(es, nd),
						(long long) exec_size(es, nf));
			es->bk->release(es->ctx, cand);
			set_rels(es, p, nf, nd, need_old[i] ? p->full : NULL);
		}
		report_progress(es, in, "evaluating", ps->index, rounds, ps);
	}
	exec_prep_clear(es);
	for (i = 0; i < ps->npreds; i++)
	{
		ExecPred   *p = &es->preds[ps->preds[i]];

		set_rels(es, p, p->full, NULL, NULL);
		p->ready = true;
		tuples += exec_size(es, p->full);
		gdl_free(outs[i].v);
	}
	es->stats->stratum_iterations[ps->index] = ps->recursive ? rounds : 1;
	es->stats->stratum_tuples[ps->index] = tuples;
	es->stats->iterations += ps->recursive ? rounds : 1;
	es->stats->tuples_derived += tuples;
	gdl_free(outs);
	gdl_free(need_old);
}

/* The goal's tuples: its predicate's relation filtered by the goal. */
static GdlBkRel *
goal_filter(ExecState *es, const GdlGoal *goal, bool *owned)
{
	const GdlPred *pred = &es->a->preds[goal->pred];
	GdlBkRel   *full = es->preds[goal->pred].full;
	GdlBkExpr  *filters,
			   *outs;
	GdlBkRel   *res = NULL;
	int			nf;

	*owned = false;
	if (goal->nbindings == 0 && goal->nequal == 0)
		return full;
	nf = expr_goal(goal, pred, &filters, &outs);
	exec_check(es, es->bk->map(es->ctx, full, nf, filters, pred->arity, outs, &res), "goal filter");
	expr_free_exprs(filters, nf, outs, pred->arity);
	*owned = true;
	return res;
}

/* Evaluate what the goal needs to its least fixpoint and answer the goal. */
GdlResult *
gdl_run(const GdlPlan *plan, const GdlRunInput *in, GdlDict *dict, const GdlGoal *goal)
{
	const GdlAnalysis *a = plan->a;
	GdlResult  *res = gdl_alloc(sizeof(GdlResult));
	ExecState	es;
	GdlBkConfig cfg;
	GdlBkCounters cnt;
	const char *errmsg = NULL;
	double		t_start = gdl_now_ms();
	ExecMark	m0;
	bool	   *need;
	bool		owned;
	GdlBkRel   *ans;
	const GdlPred *gp;
	int			i,
				c;

	if (goal->pred < 0 || goal->pred >= a->npreds)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "goal predicate %d out of range", goal->pred);
	/* issue 14: several partitions (exec_part.c); NULL when not asked or not handled */
	{
		GdlResult  *pres = exec_part_try(plan, in, dict, goal);

		if (pres)
		{
			gdl_free(res);
			return pres;
		}
	}
	memset(&es, 0, sizeof(es));
	es.plan = plan;
	es.a = a;
	es.dict = dict;
	es.stats = &res->stats;
	es.bk = gdl_backend_for(in->device);
	es.trace = getenv("GDL_TRACE") != NULL;
	es.mirrors = getenv("GDL_NO_MIRRORS") == NULL;	/* off: for A/B runs and tests */
	es.batch_rows = exec_batch_rows();
	if (es.bk == NULL)
		gdl_error(GDL_ERR_DEVICE, NULL, "Set gpudl.device = cpu or auto.",
				  "no GPU backend is available");
	res->stats.backend = es.bk->name;
	res->stats.nstrata = a->nstrata;
	res->stats.stratum_iterations = gdl_alloc(sizeof(int64_t) * (a->nstrata > 0 ? a->nstrata : 1));
	res->stats.stratum_tuples = gdl_alloc(sizeof(int64_t) * (a->nstrata > 0 ? a->nstrata : 1));
	es.preds = gdl_alloc(sizeof(ExecPred) * (a->npreds > 0 ? a->npreds : 1));
	need = exec_needed_preds(a, goal->pred);

	memset(&cfg, 0, sizeof(cfg));
	cfg.nthreads = exec_threads();
	cfg.memory_limit = in->memory_limit;
	es.ctx = es.bk->ctx_create(&cfg, &errmsg);
	if (es.ctx == NULL)
		gdl_error(GDL_ERR_DEVICE, errmsg, NULL, "could not start the %s backend", es.bk->name);
	exec_set_current(es.bk, es.ctx);
	exec_mem_init(&es, in);

	/* inputs: tables, constants, ranks */
	m0 = exec_mark(&es);
	{
		const int64_t *none[1] = {NULL};

		exec_check(&es, es.bk->upload(es.ctx, 0, 1, none, &es.unit), "upload");
	}
	for (i = 0; i < a->npreds; i++)
		if (need[i] && a->preds[i].is_edb)
			load_edb(&es, in, i);
	for (i = 0; i < a->nclauses; i++)
		if (need[a->clauses[i].head_pred])
			expr_intern_clause(a->clauses[i].clause, dict);
	if (plan->needs_ranks)
		exec_check(&es, es.bk->set_text_ranks(es.ctx, gdl_dict_ranks(dict), gdl_dict_size(dict)),
				   "ranks");
	exec_charge(&es, m0, &res->stats.ms_load, &res->stats.launches_load);

	/* strata the goal depends on, in order */
	for (i = 0; i < plan->nstrata; i++)
		if (exec_stratum_needed(&plan->strata[i], need))
			eval_stratum(&es, &plan->strata[i], in);

	/* the answer */
	gp = &a->preds[goal->pred];
	ans = goal_filter(&es, goal, &owned);
	res->count = exec_size(&es, ans);
	res->types = gp->types;
	res->rows.ncols = gp->arity;
	if (in->want_rows)
	{
		report_progress(&es, in, "downloading", -1, -1, NULL);
		res->rows.nrows = (size_t) res->count;
		res->rows.cols = gdl_alloc(sizeof(int64_t *) * (gp->arity + 1));	/* NULL-terminated */
		for (c = 0; c < gp->arity; c++)
			res->rows.cols[c] = gdl_alloc(sizeof(int64_t) * (res->count > 0 ? res->count : 1));
		exec_check(&es, es.bk->download(es.ctx, ans, res->rows.cols), "download");
	}
	if (owned)
		es.bk->release(es.ctx, ans);
	if (es.bk->counters)
	{
		memset(&cnt, 0, sizeof(cnt));
		es.bk->counters(es.ctx, &cnt);
		res->stats.peak_bytes = cnt.peak_bytes;
		res->stats.bytes_to_device += cnt.bytes_to_device;
		res->stats.bytes_from_device += cnt.bytes_from_device;
		res->stats.transfers += cnt.transfers;
		res->stats.launches = cnt.launches;
		res->stats.library_calls = cnt.library_calls;
	}
	exec_set_current(NULL, NULL);
	es.bk->ctx_destroy(es.ctx);
	gdl_free(es.prep);
	gdl_free(es.preds);
	gdl_free(need);
	res->stats.ms_total = gdl_now_ms() - t_start;
	return res;
}
