/*
 * api_learn.c — rule induction from SQL: gpudl_learn (ranked rules with
 * losses and confidence measures, recorded in gpudl.learn_runs and
 * gpudl.learned_rules, optionally committed), gpudl_candidates (the bias)
 * and gpudl_loss_grad (loss and gradient for a user's own optimiser).
 */
#include "pg/gpudl_learn.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(gpudl_learn);
PG_FUNCTION_INFO_V1(gpudl_candidates);
PG_FUNCTION_INFO_V1(gpudl_loss_grad);

/* Raise 22023 "what must be ..." when cond is false. */
static void
require(bool cond, const char *msg, int32 got)
{
	if (!cond)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s, got %d", msg, got)));
}

/*
 * A learned rule as text: the clause, followed by the clauses of the
 * invented predicates it uses (so the text can be committed as it is).
 */
static const char *
rule_text(const GdlIlpRule *r)
{
	return r->aux ? psprintf("%s %s", r->rule, r->aux) : r->rule;
}

/*
 * The ten columns of a learned rule, as gpudl_learn returns them and
 * gpudl.learned_rules keeps them (after the run's id): rank, rule,
 * probability, loss, precision, recall, support, head_coverage,
 * std_confidence, pca_confidence.
 */
static void
rule_values(const GdlIlpRule *r, Datum *v)
{
	v[0] = Int32GetDatum(r->rank);
	v[1] = CStringGetTextDatum(rule_text(r));
	v[2] = Float8GetDatum(r->probability);
	v[3] = Float8GetDatum(r->loss);
	v[4] = Float8GetDatum(r->precision);
	v[5] = Float8GetDatum(r->recall);
	v[6] = Int64GetDatum(r->support);
	v[7] = Float8GetDatum(r->head_coverage);
	v[8] = Float8GetDatum(r->std_confidence);
	v[9] = Float8GetDatum(r->pca_confidence);
}

/* The call's parameters as a jsonb text, for gpudl.learn_runs.params. */
static char *
params_json(const char *positives, const char *negatives, const GdlIlpParams *p, bool commit,
			const char *types)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoString(&b, "{\"positives\": ");
	escape_json(&b, positives);
	appendStringInfoString(&b, ", \"negatives\": ");
	if (negatives)
		escape_json(&b, negatives);
	else
		appendStringInfoString(&b, "null");
	appendStringInfo(&b, ", \"max_body\": %d, \"max_rules\": %d, \"epochs\": %d, "
					 "\"learning_rate\": %g, \"allow_recursive\": %s, \"min_support\": %d, "
					 "\"seed\": %lld, \"commit\": %s, \"negative_sampling\": \"%s\"}",
					 p->max_body, p->max_rules, p->epochs, p->learning_rate,
					 p->allow_recursive ? "true" : "false", p->min_support,
					 (long long) p->seed, commit ? "true" : "false",
					 p->neg_mode == GDL_ILP_NEG_CLOSED ? "closed_world" : "pca");
	if (p->max_seconds > 0 || p->noise > 0 || types || p->max_vars > 0 || p->method != GDL_ILP_AUTO)
	{
		b.len--;				/* reopen the object */
		appendStringInfo(&b, ", \"max_seconds\": %g, \"noise\": %g, \"max_vars\": %d, "
						 "\"method\": \"%s\", \"types\": ", p->max_seconds, p->noise,
						 p->max_vars, p->method == GDL_ILP_BULK ? "bulk" :
						 p->method == GDL_ILP_REFINE ? "refine" : "auto");
		if (types)
			escape_json(&b, types);
		else
			appendStringInfoString(&b, "null");
		appendStringInfoChar(&b, '}');
	}
	return b.data;
}

/* In pg_device.c: register the GPU trainer as gpudl.device says. */
extern bool gpudl_ilp_device_setup(void);

/*
 * Store the result rows and close the run as succeeded.  The only update of
 * the run's row in the caller's transaction, and its last step: an error
 * path's worker must not wait for a lock the caller holds.
 */
