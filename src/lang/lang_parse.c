/*
 * lang_parse.c — recursive-descent parser from tokens to the AST: a program
 * is a list of items (clauses and .decl declarations), each keeping its own
 * trimmed source text so the host can store one catalog row per item.
 *
 *   item     := clause | decl
 *   clause   := atom [ ":-" literal { "," literal } ] "."
 *   decl     := ".decl" name "(" [ [argname ":"] type { "," ... } ] ")" [ "." ]
 *   literal  := ("!" | "not") atom | atom | expr cmpop expr
 *   atom     := name "(" arg { "," arg } ")"
 *   name     := ident [ "." ident ] | string      (a quoted name: "Has Car", '/film/film/genre')
 *   arg      := constant | variable | "_" | agg "(" variable ")" (head only)
 *   expr     := mul { ("+" | "-") mul }     mul := unary { ("*" | "/" | "%") unary }
 *   unary    := "-" unary | primary         primary := constant | variable | "(" expr ")"
 */
#include "lang_int.h"

#include <string.h>

typedef struct Parser
{
	const char *src;
	GdlToken   *toks;
	int			ntoks;
	int			pos;
	int			depth;			/* expression nesting */
	int			nops;			/* operators in the current clause */
	/* variables of the clause being parsed */
	int			nvars;
	int			capvars;
	char	  **varnames;
} Parser;

/* The token k places ahead of the cursor (EOF past the end). */
static GdlToken *
peek_at(Parser *p, int k)
{
	int			i = p->pos + k;

	if (i >= p->ntoks)
		i = p->ntoks - 1;
	return &p->toks[i];
}

/* The token at the cursor. */
static GdlToken *
peek(Parser *p)
{
	return peek_at(p, 0);
}

/* Consume and return the token at the cursor. */
static GdlToken *
next(Parser *p)
{
	GdlToken   *t = peek(p);

	if (p->pos < p->ntoks - 1)
		p->pos++;
	return t;
}

/* Raise a syntax error at token t. */
static void
error_at(Parser *p, const GdlToken *t, const char *hint, const char *what)
	__attribute__((noreturn));
static void
error_at(Parser *p, const GdlToken *t, const char *hint, const char *what)
{
	gdl_syntax_error(p->src, t->start, t->loc, hint, "%s", what);
}

/* Raise 'expected <what> but found <token>' at the cursor. */
static void
expected(Parser *p, const char *what, const char *hint) __attribute__((noreturn));
static void
expected(Parser *p, const char *what, const char *hint)
{
	GdlToken   *t = peek(p);

	gdl_syntax_error(p->src, t->start, t->loc, hint, "expected %s but found %s",
					 what, gdl_token_desc(p->src, t));
}

/* Consume a token of the given kind or raise 'expected ...'. */
static GdlToken *
expect(Parser *p, GdlTokKind kind, const char *what)
{
	if (peek(p)->kind != kind)
		expected(p, what, NULL);
	return next(p);
}

/* Is token t an identifier spelled s? */
static bool
is_word(const GdlToken *t, const char *s)
{
	return t->kind == TK_IDENT && strcmp(t->str, s) == 0;
}

/* Are tokens a and b adjacent in the source (no blank between)? */
static bool
adjacent(const GdlToken *a, const GdlToken *b)
{
	return a->end == b->start;
}

/*
 * Does the cursor start an atom: name "(", schema "." name "(" or a quoted
 * name "("?  A string before "(" is always a predicate name: no value is
 * ever followed by "(", so it never clashes with a string constant.
 */
static bool
at_atom(Parser *p)
{
	GdlToken   *t0 = peek_at(p, 0);
	GdlToken   *t1 = peek_at(p, 1);

	if (t0->kind == TK_STRING)
		return t1->kind == TK_LPAREN;
	if (t0->kind != TK_IDENT)
		return false;
	if (t1->kind == TK_LPAREN)
		return true;
	return t1->kind == TK_DOT && adjacent(t0, t1) &&
		peek_at(p, 2)->kind == TK_IDENT && adjacent(t1, peek_at(p, 2)) &&
		peek_at(p, 3)->kind == TK_LPAREN;
}

