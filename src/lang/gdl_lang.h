/*
 * gdl_lang.h — the Datalog language of gpudl: AST, parser and analysis.
 *
 * Pipeline:  text --gdl_parse--> GdlProgram (AST, one item per clause or
 * .decl, each keeping its own source text) --gdl_analyze--> GdlAnalysis
 * (predicates resolved to tables or rules, types inferred, safety checked,
 * strata computed).  Both raise errors through gdl_error (src/core) with
 * line, column and the text near the problem; neither touches PostgreSQL:
 * tables are resolved through a callback the host provides.
 *
 * All memory comes from gdl_alloc; the host frees it by resetting its arena
 * (a PostgreSQL memory context), so nothing here has a destructor.
 */
#ifndef GDL_LANG_H
#define GDL_LANG_H

#include "../core/gdl_host.h"

/* ---------------------------------------------------------------- types */

/* Column types the engine knows (PRODUCT.md section 2). */
typedef enum GdlType
{
	GDL_TYPE_UNKNOWN = 0,		/* not yet inferred */
	GDL_TYPE_INT,				/* int2 / int4 */
	GDL_TYPE_BIGINT,			/* int8 */
	GDL_TYPE_TEXT,				/* text / varchar / name: dictionary ids */
	GDL_TYPE_BOOL,
	GDL_TYPE_FLOAT8
} GdlType;

extern const char *gdl_type_name(GdlType t);	/* "int", "bigint", ... */
extern GdlType gdl_type_from_name(const char *name);	/* UNKNOWN if none */

/* A position in source text: 1-based line and column. */
typedef struct GdlLoc
{
	int			line;
	int			col;
} GdlLoc;

/* ------------------------------------------------------------------ AST */

typedef enum GdlTermKind
{
	GDL_TERM_VAR,				/* X, Foo, _x : var is the clause's variable index */
	GDL_TERM_ANON,				/* _ : fresh, never joined */
	GDL_TERM_INT,				/* 42, -7 */
	GDL_TERM_FLOAT,				/* 1.5 */
	GDL_TERM_TEXT,				/* "quoted" or lowercase symbol */
	GDL_TERM_BOOL,				/* true / false */
	GDL_TERM_BINOP,				/* left op right (integer arithmetic) */
	GDL_TERM_NEG,				/* - left (unary minus of a non-literal) */
	GDL_TERM_AGG				/* count/sum/min/max(arg): head arguments only */
} GdlTermKind;

typedef enum GdlArithOp
{
	GDL_OP_ADD, GDL_OP_SUB, GDL_OP_MUL, GDL_OP_DIV, GDL_OP_MOD
} GdlArithOp;

typedef enum GdlAggKind
{
	GDL_AGG_COUNT, GDL_AGG_SUM, GDL_AGG_MIN, GDL_AGG_MAX
} GdlAggKind;

typedef struct GdlTerm
{
	GdlTermKind kind;
	GdlLoc		loc;
	int			var;			/* VAR: index into GdlClause.varnames */
	int64_t		ival;			/* INT */
	double		fval;			/* FLOAT */
	bool		bval;			/* BOOL */
	char	   *text;			/* TEXT: the string, quotes removed */
	bool		quoted;			/* TEXT: written in quotes (else a bare symbol) */
	GdlArithOp	op;				/* BINOP */
	struct GdlTerm *left;		/* BINOP, NEG */
	struct GdlTerm *right;		/* BINOP */
	GdlAggKind	agg;			/* AGG */
	struct GdlTerm *arg;		/* AGG: the aggregated term (a variable) */
} GdlTerm;

/* The type of a constant leaf (bigint for an integer); UNKNOWN for any other term. */
extern GdlType gdl_term_const_type(const GdlTerm *t);

/*
 * Does every variable of t have bound[] set?  A NULL term counts as bound,
 * _ only when anon_bound, an aggregate by its argument when agg_arg (else
 * never).  Range restriction, the magic-set rewrite and the planner each
 * ask with their own answer for _ and aggregates.
 */
extern bool gdl_term_bound(const GdlTerm *t, const bool *bound, bool anon_bound, bool agg_arg);

typedef struct GdlAtom
{
	char	   *name;			/* predicate; "schema.table" when qualified */
	int			nargs;
	GdlTerm   **args;
	GdlLoc		loc;
} GdlAtom;

typedef enum GdlCmpOp
{
	GDL_CMP_EQ, GDL_CMP_NE, GDL_CMP_LT, GDL_CMP_LE, GDL_CMP_GT, GDL_CMP_GE
} GdlCmpOp;

typedef enum GdlLitKind
{
	GDL_LIT_ATOM,				/* p(...) */
	GDL_LIT_NEG,				/* !p(...) or not p(...) */
	GDL_LIT_CMP					/* lhs op rhs; "V = expr" with V unbound is an assignment */
} GdlLitKind;

