/*
 * exec_int.h — internals of the engine (src/exec): the state of one run,
 * shared by the semi-naive driver (exec_seminaive.c), the rule executor
 * (exec_rule.c), the expression compiler (exec_expr.c) and the backend
 * registry (exec_backend.c).
 */
#ifndef EXEC_INT_H
#define EXEC_INT_H

#include "gdl_backend.h"
#include "gdl_engine.h"
#include "../plan/plan_int.h"

/* The relations of one predicate during a run. */
typedef struct ExecPred
{
	GdlBkRel   *full;			/* all tuples so far (a set) */
	GdlBkRel   *delta;			/* new in the last round (recursive strata) */
	GdlBkRel   *old;			/* full before the last round, when a rule reads it */
	int64_t		version;		/* bumped whenever one of the three changes */
	bool		ready;			/* loaded (EDB) or evaluated (IDB) */
} ExecPred;

/* A prepared (filtered/projected) atom relation kept while its source is unchanged. */
typedef struct PrepCache
{
	const PlanAtom *atom;
	int64_t		version;
	GdlBkRel   *rel;
} PrepCache;

/*
 * Relations derived for one predicate in one round (bags or sets).
 * 'reduced' counts the entries that are sets disjoint from the predicate's
 * full relation (a split rule's merged pieces, exec_rule.c): when every
 * entry is one, the round's candidates are their union, with no dedup.
 */
typedef struct ExecOuts
{
	int			n;
	int			cap;
	int			reduced;
	GdlBkRel  **v;
} ExecOuts;

/* State of one gdl_run. */
typedef struct ExecState
{
	const GdlPlan *plan;
	const GdlAnalysis *a;
	const GdlBackend *bk;
	void	   *ctx;
	GdlDict    *dict;
	ExecPred   *preds;
	GdlRunStats *stats;
	GdlBkRel   *unit;			/* arity 0, one row */
	int64_t		next_version;
	bool		trace;			/* GDL_TRACE set: log every round */
	bool		mirrors;		/* run mirrors, skip the versions they stand for */
	int64_t		batch_rows;		/* most rows one join may produce at once */
	int64_t		mem_limit;		/* bytes the backend may hold (exec_mem.c); 0 = none */
	bool		mem_set;		/* mem_limit set by the host, not the backend's capacity */
	int64_t		(*mem_held) (void *arg);	/* GdlRunInput.memory_held, or NULL */
	void	   *mem_arg;
	int			nprep;
	int			capprep;
	PrepCache  *prep;
} ExecState;

/* A bytecode expression under construction. */
typedef struct ExprBuf
{
	int			n;
	int			cap;
	GdlBkInsn  *code;
} ExprBuf;

/* What variable references in an expression resolve to. */
typedef struct ExprEnv
{
	const GdlClauseInfo *info;
	const GdlClause *c;
	const int  *layout;			/* variable of each input column */
	int			nlayout;
	const int  *assign_lit;		/* per variable: assigning literal or -1 */
	GdlDict    *dict;
} ExprEnv;

/* exec_backend.c */
extern void exec_check(ExecState *es, int status, const char *what);
extern void exec_set_current(const GdlBackend *bk, void *ctx);
extern int	exec_threads(void);
extern int64_t exec_batch_rows(void);

/* exec_mem.c: join slices sized by the memory limit */
extern void exec_mem_init(ExecState *es, const GdlRunInput *in);
extern int64_t exec_mem_join_rows(ExecState *es, int nout);
extern int64_t exec_mem_left_rows(ExecState *es);

/* exec_phase.c: a point in time and in kernel launches */
typedef struct ExecMark
{
	double		ms;
	int64_t		launches;
} ExecMark;

extern ExecMark exec_mark(ExecState *es);
extern void exec_charge(ExecState *es, ExecMark m, double *ms, int64_t *launches);

/* exec_expr.c */
extern void expr_init(ExprBuf *e);
extern void expr_emit(ExprBuf *e, GdlBkOp op, int32_t arg, int64_t imm);
extern GdlBkExpr expr_done(ExprBuf *e);
extern GdlType expr_term_type(const GdlClauseInfo *info, const GdlTerm *t);
extern void expr_term(const ExprEnv *env, ExprBuf *e, const GdlTerm *t, GdlType want);
extern void expr_cmp(const ExprEnv *env, ExprBuf *e, const GdlLiteral *lit);
extern int64_t expr_const_value(const GdlTerm *t, GdlType want, GdlDict *dict);
extern void expr_intern_clause(const GdlClause *c, GdlDict *dict);
extern int	expr_goal(const GdlGoal *goal, const GdlPred *pred,
					  GdlBkExpr **filters, GdlBkExpr **outs);
extern void expr_free_exprs(GdlBkExpr *filters, int nf, GdlBkExpr *outs, int nout);
extern void expr_env_init(ExprEnv *env, const GdlClauseInfo *info, const int *layout,
						  int nlayout, const int *assign_lit, GdlDict *dict);

/* exec_rule.c */
extern void exec_outs_add(ExecOuts *o, GdlBkRel *r);
extern void exec_rule(ExecState *es, const PlanRule *r, ExecOuts *out);
extern GdlBkRel *exec_empty(ExecState *es, int arity);
extern bool *exec_needed_preds(const GdlAnalysis *a, int goal);
struct PlanStratum;
extern int64_t exec_fact_columns(const GdlAnalysis *a, const struct PlanStratum *ps, int pid,
								 GdlDict *dict, int64_t **cols);
extern void exec_prep_clear(ExecState *es);
extern int64_t exec_size(ExecState *es, GdlBkRel *r);

/* exec_seminaive.c */
extern void exec_round_limit(int64_t max_iterations, int64_t rounds);
extern bool exec_stratum_needed(const struct PlanStratum *ps, const bool *need);

/* exec_part.c: the partitioned driver (issue 14); NULL = run unpartitioned */
extern GdlResult *exec_part_try(const GdlPlan *plan, const GdlRunInput *in,
								GdlDict *dict, const GdlGoal *goal);
extern void exec_part_abort(void);
extern void exec_part_forget(void *ctx);

#endif							/* EXEC_INT_H */
