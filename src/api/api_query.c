/*
 * api_query.c — answers back in SQL: gpudl_query (rows), gpudl_count (a
 * number; no tuple leaves the engine) and gpudl_materialize (rows written
 * into a table, created with the inferred column types when missing).
 */
#include "pg/gpudl_run.h"
#include "maint/gpudl_maint.h"

#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/catalog.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/regproc.h"
#include "utils/varlena.h"

PG_FUNCTION_INFO_V1(gpudl_query);
PG_FUNCTION_INFO_V1(gpudl_count);
PG_FUNCTION_INFO_V1(gpudl_materialize);

/*
 * gpudl_query(program, goal) RETURNS SETOF record: every answer of the goal,
 * typed by the caller's column definition list.
 */
Datum
gpudl_query(PG_FUNCTION_ARGS)
{
	char	   *program = gpudl_text_arg(fcinfo, 0, "program name");
	char	   *goal_text = gpudl_text_arg(fcinfo, 1, "goal");
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext percall;
	MemoryContext old;
	GpudlRun   *run;
	TupleDesc	desc;
	Datum	   *values;
	bool	   *nulls;
	size_t		r;
	int			c;
	int			token;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);	/* a copy: rescans call again */
	gpudl_memory_reset();
	desc = rsinfo->setDesc;
	percall = AllocSetContextCreate(CurrentMemoryContext, "gpudl query", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(percall);
	token = gpudl_progress_begin("query", program, goal_text);
	run = gpudl_run_goal(program, goal_text, true);
	gpudl_check_result_desc(desc, run, goal_text);
	gpudl_progress_phase("returning");

	values = palloc(sizeof(Datum) * (desc->natts + 1));
	nulls = palloc0(sizeof(bool) * (desc->natts + 1));
	for (r = 0; r < run->result->rows.nrows; r++)
	{
		for (c = 0; c < desc->natts; c++)
			values[c] = gpudl_value_to_datum(run->result->rows.cols[c][r], run->result->types[c],
											 TupleDescAttr(desc, c)->atttypid, run->dict);
		tuplestore_putvalues(rsinfo->setResult, desc, values, nulls);
		if ((r & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	gpudl_progress_end(token);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(percall);
	return (Datum) 0;
}

/* gpudl_count(program, goal) RETURNS bigint: answers counted in the engine. */
Datum
gpudl_count(PG_FUNCTION_ARGS)
{
	char	   *program = gpudl_text_arg(fcinfo, 0, "program name");
	char	   *goal_text = gpudl_text_arg(fcinfo, 1, "goal");
	MemoryContext percall = AllocSetContextCreate(CurrentMemoryContext, "gpudl count",
												  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(percall);
	int64		count;
	int			token;

	gpudl_memory_reset();
	token = gpudl_progress_begin("count", program, goal_text);
	count = gpudl_run_goal(program, goal_text, false)->result->count;
	gpudl_progress_end(token);

	MemoryContextSwitchTo(old);
	MemoryContextDelete(percall);
	PG_RETURN_INT64(count);
}

/* Create the target table with one column per argument of the predicate. */
void
gpudl_target_create(const char *target, const GdlPred *p)
{
	StringInfoData sql;
	int			i;

	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TABLE %s (", target);
	for (i = 0; i < p->arity; i++)
	{
		const char *col = (p->decl && p->decl->argnames && p->decl->argnames[i])
			? p->decl->argnames[i] : psprintf("c%d", i + 1);

		appendStringInfo(&sql, "%s%s %s", i ? ", " : "", quote_identifier(col),
						 format_type_be(gpudl_type_oid(p->types[i])));
	}
	appendStringInfoString(&sql, ")");
	SPI_connect();
	if (SPI_execute(sql.data, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "gpudl: could not create \"%s\"", target);
	SPI_finish();
}

/* Empty the target for mode 'replace' (DELETE: works with the INSERT-style rights). */
void
gpudl_target_empty(Oid relid)
{
	SPI_connect();
	if (SPI_execute(psprintf("DELETE FROM %s", quote_qualified_identifier(
								 get_namespace_name(get_rel_namespace(relid)),
								 get_rel_name(relid))), false, 0) != SPI_OK_DELETE)
		elog(ERROR, "gpudl: could not empty the target table");
	SPI_finish();
}

/*
 * gpudl_materialize(program, predicate, target, mode): write the derived
 * relation into a table; returns the number of rows written.
 */
Datum
gpudl_materialize(PG_FUNCTION_ARGS)
{
	char	   *program = gpudl_text_arg(fcinfo, 0, "program name");
	char	   *predicate = gpudl_text_arg(fcinfo, 1, "predicate");
	char	   *target = gpudl_text_arg(fcinfo, 2, "target");
	char	   *mode = PG_ARGISNULL(3) ? "replace" : text_to_cstring(PG_GETARG_TEXT_PP(3));
	bool		replace;
	bool		maintain = false;
	MemoryContext percall;
	MemoryContext old;
	GpudlRun   *run;
	GdlPlan    *plan;
	const GdlAnalysis *a;
	int			p;
	bool		hit;
	int64		version;
	StringInfoData goal;
	RangeVar   *rv;
	Oid			relid;
	int64		written;
	int			i;
	int			token;

	if (strcmp(mode, "replace") == 0)
		replace = true;
	else if (strcmp(mode, "append") == 0)
		replace = false;
	else if (strcmp(mode, "maintain") == 0)
	{
		replace = maintain = true;
		gpudl_maint_require_catalog();
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid mode \"%s\"", mode),
				 errhint("Use 'replace', 'append' or 'maintain'.")));

	gpudl_memory_reset();
	percall = AllocSetContextCreate(CurrentMemoryContext, "gpudl materialize", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(percall);
	token = gpudl_progress_begin("materialize", program, predicate);
	gpudl_install_host();
	plan = gpudl_plan_acquire(program, &hit, &version);
	a = gdl_plan_analysis(plan);
	p = gdl_analysis_find_pred(a, predicate);
	if (p < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("predicate \"%s\" does not occur in program \"%s\"", predicate, program)));
	initStringInfo(&goal);
	appendStringInfo(&goal, "%s(", gdl_pred_name_quote(predicate));
	for (i = 0; i < a->preds[p].arity; i++)
		appendStringInfo(&goal, "%sV%d", i ? ", " : "", i);
	appendStringInfoChar(&goal, ')');

	rv = makeRangeVarFromNameList(textToQualifiedNameList(cstring_to_text(target)));
	relid = RangeVarGetRelid(rv, NoLock, true);
	/* never a system catalog, whoever calls (a superuser's DELETE would empty pg_class) */
	if (OidIsValid(relid) &&
		(IsCatalogRelationOid(relid) || get_rel_namespace(relid) == PG_CATALOG_NAMESPACE ||
		 IsToastNamespace(get_rel_namespace(relid))))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot materialize into system catalog \"%s\"", get_rel_name(relid)),
				 errhint("Name a table of your own, or a new one to create.")));
	run = gpudl_run_goal(program, goal.data, true);
	gpudl_progress_phase("writing");
	if (OidIsValid(relid))
		gpudl_maint_stop(relid);	/* a maintained target is written anew, or by hand from now on */
	if (!OidIsValid(relid))
	{
		gpudl_target_create(quote_qualified_identifier(rv->schemaname, rv->relname), &a->preds[p]);
		relid = RangeVarGetRelid(rv, NoLock, false);
		CommandCounterIncrement();
	}
	else if (replace)
		gpudl_target_empty(relid);
	gpudl_target_insert_rows(relid, run);
	written = (int64) run->result->rows.nrows;
	if (maintain)
	{
		CommandCounterIncrement();
		written = gpudl_maint_setup(program, predicate, relid);
	}
	gpudl_progress_end(token);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(percall);
	PG_RETURN_INT64(written);
}
