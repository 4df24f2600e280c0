/*
 * ilp_learn.c — the ILP driver behind gpudl_learn.
 *
 * One run: validate the parameters, build the world (indexed background,
 * examples, negatives, invented closures), then try the bias in stages of
 * growing size — body 1, body 2, body 1 with invented closures, body 3,
 * body 2 with closures, body 3 with closures, up to max_body — and stop at
 * the first stage whose selected program derives every positive and no
 * negative at fixpoint (else keep the best stage).  Shorter bodies first is
 * Occam's razor, and it keeps most runs far below the full bias.
 *
 * A stage: enumerate candidates with their coverage (ilp_candidates.c),
 * merge candidates that cover exactly the same examples (the lowest id
 * represents them: the loss cannot tell them apart), lay the coverage out as
 * CSR, train probabilities with Adam on the noisy-or loss, select a program
 * (ilp_select.c), and measure each selected rule (ilp_metrics.c).
 */
#include "ilp_int.h"
#include "ilp_refine.h"
#include "gdl_ilp_device.h"

#include <math.h>
#include <string.h>

/* The host's progress hook (gdl_ilp_set_progress) and the current stage. */
static GdlIlpProgressFn progress_fn = NULL;
/* max_seconds of the current run as an ilp_now() deadline (0: none), and whether it cut a stage */
static double stage_deadline = 0;
static bool stage_expired = false;
static void *progress_arg = NULL;
static int	progress_stage = -1;

/* Install (or with NULL remove) the progress hook; see gdl_ilp.h. */
void
gdl_ilp_set_progress(GdlIlpProgressFn fn, void *arg)
{
	progress_fn = fn;
	progress_arg = arg;
}

/* Tell the hook the phase, and while training the epoch and loss. */
void
ilp_progress(const char *phase, int epoch, double loss)
{
	GdlIlpProgress p;

	if (progress_fn == NULL)
		return;
	p.phase = phase;
	p.stage = progress_stage;
	p.epoch = epoch;
	p.loss = loss;
	progress_fn(progress_arg, &p);
}

/*
 * PRODUCT.md defaults, and ours for the extensions.  The fields not named
 * are 0 or false: allow_recursive, seed, neg_per_pos, max_seconds, noise,
 * max_vars, beam.  Copied bytewise: a static's padding is zero, as memset
 * would leave it.
 */
void
gdl_ilp_params_default(GdlIlpParams *p)
{
	static const GdlIlpParams defaults = {
		.max_body = 2, .max_rules = 32, .max_candidates = 2000000, .min_support = 1,
		.epochs = 200, .learning_rate = 0.1,
		.neg_mode = GDL_ILP_NEG_PCA,
		.deepen = true, .invent = true, .min_precision = 0.5,
		.method = GDL_ILP_AUTO,
	};

	memcpy(p, &defaults, sizeof(*p));
}

/* Reject parameters outside their ranges with GDL_ERR_PARAM. */
static void
check_params(const GdlIlpParams *p, bool refine)
{
	int			maxb = refine ? GDL_ILP_MAX_BODY : ILP_MAX_ATOMS;

	if (p->max_body < 1 || p->max_body > maxb)
		gdl_error(GDL_ERR_PARAM, NULL,
				  refine ? NULL : "Bodies of more than 3 atoms need the refinement search.",
				  "max_body must be between 1 and %d, not %d", maxb, p->max_body);
	if (!(p->max_seconds >= 0.0) || !isfinite(p->max_seconds))
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "max_seconds must not be negative");
	if (!(p->noise >= 0.0 && p->noise < 1.0))
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "noise must be at least 0 and below 1, not %g",
				  p->noise);
	if (p->method < GDL_ILP_AUTO || p->method > GDL_ILP_REFINE)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "unknown method %d", (int) p->method);
	if (p->max_vars < 0 || p->max_vars > 12)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "max_vars must be between 1 and 12, not %d",
				  p->max_vars);
	if (p->beam < 0 || p->beam > 1000000)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "beam must be between 1 and 1000000, not %d",
				  p->beam);
	if (p->max_rules < 1)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "max_rules must be at least 1, not %d", p->max_rules);
	if (p->epochs < 0 || p->epochs > 10000000)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "epochs must be between 0 and 10000000, not %d",
				  p->epochs);
	if (!(p->learning_rate > 0.0) || !isfinite(p->learning_rate))
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "learning_rate must be a positive number, not %g",
				  p->learning_rate);
	if (p->min_support < 0)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "min_support must not be negative, not %d",
				  p->min_support);
	if (p->neg_per_pos < 0)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "neg_per_pos must not be negative");
	if (p->neg_mode != GDL_ILP_NEG_PCA && p->neg_mode != GDL_ILP_NEG_CLOSED)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "unknown negative generation mode %d",
				  (int) p->neg_mode);
	if (p->max_candidates < 0)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "max_candidates must not be negative");
	if (!(p->min_precision >= 0.0 && p->min_precision <= 1.0))
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "min_precision must be between 0 and 1");
}

