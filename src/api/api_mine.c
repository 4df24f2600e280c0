/*
 * api_mine.c — gpudl_mine: every closed, connected rule of up to three
 * body atoms over a program's knowledge graph (its binary predicates of one
 * type), with constants when asked, with exact support, head coverage,
 * standard and PCA confidence;
 * optionally stored in gpudl.mined_rules for gpudl_predict.
 */
#include "pg/gpudl_kg.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(gpudl_mine);

/* The first key of the advisory lock that serialises commits of mined rules ("gdlm"). */
#define GPUDL_MINED_RULES_LOCK 1734634605

/*
 * The call's thresholds as jsonb text, for gpudl.mined_rules.params; with
 * max_seconds, whether it ran out and the levels completed (gdl_mine.h).
 */
static char *
params_json(const GpudlMineArgs *a, const GdlMineResult *res)
{
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfo(&s, "{\"max_body\": %d, \"min_head_coverage\": %.17g, \"min_confidence\": %.17g, "
					 "\"min_support\": %lld, \"constants\": %s, \"device\": \"%s\"",
					 a->max_body, a->min_head_coverage, a->min_confidence,
					 (long long) a->min_support, a->constants ? "true" : "false",
					 res->device == GDL_DEVICE_GPU ? "gpu" : "cpu");
	if (a->constants)
		appendStringInfo(&s, ", \"max_body_constants\": %d, \"constants_min_head_coverage\": %.17g",
						 a->max_body_constants > 0 ? a->max_body_constants : Min(a->max_body, 2),
						 a->constants_min_head_coverage < 0 ? a->min_head_coverage
						 : a->constants_min_head_coverage);
	if (a->max_seconds > 0)
		appendStringInfo(&s, ", \"max_seconds\": %.17g, \"timed_out\": %s, \"complete_body\": %d, "
						 "\"complete_body_constants\": %d",
						 a->max_seconds, res->timed_out ? "true" : "false", res->complete_body,
						 res->complete_body_constants);
	appendStringInfoChar(&s, '}');
	return s.data;
}

/*
 * The arguments gpudl_mine gained in 0.5 (a 0.4 catalog's function has
 * eight): max_body_constants, constants_min_head_coverage, max_seconds;
 * NULL is each one's default.
 */
static void
mine_args_05(FunctionCallInfo fcinfo, GpudlMineArgs *a)
{
	if (PG_NARGS() <= 8)
		return;
	if (!PG_ARGISNULL(8))
	{
		int			b = PG_GETARG_INT32(8);

		if (b < 1 || b > 2)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_body_constants must be 1 or 2, got %d", b),
					 errhint("Rules with constants have one or two body atoms; NULL means min(max_body, 2).")));
		a->max_body_constants = b;
	}
	if (!PG_ARGISNULL(9))
	{
		double		hc = PG_GETARG_FLOAT8(9);

		if (!(hc >= 0 && hc <= 1))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("constants_min_head_coverage must be between 0 and 1, got %g", hc),
					 errhint("NULL uses min_head_coverage; 0 bounds rules with constants by min_support and the confidences only.")));
		a->constants_min_head_coverage = hc;
	}
	if (!PG_ARGISNULL(10))
	{
		a->max_seconds = PG_GETARG_FLOAT8(10);
		if (!(a->max_seconds > 0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_seconds must be positive, got %g", a->max_seconds),
					 errhint("NULL mines without a time budget.")));
	}
}

/*
 * The eight columns of a mined rule (its text given), as gpudl_mine returns
 * them and gpudl.mined_rules keeps them (after the program): target, rule,
 * support, head_coverage, std_confidence, pca_confidence, body_size,
 * pca_body_size.
 */
static void
rule_values(const GpudlKg *kg, const GdlMineRule *r, const char *text, Datum *v)
{
	v[0] = CStringGetTextDatum(gdl_mine_graph_relname(kg->graph, r->head));
	v[1] = CStringGetTextDatum(text);
	v[2] = Int64GetDatum(r->support);
	v[3] = Float8GetDatum(r->head_coverage);
	v[4] = Float8GetDatum(r->std_confidence);
	v[5] = Float8GetDatum(r->pca_confidence);
	v[6] = Int64GetDatum(r->body_size);
	v[7] = Int64GetDatum(r->pca_body_size);
}

/*
 * Replace the stored rules of the mined targets (target, or every relation
 * of the graph) with the run's rules, in the caller's transaction.
 */