/* A fresh term of 'kind' located at token t. */
static GdlTerm *
new_term(GdlTermKind kind, const GdlToken *t)
{
	GdlTerm    *term = gdl_alloc(sizeof(GdlTerm));

	term->kind = kind;
	term->loc = t->loc;
	return term;
}

/* Index of a named variable in the current clause, added when new. */
static int
var_index(Parser *p, const char *name)
{
	int			i;

	for (i = 0; i < p->nvars; i++)
		if (strcmp(p->varnames[i], name) == 0)
			return i;
	p->varnames = gdl_grow(p->varnames, p->nvars, &p->capvars, 8, sizeof(char *));
	p->varnames[p->nvars] = gdl_strdup(name);
	return p->nvars++;
}

/* The hint for a name the lexer reads as a variable (Parent, _hypernym). */
static const char *
quote_hint(const GdlToken *t)
{
	return gdl_sprintf("predicate names start with a lower-case letter; write other names in quotes, "
					   "as in \"%s\"(...)", t->str);
}

/* Parse a predicate name, "name", "schema.name" or a quoted name. */
static char *
parse_pred_name(Parser *p)
{
	GdlToken   *t = peek(p);

	if (t->kind == TK_VAR)
		error_at(p, t, quote_hint(t),
				 gdl_sprintf("expected a predicate name but found %s",
							 gdl_token_desc(p->src, t)));
	if (t->kind == TK_STRING)
	{
		if (t->str[0] == '\0')
			error_at(p, t, "a quoted predicate name has at least one character",
					 "empty predicate name");
		next(p);
		return gdl_strdup(t->str);
	}
	t = expect(p, TK_IDENT, "a predicate name");
	if (peek(p)->kind == TK_DOT && adjacent(t, peek(p)) &&
		peek_at(p, 1)->kind == TK_IDENT && adjacent(peek(p), peek_at(p, 1)))
	{
		GdlToken   *t2;

		next(p);
		t2 = next(p);
		return gdl_sprintf("%s.%s", t->str, t2->str);
	}
	return gdl_strdup(t->str);
}

static GdlTerm *parse_expr(Parser *p);

/*
 * The text constant of token t (a string or a bare word), consumed; an
 * atom where a value belongs (t followed by "(") is an error.
 */
static GdlTerm *
text_value(Parser *p, GdlToken *t)
{
	GdlTerm    *term;

	if (peek_at(p, 1)->kind == TK_LPAREN)
		error_at(p, t, NULL,
				 gdl_sprintf("unexpected atom %s where a value was expected",
							 gdl_token_desc(p->src, t)));
	term = new_term(GDL_TERM_TEXT, next(p));
	term->text = t->str;
	return term;
}

/* Parse a primary: a constant, a variable, _, or a parenthesized expression. */
static GdlTerm *
parse_primary(Parser *p)
{
	GdlToken   *t = peek(p);
	GdlTerm    *term;

	switch (t->kind)
	{
		case TK_INT:
			if (t->uval == GDL_INT_MAG_MAX)
				error_at(p, t, "integers are 64-bit (bigint)",
						 gdl_sprintf("integer constant %.*s is out of range",
									 t->end - t->start, p->src + t->start));
			term = new_term(GDL_TERM_INT, next(p));
			term->ival = (int64_t) t->uval;
			return term;
		case TK_FLOAT:
			term = new_term(GDL_TERM_FLOAT, next(p));
			term->fval = t->fval;
			return term;
		case TK_STRING:
			term = text_value(p, t);
			term->quoted = true;
			return term;
		case TK_IDENT:
			if (is_word(t, "true") || is_word(t, "false"))
			{
				term = new_term(GDL_TERM_BOOL, next(p));
				term->bval = is_word(t, "true");
				return term;
			}
			return text_value(p, t);
		case TK_VAR:
			term = new_term(GDL_TERM_VAR, next(p));
			term->var = var_index(p, t->str);
			return term;
		case TK_ANON:
			return new_term(GDL_TERM_ANON, next(p));
		case TK_LPAREN:
			if (++p->depth > GDL_MAX_NESTING)
				error_at(p, t, NULL, "expression is nested too deeply");
			next(p);
			term = parse_expr(p);
			expect(p, TK_RPAREN, "\")\"");
			p->depth--;
			return term;
		default:
			expected(p, "a constant, a variable or \"(\"", NULL);
	}
}

