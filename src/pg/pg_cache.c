/*
 * pg_cache.c — tables pinned in columnar buffers across the queries of a
 * session: gpudl_load, gpudl_unload, gpudl_cache_status, and the reader
 * that serves extensional predicates from the cache.
 *
 * A loaded table's supported columns live as int64 arrays (text encoded
 * through the entry's own dictionary) in a memory context under
 * CacheMemoryContext.  A cached table is never read stale: gpudl_load puts a
 * statement-level trigger on the table that counts every INSERT, UPDATE,
 * DELETE or TRUNCATE in gpudl.table_changes (transactional: other sessions
 * see the count when the change commits, this session at once, and a rolled
 * back change rolls the count back); a run compares the count with the one
 * its copy was made at, and reloads when they differ.  The count is read
 * before the rows, and a copy made by a transaction that wrote is made
 * again if that transaction aborts (its count may come back with other
 * rows).  Reads
 * from the cache check the caller's SELECT privilege each time; tables with
 * row-level security are not cached (rows depend on the reader).
 *
 * When a run can use the GPU (gpudl.device auto or gpu, and a device works),
 * the columns are also copied once into device memory (the backend's
 * resident tables) and runs on the GPU read them there: a query then moves
 * no table rows to the device, only a map of the table's text ids to the
 * run's.  The host copy stays for runs on the CPU.  The device copy is freed
 * with the entry (a memory context callback), so unload, reload and errors
 * in the middle of a fill never leak it.
 */
#include "pg/gpudl_run.h"

#include "exec/gdl_backend.h"
#include "svc/svc_int.h"

#include "access/relation.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "storage/lwlock.h"
#include "access/xact.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(gpudl_load);
PG_FUNCTION_INFO_V1(gpudl_unload);
PG_FUNCTION_INFO_V1(gpudl_cache_status);
PG_FUNCTION_INFO_V1(gpudl_cache_invalidate);

/* See gpudl_run.h. */
bool		gpudl_change_count_paused = false;

typedef struct CacheEntry
{
	Oid			relid;			/* hash key */
	bool		valid;			/* false when the copy must be made again */
	int64		changes;		/* gpudl.table_changes count the copy was made at */
	bool		provisional;	/* made by a transaction that wrote: not valid if it aborts */
	MemoryContext cxt;
	int			natts;			/* attributes of the table when loaded */
	int64_t   **cols;			/* per attnum - 1; NULL for unsupported types */
	Oid		   *typids;
	GdlDict    *dict;			/* text of this table */
	size_t		nrows;
	int64		bytes;
	TimestampTz loaded_at;
	/* the device copy, when there is one */
	const GdlBackend *res_bk;	/* backend holding it */
	void	   *resident;		/* its handle */
	int		   *rescol;			/* per attnum - 1: column in the resident, or -1 */
	bool		res_tried;		/* a device copy was attempted for this fill */
	int64		res_bytes;
} CacheEntry;

static HTAB *cache = NULL;

/*
 * A copy made by a transaction that had written anything may hold that
 * transaction's uncommitted rows, at its uncommitted count; if it aborts,
 * the count goes back and another session's change can bring it to the
 * same number with other rows.  Such copies are made again after an abort
 * (of the transaction, or of any subtransaction: conservative), and are
 * ordinary copies once it commits.
 */
static bool any_provisional = false;	/* a copy is provisional: settle at the end */

static void
settle_provisional(bool aborted)
{
	HASH_SEQ_STATUS seq;
	CacheEntry *e;

	/* every transaction's end comes here: nothing to scan in the common case */
	if (cache == NULL || !any_provisional)
		return;
	any_provisional = false;
	hash_seq_init(&seq, cache);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (e->provisional)
		{
			if (aborted)
				e->valid = false;	/* made again, provisional again if need be */
			e->provisional = false;
		}
}

static void
cache_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		settle_provisional(true);
	else if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT)
		settle_provisional(false);
}

