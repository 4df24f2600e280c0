/*
 * scan.h — the GpuDatalog custom scan, shared by its three files:
 * scan_path.c (planner: paths, WHERE pushdown, plan), scan_exec.c
 * (executor: run, stream, rescan) and scan_explain.c (EXPLAIN).  It lives
 * with the SQL functions (src/api) because it runs gpudl_query and
 * gpudl_count in place of their function scans.
 *
 * The plan node (CustomScan, scanrelid 0, one custom_scan_tlist entry per
 * column of the function) carries:
 *   custom_exprs   program argument, goal argument, then one pushed-down
 *                  condition per pushed argument ("col = value" as planned)
 *   custom_private list of: Integer kind (GPUDL_SCAN_*), Integer flags
 *                  (GPUDL_SCAN_COUNT_ONLY), List of Integer goal argument
 *                  per pushed condition, List of Integer: which side of
 *                  that condition's operator (0 or 1) is the column
 */
#ifndef GPUDL_SCAN_H
#define GPUDL_SCAN_H

#include "pg/gpudl_run.h"

#include "nodes/execnodes.h"
#include "nodes/extensible.h"

#define GPUDL_SCAN_NAME "GpuDatalog"

/* Register the planner hook (scan_path.c; from _PG_init). */
extern void gpudl_scan_init(void);

/* Which function the scan runs. */
#define GPUDL_SCAN_QUERY	0	/* gpudl_query: the goal's answers */
#define GPUDL_SCAN_COUNT	1	/* gpudl_count: one row, the number of answers */

/* Plan flags. */
#define GPUDL_SCAN_COUNT_ONLY	0x01	/* no column is read: count in the engine */

/* Positions in custom_private. */
#define GPUDL_PRIV_KIND		0
#define GPUDL_PRIV_FLAGS	1
#define GPUDL_PRIV_ARGS		2
#define GPUDL_PRIV_SIDES	3

/* Totals of the runs of one scan node, for EXPLAIN ANALYZE. */
typedef struct GpudlScanTotals
{
	int64		runs;
	int64		cache_hits;
	int64		cache_misses;
	int64		iterations;
	int64		tuples;
	double		ms_total;
	int64		bytes_to_device;
	int64		bytes_from_device;
	int64		launches;		/* device kernels (GdlRunStats.launches) */
	int64		library_calls;
	int			nstrata;
	int64	   *stratum_tuples; /* per stratum of the last run's analysis */
	bool	   *stratum_needed;
	int			nneeded;
	/* what the last run was */
	char	   *program;
	int64		version;
	char	   *bound_goal;		/* the goal with pushed values bound */
	char	   *evaluation;		/* "magic sets (...)" or "whole program" */
	char	   *device;
	bool		empty;			/* a pushed value left no answer (no run) */
	int			nparts;			/* partitions of the last run (issue 14), 0: none */
	struct GdlPartStats *parts;
} GpudlScanTotals;

/* Execution state of one GpuDatalog scan node. */
typedef struct GpudlScanState
{
	CustomScanState css;
	int			kind;			/* GPUDL_SCAN_QUERY or _COUNT */
	bool		count_only;
	ExprState  *program_expr;
	ExprState  *goal_expr;
	int			npushed;
	int		   *pushed_args;	/* goal argument per pushed condition */
	ExprState **pushed_exprs;	/* the value side */
	Oid		   *pushed_types;
	Bitmapset  *exec_params;	/* PARAM_EXEC ids the arguments depend on */
	MemoryContext run_cxt;		/* the current run: pinned plans, answers */
	MemoryContext row_cxt;		/* the values of the row last returned */
	GpudlRun   *run;			/* NULL until the first fetch after a (re)start */
	size_t		nrows;			/* rows the current run returns */
	size_t		pos;			/* next row in a forward scan */
	bool		eof;
	GpudlScanTotals totals;
	GpudlRun   *explain_run;	/* EXPLAIN without ANALYZE: prepared, not run */
	bool	   *pushed_unknown; /* EXPLAIN: per pushed condition, value not known yet */
} GpudlScanState;

/* scan_exec.c */
extern Node *gpudl_scan_create_state(CustomScan *cscan);

/* scan_explain.c */
extern void gpudl_scan_explain(CustomScanState *node, List *ancestors, ExplainState *es);
extern void gpudl_scan_note_run(GpudlScanState *st, GpudlRun *run);

#endif							/* GPUDL_SCAN_H */
