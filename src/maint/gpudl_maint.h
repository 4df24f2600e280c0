/*
 * gpudl_maint.h — maintained targets (gpudl_materialize mode 'maintain'):
 * a table kept equal to a derived relation as the program's base tables
 * change, inside the changing statement's transaction.
 *
 *   maint_unfold.c   the target's rules with the other derived predicates
 *                    they read unfolded (base tables and the target only)
 *   maint_sql.c      the rules of the target as SQL over its base tables,
 *                    the target itself and delta tables (semi-naive deltas)
 *   maint_apply.c    one change applied: delete-and-rederive for deleted
 *                    rows (over-deletion checked against the fresh
 *                    relation when it reaches far), semi-naive propagation
 *                    for inserted ones
 *   maint_diff.c     the fresh relation from the engine; the target made
 *                    equal to it
 *   maint_groups.c   ... to an aggregating target: the groups it reaches
 *                    aggregated again
 *   maint_setup.c    setting up, refreshing and forgetting a target; the
 *                    catalog row; the triggers on the base tables
 *   maint_trigger.c  the statement trigger on base tables, the drop event
 */
#ifndef GPUDL_MAINT_H
#define GPUDL_MAINT_H

#include "pg/gpudl_pg.h"
#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "portability/instr_time.h"

/* Where one body atom of a rule reads from when a delta rule is built. */
typedef enum GpudlMaintSource
{
	GPUDL_MS_CURRENT,			/* the table (or the target) as it is now */
	GPUDL_MS_BEFORE,			/* a changed base table as it was: now plus the deleted rows */
	GPUDL_MS_INSERTED,			/* the change's inserted rows (that are still there) */
	GPUDL_MS_DELETED,			/* the change's deleted rows */
	GPUDL_MS_DELTA,				/* the target's delta of this round (a temporary table) */
	GPUDL_MS_KEPT				/* the target without the rows over-deleted and not yet found again */
} GpudlMaintSource;

/* One base table's change waiting to be applied to a target (maint_pending.c). */
typedef struct GpudlMaintChange
{
	Oid			relid;
	bool		deleted;		/* rows in its pending table of deleted rows */
	bool		inserted;		/* ... of inserted rows */
	bool		truncated;		/* emptied: recompute */
	int			statements;		/* statements merged into it */
} GpudlMaintChange;

/*
 * A table one predicate of the target's rules is read from: a base table,
 * or another maintained table of the same program that holds a derived
 * predicate (so that the target reads it instead of deriving it).
 */
typedef struct GpudlMaintTable
{
	Oid			relid;
	char	   *sql;			/* its quoted qualified name */
	int			ncols;
	char	  **cols;			/* the predicate's arguments' columns, quoted */
	Oid		   *types;			/* ... and their types */
	const char *display;		/* for messages */
} GpudlMaintTable;

/* A maintained table of the program that may hold a derived predicate for others. */
typedef struct GpudlMaintHeld
{
	char	   *predicate;
	Oid			relid;
} GpudlMaintHeld;

/*
 * A maintained target's program, compiled for maintenance: the target
 * predicate's rules, what they read, and whether changes can be applied
 * incrementally (rules of the target, other derived predicates unfolded,
 * over base tables, negated base tables and the target itself, without
 * aggregates or values the engine converts).
 */
typedef struct GpudlMaintPlan
{
	Oid			target;			/* the target table */
	char	   *target_sql;		/* its quoted qualified name */
	const char *program;		/* the program and predicate it holds */
	const char *predicate;
	int			arity;
	char	  **target_cols;	/* its quoted column names */
	char	  **target_types;	/* their SQL types */
	const GdlAnalysis *analysis;
	int			pred;			/* the target predicate in analysis */
	int			nclauses;		/* the predicate's defining clauses */
	const GdlClauseInfo **clauses;
	GpudlMaintTable **tables;	/* per predicate of the analysis: the table it is read
								 * from; NULL for the target and derived predicates */
	List	   *base_relids;	/* every table the predicate depends on (Oids) */
	List	   *negated_relids; /* the tables its (unfolded) rules negate */
	bool	   *group_cols;		/* aggregating target: its group columns; else NULL */
	char	   *keys_sql;		/* ... the pg_temp table of groups a change reaches */
	bool		incremental;
	const char *why_recompute;	/* when not incremental: why */
	char	   *delta_sql;		/* pg_temp tables of this target: the round's delta */
	char	   *next_sql;		/*  ... the next round's */
	char	   *gone_sql;		/*  ... rows deleted by the change (over-deleted) */
	char	   *cand_name;		/*  ... a round's candidates to check (name in pg_temp) */
	char	   *cand_sql;
	List	   *changes;		/* the changes being applied (GpudlMaintChange *) */
} GpudlMaintPlan;

/* maint_sql.c */
extern GpudlMaintPlan *gpudl_maint_plan(const GdlAnalysis *a, int pred, Oid target, List *held);
extern bool gpudl_maint_rule_select(StringInfo out, const GpudlMaintPlan *mp, int clause,
									const GpudlMaintSource *sources, const char *restrict_to,
									bool only_in_target);