static void
cache_subxact_callback(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		settle_provisional(true);
}

/* Create the session's cache table on first use. */
static void
cache_init(void)
{
	HASHCTL		hc;

	if (cache)
		return;
	memset(&hc, 0, sizeof(hc));
	hc.keysize = sizeof(Oid);
	hc.entrysize = sizeof(CacheEntry);
	hc.hcxt = CacheMemoryContext;
	cache = hash_create("gpudl table cache", 16, &hc, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	RegisterXactCallback(cache_xact_callback, NULL);
	RegisterSubXactCallback(cache_subxact_callback, NULL);
}

/* Forget an entry and free its buffers. */
static void
cache_drop(CacheEntry *e)
{
	Oid			relid = e->relid;

	if (e->cxt)
		MemoryContextDelete(e->cxt);
	hash_search(cache, &relid, HASH_REMOVE, NULL);
}

/* The change count of a loaded table (0 when it has none yet). */
static int64
table_changes(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1];
	int64		n = 0;
	bool		isnull;

	values[0] = ObjectIdGetDatum(relid);
	SPI_connect();
	if (SPI_execute_with_args("SELECT changes FROM gpudl.table_changes WHERE relid = $1",
							  1, types, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not read gpudl.table_changes");
	if (SPI_processed > 0)
		n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	return n;
}

/* Raise unless the caller may read the table now. */
static void
check_select(Oid relid)
{
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(relid))));
}

/* Raise unless the table can be cached for the caller. */
static void
check_loadable(Relation rel)
{
	if (rel->rd_rel->relkind != RELKIND_RELATION && rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", RelationGetRelationName(rel)),
				 errhint("Only tables can be loaded; views are read at each query.")));
	if (rel->rd_rel->relrowsecurity)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("table \"%s\" has row-level security and cannot be cached",
						RelationGetRelationName(rel)),
				 errdetail("Its rows depend on who reads it; it is read at each query instead.")));
	check_select(RelationGetRelid(rel));
}

/* The entry dictionary's string i (for the shared copy's fingerprint). */
static const char *
dict_string_at(void *arg, int i, int *len)
{
	size_t		n = 0;
	const char *s = gdl_dict_string((GdlDict *) arg, i, &n);

	*len = (int) n;
	return s;
}

/* Memory context callback of an entry: free its device copy. */
static void
free_resident(void *arg)
{
	CacheEntry *e = arg;

	if (e->resident && e->res_bk)
		e->res_bk->resident_free(e->resident);
	e->resident = NULL;
	e->res_bk = NULL;
}

/*
 * Copy an entry's columns (k of them, cols, in resident order) to the device
 * of backend bk (NULL: the one runs would use now) when it keeps tables, and
 * tie the copy's life to the entry's memory context.  Tried once per fill: a
 * device that cannot hold it leaves the entry on the host, with a warning.
 */
static void
make_resident(CacheEntry *e, const GdlBackend *bk, int k, const GdlColumns *cols)
{
	const char *why = NULL;
	int64_t		bytes = 0;
	MemoryContextCallback *cb;

	if (e->res_tried)
		return;
	if (bk == NULL)
		bk = gpudl_choose_gpu_backend();
	if (bk == NULL || bk->resident_create == NULL || bk->from_resident == NULL)
		return;
	e->res_tried = true;
	cb = MemoryContextAlloc(e->cxt, sizeof(MemoryContextCallback));
	if (svc_active() && bk == svc_proxy_backend())
	{
		/* the GPU service: one device copy for every session that loads it */
		uint64		fp = svc_resident_fingerprint(k, (int64) cols->nrows,
												  (const int64 *const *) cols->cols,
												  gdl_dict_size(e->dict), dict_string_at, e->dict);
		int64		got = 0;

		e->resident = svc_resident_acquire(e->relid, fp, k, (int64) cols->nrows,
										   (const int64 *const *) cols->cols, &got, &why);
		bytes = got;
	}
	else
		e->resident = bk->resident_create(k, (int64_t) cols->nrows,
										  (const int64_t *const *) cols->cols, &bytes, &why);
	if (e->resident == NULL)
	{
		ereport(WARNING,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("table kept on the host only: %s", why ? why : "the device refused it"),
				 errhint("Runs on the GPU upload it at each query.")));
		return;
	}
	e->res_bk = bk;
	e->res_bytes = bytes;
	cb->func = free_resident;
	cb->arg = e;
	MemoryContextRegisterResetCallback(e->cxt, cb);
}

