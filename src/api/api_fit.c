/*
 * api_fit.c — gpudl_fit_weights: the weights of gpudl_predict's 'weighted'
 * aggregation learned from held-out triples (a validation split).
 *
 * Each row (relation, subject, object) of the query is a true triple the
 * graph does not hold; it is asked both ways (r(s, ?) wanting o, r(?, o)
 * wanting s) with the program's stored rules (or rules mined for the call,
 * as gpudl_predict does) and kind_noisy_or, and the core
 * (src/mine/mine_fit.c) chooses the weights under which the true answers
 * rank best: the filtered mean reciprocal rank, the other held-out triples
 * and the graph's facts left out of each ranking.  The result is the array
 * to pass as gpudl_predict(..., aggregation => 'weighted', weights => ...).
 */
#include "api/api_predict.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(gpudl_fit_weights);

/*
 * Questions answered per batch on the worker threads: a batch waits for
 * its slowest question, so batches are large and their questions taken
 * most-asked first (see fit_answer).
 */
#define FIT_BATCH 4096
/*
 * Held-out triples per batch (its questions' askers): keeping sets aside
 * room for each triple's kept answers (about 10 kB), so a batch stops
 * taking questions past this many (one question asked by more still
 * makes a batch alone).
 */
#define FIT_BATCH_TRIPLES 8192

/* Query order for answering: relation, direction, given value. */
static int
cmp_fit_query(const void *a, const void *b)
{
	const GdlPredictQuery *x = &((const GpudlPredictQuery *) a)->q,
			   *y = &((const GpudlPredictQuery *) b)->q;

	if (x->rel != y->rel)
		return x->rel < y->rel ? -1 : 1;
	if (x->subject_bound != y->subject_bound)
		return x->subject_bound ? 1 : -1;
	return x->value < y->value ? -1 : x->value > y->value;
}

/* Is query b the same question as query a (answered once for both)? */
static bool
same_question(const GpudlPredictQuery *a, const GpudlPredictQuery *b)
{
	return a->q.rel == b->q.rel && a->q.subject_bound == b->q.subject_bound && a->q.value == b->q.value;
}

/* Free the results of a batch's jobs. */
static void
free_results(GdlPredictJob *jobs, int64 nb)
{
	for (int64 j = 0; j < nb; j++)
	{
		gdl_predict_result_free(jobs[j].res);
		jobs[j].res = NULL;
	}
}

/*
 * Keep a batch's answers in the fit, once per held-out triple asking that
 * question (job j answers queries [first[j], end[j]); the features
 * computed on the worker threads), then free them (also when keeping
 * fails).
 */
static void
fit_keep_batch(GdlPredictFit *fit, GpudlPredictQuery *queries, GdlPredictJob *jobs, const int64 *first,
			   const int64 *end, int64 nb, const GdlPredictOptions *opts)
{
	PG_TRY();
	{
		int64	   *from = palloc(sizeof(int64) * (nb + 1));
		int64	   *wants;
		int64		n = 0;

		for (int64 j = 0; j < nb; j++)
			n += end[j] - first[j];
		wants = palloc(sizeof(int64) * (n > 0 ? n : 1));
		n = 0;
		for (int64 j = 0; j < nb; j++)
		{
			from[j] = n;
			for (int64 k = first[j]; k < end[j]; k++)
				wants[n++] = queries[k].want;
		}
		from[nb] = n;
		gdl_predict_fit_add_many(fit, jobs, nb, (const int64_t *) wants, (const int64_t *) from, opts);
		pfree(from);
		pfree(wants);
	}
	PG_CATCH();
	{
		free_results(jobs, nb);
		PG_RE_THROW();
	}
	PG_END_TRY();
	free_results(jobs, nb);
}

/* A batch's question and the held-out triples asking it, for order_batch. */
typedef struct FitJob
{
	GdlPredictJob job;
	int64		first;
	int64		last;
} FitJob;

