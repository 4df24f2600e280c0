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
#include "maint/gpudl_maint.h"
#include "pg/gpudl_run.h"

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

/*
 * The rows the hash set indexes, and the probe row (key PROBE_ROW).  A key
 * carries the row's first two values, so that for the common arity of two
 * a probe compares within the bucket it lands on, without reading the
 * relation's columns at a random row (one cache miss instead of three).
 */
static const GdlColumns *diff_rows;
static int64_t *diff_probe;

#define PROBE_ROW PG_UINT32_MAX

typedef struct RowKey
{
	int64_t		v0;
	int64_t		v1;
	uint32		row;
} RowKey;

static inline int64_t
row_value(uint32 row, int c)
{
	return row == PROBE_ROW ? diff_probe[c] : diff_rows->cols[c][row];
}

/* The key of row 'row' of the relation (or of the probe row). */
static inline RowKey
row_key(uint32 row)
{
	RowKey		k;

	k.v0 = diff_rows->ncols > 0 ? row_value(row, 0) : 0;
	k.v1 = diff_rows->ncols > 1 ? row_value(row, 1) : 0;
	k.row = row;
	return k;
}

static inline uint32
row_hash(RowKey key)
{
	uint64		h = 0;
	int			c;

	for (c = 0; c < diff_rows->ncols; c++)
	{
		int64_t		v = c == 0 ? key.v0 : c == 1 ? key.v1 : row_value(key.row, c);

		h = hash_combine64(h, hash_bytes_uint32_extended((uint32) v, (uint64) (v >> 32)));
	}
	return (uint32) (h ^ (h >> 32));
}

static inline bool
row_equal(RowKey a, RowKey b)
{
	int			c;

	if (a.v0 != b.v0 || a.v1 != b.v1)
		return false;
	for (c = 2; c < diff_rows->ncols; c++)
		if (row_value(a.row, c) != row_value(b.row, c))
			return false;
	return true;
}

typedef struct RowEntry
{
	RowKey		key;
	char		status;
	bool		seen;			/* the target holds this row */
} RowEntry;

#define SH_PREFIX rowset
#define SH_ELEMENT_TYPE RowEntry
#define SH_KEY_TYPE RowKey
#define SH_KEY key
#define SH_HASH_KEY(tb, key) row_hash(key)
#define SH_EQUAL(tb, a, b) row_equal(a, b)
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* How many rows ahead a bucket is fetched into the cache before it is used. */
#define DIFF_AHEAD 32

/* Ask for the cache line of the bucket a hash lands on (the first probe of a lookup or insert). */
static inline void
prefetch_bucket(rowset_hash *set, uint32 hash)
{
	__builtin_prefetch(&set->data[hash & set->sizemask]);
}

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
	uint32		hashes[DIFF_AHEAD];
	bool		batch_keep[DIFF_AHEAD];
	ItemPointerData batch_tid[DIFF_AHEAD];
	int64_t    *probes;

	diff_rows = res;
	set = rowset_create(CurrentMemoryContext, Max(16, res->nrows * 2), NULL);
	/* each row's bucket is fetched DIFF_AHEAD rows before it is inserted: the set is far larger than the caches */
	for (r = 0; r < res->nrows + DIFF_AHEAD; r++)
	{
		bool		found;

		/* row r - DIFF_AHEAD goes in, then row r's hash takes its slot */
		if (r >= DIFF_AHEAD)
		{
			RowEntry   *e = rowset_insert_hash(set, row_key((uint32) (r - DIFF_AHEAD)),
											   hashes[r % DIFF_AHEAD], &found);

			if (!found)
				e->seen = false;
		}
		if (r < res->nrows)
		{
			hashes[r % DIFF_AHEAD] = row_hash(row_key((uint32) r));
			prefetch_bucket(set, hashes[r % DIFF_AHEAD]);
		}
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
	/* the target's rows in batches of DIFF_AHEAD: their buckets fetched, then looked up */
	probes = palloc(sizeof(int64_t) * DIFF_AHEAD * (mp->arity + 1));
	r = 0;
	for (;;)
	{
		int			nbatch = 0,
					i;
		bool		more = true;

		while (nbatch < DIFF_AHEAD && (more = table_scan_getnextslot(scan, ForwardScanDirection, slot)))
		{
			bool		keep = true;

			slot_getallattrs(slot);
			diff_probe = &probes[nbatch * mp->arity];
			for (c = 0; c < mp->arity && keep; c++)
			{
				if (slot->tts_isnull[atts[c]])
					keep = false;
				else
					diff_probe[c] = gpudl_reader_value(&readers[c], slot->tts_values[atts[c]], run->dict);
			}
			batch_keep[nbatch] = keep;
			batch_tid[nbatch] = slot->tts_tid;
			if (keep)
			{
				hashes[nbatch] = row_hash(row_key(PROBE_ROW));
				prefetch_bucket(set, hashes[nbatch]);
			}
			nbatch++;
		}
		for (i = 0; i < nbatch; i++)
		{
			RowEntry   *e = NULL;

			diff_probe = &probes[i * mp->arity];
			if (batch_keep[i])
				e = rowset_lookup_hash(set, row_key(PROBE_ROW), hashes[i]);
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
				gone[ngone++] = batch_tid[i];
			}
		}
		r += nbatch;
		if ((r & 0xFFFF) < DIFF_AHEAD)
			CHECK_FOR_INTERRUPTS();
		if (!more)
			break;
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
					missing->rows.cols[c][m] = res->cols[c][e->key.row];
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