extern const char *gpudl_maint_held_hint(const GpudlMaintPlan *mp, int pred);
extern void gpudl_maint_rule_witness(StringInfo out, const GpudlMaintPlan *mp, int clause,
									 const GpudlMaintSource *sources, const char *outer);
extern bool gpudl_maint_group_select(StringInfo out, const GpudlMaintPlan *mp, int clause,
									 const GpudlMaintSource *sources, const char *keys_in);
extern const GpudlMaintChange *gpudl_maint_atom_change(const GpudlMaintPlan *mp, int clause,
													   int lit, bool *is_target);

/* maint_unfold.c: the rules over base tables and the target only (NULL), or why not */
extern const char *gpudl_maint_unfold(GpudlMaintPlan *mp);
extern bool gpudl_maint_reaches(const GdlAnalysis *a, int from, int to, int avoid,
								GpudlMaintTable **tables);

/* maint_apply.c: apply one statement's change; returns rows inserted + deleted */
typedef struct GpudlMaintStats
{
	int64		inserted;
	int64		deleted;
	int			rounds;
} GpudlMaintStats;
extern bool gpudl_maint_apply(const GpudlMaintPlan *mp, int64 limit, GpudlMaintStats *stats);
extern bool gpudl_maint_apply_groups(const GpudlMaintPlan *mp, int64 limit, GpudlMaintStats *stats);
extern double gpudl_maintain_recompute_share;
extern void gpudl_maint_temp_tables(const GpudlMaintPlan *mp);
extern uint64 gpudl_maint_exec(const char *sql, int expect);
extern char *gpudl_maint_column_list(const GpudlMaintPlan *mp);
extern double gpudl_maint_ms_since(instr_time start);
extern char *gpudl_maint_index_name(const GpudlMaintPlan *mp, int k);
extern void gpudl_maint_ensure_indexes(const GpudlMaintPlan *mp);

/* One row of gpudl.maintained_targets. */
typedef struct GpudlMaintEntry
{
	Oid			target;
	char	   *program;
	char	   *predicate;
	char	   *strategy;
	Oid			owner;
	char	   *search_path;
	int64		version;
	List	   *base_relids;
	int64		rows;
} GpudlMaintEntry;

/* maint_diff.c: the relation computed afresh by the engine */
typedef struct GpudlMaintFresh GpudlMaintFresh;
extern GpudlMaintFresh *gpudl_maint_fresh_compute(const GpudlMaintPlan *mp);
extern int64 gpudl_maint_fresh_rows(const GpudlMaintFresh *f);
extern double gpudl_maint_fresh_cost(Oid target);
extern uint64 gpudl_maint_fresh_drop_held(const GpudlMaintPlan *mp, GpudlMaintFresh *f, Oid relid,
										  const char *sql);
extern void gpudl_maint_apply_result(const GpudlMaintPlan *mp, GpudlMaintFresh *f,
									 GpudlMaintStats *stats);

/* maint_pending.c */
struct TriggerData;
extern void gpudl_maint_statement_ended(Oid relid);
extern void gpudl_maint_writing_begin(Oid target);
extern void gpudl_maint_writing_end(Oid target);
extern bool gpudl_maint_any_changing(List *relids);
extern char *gpudl_maint_pending_sql(Oid target, Oid relid, bool deleted);
extern void gpudl_maint_pending_add(Oid target, struct TriggerData *td);
extern List *gpudl_maint_pending_of(Oid target);
extern void gpudl_maint_pending_done(Oid target);

/* maint_setup.c */
extern bool gpudl_maint_catalog_present(void);
extern void gpudl_maint_require_catalog(void);
extern GpudlMaintEntry *gpudl_maint_read_entry(Oid target, bool lock, MemoryContext into);
extern List *gpudl_maint_targets_of(Oid relid, MemoryContext into);
extern GpudlMaintPlan *gpudl_maint_plan_for(const char *program, const char *predicate,
											Oid target, int64 *version, List *held_among);
extern void gpudl_maint_record_change(Oid target, const GpudlMaintStats *stats, double ms,
									  bool rows_set);
extern int64 gpudl_maint_setup(const char *program, const char *predicate, Oid target);
extern int64 gpudl_maint_refresh(Oid target, bool as_change, GpudlMaintStats *stats);
extern void gpudl_maint_program_changed(const char *program);
extern void gpudl_maint_stop(Oid target);
extern void gpudl_maint_drop_guard(Oid target);
extern void gpudl_maint_drop_unused_triggers(List *relids);

/* Run the maintenance of a target as the role that set it up, with a safe search_path. */
typedef struct GpudlMaintIdentity
{
	Oid			save_userid;
	int			save_sec;
	int			guc_level;
} GpudlMaintIdentity;
extern void gpudl_maint_become(Oid role, GpudlMaintIdentity *id);
extern void gpudl_maint_become_with_path(Oid role, const char *path, GpudlMaintIdentity *id);
extern void gpudl_maint_restore(GpudlMaintIdentity *id);

extern void gpudl_target_create(const char *target, const GdlPred *p);
extern void gpudl_target_empty(Oid relid);

#endif							/* GPUDL_MAINT_H */
