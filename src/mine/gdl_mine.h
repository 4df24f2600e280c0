/*
 * gdl_mine.h — knowledge-graph rule mining and link prediction.
 *
 * What the host (the PostgreSQL layer behind gpudl_mine and gpudl_predict,
 * or a standalone test or benchmark) sees of the mining core:
 *
 *   binary relations --gdl_mine_graph_build--> a graph (dense entity ids)
 *     --gdl_mine--> every closed, connected rule over the thresholds, with
 *                   exact support, head coverage, std and PCA confidence
 *     --gdl_predict--> ranked answers of r(h, ?) or r(?, t), each with its
 *                   score and the rules that derive it
 *
 * The rule language is AMIE's: a head r(X, Y) and 1 to
 * max_body (at most 3) body atoms p(A, B) over the variables X, Y, Z, W with
 * A != B (no reflexive atom), no atom twice, no body atom equal to the head;
 * every variable occurs in at least two atoms, the head counted (closed);
 * the atoms are connected through shared variables.  With three body atoms
 * the shapes are: three atoms on (X, Y); a path X-Z-Y with a third atom on
 * (X, Y), on (X, Z) or on (Z, Y); a cycle X-Z-X or Y-Z-Y beside an atom on
 * (X, Y); the path X-Z-W-Y.  Every atom in both argument orders.
 *
 * With options.constants (AMIE 3's -const), also rules with constants
 * (entities of the graph), still closed (every variable in two atoms) and
 * with connected bodies: at most one constant per atom, one or two per
 * rule, at most two body atoms (whatever max_body beyond 2 says):
 *   r(X, c) :- l(X, d)                  head and body constant
 *   r(X, c) :- l(X, Z), m(Z, d)         a path from X to a constant
 *   r(X, c) :- l(X, Z), m(X, Z)         two links between X and Z
 *   r(X, Y) :- l(X, Y), m(X, d)  or  l(X, Y), m(Y, d)
 *   r(X, c) :- l(X, Z)                  open: Z occurs once (AnyBURL's AC2)
 * and the heads r(c, X) with the same bodies; "l(X, d)" stands for both
 * argument orders (l(X, d) and l(d, X)).  The open form is the one
 * exception to closedness: a constant head and one body atom whose other
 * argument is free ("x has some l-link": a type-like rule, e.g. every film
 * with a release region has genre drama with confidence 0.4).  With
 * max_body 1 only the first and the open form.  max_body_constants bounds
 * the rules with constants apart (1: AnyBURL's acyclic language of one
 * atom beside cyclic rules of max_body atoms), and
 * constants_min_head_coverage their head coverage apart (0: bounded by
 * min_support and the confidences only, as AnyBURL bounds them).
 *
 * Anytime mining (max_seconds > 0): the rules come level by level, shortest
 * first — the rules without constants of one body atom, those with
 * constants of one atom, then two atoms of each, then three without — and
 * each level is exact and complete or not kept at all; when the budget
 * runs out the result holds the levels completed (timed_out,
 * complete_body, complete_body_constants), the best rules a shorter run
 * finds, since a shorter rule is never pruned for a longer one.
 * A rule with a constant head is measured over its one head variable X:
 * support = #x with r(x, c) (r(c, x)) and the body true; body_size = #x
 * with the body true; pca_body_size = #x with the body true and some fact
 * r(x, _) (for r(c, X): some fact r(_, x)), the PCA on the head variable's
 * side; head_coverage = support / |r|.  Only constants with enough support
 * are ever enumerated (from the bindings of supported rules).
 *
 * Measures (AMIE): support = #distinct (x, y) with r(x, y) and the body true
 * for X=x, Y=y; body_size = #distinct (x, y) with the body true;
 * pca_body_size = #distinct (x, y) with the body true and r(x, y') for some
 * y'; head_coverage = support / |r|; std_confidence = support / body_size;
 * pca_confidence = support / pca_body_size.  Variables other than X and Y
 * may take the same value as each other or as X or Y (Datalog semantics).
 *
 * A rule is reported once, in canonical form (gdl_mine_canonical): among
 * the renamings of Z and W and the orders of the body atoms, the smallest
 * sequence of (rel, a, b, value).  Results are sorted by (head, head_const,
 * head_value, body) — the body compared by its number of atoms, then atom
 * by atom as (rel, a, b, value) — and
 * are the same on every device and for every thread count.
 *
 * The GPU (device GDL_DEVICE_GPU) counts through the accelerator registered
 * with gdl_mine_register_device (gdl_mine_device.h, cuda/mine.cu); without
 * one, or when it fails, the CPU counts and GdlMineResult.device says so.
 *
 * Values are 64-bit as everywhere in the engine (text as dictionary ids).
 * Memory comes from gdl_alloc (freed with the host's arena); errors go
 * through gdl_error; long loops call the host's interrupt check between
 * chunks of work (never from worker threads).
 */