static void
finish_run(int64 run_id, const GdlIlpResult *res, bool committed, bool catalog_03)
{
	Oid			rtypes[12] = {INT8OID, INT4OID, TEXTOID, FLOAT8OID, FLOAT8OID, FLOAT8OID,
	FLOAT8OID, INT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, BOOLOID};
	Oid			ftypes[5] = {INT8OID, INT4OID, FLOAT8OID, TEXTOID, TEXTOID};
	Datum		fv[5];
	SPIPlanPtr	plan;
	int			i;

	SPI_connect();
	plan = SPI_prepare("INSERT INTO gpudl.learned_rules(run_id, rank, rule, probability, loss, "
					   "precision, recall, support, head_coverage, std_confidence, pca_confidence, "
					   "committed) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
					   12, rtypes);
	for (i = 0; i < res->nrules; i++)
	{
		const GdlIlpRule *r = &res->rules[i];
		Datum		v[12];

		v[0] = Int64GetDatum(run_id);
		rule_values(r, &v[1]);
		v[11] = BoolGetDatum(committed);
		if (SPI_execute_plan(plan, v, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "gpudl: could not record a learned rule");
	}
	fv[0] = Int64GetDatum(run_id);
	fv[1] = Int32GetDatum(res->epochs);
	fv[2] = Float8GetDatum(res->final_loss);
	fv[3] = CStringGetTextDatum(res->message ? res->message : "");
	fv[4] = CStringGetTextDatum(res->on_device ? "gpu" : "cpu");
	if (SPI_execute_with_args("UPDATE gpudl.learn_runs SET status = 'succeeded', finished_at = now(), "
							  "epochs = $2, final_loss = $3, message = $4, device = $5 WHERE id = $1",
							  5, ftypes, fv, NULL, false, 0) != SPI_OK_UPDATE ||
		SPI_processed != 1)
		elog(ERROR, "gpudl: could not record the learn run");
	/* the 0.3 catalog says whether the time budget ran out */
	if (catalog_03 &&
		SPI_execute_with_args("UPDATE gpudl.learn_runs SET timed_out = $2 WHERE id = $1",
							  2, (Oid[]) {INT8OID, BOOLOID},
							  (Datum[]) {Int64GetDatum(run_id), BoolGetDatum(res->timed_out)},
							  NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "gpudl: could not record the learn run");
	SPI_finish();
}

/* Read the 0.3 arguments (issue 15): max_seconds, noise, types, max_vars, method. */
static void
learn_03_args(FunctionCallInfo fcinfo, GdlIlpParams *params, char **types)
{
	*types = NULL;
	if (PG_NARGS() <= 13)
		return;
	if (!PG_ARGISNULL(13))
	{
		params->max_seconds = PG_GETARG_FLOAT8(13);
		if (!(params->max_seconds >= 0) || isinf(params->max_seconds))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_seconds must be a non-negative number, got %g", params->max_seconds),
					 errhint("Give 0 or NULL for no time budget.")));
	}
	if (!PG_ARGISNULL(14))
	{
		params->noise = PG_GETARG_FLOAT8(14);
		if (!(params->noise >= 0 && params->noise < 1))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("noise must be at least 0 and below 1, got %g", params->noise),
					 errhint("0 learns rules consistent with every negative.")));
	}
	if (!PG_ARGISNULL(15))
		*types = text_to_cstring(PG_GETARG_TEXT_PP(15));
	if (!PG_ARGISNULL(16))
	{
		params->max_vars = PG_GETARG_INT32(16);
		if (params->max_vars < 1 || params->max_vars > 12)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_vars must be between 1 and 12, got %d", params->max_vars),
					 errhint("NULL lets the learner choose (arguments plus max_body).")));
	}
	if (!PG_ARGISNULL(17))
	{
		static const GpudlKeyword methods[] = {
			{"auto", GDL_ILP_AUTO}, {"bulk", GDL_ILP_BULK}, {"refine", GDL_ILP_REFINE}, {NULL, 0}
		};
		char	   *m = text_to_cstring(PG_GETARG_TEXT_PP(17));

		params->method = (GdlIlpMethod)
			gpudl_keyword(m, methods, "invalid method \"%s\"",
						  "Use 'auto', 'bulk' (noisy-or training) or 'refine' (refinement search).");
	}
}

/* NOTICEs of a run: what the learner left out, and a time budget that ran out. */
static void
learn_notices(const GdlIlpResult *res)
{
	for (int i = 0; i < res->nnotes; i++)
		ereport(NOTICE, (errmsg("gpudl_learn leaves out %s", res->notes[i])));
	if (res->timed_out)
		ereport(NOTICE,
				(errmsg("gpudl_learn: max_seconds ran out; the result is the best program found so far"),
				 errhint("Raise max_seconds for a fuller search.")));
}

/* Commit the learned program (invented predicates first) into the program. */
static void
commit_rules(const char *program, const GdlIlpResult *res)
{
	StringInfoData src;
	int			i;

	initStringInfo(&src);
	for (i = 0; i < res->nrules; i++)
		if (res->rules[i].aux)
			appendStringInfo(&src, "%s\n", res->rules[i].aux);
	for (i = 0; i < res->nrules; i++)
		appendStringInfo(&src, "%s\n", res->rules[i].rule);
	if (res->nrules > 0)
		(void) gpudl_insert_rules_text(program, src.data, true);
}

