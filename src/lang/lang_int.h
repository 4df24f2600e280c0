/*
 * lang_int.h — internals shared by the files of the language layer: tokens,
 * the syntax-error helper, the internal type lattice used while inferring,
 * and the analysis passes that gdl_analyze runs in order.
 *
 * Nothing outside src/lang includes this file; the public API is gdl_lang.h.
 */
#ifndef GDL_LANG_INT_H
#define GDL_LANG_INT_H

#include "gdl_lang.h"

/* ----------------------------------------------------------------- lexer */

typedef enum GdlTokKind
{
	TK_EOF,
	TK_IDENT,					/* lower-case identifier: predicate or symbol */
	TK_VAR,						/* upper-case or _x identifier */
	TK_ANON,					/* _ alone */
	TK_INT,						/* unsigned integer literal, value in uval */
	TK_FLOAT,					/* float literal, value in fval */
	TK_STRING,					/* quoted string, value in str */
	TK_LPAREN,
	TK_RPAREN,
	TK_COMMA,
	TK_DOT,
	TK_COLON,
	TK_IMPLIES,					/* :- */
	TK_BANG,					/* ! */
	TK_EQ,
	TK_NE,
	TK_LT,
	TK_LE,
	TK_GT,
	TK_GE,
	TK_PLUS,
	TK_MINUS,
	TK_STAR,
	TK_SLASH,
	TK_PERCENT
} GdlTokKind;

typedef struct GdlToken
{
	GdlTokKind	kind;
	int			start;			/* byte offsets of the token in the source */
	int			end;
	GdlLoc		loc;
	uint64_t	uval;			/* INT: magnitude, at most 2^63 */
	double		fval;			/* FLOAT */
	char	   *str;			/* STRING value; IDENT/VAR/ANON spelling */
} GdlToken;

/* Largest integer magnitude the lexer accepts (only valid as -2^63). */
#define GDL_INT_MAG_MAX ((uint64_t) 1 << 63)

/* Deepest nesting of parentheses / unary minus the parser accepts. */
#define GDL_MAX_NESTING 256

/* Most binary operators one clause may hold (bounds recursion later on). */
#define GDL_MAX_OPERATORS 1000

extern GdlToken *gdl_lex(const char *src, int *ntoks);

/* Quote the source line holding 'offset' with a caret under the column. */
extern char *gdl_source_excerpt(const char *src, int offset);

/* Describe a token for "but found ..." messages. */
extern char *gdl_token_desc(const char *src, const GdlToken *t);

/* Raise GDL_ERR_SYNTAX at a source offset: message gets line and column. */
extern void gdl_syntax_error(const char *src, int offset, GdlLoc loc,
							 const char *hint, const char *fmt,...)
			__attribute__((format(printf, 5, 6), noreturn));

/* ------------------------------------------------------------- printing */

extern void gdl_term_to_buf(GdlBuf *b, const GdlClause *c, const GdlTerm *t);
extern void gdl_atom_to_buf(GdlBuf *b, const GdlClause *c, const GdlAtom *a);
extern const char *gdl_cmp_name(GdlCmpOp op);
extern const char *gdl_agg_name(GdlAggKind agg);

/* ------------------------------------------------------------- analysis */

/*
 * Internal types while inferring: the public GdlType values plus integer
 * literals, which fit int, bigint or float8 until something decides.
 */
#define GDL_ITYPE_CONFLICT	(-1)
#define GDL_ITYPE_ILIT		100 /* integer literal within int32 */
#define GDL_ITYPE_BLIT		101 /* integer literal beyond int32 */

extern int	gdl_itype_join(int a, int b);
extern GdlType gdl_itype_resolve(int t);
extern const char *gdl_itype_name(int t);

/* "rule at line 3" / "fact at line 3" */
extern char *gdl_clause_where(const GdlClause *c);

/* The passes of gdl_analyze, in the order it runs them. */
extern void gdl_lang_linearize(GdlProgram *p);
extern void gdl_lang_resolve(GdlAnalysis *a, GdlResolveFn resolve, void *arg);
extern void gdl_lang_safety(GdlAnalysis *a);
extern void gdl_lang_types(GdlAnalysis *a);
extern void gdl_lang_stratify(GdlAnalysis *a);

#endif							/* GDL_LANG_INT_H */
