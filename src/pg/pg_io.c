/*
 * pg_io.c — tables into engine columns and engine values back into Datums.
 *
 * Tables are read through SPI with the caller's rights, so a rule never
 * reads a table (or row, under row-level security) the caller may not:
 * PostgreSQL itself raises 42501.  Text is dictionary-encoded to 32-bit ids
 * as it is read.  Rows with a NULL in a read column are skipped: NULL never
 * equals anything, so such a row could never take part in a derivation.
 */
#include "gpudl_run.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#define FETCH_BATCH 20000

/* Engine value of a non-null Datum of PostgreSQL type typid. */
int64_t
gpudl_datum_to_value(Datum d, Oid typid, GdlDict *dict)
{
	switch (typid)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		case INT8OID:
			return DatumGetInt64(d);
		case BOOLOID:
			return DatumGetBool(d) ? 1 : 0;
		case FLOAT4OID:
		case FLOAT8OID:
			{
				double		f = typid == FLOAT4OID ? DatumGetFloat4(d) : DatumGetFloat8(d);
				int64_t		v;

				memcpy(&v, &f, sizeof(v));
				return v;
			}
		case NAMEOID:
			{
				const char *s = NameStr(*DatumGetName(d));

				return gdl_dict_intern(dict, s, strlen(s));
			}
		default:
			{
				/* text, varchar, bpchar: varlena strings */
				text	   *t;
				Oid			base;

				/* a domain's values are its base type's (issue 15: domains type arguments) */
				if (typid != TEXTOID && typid != VARCHAROID && typid != BPCHAROID &&
					(base = getBaseType(typid)) != typid)
					return gpudl_datum_to_value(d, base, dict);
				t = DatumGetTextPP(d);
				int64_t		id = gdl_dict_intern(dict, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));

				if ((Pointer) t != DatumGetPointer(d))
					pfree(t);
				return id;
			}
	}
}

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
				else
					out->cols[c][n] = gpudl_datum_to_value(d, TupleDescAttr(desc, c)->atttypid, dict);
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

/* The PostgreSQL type an engine type is returned as by default. */
Oid
gpudl_type_oid(GdlType t)
{
	switch (t)
	{
		case GDL_TYPE_INT:
			return INT4OID;
		case GDL_TYPE_BIGINT:
			return INT8OID;
		case GDL_TYPE_TEXT:
			return TEXTOID;
		case GDL_TYPE_BOOL:
			return BOOLOID;
		case GDL_TYPE_FLOAT8:
			return FLOAT8OID;
		case GDL_TYPE_UNKNOWN:
			break;
	}
	return InvalidOid;
}

/* A Datum of type typid (already checked compatible) for an engine value. */
Datum
gpudl_value_to_datum(int64_t v, GdlType t, Oid typid, GdlDict *dict)
{
	switch (t)
	{
		case GDL_TYPE_TEXT:
			{
				size_t		len;
				const char *s = gdl_dict_string(dict, (int32_t) v, &len);

				if (typid == NAMEOID)
				{
					Name		nm = palloc0(NAMEDATALEN);

					memcpy(NameStr(*nm), s, Min(len, NAMEDATALEN - 1));
					return NameGetDatum(nm);
				}
				return PointerGetDatum(cstring_to_text_with_len(s, (int) len));
			}
		case GDL_TYPE_BOOL:
			return BoolGetDatum(v != 0);
		case GDL_TYPE_FLOAT8:
			{
				double		f;

				memcpy(&f, &v, sizeof(f));
				return Float8GetDatum(f);
			}
		default:
			if (typid == INT4OID)
				return Int32GetDatum((int32) v);
			if (typid == INT2OID)
				return Int16GetDatum((int16) v);
			if (typid == FLOAT8OID)
				return Float8GetDatum((double) v);
			if (typid == NUMERICOID)
				return DirectFunctionCall1(int8_numeric, Int64GetDatum(v));
			return Int64GetDatum(v);
	}
}

/* Can an engine column of type t be returned as PostgreSQL type typid? */
bool
gpudl_type_compatible(GdlType t, Oid typid)
{
	switch (t)
	{
		case GDL_TYPE_INT:
			return typid == INT4OID || typid == INT8OID || typid == NUMERICOID;
		case GDL_TYPE_BIGINT:
			return typid == INT8OID || typid == NUMERICOID;
		case GDL_TYPE_TEXT:
			return typid == TEXTOID || typid == VARCHAROID || typid == NAMEOID;
		case GDL_TYPE_BOOL:
			return typid == BOOLOID;
		case GDL_TYPE_FLOAT8:
			return typid == FLOAT8OID;
		case GDL_TYPE_UNKNOWN:
			break;
	}
	return false;
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
