/*
 * ilp_int.h — internal data structures shared by the files of src/ilp.
 *
 *   ilp_rel.c         indexed relations (CSR both ways), closures, and the
 *                     comparators and sorted-array search the files share
 *   ilp_world.c       value domains, predicates, examples
 *   ilp_negatives.c   negatives when none are given (PCA or closed world)
 *   ilp_rule.c        candidate rules: canonical form, text, template
 *   ilp_candidates.c  the bias, enumerated top-down with support pruning
 *   ilp_coverage.c    join plans, example-driven coverage, CSR matrix
 *   ilp_loss.c        noisy-or forward and backward
 *   ilp_adam.c        the optimiser
 *   ilp_fixpoint.c    a bottom-up evaluator for selected programs
 *   ilp_eval.c        gdl_ilp_eval_program: learned source text, evaluated
 *   ilp_select.c      greedy program selection, checked at fixpoint
 *   ilp_tighten.c     specialising selected rules the data says are too general
 *   ilp_metrics.c     precision / recall / support and AMIE measures
 *   ilp_learn.c       the driver (gdl_ilp_learn)
 *   ilp_api.c         gdl_ilp_candidates and gdl_ilp_loss_grad
 *
 * The refinement search for any arity and long bodies (issue 15) has its
 * own header, ilp_refine.h (ilp_nworld.c, ilp_nsolve.c, ilp_nrule.c,
 * ilp_refine.c).
 */
#ifndef ILP_INT_H
#define ILP_INT_H

#include "gdl_ilp.h"

#define ILP_MAX_ATOMS	3
#define ILP_MAX_LITS	(ILP_MAX_ATOMS + 1)		/* atoms plus one inequality */
#define ILP_MAX_VARS	8
#define ILP_NCLASS		5		/* value classes: int, text, bool, float, other */

/* A hash set of 64-bit keys (open addressing, key + 1 stored, 0 empty). */
typedef struct IlpKeySet
{
	int64_t		n;
	int64_t		cap;
	uint64_t   *slots;
} IlpKeySet;

/* ------------------------------------------------------------ relations */

/*
 * A unary or binary relation over dense value ids, indexed both ways.
 * Tuples are distinct and sorted by (a, b); fwd lists the b's of each a in
 * order (it is 'b' itself), bwd the a's of each b.
 */
typedef struct IlpRel
{
	int			arity;
	int32_t		ndom[2];		/* size of each column's value domain */
	int64_t		n;
	int32_t    *a;
	int32_t    *b;				/* NULL for unary */
	int64_t    *fwd_off;		/* ndom[0] + 1 */
	int64_t    *bwd_off;		/* ndom[1] + 1 */
	int32_t    *bwd;			/* n: a values grouped by b */
	uint64_t   *bits;			/* unary: membership bitmap over ndom[0] */
} IlpRel;

typedef enum IlpPredKind
{
	ILP_PRED_BG,				/* a background relation */
	ILP_PRED_TARGET,			/* the target (recursion) */
	ILP_PRED_CLOSURE			/* invented: transitive closure of 'base' */
} IlpPredKind;

typedef struct IlpPred
{
	char	   *name;
	int			arity;
	int			cls[2];			/* value class per argument */
	IlpPredKind kind;
	int			base;			/* CLOSURE: the closed predicate */
	IlpRel	   *rel;			/* TARGET: positives and known target facts */
	GdlType		types[2];		/* BG: the relation's column types */
} IlpPred;

/* The sorted distinct values of one class; dense id = position. */
typedef struct IlpDomain
{
	int32_t		n;
	int64_t    *vals;
	int32_t    *dense;			/* dense values: id of vals[0] + i, or -1; else NULL */
	int64_t		dmin;
	int64_t		drange;
} IlpDomain;

/* Everything a run works on, over dense ids. */
typedef struct IlpWorld
{
	IlpDomain	dom[ILP_NCLASS];
	int			npreds;
	IlpPred    *preds;			/* sorted by name */
	int			target;			/* index of the target predicate */
	int			arity;
	int			cls[2];
	GdlType		types[2];
	const char *target_name;
	IlpRel	   *known;			/* target facts given as background (may be empty) */
	/* examples: positives 0..npos-1, then negatives */
	int32_t		npos;
	int32_t		nneg;
	int32_t    *ex[2];			/* dense ids per argument */
	bool		generated_neg;
	double		neg_weight;		/* each negative stands for this many (sampling) */
	/* a target's world over a shared graph (ilp_world_for_target), else NULL */
	const struct IlpBulkGraph *bulk_graph;
	bool		derived;		/* shares the base world's domains and relations */
} IlpWorld;