/* What one stage of the bias produced. */
typedef struct StageRun
{
	int			body;
	bool		invent;
	IlpCandSet *cs;
	int32_t		nreps;
	int32_t    *col;			/* per candidate: its column (its representative's) */
	bool	   *rep;			/* per candidate: it represents its column */
	IlpCsr	   *m;				/* examples x representatives */
	IlpTrainOut train;
	double	   *prob;			/* per candidate */
	IlpSelection sel;
} StageRun;

/* Hash of a coverage list. */
static uint64_t
cov_hash(const IlpCand *c)
{
	uint64_t	h = ilp_mix64((uint64_t) c->ncov);

	for (int32_t k = 0; k < c->ncov; k++)
		h = ilp_mix64(h ^ (uint64_t) c->cov[k]);
	return h;
}

/* Do two candidates cover the same examples? */
static bool
cov_equal(const IlpCand *a, const IlpCand *b)
{
	return a->ncov == b->ncov && memcmp(a->cov, b->cov, sizeof(int32_t) * a->ncov) == 0;
}

/*
 * Give every candidate a column: the first (lowest id) candidate of each
 * group with identical coverage represents the group.
 */
static void
merge_identical(StageRun *s)
{
	IlpCandSet *cs = s->cs;
	int64_t		cap = 16;
	int32_t    *slots;

	while (cap < (int64_t) cs->n * 2)
		cap <<= 1;
	slots = gdl_alloc(sizeof(int32_t) * cap);	/* candidate + 1, 0 empty */
	s->col = gdl_alloc(sizeof(int32_t) * (cs->n + 1));
	s->rep = gdl_alloc(sizeof(bool) * (cs->n + 1));
	s->nreps = 0;
	for (int32_t c = 0; c < cs->n; c++)
	{
		int64_t		h = cov_hash(&cs->c[c]) & (cap - 1);

		for (;;)
		{
			int32_t		o = slots[h];

			if (o == 0)
			{
				slots[h] = c + 1;
				s->rep[c] = true;
				s->col[c] = s->nreps++;
				break;
			}
			if (cov_equal(&cs->c[o - 1], &cs->c[c]))
			{
				s->col[c] = s->col[o - 1];
				break;
			}
			h = (h + 1) & (cap - 1);
		}
	}
	gdl_free(slots);
}

/* Is candidate c the representative of its column? */
static bool
is_rep(const StageRun *s, int32_t c)
{
	return s->rep[c];
}

/*
 * Specialise selected rules the data says are too general (ilp_tighten.c);
 * the specialised rules join the candidate set with their parent's
 * probability.  Kept only if the program scores no worse at fixpoint.
 */
