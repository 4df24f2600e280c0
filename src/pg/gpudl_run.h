/*
 * gpudl_run.h — the PostgreSQL side of running programs: the plan cache,
 * reading tables into columns, goals, and counters for gpudl_stats().
 */
#ifndef GPUDL_RUN_H
#define GPUDL_RUN_H

#include "pg/gpudl_pg.h"
#include "exec/gdl_engine.h"
#include "access/tupdesc.h"

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
	int64		cache_reads;		/* predicates served from gpudl_load's buffers */
	int64		device_cache_reads;	/* ... of them from the copy on the device */
	int64		last_launches_load;	/* device kernels of the last run, per phase */
	int64		last_launches_join;
	int64		last_launches_dedup;
	int64		last_launches_difference;
	int64		last_launches_merge;
	int64		last_launches;		/* ... all of them */
	int64		last_library_calls;	/* device library (CUB) calls of the last run */
	int64		last_peak_device_bytes;	/* most device memory the last run held */
	int64		last_peak_host_bytes;	/* most host memory the last statement's runs held */
	int64		last_batches;	/* join slices the last run ran (memory limit, batch size) */
} GpudlCounters;

extern GpudlCounters gpudl_counters;

/* Plan cache (pg_plancache.c). */
extern GdlPlan *gpudl_plan_acquire(const char *name, bool *cache_hit, int64 *version);
extern void gpudl_plan_forget(const char *name);
extern int	gpudl_plan_cache_size(void);

/*
 * Keep a plan acquired above valid (not freed by a later acquire that finds
 * it stale) until CurrentMemoryContext is reset or deleted.
 */
extern void gpudl_plan_pin(const GdlPlan *plan);

/*
 * A goal-directed plan: the program rewritten by magic sets for one goal
 * predicate and binding pattern (lang_magic.c), analysed and compiled.
 */
typedef struct GpudlMagicPlan
{
	const GdlMagic *magic;
	const GdlAnalysis *analysis;
	const GdlPlan *plan;
	int			goal_pred;		/* the goal predicate in 'analysis' */
	int			seed_pred;		/* the seed (goal constants) in 'analysis' */
} GpudlMagicPlan;

/*
 * The goal-directed plan of a program (whose plan 'base' was just acquired)
 * for goal predicate goal_pred (of the base analysis) with the flagged
 * arguments bound, cached with the base plan per (goal, pattern).  NULL when
 * no rewrite applies; then *why says why when it is worth saying.
 */
extern const GpudlMagicPlan *gpudl_magic_plan_acquire(const GdlPlan *base, int goal_pred,
													  const bool *bound, bool *cache_hit,
													  const char **why);

/* A parsed goal "p(X, "a", _)" against a plan's analysis. */
typedef struct GpudlGoalSpec
{
	int			pred;
	int			arity;
	GdlTerm   **args;			/* as parsed, then bound (gpudl_goal_bind) */
	GdlType    *types;
	GdlClause  *clause;			/* the parsed goal (names its variables) */
} GpudlGoalSpec;

/* Parse and check a goal (pgoal_goal.c). */
extern GpudlGoalSpec *gpudl_parse_goal(const GdlAnalysis *a, const char *goal_text);

/* Encode a goal's constants with the run's dictionary. */
extern GdlGoal *gpudl_encode_goal(const GpudlGoalSpec *g, GdlDict *dict);

/* Bind an argument to a constant; false when the goal then has no answer. */
extern bool gpudl_goal_bind(GpudlGoalSpec *g, int arg, GdlTerm *value);

/* Flag bound arguments: constants plus extra[] (and their variables). */
extern void gpudl_goal_bound_args(const GpudlGoalSpec *g, const int *extra, int nextra,
								  bool *bound);

/* The goal as text, bound arguments as constants. */
extern char *gpudl_goal_to_string(const GpudlGoalSpec *g, const GdlAnalysis *a);

