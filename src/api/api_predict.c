/*
 * api_predict.c — gpudl_predict: ranked answers of link-prediction queries
 * r(h, ?) and r(?, t) over a program's knowledge graph, scored by mined
 * rules (the program's stored rules for the target, else rules mined for
 * the call).  A query is a goal with exactly one constant, or a SQL query
 * or table name whose rows (subject, object) each have exactly one NULL.
 * With target NULL, a whole split in one call: rows (relation, subject,
 * object), the rules of every relation asked about read or mined once.
 */
#include "api/api_predict.h"

#include <ctype.h>
#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(gpudl_predict);

/* Queries answered at once on the worker threads (their results held in memory). */
#define PREDICT_BATCH 256


/*
 * Does the text start like a SQL query: a parenthesis, or select, with,
 * values or table followed by white space?  (A goal about a predicate
 * named "values" is "values(...)", with no space before the parenthesis.)
 */
static bool
looks_like_sql(const char *s)
{
	static const char *const words[] = {"select", "with", "values", "table"};
	int			i;

	while (isspace((unsigned char) *s))
		s++;
	if (*s == '(')
		return true;
	for (i = 0; i < lengthof(words); i++)
	{
		size_t		n = strlen(words[i]);

		if (pg_strncasecmp(s, words[i], n) == 0 && isspace((unsigned char) s[n]))
			return true;
	}
	return false;
}

/*
 * Fill a query for a constant of the target, given as encoded through
 * qdict, the call's own dictionary: the graph's dictionary is only looked
 * up, never added to (it may be a graph kept between calls), and a text
 * that is not in it is no entity.
 */
static void
set_query(GpudlPredictQuery *pq, const GpudlKg *kg, GdlDict *qdict, const char *target, int rel,
		  bool subject_bound, int64_t qvalue)
{
	char	   *name = gdl_pred_name_quote(target);
	char	   *lit;
	int64_t		value = qvalue;

	if (kg->type == GDL_TYPE_TEXT)
	{
		size_t		len;
		const char *s = gdl_dict_string(qdict, (int32_t) qvalue, &len);

		value = gdl_dict_lookup(kg->dict, s, len);
		lit = gpudl_kg_quote_text(pnstrdup(s, len));
	}
	else
		lit = gpudl_kg_value_literal(kg, value);
	pq->q.rel = rel;
	pq->q.subject_bound = subject_bound;
	pq->q.value = value;
	pq->known = (kg->type != GDL_TYPE_TEXT || value >= 0) && gdl_mine_graph_entity(kg->graph, value) >= 0;
	pq->want = -1;
	pq->text = subject_bound ? psprintf("%s(%s, Y)", name, lit) : psprintf("%s(X, %s)", name, lit);
}

/* The graph value of a constant encoded through qdict, or -1 when no entity has it. */
static int64_t
graph_value(const GpudlKg *kg, GdlDict *qdict, int64_t qvalue)
{
	if (kg->type == GDL_TYPE_TEXT)
	{
		size_t		len;
		const char *s = gdl_dict_string(qdict, (int32_t) qvalue, &len);

		return gdl_dict_lookup(kg->dict, s, len);
	}
	return qvalue;
}

/* Is the goal argument a constant? */
static bool
is_constant(const GdlTerm *t)
{
	return t->kind == GDL_TERM_INT || t->kind == GDL_TERM_FLOAT ||
		t->kind == GDL_TERM_TEXT || t->kind == GDL_TERM_BOOL;
}

/* A goal r("a", Y) or r(X, "b") of the target, parsed with the goal parser. */
static GpudlPredictQuery *
goal_query(GpudlKg *kg, GdlDict *qdict, const char *target, int rel, const char *goal_text)
{
	GpudlGoalSpec *g = gpudl_parse_goal(&kg->goals, goal_text);
	GpudlPredictQuery *pq = palloc0(sizeof(GpudlPredictQuery));
	GdlGoal    *enc;
	bool		c0,
				c1;

	if (g->pred != rel)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the query \"%s\" asks about \"%s\", not the target \"%s\"",
						goal_text, kg->goals.preds[g->pred].name, target),
				 errhint("Query the target, like %s(\"a\", Y).", gdl_pred_name_quote(target))));
	c0 = is_constant(g->args[0]);
	c1 = is_constant(g->args[1]);
	if (c0 == c1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a prediction query needs exactly one constant, \"%s\" has %s",
						goal_text, c0 ? "two" : "none"),
				 errhint("Ask %s(\"a\", Y) for the objects of \"a\", or %s(X, \"b\") for the subjects of \"b\".",
						 gdl_pred_name_quote(target), gdl_pred_name_quote(target))));
	enc = gpudl_encode_goal(g, qdict);
	set_query(pq, kg, qdict, target, rel, c0, enc->bindings[0].value);
	return pq;
}

