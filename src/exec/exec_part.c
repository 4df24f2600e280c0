/*
 * exec_part.c — the partitioned semi-naive driver (issue 14): one run
 * spread over P partitions, each a backend context of its own (one per GPU
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
 */
#include "exec_part_int.h"

#include <stdlib.h>
#include <string.h>

static int part_setting = 0;	/* gpudl.partitions */
static int part_ndevs = 0;		/* gpudl.devices: 0 = all */
static int part_devs[GDL_PART_MAX];
static int64_t part_min_rows = 100000;

/* The contexts of the running partitioned run, for exec_part_abort. */
static const GdlBackend *live_bk;
static void *live_ctx[GDL_PART_MAX];

/* Partitions of the next runs (0: one per device). */
void
gdl_engine_set_partitions(int n)
{
	part_setting = n < 0 ? 0 : (n > GDL_PART_MAX ? GDL_PART_MAX : n);
}

int
gdl_engine_partitions(void)
{
	return part_setting;
}

/* The GPU ordinals partitions run on (n = 0: all). */
void
gdl_engine_set_devices(const int *ids, int n)
{
	int			i;

	part_ndevs = n < 0 ? 0 : (n > GDL_PART_MAX ? GDL_PART_MAX : n);
	for (i = 0; i < part_ndevs; i++)
		part_devs[i] = ids[i];
}

/* Tables under this many rows are replicated. */
void
gdl_engine_set_part_min_rows(int64_t rows)
{
	part_min_rows = rows < 0 ? 0 : rows;
}

/* "all" or "0,1,3" -> ordinals; the count (0: all), -1 when not valid. */
int
gdl_part_parse_devices(const char *text, int *ids)
{
	const char *s = text;
	int			n = 0;

	while (*s == ' ')
		s++;
	if (*s == '\0' || strcmp(s, "all") == 0)
		return 0;
	while (*s)
	{
		char	   *end;
		long		v;
		int			i;

		while (*s == ' ')
			s++;
		if (*s < '0' || *s > '9')
			return -1;
		v = strtol(s, &end, 10);
		if (v < 0 || v > 1023 || n == GDL_PART_MAX)
			return -1;
		for (i = 0; i < n; i++)
			if (ids[i] == (int) v)
				return -1;		/* listed twice */
		ids[n++] = (int) v;
		s = end;
		while (*s == ' ')
			s++;
		if (*s == ',')
			s++;
		else if (*s != '\0')
			return -1;
	}
	return n;
}

/* Release the contexts of a partitioned run an error interrupted. */
void
exec_part_abort(void)
{
	int			p;

	for (p = 0; p < GDL_PART_MAX; p++)
		if (live_ctx[p])
		{
			void	   *c = live_ctx[p];

			live_ctx[p] = NULL;
			if (live_bk && live_bk->ctx_abort)
				live_bk->ctx_abort(c);
		}
	if (live_bk && live_bk->select_device)
		(void) live_bk->select_device(0);	/* as at the end of a run */
	live_bk = NULL;
}

