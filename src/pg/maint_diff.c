/*
 * maint_diff.c — make a maintained target equal to a freshly computed
 * relation by changing only the rows that differ.
 *
 * A full recompute (TRUNCATE, a rule edit, gpudl_refresh, targets without
 * incremental rules, changes that reach too much of the table) produces
 * the relation in the engine's columns.  Its rows go into a hash set (a
 * simplehash of row numbers); one scan of the target looks each row up:
 * rows the relation lacks are deleted by ctid, rows of the relation the
 * target lacks are inserted.  Readers never see the table empty, triggers
 * on the target see only the difference, and the cost is a scan of the
 * target rather than anti-joins in SQL.
 */
#include "gpudl_maint.h"
#include "gpudl_run.h"

#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/* The rows the hash set indexes, and the probe row (key PROBE_ROW). */
static const GdlColumns *diff_rows;
static int64_t *diff_probe;

#define PROBE_ROW PG_UINT32_MAX

static inline int64_t
row_value(uint32 row, int c)
{
	return row == PROBE_ROW ? diff_probe[c] : diff_rows->cols[c][row];
}

static inline uint32
row_hash(uint32 row)
{
	uint64		h = 0;
	int			c;

	for (c = 0; c < diff_rows->ncols; c++)
		h = hash_combine64(h, hash_bytes_uint32_extended((uint32) row_value(row, c),
														 (uint64) (row_value(row, c) >> 32)));
	return (uint32) (h ^ (h >> 32));
}

static inline bool
row_equal(uint32 a, uint32 b)
{
	int			c;

	for (c = 0; c < diff_rows->ncols; c++)
		if (row_value(a, c) != row_value(b, c))
			return false;
	return true;
}

typedef struct RowEntry
{
	uint32		row;
	char		status;
	bool		seen;			/* the target holds this row */
} RowEntry;

#define SH_PREFIX rowset
#define SH_ELEMENT_TYPE RowEntry
#define SH_KEY_TYPE uint32
#define SH_KEY row
#define SH_HASH_KEY(tb, key) row_hash(key)
#define SH_EQUAL(tb, a, b) row_equal(a, b)
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/*
 * Make table 'target' (its first arity columns) hold exactly the rows of
 * run's result; stats count the rows deleted and inserted.  SPI connected,
 * acting as the target's maintainer.
 */
void
gpudl_maint_apply_result(const GpudlMaintPlan *mp, struct GpudlRun *run, GpudlMaintStats *stats)
{
	GdlColumns *res = &run->result->rows;
	rowset_hash *set;
	Relation	rel;
	TupleDesc	desc;
	TupleTableSlot *slot;
	TableScanDesc scan;
	GpudlReader *readers;
	AttrNumber *atts;
	ItemPointerData *gone = NULL;
	size_t		ngone = 0,
				gone_cap = 0;
	size_t		r;
	int			c,
				n;

	diff_rows = res;
	diff_probe = palloc(sizeof(int64_t) * (res->ncols + 1));
	set = rowset_create(CurrentMemoryContext, Max(16, res->nrows * 2), NULL);
	for (r = 0; r < res->nrows; r++)
	{
		bool		found;
		RowEntry   *e = rowset_insert(set, (uint32) r, &found);

		if (!found)
			e->seen = false;
		if ((r & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}

	rel = table_open(mp->target, RowExclusiveLock);
	desc = RelationGetDescr(rel);
	readers = palloc(sizeof(GpudlReader) * (mp->arity + 1));
	atts = palloc(sizeof(AttrNumber) * (mp->arity + 1));
	for (c = 0, n = 0; c < desc->natts && n < mp->arity; c++)
		if (!TupleDescAttr(desc, c)->attisdropped)
		{
			atts[n] = c;
			gpudl_reader_init(&readers[n], TupleDescAttr(desc, c)->atttypid);
			n++;
		}
	slot = table_slot_create(rel, NULL);
	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	r = 0;
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		bool		keep = true;
		RowEntry   *e;

		slot_getallattrs(slot);
		for (c = 0; c < mp->arity && keep; c++)
		{
			if (slot->tts_isnull[atts[c]])
				keep = false;
			else
				diff_probe[c] = gpudl_reader_value(&readers[c], slot->tts_values[atts[c]], run->dict);
		}
		e = keep ? rowset_lookup(set, PROBE_ROW) : NULL;
		if (e != NULL && !e->seen)
			e->seen = true;
		else
		{
			/* not in the relation, or a second copy of a row */
			if (ngone == gone_cap)
			{
				gone_cap = Max(64, gone_cap * 2);
				gone = gone ? repalloc_huge(gone, sizeof(ItemPointerData) * gone_cap)
					: palloc(sizeof(ItemPointerData) * gone_cap);
			}
			gone[ngone++] = slot->tts_tid;
		}
		if ((++r & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	table_close(rel, NoLock);

	if (ngone > 0)
	{
		Datum	   *d = palloc(sizeof(Datum) * ngone);
		Oid			types[1] = {TIDARRAYOID};
		Datum		values[1];
		size_t		i;

		for (i = 0; i < ngone; i++)
			d[i] = PointerGetDatum(&gone[i]);
		values[0] = PointerGetDatum(construct_array(d, (int) ngone, TIDOID, sizeof(ItemPointerData),
													false, TYPALIGN_SHORT));
		if (SPI_execute_with_args(psprintf("DELETE FROM %s WHERE ctid OPERATOR(pg_catalog.=) ANY ($1)",
										   mp->target_sql), 1, types, values, NULL, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "gpudl: could not delete the rows the relation no longer holds");
		stats->deleted += SPI_processed;
	}

	/* the relation's rows the target lacks, through a result of just them */
	{
		GdlResult  *missing = palloc0(sizeof(GdlResult));
		GpudlRun	sub = *run;
		rowset_iterator it;
		RowEntry   *e;
		size_t		m = 0;

		*missing = *run->result;
		missing->rows.cols = palloc(sizeof(int64_t *) * (res->ncols + 1));
		for (c = 0; c < res->ncols; c++)
			missing->rows.cols[c] = palloc_extended(sizeof(int64_t) * Max(1, res->nrows), MCXT_ALLOC_HUGE);
		rowset_start_iterate(set, &it);
		while ((e = rowset_iterate(set, &it)) != NULL)
			if (!e->seen)
			{
				for (c = 0; c < res->ncols; c++)
					missing->rows.cols[c][m] = res->cols[c][e->row];
				m++;
			}
		missing->rows.nrows = m;
		missing->count = (int64) m;
		sub.result = missing;
		if (m > 0 && m <= 10000)
			gpudl_target_insert_rows(mp->target, &sub);
		else if (m > 0)
		{
			/* many: written without indexes first, then one INSERT ... SELECT */
			char	   *name = psprintf("gpudl_fresh_%u", mp->target);

			gpudl_maint_exec(psprintf("CREATE TABLE pg_temp.%s (LIKE %s) ON COMMIT DROP", name, mp->target_sql),
							 SPI_OK_UTILITY);
			gpudl_target_insert_rows(RangeVarGetRelid(makeRangeVar("pg_temp", name, -1), NoLock, false), &sub);
			CommandCounterIncrement();
			gpudl_maint_exec(psprintf("INSERT INTO %s SELECT * FROM pg_temp.%s", mp->target_sql, name),
							 SPI_OK_INSERT);
			gpudl_maint_exec(psprintf("DROP TABLE pg_temp.%s", name), SPI_OK_UTILITY);
		}
		stats->inserted += m;
	}
	rowset_destroy(set);
}