/* A non-null value of a query row, checked against the graph's type. */
static int64_t
row_value(GpudlKg *kg, GdlDict *qdict, Datum d, Oid typid, int row, int col)
{
	GdlType		t = gpudl_type_from_oid(typid);

	if (t == GDL_TYPE_INT)
		t = GDL_TYPE_BIGINT;
	if (t != kg->type)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column %d of the queries is %s, but the knowledge graph's entities are %s",
						col, format_type_be(typid), gdl_type_name(kg->type)),
				 errdetail("Row %d.", row)));
	return gpudl_datum_to_value(d, typid, qdict);
}

/*
 * Queries from a SQL query or table, run with the caller's rights: rows
 * (subject, object) of the target rel, or with rel < 0 (a whole split)
 * rows (relation, subject, object), the relation by its name in the graph;
 * exactly one of subject and object NULL per row.  triples (rel < 0):
 * rows are held-out triples, none NULL, each asked both ways with its
 * true answer in want (gpudl_fit_weights).
 */
GpudlPredictQuery *
gpudl_predict_read_queries(GpudlKg *kg, GdlDict *qdict, const char *program, int rel, const char *source, bool triples,
			 int64 *nqueries)
{
	MemoryContext caller = CurrentMemoryContext;
	const char *sql = gpudl_looks_like_relation_name(source) ? psprintf("SELECT * FROM %s", source) : source;
	int			first = rel < 0 ? 2 : 1;	/* the subject's column */
	GpudlPredictQuery *out;
	TupleDesc	desc;
	uint64		i,
				n;

	SPI_connect();
	if (SPI_execute(sql, true, 0) != SPI_OK_SELECT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the queries must be a goal, a query returning rows, or a table name"),
				 errdetail("Got: %s", source)));
	desc = SPI_tuptable->tupdesc;
	n = SPI_processed;
	MemoryContextSwitchTo(caller);
	if (rel >= 0 && desc->natts != 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the queries have %d column%s, but a query row is (subject, object)",
						desc->natts, desc->natts == 1 ? "" : "s"),
				 errhint("Select the subject and the object, one of them NULL: the one to predict.")));
	if (triples && desc->natts != 3)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the held-out triples have %d column%s, but a row is (relation, subject, object)",
						desc->natts, desc->natts == 1 ? "" : "s"),
				 errhint("Select the relation's name, the subject and the object of each true triple.")));
	if (rel < 0 && desc->natts != 3)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the queries have %d column%s, but with target NULL a query row is (relation, subject, object)",
						desc->natts, desc->natts == 1 ? "" : "s"),
				 errhint("Select the relation's name, the subject and the object, one of the last two NULL; "
						 "or name the target and select (subject, object).")));
	out = palloc0(sizeof(GpudlPredictQuery) * (2 * n + 1));
	for (i = 0; i < n; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		bool		null0,
					null1;
		Datum		d0 = SPI_getbinval(tup, desc, first, &null0);
		Datum		d1 = SPI_getbinval(tup, desc, first + 1, &null1);
		int			r = rel;

		if (rel < 0)
		{
			bool		nullr;
			char	   *relname;

			(void) SPI_getbinval(tup, desc, 1, &nullr);
			if (nullr)
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("query row %d has no relation", (int) i + 1),
						 errhint("The first column names the relation of the query.")));
			relname = SPI_getvalue(tup, desc, 1);
			r = gpudl_kg_relation(kg, relname, true);
			if (r < 0)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_OBJECT),
						 errmsg("query row %d asks about \"%s\", which is not a relation of the knowledge graph of program \"%s\"",
								(int) i + 1, relname, program),
						 errhint("Bind a binary table to that name, or correct the name (it is compared exactly).")));
		}
		if (triples)
		{
			int64_t		sv,
						ov;

			if (null0 || null1)
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("held-out row %d has a NULL %s", (int) i + 1, null0 ? "subject" : "object"),
						 errhint("Each row is a true triple (relation, subject, object), asked both ways.")));
			sv = row_value(kg, qdict, d0, TupleDescAttr(desc, first - 1)->atttypid, (int) i + 1, first);
			ov = row_value(kg, qdict, d1, TupleDescAttr(desc, first)->atttypid, (int) i + 1, first + 1);
			set_query(&out[2 * i], kg, qdict, kg->rels[r].name, r, true, sv);
			out[2 * i].want = graph_value(kg, qdict, ov);
			set_query(&out[2 * i + 1], kg, qdict, kg->rels[r].name, r, false, ov);
			out[2 * i + 1].want = graph_value(kg, qdict, sv);
			if ((i & 0xFFF) == 0)
				CHECK_FOR_INTERRUPTS();
			continue;
		}
		if (null0 == null1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("query row %d has %s, but exactly one of subject and object must be NULL",
							(int) i + 1, null0 ? "two NULLs" : "no NULL"),
					 errhint("NULL marks the argument to predict.")));
		if (!null0)
			set_query(&out[i], kg, qdict, kg->rels[r].name, r, true,
					  row_value(kg, qdict, d0, TupleDescAttr(desc, first - 1)->atttypid, (int) i + 1, first));
		else
			set_query(&out[i], kg, qdict, kg->rels[r].name, r, false,
					  row_value(kg, qdict, d1, TupleDescAttr(desc, first)->atttypid, (int) i + 1, first + 1));
		if ((i & 0xFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	SPI_finish();
	*nqueries = (int64) (triples ? 2 * n : n);
	return out;
}

/* The rules of relation rel (its stored rules, else the mined ones with that head). */
GpudlRelRules *
gpudl_predict_split_rules(GpudlSplitRules *sr, int rel)
{
	GpudlRelRules   *rr = &sr->of[rel];
	GpudlKgRules *stored;
	int64		i;

	if (rr->ready)
		return rr;
	if ((stored = gpudl_kg_rules(sr->kg, rel)) != NULL)
	{
		rr->rules = stored->rules;
		rr->nrules = stored->nrules;
		rr->texts = stored->texts;
	}
	else
	{
		int64		n = 0;

		if (sr->mined == NULL)
			sr->mined = gpudl_kg_mine(sr->kg, NULL, sr->margs);
		for (i = 0; i < sr->mined->nrules; i++)
			if (sr->mined->rules[i].head == rel)
				n++;
		rr->rules = palloc(sizeof(GdlMineRule) * (n + 1));
		rr->texts = palloc(sizeof(Datum) * (n + 1));
		for (i = 0; i < sr->mined->nrules; i++)
			if (sr->mined->rules[i].head == rel)
			{
				rr->rules[rr->nrules] = sr->mined->rules[i];
				rr->texts[rr->nrules++] = CStringGetTextDatum(gpudl_kg_rule_text(sr->kg, &sr->mined->rules[i]));
				if ((rr->nrules & 4095) == 0)
					CHECK_FOR_INTERRUPTS();
			}
	}
	rr->ready = true;
	return rr;
}

/* The aggregation named by the call (22023 for another name). */
static GdlPredictAggregation
parse_aggregation(const char *s)
{
	static const GpudlKeyword aggregations[] = {
		{"max", GDL_PREDICT_MAX}, {"noisy_or", GDL_PREDICT_NOISY_OR},
		{"cluster_noisy_or", GDL_PREDICT_CLUSTER_NOISY_OR},
		{"kind_noisy_or", GDL_PREDICT_KIND_NOISY_OR}, {"weighted", GDL_PREDICT_WEIGHTED}, {NULL, 0}
	};

	return (GdlPredictAggregation)
		gpudl_keyword(s, aggregations, "invalid aggregation \"%s\"",
					  "Use 'max' (the best rule's confidence, ties broken by the next best), 'noisy_or', "
					  "'cluster_noisy_or' (noisy-or over clusters of rules with the same body relations), "
					  "'kind_noisy_or' (over kinds of evidence) or 'weighted' (kinds of evidence weighted "
					  "as gpudl_fit_weights learns).");
}

/*
 * The weighted aggregation's weights from a float8[] argument: exactly
 * GDL_PREDICT_NWEIGHTS finite, non-negative numbers, no NULL.
 */
static void
predict_weights_arg(ArrayType *arr, GdlPredictOptions *o)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	deconstruct_array(arr, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, &n);
	if (ARR_NDIM(arr) > 1 || n != GDL_PREDICT_NWEIGHTS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("weights must be a one-dimensional array of %d numbers, got %d",
						GDL_PREDICT_NWEIGHTS, n),
				 errhint("Use the array gpudl_fit_weights returns.")));
	for (int k = 0; k < n; k++)
	{
		double		w = nulls[k] ? -1 : DatumGetFloat8(elems[k]);

		if (!(w >= 0) || isinf(w))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("weight %d must be a non-negative number, got %s", k + 1,
							nulls[k] ? "NULL" : psprintf("%g", w)),
					 errhint("Use the array gpudl_fit_weights returns.")));
		o->weights[k] = w;
	}
}