static void
tighten_selection(const IlpWorld *w, const GdlIlpParams *params, const IlpBias *bias,
				  IlpSelectCtx *ctx, StageRun *s)
{
	IlpCandSet *cs = s->cs;
	IlpBias		tb = *bias;
	int32_t    *ids = gdl_alloc(sizeof(int32_t) * (s->sel.n + 1));
	int32_t		n0 = cs->n;
	bool		any = false;

	tb.max_body = params->max_body;
	tb.recursive = false;
	if (cs->cap < cs->n + s->sel.n)
	{
		cs->cap = cs->n + s->sel.n;
		cs->c = gdl_realloc(cs->c, sizeof(IlpCand) * cs->cap);
	}
	s->prob = gdl_realloc(s->prob, sizeof(double) * (cs->n + s->sel.n + 1));
	s->col = gdl_realloc(s->col, sizeof(int32_t) * (cs->n + s->sel.n + 1));
	s->rep = gdl_realloc(s->rep, sizeof(bool) * (cs->n + s->sel.n + 1));
	for (int i = 0; i < s->sel.n; i++)
	{
		int32_t		c = s->sel.ids[i];
		IlpCand		t;

		ids[i] = c;
		if (!ilp_tighten(w, &tb, &cs->c[c], &t))
			continue;
		cs->c[cs->n] = t;
		s->prob[cs->n] = s->prob[c];
		s->col[cs->n] = s->col[c];
		s->rep[cs->n] = false;
		ids[i] = cs->n++;
		any = true;
	}
	if (any)
	{
		bool	   *derived = gdl_alloc(sizeof(bool) * (w->npos + w->nneg + 1));
		int32_t		tp = 0,
					fp = 0;

		ilp_program_eval(ctx, ids, s->sel.n, derived);
		for (int32_t e = 0; e < w->npos + w->nneg; e++)
			if (derived[e])
			{
				if (e < w->npos)
					tp++;
				else
					fp++;
			}
		if (tp - w->neg_weight * fp >= s->sel.tp - w->neg_weight * s->sel.fp)
		{
			memcpy(s->sel.ids, ids, sizeof(int32_t) * s->sel.n);
			s->sel.tp = tp;
			s->sel.fp = fp;
		}
		else
			cs->n = n0;
		gdl_free(derived);
	}
	gdl_free(ids);
}

/* Run one stage of the bias: candidates, matrix, training, selection. */
static void
run_stage(const IlpWorld *w, const GdlIlpParams *params, const GdlIlpEvalHook *hook,
		  int body, bool invent, StageRun *s)
{
	IlpBias		bias;
	int32_t   **cov;
	int32_t    *ncov;
	int32_t		r = 0;
	bool	   *eligible;
	double		p0 = ilp_initial_prob();
	IlpSelectCtx ctx;
	double		t0 = ilp_now(),
				t1;

	memset(s, 0, sizeof(*s));
	s->body = body;
	s->invent = invent;
	bias.max_body = body;
	bias.recursive = params->allow_recursive;
	bias.invented = invent;
	bias.use_examples = true;
	bias.min_support = params->min_support > 0 ? params->min_support : 1;
	bias.max_candidates = params->max_candidates > 0 ? params->max_candidates : 2000000;
	ilp_progress("candidates", -1, NAN);
	s->cs = ilp_candidates(w, &bias);
	merge_identical(s);

	/* columns are the representatives, numbered in id order */
	cov = gdl_alloc(sizeof(int32_t *) * (s->nreps + 1));
	ncov = gdl_alloc(sizeof(int32_t) * (s->nreps + 1));
	for (int32_t c = 0; c < s->cs->n; c++)
		if (is_rep(s, c))
		{
			cov[r] = s->cs->c[c].cov;
			ncov[r] = s->cs->c[c].ncov;
			r++;
		}
	s->m = ilp_csr_build(w->npos + w->nneg, s->nreps, ncov, cov);
	s->m->wneg = w->neg_weight;
	gdl_free(cov);
	gdl_free(ncov);

	t1 = ilp_now();
	gdl_ilp_timings.candidates_s += t1 - t0;
	ilp_progress("training", 0, NAN);
	ilp_train(s->m, w->npos, params->epochs, params->learning_rate, &s->train);
	ilp_progress("scoring", s->train.epochs, s->train.loss);
	t0 = ilp_now();
	gdl_ilp_timings.train_s += t0 - t1;
	gdl_ilp_timings.nodes += s->cs->nodes;
	gdl_ilp_timings.candidates += s->m->ncols;
	gdl_ilp_timings.nnz += s->m->off[s->m->nrows];
	gdl_ilp_timings.epochs += s->train.epochs;
	gdl_ilp_timings.cand_epochs += (double) s->m->ncols * s->train.epochs;
	if (s->train.on_device)
		gdl_ilp_timings.device_trainings++;
	else
		gdl_ilp_timings.cpu_trainings++;
	s->prob = gdl_alloc(sizeof(double) * (s->cs->n + 1));
	eligible = gdl_alloc(sizeof(bool) * (s->cs->n + 1));
	for (int32_t c = 0; c < s->cs->n; c++)
	{
		s->prob[c] = s->train.prob[s->col[c]];
		eligible[c] = is_rep(s, c) && s->prob[c] >= p0 * (1.0 - 1e-12);
	}

	memset(&ctx, 0, sizeof(ctx));
	ctx.w = w;
	ctx.cs = s->cs;
	ctx.prob = s->prob;
	ctx.eligible = eligible;
	ctx.max_rules = params->max_rules;
	ctx.min_support = bias.min_support;
	ctx.min_precision = params->min_precision;
	ctx.hook = hook;
	ctx.deadline = stage_deadline;
	ilp_select(&ctx, &s->sel);
	stage_expired = stage_expired || ctx.expired;
	/* tightening may evaluate at fixpoint: not once the time budget is spent */
	if (!stage_expired)
		tighten_selection(w, params, &bias, &ctx, s);
	gdl_free(eligible);
	gdl_ilp_timings.select_s += ilp_now() - t0;
}

