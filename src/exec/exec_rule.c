/*
 * exec_rule.c — running one rule version of the plan on the backend: the
 * steps of a PlanRule (start, joins, maps, anti-joins) turned into backend
 * operations on an intermediate relation, then the head projection, or the
 * aggregation of an aggregate rule.  Returns a bag of head tuples.
 */
#include "exec_int.h"

#include <string.h>
#include <time.h>

/* Number of rows of a relation. */
int64_t
exec_size(ExecState *es, GdlBkRel *r)
{
	int64_t		n = 0;

	exec_check(es, es->bk->size(es->ctx, r, &n), "size");
	return n;
}

/* An empty relation of the given arity. */
GdlBkRel *
exec_empty(ExecState *es, int arity)
{
	GdlBkRel   *r = NULL;
	const int64_t *cols[GDL_BK_MAX_ARITY];

	memset(cols, 0, sizeof(cols));
	exec_check(es, es->bk->upload(es->ctx, arity, 0, cols, &r), "upload");
	return r;
}

/* Drop every cached prepared atom. */
void
exec_prep_clear(ExecState *es)
{
	int			i;

	for (i = 0; i < es->nprep; i++)
		es->bk->release(es->ctx, es->prep[i].rel);
	es->nprep = 0;
}

/* The relation an atom reads (NULL when the predicate has none yet). */
static GdlBkRel *
atom_source(ExecState *es, const PlanAtom *pa)
{
	ExecPred   *p = &es->preds[pa->pred];

	switch (pa->src)
	{
		case PLAN_SRC_DELTA:
			return p->delta;
		case PLAN_SRC_OLD:
			return p->old;
		default:
			return p->full;
	}
}

/*
 * The atom's relation filtered by its constants and repeated variables and
 * projected to its variables.  *owned tells whether the caller must release
 * it (not when it is the source itself or a cached preparation).
 */
static GdlBkRel *
prepare_atom(ExecState *es, const PlanRule *r, const PlanAtom *pa, bool *owned)
{
	GdlBkRel   *src = atom_source(es, pa);
	const GdlAnalysis *a = es->a;
	const GdlPred *pred = &a->preds[pa->pred];
	const GdlClauseInfo *info = &a->clauses[r->clause];
	GdlBkExpr  *filters,
			   *outs;
	ExprBuf		eb;
	ExprEnv		env;
	GdlBkRel   *res = NULL;
	int			nf = 0,
				k,
				i;
	int64_t		version = es->preds[pa->pred].version;

	*owned = false;
	if (src == NULL)
		gdl_error(GDL_ERR_INTERNAL, NULL, NULL, "predicate %s has no relation", pred->name);
	if (pa->trivial)
		return src;
	for (i = 0; i < es->nprep; i++)
		if (es->prep[i].atom == pa)
		{
			if (es->prep[i].version == version)
				return es->prep[i].rel;
			/* stale: the source changed */
			es->bk->release(es->ctx, es->prep[i].rel);
			es->prep[i] = es->prep[--es->nprep];
			break;
		}
	expr_env_init(&env, info, NULL, 0, NULL, es->dict);
	filters = gdl_alloc(sizeof(GdlBkExpr) * (pa->nconst + pa->neq + 1));
	outs = gdl_alloc(sizeof(GdlBkExpr) * (pa->nvars + 1));
	for (k = 0; k < pa->nconst; k++)
	{
		GdlType		ty = pred->types ? pred->types[pa->const_col[k]] : GDL_TYPE_BIGINT;

		expr_init(&eb);
		expr_emit(&eb, GDL_BC_COL, pa->const_col[k], 0);
		expr_emit(&eb, GDL_BC_CONST, 0, expr_const_value(pa->const_term[k], ty, es->dict));
		expr_emit(&eb, ty == GDL_TYPE_FLOAT8 ? GDL_BC_FEQ : GDL_BC_EQ, 0, 0);
		filters[nf++] = expr_done(&eb);
	}
	for (k = 0; k < pa->neq; k++)
	{
		GdlType		ty = pred->types ? pred->types[pa->eq_a[k]] : GDL_TYPE_BIGINT;

		expr_init(&eb);
		expr_emit(&eb, GDL_BC_COL, pa->eq_a[k], 0);
		expr_emit(&eb, GDL_BC_COL, pa->eq_b[k], 0);
		expr_emit(&eb, ty == GDL_TYPE_FLOAT8 ? GDL_BC_FEQ : GDL_BC_EQ, 0, 0);
		filters[nf++] = expr_done(&eb);
	}
	for (k = 0; k < pa->nvars; k++)
	{
		expr_init(&eb);
		expr_emit(&eb, GDL_BC_COL, pa->cols[k], 0);
		outs[k] = expr_done(&eb);
	}
	exec_check(es, es->bk->map(es->ctx, src, nf, filters, pa->nvars, outs, &res), "filter");
	if (pa->sorted)
	{
		GdlBkRel   *set = NULL;

		exec_check(es, es->bk->dedup(es->ctx, 1, &res, &set), "dedup");
		es->bk->release(es->ctx, res);
		res = set;
	}
	expr_free_exprs(filters, nf, outs, pa->nvars);
	/* keep it while the source does not change */
	es->prep = gdl_grow(es->prep, es->nprep, &es->capprep, 16, sizeof(PrepCache));
	es->prep[es->nprep].atom = pa;
	es->prep[es->nprep].version = version;
	es->prep[es->nprep].rel = res;
	es->nprep++;
	return res;
}