extern int	ilp_type_class(GdlType t);
extern int32_t ilp_dom_id(const IlpDomain *d, int64_t v);
extern IlpRel *ilp_rel_build(int arity, const int32_t *ndom, int64_t n,
							 const int32_t *a, const int32_t *b);
extern void ilp_rel_free(IlpRel *r);
extern bool ilp_rel_has(const IlpRel *r, int32_t a, int32_t b);
extern IlpRel *ilp_rel_closure(const IlpRel *r, int64_t cap);
extern int	ilp_cmp_u64(const void *x, const void *y);
extern int	ilp_cmp_i64(const void *x, const void *y);
extern int64_t ilp_search_i64(const int64_t *a, int64_t n, int64_t v, bool after);

/* In a comparator: return the order of x and y when they differ. */
#define ILP_CMP_RET(x, y) \
	do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)

/* How to generate negatives (ilp_negatives.c). */
typedef struct IlpNegSpec
{
	GdlIlpNegMode mode;
	int			per_pos;		/* PCA: per positive; CLOSED: cap per positive */
	int			hops;			/* CLOSED: reach of the near pairs */
	int64_t		seed;
} IlpNegSpec;

extern IlpWorld *ilp_world_build(const GdlIlpProblem *prob, bool need_examples,
								 bool closures, const IlpNegSpec *negspec);
extern void ilp_negatives(IlpWorld *w, IlpKeySet *known, const IlpNegSpec *spec,
						  int32_t **na, int32_t **nb, int64_t *nn);
extern GdlColumns *ilp_world_examples(const IlpWorld *w);

/* ----------------------------------------------------------------- rules */

/* A body literal: an atom pred(a[, b]) or, with pred < 0, "a != b". */
typedef struct IlpLit
{
	int16_t		pred;
	int8_t		a;
	int8_t		b;				/* -1 for unary atoms */
} IlpLit;

/* A candidate rule; head variables are 0..arity-1. */
typedef struct IlpRule
{
	int8_t		nlits;
	int8_t		natoms;
	int8_t		nvars;
	int8_t		vcls[ILP_MAX_VARS];
	IlpLit		lits[ILP_MAX_LITS];
} IlpRule;

extern void ilp_rule_canon(IlpRule *r, int arity);
extern int	ilp_rule_cmp(const IlpRule *x, const IlpRule *y);
extern uint64_t ilp_rule_hash(const IlpRule *r);
extern bool ilp_rule_safe(const IlpRule *r, int arity);
extern bool ilp_rule_linked(const IlpRule *r, int arity);
extern bool ilp_rule_uses(const IlpRule *r, const IlpWorld *w, IlpPredKind kind);
extern char *ilp_rule_text(const IlpRule *r, const IlpWorld *w);
extern char *ilp_rule_template(const IlpRule *r, const IlpWorld *w);
extern char *ilp_rule_aux(const IlpRule *r, const IlpWorld *w);
extern char *ilp_closure_text(const IlpWorld *w, int pred);
extern char *ilp_identifier(const char *name);
/* The name of element i of an array (the names ilp_unique_name avoids). */
typedef const char *(*IlpNameAt) (const void *names, int i);
extern char *ilp_unique_name(const char *stem, const char *suffix, const char *also,
							 IlpNameAt name_at, const void *names, int n);

/* A set of rules keyed by canonical form (open addressing). */
typedef struct IlpRuleSet
{
	int64_t		n;
	int64_t		cap;			/* power of two */
	uint64_t   *slots;			/* index + 1 into keys, 0 empty */
	IlpRule    *keys;
	int64_t		keycap;
} IlpRuleSet;

extern void ilp_ruleset_init(IlpRuleSet *s);
extern bool ilp_ruleset_add(IlpRuleSet *s, const IlpRule *r);	/* false if present */
extern void ilp_ruleset_free(IlpRuleSet *s);

/* ------------------------------------------------------------ coverage */

typedef enum IlpOp
{
	ILP_OP_CHECK1,				/* unary, bound */
	ILP_OP_SCAN1,				/* unary, unbound: enumerate members */
	ILP_OP_CHECK2,				/* binary, both bound */
	ILP_OP_FWD,					/* binary, a bound: enumerate b */
	ILP_OP_BWD,					/* binary, b bound: enumerate a */
	ILP_OP_SCAN2,				/* binary, none bound: enumerate tuples */
	ILP_OP_NE					/* inequality, both bound */
} IlpOp;

typedef struct IlpStep
{
	int8_t		op;
	int16_t		pred;
	int8_t		a;
	int8_t		b;
} IlpStep;

typedef struct IlpPlan
{
	int			nsteps;
	IlpStep		steps[ILP_MAX_LITS];
} IlpPlan;

