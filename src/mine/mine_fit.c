/*
 * mine_fit.c — weights for the weighted aggregation learned from held-out
 * triples (gdl_predict_fit_*; SQL: gpudl_fit_weights).
 *
 * The fit queries are answered once with kind_noisy_or by the caller;
 * per query this keeps the true answer's features (mine_features.c) and
 * those of its best FIT_KEEP wrong answers, in host memory (a batch's
 * features computed on the worker threads: gdl_predict_fit_add_many).  Coordinate
 * ascent then tries, weight by weight, a few multiples of its value (and
 * 0), keeping any that raises the filtered mean reciprocal rank of the
 * true answers, until a sweep changes nothing.  Each try re-ranks the
 * kept answers only, on the worker threads: seconds for tens of
 * thousands of queries.
 *
 * Why a learned sum and not SAFRAN's learned clusters: the kinds already
 * group redundant rules; what they lack is how much each kind is worth on
 * this graph, which a dozen weights say and a validation split of a few
 * thousand triples fits without overfitting (test MRR with weights fitted
 * on valid: FB15k-237 +0.018, Kinship +0.048; docs/BENCHMARKS.md).  Wrong answers below the best
 * FIT_KEEP count as ranked below the true answer: a true answer that far
 * down adds under 1/FIT_KEEP to the mean either way.
 */
#include "mine_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Wrong answers kept per query (the best by kind_noisy_or). */
#define FIT_KEEP 200

#define NF GDL_PREDICT_NFEATURES

typedef struct FitQuery
{
	bool		subject_bound;
	bool		derived;		/* the true answer is among the kept answers */
	double		fixed_rr;		/* 1 / rank when not derived */
	float		want[NF];		/* rounded as the wrong answers' are, so that ties stay ties */
	int64_t		from;			/* wrong answers: feats[from * NF ..] */
	int32_t		n;
} FitQuery;

/* A held-out triple (dense ids); rel -1: an empty slot. */
typedef struct FitTruth
{
	int32_t		rel;
	int32_t		s;
	int32_t		o;
} FitTruth;

struct GdlPredictFit
{
	const GdlMineGraph *g;
	FitQuery   *queries;
	int64_t		nqueries,
				maxqueries;
	float	   *feats;			/* NF per kept wrong answer */
	int64_t		nfeats,
				capfeats;
	FitTruth   *truth;			/* open addressing */
	uint64_t	truth_mask;
};

/* Hash of a triple of dense ids. */
static uint64_t
truth_hash(int32_t rel, int32_t s, int32_t o)
{
	uint64_t	x = ((uint64_t) (uint32_t) s << 32) ^ (uint32_t) o;

	x ^= (uint64_t) (uint32_t) rel * 0x9E3779B97F4A7C15ULL;
	x ^= x >> 29;
	x *= 0xBF58476D1CE4E5B9ULL;
	return x ^ (x >> 32);
}

/* A fit for at most max_queries queries and max_truths held-out triples. */
GdlPredictFit *
gdl_predict_fit_create(const GdlMineGraph *g, int64_t max_queries, int64_t max_truths)
{
	GdlPredictFit *f = gdl_alloc(sizeof(GdlPredictFit));
	uint64_t	slots = 16;

	while (slots < (uint64_t) max_truths * 2 + 2)
		slots *= 2;
	f->g = g;
	f->maxqueries = max_queries;
	f->queries = gdl_alloc(sizeof(FitQuery) * (max_queries + 1));
	f->truth = gdl_alloc_uninit(sizeof(FitTruth) * slots);
	for (uint64_t i = 0; i < slots; i++)
		f->truth[i].rel = -1;
	f->truth_mask = slots - 1;
	return f;
}

/* Record a held-out triple rel(s, o) (graph values; not entities: ignored). */
void
gdl_predict_fit_truth(GdlPredictFit *f, int32_t rel, int64_t s, int64_t o)
{
	int32_t		es = gdl_mine_graph_entity(f->g, s),
				eo = gdl_mine_graph_entity(f->g, o);
	uint64_t	i;

	if (es < 0 || eo < 0)
		return;
	for (i = truth_hash(rel, es, eo) & f->truth_mask; f->truth[i].rel >= 0; i = (i + 1) & f->truth_mask)
		if (f->truth[i].rel == rel && f->truth[i].s == es && f->truth[i].o == eo)
			return;
	f->truth[i] = (FitTruth) {rel, es, eo};
}