/* Run a MAP step: filters and outputs compiled against the input layout. */
static GdlBkRel *
run_map(ExecState *es, const PlanRule *r, const PlanStep *s, const int *layout, int nlayout,
		GdlBkRel *in)
{
	const GdlAnalysis *a = es->a;
	const GdlClauseInfo *info = &a->clauses[r->clause];
	const GdlClause *c = info->clause;
	const GdlPred *head = &a->preds[r->head_pred];
	ExprEnv		env;
	ExprBuf		eb;
	GdlBkExpr  *filters = gdl_alloc(sizeof(GdlBkExpr) * (s->nfilters + 1));
	GdlBkExpr  *outs = gdl_alloc(sizeof(GdlBkExpr) * (s->nvars + 1));
	GdlBkRel   *res = NULL;
	int			k;

	expr_env_init(&env, info, layout, nlayout, r->assign_lit, es->dict);
	for (k = 0; k < s->nfilters; k++)
	{
		expr_init(&eb);
		expr_cmp(&env, &eb, &c->body[s->filters[k]]);
		filters[k] = expr_done(&eb);
	}
	for (k = 0; k < s->nvars; k++)
	{
		expr_init(&eb);
		if (s->vars[k] >= 0)
		{
			GdlTerm		v;

			memset(&v, 0, sizeof(v));
			v.kind = GDL_TERM_VAR;
			v.var = s->vars[k];
			expr_term(&env, &eb, &v, GDL_TYPE_UNKNOWN);
		}
		else
			expr_term(&env, &eb, c->head.args[k],
					  head->types ? head->types[k] : GDL_TYPE_UNKNOWN);
		outs[k] = expr_done(&eb);
	}
	exec_check(es, es->bk->map(es->ctx, in, s->nfilters, filters, s->nvars, outs, &res), "map");
	expr_free_exprs(filters, s->nfilters, outs, s->nvars);
	return res;
}

/*
 * The aggregate of a rule: 'in' holds every binding of the body variables
 * (layout given); distinct bindings are grouped by the head's plain
 * arguments and aggregated.
 */
