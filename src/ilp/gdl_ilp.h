/*
 * gdl_ilp.h — rule induction (inductive logic programming) for gpudl.
 *
 * What the host (the PostgreSQL layer behind gpudl_learn, gpudl_candidates
 * and gpudl_loss_grad, or a standalone test) sees of the ILP core:
 *
 *   problem (background relations, target, examples)
 *     --gdl_ilp_learn--> ranked rules with probabilities and quality measures
 *     --gdl_ilp_candidates--> the bias, listed with deterministic ids
 *     --gdl_ilp_loss_grad--> noisy-or loss and gradient for given probabilities
 *
 * Values are 64-bit as everywhere in the engine: integers as themselves, text
 * as ids of one GdlDict (the caller encodes background and examples with the
 * same dictionary).  Relations and targets have 1..GDL_ILP_MAX_ARITY
 * arguments.  Memory comes from gdl_alloc and is freed with the host's arena;
 * errors go through gdl_error.
 *
 * The method (ARCHITECTURE.md section 5): candidates are enumerated top-down
 * from the bias and pruned by their support on the examples; each candidate's
 * coverage of the examples is computed by joins driven from the examples and
 * kept as a sparse example x candidate matrix (CSR); candidate probabilities
 * p = sigmoid(w) are trained with Adam on the noisy-or log-likelihood; the
 * program is then selected in (probability desc, id asc) order, a rule
 * joining only when it still derives more new positives than new negatives,
 * recursive programs checked at fixpoint (through the host's hook when it
 * gives one, so they are judged by what they really derive), redundant rules
 * dropped, and over-general rules specialised when the background shows it.
 * Shorter bodies are tried first; the first bias stage that fits the
 * examples exactly wins.  Deterministic: same inputs, same rules.
 *
 * Targets or background relations of arity above 2, bodies of more than 3
 * atoms, argument tags (types from the schema) or method REFINE take the
 * refinement search instead (ilp_refine.c, docs/DESIGN.md): a beam of
 * rules refined one atom at a time with coverage on the examples, rules
 * chosen by sequential covering (exact, or by description length with
 * 'noise'), within 'max_seconds' (the best program so far when it runs out).
 * With allow_recursive the target may occur in its bodies (once or twice):
 * a base case first, each recursive rule accepted only when the engine's
 * fixpoint of the program with it derives no negative, and the program
 * made minimal at the end (docs/DESIGN.md, "Recursion through the target").
 */
#ifndef GDL_ILP_H
#define GDL_ILP_H

#include "../exec/gdl_engine.h"

/* ---------------------------------------------------------------- input */

/* The largest arity of a target or background relation. */
#define GDL_ILP_MAX_ARITY 8

/*
 * One background relation: rows as columns of encoded values.  tags[i]
 * names argument i's type beyond its SQL type (a domain, a foreign key's
 * referenced column, a user's 'types'): two arguments may share a variable
 * only when their SQL types are of one class and their tags are equal or
 * one is NULL.
 */
typedef struct GdlIlpRelation
{
	const char *name;			/* predicate name as rules should print it */
	int			arity;			/* 1..GDL_ILP_MAX_ARITY */
	GdlType		types[GDL_ILP_MAX_ARITY];	/* per argument */
	GdlColumns	rows;			/* rows.ncols == arity */
	const char *tags[GDL_ILP_MAX_ARITY];	/* per argument, or NULL */
} GdlIlpRelation;

/*
 * What to learn.  A relation named like the target is read as known facts of
 * the target: recursion looks them up (with the positives), and fixpoint
 * evaluation starts from them.
 */
typedef struct GdlIlpProblem
{
	int			nrels;
	const GdlIlpRelation *rels;
	const char *target;
	int			arity;			/* 1..GDL_ILP_MAX_ARITY */
	GdlType		types[GDL_ILP_MAX_ARITY];	/* target argument types; UNKNOWN: take the examples' */
	GdlType		example_types[GDL_ILP_MAX_ARITY];	/* types of the example columns; UNKNOWN: unchecked */
	const char *tags[GDL_ILP_MAX_ARITY];	/* target argument tags, or NULL */
	const GdlColumns *positives;	/* ncols == arity, at least one row */
	const GdlColumns *negatives;	/* NULL: drawn by the partial completeness assumption */
} GdlIlpProblem;

