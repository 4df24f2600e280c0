/*
 * ilp_select.c — from trained candidates to a small, accurate program.
 *
 * Deterministic top-k with greedy pruning: candidates are taken in order of
 * their trained probability (then lower id), and one joins the program only
 * when it still gains something — derives more new positives than
 * (weighted) new negatives — so rules that add no coverage or only add
 * errors are skipped.  Only candidates that training pushed up (eligible)
 * take part; a rule must also derive at least min_support positives and
 * have its own precision >= min_precision.  Then rules whose removal does
 * not lower the score are dropped (longest first), which keeps the program
 * small.
 *
 * A candidate's coverage of the examples is exact for non-recursive
 * programs.  With the target in a body, coverage was computed with the
 * positives standing for the target (as FOIL does), which says little about
 * what the program derives on its own; so any program with a recursive rule
 * is judged by evaluating it to fixpoint (through the host's hook, which
 * runs the real engine, or else the own evaluator).
 */
#include "ilp_int.h"

#include <stdlib.h>
#include <string.h>

#define ILP_TRIAL_BUDGET 256	/* fixpoint evaluations one selection may make */

/* The program of the given candidates as Datalog source, invented clauses first. */
char *
ilp_program_text(const IlpWorld *w, const IlpCandSet *cs, const int32_t *ids, int n)
{
	GdlBuf		b;
	bool	   *used = gdl_alloc(sizeof(bool) * (w->npreds + 1));

	gdl_buf_init(&b);
	gdl_buf_append(&b, "%s", "");
	for (int i = 0; i < n; i++)
	{
		const IlpRule *r = &cs->c[ids[i]].rule;

		for (int k = 0; k < r->natoms; k++)
			if (w->preds[r->lits[k].pred].kind == ILP_PRED_CLOSURE)
				used[r->lits[k].pred] = true;
	}
	for (int p = 0; p < w->npreds; p++)
		if (used[p])
			gdl_buf_append(&b, "%s\n", ilp_closure_text(w, p));
	for (int i = 0; i < n; i++)
		gdl_buf_append(&b, "%s\n", ilp_rule_text(&cs->c[ids[i]].rule, w));
	gdl_free(used);
	return b.data;
}

/*
 * Mark the examples a program of candidates derives: the union of their
 * coverage when none is recursive, else a fixpoint evaluation.
 */
void
ilp_program_eval(IlpSelectCtx *ctx, const int32_t *ids, int n, bool *derived)
{
	const IlpWorld *w = ctx->w;
	const IlpCandSet *cs = ctx->cs;
	int32_t		nex = w->npos + w->nneg;
	bool		recursive = false;
	bool		base = false;

	for (int i = 0; i < n; i++)
	{
		recursive = recursive || cs->c[ids[i]].recursive;
		base = base || !cs->c[ids[i]].recursive;
	}
	if (recursive && !base && w->known->n == 0)
	{
		/* recursion with nothing to start from derives nothing */
		memset(derived, 0, sizeof(bool) * nex);
		return;
	}
	if (!recursive || n == 0)
	{
		memset(derived, 0, sizeof(bool) * nex);
		for (int i = 0; i < n; i++)
			for (int32_t k = 0; k < cs->c[ids[i]].ncov; k++)
				derived[cs->c[ids[i]].cov[k]] = true;
		if (w->known->n > 0)
			for (int32_t e = 0; e < w->npos; e++)
				derived[e] = derived[e] || ilp_rel_has(w->known, w->ex[0][e], w->ex[1][e]);
		return;
	}
	ctx->evals++;
	if (ctx->hook != NULL && ctx->hook->fn != NULL)
	{
		char	   *text = ilp_program_text(w, cs, ids, n);

		if (ctx->facts == NULL)
			ctx->facts = ilp_world_examples(w);
		memset(derived, 0, sizeof(bool) * nex);
		ctx->hook->fn(ctx->hook->arg, text, w->target_name, w->arity, ctx->facts, derived);
		gdl_free(text);
	}
	else
	{
		IlpRule    *rules = gdl_alloc(sizeof(IlpRule) * (n + 1));

		for (int i = 0; i < n; i++)
			rules[i] = cs->c[ids[i]].rule;
		ilp_fixpoint(w, rules, n, derived);
		gdl_free(rules);
	}
}

