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
 *
 * With each plan live its goal-directed variants: the program rewritten by
 * magic sets for a goal predicate and binding pattern (lang_magic.c),
 * compiled on first use and dropped with the plan they derive from.  A run
 * pins the entry it uses (gpudl_plan_pin): an entry found stale while pinned
 * is unlinked at once but freed only when the last pin goes.
 */
#include "pg/gpudl_pg.h"
#include "pg/gpudl_run.h"

#include "catalog/namespace.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/inval.h"
#include "utils/memutils.h"

/* A goal-directed variant of a cached plan. */
typedef struct MagicEntry
{
	int			goal_pred;		/* in the base analysis */
	char	   *pattern;		/* bound arguments asked for: 'b'/'f' each */
	bool		usable;			/* false: no rewrite applies */
	char	   *why;			/* when not usable and worth saying: why */
	GpudlMagicPlan mp;
} MagicEntry;

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
	List	   *magic;			/* MagicEntry *, in cxt */
	int			pins;			/* runs using the entry now */
	bool		dead;			/* unlinked; free when the last pin goes */
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

/* Unlink a cache entry; free it unless a run still uses it. */
static void
drop_entry(PlanEntry *e)
{
	plan_entries = list_delete_ptr(plan_entries, e);
	if (e->pins > 0)
	{
		e->dead = true;
		return;
	}
	MemoryContextDelete(e->cxt);
	pfree(e);
}

/* Memory-context callback: a run that pinned an entry is over. */
static void
unpin_entry(void *arg)
{
	PlanEntry  *e = arg;

	e->pins--;
	if (e->dead && e->pins == 0)
	{
		MemoryContextDelete(e->cxt);
		pfree(e);
	}
}

/* The entry (linked or pinned) whose plan is 'plan', or NULL. */
static PlanEntry *
entry_of_plan(const GdlPlan *plan)
{
	ListCell   *lc;

	foreach(lc, plan_entries)
	{
		PlanEntry  *e = lfirst(lc);

		if (e->plan == plan)
			return e;
	}
	return NULL;
}

/*
 * Pin the entry of a plan until CurrentMemoryContext is reset or deleted
 * (also by an error), so that nothing frees the plan under a run.
 */
void
gpudl_plan_pin(const GdlPlan *plan)
{
	PlanEntry  *e = entry_of_plan(plan);
	MemoryContextCallback *cb;

	if (e == NULL)
		return;
	cb = palloc0(sizeof(MemoryContextCallback));
	cb->func = unpin_entry;
	cb->arg = e;
	e->pins++;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
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

	foreach(lc, e->bindings)
	{
		GpudlBinding *b = lfirst(lc);

		if (strcmp(b->predicate, pred) == 0)
			return b->relid;
	}
	return gpudl_lookup_pred_relation(pred);
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
	int64		version = gpudl_program_version(name, GPUDL_PRIV_USE, false, NULL);
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
	e = MemoryContextAllocZero(CacheMemoryContext, sizeof(PlanEntry));
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

/* Is this error one the rewrite may raise on a program (not cancel, not OOM)? */
static bool
program_error(int sqlerrcode)
{
	return sqlerrcode == ERRCODE_SYNTAX_ERROR || sqlerrcode == ERRCODE_UNDEFINED_TABLE ||
		sqlerrcode == ERRCODE_DATATYPE_MISMATCH ||
		sqlerrcode == ERRCODE_INVALID_OBJECT_DEFINITION ||
		sqlerrcode == ERRCODE_INVALID_PARAMETER_VALUE || sqlerrcode == ERRCODE_INTERNAL_ERROR;
}

/*
 * Rewrite, analyse and compile a goal-directed variant into m (allocating
 * in CurrentMemoryContext).  The rewrite is pure computation, so an error
 * it raises on some program is caught: the variant is marked unusable and
 * runs use the program as is, which is always correct.
 */
static void
build_magic(const GdlAnalysis *a, MagicEntry *m, const bool *bound)
{
	MemoryContext cxt = CurrentMemoryContext;
	GdlMagic   *gm = NULL;

	gpudl_install_host();
	PG_TRY();
	{
		gm = gdl_magic_rewrite(a, m->goal_pred, bound);
		if (gm != NULL)
		{
			m->mp.magic = gm;
			m->mp.analysis = gdl_magic_analyze(a, gm);
			m->mp.plan = gdl_plan_compile(m->mp.analysis);
			m->mp.goal_pred = gdl_analysis_find_pred(m->mp.analysis, gm->goal_name);
			m->mp.seed_pred = gdl_analysis_find_pred(m->mp.analysis, gm->seed_name);
			m->usable = m->mp.goal_pred >= 0 && m->mp.seed_pred >= 0;
		}
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (!program_error(edata->sqlerrcode))
			PG_RE_THROW();
		FlushErrorState();
		elog(DEBUG1, "gpudl: magic-sets rewrite failed: %s", edata->message);
		m->usable = false;
		m->why = psprintf("rewrite failed: %s", edata->message);
	}
	PG_END_TRY();
}

/*
 * Build a goal-directed variant: cached in its own context under the
 * entry's, or for this run only (CurrentMemoryContext) when the plan is not
 * cached.
 */
static MagicEntry *
new_magic(PlanEntry *e, const GdlAnalysis *a, int goal_pred, const char *pattern,
		  const bool *bound)
{
	MemoryContext old = CurrentMemoryContext;
	MemoryContext mcxt = e ? AllocSetContextCreate(e->cxt, "gpudl magic plan",
												   ALLOCSET_SMALL_SIZES) : old;
	MagicEntry *m;

	MemoryContextSwitchTo(mcxt);
	PG_TRY();
	{
		m = palloc0(sizeof(MagicEntry));
		m->goal_pred = goal_pred;
		m->pattern = pstrdup(pattern);
		build_magic(a, m, bound);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(old);
		if (mcxt != old)
			MemoryContextDelete(mcxt);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (e)
	{
		MemoryContextSwitchTo(e->cxt);
		e->magic = lappend(e->magic, m);
	}
	MemoryContextSwitchTo(old);
	return m;
}

/*
 * The goal-directed variant of a just acquired plan for a goal predicate
 * and the flagged bound arguments; compiled on first use.  NULL when no
 * rewrite applies.
 */
const GpudlMagicPlan *
gpudl_magic_plan_acquire(const GdlPlan *base, int goal_pred, const bool *bound,
						 bool *cache_hit, const char **why)
{
	PlanEntry  *e = entry_of_plan(base);
	const GdlAnalysis *a = gdl_plan_analysis(base);
	int			arity = a->preds[goal_pred].arity;
	char	   *pattern = palloc(arity + 1);
	MagicEntry *m = NULL;
	ListCell   *lc;
	int			i;

	for (i = 0; i < arity; i++)
		pattern[i] = bound[i] ? 'b' : 'f';
	pattern[arity] = '\0';
	*why = NULL;
	if (e != NULL)
		foreach(lc, e->magic)
		{
			MagicEntry *x = lfirst(lc);

			if (x->goal_pred == goal_pred && strcmp(x->pattern, pattern) == 0)
				m = x;
		}
	*cache_hit = m != NULL;
	if (m == NULL)
		m = new_magic(e, a, goal_pred, pattern, bound);
	*why = m->why;
	return m->usable ? &m->mp : NULL;
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
