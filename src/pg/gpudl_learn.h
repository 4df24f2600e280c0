/*
 * gpudl_learn.h — the PostgreSQL side of rule learning (pg_learn_setup.c,
 * api_learn.c, api_derive.c).
 */
#ifndef GPUDL_LEARN_H
#define GPUDL_LEARN_H

#include "pg/gpudl_run.h"
#include "ilp/gdl_ilp.h"

#include "lib/stringinfo.h"
#include "utils/hsearch.h"

/* One learning call's inputs, read with the caller's rights. */
typedef struct GpudlLearnSetup
{
	char	   *target;
	int			arity;
	GdlType		types[GDL_ILP_MAX_ARITY];
	const char *tags[GDL_ILP_MAX_ARITY];	/* target argument tags (types argument) */
	GpudlProgramDef *def;
	GdlAnalysis *analysis;
	GdlPlan    *plan;			/* compiled lazily for derived predicates */
	GdlDict    *dict;
	int			nrels;
	GdlIlpRelation *rels;
	GdlColumns *positives;
	GdlColumns *negatives;
	GdlIlpProblem prob;
	double		deadline_ms;	/* gdl_now_ms() past which fixpoint checks are cancelled (0: none) */
} GpudlLearnSetup;

extern GpudlLearnSetup *gpudl_learn_setup(const char *program, const char *target, int arity,
										  const char *positives, const char *negatives);
extern GdlIlpEvalHook gpudl_learn_eval_hook(GpudlLearnSetup *ls);

/*
 * Types of arguments beyond their SQL types (pg_learn_types.c): the tags a
 * table's columns get from the schema (a foreign key: the referenced
 * column; a column others reference: itself; a domain: its name), the
 * target's from the domains of the positives' columns, and the
 * user's 'types' text ("f(train); has_car(train, car)") applied to the
 * background relations and the target.
 */
extern void gpudl_schema_tags(const GdlRelInfo *rel, int ncols, const char **tags);
extern void gpudl_learn_apply_types(GpudlLearnSetup *ls, const char *types);
extern void gpudl_example_tags(const char *source, int ncols, const char **tags);

/* Insert clauses into a program with learned = true; returns their ids (api_program.c). */
extern List *gpudl_insert_rules_text(const char *program, const char *rules, bool learned);

/*
 * gpudl.learn_runs rows written outside the caller's transaction
 * (pg_learn_record.c): the 'running' row at a run's start (after sweeping
 * stale ones; *autonomous false when it had to go into the caller's
 * transaction), and a failed run's row from an error path (run_id: the
 * autonomous row to close, or 0).
 */
extern int64 gpudl_learn_run_start(const char *program, const char *target, const char *params,
								   bool *autonomous);
extern void gpudl_record_failed_run(int64 run_id, const char *program, const char *target,
									const char *params, const char *message);

#endif							/* GPUDL_LEARN_H */