/*
 * Read every supported column of the table into a fresh entry (replacing a
 * stale one).  Reads through SPI with the caller's rights.
 */
static CacheEntry *
cache_fill(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	CacheEntry *e;
	bool		found;
	MemoryContext old;
	GdlPred		p;
	GdlColumns	cols;
	int			i,
				k = 0;
	int		   *attnos;
	int64		changes;
	const char *name = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
												  RelationGetRelationName(rel));

	check_loadable(rel);

	cache_init();
	e = hash_search(cache, &relid, HASH_ENTER, &found);
	if (found && e->cxt)
		MemoryContextDelete(e->cxt);
	memset(((char *) e) + sizeof(Oid), 0, sizeof(CacheEntry) - sizeof(Oid));
	e->cxt = AllocSetContextCreate(CacheMemoryContext, "gpudl cached table", ALLOCSET_DEFAULT_SIZES);
	/* the count first: a change committed while the rows are read costs a read, never a stale copy */
	changes = table_changes(relid);
	old = MemoryContextSwitchTo(e->cxt);
	PG_TRY();
	{
		e->natts = desc->natts;
		e->cols = palloc0(sizeof(int64_t *) * (desc->natts + 1));
		e->typids = palloc0(sizeof(Oid) * (desc->natts + 1));
		e->dict = gdl_dict_create();

		/* one read of all supported columns, as a pseudo predicate */
		memset(&p, 0, sizeof(p));
		p.name = (char *) name;
		p.rel.display_name = (char *) name;
		p.rel.colnames = palloc0(sizeof(char *) * (desc->natts + 1));
		attnos = palloc0(sizeof(int) * (desc->natts + 1));
		for (i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute a = TupleDescAttr(desc, i);

			if (a->attisdropped || gpudl_type_from_oid(a->atttypid) == GDL_TYPE_UNKNOWN)
				continue;
			p.rel.colnames[k] = pstrdup(NameStr(a->attname));
			attnos[k++] = i;
		}
		p.arity = k;
		gpudl_load_edb(NULL, &p, e->dict, &cols);
		for (i = 0; i < k; i++)
		{
			e->cols[attnos[i]] = cols.cols[i];
			e->typids[attnos[i]] = TupleDescAttr(desc, attnos[i])->atttypid;
		}
		e->nrows = cols.nrows;
		e->bytes = (int64) cols.nrows * k * sizeof(int64_t) + (int64) gdl_dict_size(e->dict) * 16;
		e->rescol = palloc(sizeof(int) * (desc->natts + 1));
		for (i = 0; i < desc->natts; i++)
			e->rescol[i] = -1;
		for (i = 0; i < k; i++)
			e->rescol[attnos[i]] = i;
		make_resident(e, NULL, k, &cols);
		e->loaded_at = GetCurrentTimestamp();
		e->changes = changes;
		e->provisional = GetTopTransactionIdIfAny() != InvalidTransactionId;
		any_provisional |= e->provisional;
		e->valid = true;
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(old);
		cache_drop(e);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	table_close(rel, NoLock);
	return e;
}

/*
 * Put the invalidation trigger on a table unless it has it.  Creating the
 * trigger takes the table's owner; once the owner has loaded the table, any
 * role that may read it can load it too (on the GPU service: sharing the
 * owner's device copy).
 */