/* How negatives are generated when the problem gives none. */
typedef enum GdlIlpNegMode
{
	GDL_ILP_NEG_PCA = 0,		/* partial completeness: t(x, y') for positives t(x, y) */
	GDL_ILP_NEG_CLOSED			/* closed world: pairs the background joins within
								 * max_body steps that are not known facts */
} GdlIlpNegMode;

/* Which search learns the rules. */
typedef enum GdlIlpMethod
{
	GDL_ILP_AUTO = 0,			/* REFINE where the bias needs it, else BULK */
	GDL_ILP_BULK,				/* bulk coverage + noisy-or training (arity <= 2, body <= 3) */
	GDL_ILP_REFINE				/* beam refinement + sequential covering (any arity, body) */
} GdlIlpMethod;

/* The longest body the refinement search builds. */
#define GDL_ILP_MAX_BODY 8

/* Parameters of gdl_ilp_learn; gdl_ilp_params_default fills the defaults. */
typedef struct GdlIlpParams
{
	int			max_body;		/* 1..3 body atoms, up to GDL_ILP_MAX_BODY with REFINE (default 2) */
	int			max_rules;		/* >= 1 (default 32) */
	int			epochs;			/* >= 0 (default 200) */
	double		learning_rate;	/* > 0 (default 0.1) */
	bool		allow_recursive;	/* target in bodies (bulk: also invented closures; auto:
									 * refine too when bulk does not fit) (default false) */
	int			min_support;	/* positives a candidate must cover (default 1; 0 means 1) */
	int64_t		seed;			/* for generated negatives (default 0) */
	/* extensions beyond PRODUCT.md, with defaults that need no thought */
	GdlIlpNegMode neg_mode;		/* generated negatives (default PCA) */
	int			neg_per_pos;	/* per positive (0: 4 for PCA; for CLOSED a cap, 50) */
	int			max_candidates; /* bias size limit, GDL_ERR_LIMIT past it (default 2,000,000) */
	bool		deepen;			/* try shorter bodies first, stop at a perfect fit (default true) */
	bool		invent;			/* with allow_recursive: closures q+ of binary predicates (default true) */
	double		min_precision;	/* a selected rule's own precision on the examples (default 0.5) */
	/* issue 15 */
	double		max_seconds;	/* time budget (0: none); past it the best program so far */
	double		noise;			/* REFINE: 0 exact; > 0 a rule may cover negatives up to
								 * noise x its examples, program by description length */
	GdlIlpMethod method;		/* default AUTO */
	int			max_vars;		/* REFINE: variables per rule (0: arity + max_body, at most 12) */
	int			beam;			/* REFINE: beam width (0: 64, doubled while time is left) */
} GdlIlpParams;

extern void gdl_ilp_params_default(GdlIlpParams *p);

/*
 * Fixpoint hook: evaluate 'program' (Datalog source: invented predicates'
 * clauses and the selected rules) to its least fixpoint over the same
 * background the problem was built from, and set derived[i] to whether the
 * target fact (facts->cols[0][i], facts->cols[1][i]) is derived.  NULL fn:
 * the ILP core uses its own evaluator.  A program may hold only recursive
 * rules for the target (then with known target facts to start from), so the
 * host should declare the target's types rather than infer them.
 */
typedef void (*GdlIlpEvalFn) (void *arg, const char *program, const char *target,
							  int arity, const GdlColumns *facts, bool *derived);

typedef struct GdlIlpEvalHook
{
	GdlIlpEvalFn fn;
	void	   *arg;
} GdlIlpEvalHook;

/* --------------------------------------------------------------- output */

/* One learned rule (a row of gpudl_learn). */
typedef struct GdlIlpRule
{
	int			rank;			/* 1-based */
	char	   *rule;			/* the clause, e.g. "f(X, Y) :- p(X, Z), q(Z, Y)." */
	char	   *aux;			/* clauses of invented predicates it uses, or NULL */
	double		probability;	/* trained sigmoid(w) */
	double		loss;			/* training loss of the program of ranks 1..rank */
	double		precision;		/* the rule's own, on the examples */
	double		recall;
	int64_t		support;		/* positive examples it covers */
	double		head_coverage;	/* AMIE, on the data (positives stand for the head) */
	double		std_confidence;
	double		pca_confidence;
	bool		recursive;		/* the target occurs in the body */
	int			candidate_id;	/* id among the run's candidates */
} GdlIlpRule;

