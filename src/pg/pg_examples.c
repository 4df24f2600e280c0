/*
 * pg_examples.c — labelled examples for rule learning: the result of a SQL
 * query, or all rows of a table given by name, read with the caller's rights
 * into engine columns (text through the run's dictionary).
 */
#include "pg/gpudl_run.h"

#include <ctype.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

/*
 * Is the text a relation name as SQL writes one: parts of letters, digits,
 * _ and $, or "quoted" (any text, "" for a quote: "Child Pos"), joined by
 * '.'?  Anything else is taken as a query.  gpudl_predict and the example
 * tags use the same test.
 */
bool
gpudl_looks_like_relation_name(const char *s)
{
	const char *p = s;

	if (*p == '\0')
		return false;
	for (;;)
	{
		if (*p == '"')
		{
			for (p++;; p++)
			{
				if (*p == '\0')
					return false;
				if (*p == '"' && p[1] == '"')
					p++;
				else if (*p == '"')
					break;
			}
			p++;
		}
		else
		{
			const char *b = p;

			while (isalnum((unsigned char) *p) || *p == '_' || *p == '$' || IS_HIGHBIT_SET(*p))
				p++;
			if (p == b)
				return false;
		}
		if (*p == '\0')
			return true;
		if (*p++ != '.')
			return false;
	}
}

/*
 * Run 'source' (a query, or a table name) and return its rows as columns.
 * *types_out gets the engine type of each column; 'what' names the argument
 * in messages ("positives").  NULL rows are skipped, as in table reads.
 */
GdlColumns *
gpudl_read_examples(const char *source, const char *what, GdlDict *dict, GdlType **types_out)
{
	MemoryContext caller = CurrentMemoryContext;
	GdlColumns *out = palloc0(sizeof(GdlColumns));
	const char *sql;
	int			c,
				ncols;
	TupleDesc	desc;
	GpudlReader *readers;

	if (gpudl_looks_like_relation_name(source))
		sql = psprintf("SELECT * FROM %s", source);
	else
		sql = source;

	SPI_connect();
	if (SPI_execute(sql, true, 0) != SPI_OK_SELECT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a query returning rows, or a table name", what),
				 errdetail("Got: %s", source)));
	desc = SPI_tuptable->tupdesc;
	ncols = desc->natts;
	MemoryContextSwitchTo(caller);
	out->ncols = ncols;
	out->cols = palloc0(sizeof(int64_t *) * (ncols + 1));
	*types_out = palloc0(sizeof(GdlType) * (ncols + 1));
	readers = palloc(sizeof(GpudlReader) * (ncols + 1));
	for (c = 0; c < ncols; c++)
	{
		Oid			typid = TupleDescAttr(desc, c)->atttypid;

		(*types_out)[c] = gpudl_type_from_oid(typid);
		if ((*types_out)[c] == GDL_TYPE_UNKNOWN)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of the %s has unsupported type %s", c + 1, what,
							format_type_be(typid)),
					 errhint("Cast it to int, bigint, text, bool or float8.")));
		out->cols[c] = gdl_alloc(sizeof(int64_t) * (SPI_processed + 1));
		gpudl_reader_init(&readers[c], typid);
	}
	out->nrows = gpudl_read_spi_rows(readers, ncols, dict, out->cols, 0);
	SPI_finish();
	return out;
}