/*
 * The first four arguments of gpudl_learn and gpudl_loss_grad: the program,
 * the target and the positives must be given; negatives NULL leaves them to
 * the learner.
 */
static void
example_args(FunctionCallInfo fcinfo, char **program, char **target, char **positives,
			 char **negatives)
{
	*program = gpudl_text_arg(fcinfo, 0, "program name");
	*target = gpudl_text_arg(fcinfo, 1, "target");
	*positives = gpudl_text_arg(fcinfo, 2, "positives");
	*negatives = PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3));
}

/*
 * gpudl_learn(program, target, positives, negatives, max_body, max_rules,
 * epochs, learning_rate, allow_recursive, min_support, seed, commit,
 * negative_sampling [0.2], max_seconds, noise, types, max_vars, method [0.3])
 */
Datum
gpudl_learn(PG_FUNCTION_ARGS)
{
	char	   *program,
			   *target,
			   *positives,
			   *negatives;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GdlIlpParams params;
	bool		commit;
	MemoryContext percall;
	MemoryContext old;
	GpudlLearnSetup *ls;
	GdlIlpEvalHook hook;
	GdlIlpResult *res;
	volatile int64 run_id = 0;
	int64		row_id;
	bool		autonomous = false;
	int			token;
	char	   *pjson;
	char	   *types;
	int			i;

	example_args(fcinfo, &program, &target, &positives, &negatives);
	gdl_ilp_params_default(&params);
	params.max_body = gpudl_int_arg(fcinfo, 4, "max_body");
	params.max_rules = gpudl_int_arg(fcinfo, 5, "max_rules");
	params.epochs = gpudl_int_arg(fcinfo, 6, "epochs");
	if (PG_ARGISNULL(7))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("learning_rate must not be null")));
	params.learning_rate = PG_GETARG_FLOAT8(7);
	params.allow_recursive = PG_ARGISNULL(8) ? false : PG_GETARG_BOOL(8);
	params.min_support = gpudl_int_arg(fcinfo, 9, "min_support");
	params.seed = PG_ARGISNULL(10) ? 0 : PG_GETARG_INT32(10);
	commit = PG_ARGISNULL(11) ? false : PG_GETARG_BOOL(11);
	/* an addition to the contract: how negatives are drawn when none are given */
	if (PG_NARGS() > 12 && !PG_ARGISNULL(12))
	{
		static const GpudlKeyword modes[] = {
			{"pca", GDL_ILP_NEG_PCA}, {"closed_world", GDL_ILP_NEG_CLOSED}, {NULL, 0}
		};
		char	   *mode = text_to_cstring(PG_GETARG_TEXT_PP(12));

		params.neg_mode = (GdlIlpNegMode)
			gpudl_keyword(mode, modes, "invalid negative_sampling \"%s\"",
						  "Use 'pca' (partial completeness) or 'closed_world'.");
	}
	learn_03_args(fcinfo, &params, &types);
	/*
	 * A refusal changes nothing, so it comes before the run is recorded; a
	 * missing program is a failed run (recorded) as before.
	 */
	(void) gpudl_program_version(program, commit ? GPUDL_PRIV_MODIFY : GPUDL_PRIV_USE, true, NULL);
	InitMaterializedSRF(fcinfo, 0);
	gpudl_memory_reset();
	percall = AllocSetContextCreate(CurrentMemoryContext, "gpudl learn", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(percall);
	pjson = params_json(positives, negatives, &params, commit, types);
	PG_TRY();
	{
		require(params.max_body >= 1 && params.max_body <= GDL_ILP_MAX_BODY,
				"max_body must be between 1 and 8", params.max_body);
		require(params.max_rules >= 1, "max_rules must be at least 1", params.max_rules);
		require(params.epochs >= 0, "epochs must not be negative", params.epochs);
		require(params.min_support >= 1, "min_support must be at least 1", params.min_support);
		if (!(params.learning_rate > 0) || isinf(params.learning_rate))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("learning_rate must be a positive number, got %g", params.learning_rate)));
		gpudl_require_program(program, GPUDL_PRIV_USE);
		row_id = gpudl_learn_run_start(program, target, pjson, &autonomous);
		if (autonomous)
			run_id = row_id;	/* the error path closes it (else it rolls back) */
		token = gpudl_progress_begin("learn", program, target);
		ls = gpudl_learn_setup(program, target, 0, positives, negatives);
		if (types != NULL)
			gpudl_learn_apply_types(ls, types);
		if (params.max_seconds > 0)
			ls->deadline_ms = gdl_now_ms() + params.max_seconds * 1000.0;
		hook = gpudl_learn_eval_hook(ls);
		gpudl_progress_device(gpudl_ilp_device_setup() ? "gpu" : "cpu");
		gdl_ilp_set_progress(gpudl_progress_ilp, NULL);
		res = gdl_ilp_learn(&ls->prob, &params, &hook);
		gpudl_progress_phase("recording");
		learn_notices(res);
		if (commit)
			commit_rules(program, res);
		finish_run(row_id, res, commit, PG_NARGS() > 13);
		gpudl_progress_end(token);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		/* keep the failure in gpudl.learn_runs beyond this transaction */
		MemoryContextSwitchTo(old);
		edata = CopyErrorData();
		gpudl_record_failed_run(run_id, program, target, pjson, edata->message);
		PG_RE_THROW();
	}
	PG_END_TRY();

	for (i = 0; i < res->nrules; i++)
	{
		const GdlIlpRule *r = &res->rules[i];
		Datum		v[10];
		bool		nulls[10] = {0};

		rule_values(r, v);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(percall);
	return (Datum) 0;
}