/* Parse unary minus; a minus in front of a number folds into the constant. */
static GdlTerm *
parse_unary(Parser *p)
{
	GdlToken   *t = peek(p);
	GdlTerm    *term;

	if (t->kind != TK_MINUS)
		return parse_primary(p);
	next(p);
	if (peek(p)->kind == TK_INT)
	{
		GdlToken   *n = next(p);

		term = new_term(GDL_TERM_INT, t);
		term->ival = (int64_t) (0 - n->uval);
		return term;
	}
	if (peek(p)->kind == TK_FLOAT)
	{
		term = new_term(GDL_TERM_FLOAT, t);
		term->fval = -next(p)->fval;
		return term;
	}
	if (++p->depth > GDL_MAX_NESTING)
		error_at(p, t, NULL, "expression is nested too deeply");
	term = new_term(GDL_TERM_NEG, t);
	term->left = parse_unary(p);
	p->depth--;
	return term;
}

/*
 * Count an operator of the clause: long operator chains make deep trees,
 * and every later pass walks them recursively.
 */
static void
count_op(Parser *p, const GdlToken *t)
{
	if (++p->nops > GDL_MAX_OPERATORS)
		error_at(p, t, "split the computation over several assignments",
				 "too many operators in one clause");
}

/* Build a binary operation node. */
static GdlTerm *
binop(GdlArithOp op, GdlTerm *l, GdlTerm *r, const GdlToken *t)
{
	GdlTerm    *term = new_term(GDL_TERM_BINOP, t);

	term->op = op;
	term->left = l;
	term->right = r;
	term->loc = l->loc;
	return term;
}

/* The binary operators, by precedence level: 0 is + -, 1 is * / %. */
static const struct
{
	int			level;
	GdlTokKind	tok;
	GdlArithOp	op;
}			binops[] =
{
	{0, TK_PLUS, GDL_OP_ADD},
	{0, TK_MINUS, GDL_OP_SUB},
	{1, TK_STAR, GDL_OP_MUL},
	{1, TK_SLASH, GDL_OP_DIV},
	{1, TK_PERCENT, GDL_OP_MOD},
};

#define NBINOPS ((int) (sizeof(binops) / sizeof(binops[0])))

/*
 * Parse a left-associative chain of one precedence level: + - over chains
 * of * / % (level 0), * / % over unary terms (level 1).  One function for
 * both levels, driven by the table above.
 */
static GdlTerm *
parse_level(Parser *p, int level)
{
	GdlTerm    *l = level == 0 ? parse_level(p, 1) : parse_unary(p);

	for (;;)
	{
		GdlToken   *t = peek(p);
		int			i;

		for (i = 0; i < NBINOPS; i++)
			if (binops[i].level == level && binops[i].tok == t->kind)
				break;
		if (i == NBINOPS)
			return l;
		count_op(p, t);
		next(p);
		l = binop(binops[i].op, l, level == 0 ? parse_level(p, 1) : parse_unary(p), t);
	}
}

/* Parse an arithmetic expression: + - over * / % (both left associative). */
static GdlTerm *
parse_expr(Parser *p)
{
	return parse_level(p, 0);
}

/* Map an identifier to an aggregate kind; false if it names none. */
static bool
agg_kind(const GdlToken *t, GdlAggKind *out)
{
	static const char *const names[] = {"count", "sum", "min", "max"};
	int			i;

	if (t->kind != TK_IDENT)
		return false;
	for (i = 0; i < 4; i++)
		if (strcmp(t->str, names[i]) == 0)
		{
			*out = (GdlAggKind) i;
			return true;
		}
	return false;
}

