/*
 * pg_io.c — tables into engine columns and engine values back into Datums,
 * and a result's rows appended to a target table (gpudl_materialize and the
 * maintained tables of src/maint).
 *
 * Tables are read through SPI with the caller's rights, so a rule never
 * reads a table (or row, under row-level security) the caller may not:
 * PostgreSQL itself raises 42501.  Text is dictionary-encoded to 32-bit ids
 * as it is read (pg_types.c says which column types are read, and as what).
 * Rows with a NULL in a read column are skipped: NULL never equals
 * anything, so such a row could never take part in a derivation.  A column
 * of a type gpudl does not read is loaded as a placeholder: the analysis
 * (and the goal, learn and mining checks) let only _ stand for it.
 */
#include "pg/gpudl_run.h"

#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/portal.h"
#include "utils/rel.h"

#define FETCH_BATCH 20000

/*
 * The engine's loader: read the columns of a predicate's table into
 * gdl_alloc'ed arrays in the caller's memory context.
 */
void
gpudl_load_edb(void *arg, const GdlPred *pred, GdlDict *dict, GdlColumns *out)
{
	MemoryContext caller = CurrentMemoryContext;
	StringInfoData sql;
	SPIPlanPtr	plan;
	Portal		portal;
	size_t		cap = 1024;
	size_t		n = 0;
	int			ncols = pred->arity;
	int			c;
	GpudlReader *readers;

	/* a table pinned with gpudl_load, current and readable: no SPI */
	if (arg != NULL && gpudl_cache_read(pred, dict, out))
		return;

	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT ");
	for (c = 0; c < ncols; c++)
		appendStringInfo(&sql, "%s%s", c ? ", " : "", quote_identifier(pred->rel.colnames[c]));
	if (ncols == 0)
		appendStringInfoString(&sql, "1");
	appendStringInfo(&sql, " FROM %s", pred->rel.display_name);

	out->ncols = ncols;
	out->cols = gdl_alloc(sizeof(int64_t *) * (ncols + 1));
	for (c = 0; c < ncols; c++)
		out->cols[c] = gdl_alloc(sizeof(int64_t) * cap);

	SPI_connect();
	plan = SPI_prepare(sql.data, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "gpudl: could not prepare \"%s\": %s", sql.data,
			 SPI_result_code_string(SPI_result));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	/* one reader per column, from the cursor's own types */
	readers = MemoryContextAlloc(caller, sizeof(GpudlReader) * (ncols + 1));
	for (c = 0; c < ncols; c++)
		gpudl_reader_init(&readers[c], TupleDescAttr(portal->tupDesc, c)->atttypid);
	for (;;)
	{
		uint64		i;
		TupleDesc	desc;

		SPI_cursor_fetch(portal, true, FETCH_BATCH);
		if (SPI_processed == 0)
			break;
		desc = SPI_tuptable->tupdesc;
		MemoryContextSwitchTo(caller);
		if (n + SPI_processed > cap)
		{
			while (n + SPI_processed > cap)
				cap *= 2;
			for (c = 0; c < ncols; c++)
				out->cols[c] = gdl_realloc(out->cols[c], sizeof(int64_t) * cap);
		}
		for (i = 0; i < SPI_processed; i++)
		{
			HeapTuple	tup = SPI_tuptable->vals[i];
			bool		has_null = false;

			for (c = 0; c < ncols && !has_null; c++)
			{
				bool		isnull;
				Datum		d = SPI_getbinval(tup, desc, c + 1, &isnull);

				if (isnull)
					has_null = true;
				else if (readers[c].kind == GPUDL_VK_NONE)
					out->cols[c][n] = 1;	/* a placeholder: analysis allows only _ here */
				else
					out->cols[c][n] = gpudl_reader_value(&readers[c], d, dict);
			}
			if (!has_null)
				n++;
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	SPI_finish();
	out->nrows = n;
	gpudl_counters.rows_loaded += n;
}

/*
 * The column definition list of gpudl_query (or its custom scan) must match
 * the goal predicate, column by column.
 */
void
gpudl_check_result_desc(TupleDesc desc, const GpudlRun *run, const char *goal_text)
{
	const GdlAnalysis *a = gdl_plan_analysis(run->plan);
	const GdlPred *p = &a->preds[run->goal->pred];
	int			i;

	if (desc->natts != p->arity)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the column definition list has %d columns but goal \"%s\" has %d",
						desc->natts, goal_text, p->arity),
				 errhint("Write one column per argument: AS t(%s).",
						 p->arity == 2 ? "a type, b type" : "...")));
	for (i = 0; i < p->arity; i++)
	{
		Oid			typid = TupleDescAttr(desc, i)->atttypid;

		/* a table's column gpudl does not read (under _ in the goal) cannot be returned */
		if (p->types[i] == GDL_TYPE_UNKNOWN)
		{
			if (p->is_edb && p->rel.types != NULL && i < p->rel.ncols)
				gpudl_report_unreadable(ERROR, p, i, "returned by the goal");
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("argument %d of \"%s\" has no type gpudl can return", i + 1, p->name)));
		}
		if (!gpudl_type_compatible(p->types[i], typid))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of the column definition list has type %s but argument %d of \"%s\" is %s",
							i + 1, format_type_be(typid), i + 1, p->name,
							gdl_type_name(p->types[i])),
					 errhint("Declare the column as %s.",
							 format_type_be(gpudl_type_oid(p->types[i])))));
	}
}