/* gpudl_candidates(program, target, arity, max_body, allow_recursive) */
Datum
gpudl_candidates(PG_FUNCTION_ARGS)
{
	char	   *program = gpudl_text_arg(fcinfo, 0, "program name");
	char	   *target = gpudl_text_arg(fcinfo, 1, "target");
	int32		arity = gpudl_int_arg(fcinfo, 2, "arity");
	int32		max_body = gpudl_int_arg(fcinfo, 3, "max_body");
	bool		allow_recursive = PG_ARGISNULL(4) ? false : PG_GETARG_BOOL(4);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GpudlLearnSetup *ls;
	GdlIlpCandidateList *cl;
	int			i;

	require(arity >= 1 && arity <= 2, "arity must be 1 or 2", arity);
	require(max_body >= 1 && max_body <= 3, "max_body must be between 1 and 3", max_body);
	gpudl_require_program(program, GPUDL_PRIV_USE);
	InitMaterializedSRF(fcinfo, 0);
	gpudl_memory_reset();
	ls = gpudl_learn_setup(program, target, arity, NULL, NULL);
	cl = gdl_ilp_candidates(&ls->prob, max_body, allow_recursive);
	for (i = 0; i < cl->n; i++)
	{
		Datum		v[3];
		bool		nulls[3] = {0};

		v[0] = Int32GetDatum(cl->items[i].id);
		v[1] = CStringGetTextDatum(cl->items[i].rule);
		v[2] = CStringGetTextDatum(cl->items[i].template);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	}
	return (Datum) 0;
}

/*
 * gpudl_loss_grad(program, target, positives, negatives, probabilities):
 * the noisy-or loss of gpudl_candidates(program, target, arity, 2, false)
 * at the given probabilities, and its gradient.
 */
Datum
gpudl_loss_grad(PG_FUNCTION_ARGS)
{
	char	   *program,
			   *target,
			   *positives,
			   *negatives;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *enulls;
	int			n,
				i;
	double	   *probs,
			   *grad;
	Datum	   *gd;
	double		loss;
	GpudlLearnSetup *ls;
	Datum		v[2];
	bool		nulls[2] = {0};

	example_args(fcinfo, &program, &target, &positives, &negatives);
	if (PG_ARGISNULL(4))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("probabilities must not be null")));
	arr = PG_GETARG_ARRAYTYPE_P(4);
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("probabilities must be a one-dimensional array")));
	deconstruct_array(arr, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &enulls, &n);
	probs = palloc(sizeof(double) * (n + 1));
	grad = palloc0(sizeof(double) * (n + 1));
	for (i = 0; i < n; i++)
	{
		if (enulls[i])
			ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
							errmsg("probability %d is null", i + 1)));
		probs[i] = DatumGetFloat8(elems[i]);
		if (!(probs[i] >= 0.0 && probs[i] <= 1.0))
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("probability %d is %g, outside [0, 1]", i + 1, probs[i])));
	}
	gpudl_require_program(program, GPUDL_PRIV_USE);
	InitMaterializedSRF(fcinfo, 0);
	gpudl_memory_reset();
	ls = gpudl_learn_setup(program, target, 0, positives, negatives);
	loss = gdl_ilp_loss_grad(&ls->prob, 2, false, 0, probs, n, grad);
	gd = palloc(sizeof(Datum) * (n + 1));
	for (i = 0; i < n; i++)
		gd[i] = Float8GetDatum(grad[i]);
	v[0] = Float8GetDatum(loss);
	v[1] = PointerGetDatum(construct_array(gd, n, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	return (Datum) 0;
}