/* Is answer ent of query q (given: the bound entity) a held-out triple? */
static bool
truth_has(const GdlPredictFit *f, const GdlPredictQuery *q, int32_t given, int32_t ent)
{
	int32_t		s = q->subject_bound ? given : ent,
				o = q->subject_bound ? ent : given;

	for (uint64_t i = truth_hash(q->rel, s, o) & f->truth_mask; f->truth[i].rel >= 0; i = (i + 1) & f->truth_mask)
		if (f->truth[i].rel == q->rel && f->truth[i].s == s && f->truth[i].o == o)
			return true;
	return false;
}

/* Worker threads for ntasks tasks: gdl_threads(), at least 1, at most GDL_MAX_THREADS and ntasks. */
static int
fit_threads(int64_t ntasks)
{
	int			n = gdl_threads();

	if (n > GDL_MAX_THREADS)
		n = GDL_MAX_THREADS;
	if (n > ntasks)
		n = (int) ntasks;
	return n < 1 ? 1 : n;
}

/* A thread's buffer of hits for answer_features (malloc'd, grown as needed). */
typedef struct FitScratch
{
	PredHit    *hits;
	int64_t		cap;
} FitScratch;

/*
 * The features of a returned answer (its rules, best first) into out.
 * Safe on a worker thread (malloc only); false when out of memory.
 */
static bool
answer_features(const GdlPredictFit *f, const GdlMineRule *rules, const GdlPredictQuery *q,
				const GdlPredictAnswer *a, const GdlPredictOptions *o, int32_t ent, FitScratch *sc,
				double *out)
{
	if (a->nrules + 1 > sc->cap)
	{
		int64_t		cap = (a->nrules + 1) * 2;
		PredHit    *h = realloc(sc->hits, sizeof(PredHit) * cap);

		if (h == NULL)
			return false;
		sc->hits = h;
		sc->cap = cap;
	}
	for (int32_t k = 0; k < a->nrules; k++)
	{
		const GdlMineRule *r = &rules[a->rules[k]];
		double		den = (double) (o->use_pca ? r->pca_body_size : r->body_size) + o->smoothing;

		sc->hits[k].ent = ent;
		sc->hits[k].rule = a->rules[k];
		sc->hits[k].conf = den > 0 ? (double) r->support / den : 0.0;
	}
	mine_answer_features(f->g, rules, sc->hits, a->nrules, q, ent, out);
	return true;
}

/*
 * What the fit keeps of one answered query whose true answer is want (a
 * graph value): x (all but x->from) and the features of its best wrong
 * answers, at most FIT_KEEP of them, into feats (FIT_KEEP * NF floats).
 * res must hold every answer (limit 0), ranked by kind_noisy_or; NULL: the
 * rules gave none.  Reads the fit only, so it runs on worker threads;
 * false when out of memory.
 */
static bool
fit_prepare(const GdlPredictFit *f, const GdlMineRule *rules, const GdlPredictQuery *q, int64_t want,
			const GdlPredictResult *res, const GdlPredictOptions *o, FitScratch *sc, FitQuery *x,
			float *feats)
{
	int32_t		given = gdl_mine_graph_entity(f->g, q->value);
	int64_t		wrong = 0,
				want_rank = -1;
	double		v[NF];

	memset(x, 0, sizeof(*x));
	x->subject_bound = q->subject_bound;
	for (int64_t i = 0; res && i < res->nanswers; i++)
	{
		const GdlPredictAnswer *a = &res->answers[i];
		int32_t		ent = gdl_mine_graph_entity(f->g, a->value);

		if (a->value == want)
		{
			want_rank = wrong + 1;
			if (wrong < FIT_KEEP)
			{
				x->derived = true;
				if (!answer_features(f, rules, q, a, o, ent, sc, v))
					return false;
				for (int k = 0; k < NF; k++)
					x->want[k] = (float) v[k];
			}
			continue;
		}
		if (truth_has(f, q, given, ent))
			continue;
		wrong++;
		if (x->n < FIT_KEEP)
		{
			if (!answer_features(f, rules, q, a, o, ent, sc, v))
				return false;
			for (int k = 0; k < NF; k++)
				feats[(int64_t) x->n * NF + k] = (float) v[k];
			x->n++;
		}
	}
	if (!x->derived)
	{
		/* underived (or far down): its rank does not move with the weights */
		int64_t		nent = gdl_mine_graph_nentities(f->g);

		x->fixed_rr = want_rank > 0 ? 1.0 / (double) want_rank
			: 1.0 / (1.0 + (double) wrong + (double) (nent > wrong ? nent - wrong : 0) / 2.0);
		x->n = 0;
	}
	return true;
}

