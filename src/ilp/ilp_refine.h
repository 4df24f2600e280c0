/*
 * ilp_refine.h — the refinement search of rule learning (issue 15): targets
 * and background relations of any arity up to GDL_ILP_MAX_ARITY, bodies of
 * up to GDL_ILP_MAX_BODY atoms, argument types from the schema.
 *
 *   ilp_nworld.c   the world: type classes, relations indexed per argument,
 *                  examples (negatives generated when none are given)
 *   ilp_nsolve.c   does a rule derive a head tuple (a join driven from it)
 *   ilp_nrule.c    refinements under the bias, canonical keys
 *   ilp_nfix.c     a candidate program's fixpoint by the engine (recursion)
 *   ilp_ninvent.c  invented helpers: closures and unions of binary relations
 *   ilp_refine.c   beam refinement and sequential covering (the driver)
 *
 * Values stay the caller's 64-bit encoded values; relations are kept
 * sorted per argument, so a bound argument finds its tuples by binary
 * search.  Memory is proportional to the data plus the beam's coverage
 * lists (at most beam x examples ids): no closure, no matrix of the bias.
 */
#ifndef ILP_REFINE_H
#define ILP_REFINE_H

#include "ilp_int.h"

#define NX_MAX_ARITY	GDL_ILP_MAX_ARITY
#define NX_MAX_ATOMS	GDL_ILP_MAX_BODY
#define NX_MAX_VARS		12

/* What a relation of the world is: data, or an invented helper (ilp_ninvent.c). */
#define NX_HELPER_NONE		0
#define NX_HELPER_CLOSURE	1	/* base[0]'s transitive closure */
#define NX_HELPER_UNION		2	/* base[0] union base[1] */

/* A background relation: distinct tuples, and each argument's sort order. */
typedef struct NxRel
{
	char	   *name;
	int			arity;
	int8_t		helper;			/* NX_HELPER_*: an invented predicate when not NONE */
	int16_t		base[2];		/* a helper's relations (indexes into the world's) */
	int			cls[NX_MAX_ARITY];	/* type class per argument */
	int64_t		n;
	int64_t    *col[NX_MAX_ARITY];	/* col[k][t]: argument k of tuple t */
	int32_t    *perm[NX_MAX_ARITY]; /* tuples ordered by argument k */
	int64_t    *sval[NX_MAX_ARITY]; /* col[k] in that order (binary search) */
} NxRel;

/* Everything the refinement search works on. */
typedef struct NxWorld
{
	int			nclass;
	bool	   *compat;			/* nclass x nclass: may share a variable */
	char	  **class_name;		/* per class, for messages */
	int			nrels;
	NxRel	   *rels;			/* sorted by name */
	const char *target;
	int			arity;
	int			cls[NX_MAX_ARITY];	/* target argument classes */
	int32_t		npos;
	int32_t		nneg;
	int64_t    *ex[NX_MAX_ARITY];	/* positives 0..npos-1, then negatives */
	bool		generated_neg;
	int			nnotes;			/* relations left out, and why */
	char	  **notes;
	/*
	 * Recursion through the target (allow_recursive): rels[target_rel] is
	 * the target itself, its tuples what the search may assume of it (the
	 * program's fixpoint, with the positives while searching); known holds
	 * the target's known facts (a relation named like it), where every
	 * fixpoint starts.  target_rel -1: no recursion.
	 */
	int			target_rel;
	NxRel		known;
} NxWorld;

/* An atom pred(args...) of a rule body; args are variable numbers. */
typedef struct NxAtom
{
	int16_t		pred;
	int8_t		args[NX_MAX_ARITY];
} NxAtom;

/* A rule: head variables 0..arity-1, then body variables in first use. */
typedef struct NxRule
{
	int8_t		natoms;
	int8_t		nvars;
	int8_t		vcls[NX_MAX_VARS];
	NxAtom		atoms[NX_MAX_ATOMS];
} NxRule;

/*
 * How a rule is joined: atoms in order, each argument bound or binding.
 * rest[i]: the variables bound before step i that steps i.. use — what the
 * rest of the join depends on; memo[i]: some bound variable is not in it,
 * so the same rest may be asked again and its answer is tabled.
 */
typedef struct NxPlan
{
	int			n;
	int8_t		atom[NX_MAX_ATOMS];
	uint8_t		bound[NX_MAX_ATOMS];	/* bit k: argument k's variable bound before */
	uint32_t	rest[NX_MAX_ATOMS];
	bool		memo[NX_MAX_ATOMS];
} NxPlan;

/* A tabled answer of the rest of a join (two hashes of step and values). */
typedef struct NxMemoEntry
{
	uint64_t	h1;
	uint64_t	h2;
	uint32_t	gen;			/* valid when equal to the table's generation */
	bool		ans;
} NxMemoEntry;

#define NX_MEMO_SIZE	(1 << 16)

/*
 * The table of tabled rests, shared by copies of a solver (the generation
 * lives here so that no copy reuses another's).
 */
typedef struct NxMemo
{
	NxMemoEntry *e;				/* NX_MEMO_SIZE entries */
	uint32_t	gen;			/* the newest generation handed out */
	uint32_t	cur;			/* the generation being joined */
	int32_t		n;				/* entries of the current generation */
} NxMemo;

/* State of the joins of one search (step counts for interrupts, deadline). */
typedef struct NxSolver
{
	const NxWorld *w;
	int64_t		steps;
	double		deadline;		/* ilp_now() seconds; 0 none */
	bool		expired;
	NxMemo	   *memo;			/* allocated on first use, shared by copies */
} NxSolver;

extern NxWorld *nx_world_build(const GdlIlpProblem *prob, int64_t seed, int neg_per_pos,
							   bool recursive, bool helpers);
extern int	nx_world_add_helpers(NxWorld *w);
extern int	nx_helper_literals(const NxRel *r);
extern char *nx_helper_text(const NxWorld *w, int i);
extern void nx_rel_set(NxRel *r, const GdlColumns *rows);
extern void nx_rel_clear(NxRel *r);
extern bool nx_rel_has(const NxRel *r, const int64_t *tuple);
extern void nx_world_set_target(NxWorld *w, const NxRel *facts, bool with_positives);
extern bool nx_rule_recursive(const NxWorld *w, const NxRule *r);
extern void nx_fixpoint(const NxWorld *w, const NxRule *rules, int nrules, const NxRel *start,
						NxRel *out);
extern bool nx_compat(const NxWorld *w, int a, int b);
extern void nx_plan(const NxWorld *w, const NxRule *r, NxPlan *p);
extern bool nx_derives(NxSolver *s, const NxRule *r, const NxPlan *p, const int64_t *head);
extern int32_t nx_cover(NxSolver *s, const NxRule *r, const int32_t *from, int32_t nfrom,
						int32_t *out);
extern char *nx_rule_text(const NxWorld *w, const NxRule *r);
extern void nx_rule_canon(NxRule *r, int arity);
extern uint64_t nx_rule_key(const NxRule *r);
extern bool nx_rule_safe(const NxRule *r, int arity);
extern int	nx_refinements(const NxWorld *w, const NxRule *r, int max_vars, NxRule **out);

extern GdlIlpResult *ilp_refine_learn(const GdlIlpProblem *prob, const GdlIlpParams *params);
/* Does this problem need the refinement search (GDL_ILP_AUTO)? */
extern bool ilp_refine_needed(const GdlIlpProblem *prob, const GdlIlpParams *params);

#endif							/* ILP_REFINE_H */