static void
ensure_trigger(Oid relid)
{
	const char *name = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
												  get_rel_name(relid));
	bool		has_trigger;

	SPI_connect();
	if (SPI_execute(psprintf("SELECT 1 FROM pg_trigger WHERE tgrelid = %u AND tgname = 'gpudl_cache_invalidate'",
							 relid), false, 0) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not look up triggers");
	has_trigger = SPI_processed > 0;
	if (!has_trigger && !pg_class_ownercheck(relid, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s to load it first", get_rel_name(relid)),
				 errdetail("Loading puts a trigger on the table so that changes are seen."),
				 errhint("Its owner loads it once (gpudl_load); then every role that may read it can load it.")));
	if (SPI_execute(psprintf("SELECT gpudl._cache_register(%u)", relid), false, 0) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not register the table");
	if (!has_trigger &&
		SPI_execute(psprintf("CREATE TRIGGER gpudl_cache_invalidate AFTER INSERT OR UPDATE OR DELETE "
							 "OR TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION gpudl._cache_invalidate()",
							 name), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "gpudl: could not create the cache trigger");
	SPI_finish();
}

/*
 * The cache entry of a predicate's table when it is loaded, readable by the
 * caller, and current (made again first when the table changed); NULL when
 * the table is not loaded.
 */
static CacheEntry *
entry_for(const GdlPred *pred)
{
	CacheEntry *e;

	if (cache == NULL || pred->rel.relid == InvalidOid)
		return NULL;
	e = hash_search(cache, &pred->rel.relid, HASH_FIND, NULL);
	if (e == NULL)
		return NULL;
	check_select(e->relid);
	if (!e->valid || table_changes(e->relid) != e->changes)
		e = cache_fill(e->relid);
	return e;
}

/*
 * The attribute (0-based) of each of the predicate's columns in the entry;
 * false when the entry does not hold one of them (then read the table).
 */
static bool
pred_attrs(CacheEntry *e, const GdlPred *pred, int *atts)
{
	Relation	rel = table_open(e->relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	bool		ok = true;
	int			c,
				i;

	for (c = 0; c < pred->arity && ok; c++)
	{
		atts[c] = -1;
		for (i = 0; i < desc->natts && i < e->natts; i++)
			if (!TupleDescAttr(desc, i)->attisdropped &&
				strcmp(NameStr(TupleDescAttr(desc, i)->attname), pred->rel.colnames[c]) == 0)
				atts[c] = i;
		ok = atts[c] >= 0 && e->cols[atts[c]] != NULL;
	}
	table_close(rel, NoLock);
	return ok;
}

/* Map of the entry's text ids to the run dictionary's (gdl_alloc'ed). */
static int32_t *
text_map(CacheEntry *e, GdlDict *dict)
{
	int32_t    *map = gdl_alloc(sizeof(int32_t) * (gdl_dict_size(e->dict) + 1));
	int			c;

	for (c = 0; c < gdl_dict_size(e->dict); c++)
	{
		size_t		len;
		const char *s = gdl_dict_string(e->dict, c, &len);

		map[c] = gdl_dict_intern(dict, s, len);
	}
	return map;
}

/* Whether attribute att of the entry holds text ids. */
static bool
is_text(CacheEntry *e, int att)
{
	return gpudl_type_from_oid(e->typids[att]) == GDL_TYPE_TEXT;
}

/*
 * Serve an extensional predicate from the cache's host columns when its
 * table is loaded and current; false when the caller must read the table.
 */
bool
gpudl_cache_read(const GdlPred *pred, GdlDict *dict, GdlColumns *out)
{
	CacheEntry *e = entry_for(pred);
	int		   *atts;
	int32_t    *map;
	int			c;

	if (e == NULL)
		return false;
	atts = palloc(sizeof(int) * (pred->arity + 1));
	if (!pred_attrs(e, pred, atts))
		return false;
	map = text_map(e, dict);
	out->ncols = pred->arity;
	out->nrows = e->nrows;
	out->cols = gdl_alloc(sizeof(int64_t *) * (pred->arity + 1));
	for (c = 0; c < pred->arity; c++)
	{
		const int64_t *src = e->cols[atts[c]];
		bool		text = is_text(e, atts[c]);
		size_t		r;

		out->cols[c] = gdl_alloc(sizeof(int64_t) * (e->nrows + 1));
		for (r = 0; r < e->nrows; r++)
			out->cols[c][r] = text ? map[src[r]] : src[r];
	}
	gdl_free(map);
	gpudl_counters.cache_reads++;
	return true;
}

/*
 * Make the device copy of an entry filled without one (gpudl.device was cpu
 * then) from its host columns, for a run on backend bk.
 */
static void
resident_from_host(CacheEntry *e, const GdlBackend *bk)
{
	GdlColumns	cols;
	int			i;

	cols.ncols = 0;
	cols.nrows = e->nrows;
	cols.cols = palloc0(sizeof(int64_t *) * (e->natts + 1));
	for (i = 0; i < e->natts; i++)
		if (e->rescol[i] >= 0)
		{
			cols.cols[e->rescol[i]] = e->cols[i];
			cols.ncols++;
		}
	make_resident(e, bk, cols.ncols, &cols);
	pfree(cols.cols);
}

/*
 * Serve an extensional predicate from the device copy of its table, for a
 * run on backend bk; false when there is none (see GdlRunInput).
 */
bool
gpudl_cache_resident(const GdlPred *pred, const GdlBackend *bk, GdlDict *dict,
					 GdlResidentRef *out)
{
	CacheEntry *e = entry_for(pred);
	int		   *atts;
	int32_t    *map = NULL;
	int			c;

	if (e == NULL)
		return false;
	if (e->resident == NULL)
		resident_from_host(e, bk);	/* loaded while runs were on the CPU */
	if (e->resident == NULL || e->res_bk != bk)
		return false;
	atts = palloc(sizeof(int) * (pred->arity + 1));
	if (!pred_attrs(e, pred, atts))
		return false;
	out->resident = e->resident;
	out->ncols = pred->arity;
	out->colidx = gdl_alloc(sizeof(int) * (pred->arity + 1));
	out->remap = gdl_alloc(sizeof(int32_t *) * (pred->arity + 1));
	out->remap_len = gdl_alloc(sizeof(int32_t) * (pred->arity + 1));
	for (c = 0; c < pred->arity; c++)
	{
		out->colidx[c] = e->rescol[atts[c]];
		out->remap[c] = NULL;
		out->remap_len[c] = 0;
		if (is_text(e, atts[c]))
		{
			if (map == NULL)
				map = text_map(e, dict);
			out->remap[c] = gdl_alloc(sizeof(int32_t) * (gdl_dict_size(e->dict) + 1));
			memcpy(out->remap[c], map, sizeof(int32_t) * gdl_dict_size(e->dict));
			out->remap_len[c] = gdl_dict_size(e->dict);
		}
	}
	gdl_free(map);
	gpudl_counters.cache_reads++;
	gpudl_counters.device_cache_reads++;
	return true;
}

/* gpudl_load(relation): pin the table's columns; returns rows loaded. */
Datum
gpudl_load(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	CacheEntry *e;

	Relation	rel;

	gpudl_install_host();
	rel = try_table_open(relid, AccessShareLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid),
				 errhint("Load a table by name: gpudl_load('schema.table').")));
	check_loadable(rel);
	table_close(rel, NoLock);
	ensure_trigger(relid);
	e = cache_fill(relid);
	PG_RETURN_INT64((int64) e->nrows);
}

/* gpudl_unload(relation): forget the table's buffers in this session. */
Datum
gpudl_unload(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	CacheEntry *e = cache ? hash_search(cache, &relid, HASH_FIND, NULL) : NULL;

	if (e == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("table %s is not loaded", get_rel_name(relid) ? get_rel_name(relid) : "?"),
				 errhint("gpudl_cache_status() lists the loaded tables.")));
	cache_drop(e);
	PG_RETURN_VOID();
}

