/*
 * gpudl_run.h — the PostgreSQL side of running programs: the plan cache,
 * reading tables into columns, goals, and counters for gpudl_stats().
 */
#ifndef GPUDL_RUN_H
#define GPUDL_RUN_H

#include "gpudl_pg.h"
#include "exec/gdl_engine.h"

/* Counters of this backend, shown by gpudl_stats(). */
typedef struct GpudlCounters
{
	int64		plan_cache_hits;
	int64		plan_cache_misses;
	int64		runs;
	int64		rows_loaded;
	int64		last_iterations;
	int64		last_tuples;
	int64		last_result_rows;
	double		last_ms_total;
	double		last_ms_load;
	double		last_ms_join;
	double		last_ms_dedup;
	double		last_ms_difference;
	double		last_ms_merge;
	int64		bytes_to_device;
	int64		bytes_from_device;
	int64		device_transfers;
	int64		gpu_runs;
	int64		cpu_fallbacks;
} GpudlCounters;

extern GpudlCounters gpudl_counters;

/* Plan cache (pg_plancache.c). */
extern GdlPlan *gpudl_plan_acquire(const char *name, bool *cache_hit, int64 *version);
extern void gpudl_plan_forget(const char *name);
extern int	gpudl_plan_cache_size(void);

/* A parsed goal "p(X, "a", _)" against a plan's analysis. */
typedef struct GpudlGoalSpec
{
	int			pred;
	int			arity;
	GdlTerm   **args;			/* as parsed */
	GdlType    *types;
} GpudlGoalSpec;

/* Parse and check a goal (pgoal_goal.c). */
extern GpudlGoalSpec *gpudl_parse_goal(const GdlAnalysis *a, const char *goal_text);

/* Encode a goal's constants with the run's dictionary. */
extern GdlGoal *gpudl_encode_goal(const GpudlGoalSpec *g, GdlDict *dict);

/* Everything one evaluation needs (pg_run.c). */
typedef struct GpudlRun
{
	const char *program;
	GdlPlan    *plan;
	bool		cache_hit;
	int64		version;
	GpudlGoalSpec *goal;
	GdlDict    *dict;
	GdlResult  *result;
	const char *device;			/* "cpu" or "gpu" */
} GpudlRun;

/*
 * Acquire the plan, parse the goal, read tables and evaluate.  Allocates in
 * CurrentMemoryContext (the caller's per-call context).
 */
extern GpudlRun *gpudl_run_goal(const char *program, const char *goal_text, bool want_rows);

/* The EDB loader given to the engine: reads a table with the caller's rights. */
extern void gpudl_load_edb(void *arg, const GdlPred *pred, GdlDict *dict, GdlColumns *out);

/* Datum <-> engine value conversions (pg_io.c). */
extern Datum gpudl_value_to_datum(int64_t v, GdlType t, Oid typid, GdlDict *dict);
extern Oid	gpudl_type_oid(GdlType t);
extern int64_t gpudl_datum_to_value(Datum d, Oid typid, GdlDict *dict);

/* Examples from a query or table name (pg_examples.c). */
extern GdlColumns *gpudl_read_examples(const char *source, const char *what, GdlDict *dict,
									   GdlType **types_out);

/* The GPU backend to use under gpudl.device, or NULL for the CPU (pg_device.c). */
struct GdlBackend;
extern const struct GdlBackend *gpudl_choose_gpu_backend(void);

#endif							/* GPUDL_RUN_H */