#ifndef GDL_MINE_H
#define GDL_MINE_H

#include "../exec/gdl_engine.h"

#define GDL_MINE_MAX_BODY 3

/* Variables of a rule; GDL_MINE_C marks an argument that is a constant. */
enum
{
	GDL_MINE_X = 0, GDL_MINE_Y = 1, GDL_MINE_Z = 2, GDL_MINE_W = 3, GDL_MINE_C = 4
};

/* The head of a rule: head(X, Y), head(X, c) or head(c, X). */
enum
{
	GDL_MINE_HEAD_VARS = 0,		/* head(X, Y) */
	GDL_MINE_HEAD_OBJECT = 1,	/* head(X, c): the object is the constant */
	GDL_MINE_HEAD_SUBJECT = 2	/* head(c, X): the subject is the constant */
};

/* One binary relation of the graph: rows.ncols == 2. */
typedef struct GdlMineRelation
{
	const char *name;			/* predicate name as rules print it */
	GdlColumns	rows;			/* duplicates allowed; they count once */
} GdlMineRelation;

/* The graph: dense entity ids, both directions of every relation indexed. */
typedef struct GdlMineGraph GdlMineGraph;

extern GdlMineGraph *gdl_mine_graph_build(int nrels, const GdlMineRelation *rels);
extern int	gdl_mine_graph_nrels(const GdlMineGraph *g);
extern const char *gdl_mine_graph_relname(const GdlMineGraph *g, int rel);
extern int64_t gdl_mine_graph_nfacts(const GdlMineGraph *g, int rel);	/* distinct */
/* Dense id of a value, or -1 when no fact mentions it. */
extern int32_t gdl_mine_graph_entity(const GdlMineGraph *g, int64_t value);
extern int64_t gdl_mine_graph_value(const GdlMineGraph *g, int32_t entity);
extern int32_t gdl_mine_graph_nentities(const GdlMineGraph *g);
/* Does rel(s, o) hold (dense ids)? */
extern bool gdl_mine_graph_has(const GdlMineGraph *g, int rel, int32_t s, int32_t o);

/* ----------------------------------------------------------------- mining */

typedef struct GdlMineAtom
{
	int32_t		rel;
	int8_t		a;				/* GDL_MINE_X .. GDL_MINE_W, or GDL_MINE_C */
	int8_t		b;
	int16_t		pad_;			/* zero (rules are compared bytewise) */
	int64_t		value;			/* the constant (a graph value) when a or b
								 * is GDL_MINE_C (at most one of them); else 0 */
} GdlMineAtom;

typedef struct GdlMineRule
{
	int32_t		head;			/* head relation */
	int32_t		nbody;			/* 1 .. GDL_MINE_MAX_BODY */
	int32_t		head_const;		/* GDL_MINE_HEAD_*: which head argument, if
								 * any, is the constant head_value */
	int32_t		pad_;			/* zero */
	int64_t		head_value;		/* the head's constant (a graph value), or 0 */
	GdlMineAtom body[GDL_MINE_MAX_BODY];
	int64_t		support;
	int64_t		body_size;
	int64_t		pca_body_size;
	double		head_coverage;
	double		std_confidence;
	double		pca_confidence;
} GdlMineRule;