/* Append a prepared query (x and its x->n answers' features) to the fit. */
static void
fit_append(GdlPredictFit *f, const FitQuery *x, const float *feats)
{
	if (f->nqueries >= f->maxqueries)
		gdl_error(GDL_ERR_INTERNAL, NULL, NULL, "more fit queries than announced");
	if (f->nfeats + x->n > f->capfeats)
	{
		int64_t		cap = f->capfeats ? f->capfeats : 65536;

		while (cap < f->nfeats + x->n)
			cap *= 2;
		f->feats = f->feats ? gdl_realloc(f->feats, sizeof(float) * NF * cap)
			: gdl_alloc_uninit(sizeof(float) * NF * cap);
		f->capfeats = cap;
	}
	memcpy(f->feats + f->nfeats * NF, feats, sizeof(float) * NF * x->n);
	f->queries[f->nqueries] = *x;
	f->queries[f->nqueries].from = f->nfeats;
	f->nqueries++;
	f->nfeats += x->n;
}

/*
 * Keep one answered query: its true answer want (a graph value) and the
 * features of its best wrong answers.  res must hold every answer
 * (limit 0), ranked by kind_noisy_or.
 */
void
gdl_predict_fit_add(GdlPredictFit *f, const GdlMineRule *rules, const GdlPredictQuery *q, int64_t want,
					const GdlPredictResult *res, const GdlPredictOptions *o)
{
	FitScratch	sc = {NULL, 0};
	float	   *feats = gdl_alloc_uninit(sizeof(float) * NF * FIT_KEEP);
	FitQuery	x;
	bool		ok = fit_prepare(f, rules, q, want, res, o, &sc, &x, feats);

	free(sc.hits);
	if (!ok)
	{
		gdl_free(feats);
		gdl_error(GDL_ERR_OUT_OF_MEMORY, NULL, NULL, "out of memory while fitting weights");
	}
	fit_append(f, &x, feats);
	gdl_free(feats);
}

/* The shared state of gdl_predict_fit_add_many's workers. */
typedef struct FitBatch
{
	const GdlPredictFit *f;
	const GdlPredictJob *jobs;
	int64_t		njobs;
	const int64_t *wants;
	const int64_t *from;
	const GdlPredictOptions *o;
	FitQuery   *xs;				/* one per triple, as wants */
	float	   *feats;			/* FIT_KEEP * NF per triple */
	int64_t		cursor;			/* next job (atomic) */
	int			failed;			/* out of memory (atomic) */
	int			stopped;		/* an interrupt (atomic) */
} FitBatch;

/* A worker: prepare the triples of one job at a time until none is left. */
static void
fit_prepare_task(void *arg, int tid, int ntasks)
{
	FitBatch   *b = arg;
	FitScratch	sc = {NULL, 0};

	(void) tid;
	(void) ntasks;
	for (;;)
	{
		int64_t		j = __atomic_fetch_add(&b->cursor, 1, __ATOMIC_RELAXED);
		const GdlPredictJob *job;

		if (j >= b->njobs || __atomic_load_n(&b->failed, __ATOMIC_RELAXED))
			break;
		if (gdl_interrupt_pending())
		{
			__atomic_store_n(&b->stopped, 1, __ATOMIC_RELAXED);
			break;
		}
		job = &b->jobs[j];
		for (int64_t k = b->from[j]; k < b->from[j + 1]; k++)
			if (!fit_prepare(b->f, job->rules, &job->q, b->wants[k], job->res, b->o, &sc, &b->xs[k],
							 b->feats + k * FIT_KEEP * NF))
			{
				__atomic_store_n(&b->failed, 1, __ATOMIC_RELAXED);
				break;
			}
	}
	free(sc.hits);
}

/*
 * Keep a batch of answered queries at once: job j (answered by
 * gdl_predict_many with kind_noisy_or, limit 0) is the question of the
 * held-out triples whose true answers are wants[from[j] .. from[j + 1])
 * (from: njobs + 1 entries, from[0] = 0).  The features are computed on
 * the worker threads (most of a fit's keeping: up to FIT_KEEP + 1 answers'
 * features per triple), then appended in order, so the fit is the same as
 * gdl_predict_fit_add's one triple at a time.
 */
void
gdl_predict_fit_add_many(GdlPredictFit *f, const GdlPredictJob *jobs, int64_t njobs, const int64_t *wants,
						 const int64_t *from, const GdlPredictOptions *o)
{
	FitBatch	b;
	int64_t		total = from[njobs];
	int			threads = fit_threads(njobs);

	if (total <= 0)
		return;
	memset(&b, 0, sizeof(b));
	b.f = f;
	b.jobs = jobs;
	b.njobs = njobs;
	b.wants = wants;
	b.from = from;
	b.o = o;
	b.xs = gdl_alloc(sizeof(FitQuery) * total);
	b.feats = gdl_alloc_uninit(sizeof(float) * NF * FIT_KEEP * total);
	gdl_parallel(threads, fit_prepare_task, &b);
	if (b.failed || b.stopped)
	{
		gdl_free(b.xs);
		gdl_free(b.feats);
		if (b.stopped)
			gdl_check_stop();
		gdl_error(GDL_ERR_OUT_OF_MEMORY, NULL, NULL, "out of memory while fitting weights");
	}
	for (int64_t k = 0; k < total; k++)
		fit_append(f, &b.xs[k], b.feats + k * FIT_KEEP * NF);
	gdl_free(b.xs);
	gdl_free(b.feats);
}