/*
 * The confidence (argument conf_arg: 'pca' or 'std') and smoothing
 * (argument smoothing_arg: a non-negative number) of a scoring call.
 */
void
gpudl_predict_scoring_args(FunctionCallInfo fcinfo, int conf_arg, int smoothing_arg, GdlPredictOptions *o)
{
	static const GpudlKeyword confidences[] = {{"pca", true}, {"std", false}, {NULL, 0}};
	char	   *conf = gpudl_text_arg(fcinfo, conf_arg, "confidence");

	o->use_pca = gpudl_keyword(conf, confidences, "invalid confidence \"%s\"",
							   "Use 'pca' (partial completeness) or 'std' (standard confidence).") != 0;
	if (PG_ARGISNULL(smoothing_arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("smoothing must not be null")));
	o->smoothing = PG_GETARG_FLOAT8(smoothing_arg);
	if (!(o->smoothing >= 0) || isinf(o->smoothing))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("smoothing must be a non-negative number, got %g", o->smoothing)));
}

/* Read and check the prediction options (arguments 3-5, 9-10 and 13). */
void
gpudl_predict_options(FunctionCallInfo fcinfo, GdlPredictOptions *o)
{
	gdl_predict_options_init(o);
	o->aggregation = parse_aggregation(gpudl_text_arg(fcinfo, 3, "aggregation"));
	o->exclude_known = PG_ARGISNULL(4) ? true : PG_GETARG_BOOL(4);
	o->limit = gpudl_int_arg(fcinfo, 5, "limit");
	if (o->limit < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("limit must not be negative, got %lld", (long long) o->limit),
				 errhint("Use 0 for every answer.")));
	/* 0.3's confidence and smoothing */
	if (PG_NARGS() > 10)
		gpudl_predict_scoring_args(fcinfo, 9, 10, o);
	/* 0.9's weights: only with aggregation 'weighted', which needs them */
	if (PG_NARGS() > 13 && !PG_ARGISNULL(13))
	{
		if (o->aggregation != GDL_PREDICT_WEIGHTED)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("weights are given, but the aggregation is not 'weighted'"),
					 errhint("Pass aggregation => 'weighted' with the weights, or leave weights out.")));
		predict_weights_arg(PG_GETARG_ARRAYTYPE_P(13), o);
	}
	else if (o->aggregation == GDL_PREDICT_WEIGHTED)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("aggregation 'weighted' needs weights"),
				 errhint("Learn them with gpudl_fit_weights(program, held-out triples) and pass weights => them.")));
}