/*
 * Add the device copies of the GPU service that other sessions of this
 * database loaded and this one did not: every session sees them.
 */
static void
put_others_copies(ReturnSetInfo *rsinfo)
{
	SvcResident copy[SVC_MAX_RESIDENTS];
	int			i;

	if (!svc_active())
		return;
	LWLockAcquire(svc_resident_lock(), LW_SHARED);
	memcpy(copy, svc_shared->residents, sizeof(copy));
	LWLockRelease(svc_resident_lock());
	for (i = 0; i < SVC_MAX_RESIDENTS; i++)
	{
		Datum		v[5];
		bool		nulls[5] = {0, 0, 0, 0, true};

		if (!copy[i].used || copy[i].dbid != MyDatabaseId ||
			(cache && hash_search(cache, &copy[i].relid, HASH_FIND, NULL)) ||
			!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(copy[i].relid)))
			continue;
		v[0] = ObjectIdGetDatum(copy[i].relid);
		v[1] = Int64GetDatum(copy[i].nrows);
		v[2] = Int64GetDatum(copy[i].bytes);
		v[3] = CStringGetTextDatum(copy[i].refs > 0 ?
								   psprintf("gpu (loaded by %d other sessions)", copy[i].refs) :
								   "gpu (kept until its memory is needed)");
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	}
}