static GdlBkRel *
run_aggregate(ExecState *es, const PlanRule *r, const int *layout, int nlayout, GdlBkRel *in)
{
	const GdlAnalysis *a = es->a;
	const GdlClauseInfo *info = &a->clauses[r->clause];
	const GdlClause *c = info->clause;
	const GdlPred *head = &a->preds[r->head_pred];
	int			nargs = c->head.nargs;
	GdlBkExpr  *outs = gdl_alloc(sizeof(GdlBkExpr) * (nargs + 1));
	GdlBkAgg   *aggs = gdl_alloc(sizeof(GdlBkAgg) * (nargs + 1));
	int		   *group = gdl_alloc(sizeof(int) * (nargs + 1));
	int		   *pos = gdl_alloc(sizeof(int) * (nargs + 1));
	int			ngroup = 0,
				nagg = 0,
				nout = 0,
				k;
	GdlBkRel   *distinct = NULL,
			   *proj = NULL,
			   *agg = NULL,
			   *res = NULL;
	ExprEnv		env;
	ExprBuf		eb;

	expr_env_init(&env, info, layout, nlayout, r->assign_lit, es->dict);
	exec_check(es, es->bk->dedup(es->ctx, 1, &in, &distinct), "dedup");
	/* group columns first, then the aggregated arguments */
	for (k = 0; k < nargs; k++)
		if (c->head.args[k]->kind != GDL_TERM_AGG)
		{
			expr_init(&eb);
			expr_term(&env, &eb, c->head.args[k], head->types ? head->types[k] : GDL_TYPE_UNKNOWN);
			outs[nout] = expr_done(&eb);
			group[ngroup] = nout;
			pos[k] = ngroup++;
			nout++;
		}
	for (k = 0; k < nargs; k++)
	{
		const GdlTerm *t = c->head.args[k];
		GdlType		ty;

		if (t->kind != GDL_TERM_AGG)
			continue;
		ty = t->arg && t->arg->kind != GDL_TERM_ANON ? expr_term_type(info, t->arg) : GDL_TYPE_BIGINT;
		aggs[nagg].kind = (int) t->agg;	/* GdlAggKind and GdlBkAggKind agree */
		aggs[nagg].valkind = ty == GDL_TYPE_FLOAT8 ? GDL_BK_VAL_FLOAT :
			(ty == GDL_TYPE_TEXT ? GDL_BK_VAL_TEXT : GDL_BK_VAL_INT);
		aggs[nagg].col = -1;
		if (t->agg != GDL_AGG_COUNT)
		{
			if (t->arg == NULL || t->arg->kind == GDL_TERM_ANON)
				gdl_error(GDL_ERR_UNSAFE, NULL, NULL, "aggregate needs a variable or expression");
			expr_init(&eb);
			expr_term(&env, &eb, t->arg, ty);
			outs[nout] = expr_done(&eb);
			aggs[nagg].col = nout++;
		}
		pos[k] = ngroup + nagg++;
	}
	exec_check(es, es->bk->map(es->ctx, distinct, 0, NULL, nout, outs, &proj), "map");
	es->bk->release(es->ctx, distinct);
	exec_check(es, es->bk->aggregate(es->ctx, proj, ngroup, group, nagg, aggs, &agg), "aggregate");
	es->bk->release(es->ctx, proj);
	for (k = 0; k < nout; k++)
		gdl_free((void *) outs[k].code);
	/* back to the head's argument order */
	for (k = 0; k < nargs; k++)
	{
		expr_init(&eb);
		expr_emit(&eb, GDL_BC_COL, pos[k], 0);
		if (c->head.args[k]->kind == GDL_TERM_AGG && head->types &&
			head->types[k] == GDL_TYPE_FLOAT8 && aggs[pos[k] - ngroup].valkind == GDL_BK_VAL_INT &&
			c->head.args[k]->agg != GDL_AGG_COUNT)
			expr_emit(&eb, GDL_BC_I2F, 0, 0);
		outs[k] = expr_done(&eb);
	}
	exec_check(es, es->bk->map(es->ctx, agg, 0, NULL, nargs, outs, &res), "map");
	es->bk->release(es->ctx, agg);
	for (k = 0; k < nargs; k++)
		gdl_free((void *) outs[k].code);
	gdl_free(outs);
	gdl_free(aggs);
	gdl_free(group);
	gdl_free(pos);
	return res;
}

/* Add a derived relation (NULL is ignored). */
void
exec_outs_add(ExecOuts *o, GdlBkRel *r)
{
	if (r == NULL)
		return;
	o->v = gdl_grow(o->v, o->n, &o->cap, 4, sizeof(GdlBkRel *));
	o->v[o->n++] = r;
}

