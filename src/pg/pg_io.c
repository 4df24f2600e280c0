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
		SPI_cursor_fetch(portal, true, FETCH_BATCH);
		if (SPI_processed == 0)
			break;
		MemoryContextSwitchTo(caller);
		if (n + SPI_processed > cap)
		{
			while (n + SPI_processed > cap)
				cap *= 2;
			for (c = 0; c < ncols; c++)
				out->cols[c] = gdl_realloc(out->cols[c], sizeof(int64_t) * cap);
		}
		n = gpudl_read_spi_rows(readers, ncols, dict, out->cols, n);
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	SPI_finish();
	out->nrows = n;
	gpudl_counters.rows_loaded += n;
}

/*
 * Read the rows of SPI_tuptable into cols from row n on, one prepared
 * reader a column, and return the new number of rows: table reads
 * (gpudl_load_edb) and examples (pg_examples.c) alike.  A row with a NULL
 * in a read column is skipped (it could never take part in a derivation);
 * a column of a type gpudl does not read gets a placeholder.  The caller
 * has made room for SPI_processed more rows.  Interrupts are checked every
 * 65536 rows.
 */
size_t
gpudl_read_spi_rows(const GpudlReader *readers, int ncols, GdlDict *dict,
					int64_t **cols, size_t n)
{
	TupleDesc	desc = SPI_tuptable->tupdesc;

	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		bool		has_null = false;

		for (int c = 0; c < ncols && !has_null; c++)
		{
			bool		isnull;
			Datum		d = SPI_getbinval(tup, desc, c + 1, &isnull);

			if (isnull)
				has_null = true;
			else if (readers[c].kind == GPUDL_VK_NONE)
				cols[c][n] = 1; /* a placeholder: analysis allows only _ here */
			else
				cols[c][n] = gpudl_reader_value(&readers[c], d, dict);
		}
		if (!has_null)
			n++;
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	return n;
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
 * Evaluate a plan on the CPU for the rows of one goal predicate, its tables
 * read with the caller's rights (gpudl_load_edb) and gpudl.max_iterations
 * as the bound.  The one engine run of learning and mining: a derived
 * predicate's rows (gpudl_predicate_rows) and the learn's fixpoint check
 * (pg_learn_setup.c), which passes its own progress callback.
 */
GdlResult *
gpudl_run_cpu_goal(GdlPlan *plan, GdlDict *dict, int pred,
				   void (*progress) (void *arg, const struct GdlProgress *p))
{
	GdlRunInput in = {
		.load_edb = gpudl_load_edb,
		.device = GDL_DEVICE_CPU,
		.max_iterations = gpudl_max_iterations,
		.want_rows = true,
		.progress = progress,
	};
	GdlGoal		goal = {.pred = pred};

	return gdl_run(plan, &in, dict, &goal);
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
		if (*plan == NULL)
			*plan = gdl_plan_compile(analysis);
		*out = gpudl_run_cpu_goal(*plan, dict, p->id, gpudl_progress_engine)->rows;
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
		int			options = 0;

		/*
		 * A table created (or given a new file) in this subtransaction is
		 * written frozen, as COPY FREEZE does: its pages are all-visible at
		 * once, so index-only scans of it (a maintained target's probes)
		 * need not wait for VACUUM; no other transaction can have seen it.
		 */
		if (rel->rd_createSubid == GetCurrentSubTransactionId() ||
			rel->rd_firstRelfilenodeSubid == GetCurrentSubTransactionId())
			options |= TABLE_INSERT_FROZEN;
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
			table_multi_insert(rel, slots, m, cid, options, bistate);
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