/* Most-asked question first; then in the order they came (deterministic). */
static int
cmp_fit_job(const void *a, const void *b)
{
	const FitJob *x = a,
			   *y = b;
	int64		nx = x->last - x->first,
				ny = y->last - y->first;

	if (nx != ny)
		return nx > ny ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * Put a batch's questions in the order the workers take them: the most
 * asked first (r(?, t) of a popular t: many triples ask it, and it has
 * thousands of answers), so that the slowest start early and the batch
 * does not wait at its end for one of them.
 */
static void
order_batch(GdlPredictJob *jobs, int64 *first, int64 *last, int64 nb)
{
	FitJob	   *v = palloc(sizeof(FitJob) * (nb > 0 ? nb : 1));

	for (int64 j = 0; j < nb; j++)
		v[j] = (FitJob) {jobs[j], first[j], last[j]};
	qsort(v, nb, sizeof(FitJob), cmp_fit_job);
	for (int64 j = 0; j < nb; j++)
	{
		jobs[j] = v[j].job;
		first[j] = v[j].first;
		last[j] = v[j].last;
	}
	pfree(v);
}

/*
 * Answer the held-out queries (sorted, so that the triples asking one
 * question are together) in batches, each question once, and keep what
 * the fit needs of each triple's; a query the rules cannot answer still
 * counts (its true answer unranked).  A batch holds at most FIT_BATCH
 * questions and FIT_BATCH_TRIPLES triples.  A batch's results are freed even
 * when keeping them fails.  *ms_keep: the time spent keeping.
 */
static void
fit_answer(GpudlKg *kg, GdlPredictFit *fit, GpudlPredictQuery *queries, int64 nqueries,
		   GpudlSplitRules *split, const GdlPredictOptions *opts, double *ms_keep)
{
	GdlPredictJob *jobs = palloc0(sizeof(GdlPredictJob) * FIT_BATCH);
	int64	   *first = palloc(sizeof(int64) * FIT_BATCH);
	int64	   *last = palloc(sizeof(int64) * FIT_BATCH);
	int64		qi = 0;

	while (qi < nqueries)
	{
		int64		nb = 0,
					ntriples = 0;
		double		t;

		while (qi < nqueries && nb < FIT_BATCH)
		{
			GpudlPredictQuery *pq = &queries[qi];
			GpudlRelRules *rr = &split->of[pq->q.rel];
			int64		end = qi + 1;

			while (end < nqueries && same_question(pq, &queries[end]))
				end++;
			if (nb > 0 && ntriples + (end - qi) > FIT_BATCH_TRIPLES)
				break;
			if (!pq->known || !rr->ready || rr->nrules == 0)
			{
				for (; qi < end; qi++)
					gdl_predict_fit_add(fit, NULL, &queries[qi].q, queries[qi].want, NULL, opts);
				continue;
			}
			jobs[nb].rules = rr->rules;
			jobs[nb].nrules = rr->nrules;
			jobs[nb].index = rr->index;
			jobs[nb].q = pq->q;
			jobs[nb].res = NULL;
			first[nb] = qi;
			last[nb++] = end;
			ntriples += end - qi;
			qi = end;
		}
		CHECK_FOR_INTERRUPTS();
		order_batch(jobs, first, last, nb);
		gdl_predict_many(kg->graph, jobs, nb, opts);
		t = gdl_now_ms();
		fit_keep_batch(fit, queries, jobs, first, last, nb, opts);
		*ms_keep += gdl_now_ms() - t;
	}
}

/*
 * gpudl_fit_weights(program, query, confidence, smoothing) RETURNS
 * float8[]: the weights, GDL_PREDICT_NWEIGHTS of them (gdl_mine.h's
 * features, for r(?, t) queries then for r(h, ?) ones).
 */
Datum
gpudl_fit_weights(PG_FUNCTION_ARGS)
{
	char	   *program = gpudl_text_arg(fcinfo, 0, "program name");
	char	   *query = gpudl_text_arg(fcinfo, 1, "query");
	GdlPredictOptions opts;
	GpudlMineArgs margs;
	MemoryContext percall,
				old;
	GpudlKg    *kg;
	GdlDict    *qdict;
	GpudlPredictQuery *queries;
	int64		nqueries;
	GpudlSplitRules split;
	GdlPredictFit *fit;
	GpudlRelRules one;
	double		weights[GDL_PREDICT_NWEIGHTS],
				before,
				after,
				t0 = gdl_now_ms(),
				t_rules,
				t_answered,
				ms_keep = 0;
	Datum		elems[GDL_PREDICT_NWEIGHTS];
	ArrayType  *result;
	int			token;

	gdl_predict_options_init(&opts);
	opts.aggregation = GDL_PREDICT_KIND_NOISY_OR;
	opts.exclude_known = true;
	opts.limit = 0;
	gpudl_predict_scoring_args(fcinfo, 2, 3, &opts);
	gpudl_mine_args_init(&margs);
	gpudl_require_program(program, GPUDL_PRIV_USE);

	gpudl_memory_reset();
	percall = AllocSetContextCreate(CurrentMemoryContext, "gpudl fit weights", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(percall);
	token = gpudl_progress_begin("fit", program, query);
	gpudl_progress_phase("reading");
	kg = gpudl_kg_acquire(program, NULL);
	qdict = gdl_dict_create();
	queries = gpudl_predict_read_queries(kg, qdict, program, -1, query, true, &nqueries);
	if (nqueries == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no held-out triples to fit the weights on"),
				 errhint("The query returns the triples (relation, subject, object) of a validation split.")));

	gpudl_progress_phase("rules");
	memset(&split, 0, sizeof(split));
	memset(&one, 0, sizeof(one));
	split.kg = kg;
	split.margs = &margs;
	split.of = palloc0(sizeof(GpudlRelRules) * (kg->nrels + 1));
	for (int64 qi = 0; qi < nqueries; qi++)
		if (queries[qi].known)
			(void) gpudl_predict_split_rules(&split, queries[qi].q.rel);
	gpudl_predict_prepare_rules(kg, queries, nqueries, &one, &split);

	gpudl_progress_phase("predicting");
	t_rules = gdl_now_ms();
	fit = gdl_predict_fit_create(kg->graph, nqueries, nqueries / 2);
	/* rows come in pairs: r(s, ?) wanting o, then r(?, o) wanting s */
	for (int64 qi = 0; qi + 1 < nqueries; qi += 2)
		if (queries[qi].q.value >= 0 && queries[qi].want >= 0)
			gdl_predict_fit_truth(fit, queries[qi].q.rel, queries[qi].q.value, queries[qi].want);
	/*
	 * Sorted, so that the held-out triples asking one question (r(?, t) of
	 * a popular t: on FB15k-237 thousands of triples ask a few such
	 * questions, each with thousands of answers) are answered once.
	 */
	qsort(queries, nqueries, sizeof(GpudlPredictQuery), cmp_fit_query);
	fit_answer(kg, fit, queries, nqueries, &split, &opts, &ms_keep);
	t_answered = gdl_now_ms();

	gpudl_progress_phase("fitting");
	gdl_predict_fit_learn(fit, weights, &before, &after);
	elog(DEBUG1, "gpudl_fit_weights: %lld queries, MRR %.4f with kind_noisy_or's weights, %.4f fitted; "
		 "graph, queries and rules %.0f ms, answering %.0f ms (keeping %.0f ms), fitting %.0f ms",
		 (long long) nqueries, before, after, t_rules - t0, t_answered - t_rules, ms_keep,
		 gdl_now_ms() - t_answered);
	gdl_predict_fit_free(fit);
	gpudl_progress_end(token);
	gpudl_kg_release(kg);
	MemoryContextSwitchTo(old);
	for (int k = 0; k < GDL_PREDICT_NWEIGHTS; k++)
		elems[k] = Float8GetDatum(weights[k]);
	result = construct_array(elems, GDL_PREDICT_NWEIGHTS, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL,
							 TYPALIGN_DOUBLE);
	MemoryContextDelete(percall);
	PG_RETURN_ARRAYTYPE_P(result);
}