/* A context exec_check destroyed: no longer ours to abort. */
void
exec_part_forget(void *ctx)
{
	int			p;

	for (p = 0; p < GDL_PART_MAX && ctx; p++)
		if (live_ctx[p] == ctx)
			live_ctx[p] = NULL;
}

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
	const GdlAnalysis *a = pr->a;
	const GdlPred *pred = &a->preds[pid];
	int64_t    *cols[GDL_BK_MAX_ARITY];
	int			n = 0,
				i,
				k;
	GdlBkRel   *bag;

	for (i = 0; i < ps->nfacts; i++)
		if (a->clauses[ps->facts[i]].head_pred == pid)
			n++;
	if (n == 0)
		return NULL;
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
										  pred->types ? pred->types[k] : GDL_TYPE_BIGINT,
										  pr->es[0].dict);
		n++;
	}
	bag = part_upload(pr, 0, pred->arity, n, cols);
	for (k = 0; k < pred->arity; k++)
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
static void
eval_stratum(PartRun *pr, const PlanStratum *ps, const GdlRunInput *in)
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
		int			pass,
					j;

		if (pp->primary < 0)
			pp->primary = part_primary_key(pr, ps, pid, init, rec);
		want[pp->primary + 1] = true;
		for (pass = 0; pass < 2; pass++)
		{
			int			n = pass == 0 ? ps->ninit : ps->nrec;
			const PlanRule *rules = pass == 0 ? ps->init : ps->rec;
			const PartBind *binds = pass == 0 ? init : rec;

			for (j = 0; j < n; j++)
				for (k = 0; k < rules[j].nsteps; k++)
				{
					const PlanStep *s = &rules[j].steps[k];

					if ((s->kind == PSTEP_START || s->kind == PSTEP_JOIN || s->kind == PSTEP_ANTI) &&
						s->atom.pred == pid)
						want[binds[j].key[k] + 1] = true;
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
					pass,
					j;

		stay[i] = pr->P > 1;
		for (j = 0; j < ps->nfacts; j++)
			if (a->clauses[ps->facts[j]].head_pred == pid)
				stay[i] = false;
		for (pass = 0; pass < 2; pass++)
		{
			int			n = pass == 0 ? ps->ninit : ps->nrec;
			const PlanRule *rules = pass == 0 ? ps->init : ps->rec;
			const PartBind *binds = pass == 0 ? init : rec;

			for (j = 0; j < n; j++)
			{
				const GdlClause *c = a->clauses[rules[j].clause].clause;
				int			kp = pr->preds[pid].primary;

				if (rules[j].head_pred != pid)
					continue;
				if (binds[j].var < 0 || kp < 0 || kp >= c->head.nargs ||
					c->head.args[kp]->kind != GDL_TERM_VAR || c->head.args[kp]->var != binds[j].var)
					stay[i] = false;
			}
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
		if (in->max_iterations > 0 && rounds >= in->max_iterations)
			gdl_error(GDL_ERR_LIMIT, NULL,
					  "Raise gpudl.max_iterations, or look for rules that derive new values without bound (arithmetic in recursion).",
					  "fixpoint not reached after %lld iterations", (long long) rounds);
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

/* Partition p's part of the goal's answer: its part of the goal relation, filtered. */
static GdlBkRel *
goal_part(PartRun *pr, int p, const GdlGoal *goal, GdlBkRel *full)
{
	const GdlPred *pred = &pr->a->preds[goal->pred];
	GdlBkExpr  *filters = gdl_alloc(sizeof(GdlBkExpr) * (goal->nbindings + goal->nequal + 1));
	GdlBkExpr  *outs = gdl_alloc(sizeof(GdlBkExpr) * (pred->arity + 1));
	ExprBuf		eb;
	GdlBkRel   *res = NULL;
	int			nf = 0,
				k;

	for (k = 0; k < goal->nbindings; k++)
	{
		if (goal->bindings[k].arg < 0 || goal->bindings[k].arg >= pred->arity)
			gdl_error(GDL_ERR_PARAM, NULL, NULL, "goal argument %d out of range", goal->bindings[k].arg);
		expr_init(&eb);
		expr_emit(&eb, GDL_BC_COL, goal->bindings[k].arg, 0);
		expr_emit(&eb, GDL_BC_CONST, 0, goal->bindings[k].value);
		expr_emit(&eb, GDL_BC_EQ, 0, 0);
		filters[nf++] = expr_done(&eb);
	}
	for (k = 0; k < goal->nequal; k++)
	{
		if (goal->equal_a[k] < 0 || goal->equal_a[k] >= pred->arity ||
			goal->equal_b[k] < 0 || goal->equal_b[k] >= pred->arity)
			gdl_error(GDL_ERR_PARAM, NULL, NULL, "goal argument out of range");
		expr_init(&eb);
		expr_emit(&eb, GDL_BC_COL, goal->equal_a[k], 0);
		expr_emit(&eb, GDL_BC_COL, goal->equal_b[k], 0);
		expr_emit(&eb, GDL_BC_EQ, 0, 0);
		filters[nf++] = expr_done(&eb);
	}
	for (k = 0; k < pred->arity; k++)
	{
		expr_init(&eb);
		expr_emit(&eb, GDL_BC_COL, k, 0);
		outs[k] = expr_done(&eb);
	}
	part_select(pr, p);
	exec_check(&pr->es[p], pr->bk->map(pr->es[p].ctx, full, nf, filters, pred->arity, outs, &res),
			   "goal filter");
	for (k = 0; k < nf; k++)
		gdl_free((void *) filters[k].code);
	for (k = 0; k < pred->arity; k++)
		gdl_free((void *) outs[k].code);
	gdl_free(filters);
	gdl_free(outs);
	return res;
}

/* The predicates the goal depends on (transitively). */
static bool *
needed_preds(const GdlAnalysis *a, int goal)
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

/* Partitions and their devices for this run; 0 when the run is not partitioned. */
static int
choose_partitions(const GdlBackend *bk, const GdlRunInput *in, int *dev)
{
	static int	ndev_cached = -1;
	int			ndev = 1,
				P,
				p,
				nuse;
	int			use[GDL_PART_MAX];

	if (part_setting == 1)
		return 0;
	if (in->device == GDL_DEVICE_GPU && bk->device_count && bk->select_device)
	{
		if (ndev_cached < 0)
			ndev_cached = bk->device_count();
		ndev = ndev_cached > 0 ? ndev_cached : 1;
	}
	if (part_setting == 0 && (in->device != GDL_DEVICE_GPU || ndev <= 1 ||
							  part_ndevs == 1))
		return 0;				/* one device: the unpartitioned path */
	if (in->device == GDL_DEVICE_GPU && bk->select_device)
	{
		nuse = 0;
		if (part_ndevs == 0)
			for (p = 0; p < ndev && p < GDL_PART_MAX; p++)
				use[nuse++] = p;
		else
			for (p = 0; p < part_ndevs; p++)
			{
				if (part_devs[p] >= ndev)
					gdl_error(GDL_ERR_PARAM, NULL, "Set gpudl.devices to ordinals below the device count, or to 'all'.",
							  "gpudl.devices names GPU %d, but there are %d", part_devs[p], ndev);
				use[nuse++] = part_devs[p];
			}
	}
	else
	{
		nuse = 1;
		use[0] = -1;			/* the CPU, or a backend of one device */
	}
	P = part_setting > 0 ? part_setting : nuse;
	if (P <= 1)
		return 0;
	for (p = 0; p < P; p++)
		dev[p] = use[p % nuse];
	return P;
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

	if (part_setting == 1 || (part_setting == 0 && in->device != GDL_DEVICE_GPU))
		return NULL;			/* the common case: costs a compare */
	/* a context an error left (its host memory may be gone: abort only) */
	exec_part_abort();
	bk = gdl_backend_for(in->device);
	if (bk == NULL || in->load_edb == NULL)
		return NULL;
	P = choose_partitions(bk, in, dev);
	if (P <= 1)
		return NULL;			/* (gpudl.devices applies to partitioned runs only) */
	need = needed_preds(a, goal->pred);
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
	pr.min_rows = part_min_rows;
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
	live_bk = bk;
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
		live_ctx[p] = es->ctx;
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
	{
		const PlanStratum *ps = &plan->strata[i];
		bool		wanted = false;
		int			k;

		for (k = 0; k < ps->npreds; k++)
			if (need[ps->preds[k]])
				wanted = true;
		if (wanted)
			eval_stratum(&pr, ps, in);
	}

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
		live_ctx[p] = NULL;
		bk->ctx_destroy(pr.es[p].ctx);
		pr.es[p].ctx = NULL;
		gdl_free(pr.es[p].prep);
		gdl_free(pr.es[p].preds);
	}
	live_bk = NULL;
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