/* gpudl_cache_status(): the loaded tables of this session (and the cluster's device copies). */
Datum
gpudl_cache_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS st;
	CacheEntry *e;

	InitMaterializedSRF(fcinfo, 0);
	put_others_copies(rsinfo);
	if (cache == NULL)
		return (Datum) 0;
	hash_seq_init(&st, cache);
	while ((e = hash_seq_search(&st)) != NULL)
	{
		Datum		v[5];

		if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(e->relid)))
		{
			cache_drop(e);		/* the table was dropped */
			continue;
		}
		{
		bool		nulls[5] = {0};

		bool		current = e->valid && table_changes(e->relid) == e->changes;
		const char *where = e->resident ? "gpu" : "cpu";
		int64		shared_bytes = 0;
		int			sharers = e->resident ? svc_resident_sharers(e->relid, &shared_bytes) : 0;

		if (sharers > 1)
			where = psprintf("gpu (one copy, shared by %d sessions)", sharers);

		v[0] = ObjectIdGetDatum(e->relid);
		v[1] = Int64GetDatum((int64) e->nrows);
		v[2] = Int64GetDatum(e->resident ? e->res_bytes : e->bytes);
		v[3] = CStringGetTextDatum(current ? where :
								   psprintf("%s (changed: reloaded at next use)", where));
		v[4] = TimestampTzGetDatum(e->loaded_at);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
		}
	}
	return (Datum) 0;
}

/*
 * Trigger on loaded tables (SECURITY DEFINER): count the change, so every
 * session's cached copy is made again before its next use.
 */
Datum
gpudl_cache_invalidate(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Oid			types[1] = {OIDOID};
	Datum		values[1];

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("gpudl._cache_invalidate must be called as a trigger")));
	if (gpudl_change_count_paused)
		return PointerGetDatum(NULL);
	values[0] = ObjectIdGetDatum(RelationGetRelid(td->tg_relation));
	SPI_connect();
	if (SPI_execute_with_args("UPDATE gpudl.table_changes SET changes = changes + 1 WHERE relid = $1",
							  1, types, values, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "gpudl: could not count a change of a loaded table");
	SPI_finish();
	return PointerGetDatum(NULL);
}