typedef struct GdlIlpResult
{
	int			nrules;
	GdlIlpRule *rules;
	int			epochs;			/* epochs run (early stop may end sooner) */
	double		final_loss;		/* training loss of all candidates after the last epoch */
	char	   *program;		/* the learned program as Datalog source (aux first) */
	int64_t		npositives;		/* examples used */
	int64_t		nnegatives;
	int64_t		ncandidates;	/* candidates trained in the chosen stage */
	int			max_body_used;	/* body size of the chosen stage */
	bool		invented;		/* the chosen stage could use invented predicates */
	double		train_precision;	/* the selected program at fixpoint, on the examples */
	double		train_recall;
	char	   *message;		/* one line saying how the run went */
	bool		on_device;		/* the chosen stage trained on the registered device */
	bool		timed_out;		/* max_seconds ran out: the best program found so far */
	const char *method;			/* "bulk" or "refine" */
	int			nnotes;			/* background relations the learner could not use, and why */
	char	  **notes;
} GdlIlpResult;

/*
 * Learn rules for problem->target.  hook may be NULL.  Raises GDL_ERR_PARAM
 * for bad parameters and GDL_ERR_DATATYPE for examples whose arity or types
 * do not match the target.
 */
extern GdlIlpResult *gdl_ilp_learn(const GdlIlpProblem *prob, const GdlIlpParams *params,
								   const GdlIlpEvalHook *hook);

/*
 * Progress of gdl_ilp_learn, for a host that shows long runs to others
 * (gpudl_progress): the phase ("building", "candidates", "training",
 * "scoring"), the bias stage, and while training on the CPU the epoch and
 * the loss (every few epochs).  One hook per process; NULL turns it off.
 * The hook must not raise.
 */
typedef struct GdlIlpProgress
{
	const char *phase;
	int			stage;			/* 0-based stage of the bias (-1 before the first) */
	int			epoch;			/* -1 when not training */
	double		loss;			/* NAN when not known */
} GdlIlpProgress;

typedef void (*GdlIlpProgressFn) (void *arg, const GdlIlpProgress *p);

extern void gdl_ilp_set_progress(GdlIlpProgressFn fn, void *arg);

/* One candidate of the bias (a row of gpudl_candidates). */
typedef struct GdlIlpCandidate
{
	int			id;				/* 0-based, in sorted order of the canonical rule */
	char	   *rule;
	char	   *template;		/* the rule's shape, e.g. "H(X, Y) :- P(X, Z), Q(Z, Y)." */
} GdlIlpCandidate;

typedef struct GdlIlpCandidateList
{
	int			n;
	GdlIlpCandidate *items;
} GdlIlpCandidateList;

/*
 * List the bias for a target: every rule with 1..max_body atoms over the
 * problem's non-empty unary and binary relations (the target itself when
 * allow_recursive) that binds the head variables, connected, deduplicated up
 * to variable renaming and atom order, with "V != W" variants where two atoms
 * would otherwise collapse (or on the two head arguments).  Examples are not
 * needed (prob->positives may be NULL).  Deterministic.
 */
extern GdlIlpCandidateList *gdl_ilp_candidates(const GdlIlpProblem *prob, int max_body,
											   bool allow_recursive);

/*
 * Noisy-or loss of the candidates of gdl_ilp_candidates(prob, max_body,
 * allow_recursive) with the given probabilities (nprobs must equal the
 * number of candidates), and its gradient with respect to those
 * probabilities, written to grad[nprobs]:
 *   P(e) = 1 - prod over candidates c deriving e of (1 - p_c)
 *   loss = -sum_pos log max(P, eps) - sum_neg log max(1 - P, eps)
 * Negatives NULL: generated as in gdl_ilp_learn with 'seed'.
 */
extern double gdl_ilp_loss_grad(const GdlIlpProblem *prob, int max_body, bool allow_recursive,
								int64_t seed, const double *probs, int nprobs, double *grad);

/*
 * Evaluate a learned program (gdl_ilp_learn's 'program' text: clauses whose
 * arguments are variables, plus invented closures) over prob's background
 * with the ILP core's own fixpoint evaluator, and set derived[i] for each row
 * of facts (target tuples) it derives.  prob's examples are not used.  The
 * engine (gdl_run) evaluates any program; this one needs no plan and serves
 * tests and hosts without the engine.
 */
extern void gdl_ilp_eval_program(const GdlIlpProblem *prob, const char *program,
								 const GdlColumns *facts, bool *derived);

/* The eps of the loss (probabilities are clamped to it). */
#define GDL_ILP_EPS 1e-6

#endif							/* GDL_ILP_H */