typedef struct GdlLiteral
{
	GdlLitKind	kind;
	GdlAtom		atom;			/* ATOM, NEG */
	GdlCmpOp	cmp;			/* CMP */
	GdlTerm    *lhs;			/* CMP */
	GdlTerm    *rhs;			/* CMP */
	GdlLoc		loc;
} GdlLiteral;

/* A rule or fact; a fact is a clause with nbody == 0. */
typedef struct GdlClause
{
	GdlAtom		head;
	int			nbody;
	GdlLiteral *body;
	int			nvars;			/* named variables, in order of appearance */
	char	  **varnames;
	char	   *text;			/* the clause's own source, trimmed, with the final '.' */
	GdlLoc		loc;
} GdlClause;

/* .decl name(arg: type, ...) */
typedef struct GdlDecl
{
	char	   *name;
	int			nargs;
	char	  **argnames;
	GdlType    *types;
	char	   *text;			/* the declaration's own source, trimmed */
	GdlLoc		loc;
} GdlDecl;

typedef enum GdlItemKind
{
	GDL_ITEM_CLAUSE, GDL_ITEM_DECL
} GdlItemKind;

/* One top-level item of a source text, in source order. */
typedef struct GdlItem
{
	GdlItemKind kind;
	GdlClause  *clause;			/* CLAUSE */
	GdlDecl    *decl;			/* DECL */
	int64_t		rule_id;		/* catalog id (gpudl.rules.id) or 0; set by the host */
} GdlItem;

typedef struct GdlProgram
{
	int			nitems;
	GdlItem    *items;
} GdlProgram;

/*
 * Parse a source text into its items.  Raises GDL_ERR_SYNTAX with
 * "syntax error at line L, column C" style messages whose detail quotes the
 * text near the error.
 */
extern GdlProgram *gdl_parse(const char *src);

/* Append all items of 'more' to 'prog' (building one program from many rows). */
extern void gdl_program_append(GdlProgram *prog, const GdlProgram *more);

/* The head predicate name of an item (clause head or declared name). */
extern const char *gdl_item_head(const GdlItem *item);

/* Print a term / clause back as Datalog source (canonical spacing). */
extern char *gdl_clause_to_string(const GdlClause *c);

/* Print one term of clause c (c names the variables; may be NULL). */
extern char *gdl_term_to_string(const GdlClause *c, const GdlTerm *t);

/* An atom printed with its arguments written by a term printer (lang_print.c). */
typedef void (*GdlTermPrinter) (GdlBuf *b, const GdlClause *c, const GdlTerm *t);
extern void gdl_atom_print(GdlBuf *b, const GdlClause *c, const GdlAtom *a, GdlTermPrinter term);

/* Print a declaration back as ".decl name(arg: type, ...)". */
extern char *gdl_decl_to_string(const GdlDecl *d);

/*
 * Predicate names.  A name prints bare when the parser reads it back as
 * the same name (a lower-case identifier, or two joined by '.' as in
 * schema.table); any other name (capitals, '_' or a digit first, blanks,
 * '-', '/', non-ASCII, ...) prints as a quoted string, "Has Car"(X, Y),
 * with the string escapes \" \\ \n \t \r.  The empty name cannot be
 * written.  Every place that writes rule text uses these.
 */
extern bool gdl_name_needs_quotes(const char *name);
extern void gdl_pred_name_to_buf(GdlBuf *b, const char *name);
extern char *gdl_pred_name_quote(const char *name);

/* ------------------------------------------------------------- analysis */

/* What the host knows about a table an extensional predicate reads. */
typedef struct GdlRelInfo
{
	uint32_t	relid;			/* host identifier (a PostgreSQL Oid) */
	char	   *display_name;	/* schema-qualified name for messages/explain */
	int			ncols;
	GdlType    *types;			/* GDL_TYPE_UNKNOWN for unsupported column types */
	char	  **colnames;
	char	  **typnames;		/* host type names, for messages */
} GdlRelInfo;

/*
 * Resolve an extensional predicate to a table.  'name' is as written
 * (possibly "schema.table").  Fill *out and return true, or return false when
 * there is no such table.  The host may raise errors itself (privileges).
 */
typedef bool (*GdlResolveFn) (void *arg, const char *name, GdlRelInfo *out);

typedef struct GdlPred
{
	int			id;				/* index in GdlAnalysis.preds */
	char	   *name;
	int			arity;
	GdlType    *types;			/* inferred or declared, one per argument */
	bool		is_edb;			/* read from a table */
	GdlRelInfo	rel;			/* EDB only */
	GdlDecl    *decl;			/* NULL unless declared */
	int			stratum;		/* IDB only; -1 for EDB */
	bool		has_agg;		/* some defining clause has an aggregate head */
	int			nclauses;		/* defining clauses (indices into GdlAnalysis.clauses) */
	int		   *clauses;
	GdlLoc		first_use;		/* for messages */
} GdlPred;