/*
 * Where the head tuples of a rule version go.  Normally each bag goes to
 * the round's outputs as is.  Once a join had to be split (its output would
 * pass batch_rows), every piece's bag is reduced at once — deduplicated,
 * stripped of tuples already in the head's full relation — and the pieces'
 * sets are merged like a binary counter, so memory stays near the size of
 * what is really new.
 */
typedef struct Sink
{
	ExecOuts   *out;
	bool		reduce;
	int			nstack;
	GdlBkRel   *stack[64];
	int64_t		ssize[64];
} Sink;

static void sink_one(ExecState *es, const PlanRule *r, Sink *sk, GdlBkRel *bag);
static void sink_push(ExecState *es, Sink *sk, GdlBkRel *set);

/* A bag as a set (the bag released), timed as dedup. */
static GdlBkRel *
to_set(ExecState *es, GdlBkRel *bag)
{
	GdlBkRel   *set = NULL;
	ExecMark	m0 = exec_mark(es);

	exec_check(es, es->bk->dedup(es->ctx, 1, &bag, &set), "dedup");
	es->bk->release(es->ctx, bag);
	exec_charge(es, m0, &es->stats->ms_dedup, &es->stats->launches_dedup);
	return set;
}

/* A set minus the head's full relation (the set released), timed as difference. */
static GdlBkRel *
minus_full(ExecState *es, GdlBkRel *set, GdlBkRel *full)
{
	GdlBkRel   *d = NULL;
	ExecMark	m0;

	if (full == NULL || exec_size(es, full) == 0)
		return set;
	m0 = exec_mark(es);
	exec_check(es, es->bk->difference(es->ctx, set, full, &d), "difference");
	es->bk->release(es->ctx, set);
	exec_charge(es, m0, &es->stats->ms_difference, &es->stats->launches_difference);
	return d;
}

/*
 * The rows of a set with their columns permuted as the version's mirror
 * says (plan_mirror.c): the tuples of the version it stands for.
 */
static GdlBkRel *
mirror_rows(ExecState *es, const PlanRule *r, GdlBkRel *set)
{
	int			arity = es->a->preds[r->head_pred].arity;
	GdlBkExpr	outs[GDL_BK_MAX_ARITY];
	GdlBkInsn	code[GDL_BK_MAX_ARITY];
	GdlBkRel   *res = NULL;
	int			k;

	for (k = 0; k < arity; k++)
	{
		code[k].op = GDL_BC_COL;
		code[k].arg = r->mirror_perm[k];
		code[k].imm = 0;
		outs[k].ncode = 1;
		outs[k].code = &code[k];
	}
	exec_check(es, es->bk->map(es->ctx, set, 0, NULL, arity, outs, &res), "map");
	return res;
}

/*
 * Take one bag of head tuples (NULL is ignored).  A version with a mirror
 * hands on its rows made a set (cheap: they come grouped) and the set's
 * mirror image, distinct rows already; with a symmetric head, only the
 * rows its full relation does not hold yet, and their mirrors.
 */
static void
sink_bag(ExecState *es, const PlanRule *r, Sink *sk, GdlBkRel *bag)
{
	GdlBkRel   *set;
	GdlBkRel   *full = es->preds[r->head_pred].full;

	if (bag == NULL || r->mirror_perm == NULL || !es->mirrors)
	{
		sink_one(es, r, sk, bag);
		return;
	}
	set = to_set(es, bag);
	if (r->mirror_sym_head && exec_size(es, set) > 0)
		set = minus_full(es, set, full);	/* a symmetric full holds their mirrors too */
	if (exec_size(es, set) == 0)
	{
		es->bk->release(es->ctx, set);
		return;
	}
	if (sk->reduce && r->mirror_sym_head)
	{
		/*
		 * both new already (full holds neither the set's rows nor, being
		 * symmetric, their mirrors): no second difference
		 */
		GdlBkRel   *mset = to_set(es, mirror_rows(es, r, set));

		sink_push(es, sk, set);
		sink_push(es, sk, mset);
		return;
	}
	sink_one(es, r, sk, mirror_rows(es, r, set));
	sink_one(es, r, sk, set);
}