/* Parse one argument of an atom; aggregates only when in_head. */
static GdlTerm *
parse_arg(Parser *p, bool in_head)
{
	GdlToken   *t = peek(p);
	GdlAggKind	agg;
	GdlTerm    *term;

	if (agg_kind(t, &agg) && peek_at(p, 1)->kind == TK_LPAREN)
	{
		GdlToken   *v;

		if (!in_head)
			error_at(p, t, "write the aggregate in the head: deg(X, count(Y)) :- edge(X, Y).",
					 gdl_sprintf("aggregate %s(...) is only allowed in the head of a rule", t->str));
		next(p);
		next(p);
		v = peek(p);
		if (v->kind != TK_VAR)
			expected(p, gdl_sprintf("a variable to aggregate in %s(...)", t->str),
					 "aggregates take one variable bound in the body, e.g. count(Y)");
		term = new_term(GDL_TERM_AGG, t);
		term->agg = agg;
		term->arg = new_term(GDL_TERM_VAR, next(p));
		term->arg->var = var_index(p, v->str);
		expect(p, TK_RPAREN, "\")\"");
		return term;
	}
	term = parse_expr(p);
	if (term->kind == GDL_TERM_BINOP || term->kind == GDL_TERM_NEG)
		error_at(p, t, "bind the value to a variable in the body, e.g. p(X, N) :- q(X), N = X + 1.",
				 "arithmetic is not allowed as an argument of an atom");
	return term;
}

/* Parse an atom: name "(" args ")". */
static void
parse_atom(Parser *p, GdlAtom *atom, bool in_head)
{
	GdlToken   *t = peek(p);
	int			cap = 4;

	atom->loc = t->loc;
	atom->name = parse_pred_name(p);
	if (peek(p)->kind != TK_LPAREN)
		expected(p, gdl_sprintf("\"(\" after predicate name \"%s\"", atom->name),
				 peek(p)->kind == TK_IMPLIES || peek(p)->kind == TK_DOT || peek(p)->kind == TK_COMMA ?
				 "predicates need at least one argument, as in done(true)" : NULL);
	next(p);
	if (peek(p)->kind == TK_RPAREN)
		expected(p, "an argument", "predicates need at least one argument, as in done(true)");
	atom->args = gdl_alloc(sizeof(GdlTerm *) * cap);
	for (;;)
	{
		if (atom->nargs == cap)
		{
			cap *= 2;
			atom->args = gdl_realloc(atom->args, sizeof(GdlTerm *) * cap);
		}
		atom->args[atom->nargs++] = parse_arg(p, in_head);
		if (peek(p)->kind == TK_COMMA)
		{
			next(p);
			continue;
		}
		if (peek(p)->kind != TK_RPAREN)
			expected(p, "\",\" or \")\"",
					 peek(p)->kind == TK_IMPLIES ? "close the head's argument list with \")\" before \":-\"" : NULL);
		next(p);
		break;
	}
}

/* Map a token to a comparison operator; false if it is none. */
static bool
cmp_kind(const GdlToken *t, GdlCmpOp *out)
{
	switch (t->kind)
	{
		case TK_EQ:
			*out = GDL_CMP_EQ;
			return true;
		case TK_NE:
			*out = GDL_CMP_NE;
			return true;
		case TK_LT:
			*out = GDL_CMP_LT;
			return true;
		case TK_LE:
			*out = GDL_CMP_LE;
			return true;
		case TK_GT:
			*out = GDL_CMP_GT;
			return true;
		case TK_GE:
			*out = GDL_CMP_GE;
			return true;
		default:
			return false;
	}
}