/* The stages of the bias to try, in order; returns how many. */
static int
stage_plan(const GdlIlpParams *p, bool closures, int *body, bool *invent)
{
	static const int order_body[] = {1, 2, 1, 3, 2, 3};
	static const bool order_inv[] = {false, false, true, false, true, true};
	int			n = 0;

	if (!p->deepen)
	{
		body[0] = p->max_body;
		invent[0] = closures;
		return 1;
	}
	for (int i = 0; i < 6; i++)
	{
		if (order_body[i] > p->max_body || (order_inv[i] && !closures))
			continue;
		body[n] = order_body[i];
		invent[n] = order_inv[i];
		n++;
	}
	return n;
}

/* Turn the chosen stage into the result rows. */
static GdlIlpResult *
make_result(const IlpWorld *w, const StageRun *s, int stage, int nstages)
{
	GdlIlpResult *res = gdl_alloc(sizeof(GdlIlpResult));
	int32_t		nex = w->npos + w->nneg;
	double	   *q = gdl_alloc(sizeof(double) * (nex + 1));

	for (int32_t e = 0; e < nex; e++)
		q[e] = 1.0;

	res->nrules = s->sel.n;
	res->rules = gdl_alloc(sizeof(GdlIlpRule) * (s->sel.n + 1));
	for (int i = 0; i < s->sel.n; i++)
	{
		int32_t		c = s->sel.ids[i];
		const IlpCand *cd = &s->cs->c[c];
		GdlIlpRule *r = &res->rules[i];
		IlpMetrics	m;

		gdl_check_interrupts();
		ilp_metrics(w, cd, &m);
		/* the noisy-or loss of the program of ranks 1..i+1 */
		r->loss = 0.0;
		for (int32_t k = 0; k < cd->ncov; k++)
			q[cd->cov[k]] *= 1.0 - s->prob[c];
		for (int32_t e = 0; e < nex; e++)
		{
			double		x = e < w->npos ? 1.0 - q[e] : q[e];

			r->loss -= log(x > GDL_ILP_EPS ? x : GDL_ILP_EPS) * (e < w->npos ? 1.0 : w->neg_weight);
		}
		r->rank = i + 1;
		r->rule = ilp_rule_text(&cd->rule, w);
		r->aux = ilp_rule_aux(&cd->rule, w);
		r->probability = s->prob[c];
		r->precision = m.precision;
		r->recall = m.recall;
		r->support = m.support;
		r->head_coverage = m.head_coverage;
		r->std_confidence = m.std_confidence;
		r->pca_confidence = m.pca_confidence;
		r->recursive = cd->recursive;
		r->candidate_id = c;
	}
	gdl_free(q);
	res->epochs = s->train.epochs;
	res->final_loss = s->train.loss;
	res->program = ilp_program_text(w, s->cs, s->sel.ids, s->sel.n);
	res->npositives = w->npos;
	res->nnegatives = w->nneg;
	res->ncandidates = s->nreps;
	res->max_body_used = s->body;
	res->invented = s->invent;
	res->on_device = s->train.on_device;
	res->train_precision = s->sel.tp + s->sel.fp > 0 ?
		(double) s->sel.tp / (s->sel.tp + w->neg_weight * s->sel.fp) : 0.0;
	res->train_recall = w->npos > 0 ? (double) s->sel.tp / w->npos : 0.0;
	res->message = gdl_sprintf("stage %d of %d (max_body %d%s): %d candidates, "
							   "%d distinct on %d+%d examples%s; %d rules, "
							   "precision %.3f, recall %.3f on the examples",
							   stage + 1, nstages, s->body,
							   s->invent ? ", invented closures" : "",
							   s->cs->n, s->nreps, w->npos, w->nneg,
							   w->generated_neg ? " (negatives generated)" : "",
							   s->sel.n, res->train_precision, res->train_recall);
	return res;
}