static void
commit_rules(GpudlKg *kg, const char *target, const GdlMineResult *res, char **texts,
			 const char *params)
{
	Oid			dtypes[2] = {TEXTOID, TEXTARRAYOID};
	Datum		dv[2];
	Datum	   *names;
	Datum		params_jsonb;
	int			nnames = 0;
	GpudlMinedStore *store;
	int64		i;
	int			g;

	names = palloc(sizeof(Datum) * (gdl_mine_graph_nrels(kg->graph) + 1));
	for (g = 0; g < gdl_mine_graph_nrels(kg->graph); g++)
		if (target == NULL || strcmp(target, gdl_mine_graph_relname(kg->graph, g)) == 0)
			names[nnames++] = CStringGetTextDatum(gdl_mine_graph_relname(kg->graph, g));
	dv[0] = CStringGetTextDatum(kg->program);
	dv[1] = PointerGetDatum(construct_array(names, nnames, TEXTOID, -1, false, TYPALIGN_INT));
	params_jsonb = DirectFunctionCall1(jsonb_in, CStringGetDatum(params));

	gpudl_catalog_write_depth++;
	PG_TRY();
	{
		SPI_connect();

		/*
		 * Committers of one program take turns: without the lock, two
		 * sessions' DELETEs would each miss the other's new rows (invisible
		 * to a snapshot taken before that commit) and the table would end
		 * with both runs' rules.  Held to the end of the transaction; the
		 * DELETE after it takes a fresh snapshot (READ COMMITTED) and sees
		 * the rules of any committer that went first.
		 */
		if (SPI_execute_with_args("SELECT pg_catalog.pg_advisory_xact_lock(" CppAsString2(GPUDL_MINED_RULES_LOCK)
								  ", pg_catalog.hashtext($1))", 1, dtypes, dv, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "gpudl: could not lock the mined rules");
		/* the DELETE statement counts the change (even of no row), the INSERTs do not */
		if (SPI_execute_with_args("DELETE FROM gpudl.mined_rules WHERE program = $1 AND target = ANY($2)",
								  2, dtypes, dv, NULL, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "gpudl: could not replace the mined rules");
		gpudl_change_count_paused = true;
		store = gpudl_mined_store_begin(kg->program, params_jsonb);
		for (i = 0; i < res->nrules; i++)
			gpudl_mined_store_add(store, gdl_mine_graph_relname(kg->graph, res->rules[i].head),
								  texts[i], &res->rules[i]);
		gpudl_mined_store_end(store);
		gpudl_change_count_paused = false;
		SPI_finish();
	}
	PG_FINALLY();
	{
		gpudl_change_count_paused = false;
		gpudl_catalog_write_depth--;
	}
	PG_END_TRY();
}

/*
 * gpudl_mine(program, target, max_body, min_head_coverage, min_confidence,
 * min_support, commit, constants, max_body_constants,
 * constants_min_head_coverage, max_seconds)
 */
Datum
gpudl_mine(PG_FUNCTION_ARGS)
{
	char	   *program = gpudl_text_arg(fcinfo, 0, "program name");
	char	   *target = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GpudlMineArgs args;
	bool		commit;
	MemoryContext percall;
	MemoryContext old;
	GpudlKg    *kg;
	GdlMineResult *res;
	char	  **texts;
	int			token;
	int64		i;
	double		t_start,
				t_graph,
				t_mined,
				t_texts,
				t_stored = 0;

	gpudl_mine_args_init(&args);
	args.max_body = gpudl_int_arg(fcinfo, 2, "max_body");
	if (PG_ARGISNULL(3) || PG_ARGISNULL(4) || PG_ARGISNULL(5))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("min_head_coverage, min_confidence and min_support must not be null")));
	args.min_head_coverage = PG_GETARG_FLOAT8(3);
	args.min_confidence = PG_GETARG_FLOAT8(4);
	args.min_support = PG_GETARG_INT64(5);
	commit = PG_ARGISNULL(6) ? false : PG_GETARG_BOOL(6);
	/* 0.4's constants (a 0.3 catalog's gpudl_mine has seven arguments) */
	args.constants = false;
	if (PG_NARGS() > 7)
	{
		if (PG_ARGISNULL(7))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("constants must not be null"),
					 errhint("Pass true for rules with constants, false (the default) for rules over variables only.")));
		args.constants = PG_GETARG_BOOL(7);
	}
	mine_args_05(fcinfo, &args);
	gpudl_mine_args_check(&args);
	/* refusals first: a failed call changes nothing */
	gpudl_require_program(program, commit ? GPUDL_PRIV_MODIFY : GPUDL_PRIV_USE);

	InitMaterializedSRF(fcinfo, 0);
	gpudl_memory_reset();
	percall = AllocSetContextCreate(CurrentMemoryContext, "gpudl mine", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(percall);
	token = gpudl_progress_begin("mine", program, target ? target : "");
	t_start = gdl_now_ms();
	kg = gpudl_kg_acquire(program, target);
	t_graph = gdl_now_ms();
	res = gpudl_kg_mine(kg, target, &args);
	t_mined = gdl_now_ms();
	if (res->timed_out)
		ereport(NOTICE,
				(errmsg("gpudl_mine: max_seconds ran out; the rules are complete up to %d body atoms "
						"without constants and %d with",
						res->complete_body, res->complete_body_constants),
				 errhint("Raise max_seconds for longer rules; gpudl.mined_rules.params records the levels.")));
	texts = palloc(sizeof(char *) * (res->nrules + 1));
	for (i = 0; i < res->nrules; i++)
	{
		texts[i] = gpudl_kg_rule_text(kg, &res->rules[i]);
		if ((i & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	t_texts = gdl_now_ms();
	if (commit && res->timed_out && res->nrules == 0)
		ereport(NOTICE,
				(errmsg("gpudl_mine: nothing mined within max_seconds; the stored rules stay as they were")));
	else if (commit)
	{
		gpudl_progress_phase("recording");
		commit_rules(kg, target, res, texts, params_json(&args, res));
		t_stored = gdl_now_ms();
		gpudl_kg_seed_rules(kg, target, res, texts);
	}
	/* where a run's time goes (docs/BENCHMARKS.md) */
	elog(DEBUG1, "gpudl_mine: %lld rules; graph %.0f ms, mining %.0f ms, texts %.0f ms, stored %.0f ms, kept %.0f ms",
		 (long long) res->nrules, t_graph - t_start, t_mined - t_graph, t_texts - t_mined,
		 t_stored > 0 ? t_stored - t_texts : 0.0, t_stored > 0 ? gdl_now_ms() - t_stored : 0.0);
	gpudl_progress_end(token);

	for (i = 0; i < res->nrules; i++)
	{
		const GdlMineRule *r = &res->rules[i];
		Datum		v[8];
		bool		nulls[8] = {0};

		rule_values(kg, r, texts[i], v);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	}
	gpudl_kg_release(kg);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(percall);
	return (Datum) 0;
}