typedef struct GdlMineOptions
{
	int			target;			/* relation index, or -1: every relation */
	int			max_body;		/* 1 .. GDL_MINE_MAX_BODY */
	double		min_head_coverage;	/* AMIE default 0.01 */
	double		min_confidence; /* on pca_confidence; default 0.1 */
	double		min_std_confidence; /* default 0 */
	int64_t		min_support;	/* default 1 (at least one head fact); below 1
								 * counts as 1 */
	int			device;			/* GDL_DEVICE_CPU or GDL_DEVICE_GPU */
	int			threads;		/* 0: automatic (gdl_set_threads) */
	bool		constants;		/* also rules with constants (below); default false */
	int			max_body_constants; /* body atoms of a rule with constants: 1 or
									 * 2; 0 (default): min(max_body, 2) */
	double		constants_min_head_coverage;	/* head coverage bound of the
												 * rules with constants; below
												 * 0 (default):
												 * min_head_coverage */
	double		max_seconds;	/* anytime: > 0 stops at this budget with the
								 * rules of the levels completed (below); 0:
								 * none */
	bool		object_identity;	/* no variable of a rule without constants
									 * binds the entity of X (AnyBURL's object
									 * identity, on X); default false */
} GdlMineOptions;

/* Phases of a mining run, for benchmarks and EXPLAIN-like reporting. */
typedef struct GdlMineTimes
{
	double		index;			/* graph indexes for the run */
	double		enumerate;		/* body groundings enumerated and counted */
	double		measures;		/* denominators (body sizes) */
	double		constants;		/* rules with constants (CPU), both passes */
	double		total;
} GdlMineTimes;

typedef struct GdlMineResult
{
	int64_t		nrules;
	GdlMineRule *rules;			/* sorted by (head, canonical body) */
	int64_t		candidates;		/* rules whose measures were computed */
	GdlMineTimes times;
	int			device;			/* where the counting ran: GDL_DEVICE_CPU, or
								 * GDL_DEVICE_GPU (a GPU run falls back to the
								 * CPU when no device is registered or it fails;
								 * gdl_mine_device.h says why) */
	bool		timed_out;		/* max_seconds ran out: the rules are those of
								 * the levels completed */
	int			complete_body;	/* rules without constants are complete up
								 * to this many body atoms (max_body unless
								 * timed_out) */
	int			complete_body_constants;	/* the same for the rules with
											 * constants (0: none) */
} GdlMineResult;

extern void gdl_mine_options_init(GdlMineOptions *o);
extern GdlMineResult *gdl_mine(const GdlMineGraph *g, const GdlMineOptions *o);

/* Bring a rule to canonical form in place (see the header comment). */
extern void gdl_mine_canonical(GdlMineRule *r);
/*
 * "head(X, Y) :- p(X, Z), q(Z, Y)." with the graph's relation names;
 * constants as their values' decimal text (gdl_mine_rule_text), or as the
 * host's literal of a value (gdl_mine_rule_text_lit: literal(ctx, value)
 * returns the text, e.g. "\"alice\"" for a dictionary id).
 */
extern char *gdl_mine_rule_text(const GdlMineGraph *g, const GdlMineRule *r);
typedef const char *(*GdlMineLiteralFn) (void *ctx, int64_t value);
extern char *gdl_mine_rule_text_lit(const GdlMineGraph *g, const GdlMineRule *r,
									GdlMineLiteralFn literal, void *ctx);

/*
 * gdl_mine_rule_text_lit with every relation's name already as the parser
 * reads it (qnames[rel], as gdl_pred_name_quote makes it): the same text
 * without quoting a name per atom, for a host writing millions of rules.
 */
extern char *gdl_mine_rule_text_q(const GdlMineGraph *g, const char *const *qnames,
								  const GdlMineRule *r, GdlMineLiteralFn literal, void *ctx);

/* ------------------------------------------------------------- prediction */