/* True and false positives of a derivation. */
static void
count_tp_fp(const IlpWorld *w, const bool *derived, int32_t *tp, int32_t *fp)
{
	*tp = *fp = 0;
	for (int32_t e = 0; e < w->npos + w->nneg; e++)
		if (derived[e])
		{
			if (e < w->npos)
				(*tp)++;
			else
				(*fp)++;
		}
}

/* A program's score on the examples: true minus (weighted) false positives. */
static double
score(const IlpWorld *w, int32_t tp, int32_t fp)
{
	return (double) tp - w->neg_weight * (double) fp;
}

/* May candidate c join a program at all? */
static bool
admissible(const IlpSelectCtx *ctx, int32_t c)
{
	const IlpCand *cd = &ctx->cs->c[c];
	double		nneg = ctx->w->neg_weight * (cd->ncov - cd->npos);

	if (!ctx->eligible[c] || cd->npos < ctx->min_support || cd->ncov == 0)
		return false;
	return (double) cd->npos / ((double) cd->npos + nneg) >= ctx->min_precision;
}

/*
 * The admissible candidate (recursive or not, as asked) of highest trained
 * probability, lowest id on ties, among those that still gain something;
 * -1 when none does.
 */
static int32_t
next_candidate(const IlpSelectCtx *ctx, const bool *derived, const bool *chosen,
		  const int32_t *tried_at, int n, bool recursive, bool has_rec, bool budget_left)
{
	const IlpWorld *w = ctx->w;
	const IlpCandSet *cs = ctx->cs;
	int32_t		best = -1;

	for (int32_t c = 0; c < cs->n; c++)
	{
		const IlpCand *cd = &cs->c[c];
		int32_t		np = 0,
					nn = 0;
		double		gain;
		bool		needs_trial = cd->recursive || has_rec;

		if (cd->recursive != recursive || chosen[c] || !admissible(ctx, c))
			continue;
		if (needs_trial && (tried_at[c] == n || !budget_left))
			continue;
		for (int32_t k = 0; k < cd->ncov; k++)
			if (!derived[cd->cov[k]])
			{
				if (cd->cov[k] < w->npos)
					np++;
				else
					nn++;
			}
		gain = np - w->neg_weight * nn;
		if (np < 1 || gain <= 0)
			continue;
		/* trained probability first, lower id on ties (c ascends) */
		if (best < 0 || ctx->prob[c] > ctx->prob[best])
			best = c;
	}
	return best;
}

/*
 * Select a program.  Non-recursive candidates first (their gain is exact);
 * then, while positives are left underived, recursive candidates (gain
 * estimated from coverage), each checked at fixpoint (and once the program is
 * recursive, every addition is).  The greedy may go past max_rules; then
 * rules whose removal does not lower the score are dropped, longest first,
 * and the program is cut to max_rules.
 */