/* Per-clause results of analysis. */
typedef struct GdlClauseInfo
{
	GdlClause  *clause;
	int			item;			/* index into GdlProgram.items */
	int			head_pred;		/* pred id */
	int		   *lit_pred;		/* pred id per body literal, -1 for comparisons */
	GdlType    *var_types;		/* per variable of the clause */
	bool	   *lit_assigns;	/* per body literal: true for an assignment "V = expr" */
	bool		recursive;		/* body mentions a predicate of its own stratum */
} GdlClauseInfo;

typedef struct GdlStratum
{
	int			npreds;
	int		   *preds;			/* pred ids */
	int			nclauses;
	int		   *clauses;		/* indices into GdlAnalysis.clauses */
	bool		recursive;		/* needs a fixpoint */
} GdlStratum;

typedef struct GdlAnalysis
{
	GdlProgram *prog;
	int			npreds;
	GdlPred    *preds;
	int			nclauses;
	GdlClauseInfo *clauses;
	int			nstrata;		/* strata in evaluation order */
	GdlStratum *strata;
} GdlAnalysis;

/*
 * Check and annotate a program: predicate resolution (clauses define IDB
 * predicates; any other body predicate is EDB and resolved with 'resolve'),
 * arity, type inference and checking, safety, stratification.
 */
extern GdlAnalysis *gdl_analyze(GdlProgram *prog, GdlResolveFn resolve, void *resolve_arg);

/*
 * Closures written non-linearly (T(A, C) :- T(A, B), T(B, C)) are made
 * linear by gdl_analyze (lang_linear.c) while this is true (the default;
 * tests turn it off to exercise the engine's non-linear evaluation).
 */
extern bool gdl_linearize_closures;

/* Find a predicate by name; -1 if absent. */
extern int	gdl_analysis_find_pred(const GdlAnalysis *a, const char *name);

/*
 * Lines describing strata and rules, for gpudl_explain (see lang_explain.c):
 *   "stratum 0: path/2 (recursive)"
 *   "  [rule 12] path(X, Z) :- path(X, Y), edge(Y, Z)."   (no [rule] when id 0)
 *   "idb path/2: path(int, int)"
 *   "edb edge/2: public.edge(int, int)" ...
 * Returns the number of lines; *lines_out is a gdl_alloc'ed array.
 */
extern int	gdl_explain_strata(const GdlAnalysis *a, char ***lines_out);

/* ------------------------------------------------- goal-directed rewrite */

/*
 * A program rewritten by magic sets for one goal predicate and binding
 * pattern (lang_magic.c).  It derives the goal's answers for the constants
 * the host puts into the seed table, and as little else as it can.
 * Predicate names in it hold '@' ("anc@bf", "m@anc@bf", "s@anc@bf"), which
 * no source text can.
 */
typedef struct GdlMagic
{
	GdlProgram *prog;			/* the rewritten program (shares terms with the original) */
	int			goal_pred;		/* the goal predicate in the original analysis */
	const char *goal_name;		/* the goal predicate in prog (adorned) */
	const char *seed_name;		/* extensional predicate: one row per goal binding */
	int			nseed;			/* seed columns: the goal arguments bound by demand */
	int		   *seed_args;		/* goal argument of each seed column */
	const char *pattern;		/* adornment of the goal: 'b' bound / 'f' free per argument */
	int			nadorned;		/* adorned predicates */
	int			nmagic_rules;	/* rules deriving demand */
	int			nfrozen;		/* derived predicates kept whole (rewrite unsound through them) */
} GdlMagic;

/*
 * Rewrite an analysed program for a goal predicate whose arguments flagged
 * in 'bound' (one flag per argument) are bound.  Aggregate arguments are
 * never bound.  Returns NULL when no rewrite applies (the goal is a table or
 * facts only, nothing bindable is bound, or the goal predicate cannot be
 * adorned soundly): run the original program then.  The result is
 * stratified whenever the original is.
 */
extern GdlMagic *gdl_magic_rewrite(const GdlAnalysis *a, int goal_pred, const bool *bound);

/*
 * Analyse a rewritten program.  Its tables resolve to those of 'a' (no host
 * look-up); the seed resolves to a table with relid 0 and m->nseed columns
 * typed like the goal's bound arguments (integers as bigint).
 */
extern GdlAnalysis *gdl_magic_analyze(const GdlAnalysis *a, const GdlMagic *m);

#endif							/* GDL_LANG_H */