/*
 * What the rows of a call share: each answer's text datum, made once per
 * entity (a split's millions of rows name a few thousand entities), and
 * the empty rules array of rules_shown 0.
 */
typedef struct RowCache
{
	Datum	   *entity_text;	/* per entity of the graph; 0 until made */
	Datum		no_rules;
} RowCache;

/* The text datum of answer value (an entity of the graph), made once per call. */
static Datum
answer_text(GpudlKg *kg, RowCache *rc, int64_t value)
{
	int32_t		e = gdl_mine_graph_entity(kg->graph, value);

	if (e < 0)
		return CStringGetTextDatum(gpudl_kg_value_text(kg, value));
	if (rc->entity_text[e] == (Datum) 0)
	{
		MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(rc->entity_text));

		rc->entity_text[e] = CStringGetTextDatum(gpudl_kg_value_text(kg, value));
		MemoryContextSwitchTo(old);
	}
	return rc->entity_text[e];
}

/*
 * The rows of a batch's answers in query order, each result freed once
 * returned; each answer's rules array holds its best rules_shown rules
 * (below 0: all).
 */
static void
return_batch_rows(ReturnSetInfo *rsinfo, GpudlKg *kg, GpudlPredictQuery *queries, GpudlRelRules *one,
				  GpudlSplitRules *split, GdlPredictJob *jobs, const int64 *which, int64 nj,
				  int rules_shown, RowCache *rc, MemoryContext percall)
{
	for (int64 j = 0; j < nj; j++)
	{
		GpudlPredictQuery *pq = &queries[which[j]];
		GpudlRelRules   *rr = one->ready ? one : &split->of[pq->q.rel];
		GdlPredictResult *pr = jobs[j].res;
		Datum		qtext = CStringGetTextDatum(pq->text);
		MemoryContext qcxt = AllocSetContextCreate(percall, "gpudl predict query",
												   ALLOCSET_DEFAULT_SIZES);

		MemoryContextSwitchTo(qcxt);
		for (int64 i = 0; i < pr->nanswers; i++)
		{
			const GdlPredictAnswer *a = &pr->answers[i];
			Datum		v[5];
			bool		nulls[5] = {0};
			Datum	   *rd;
			int			nshown = rules_shown >= 0 && rules_shown < a->nrules ? rules_shown : a->nrules;

			/* an answer's array may hold thousands of rule texts: a batch can take long */
			CHECK_FOR_INTERRUPTS();
			v[0] = qtext;
			v[1] = answer_text(kg, rc, a->value);
			v[2] = Float8GetDatum(a->score);
			v[3] = Int64GetDatum(a->rank);
			if (nshown == 0)
				v[4] = rc->no_rules;
			else
			{
				rd = palloc(sizeof(Datum) * (nshown + 1));
				for (int k = 0; k < nshown; k++)
					rd[k] = rr->texts[a->rules[k]];
				v[4] = PointerGetDatum(construct_array(rd, nshown, TEXTOID, -1, false, TYPALIGN_INT));
			}
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
		}
		MemoryContextSwitchTo(percall);
		MemoryContextDelete(qcxt);
		gdl_predict_result_free(pr);
		jobs[j].res = NULL;
	}
}

