/*
 * plan_int.h — the compiled plan (GdlPlan) as the planner builds it and the
 * engine reads it: per stratum, the rule versions to run once at the start
 * and the semi-naive delta versions to run every round, each a short list
 * of steps over an intermediate relation whose columns are variables.
 *
 * A rule version is executed as:
 *   START  the first positive atom's relation (delta version: the delta
 *          atom), or the unit relation (one empty row) for a body without
 *          positive atoms;
 *   JOIN   with a positive atom on the variables both share (none: a cross
 *          product), keeping only the variables needed later;
 *   MAP    comparisons as filters and assignments as computed columns, as
 *          soon as their variables are bound; the last MAP computes the
 *          head's arguments (or, for an aggregate rule, keeps every body
 *          variable for the aggregation);
 *   ANTI   a negated atom, once its variables are bound.
 * Every atom is first "prepared": filtered by its constants and repeated
 * variables and projected to its distinct named variables (no work when its
 * arguments already are distinct variables).
 */
#ifndef PLAN_INT_H
#define PLAN_INT_H

#include "gdl_plan.h"

/*
 * An output column of a join: column 'col' of the left (side 0) or right
 * (1) input.  The engine hands these to the backend as GdlBkColRef, the
 * same two fields (exec_rule.c).
 */
typedef struct PlanColRef
{
	int			side;
	int			col;
} PlanColRef;

/* Which version of a predicate's relation an atom reads. */
typedef enum PlanSrc
{
	PLAN_SRC_FULL,				/* everything derived so far (EDB: the table) */
	PLAN_SRC_DELTA,				/* tuples new in the last round */
	PLAN_SRC_OLD				/* full minus delta: full before the last round */
} PlanSrc;

/* An atom as read by a step: relation, filters, and variable columns. */
typedef struct PlanAtom
{
	int			lit;			/* body literal index */
	int			pred;
	PlanSrc		src;
	bool		trivial;		/* args are distinct variables: no preparation */
	bool		sorted;			/* prepared columns reordered: sort (dedup) them */
	int			nvars;			/* columns of the prepared relation */
	int		   *vars;			/* variable of each column */
	int		   *cols;			/* predicate column of each (first occurrence) */
	int			nconst;			/* filters: column == constant */
	int		   *const_col;
	GdlTerm   **const_term;
	int			neq;			/* filters: column == column (repeated variable) */
	int		   *eq_a;
	int		   *eq_b;
} PlanAtom;

typedef enum PlanStepKind
{
	PSTEP_START,
	PSTEP_UNIT,
	PSTEP_JOIN,
	PSTEP_MAP,
	PSTEP_ANTI
} PlanStepKind;

typedef struct PlanStep
{
	PlanStepKind kind;
	PlanAtom	atom;			/* START, JOIN, ANTI */
	/* JOIN/ANTI: keys as columns of the input layout and of the prepared atom */
	int			nkeys;
	int		   *lkeys;
	int		   *rkeys;
	bool		sort_left;		/* JOIN: dedup (sort) the input first: output comes grouped */
	/* MAP: comparison literals applied as filters, in order */
	int			nfilters;
	int		   *filters;
	bool		is_head;		/* MAP: outputs are the head's arguments */
	/* layout after the step: the variable of each column (-1 for head outputs) */
	int			nvars;
	int		   *vars;
	PlanColRef *refs;			/* JOIN: where each output column comes from */
} PlanStep;

/* One version of one clause. */
typedef struct PlanRule
{
	int			clause;			/* index into GdlAnalysis.clauses */
	int			delta_lit;		/* delta version: the literal reading delta; else -1 */
	int			head_pred;
	bool		is_agg;			/* head has aggregates: the last step keeps body vars */
	bool		head_in_join;	/* the last JOIN writes the head tuples directly */
	int		   *assign_lit;		/* per variable: literal assigning it, or -1 */
	int			nsteps;
	PlanStep   *steps;
	/*
	 * Mirrors (plan_mirror.c): a version whose rows, with head column i
	 * taken from column mirror_perm[i], stand for the version of delta
	 * literal mirror_skips (NULL: none); that version is marked mirrored
	 * (mirror_of: the delta literal of the version that stands for it) and
	 * skipped by the single-device driver.  When the head predicate is
	 * itself symmetric, its full relation is, so the rows it already holds
	 * are taken out before mirroring (their mirrors are held too).
	 */
	int		   *mirror_perm;
	bool		mirror_sym_head;	/* the head predicate is symmetric: mirror only what is new */
	int			mirror_skips;
	bool		mirrored;
	int			mirror_of;
} PlanRule;

typedef struct PlanStratum
{
	int			index;			/* GdlAnalysis stratum index */
	bool		recursive;
	int			npreds;
	int		   *preds;
	int			nfacts;			/* clauses without body whose args are constants */
	int		   *facts;
	int			ninit;			/* run once at the start (non-recursive rules) */
	PlanRule   *init;
	int			nrec;			/* delta versions, run every round */
	PlanRule   *rec;
} PlanStratum;

struct GdlPlan
{
	const GdlAnalysis *a;
	int			nstrata;
	PlanStratum *strata;		/* in evaluation order */
	int		   *pred_stratum;	/* per predicate: index into strata, -1 for EDB */
	bool		needs_ranks;	/* text ordering comparisons or text min/max */
};

/* Mark the delta versions of a stratum that mirror one another (plan_mirror.c). */
extern void plan_mark_mirrors(const GdlAnalysis *a, PlanStratum *ps);

/* Is a term a constant literal (no variables, no operators)? */
extern bool plan_term_is_const(const GdlTerm *t);

/* Print a term of clause c into b (variables by name). */
extern void plan_print_term(GdlBuf *b, const GdlClause *c, const GdlTerm *t);

#endif							/* PLAN_INT_H */