/* Called on each solution of a plan; return true to stop the search. */
typedef bool (*IlpSolutionFn) (void *arg, const int32_t *vals);

extern void ilp_plan_build(const IlpRule *r, int nbound, IlpPlan *p);
extern bool ilp_solve(IlpRel *const *rels, const IlpPlan *p, int step,
					  int32_t *vals, IlpSolutionFn fn, void *arg);
extern IlpRel **ilp_world_rels(const IlpWorld *w);
extern int32_t ilp_cover(const IlpWorld *w, IlpRel *const *rels, const IlpRule *r,
						 const int32_t *from, int32_t nfrom, int32_t *out);

/* Example x candidate coverage, CSR by example. */
typedef struct IlpCsr
{
	int32_t		nrows;			/* examples */
	int32_t		ncols;			/* candidates */
	int64_t    *off;			/* nrows + 1 */
	int32_t    *idx;			/* candidate ids, ascending per row */
	double		wneg;			/* weight of a negative row's loss (1 unless sampled) */
} IlpCsr;

extern IlpCsr *ilp_csr_build(int32_t nrows, int32_t ncols, const int32_t *ncov,
							 int32_t *const *cov);

/* --------------------------------------------------------------- search */

/* A candidate found by the search, with its coverage of the examples. */
typedef struct IlpCand
{
	IlpRule		rule;
	int32_t		ncov;			/* examples covered */
	int32_t		npos;			/* of which positives */
	int32_t    *cov;			/* ascending example indices */
	bool		recursive;
	bool		invented;
} IlpCand;

typedef struct IlpCandSet
{
	int32_t		n;
	int32_t		cap;
	IlpCand    *c;				/* sorted by rule; id = index */
	int64_t		nodes;			/* search nodes visited */
} IlpCandSet;

typedef struct IlpBias
{
	int			max_body;
	bool		recursive;		/* the target may appear in bodies */
	bool		invented;		/* closure predicates may appear in bodies */
	bool		use_examples;	/* prune by support; compute coverage */
	int			min_support;
	int64_t		max_candidates;
} IlpBias;

extern IlpCandSet *ilp_candidates(const IlpWorld *w, const IlpBias *bias);
extern int	ilp_refine(const IlpWorld *w, const IlpBias *bias, const IlpRule *r, IlpRule **out);
extern int32_t ilp_count_pos(const IlpWorld *w, const int32_t *cov, int32_t n);
extern int32_t ilp_count_below(int32_t bound, const int32_t *ids, int32_t n);

/* ----------------------------------------------------- loss, optimiser */

extern double ilp_loss_forward(const IlpCsr *m, int32_t npos, const double *p, double *P);
extern double ilp_loss_grad_p(const IlpCsr *m, int32_t npos, const double *p, double *grad);
extern double ilp_loss_grad_w(const IlpCsr *m, int32_t npos, const double *p, double *grad,
							  bool want_loss);

typedef struct IlpAdam
{
	int32_t		n;
	double		lr;
	double		beta1;
	double		beta2;
	double		eps;
	int64_t		t;
	double	   *m;
	double	   *v;
} IlpAdam;

extern void ilp_adam_init(IlpAdam *a, int32_t n, double lr);
extern void ilp_adam_step(IlpAdam *a, double *w, const double *g);
extern void ilp_adam_free(IlpAdam *a);

typedef struct IlpTrainOut
{
	int			epochs;
	double		loss;
	double	   *prob;			/* ncols */
	bool		on_device;		/* trained on the registered device */
} IlpTrainOut;

extern void ilp_train(const IlpCsr *m, int32_t npos, int epochs, double lr, IlpTrainOut *out);

/* Report progress to the host's hook, if any (ilp_learn.c; gdl_ilp.h). */
extern void ilp_progress(const char *phase, int epoch, double loss);
extern double ilp_initial_prob(void);
extern bool ilp_train_device(const IlpCsr *m, int32_t npos, int epochs, double lr, double w0,
							 int stall_every, double stall_tol, IlpTrainOut *out);
extern double ilp_now(void);

/* ------------------------------------------------- bulk coverage (body 2) */

/* The coverage of every body-2 rule of a binary target (ilp_bulk.c). */
typedef struct IlpBulk IlpBulk;

extern IlpBulk *ilp_bulk_build(const IlpWorld *w, const bool *pred_ok, int max_body);
extern bool ilp_bulk_cover(const IlpBulk *b, const IlpRule *r, int32_t *out, int32_t *n);
extern void ilp_bulk_free(IlpBulk *b);
extern bool ilp_bulk_on_device(const IlpBulk *b);
extern const struct GdlIlpDevice *ilp_cover_device(int64_t work);

