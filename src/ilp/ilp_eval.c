/*
 * ilp_eval.c — gdl_ilp_eval_program: evaluate a learned program (the source
 * text gdl_ilp_learn returns) over a problem's background with the ILP
 * core's own fixpoint evaluator, and say which given facts it derives.
 *
 * It reads the learner's own output language only — clauses
 * "t(X, Y) :- p(X, Z), q(Z, Y), X != Y." whose arguments are variables, plus
 * the two clauses of each invented closure "q_plus" — not full Datalog (the
 * engine, gdl_run, does that).  It serves tests and benchmarks that judge a
 * learned program on another world, and hosts without the engine.
 */
#include "ilp_int.h"

#include <string.h>

typedef struct Lexer
{
	const char *s;
	const char *p;
} Lexer;

/* Raise a syntax error about the learned program text. */
static void
bad(const Lexer *lx, const char *what)
{
	gdl_error(GDL_ERR_SYNTAX, NULL, NULL, "cannot read learned program at offset %d: %s",
			  (int) (lx->p - lx->s), what);
}

/* Skip white space and % comments. */
static void
skip(Lexer *lx)
{
	for (;;)
	{
		while (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n' || *lx->p == '\r')
			lx->p++;
		if (*lx->p != '%')
			return;
		while (*lx->p && *lx->p != '\n')
			lx->p++;
	}
}

/* Is c a character of an identifier? */
static bool
ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/*
 * Read an identifier (dots allowed inside: schema.table), or a quoted
 * predicate name as gdl_pred_name_to_buf writes it ("a/b", with \" \\
 * \n \t \r escapes); returns a copy.
 */
static char *
ident(Lexer *lx)
{
	const char *b;

	skip(lx);
	b = lx->p;
	if (*b == '"' || *b == '\'')
	{
		char		q = *lx->p++;
		GdlBuf		name;

		gdl_buf_init(&name);
		while (*lx->p != q)
		{
			char		c = *lx->p;

			if (c == '\0' || c == '\n')
				bad(lx, "unterminated quoted name");
			if (c == '\\')
			{
				c = lx->p[1];
				c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
				if (c == '\0')
					bad(lx, "unterminated quoted name");
				lx->p++;
			}
			gdl_buf_putc(&name, c);
			lx->p++;
		}
		lx->p++;
		return name.data ? name.data : gdl_strdup("");
	}
	while (ident_char(*lx->p) || (*lx->p == '.' && ident_char(lx->p[1]) && lx->p > b))
		lx->p++;
	if (lx->p == b)
		bad(lx, "identifier expected");
	return gdl_strndup(b, lx->p - b);
}

/* Consume the given punctuation or fail. */
static void
expect(Lexer *lx, const char *tok)
{
	skip(lx);
	if (strncmp(lx->p, tok, strlen(tok)) != 0)
		bad(lx, gdl_sprintf("\"%s\" expected", tok));
	lx->p += strlen(tok);
}

/* Consume the punctuation if it is next. */
static bool
accept(Lexer *lx, const char *tok)
{
	skip(lx);
	if (strncmp(lx->p, tok, strlen(tok)) != 0)
		return false;
	lx->p += strlen(tok);
	return true;
}

/* A parsed literal before variables are numbered. */
typedef struct PLit
{
	char	   *pred;			/* NULL: inequality */
	int			nargs;
	char	   *args[2];
} PLit;

typedef struct PClause
{
	PLit		head;
	int			nbody;
	PLit		body[ILP_MAX_LITS + 1];
} PClause;

/* Parse one literal: an atom or "V != W". */
static void
parse_lit(Lexer *lx, PLit *l)
{
	char	   *first = ident(lx);

	if (accept(lx, "!="))
	{
		l->pred = NULL;
		l->nargs = 2;
		l->args[0] = first;
		l->args[1] = ident(lx);
		return;
	}
	l->pred = first;
	l->nargs = 0;
	expect(lx, "(");
	do
	{
		if (l->nargs == 2)
			bad(lx, "only unary and binary atoms are supported");
		l->args[l->nargs++] = ident(lx);
	} while (accept(lx, ","));
	expect(lx, ")");
}

/* Parse one clause "head :- lit, ..., lit." */
static void
parse_clause(Lexer *lx, PClause *c)
{
	parse_lit(lx, &c->head);
	if (c->head.pred == NULL)
		bad(lx, "a clause head must be an atom");
	expect(lx, ":-");
	c->nbody = 0;
	do
	{
		if (c->nbody == ILP_MAX_LITS)
			bad(lx, "too many body literals");
		parse_lit(lx, &c->body[c->nbody++]);
	} while (accept(lx, ","));
	expect(lx, ".");
}

/* Index of a predicate by name, or -1. */
static int
find_pred(const IlpWorld *w, const char *name)
{
	for (int i = 0; i < w->npreds; i++)
		if (strcmp(w->preds[i].name, name) == 0)
			return i;
	return -1;
}

/* Number of a variable in a clause, adding it as the next one when new. */
static int
var_index(char **names, int *n, const char *v, const Lexer *lx)
{
	for (int i = 0; i < *n; i++)
		if (strcmp(names[i], v) == 0)
			return i;
	if (*n == ILP_MAX_VARS)
		bad(lx, "too many variables");
	names[*n] = (char *) v;
	return (*n)++;
}

/* Turn a target clause into a candidate rule over the world. */
static void
to_rule(const IlpWorld *w, const PClause *c, IlpRule *r, const Lexer *lx)
{
	char	   *names[ILP_MAX_VARS];
	int			nv = 0;
	int			nat = 0;

	memset(r, 0, sizeof(*r));
	if (c->head.nargs != w->arity)
		bad(lx, "head arity differs from the target's");
	for (int i = 0; i < c->head.nargs; i++)
	{
		if (var_index(names, &nv, c->head.args[i], lx) != i)
			bad(lx, "head arguments must be distinct variables");
		r->vcls[i] = w->cls[i];
	}
	/* atoms first, inequalities after them */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < c->nbody; i++)
		{
			const PLit *l = &c->body[i];
			IlpLit	   *o;

			if ((pass == 0) != (l->pred != NULL))
				continue;
			o = &r->lits[r->nlits++];
			if (l->pred == NULL)
			{
				o->pred = -1;
				o->a = var_index(names, &nv, l->args[0], lx);
				o->b = var_index(names, &nv, l->args[1], lx);
				continue;
			}
			o->pred = find_pred(w, l->pred);
			if (o->pred < 0)
				gdl_error(GDL_ERR_UNDEFINED, NULL, NULL, "unknown predicate \"%s\" in learned rule",
						  l->pred);
			if (w->preds[o->pred].arity != l->nargs)
				gdl_error(GDL_ERR_DATATYPE, NULL, NULL, "predicate \"%s\" has arity %d, not %d",
						  l->pred, w->preds[o->pred].arity, l->nargs);
			o->a = var_index(names, &nv, l->args[0], lx);
			r->vcls[o->a] = w->preds[o->pred].cls[0];
			o->b = -1;
			if (l->nargs == 2)
			{
				o->b = var_index(names, &nv, l->args[1], lx);
				r->vcls[o->b] = w->preds[o->pred].cls[1];
			}
			nat++;
		}
	if (nat > ILP_MAX_ATOMS || r->nlits - nat > 1)
		bad(lx, "rule too long for the ILP evaluator");
	r->natoms = nat;
	r->nvars = nv;
	if (!ilp_rule_safe(r, w->arity))
		gdl_error(GDL_ERR_UNSAFE, NULL, NULL, "learned rule does not bind its head");
}