/* Queries of one relation from which its rules are prepared (gdl_predict_index). */
#define PREDICT_INDEX_MIN_QUERIES 8

/*
 * Prepare the rules of every relation asked PREDICT_INDEX_MIN_QUERIES
 * times or more, in the call's context.  Fewer queries walk the rules
 * fewer times than preparing them costs (sorting every rule), so a single
 * goal is answered from the rules as they are.
 */
void
gpudl_predict_prepare_rules(GpudlKg *kg, GpudlPredictQuery *queries, int64 nqueries, GpudlRelRules *one, GpudlSplitRules *split)
{
	int64	   *asked = palloc0(sizeof(int64) * (kg->nrels + 1));

	for (int64 qi = 0; qi < nqueries; qi++)
		if (queries[qi].known)
			asked[queries[qi].q.rel]++;
	if (one->ready)
	{
		if (one->nrules > 0 && nqueries >= PREDICT_INDEX_MIN_QUERIES)
			one->index = gdl_predict_index(kg->graph, one->rules, one->nrules);
	}
	else
		for (int r = 0; r < kg->nrels; r++)
			if (split->of[r].ready && split->of[r].nrules > 0 && asked[r] >= PREDICT_INDEX_MIN_QUERIES)
				split->of[r].index = gdl_predict_index(kg->graph, split->of[r].rules, split->of[r].nrules);
	pfree(asked);
}

/* A batch of queries on the worker threads: their jobs and the queries they are. */
typedef struct PredictBatch
{
	GdlPredictJob *jobs;		/* PREDICT_BATCH of them */
	int64	   *which;			/* each job's query */
	int64		n;
	GdlPredictRun *run;			/* being answered, or NULL */
} PredictBatch;

/*
 * Fill a batch with the next queries from qi on that have rules (the rest
 * have no answers); returns the query after the batch's last.
 */
static int64
fill_batch(PredictBatch *pb, GpudlPredictQuery *queries, int64 qi, int64 nqueries, GpudlRelRules *one,
		   GpudlSplitRules *split)
{
	pb->n = 0;
	for (; qi < nqueries && pb->n < PREDICT_BATCH; qi++)
	{
		GpudlPredictQuery *pq = &queries[qi];
		GpudlRelRules   *rr = one->ready ? one : &split->of[pq->q.rel];

		if (!pq->known || !rr->ready || rr->nrules == 0)
			continue;
		pb->jobs[pb->n].rules = rr->rules;
		pb->jobs[pb->n].nrules = rr->nrules;
		pb->jobs[pb->n].index = rr->index;
		pb->jobs[pb->n].q = pq->q;
		pb->jobs[pb->n].res = NULL;
		pb->which[pb->n++] = qi;
	}
	return qi;
}