/* Parse a body literal: negated atom, atom, or comparison. */
static void
parse_literal(Parser *p, GdlLiteral *lit)
{
	GdlToken   *t = peek(p);
	GdlCmpOp	op;

	lit->loc = t->loc;
	if (t->kind == TK_BANG || (is_word(t, "not") && (peek_at(p, 1)->kind == TK_IDENT ||
													(peek_at(p, 1)->kind == TK_STRING &&
													 peek_at(p, 2)->kind == TK_LPAREN))))
	{
		next(p);
		lit->kind = GDL_LIT_NEG;
		if (peek(p)->kind == TK_VAR && peek_at(p, 1)->kind == TK_LPAREN)
			(void) parse_pred_name(p);	/* raises, with the hint to quote */
		if (!at_atom(p))
			expected(p, "an atom after negation", NULL);
		parse_atom(p, &lit->atom, false);
		return;
	}
	/* Parent(X, Y): no value is followed by "(", so it was meant as an atom */
	if (t->kind == TK_VAR && peek_at(p, 1)->kind == TK_LPAREN)
		(void) parse_pred_name(p);	/* raises, with the hint to quote */
	if (at_atom(p))
	{
		lit->kind = GDL_LIT_ATOM;
		parse_atom(p, &lit->atom, false);
		return;
	}
	lit->kind = GDL_LIT_CMP;
	lit->lhs = parse_expr(p);
	if (!cmp_kind(peek(p), &op))
		expected(p, "a comparison operator (= != < <= > >=)", NULL);
	next(p);
	lit->cmp = op;
	lit->rhs = parse_expr(p);
}

/* Trimmed source text between two tokens, inclusive. */
static char *
item_text(Parser *p, const GdlToken *first, const GdlToken *last)
{
	return gdl_strndup(p->src + first->start, (size_t) (last->end - first->start));
}

/* Parse a clause (fact or rule) ending with '.'. */
static GdlClause *
parse_clause(Parser *p)
{
	GdlClause  *c = gdl_alloc(sizeof(GdlClause));
	GdlToken   *first = peek(p);
	GdlToken   *last;
	int			cap = 0;
	int			i;
	int			naggs = 0;

	p->nvars = 0;
	p->nops = 0;
	p->capvars = 0;
	p->varnames = NULL;
	c->loc = first->loc;
	if (first->kind != TK_IDENT && first->kind != TK_STRING)
		expected(p, "a fact, a rule or .decl",
				 first->kind == TK_VAR ? quote_hint(first) : NULL);
	parse_atom(p, &c->head, true);
	for (i = 0; i < c->head.nargs; i++)
		if (c->head.args[i]->kind == GDL_TERM_AGG && ++naggs > 1)
			gdl_syntax_error(p->src, first->start, c->head.args[i]->loc,
							 "compute each aggregate in its own rule",
							 "only one aggregate per rule head is allowed");
	if (peek(p)->kind == TK_IMPLIES)
	{
		next(p);
		for (;;)
		{
			c->body = gdl_grow(c->body, c->nbody, &cap, 4, sizeof(GdlLiteral));
			memset(&c->body[c->nbody], 0, sizeof(GdlLiteral));
			parse_literal(p, &c->body[c->nbody++]);
			if (peek(p)->kind == TK_COMMA)
			{
				next(p);
				continue;
			}
			break;
		}
		if (peek(p)->kind != TK_DOT)
			expected(p, "\",\" or \".\"", peek(p)->kind == TK_EOF ?
					 "every clause ends with \".\"" : NULL);
	}
	else if (peek(p)->kind != TK_DOT)
		expected(p, "\":-\" or \".\"", peek(p)->kind == TK_EOF ?
				 "every clause ends with \".\"" : NULL);
	last = next(p);
	c->text = item_text(p, first, last);
	c->nvars = p->nvars;
	c->varnames = p->varnames ? p->varnames : gdl_alloc(sizeof(char *));
	return c;
}