/*
 * Evaluate 'program' (learned source) over the problem's background to its
 * least fixpoint and set derived[i] for each row of facts it derives.
 * Clauses for other heads must define invented closures.
 */
void
gdl_ilp_eval_program(const GdlIlpProblem *prob, const char *program,
					 const GdlColumns *facts, bool *derived)
{
	GdlIlpProblem bg = *prob;
	IlpWorld   *w;
	Lexer		lx;
	IlpRule    *rules = NULL;
	int			n = 0,
				cap = 0;
	IlpKeySet	set;

	bg.positives = NULL;
	bg.negatives = NULL;
	w = ilp_world_build(&bg, false, true, NULL);
	lx.s = lx.p = program;
	for (;;)
	{
		PClause		c;

		skip(&lx);
		if (*lx.p == '\0')
			break;
		parse_clause(&lx, &c);
		if (strcmp(c.head.pred, w->target_name) != 0)
		{
			int			p = find_pred(w, c.head.pred);

			if (p < 0 || w->preds[p].kind != ILP_PRED_CLOSURE)
				gdl_error(GDL_ERR_PARAM, NULL, NULL,
						  "clause for \"%s\" is not one the ILP evaluator knows", c.head.pred);
			continue;			/* the world has the closure already */
		}
		if (n == cap)
		{
			cap = cap * 2 + 8;
			rules = gdl_realloc(rules, sizeof(IlpRule) * cap);
		}
		to_rule(w, &c, &rules[n++], &lx);
	}
	ilp_fixpoint_set(w, rules, n, &set);
	for (size_t i = 0; i < facts->nrows; i++)
	{
		int32_t		a = ilp_dom_id(&w->dom[w->cls[0]], facts->cols[0][i]);
		int32_t		b = w->arity == 2 ? ilp_dom_id(&w->dom[w->cls[1]], facts->cols[1][i]) : 0;

		derived[i] = a >= 0 && b >= 0 && ilp_keyset_has(&set, ilp_pair_key(a, b));
	}
	ilp_keyset_free(&set);
	gdl_free(rules);
}
