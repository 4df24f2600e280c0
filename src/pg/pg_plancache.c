/*
 * pg_plancache.c — compiled plans cached per backend, keyed by program,
 * version and the OIDs of the tables its extensional predicates read.
 *
 * A run asks gpudl_plan_acquire() for a plan: one catalog look-up (the
 * program's version) and a syscache look-up per extensional predicate decide
 * whether the cached plan still stands.  A version bump (any rule or binding
 * change, from any session), a different table behind a name (search_path,
 * DROP + CREATE) or a relcache invalidation of a read table (ALTER, DROP)
 * drops the entry; executing a cached plan does no parsing.
 */
#include "gpudl_pg.h"
#include "gpudl_run.h"

#include "catalog/namespace.h"
#include "nodes/makefuncs.h"
#include "utils/inval.h"
#include "utils/memutils.h"

typedef struct PlanEntry
{
	char	   *name;
	int64		version;
	bool		valid;
	int			nedb;
	Oid		   *edb_relids;		/* per predicate id: InvalidOid for IDB */
	List	   *bindings;		/* GpudlBinding *, for re-resolution */
	MemoryContext cxt;			/* owns everything of the entry */
	GdlAnalysis *analysis;
	GdlPlan    *plan;
} PlanEntry;

static List *plan_entries = NIL;	/* in TopMemoryContext */
static bool callback_registered = false;

GpudlCounters gpudl_counters;

/* Relcache invalidation: drop entries that read the changed relation. */
static void
relcache_callback(Datum arg, Oid relid)
{
	ListCell   *lc;

	foreach(lc, plan_entries)
	{
		PlanEntry  *e = lfirst(lc);
		int			i;

		if (!OidIsValid(relid))
		{
			e->valid = false;
			continue;
		}
		for (i = 0; i < e->nedb; i++)
			if (e->edb_relids[i] == relid)
				e->valid = false;
	}
}

/* Free a cache entry and unlink it. */
static void
drop_entry(PlanEntry *e)
{
	plan_entries = list_delete_ptr(plan_entries, e);
	MemoryContextDelete(e->cxt);
}

/* Find the entry of a program, or NULL. */
static PlanEntry *
find_entry(const char *name)
{
	ListCell   *lc;

	foreach(lc, plan_entries)
	{
		PlanEntry  *e = lfirst(lc);

		if (strcmp(e->name, name) == 0)
			return e;
	}
	return NULL;
}

/* The table a predicate name reads now (binding, then search_path). */
static Oid
current_relid(PlanEntry *e, const char *pred)
{
	ListCell   *lc;
	const char *dot;
	RangeVar   *rv;

	foreach(lc, e->bindings)
	{
		GpudlBinding *b = lfirst(lc);

		if (strcmp(b->predicate, pred) == 0)
			return b->relid;
	}
	dot = strchr(pred, '.');
	if (dot)
		rv = makeRangeVar(pnstrdup(pred, dot - pred), pstrdup(dot + 1), -1);
	else
		rv = makeRangeVar(NULL, pstrdup(pred), -1);
	return RangeVarGetRelid(rv, NoLock, true);
}

/* Does the cached entry still read the same tables? */
static bool
tables_unchanged(PlanEntry *e)
{
	int			i;

	for (i = 0; i < e->analysis->npreds; i++)
	{
		GdlPred    *p = &e->analysis->preds[i];

		if (p->is_edb && current_relid(e, p->name) != e->edb_relids[i])
			return false;
	}
	return true;
}

/*
 * Return a compiled plan for the program, from the cache when its version
 * and tables are unchanged, else compiled afresh and cached.
 */
GdlPlan *
gpudl_plan_acquire(const char *name, bool *cache_hit, int64 *version_out)
{
	int64		version = gpudl_program_version(name, false, NULL);
	PlanEntry  *e = find_entry(name);
	MemoryContext old;
	GpudlProgramDef *def;
	int			i;

	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(relcache_callback, (Datum) 0);
		callback_registered = true;
	}
	if (e && e->valid && e->version == version && tables_unchanged(e))
	{
		gpudl_counters.plan_cache_hits++;
		*cache_hit = true;
		*version_out = version;
		return e->plan;
	}
	if (e)
		drop_entry(e);
	gpudl_counters.plan_cache_misses++;
	*cache_hit = false;

	/* compile in a context of its own, freed if anything below fails */
	e = MemoryContextAllocZero(TopMemoryContext, sizeof(PlanEntry));
	e->cxt = AllocSetContextCreate(CacheMemoryContext, "gpudl plan", ALLOCSET_DEFAULT_SIZES);
	PG_TRY();
	{
		old = MemoryContextSwitchTo(e->cxt);
		e->name = pstrdup(name);
		def = gpudl_load_program(name);
		e->version = def->version;
		e->bindings = def->bindings;
		e->analysis = gpudl_analyze_program(def);
		e->plan = gdl_plan_compile(e->analysis);
		e->nedb = e->analysis->npreds;
		e->edb_relids = palloc0(sizeof(Oid) * (e->nedb + 1));
		for (i = 0; i < e->nedb; i++)
			if (e->analysis->preds[i].is_edb)
				e->edb_relids[i] = e->analysis->preds[i].rel.relid;
		e->valid = true;
		MemoryContextSwitchTo(old);
	}
	PG_CATCH();
	{
		MemoryContextDelete(e->cxt);
		pfree(e);
		PG_RE_THROW();
	}
	PG_END_TRY();
	old = MemoryContextSwitchTo(TopMemoryContext);
	plan_entries = lappend(plan_entries, e);
	MemoryContextSwitchTo(old);
	*version_out = e->version;
	return e->plan;
}

/* Forget a program's cached plan (gpudl_drop_program). */
void
gpudl_plan_forget(const char *name)
{
	PlanEntry  *e = find_entry(name);

	if (e)
		drop_entry(e);
}

/* Number of cached plans (for gpudl_stats). */
int
gpudl_plan_cache_size(void)
{
	return list_length(plan_entries);
}