/*
 * Start the next batch (from query qi on) on the worker threads, then
 * return the rows of cur, answered already; on an error (a cancel while
 * returning, say) stop the next batch and free both batches' results.
 * Returns the query after the next batch's last.
 */
static int64
start_and_return(ReturnSetInfo *rsinfo, GpudlKg *kg, GpudlPredictQuery *queries, int64 qi, int64 nqueries,
				 GpudlRelRules *one, GpudlSplitRules *split, const GdlPredictOptions *opts,
				 PredictBatch *cur, PredictBatch *next, int rules_shown, RowCache *rc,
				 MemoryContext percall)
{
	GdlPredictRun *volatile started = NULL;

	next->run = NULL;
	next->n = 0;
	PG_TRY();
	{
		CHECK_FOR_INTERRUPTS();
		if (qi < nqueries)
		{
			qi = fill_batch(next, queries, qi, nqueries, one, split);
			started = next->run = gdl_predict_start(kg->graph, next->jobs, next->n, opts);
		}
		gpudl_progress_phase("returning");
		return_batch_rows(rsinfo, kg, queries, one, split, cur->jobs, cur->which, cur->n,
						  rules_shown, rc, percall);
	}
	PG_CATCH();
	{
		gdl_predict_cancel(started);
		for (int64 j = 0; j < cur->n; j++)
		{
			gdl_predict_result_free(cur->jobs[j].res);
			cur->jobs[j].res = NULL;
		}
		PG_RE_THROW();
	}
	PG_END_TRY();
	return qi;
}

/*
 * gpudl_predict(program, target, query, aggregation, exclude_known, limit,
 * max_body, min_head_coverage, min_confidence, confidence, smoothing,
 * constants, rules_shown).  target NULL: the goal's predicate, or a whole
 * split of (relation, subject, object) rows.
 */