void
ilp_select(IlpSelectCtx *ctx, IlpSelection *out)
{
	const IlpWorld *w = ctx->w;
	const IlpCandSet *cs = ctx->cs;
	int32_t		nex = w->npos + w->nneg;
	bool	   *derived = gdl_alloc(sizeof(bool) * (nex + 1));
	bool	   *trial = gdl_alloc(sizeof(bool) * (nex + 1));
	int32_t    *tried_at = gdl_alloc(sizeof(int32_t) * (cs->n + 1));
	bool	   *chosen = gdl_alloc(sizeof(bool) * (cs->n + 1));
	int			cap = ctx->max_rules * 4 > 64 ? ctx->max_rules * 4 : 64;
	int32_t    *ids = gdl_alloc(sizeof(int32_t) * (cap + 1));
	int32_t    *rest = gdl_alloc(sizeof(int32_t) * (cap + 1));
	uint64_t   *order;
	int			n = 0;
	int32_t		tp,
				fp;
	bool		has_rec = false;
	int			trials = 0;
	double		last_trial = 0;

	for (int32_t c = 0; c < cs->n; c++)
		tried_at[c] = -1;
	ilp_program_eval(ctx, ids, 0, derived);
	count_tp_fp(w, derived, &tp, &fp);

	while (n < cap)
	{
		bool		budget = trials < ILP_TRIAL_BUDGET;
		int32_t		best;

		gdl_check_interrupts();
		/*
		 * No fixpoint trial that would end past max_seconds (judged by the
		 * last one's duration): cheap additions only from then on.
		 */
		if (budget && ctx->deadline > 0 && ilp_now() + last_trial > ctx->deadline)
			ctx->expired = true;
		budget = budget && !ctx->expired;
		best = next_candidate(ctx, derived, chosen, tried_at, n, false, has_rec, budget);
		if (best < 0 && tp < w->npos)
			best = next_candidate(ctx, derived, chosen, tried_at, n, true, has_rec, budget);
		if (best < 0)
			break;
		if (cs->c[best].recursive || has_rec)
		{
			int32_t		ttp,
						tfp;

			double		t0 = ilp_now();

			ids[n] = best;
			trials++;
			ilp_program_eval(ctx, ids, n + 1, trial);
			last_trial = ilp_now() - t0;
			count_tp_fp(w, trial, &ttp, &tfp);
			if (score(w, ttp, tfp) <= score(w, tp, fp))
			{
				tried_at[best] = n;
				continue;
			}
			memcpy(derived, trial, sizeof(bool) * nex);
			tp = ttp;
			fp = tfp;
		}
		else
		{
			const IlpCand *cd = &cs->c[best];

			for (int32_t k = 0; k < cd->ncov; k++)
				derived[cd->cov[k]] = true;
			count_tp_fp(w, derived, &tp, &fp);
		}
		ids[n++] = best;
		chosen[best] = true;
		has_rec = has_rec || cs->c[best].recursive;
	}

	/*
	 * backward elimination: drop what the program does not need, longest
	 * first, later ranks first among equals: the keys length << 32 | rank
	 * ascending, taken from the last
	 */
	order = gdl_alloc(sizeof(uint64_t) * (n + 1));
	for (int i = 0; i < n; i++)
		order[i] = (uint64_t) cs->c[ids[i]].rule.nlits << 32 | (uint32_t) i;
	qsort(order, n, sizeof(uint64_t), ilp_cmp_u64);
	for (int k = 0; k < n; k++)
	{
		int			pos = (int) (order[n - 1 - k] & 0xffffffffu);
		int			victim = ids[pos];
		int			m = 0,
					cur = 0;
		int32_t		ttp,
					tfp;

		for (int j = 0; j < n; j++)
			if (ids[j] >= 0)
				cur++;
		if (cur <= 1)
			break;
		/* elimination only prunes: past max_seconds a recursive program keeps its rules */
		if (has_rec && ctx->deadline > 0 && ilp_now() + last_trial > ctx->deadline)
		{
			ctx->expired = true;
			break;
		}
		for (int j = 0; j < n; j++)
			if (ids[j] >= 0 && ids[j] != victim)
				rest[m++] = ids[j];
		ilp_program_eval(ctx, rest, m, trial);
		count_tp_fp(w, trial, &ttp, &tfp);
		if (score(w, ttp, tfp) >= score(w, tp, fp))
		{
			ids[pos] = -1;
			memcpy(derived, trial, sizeof(bool) * nex);
			tp = ttp;
			fp = tfp;
		}
	}
	{
		int			m = 0,
					surviving = 0;

		for (int j = 0; j < n; j++)
			if (ids[j] >= 0)
			{
				surviving++;
				if (m < ctx->max_rules)
					ids[m++] = ids[j];
			}
		n = m;
		if (surviving > m)
		{
			/* cut to max_rules: score what is left */
			ilp_program_eval(ctx, ids, n, derived);
			count_tp_fp(w, derived, &tp, &fp);
		}
	}

	out->n = n;
	out->ids = ids;
	out->tp = tp;
	out->fp = fp;
	gdl_free(order);
	gdl_free(rest);
	gdl_free(derived);
	gdl_free(trial);
	gdl_free(tried_at);
	gdl_free(chosen);
}