/* A goal constant for a non-null Datum (integers, text, bool), else NULL. */
extern GdlTerm *gpudl_datum_to_term(Datum d, Oid typid);

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
	/* goal-directed evaluation and pushdown (gpudl_run_prepare) */
	bool		empty;			/* a pushed constant contradicts the goal: no answers */
	bool	   *bound;			/* per goal argument: bound by a constant */
	const GpudlMagicPlan *magic;	/* the rewritten plan, or NULL: the program as is */
	bool		magic_cache_hit;
	const char *magic_why;		/* why there is no rewrite, when worth saying */
	GdlGoal    *encoded;		/* the goal, encoded with dict */
	bool		want_rows;
	const char *goal_text;		/* as given (admission history, gpudl_gpu_jobs) */
} GpudlRun;

/* How to evaluate (gpudl_run_prepare). */
typedef struct GpudlRunOptions
{
	bool		want_rows;
	bool		goal_directed;	/* rewrite for bound goal arguments (and gpudl.enable_magic) */
	int			npushed;		/* goal arguments bound by pushed-down conditions */
	const int  *pushed_args;
	GdlTerm *const *pushed_values;	/* per pushed argument: its constant; NULL = not known yet */
} GpudlRunOptions;

/*
 * Acquire the plan, parse the goal, read tables and evaluate.  Allocates in
 * CurrentMemoryContext (the caller's per-call context).  Goals with
 * constants are evaluated goal-directed (gpudl.enable_magic).
 */
extern GpudlRun *gpudl_run_goal(const char *program, const char *goal_text, bool want_rows);

/*
 * The steps of gpudl_run_goal for callers that look in between (the
 * GpuDatalog scan): prepare acquires the plans (pinned to
 * CurrentMemoryContext), parses and binds the goal and chooses the
 * goal-directed plan; execute reads the tables and evaluates (not when
 * run->empty).  A prepared run with unknown pushed values can be explained
 * but not executed.
 */
extern GpudlRun *gpudl_run_prepare(const char *program, const char *goal_text,
								   const GpudlRunOptions *opts);
extern void gpudl_run_execute(GpudlRun *run);

/* The analysis a prepared run evaluates, and its goal predicate there. */
extern const GdlAnalysis *gpudl_run_analysis(const GpudlRun *run, int *goal_pred);

/* Per stratum of that analysis: does the goal need it?  Returns how many do. */
extern int	gpudl_run_strata(const GpudlRun *run, bool *needed);

/* The EDB loader given to the engine: reads a table with the caller's rights. */
extern void gpudl_load_edb(void *arg, const GdlPred *pred, GdlDict *dict, GdlColumns *out);

/* One CPU run of a plan for the rows of goal predicate pred (pg_io.c). */
extern GdlResult *gpudl_run_cpu_goal(GdlPlan *plan, GdlDict *dict, int pred,
									 void (*progress) (void *arg, const struct GdlProgress *p));

/* A predicate's rows for learning and mining: its table, or derived on the CPU (pg_io.c). */
extern void gpudl_predicate_rows(GdlAnalysis *analysis, GdlPlan **plan, GdlDict *dict,
								 const GdlPred *p, GdlColumns *out);

/*
 * While set, the change-count trigger (gpudl._cache_invalidate) counts
 * nothing: a writer of many rows one statement each (gpudl_mine's commit)
 * counts its change once with one statement of its own instead of once per
 * row (an UPDATE of one row per INSERT made committing 100,000 rules take
 * minutes).  pg_cache.c.
 */
extern bool gpudl_change_count_paused;

/* Serve a predicate from a table loaded with gpudl_load (pg_cache.c). */
extern bool gpudl_cache_read(const GdlPred *pred, GdlDict *dict, GdlColumns *out);
extern bool gpudl_cache_resident(const GdlPred *pred, const struct GdlBackend *bk, GdlDict *dict,
								 GdlResidentRef *out);

/*
 * Column types and Datum <-> engine value conversions (pg_types.c): how a
 * PostgreSQL type is read (domains resolved to their base type).
 */