typedef enum GdlPredictAggregation
{
	GDL_PREDICT_MAX,			/* best confidence; ties broken by the next best */
	GDL_PREDICT_NOISY_OR,		/* 1 - prod(1 - confidence) */
	GDL_PREDICT_CLUSTER_NOISY_OR,	/* noisy-or over clusters of redundant
									 * rules, each cluster its best rule's
									 * confidence (SAFRAN's shape; a cluster:
									 * the rules over the same body
									 * relations); ties broken as by max */
	GDL_PREDICT_KIND_NOISY_OR,	/* the same over kinds of evidence: rules
								 * over variables by body length, open rules
								 * together, rules with constants by body
								 * relations and constants */
	GDL_PREDICT_WEIGHTED		/* a weighted sum of the answer's evidence
								 * features (GdlPredictOptions.weights, as
								 * gdl_predict_fit learns them); ties
								 * broken as by max */
} GdlPredictAggregation;

/*
 * The evidence features of an answer (mine_features.c), per kind of rule:
 * -log(1 - noisy-or over the kind's clusters, each its best rule), kinds
 * as kind_noisy_or's (paths of one, two, three atoms; open rules; one-atom
 * rules with a body constant; other rules with constants); then how often
 * the answer answers the relation that way in the graph (log(1 + n)), the
 * best rule's -log(1 - confidence), log(1 + rules deriving it), log(1 +
 * clusters among them), the best rule with a body constant's -log(1 -
 * confidence) and the best PCA confidence's -log(1 - c).
 */
#define GDL_PREDICT_NKINDS 6
#define GDL_PREDICT_NFEATURES 12
/* weights [0, NFEATURES) score r(?, t) queries, [NFEATURES, 2 NFEATURES) r(h, ?) */
#define GDL_PREDICT_NWEIGHTS (2 * GDL_PREDICT_NFEATURES)

typedef struct GdlPredictOptions
{
	GdlPredictAggregation aggregation;
	bool		use_pca;		/* score with PCA (else std) confidence */
	double		smoothing;		/* confidence = support / (denominator + smoothing); default 5 */
	bool		exclude_known;	/* leave out answers already in the graph */
	int64_t		limit;			/* at most this many answers; 0: all */
	bool		object_identity;	/* as GdlMineOptions.object_identity: in a
									 * rule without constants no other variable
									 * binds X's entity; default false */
	double		weights[GDL_PREDICT_NWEIGHTS];	/* GDL_PREDICT_WEIGHTED's; default:
												 * 1 per kind, 0 for the rest
												 * (ranks as kind_noisy_or) */
} GdlPredictOptions;

/* r(value, ?) when subject_bound, else r(?, value). */
typedef struct GdlPredictQuery
{
	int32_t		rel;
	bool		subject_bound;
	int64_t		value;
} GdlPredictQuery;

typedef struct GdlPredictAnswer
{
	int64_t		value;			/* the answer (a graph value) */
	double		score;			/* by the aggregation */
	int64_t		rank;			/* 1 + answers strictly better; answers whose
								 * whole ranking key (for max: every
								 * confidence, best first) is equal share it */
	int32_t		nrules;			/* rules that derive it, best first */
	int32_t    *rules;			/* indices into the rules given to gdl_predict */
} GdlPredictAnswer;

typedef struct GdlPredictResult
{
	int64_t		nanswers;
	GdlPredictAnswer *answers;	/* ranked: best first, ties by value */
} GdlPredictResult;

extern void gdl_predict_options_init(GdlPredictOptions *o);
/*
 * Rank the answers of one query with the given rules (those whose head is
 * the query's relation are used; others are skipped).  An entity no rule
 * derives is not an answer.
 */
extern GdlPredictResult *gdl_predict(const GdlMineGraph *g,
									 const GdlMineRule *rules, int64_t nrules,
									 const GdlPredictQuery *q,
									 const GdlPredictOptions *o);