/*
 * Several targets over one graph: the base world holds every relation as
 * background (ilp_world_build_graph), the adjacency is built once
 * (ilp_bulk_graph_build), and each target's world (ilp_world_for_target)
 * shares both, the target's own relation left out at enumeration time.
 */
typedef struct IlpBulkGraph IlpBulkGraph;

extern IlpBulkGraph *ilp_bulk_graph_build(const IlpWorld *base);
extern void ilp_bulk_graph_free(IlpBulkGraph *g);
extern IlpWorld *ilp_world_build_graph(const GdlIlpRelation *rels, int nrels);
extern IlpWorld *ilp_world_for_target(const IlpWorld *base, const IlpBulkGraph *g, int pred,
									  const GdlColumns *positives, const IlpNegSpec *negspec);
extern void ilp_world_target_free(IlpWorld *w);
extern void ilp_candset_free(IlpCandSet *cs);

/* Called with each target's world and candidates (ilp_score_targets). */
typedef void (*IlpScoreFn) (void *arg, int pred, const IlpWorld *w, const IlpCandSet *cs);

extern int	ilp_score_targets(const GdlIlpRelation *rels, int nrels, const int *targets,
							  int ntargets, const IlpBias *bias, const IlpNegSpec *negspec,
							  IlpScoreFn fn, void *arg, double *world_s);

/* ------------------------------------------------------------ fixpoint */

/* Which examples a program derives at fixpoint (own evaluator). */
extern void ilp_fixpoint(const IlpWorld *w, const IlpRule *rules, int nrules, bool *derived);
extern void ilp_fixpoint_set(const IlpWorld *w, const IlpRule *rules, int nrules, IlpKeySet *set);
/* Every head tuple of one rule over the data, as a deduplicated list. */
extern int64_t ilp_rule_heads(const IlpWorld *w, IlpRel *const *rels, const IlpRule *r,
							  int64_t **keys_out);

/* ----------------------------------------------------------- selection */

typedef struct IlpSelectCtx
{
	const IlpWorld *w;
	const IlpCandSet *cs;
	const double *prob;			/* per candidate */
	const bool *eligible;		/* per candidate: may be selected */
	int			max_rules;
	int			min_support;
	double		min_precision;
	const GdlIlpEvalHook *hook;
	GdlColumns *facts;			/* the examples as values, built on first hook call */
	int64_t		evals;			/* fixpoint evaluations made */
	double		deadline;		/* ilp_now() seconds (0: none): no fixpoint trial after it */
	bool		expired;		/* the deadline cut the selection short */
} IlpSelectCtx;

typedef struct IlpSelection
{
	int			n;
	int32_t    *ids;			/* candidate ids, in rank order */
	int32_t		tp;				/* program at fixpoint, on the examples */
	int32_t		fp;
} IlpSelection;

extern void ilp_select(IlpSelectCtx *ctx, IlpSelection *out);
extern bool ilp_tighten(const IlpWorld *w, const IlpBias *bias, const IlpCand *c, IlpCand *out);
extern char *ilp_program_text(const IlpWorld *w, const IlpCandSet *cs,
							  const int32_t *ids, int n);
extern void ilp_program_eval(IlpSelectCtx *ctx, const int32_t *ids, int n, bool *derived);

/* -------------------------------------------------------------- metrics */

typedef struct IlpMetrics
{
	double		precision;
	double		recall;
	int64_t		support;
	double		head_coverage;
	double		std_confidence;
	double		pca_confidence;
} IlpMetrics;

extern void ilp_metrics(const IlpWorld *w, const IlpCand *c, IlpMetrics *m);

/* --------------------------------------------------------------- utils */

/* Bitset helpers. */
static inline bool
ilp_bit(const uint64_t *b, int64_t i)
{
	return (b[i >> 6] >> (i & 63)) & 1;
}

static inline void
ilp_setbit(uint64_t *b, int64_t i)
{
	b[i >> 6] |= (uint64_t) 1 << (i & 63);
}

/* A 64-bit mix (splitmix64 finaliser), for hashing and seeded sampling. */
static inline uint64_t
ilp_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}


extern void ilp_keyset_init(IlpKeySet *s, int64_t expect);
extern bool ilp_keyset_add(IlpKeySet *s, uint64_t key);	/* false if present */
extern bool ilp_keyset_has(const IlpKeySet *s, uint64_t key);
extern void ilp_keyset_free(IlpKeySet *s);

static inline uint64_t
ilp_pair_key(int32_t a, int32_t b)
{
	return ((uint64_t) (uint32_t) a << 32) | (uint32_t) b;
}

#endif							/* ILP_INT_H */