typedef enum GpudlValueKind
{
	GPUDL_VK_NONE = 0,			/* not read: refused, or a placeholder under _ */
	GPUDL_VK_INT2,
	GPUDL_VK_INT4,
	GPUDL_VK_INT8,
	GPUDL_VK_BOOL,
	GPUDL_VK_FLOAT4,
	GPUDL_VK_FLOAT8,
	GPUDL_VK_NAME,
	GPUDL_VK_STRING,			/* text, varchar, bpchar */
	GPUDL_VK_DATE,				/* int32 days -> int */
	GPUDL_VK_TIMESTAMP,			/* timestamp, timestamptz: int64 microseconds -> bigint */
	GPUDL_VK_TIME,				/* time: int64 microseconds -> bigint */
	GPUDL_VK_INT64,				/* money: int64 -> bigint */
	GPUDL_VK_OID,				/* oid, reg*: uint32 -> bigint */
	GPUDL_VK_NUMERIC,			/* text of trim_scale(value) */
	GPUDL_VK_TEXTOUT			/* uuid, inet, enums, ...: text output */
} GpudlValueKind;

/* A prepared reader of one column's values. */
typedef struct GpudlReader
{
	Oid			typid;
	GpudlValueKind kind;
	FmgrInfo	out;			/* NUMERIC, TEXTOUT: the output function */
} GpudlReader;

extern GpudlValueKind gpudl_value_kind(Oid typid);
extern bool gpudl_type_is_mapped(Oid typid);
extern void gpudl_reader_init(GpudlReader *r, Oid typid);
extern int64_t gpudl_reader_value(const GpudlReader *r, Datum d, GdlDict *dict);

/* The rows of SPI_tuptable into columns from row n on; the new count (pg_io.c). */
extern size_t gpudl_read_spi_rows(const GpudlReader *readers, int ncols, GdlDict *dict,
								  int64_t **cols, size_t n);
extern Datum gpudl_value_to_datum(int64_t v, GdlType t, Oid typid, GdlDict *dict);
extern int	gpudl_unreadable_column(const GdlPred *p);
extern void gpudl_report_unreadable(int elevel, const GdlPred *p, int c, const char *what);
extern Oid	gpudl_type_oid(GdlType t);
extern int64_t gpudl_datum_to_value(Datum d, Oid typid, GdlDict *dict);
extern bool gpudl_type_compatible(GdlType t, Oid typid);
extern void gpudl_check_result_desc(TupleDesc desc, const GpudlRun *run, const char *goal_text);

/* Examples from a query or table name (pg_examples.c). */
/* Is the text a relation name ("Child Pos", s.t) rather than a query? */
extern bool gpudl_looks_like_relation_name(const char *s);
extern GdlColumns *gpudl_read_examples(const char *source, const char *what, GdlDict *dict,
									   GdlType **types_out);

/* Settings of the GpuDatalog scan and goal-directed evaluation (pg_gucs.c). */
extern bool gpudl_enable_customscan;
extern bool gpudl_enable_pushdown;
extern bool gpudl_enable_magic;
extern bool gpudl_explain_machine_details;

/* gpudl.maintain_check_deletions: when over-deletion is checked against the fresh relation */
typedef enum GpudlCheckDeletions
{
	GPUDL_CHECK_AUTO,			/* when the unchecked one reaches far */
	GPUDL_CHECK_ALWAYS,			/* from the start (an engine run per deleting change) */
	GPUDL_CHECK_NEVER			/* never: past its bound, recompute */
} GpudlCheckDeletions;
extern int	gpudl_maintain_check_deletions;

/* The GPU backend to use under gpudl.device, or NULL for the CPU (pg_device.c). */
struct GdlBackend;
extern const struct GdlBackend *gpudl_choose_gpu_backend(void);

/* Append a run's rows to a target table (pg_io.c; gpudl_materialize, src/maint). */
extern void gpudl_target_insert_rows(Oid relid, GpudlRun *run);

struct SvcAdmission;
/* host memory of a session's CPU run, tied to an admission (pg_host.c) */
#define GPUDL_HOST_BUSY_MSG "gpudl: the cluster's host memory for evaluations is in use"
extern void gpudl_memory_admission(struct SvcAdmission *adm);
extern int64 gpudl_memory_peak(void);
extern int64 gpudl_memory_held(void);
extern int64 gpudl_memory_room(void);
extern int64_t gpudl_memory_run_held(void *arg);
extern void gpudl_memory_set_held(int64 bytes);

#endif							/* GPUDL_RUN_H */