/* Take one bag of head tuples (NULL is ignored). */
static void
sink_one(ExecState *es, const PlanRule *r, Sink *sk, GdlBkRel *bag)
{
	if (bag == NULL)
		return;
	if (!sk->reduce)
	{
		exec_outs_add(sk->out, bag);
		return;
	}
	sink_push(es, sk, minus_full(es, to_set(es, bag), es->preds[r->head_pred].full));
}

/*
 * Push a set of new head tuples onto the sink's stack, merging like a
 * binary counter (sets of similar sizes merge), so that memory stays near
 * the size of what is new.
 */
static void
sink_push(ExecState *es, Sink *sk, GdlBkRel *set)
{
	ExecMark	m0;

	sk->stack[sk->nstack] = set;
	sk->ssize[sk->nstack++] = exec_size(es, set);
	while (sk->nstack >= 2 &&
		   (sk->ssize[sk->nstack - 1] * 2 >= sk->ssize[sk->nstack - 2] || sk->nstack == 64))
	{
		GdlBkRel   *m = NULL;

		m0 = exec_mark(es);
		exec_check(es, es->bk->merge(es->ctx, sk->stack[sk->nstack - 2],
									 sk->stack[sk->nstack - 1], &m), "merge");
		exec_charge(es, m0, &es->stats->ms_dedup, &es->stats->launches_dedup);
		es->bk->release(es->ctx, sk->stack[sk->nstack - 2]);
		es->bk->release(es->ctx, sk->stack[sk->nstack - 1]);
		sk->nstack--;
		sk->stack[sk->nstack - 1] = m;
		sk->ssize[sk->nstack - 1] = exec_size(es, m);
	}
}

/*
 * A join step's output columns as the backend takes them.  The planner keeps
 * its own PlanColRef (it sits below the engine and includes none of its
 * headers); the two are the same (side, col) pair, checked here, so the
 * planner's array is passed as it is.
 */
_Static_assert(sizeof(PlanColRef) == sizeof(GdlBkColRef) &&
			   offsetof(PlanColRef, side) == offsetof(GdlBkColRef, side) &&
			   offsetof(PlanColRef, col) == offsetof(GdlBkColRef, col),
			   "PlanColRef and GdlBkColRef differ");

static inline const GdlBkColRef *
backend_refs(const PlanStep *s)
{
	return (const GdlBkColRef *) s->refs;
}

/*
 * Run the steps of a rule version from step 'first' on, starting from
 * relation 'cur' (released here when 'cur_owned'), and hand the head tuples
 * to the sink.  A join whose output would pass batch_rows rows, or not fit
 * in the memory left under the run's limit (exec_mem.c), runs over slices
 * of its left input instead, each continuing through the remaining steps
 * (recursively, so a later big join splits again); under a limit, a left
 * input too big even to count at once (exec_mem_left_rows) is sliced
 * before counting.
 */