/* Examples a result gets right (from its precision and recall on them). */
static double
result_right(const GdlIlpResult *r)
{
	double		tp = r->train_recall * r->npositives;
	double		fp = r->train_precision > 0 ? tp / r->train_precision - tp : 0;

	return tp + (r->nnegatives - fp);
}

/*
 * Literals of a result's program: its atoms, heads included, the clauses
 * of invented predicates counted once (rules hold only atoms over
 * variables, so an atom is a '(' outside a quoted name).
 */
static int
result_literals(const GdlIlpResult *r)
{
	int			n = 0;
	char		quote = 0;

	for (const char *c = r->program ? r->program : ""; *c; c++)
	{
		if (quote)
		{
			if (*c == quote)
				quote = 0;
		}
		else if (*c == '"' || *c == '\'')
			quote = *c;
		else if (*c == '(')
			n++;
	}
	return n;
}

/*
 * With allow_recursive, explicit negatives and method auto, a bulk result
 * that does not fit the examples is tried again by the refinement search,
 * whose recursion goes through the target itself (a base case and rules
 * that read the target once or twice, judged at the fixpoint) where the
 * bulk path only looks the target up among the positives or invents
 * closures of background relations: ancestor over father and mother is
 * two base cases and one recursive rule, not mother+.  The result that
 * gets more examples right wins (the bulk one on a tie), within what is
 * left of max_seconds.  A bulk result that fits but is larger than a
 * program with an invented helper can be (6 literals) is tried too, for a
 * smaller program (grandparent over father_or_mother): like the refinement
 * search's own wider search, within about four times the time spent so
 * far, and the smaller program wins only when it is as right.
 */