/* Parse ".decl name(arg: type, ...)" with an optional final '.'. */
static GdlDecl *
parse_decl(Parser *p)
{
	GdlDecl    *d = gdl_alloc(sizeof(GdlDecl));
	GdlToken   *first = next(p);	/* the '.' of .decl */
	GdlToken   *last;
	int			cap = 4;

	next(p);					/* decl */
	d->loc = first->loc;
	d->name = parse_pred_name(p);
	expect(p, TK_LPAREN, gdl_sprintf("\"(\" after .decl %s", d->name));
	d->argnames = gdl_alloc(sizeof(char *) * cap);
	d->types = gdl_alloc(sizeof(GdlType) * cap);
	if (peek(p)->kind == TK_RPAREN)
		expected(p, "an argument declaration", "declare each argument as name: type");
	for (;;)
	{
		GdlToken   *t = peek(p);
		GdlBuf		tn;
		GdlToken   *tfirst;
		GdlType		ty;

		if (d->nargs == cap)
		{
			cap *= 2;
			d->argnames = gdl_realloc(d->argnames, sizeof(char *) * cap);
			d->types = gdl_realloc(d->types, sizeof(GdlType) * cap);
		}
		if ((t->kind == TK_IDENT || t->kind == TK_VAR) && peek_at(p, 1)->kind == TK_COLON)
		{
			d->argnames[d->nargs] = gdl_strdup(t->str);
			next(p);
			next(p);
		}
		else
			d->argnames[d->nargs] = gdl_sprintf("arg%d", d->nargs + 1);
		tfirst = peek(p);
		if (tfirst->kind != TK_IDENT)
			expected(p, "a type name", "supported types: int, bigint, text, bool, float8");
		gdl_buf_init(&tn);
		while (peek(p)->kind == TK_IDENT)
		{
			if (tn.len > 0)
				gdl_buf_putc(&tn, ' ');
			gdl_buf_append(&tn, "%s", next(p)->str);
		}
		ty = gdl_type_from_name(tn.data);
		if (ty == GDL_TYPE_UNKNOWN)
			gdl_error(GDL_ERR_DATATYPE, gdl_source_excerpt(p->src, tfirst->start),
					  "supported types: int, bigint, text, bool, float8",
					  "unknown type \"%s\" in .decl of \"%s\" at line %d, column %d",
					  tn.data, d->name, tfirst->loc.line, tfirst->loc.col);
		d->types[d->nargs++] = ty;
		if (peek(p)->kind == TK_COMMA)
		{
			next(p);
			continue;
		}
		last = expect(p, TK_RPAREN, "\",\" or \")\"");
		break;
	}
	if (peek(p)->kind == TK_DOT && !(peek_at(p, 1)->kind == TK_IDENT &&
									 adjacent(peek(p), peek_at(p, 1)) &&
									 is_word(peek_at(p, 1), "decl")))
		last = next(p);
	d->text = item_text(p, first, last);
	return d;
}

/*
 * Parse a source text into its items.  An empty text (or only comments)
 * gives a program with no items; the host decides whether that is an error.
 */
GdlProgram *
gdl_parse(const char *src)
{
	Parser		p;
	GdlProgram *prog = gdl_alloc(sizeof(GdlProgram));
	int			cap = 0;

	memset(&p, 0, sizeof(p));
	if (src == NULL)
		src = "";
	p.src = src;
	p.toks = gdl_lex(src, &p.ntoks);
	while (peek(&p)->kind != TK_EOF)
	{
		GdlItem    *item;

		gdl_check_interrupts();
		prog->items = gdl_grow(prog->items, prog->nitems, &cap, 8, sizeof(GdlItem));
		item = &prog->items[prog->nitems];
		memset(item, 0, sizeof(*item));
		if (peek(&p)->kind == TK_DOT && is_word(peek_at(&p, 1), "decl") &&
			adjacent(peek(&p), peek_at(&p, 1)))
		{
			item->kind = GDL_ITEM_DECL;
			item->decl = parse_decl(&p);
		}
		else
		{
			item->kind = GDL_ITEM_CLAUSE;
			item->clause = parse_clause(&p);
		}
		prog->nitems++;
	}
	if (prog->items == NULL)
		prog->items = gdl_alloc(sizeof(GdlItem));
	return prog;
}

/* Append all items of 'more' to 'prog' (sharing the item contents). */
void
gdl_program_append(GdlProgram *prog, const GdlProgram *more)
{
	if (more == NULL || more->nitems == 0)
		return;
	prog->items = gdl_realloc(prog->items,
							  sizeof(GdlItem) * (size_t) (prog->nitems + more->nitems));
	memcpy(prog->items + prog->nitems, more->items, sizeof(GdlItem) * (size_t) more->nitems);
	prog->nitems += more->nitems;
}

/* The head predicate name of an item. */
const char *
gdl_item_head(const GdlItem *item)
{
	return item->kind == GDL_ITEM_DECL ? item->decl->name : item->clause->head.name;
}
