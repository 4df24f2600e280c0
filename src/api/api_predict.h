/*
 * api_predict.h — what gpudl_predict (api_predict.c) shares with
 * gpudl_fit_weights (api_fit.c): the queries read from SQL, the rules of
 * each relation for a call, the prediction options of the SQL arguments.
 */
#ifndef GPUDL_API_PREDICT_H
#define GPUDL_API_PREDICT_H

#include "pg/gpudl_kg.h"

#include "fmgr.h"

/* One query of a call; value < 0 entity means it has no answers. */
typedef struct GpudlPredictQuery
{
	GdlPredictQuery q;
	bool		known;			/* the constant is an entity of the graph */
	char	   *text;			/* as shown in the result: r("a", Y) or r(X, "b") */
	int64_t		want;			/* held-out rows: the true answer (graph value), else -1 */
} GpudlPredictQuery;

/*
 * The rules of one relation for a call: the stored ones, else those of the
 * mining run for every relation (mined once per call, when first needed).
 */
typedef struct GpudlRelRules
{
	bool		ready;
	GdlMineRule *rules;
	int64		nrules;
	Datum	   *texts;			/* each rule's text datum */
	GdlPredictIndex *index;		/* the rules prepared for the call's queries */
} GpudlRelRules;

typedef struct GpudlSplitRules
{
	GpudlKg    *kg;
	const GpudlMineArgs *margs;
	GdlMineResult *mined;		/* every relation's, NULL until needed */
	GpudlRelRules *of;			/* per graph relation */
} GpudlSplitRules;

extern GpudlPredictQuery *gpudl_predict_read_queries(GpudlKg *kg, GdlDict *qdict, const char *program,
													 int rel, const char *source, bool triples,
													 int64 *nqueries);
extern GpudlRelRules *gpudl_predict_split_rules(GpudlSplitRules *sr, int rel);
extern void gpudl_predict_prepare_rules(GpudlKg *kg, GpudlPredictQuery *queries, int64 nqueries,
										GpudlRelRules *one, GpudlSplitRules *split);
extern void gpudl_predict_options(FunctionCallInfo fcinfo, GdlPredictOptions *o);
extern void gpudl_predict_scoring_args(FunctionCallInfo fcinfo, int conf_arg, int smoothing_arg,
									   GdlPredictOptions *o);

#endif							/* GPUDL_API_PREDICT_H */
