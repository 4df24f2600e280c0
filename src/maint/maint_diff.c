/*
 * maint_diff.c — the relation a maintained target must hold, freshly
 * computed by the engine, and how the target is made equal to it.
 *
 * gpudl_maint_fresh_compute runs the engine over the base tables as they
 * are now.  The result answers "does the relation hold this row?" for the
 * over-deletion of a change (maint_apply.c): by binary search when the
 * engine's answer comes in a few runs in order of their values (the CPU
 * engine's in one, the GPU engine's sorted runs one after the other),
 * else through a hash set of its row numbers (a simplehash).
 *
 * A full recompute (TRUNCATE, a rule edit, gpudl_refresh, targets without
 * incremental rules, changes that reach too much of the table) makes the
 * target equal to the fresh relation: one scan of the target looks each
 * row up in the hash set; rows the relation lacks are deleted by ctid,
 * rows of the relation the target lacks are inserted.  Readers never see
 * the table empty, triggers on the target see only the difference, and the
 * cost is a scan of the target rather than anti-joins in SQL.
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
#include "utils/hsearch.h"
#include "utils/snapmgr.h"
#include "portability/instr_time.h"
#include "storage/lmgr.h"

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

/* The fresh relation of a target (gpudl_maint_fresh_compute). */
struct GpudlMaintFresh
{
	GpudlRun   *run;
	bool		hashed;			/* looked up in the hash set, not run by run */
	int			nruns;			/* the rows as sorted runs (find_runs) */
	size_t	   *run_starts;
	rowset_hash *set;			/* the rows as a hash set, once built */
};

/*
 * Per target, how long its last fresh computation took in this backend
 * (milliseconds): how long an unchecked over-deletion may run before
 * checking against a fresh relation is the cheaper way.
 */
typedef struct FreshCost
{
	Oid			target;
	double		ms;
} FreshCost;

static HTAB *fresh_costs;

/* The last fresh computation's milliseconds for target, or -1 when none was made here. */
double
gpudl_maint_fresh_cost(Oid target)
{
	FreshCost  *c;

	if (fresh_costs == NULL)
		return -1;
	c = hash_search(fresh_costs, &target, HASH_FIND, NULL);
	return c ? c->ms : -1;
}

/* Remember how long target's fresh computation took. */
static void
note_fresh_cost(Oid target, double ms)
{
	FreshCost  *c;

	if (fresh_costs == NULL)
	{
		HASHCTL		ctl = {0};

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(FreshCost);
		fresh_costs = hash_create("gpudl fresh relation costs", 16, &ctl, HASH_ELEM | HASH_BLOBS);
	}
	c = hash_search(fresh_costs, &target, HASH_ENTER, NULL);
	c->ms = ms;
}

/* At most this many sorted runs are searched one by one; more, and a hash set is built. */
#define FRESH_MAX_RUNS 64

/*
 * Where the rows' sorted runs start (exec_columns.c), or f->hashed when
 * there are more than FRESH_MAX_RUNS.
 */
static void
find_runs(GpudlMaintFresh *f)
{
	f->run_starts = palloc(sizeof(size_t) * (FRESH_MAX_RUNS + 1));
	f->nruns = gdl_columns_sorted_runs(&f->run->result->rows, f->run_starts, FRESH_MAX_RUNS);
	if (f->nruns < 0)
	{
		f->nruns = 0;			/* not worth searching run by run */
		f->hashed = true;
	}
}

/*
 * The fresh relation's rows as a hash set (built once): each row's bucket
 * is fetched DIFF_AHEAD rows before it is inserted, since the set is far
 * larger than the caches.
 */
