/*
 * exec_part_int.h — internals of the partitioned driver (issue 14): the
 * state of one partitioned run, shared by the driver (exec_part_run.c,
 * exec_part.c), its settings (exec_part_conf.c), the
 * choice of partition keys per rule (exec_part_plan.c) and the exchange
 * of tuples between partitions (exec_part_xchg.c).
 *
 * A predicate's relation exists in one or more LAYOUTS: partitioned by the
 * hash of one column (each partition holds the rows whose key column hashes
 * to it), or replicated (every partition holds every row).  A derived
 * predicate has a PRIMARY layout, keyed by the column its recursive rule
 * joins its delta on: the owner of a tuple deduplicates it there.  Other
 * layouts a rule needs are kept up to date by exchanging each round's new
 * tuples (re-keyed), or built once for a predicate that is complete (an
 * extensional table, a lower stratum).
 */
#ifndef EXEC_PART_INT_H
#define EXEC_PART_INT_H

#include "exec_int.h"
#include "gdl_part.h"

/* One layout of a predicate: per partition, its full, delta and old relations. */
typedef struct PartLayout
{
	bool		present;
	int			key;			/* partition column, -1 = replicated */
	GdlBkRel  **full;			/* [P] */
	GdlBkRel  **delta;			/* [P] (derived predicates while their stratum runs) */
	GdlBkRel  **old;			/* [P] */
	int64_t		version;		/* changes whenever the relations do */
} PartLayout;

/* A predicate during a partitioned run. */
typedef struct PartPred
{
	PartLayout *lay;			/* arity + 1 entries: lay[key + 1] */
	int			primary;		/* key of the primary layout (derived predicates) */
	bool		complete;		/* loaded, or its stratum finished */
	bool		in_stratum;		/* derived in the stratum being evaluated */
	int64_t		nrows;			/* extensional: rows of the table */
	GdlColumns	host;			/* extensional: the table's rows (kept to build layouts) */
} PartPred;

/* How one rule version runs: the layout key of each atom step. */
typedef struct PartBind
{
	int		   *key;			/* per step (atoms only; -1 replicated) */
	int			var;			/* the partition variable, -1 none */
	bool		all_parts;		/* some atom is partitioned: run in every partition */
} PartBind;

/* State of one partitioned run. */
typedef struct PartRun
{
	const GdlPlan *plan;
	const GdlAnalysis *a;
	const GdlBackend *bk;
	int			P;
	ExecState  *es;				/* [P]: a context, relations bound per rule */
	GdlRunStats *pstats;		/* [P]: each partition's phase counters */
	GdlPartStats *ps;			/* [P]: what the host sees (GdlRunStats.parts) */
	int		   *dev;			/* [P]: device of each partition, -1 none */
	int			cur_dev;		/* device selected last (-1: none yet) */
	PartPred   *preds;
	int64_t		next_version;
	int64_t		min_rows;		/* smaller tables are replicated */
	bool		trace;
} PartRun;

/* exec_part_conf.c */
extern int	part_choose(const GdlBackend *bk, const GdlRunInput *in, int *dev);
extern void part_live_begin(const GdlBackend *bk);
extern void part_live_set(int p, void *ctx);
extern void part_live_end(void);
extern int64_t part_min_rows_setting(void);

/* exec_part.c */
extern void part_eval_stratum(PartRun *pr, const PlanStratum *ps, const GdlRunInput *in);
extern void part_select(PartRun *pr, int p);
extern PartLayout *part_layout(PartRun *pr, int pid, int key);
extern GdlBkRel *part_upload(PartRun *pr, int p, int ncols, int64_t nrows, int64_t *const *cols);

/* exec_part_plan.c */
extern int	part_main_step(const PlanRule *r);
extern void part_bind_rule(PartRun *pr, const PlanStratum *ps, const PlanRule *r, int head_key,
						   PartBind *b);
extern int	part_primary_key(PartRun *pr, const PlanStratum *ps, int pid,
							 const PartBind *init, const PartBind *rec);
extern const PlanRule *part_rule_at(const PlanStratum *ps, const PartBind *init,
									const PartBind *rec, int i, const PartBind **bind);

/* exec_part_xchg.c: the host (memcpy) exchange */
extern int	part_owner(int64_t v, int P);
extern void part_exchange(PartRun *pr, GdlBkRel *const *src, int arity, int key, GdlBkRel **dst);
extern void part_split_host(PartRun *pr, const GdlColumns *cols, int key, GdlBkRel **dst);

#endif							/* EXEC_PART_INT_H */