static void
run_steps(ExecState *es, const PlanRule *r, int first, GdlBkRel *cur, bool cur_owned, Sink *sk)
{
	const int  *layout = first > 0 ? r->steps[first - 1].vars : NULL;
	int			nlayout = first > 0 ? r->steps[first - 1].nvars : 0;
	int			i;

	for (i = first; i < r->nsteps; i++)
	{
		const PlanStep *s = &r->steps[i];
		GdlBkRel   *next = NULL;
		bool		atom_owned = false;
		GdlBkRel   *R;

		switch (s->kind)
		{
			case PSTEP_UNIT:
				next = es->unit;
				break;
			case PSTEP_START:
				next = prepare_atom(es, r, &s->atom, &atom_owned);
				break;
			case PSTEP_JOIN:
				if (s->sort_left)
				{
					GdlBkRel   *sorted = NULL;

					exec_check(es, es->bk->dedup(es->ctx, 1, &cur, &sorted), "dedup");
					if (cur_owned)
						es->bk->release(es->ctx, cur);
					cur = sorted;
					cur_owned = true;
				}
				R = prepare_atom(es, r, &s->atom, &atom_owned);
				if (!r->is_agg && (es->batch_rows > 0 || es->mem_limit > 0) &&
					es->bk->join_count && es->bk->slice)
				{
					int64_t		cnt = 0,
								n = exec_size(es, cur),
								max_rows,
								max_left = exec_mem_left_rows(es);

					/* a left input too big to count at once is sliced first */
					if (max_left > 0 && n > max_left)
					{
						cnt = n;
						max_rows = max_left;
					}
					else
					{
						exec_check(es, es->bk->join_count(es->ctx, cur, R, s->nkeys, s->lkeys,
														  s->rkeys, &cnt), "join");
						max_rows = exec_mem_join_rows(es, s->nvars);
					}
					if (max_rows > 0 && cnt > max_rows && n > 1)
					{
						int64_t		pieces = (cnt + max_rows - 1) / max_rows,
									p;

						if (pieces > n)
							pieces = n;
						sk->reduce = true;
						for (p = 0; p < pieces; p++)
						{
							GdlBkRel   *slice = NULL;

							gdl_check_interrupts();
							es->stats->batches++;
							exec_check(es, es->bk->slice(es->ctx, cur, n * p / pieces,
														 n * (p + 1) / pieces, &slice), "slice");
							run_steps(es, r, i, slice, true, sk);
						}
						if (atom_owned)
							es->bk->release(es->ctx, R);
						if (cur_owned)
							es->bk->release(es->ctx, cur);
						return;
					}
				}
				exec_check(es, es->bk->join(es->ctx, cur, R, s->nkeys, s->lkeys, s->rkeys,
											s->nvars, backend_refs(s), &next), "join");
				if (atom_owned)
					es->bk->release(es->ctx, R);
				atom_owned = true;
				break;
			case PSTEP_ANTI:
				R = prepare_atom(es, r, &s->atom, &atom_owned);
				exec_check(es, es->bk->antijoin(es->ctx, cur, R, s->nkeys, s->lkeys, s->rkeys,
												&next), "anti-join");
				if (atom_owned)
					es->bk->release(es->ctx, R);
				atom_owned = true;
				break;
			case PSTEP_MAP:
				next = run_map(es, r, s, layout, nlayout, cur);
				atom_owned = true;
				break;
		}
		if (cur_owned)
			es->bk->release(es->ctx, cur);
		cur = next;
		cur_owned = atom_owned;
		layout = s->vars;
		nlayout = s->nvars;
		if (exec_size(es, cur) == 0)
		{
			if (cur_owned)
				es->bk->release(es->ctx, cur);
			return;
		}
	}
	if (r->is_agg)
	{
		GdlBkRel   *res = run_aggregate(es, r, layout, nlayout, cur);

		if (cur_owned)
			es->bk->release(es->ctx, cur);
		sink_bag(es, r, sk, res);
		return;
	}
	if (!cur_owned)
		gdl_error(GDL_ERR_INTERNAL, NULL, NULL, "rule plan does not end in a projection");
	sink_bag(es, r, sk, cur);
}

/*
 * Run one rule version and add what it derives to 'out': nothing, one bag,
 * or, when a join had to be split, one set of the pieces' new tuples
 * (counted in out->reduced).
 */
void
exec_rule(ExecState *es, const PlanRule *r, ExecOuts *out)
{
	Sink		sk;

	memset(&sk, 0, sizeof(sk));
	sk.out = out;
	run_steps(es, r, 0, NULL, false, &sk);
	if (sk.nstack == 0)
		return;
	/* one set of the pieces' tuples: merged smallest first, never re-sorted */
	while (sk.nstack >= 2)
	{
		GdlBkRel   *m = NULL;
		ExecMark	m0 = exec_mark(es);

		exec_check(es, es->bk->merge(es->ctx, sk.stack[sk.nstack - 2],
									 sk.stack[sk.nstack - 1], &m), "merge");
		exec_charge(es, m0, &es->stats->ms_dedup, &es->stats->launches_dedup);
		es->bk->release(es->ctx, sk.stack[sk.nstack - 2]);
		es->bk->release(es->ctx, sk.stack[sk.nstack - 1]);
		sk.nstack--;
		sk.stack[sk.nstack - 1] = m;
	}
	exec_outs_add(out, sk.stack[0]);
	out->reduced++;
}