static rowset_hash *
fresh_set(GpudlMaintFresh *f)
{
	const GdlColumns *res = &f->run->result->rows;
	uint32		hashes[DIFF_AHEAD];
	size_t		r;

	diff_rows = res;
	if (f->set != NULL)
		return f->set;
	f->set = rowset_create(CurrentMemoryContext, Max(16, res->nrows * 2), NULL);
	for (r = 0; r < res->nrows + DIFF_AHEAD; r++)
	{
		bool		found;

		/* row r - DIFF_AHEAD goes in, then row r's hash takes its slot */
		if (r >= DIFF_AHEAD)
			(void) rowset_insert_hash(f->set, row_key((uint32) (r - DIFF_AHEAD)),
									  hashes[r % DIFF_AHEAD], &found);
		if (r < res->nrows)
		{
			hashes[r % DIFF_AHEAD] = row_hash(row_key((uint32) r));
			prefetch_bucket(f->set, hashes[r % DIFF_AHEAD]);
		}
		if ((r & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	return f->set;
}

/*
 * Compute the relation of mp's target from the base tables as they are now
 * (after the changing statement), with the engine.  SPI connected, acting
 * as the target's maintainer.
 */
GpudlMaintFresh *
gpudl_maint_fresh_compute(const GpudlMaintPlan *mp)
{
	GpudlMaintFresh *f = palloc0(sizeof(GpudlMaintFresh));
	StringInfoData goal;
	int			k;
	instr_time	start,
				now;

	INSTR_TIME_SET_CURRENT(start);
	initStringInfo(&goal);
	appendStringInfo(&goal, "%s(", gdl_pred_name_quote(mp->predicate));
	for (k = 0; k < mp->arity; k++)
		appendStringInfo(&goal, "%sV%d", k ? ", " : "", k);
	appendStringInfoChar(&goal, ')');
	/*
	 * The engine reads the tables with the active snapshot: in a trigger that
	 * is the changing statement's, which does not see its own rows yet.
	 */
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	UpdateActiveSnapshotCommandId();
	f->run = gpudl_run_goal(mp->program, goal.data, true);
	PopActiveSnapshot();
	find_runs(f);
	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	note_fresh_cost(mp->target, INSTR_TIME_GET_MILLISEC(now));
	return f;
}

/* The fresh relation's rows. */
int64
gpudl_maint_fresh_rows(const GpudlMaintFresh *f)
{
	return (int64) f->run->result->rows.nrows;
}

/* Does the fresh relation hold the row of engine values 'row'? */
static bool
fresh_has(GpudlMaintFresh *f, int64_t *row)
{
	const GdlColumns *res = &f->run->result->rows;
	int			i;

	if (!f->hashed)
	{
		for (i = 0; i < f->nruns; i++)
			if (gdl_columns_run_has(res, f->run_starts[i], f->run_starts[i + 1], row))
				return true;
		return false;
	}
	diff_probe = row;
	return rowset_lookup(fresh_set(f), row_key(PROBE_ROW)) != NULL;
}

/*
 * Readers of the first 'arity' columns of a relation (dropped columns
 * skipped): atts[] their attribute numbers (0-based).
 */
static void
column_readers(Relation rel, int arity, GpudlReader *readers, AttrNumber *atts)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			c,
				n;

	for (c = 0, n = 0; c < desc->natts && n < arity; c++)
		if (!TupleDescAttr(desc, c)->attisdropped)
		{
			atts[n] = c;
			gpudl_reader_init(&readers[n], TupleDescAttr(desc, c)->atttypid);
			n++;
		}
}

/* Delete rows by ctid from table 'sql'; returns how many went. */
static uint64
delete_by_ctid(const char *sql, ItemPointerData *tids, size_t n)
{
	Datum	   *d;
	Oid			types[1] = {TIDARRAYOID};
	Datum		values[1];
	size_t		i;

	if (n == 0)
		return 0;
	d = palloc(sizeof(Datum) * n);
	for (i = 0; i < n; i++)
		d[i] = PointerGetDatum(&tids[i]);
	values[0] = PointerGetDatum(construct_array(d, (int) n, TIDOID, sizeof(ItemPointerData),
												false, TYPALIGN_SHORT));
	if (SPI_execute_with_args(psprintf("DELETE FROM %s WHERE ctid OPERATOR(pg_catalog.=) ANY ($1)", sql),
							  1, types, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "gpudl: could not delete rows of %s by ctid", sql);
	return SPI_processed;
}

/* Append tid to a growing array. */
static void
push_tid(ItemPointerData **tids, size_t *n, size_t *cap, ItemPointerData tid)
{
	if (*n == *cap)
	{
		*cap = Max(64, *cap * 2);
		*tids = *tids ? repalloc_huge(*tids, sizeof(ItemPointerData) * *cap)
			: palloc(sizeof(ItemPointerData) * *cap);
	}
	(*tids)[(*n)++] = tid;
}

/*
 * Delete from table 'relid' (named 'sql'; the target's columns first) the
 * rows the fresh relation holds: what remains of a round's over-deletion
 * candidates are rows the relation no longer derives.  Returns the rows
 * left.  SPI connected.
 */
uint64
gpudl_maint_fresh_drop_held(const GpudlMaintPlan *mp, GpudlMaintFresh *f, Oid relid, const char *sql)
{
	Relation	rel;
	TupleTableSlot *slot;
	TableScanDesc scan;
	GpudlReader *readers = palloc(sizeof(GpudlReader) * (mp->arity + 1));
	AttrNumber *atts = palloc(sizeof(AttrNumber) * (mp->arity + 1));
	int64_t    *row = palloc(sizeof(int64_t) * (mp->arity + 1));
	ItemPointerData *held = NULL;
	size_t		nheld = 0,
				cap = 0;
	uint64		total = 0;

	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	UpdateActiveSnapshotCommandId();
	rel = table_open(relid, AccessShareLock);
	column_readers(rel, mp->arity, readers, atts);
	slot = table_slot_create(rel, NULL);
	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		bool		complete = true;
		int			c;

		slot_getallattrs(slot);
		for (c = 0; c < mp->arity && complete; c++)
		{
			if (slot->tts_isnull[atts[c]])
				complete = false;
			else
				row[c] = gpudl_reader_value(&readers[c], slot->tts_values[atts[c]], f->run->dict);
		}
		if (complete && fresh_has(f, row))
			push_tid(&held, &nheld, &cap, slot->tts_tid);
		if ((++total & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	table_close(rel, NoLock);
	PopActiveSnapshot();
	return total - delete_by_ctid(sql, held, nheld);
}

/* At most this many sorted runs are searched in step with the target; after DIFF_JUDGE_EVERY rows, are they in step? */
#define DIFF_MAX_RUNS 4
#define DIFF_JUDGE_EVERY 65536

/*
 * The relation's row equal to 'row' (its number), or -1: each sorted run
 * searched from where its last search ended (cursor[i]), which moves to
 * where this one ends.  *jumps counts searches that ended more than 64
 * rows from where they began in every run (the target not in step).
 */
static int64
fresh_seek(GpudlMaintFresh *f, size_t *cursor, const int64_t *row, size_t *jumps)
{
	const GdlColumns *res = &f->run->result->rows;
	bool		near = false;
	int			i;

	for (i = 0; i < f->nruns; i++)
	{
		size_t		p = gdl_columns_run_seek(res, f->run_starts[i], f->run_starts[i + 1], cursor[i], row);

		near |= p + 64 >= cursor[i] && p <= cursor[i] + 64;
		cursor[i] = p;
		if (p < f->run_starts[i + 1] && gdl_columns_row_equals(res, p, row))
		{
			if (!near)
				(*jumps)++;
			return (int64) p;
		}
	}
	if (!near)
		(*jumps)++;
	return -1;
}

/*
 * Before 'rows' rows are written into a target of 'kept' rows: when they
 * are many (a tenth of it, and more than 100,000), drop the indexes gpudl
 * made on it (the caller makes them again after), since one sort of the
 * whole table costs less than a random index insertion per row
 * (p2p-Gnutella04, 10,000 of its 40,000 edges inserted back: 10 M rows
 * into a 37 M-row target, 283 s on 2 cores with the indexes in place).
 * Other indexes stay.  Takes the target's ACCESS EXCLUSIVE lock until
 * commit, as any index change does, and only when it is free at once.
 * Returns whether it dropped them.
 */
static bool
drop_own_indexes(const GpudlMaintPlan *mp, size_t rows, size_t kept)
{
	Oid			nsp = get_rel_namespace(mp->target);
	bool		dropped = false;
	int			k;

	if (!mp->incremental || rows <= 100000 || rows <= kept / 10)
		return false;
	/*
	 * Only if no one else holds the target now: waiting for a reader whose
	 * transaction then waits for this one would be a deadlock, and the
	 * rows go in with the indexes in place just as well, only slower.
	 */
	if (!ConditionalLockRelationOid(mp->target, AccessExclusiveLock))
	{
		elog(DEBUG1, "gpudl: %s is in use by another session; its indexes stay while %zu rows go in",
			 mp->target_sql, rows);
		return false;
	}
	for (k = 0; k < mp->arity; k++)
	{
		Oid			index = get_relname_relid(gpudl_maint_index_name(mp, k), nsp);

		if (!OidIsValid(index))
			continue;
		gpudl_maint_exec(psprintf("DROP INDEX %s",
								  quote_qualified_identifier(get_namespace_name(nsp), get_rel_name(index))),
						 SPI_OK_UTILITY);
		dropped = true;
	}
	return dropped;
}

/*
 * Make table 'target' (its first arity columns) hold exactly the rows of
 * the fresh relation; stats count the rows deleted and inserted.  SPI
 * connected, acting as the target's maintainer.
 */
void
gpudl_maint_apply_result(const GpudlMaintPlan *mp, GpudlMaintFresh *f, GpudlMaintStats *stats)
{
	GpudlRun   *run = f->run;
	GdlColumns *res = &run->result->rows;
	rowset_hash *set;
	Relation	rel;
	TupleTableSlot *slot;
	TableScanDesc scan;
	GpudlReader *readers;
	AttrNumber *atts;
	ItemPointerData *gone = NULL;
	size_t		ngone = 0,
				gone_cap = 0;
	size_t		r;
	int			c;
	uint32		hashes[DIFF_AHEAD];
	bool		batch_keep[DIFF_AHEAD];
	ItemPointerData batch_tid[DIFF_AHEAD];
	int64_t    *probes;
	bool	   *held;			/* per row of the relation: the target holds it */
	bool		by_runs;		/* searched run by run, not hashed */
	size_t	   *cursor = NULL;	/* per run, where its last search ended */
	size_t		jumps = 0;		/* searches that ended far from the last */
	size_t		scanned;		/* the target's rows */
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	PushActiveSnapshot(GetTransactionSnapshot());
	UpdateActiveSnapshotCommandId();
	/*
	 * In a few sorted runs the relation is searched in place, each run from
	 * where its last search ended: a target written in the relation's order
	 * (as gpudl writes it) is then read in step with it, with no hash set
	 * to build (47 M rows: 4.9 s on the H200 machine's CPU).  When the
	 * target's rows come in another order (most searches jump far), the
	 * hash set takes over.
	 */
	by_runs = !f->hashed && f->nruns <= DIFF_MAX_RUNS;
	set = NULL;
	if (by_runs)
	{
		cursor = palloc(sizeof(size_t) * (f->nruns + 1));
		for (c = 0; c < f->nruns; c++)
			cursor[c] = f->run_starts[c];
	}
	else
	{
		set = fresh_set(f);
		elog(DEBUG1, "gpudl: fresh relation of %s hashed in %.1f ms", mp->target_sql, gpudl_maint_ms_since(start));
	}
	held = palloc_extended(Max(1, res->nrows), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	rel = table_open(mp->target, RowExclusiveLock);
	readers = palloc(sizeof(GpudlReader) * (mp->arity + 1));
	atts = palloc(sizeof(AttrNumber) * (mp->arity + 1));
	column_readers(rel, mp->arity, readers, atts);
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
			if (keep && !by_runs)
			{
				hashes[nbatch] = row_hash(row_key(PROBE_ROW));
				prefetch_bucket(set, hashes[nbatch]);
			}
			nbatch++;
		}
		for (i = 0; i < nbatch; i++)
		{
			int64		at = -1;

			diff_probe = &probes[i * mp->arity];
			if (batch_keep[i] && by_runs)
				at = fresh_seek(f, cursor, diff_probe, &jumps);
			else if (batch_keep[i])
			{
				RowEntry   *e = rowset_lookup_hash(set, row_key(PROBE_ROW), hashes[i]);

				at = e ? (int64) e->key.row : -1;
			}
			if (at >= 0 && !held[at])
				held[at] = true;
			else
				push_tid(&gone, &ngone, &gone_cap, batch_tid[i]);	/* not in the relation, or a second copy */
		}
		r += nbatch;
		if (by_runs && r >= DIFF_JUDGE_EVERY && jumps > r / 4)
		{
			/* the target is not in the relation's order: hash it after all */
			by_runs = false;
			set = fresh_set(f);
			elog(DEBUG1, "gpudl: %s is not in the relation's order (%zu of %zu searches jumped); hashed instead",
				 mp->target_sql, jumps, r);
		}
		if ((r & 0xFFFF) < DIFF_AHEAD)
			CHECK_FOR_INTERRUPTS();
		if (!more)
			break;
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	table_close(rel, NoLock);
	scanned = r;
	elog(DEBUG1, "gpudl: %s compared with the fresh relation in %.1f ms: %zu rows to delete",
		 mp->target_sql, gpudl_maint_ms_since(start), ngone);
	INSTR_TIME_SET_CURRENT(start);
	stats->deleted += delete_by_ctid(mp->target_sql, gone, ngone);
	elog(DEBUG1, "gpudl: %zu rows deleted from %s in %.1f ms", ngone, mp->target_sql, gpudl_maint_ms_since(start));
	INSTR_TIME_SET_CURRENT(start);
	/* the relation's rows the target lacks, through a result of just them */
	{
		GdlResult  *missing = palloc0(sizeof(GdlResult));
		GpudlRun	sub = *run;
		size_t		m = 0;
		bool		reindex;

		*missing = *run->result;
		missing->rows.cols = palloc(sizeof(int64_t *) * (res->ncols + 1));
		for (c = 0; c < res->ncols; c++)
			missing->rows.cols[c] = palloc_extended(sizeof(int64_t) * Max(1, res->nrows), MCXT_ALLOC_HUGE);
		/* in the relation's order (sorted runs): the target's indexes take them in order */
		for (r = 0; r < res->nrows; r++)
			if (!held[r])
			{
				for (c = 0; c < res->ncols; c++)
					missing->rows.cols[c][m] = res->cols[c][r];
				m++;
			}
		missing->rows.nrows = m;
		missing->count = (int64) m;
		sub.result = missing;
		reindex = drop_own_indexes(mp, m, scanned - ngone);
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
		if (reindex)
			gpudl_maint_ensure_indexes(mp);
		stats->inserted += m;
		elog(DEBUG1, "gpudl: %zu rows inserted into %s in %.1f ms%s", m, mp->target_sql,
			 gpudl_maint_ms_since(start), reindex ? ", its indexes built again" : "");
	}
	PopActiveSnapshot();
}