Datum
gpudl_predict(PG_FUNCTION_ARGS)
{
	char	   *program = gpudl_text_arg(fcinfo, 0, "program name");
	char	   *target = PG_ARGISNULL(1) ? NULL : gpudl_text_arg(fcinfo, 1, "target");
	char	   *query = gpudl_text_arg(fcinfo, 2, "query");
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GdlPredictOptions opts;
	GpudlMineArgs margs;
	MemoryContext percall;
	MemoryContext old;
	GpudlKg    *kg;
	GdlDict    *qdict;			/* the queries' constants (the graph's is not added to) */
	GpudlPredictQuery *queries;
	int64		nqueries = 1;
	bool		is_table = gpudl_looks_like_relation_name(query) || looks_like_sql(query);
	GpudlRelRules	one;
	GpudlSplitRules	split;
	int			token;
	int			rules_shown = -1;
	int64		qi;
	int64		nanswers = 0;
	PredictBatch cur,
				next;
	RowCache	rc;
	double		t_start = gdl_now_ms(),
				t_rules,
				t_predict = 0,
				t_return = 0;

	gpudl_predict_options(fcinfo, &opts);
	gpudl_mine_args_init(&margs);
	margs.max_body = gpudl_int_arg(fcinfo, 6, "max_body");
	if (PG_ARGISNULL(7) || PG_ARGISNULL(8))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("min_head_coverage and min_confidence must not be null")));
	margs.min_head_coverage = PG_GETARG_FLOAT8(7);
	margs.min_confidence = PG_GETARG_FLOAT8(8);
	margs.min_support = 1;
	margs.constants = false;
	/* 0.4's constants, for rules mined for the call (0.3: eleven arguments) */
	if (PG_NARGS() > 11)
	{
		if (PG_ARGISNULL(11))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("constants must not be null")));
		margs.constants = PG_GETARG_BOOL(11);
	}
	/* 0.5's rules_shown: NULL, every rule of an answer */
	if (PG_NARGS() > 12 && !PG_ARGISNULL(12))
	{
		rules_shown = PG_GETARG_INT32(12);
		if (rules_shown < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("rules_shown must not be negative, got %d", rules_shown),
					 errhint("Use NULL for every rule of an answer, 0 for none.")));
	}
	gpudl_mine_args_check(&margs);
	gpudl_require_program(program, GPUDL_PRIV_USE);

	InitMaterializedSRF(fcinfo, 0);
	gpudl_memory_reset();
	percall = AllocSetContextCreate(CurrentMemoryContext, "gpudl predict", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(percall);
	token = gpudl_progress_begin("predict", program, query);
	gpudl_progress_phase("reading");
	kg = gpudl_kg_acquire(program, target);
	qdict = gdl_dict_create();
	gpudl_progress_phase("rules");
	memset(&one, 0, sizeof(one));
	memset(&split, 0, sizeof(split));
	if (target == NULL && !is_table)
	{
		/* a goal names its relation: the target */
		GpudlGoalSpec *g = gpudl_parse_goal(&kg->goals, query);

		target = pstrdup(kg->goals.preds[g->pred].name);
	}
	if (target != NULL)
	{
		int			rel = gpudl_kg_relation(kg, target, false);

		if (is_table)
			queries = gpudl_predict_read_queries(kg, qdict, program, rel, query, false, &nqueries);
		else
			queries = goal_query(kg, qdict, target, rel, query);
		split.kg = kg;
		split.margs = &margs;
		split.of = palloc0(sizeof(GpudlRelRules) * (kg->nrels + 1));
		/* the stored rules, else those mined for the target alone */
		if (gpudl_kg_rules(kg, rel) == NULL)
			split.mined = gpudl_kg_mine(kg, target, &margs);
		one = *gpudl_predict_split_rules(&split, rel);
	}
	else
	{
		/* a whole split: every relation asked about, its rules read or mined once */
		queries = gpudl_predict_read_queries(kg, qdict, program, -1, query, false, &nqueries);
		split.kg = kg;
		split.margs = &margs;
		split.of = palloc0(sizeof(GpudlRelRules) * (kg->nrels + 1));
		for (qi = 0; qi < nqueries; qi++)
			if (queries[qi].known)
				(void) gpudl_predict_split_rules(&split, queries[qi].q.rel);
	}

	gpudl_predict_prepare_rules(kg, queries, nqueries, &one, &split);
	t_rules = gdl_now_ms();

	/*
	 * Batches of queries answered on the worker threads while this thread
	 * returns the rows of the batch before (PostgreSQL's work, which the
	 * workers may not do): the answering and the returning overlap.
	 */
	rc.entity_text = palloc0(sizeof(Datum) * (gdl_mine_graph_nentities(kg->graph) + 1));
	rc.no_rules = PointerGetDatum(construct_empty_array(TEXTOID));
	cur.jobs = palloc(sizeof(GdlPredictJob) * PREDICT_BATCH);
	cur.which = palloc(sizeof(int64) * PREDICT_BATCH);
	next.jobs = palloc(sizeof(GdlPredictJob) * PREDICT_BATCH);
	next.which = palloc(sizeof(int64) * PREDICT_BATCH);
	qi = fill_batch(&cur, queries, 0, nqueries, &one, &split);
	gpudl_progress_phase("predicting");
	cur.run = gdl_predict_start(kg->graph, cur.jobs, cur.n, &opts);
	while (cur.run != NULL)
	{
		PredictBatch tmp;
		double		t0 = gdl_now_ms();

		gpudl_progress_phase("predicting");
		gdl_predict_finish(cur.run);
		cur.run = NULL;
		t_predict += gdl_now_ms() - t0;
		for (int64 j = 0; j < cur.n; j++)
			nanswers += cur.jobs[j].res->nanswers;
		t0 = gdl_now_ms();
		qi = start_and_return(rsinfo, kg, queries, qi, nqueries, &one, &split, &opts, &cur, &next,
							  rules_shown, &rc, percall);
		t_return += gdl_now_ms() - t0;
		tmp = cur;
		cur = next;
		next = tmp;
	}
	elog(DEBUG1, "gpudl_predict: %lld queries, %lld answers; graph, queries and rules %.0f ms, "
		 "predicting %.0f ms, returning rows %.0f ms",
		 (long long) nqueries, (long long) nanswers, t_rules - t_start, t_predict, t_return);
	gpudl_progress_end(token);
	gpudl_kg_release(kg);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(percall);
	return (Datum) 0;
}