static GdlIlpResult *
recursive_fallback(const GdlIlpProblem *prob, const GdlIlpParams *p, GdlIlpResult *bulk,
				   double t0)
{
	GdlIlpParams q = *p;
	GdlIlpResult *ref;
	bool		fits = bulk->train_precision == 1.0 && bulk->train_recall == 1.0;
	double		spent = ilp_now() - t0;

	if (!p->allow_recursive || p->method != GDL_ILP_AUTO || prob->negatives == NULL ||
		prob->negatives->nrows == 0 || bulk->timed_out ||
		(fits && (!p->invent || result_literals(bulk) <= 6)))
		return bulk;
	if (p->max_seconds > 0)
	{
		q.max_seconds = p->max_seconds - spent;
		if (q.max_seconds < 0.5)
			return bulk;
	}
	if (fits && (q.max_seconds <= 0 || q.max_seconds > 4 * spent + 1.0))
		q.max_seconds = 4 * spent + 1.0;	/* optional: bounded by the time spent */
	q.method = GDL_ILP_REFINE;
	ref = ilp_refine_learn(prob, &q);
	if (fits)
	{
		if (result_right(ref) + 0.5 < result_right(bulk) ||
			result_literals(ref) >= result_literals(bulk))
			return bulk;
		ref->message = gdl_sprintf("%s (smaller than the bulk path's %d rules, %d literals)",
								   ref->message, bulk->nrules, result_literals(bulk));
		ref->timed_out = false; /* the search was optional */
		return ref;
	}
	if (result_right(ref) > result_right(bulk) + 0.5)
	{
		ref->message = gdl_sprintf("%s (the bulk path fitted %.0f of %lld examples)", ref->message,
								   result_right(bulk),
								   (long long) (bulk->npositives + bulk->nnegatives));
		return ref;
	}
	return bulk;
}

/* Learn rules for the target; see gdl_ilp.h. */
GdlIlpResult *
gdl_ilp_learn(const GdlIlpProblem *prob, const GdlIlpParams *params, const GdlIlpEvalHook *hook)
{
	GdlIlpParams p = *params;
	IlpWorld   *w;
	int			body[6];
	bool		invent[6];
	int			nstages;
	StageRun   *runs;
	int			best = -1;
	bool		closures;
	IlpNegSpec	neg;
	double		t0 = ilp_now();
	bool		timed_out = false;
	GdlIlpResult *res;

	if (ilp_refine_needed(prob, &p))
	{
		check_params(&p, true);
		return ilp_refine_learn(prob, &p);
	}
	check_params(&p, false);
	neg.mode = p.neg_mode;
	neg.per_pos = p.neg_per_pos > 0 ? p.neg_per_pos : (p.neg_mode == GDL_ILP_NEG_CLOSED ? 50 : 4);
	neg.hops = p.max_body;
	neg.seed = p.seed;
	closures = p.allow_recursive && p.invent;
	progress_stage = -1;
	stage_deadline = p.max_seconds > 0 ? t0 + p.max_seconds : 0;
	stage_expired = false;
	ilp_progress("building", -1, NAN);
	w = ilp_world_build(prob, true, closures, &neg);
	closures = false;
	for (int i = 0; i < w->npreds; i++)
		closures = closures || w->preds[i].kind == ILP_PRED_CLOSURE;
	nstages = stage_plan(&p, closures, body, invent);
	runs = gdl_alloc(sizeof(StageRun) * nstages);
	for (int i = 0; i < nstages; i++)
	{
		StageRun   *s = &runs[i];
		double		score;

		progress_stage = i;
		run_stage(w, &p, hook, body[i], invent[i], s);
		score = s->sel.tp - w->neg_weight * s->sel.fp;
		if (best < 0 || score > runs[best].sel.tp - w->neg_weight * runs[best].sel.fp)
			best = i;
		if (s->sel.tp == w->npos && s->sel.fp == 0)
			break;
		/*
		 * The time budget is checked between stages (the best stage so far)
		 * and by the selection, which makes no fixpoint trial past it.
		 */
		if (stage_expired || (p.max_seconds > 0 && i + 1 < nstages && ilp_now() - t0 > p.max_seconds))
		{
			timed_out = true;
			break;
		}
	}
	res = make_result(w, &runs[best], best, nstages);
	res->method = "bulk";
	res->timed_out = timed_out;
	if (timed_out)
		res->message = gdl_sprintf("%s; max_seconds ran out: the best stage so far", res->message);
	return recursive_fallback(prob, &p, res, t0);
}