/*
 * The rows of one predicate for learning and mining: its table (read with
 * the caller's rights), or, for a derived predicate, the engine's answer on
 * the CPU.  *plan is compiled from the analysis on first need and kept by
 * the caller, so several derived predicates share one plan.
 */
void
gpudl_predicate_rows(GdlAnalysis *analysis, GdlPlan **plan, GdlDict *dict,
					 const GdlPred *p, GdlColumns *out)
{
	if (p->is_edb)
		gpudl_load_edb(NULL, p, dict, out);
	else
	{
		GdlRunInput in;
		GdlGoal		goal;
		GdlResult  *r;

		memset(&in, 0, sizeof(in));
		memset(&goal, 0, sizeof(goal));
		in.load_edb = gpudl_load_edb;
		in.device = GDL_DEVICE_CPU;
		in.max_iterations = gpudl_max_iterations;
		in.want_rows = true;
		in.progress = gpudl_progress_engine;
		goal.pred = p->id;
		if (*plan == NULL)
			*plan = gdl_plan_compile(analysis);
		r = gdl_run(*plan, &in, dict, &goal);
		*out = r->rows;
	}
}

/*
 * Append rows with table_multi_insert when the table is a plain heap
 * without indexes or triggers, else through the executor (SPI INSERT).
 */
void
gpudl_target_insert_rows(Oid relid, GpudlRun *run)
{
	Relation	rel = table_open(relid, RowExclusiveLock);
	TupleDesc	desc = RelationGetDescr(rel);
	GdlResult  *res = run->result;
	size_t		r;
	int			c;
	bool		fast;

	if (desc->natts != res->rows.ncols)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("table \"%s\" has %d columns but the predicate has %d",
						RelationGetRelationName(rel), desc->natts, res->rows.ncols)));
	for (c = 0; c < desc->natts; c++)
		if (TupleDescAttr(desc, c)->attisdropped ||
			!gpudl_type_compatible(res->types[c], TupleDescAttr(desc, c)->atttypid))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of table \"%s\" has type %s but the predicate's argument is %s",
							c + 1, RelationGetRelationName(rel),
							format_type_be(TupleDescAttr(desc, c)->atttypid),
							gdl_type_name(res->types[c]))));
	if (pg_class_aclcheck(relid, GetUserId(), ACL_INSERT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", RelationGetRelationName(rel))));

	fast = rel->rd_rel->relkind == RELKIND_RELATION && !rel->rd_rel->relhasindex &&
		rel->trigdesc == NULL && !rel->rd_rel->relrowsecurity &&
		(desc->constr == NULL || (desc->constr->num_check == 0 && !desc->constr->has_not_null));
	if (fast)
	{
		const int	batch = 1000;
		TupleTableSlot **slots = palloc(sizeof(TupleTableSlot *) * batch);
		BulkInsertState bistate = GetBulkInsertState();
		CommandId	cid = GetCurrentCommandId(true);
		MemoryContext rowcxt = AllocSetContextCreate(CurrentMemoryContext, "gpudl rows",
													 ALLOCSET_DEFAULT_SIZES);
		int			k;

		for (k = 0; k < batch; k++)
			slots[k] = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
		for (r = 0; r < res->rows.nrows;)
		{
			MemoryContext old = MemoryContextSwitchTo(rowcxt);
			int			m = 0;

			for (; m < batch && r < res->rows.nrows; m++, r++)
			{
				TupleTableSlot *s = slots[m];

				ExecClearTuple(s);
				for (c = 0; c < desc->natts; c++)
				{
					s->tts_values[c] = gpudl_value_to_datum(res->rows.cols[c][r], res->types[c],
															TupleDescAttr(desc, c)->atttypid,
															run->dict);
					s->tts_isnull[c] = false;
				}
				ExecStoreVirtualTuple(s);
			}
			table_multi_insert(rel, slots, m, cid, 0, bistate);
			MemoryContextSwitchTo(old);
			MemoryContextReset(rowcxt);
			CHECK_FOR_INTERRUPTS();
		}
		FreeBulkInsertState(bistate);
		for (k = 0; k < batch; k++)
			ExecDropSingleTupleTableSlot(slots[k]);
		MemoryContextDelete(rowcxt);
	}
	else
	{
		StringInfoData sql;
		Oid		   *argtypes = palloc(sizeof(Oid) * (desc->natts + 1));
		Datum	   *values = palloc(sizeof(Datum) * (desc->natts + 1));
		SPIPlanPtr	plan;

		initStringInfo(&sql);
		appendStringInfo(&sql, "INSERT INTO %s VALUES (",
						 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
													RelationGetRelationName(rel)));
		for (c = 0; c < desc->natts; c++)
		{
			argtypes[c] = TupleDescAttr(desc, c)->atttypid;
			appendStringInfo(&sql, "%s$%d", c ? ", " : "", c + 1);
		}
		appendStringInfoChar(&sql, ')');
		SPI_connect();
		plan = SPI_prepare(sql.data, desc->natts, argtypes);
		for (r = 0; r < res->rows.nrows; r++)
		{
			for (c = 0; c < desc->natts; c++)
				values[c] = gpudl_value_to_datum(res->rows.cols[c][r], res->types[c],
												 argtypes[c], run->dict);
			if (SPI_execute_plan(plan, values, NULL, false, 0) != SPI_OK_INSERT)
				elog(ERROR, "gpudl: insert into the target failed");
			if ((r & 0x3FF) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		SPI_finish();
	}
	table_close(rel, NoLock);
}