/*
 * Rules prepared for many queries (mine_predict_index.c): their constants
 * resolved to the graph's entities once, and the one-atom rules with a
 * constant head found through the bound entity's links instead of tried
 * one by one.  Host memory (gdl_alloc); made for one graph and one rules
 * array, which must outlive it.  NULL for more than INT32_MAX rules.
 */
typedef struct GdlPredictIndex GdlPredictIndex;
extern GdlPredictIndex *gdl_predict_index(const GdlMineGraph *g, const GdlMineRule *rules,
										  int64_t nrules);
extern void gdl_predict_index_free(GdlPredictIndex *ix);

/* One query of gdl_predict_many: its rules, the query, then its result. */
typedef struct GdlPredictJob
{
	const GdlMineRule *rules;
	int64_t		nrules;
	const GdlPredictIndex *index;	/* of these rules and this graph, or NULL */
	GdlPredictQuery q;
	GdlPredictResult *res;		/* malloc'd: gdl_predict_result_free */
} GdlPredictJob;

/*
 * Answer n independent queries on worker threads (gdl_threads()), as
 * gdl_predict answers each; the results are malloc'd.  An interrupt or an
 * allocation failure frees them all and raises.
 */
extern void gdl_predict_many(const GdlMineGraph *g, GdlPredictJob *jobs, int64_t n,
							 const GdlPredictOptions *o);
extern void gdl_predict_result_free(GdlPredictResult *res);

/*
 * Weights learned from held-out triples (mine_fit.c): each fit query is
 * answered with kind_noisy_or (limit 0), and its true answer's and its
 * best wrong answers' features are kept; coordinate ascent then chooses
 * the weights that maximize the filtered mean reciprocal rank of the true
 * answers.  Wrong answers: every answer but the query's own and the
 * triples given to gdl_predict_fit_truth (the graph's facts are excluded
 * by exclude_known).  Host memory (gdl_alloc).
 */
typedef struct GdlPredictFit GdlPredictFit;
extern GdlPredictFit *gdl_predict_fit_create(const GdlMineGraph *g, int64_t max_queries,
											 int64_t max_truths);
/* A held-out triple rel(s, o) (graph values): a true answer both ways. */
extern void gdl_predict_fit_truth(GdlPredictFit *f, int32_t rel, int64_t s, int64_t o);
/* One answered query whose true answer is want; res from kind_noisy_or. */
extern void gdl_predict_fit_add(GdlPredictFit *f, const GdlMineRule *rules, const GdlPredictQuery *q,
								int64_t want, const GdlPredictResult *res, const GdlPredictOptions *o);
/*
 * The same for a batch answered by gdl_predict_many: job j's true answers
 * are wants[from[j] .. from[j + 1]) (one per held-out triple asking its
 * question); the features computed on worker threads.
 */
extern void gdl_predict_fit_add_many(GdlPredictFit *f, const GdlPredictJob *jobs, int64_t njobs,
									 const int64_t *wants, const int64_t *from,
									 const GdlPredictOptions *o);
/*
 * Learn: weights (GDL_PREDICT_NWEIGHTS) from the defaults; the MRR of the
 * fit queries before (default weights) and after.  Checks interrupts.
 */
extern void gdl_predict_fit_learn(GdlPredictFit *f, double *weights, double *mrr_before,
								  double *mrr_after);
extern int64_t gdl_predict_fit_nqueries(const GdlPredictFit *f);
extern void gdl_predict_fit_free(GdlPredictFit *f);

/*
 * The same batch answered while the caller does other work: start it,
 * then finish it (wait; raises as gdl_predict_many does) or cancel it
 * (stop, wait, free the results; never raises: for error paths).  The
 * jobs, rules and graph must stay until then.
 */
typedef struct GdlPredictRun GdlPredictRun;
extern GdlPredictRun *gdl_predict_start(const GdlMineGraph *g, GdlPredictJob *jobs, int64_t n,
										const GdlPredictOptions *o);
extern void gdl_predict_finish(GdlPredictRun *run);
extern void gdl_predict_cancel(GdlPredictRun *run);

#endif							/* GDL_MINE_H */