/* One evaluation of fit_mrr on worker threads: each task sums its share. */
typedef struct FitEval
{
	const GdlPredictFit *f;
	const double *w;
	double		rr[GDL_MAX_THREADS];
} FitEval;

/* A worker: the reciprocal ranks of its share of the queries. */
static void
fit_eval_task(void *arg, int tid, int ntasks)
{
	FitEval    *e = arg;
	const GdlPredictFit *f = e->f;
	int64_t		from,
				to;
	double		rr = 0;

	gdl_split(f->nqueries, tid, ntasks, &from, &to);
	for (int64_t i = from; i < to; i++)
	{
		const FitQuery *x = &f->queries[i];
		const double *wd = e->w + (x->subject_bound ? NF : 0);
		double		sw = 0;
		int64_t		better = 0,
					tied = 0;

		if (!x->derived)
		{
			rr += x->fixed_rr;
			continue;
		}
		for (int k = 0; k < NF; k++)
			sw += wd[k] * (double) x->want[k];
		for (int32_t j = 0; j < x->n; j++)
		{
			const float *v = f->feats + (x->from + j) * NF;
			double		s = 0;

			for (int k = 0; k < NF; k++)
				s += wd[k] * (double) v[k];
			better += s > sw + 1e-9;
			tied += fabs(s - sw) <= 1e-9;
		}
		rr += 1.0 / (1.0 + (double) better + (double) tied / 2.0);
	}
	e->rr[tid] = rr;
}

/* The mean reciprocal rank of the fit queries under weights w (on the worker threads). */
static double
fit_mrr(const GdlPredictFit *f, const double *w)
{
	FitEval		e;
	int			n = fit_threads(f->nqueries);
	double		rr = 0;

	memset(&e, 0, sizeof(e));
	e.f = f;
	e.w = w;
	gdl_parallel(n, fit_eval_task, &e);
	gdl_check_interrupts();
	for (int t = 0; t < n; t++)
		rr += e.rr[t];
	return f->nqueries ? rr / (double) f->nqueries : 0.0;
}

/*
 * Coordinate ascent from the default weights (kind_noisy_or's ranking):
 * each weight in turn tries 0 and a few multiples of its value (a weight
 * at 0 tries small values), keeping the best; sweeps until none moves,
 * at most 6.
 */
void
gdl_predict_fit_learn(GdlPredictFit *f, double *weights, double *mrr_before, double *mrr_after)
{
	static const double steps[] = {0.0, 0.25, 0.5, 0.7, 0.85, 1.2, 1.4, 2.0, 4.0};
	GdlPredictOptions defaults;
	double		best;

	gdl_predict_options_init(&defaults);
	memcpy(weights, defaults.weights, sizeof(double) * GDL_PREDICT_NWEIGHTS);
	best = fit_mrr(f, weights);
	*mrr_before = best;
	for (int sweep = 0; sweep < 6; sweep++)
	{
		bool		moved = false;

		for (int k = 0; k < GDL_PREDICT_NWEIGHTS; k++)
		{
			double		w0 = weights[k],
						bw = w0;

			for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++)
			{
				double		m;

				weights[k] = steps[s] == 0.0 ? 0.0 : w0 > 0 ? w0 * steps[s] : steps[s] * 0.25;
				if (weights[k] == w0)
					continue;
				m = fit_mrr(f, weights);
				if (m > best + 1e-6)
				{
					best = m;
					bw = weights[k];
					moved = true;
				}
			}
			weights[k] = bw;
		}
		if (!moved)
			break;
	}
	*mrr_after = best;
}

/* How many queries the fit holds. */
int64_t
gdl_predict_fit_nqueries(const GdlPredictFit *f)
{
	return f->nqueries;
}

/* Free a fit (NULL: nothing). */
void
gdl_predict_fit_free(GdlPredictFit *f)
{
	if (f == NULL)
		return;
	gdl_free(f->queries);
	gdl_free(f->truth);
	if (f->feats)
		gdl_free(f->feats);
	gdl_free(f);
}
