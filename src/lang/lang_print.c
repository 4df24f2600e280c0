/*
 * lang_print.c — the AST back to Datalog text with canonical spacing, and
 * the names of types, operators and aggregates.  Printed text parses back to
 * the same AST (the fuzz harness checks this).
 */
#include "lang_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The SQL-ish name of a type: "int", "bigint", "text", "bool", "float8". */
const char *
gdl_type_name(GdlType t)
{
	switch (t)
	{
		case GDL_TYPE_INT:
			return "int";
		case GDL_TYPE_BIGINT:
			return "bigint";
		case GDL_TYPE_TEXT:
			return "text";
		case GDL_TYPE_BOOL:
			return "bool";
		case GDL_TYPE_FLOAT8:
			return "float8";
		case GDL_TYPE_UNKNOWN:
			break;
	}
	return "unknown";
}

/*
 * Map a type name (as in .decl or a host catalog, case-insensitive) to a
 * type; GDL_TYPE_UNKNOWN when it is not one the engine supports.
 */
GdlType
gdl_type_from_name(const char *name)
{
	static const struct
	{
		const char *name;
		GdlType		type;
	}			names[] =
	{
		{"int", GDL_TYPE_INT}, {"integer", GDL_TYPE_INT}, {"int4", GDL_TYPE_INT},
		{"int2", GDL_TYPE_INT}, {"smallint", GDL_TYPE_INT},
		{"bigint", GDL_TYPE_BIGINT}, {"int8", GDL_TYPE_BIGINT},
		{"text", GDL_TYPE_TEXT}, {"varchar", GDL_TYPE_TEXT},
		{"character varying", GDL_TYPE_TEXT}, {"name", GDL_TYPE_TEXT},
		{"string", GDL_TYPE_TEXT}, {"symbol", GDL_TYPE_TEXT},
		{"bool", GDL_TYPE_BOOL}, {"boolean", GDL_TYPE_BOOL},
		{"float8", GDL_TYPE_FLOAT8}, {"double precision", GDL_TYPE_FLOAT8},
		{"double", GDL_TYPE_FLOAT8}, {"float", GDL_TYPE_FLOAT8},
	};
	size_t		i;

	if (name == NULL)
		return GDL_TYPE_UNKNOWN;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(name, names[i].name) == 0)
			return names[i].type;
	return GDL_TYPE_UNKNOWN;
}

/* Spelling of a comparison operator. */
const char *
gdl_cmp_name(GdlCmpOp op)
{
	static const char *const names[] = {"=", "!=", "<", "<=", ">", ">="};

	return names[op];
}

/* Spelling of an aggregate function. */
const char *
gdl_agg_name(GdlAggKind agg)
{
	static const char *const names[] = {"count", "sum", "min", "max"};

	return names[agg];
}

/* Can a text constant be printed bare, as a lower-case symbol? */
static bool
is_bare_symbol(const char *s)
{
	const char *p;

	if (!(s[0] >= 'a' && s[0] <= 'z'))
		return false;
	for (p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			  (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return strcmp(s, "true") != 0 && strcmp(s, "false") != 0 &&
		strcmp(s, "not") != 0;
}

/* Append s in double quotes with the lexer's escapes (see lex_string). */
static void
quoted_to_buf(GdlBuf *b, const char *s)
{
	static const char special[] = "\"\\\n\t\r";	/* written as \ and ... */
	static const char letter[] = "\"\\ntr";	/* ... the letter at the same place */

	gdl_buf_putc(b, '"');
	for (; *s; s++)
	{
		const char *e = strchr(special, *s);

		if (e)
		{
			gdl_buf_putc(b, '\\');
			gdl_buf_putc(b, letter[e - special]);
		}
		else
			gdl_buf_putc(b, *s);
	}
	gdl_buf_putc(b, '"');
}

/* Print a text constant, bare when it was and can be, else quoted. */
static void
text_to_buf(GdlBuf *b, const char *s, bool quoted)
{
	if (!quoted && is_bare_symbol(s))
	{
		gdl_buf_append(b, "%s", s);
		return;
	}
	quoted_to_buf(b, s);
}

/* Is s a plain identifier the lexer reads as a name: [a-z][A-Za-z0-9_]*? */
static bool
is_plain_ident(const char *s, size_t n)
{
	size_t		i;

	if (n == 0 || !(s[0] >= 'a' && s[0] <= 'z'))
		return false;
	for (i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
			  (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/*
 * Does a predicate name need quotes?  Bare names are what parse_pred_name
 * reads: an identifier, or "schema.name" (two identifiers joined by one
 * '.').  Words such as not, true or count are predicate names where an
 * atom stands ("not" before "(" is an atom), so they need none.
 */
bool
gdl_name_needs_quotes(const char *name)
{
	const char *dot;

	if (name == NULL || name[0] == '\0')
		return true;
	dot = strchr(name, '.');
	if (dot == NULL)
		return !is_plain_ident(name, strlen(name));
	return !(is_plain_ident(name, (size_t) (dot - name)) &&
			 is_plain_ident(dot + 1, strlen(dot + 1)));
}

/* Append a predicate name as the parser reads it back (bare or quoted). */
void
gdl_pred_name_to_buf(GdlBuf *b, const char *name)
{
	if (gdl_name_needs_quotes(name))
		quoted_to_buf(b, name ? name : "");
	else
		gdl_buf_append(b, "%s", name);
}

/* A predicate name as the parser reads it back, as a fresh string. */
char *
gdl_pred_name_quote(const char *name)
{
	GdlBuf		b;

	gdl_buf_init(&b);
	gdl_pred_name_to_buf(&b, name);
	return b.data;
}

/* Print a float so that it reads back as the same float (never as an int). */
static void
float_to_buf(GdlBuf *b, double v)
{
	char		tmp[64];

	if (isnan(v) || isinf(v))
	{
		/* not produced by the parser; keep output parseable */
		gdl_buf_append(b, "%s", isnan(v) ? "0.0" : (v > 0 ? "1e308" : "-1e308"));
		return;
	}
	snprintf(tmp, sizeof(tmp), "%.17g", v);
	gdl_buf_append(b, "%s", tmp);
	if (strpbrk(tmp, ".e") == NULL)
		gdl_buf_append(b, ".0");
}

/* Binding strength of a term, for deciding where parentheses go. */
static int
term_prec(const GdlTerm *t)
{
	if (t->kind == GDL_TERM_BINOP)
		return (t->op == GDL_OP_ADD || t->op == GDL_OP_SUB) ? 1 : 2;
	if (t->kind == GDL_TERM_NEG)
		return 3;
	/* negative literals print with a leading '-' like a unary minus */
	if ((t->kind == GDL_TERM_INT && t->ival < 0) ||
		(t->kind == GDL_TERM_FLOAT && signbit(t->fval)))
		return 3;
	return 4;
}

/* Print t, parenthesized when it binds looser than 'min'. */
static void
term_prec_to_buf(GdlBuf *b, const GdlClause *c, const GdlTerm *t, int min)
{
	if (term_prec(t) < min)
	{
		gdl_buf_putc(b, '(');
		gdl_term_to_buf(b, c, t);
		gdl_buf_putc(b, ')');
	}
	else
		gdl_term_to_buf(b, c, t);
}

/*
 * Does t print starting with a character after which the lexer reads '%'
 * as modulo (digit, upper-case letter, _, '(' or '-')?
 */
static bool
starts_operand(const GdlClause *c, const GdlTerm *t)
{
	GdlBuf		b;
	char		ch;

	gdl_buf_init(&b);
	gdl_term_to_buf(&b, c, t);
	ch = b.data[0];
	gdl_free(b.data);
	return (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
		ch == '(' || ch == '-';
}

/* Print one term; variables are named from the clause's varnames. */
void
gdl_term_to_buf(GdlBuf *b, const GdlClause *c, const GdlTerm *t)
{
	static const char *const ops[] = {"+", "-", "*", "/", "%"};
	int			p;

	switch (t->kind)
	{
		case GDL_TERM_VAR:
			if (c && t->var >= 0 && t->var < c->nvars)
				gdl_buf_append(b, "%s", c->varnames[t->var]);
			else
				gdl_buf_append(b, "V%d", t->var);
			break;
		case GDL_TERM_ANON:
			gdl_buf_putc(b, '_');
			break;
		case GDL_TERM_INT:
			gdl_buf_append(b, "%lld", (long long) t->ival);
			break;
		case GDL_TERM_FLOAT:
			float_to_buf(b, t->fval);
			break;
		case GDL_TERM_TEXT:
			text_to_buf(b, t->text, t->quoted);
			break;
		case GDL_TERM_BOOL:
			gdl_buf_append(b, "%s", t->bval ? "true" : "false");
			break;
		case GDL_TERM_BINOP:
			p = term_prec(t);
			/* left associative: the right operand needs a tighter binding */
			term_prec_to_buf(b, c, t->left, p);
			gdl_buf_append(b, " %s ", ops[t->op]);
			if (t->op == GDL_OP_MOD && !starts_operand(c, t->right))
			{
				/* "% x" would read as a comment: see lang_lex.c */
				gdl_buf_putc(b, '(');
				gdl_term_to_buf(b, c, t->right);
				gdl_buf_putc(b, ')');
			}
			else
				term_prec_to_buf(b, c, t->right, p + 1);
			break;
		case GDL_TERM_NEG:
			gdl_buf_putc(b, '-');
			if (t->left->kind == GDL_TERM_INT || t->left->kind == GDL_TERM_FLOAT)
			{
				/* "-(5)" must not read back as the constant -5 */
				gdl_buf_putc(b, '(');
				gdl_term_to_buf(b, c, t->left);
				gdl_buf_putc(b, ')');
			}
			else
			{
				/* "- -X" keeps the space so it reads back the same */
				if (term_prec(t->left) == 3)
					gdl_buf_putc(b, ' ');
				term_prec_to_buf(b, c, t->left, 3);
			}
			break;
		case GDL_TERM_AGG:
			gdl_buf_append(b, "%s(", gdl_agg_name(t->agg));
			gdl_term_to_buf(b, c, t->arg);
			gdl_buf_putc(b, ')');
			break;
	}
}

/*
 * Print an atom, name(arg, arg, ...), its arguments by 'term': the one
 * shape of an atom for the source printer here and for the plan's explain
 * lines (plan_explain.c), which print terms their own way.
 */
void
gdl_atom_print(GdlBuf *b, const GdlClause *c, const GdlAtom *a, GdlTermPrinter term)
{
	int			i;

	gdl_pred_name_to_buf(b, a->name);
	gdl_buf_putc(b, '(');
	for (i = 0; i < a->nargs; i++)
	{
		if (i > 0)
			gdl_buf_append(b, ", ");
		term(b, c, a->args[i]);
	}
	gdl_buf_putc(b, ')');
}

/* Print an atom as Datalog source. */
void
gdl_atom_to_buf(GdlBuf *b, const GdlClause *c, const GdlAtom *a)
{
	gdl_atom_print(b, c, a, gdl_term_to_buf);
}

/* A term as a fresh string (c supplies variable names; may be NULL). */
char *
gdl_term_to_string(const GdlClause *c, const GdlTerm *t)
{
	GdlBuf		b;

	gdl_buf_init(&b);
	gdl_term_to_buf(&b, c, t);
	return b.data;
}

/* A clause as canonical one-line Datalog source, with the final '.'. */
char *
gdl_clause_to_string(const GdlClause *c)
{
	GdlBuf		b;
	int			i;

	gdl_buf_init(&b);
	gdl_atom_to_buf(&b, c, &c->head);
	for (i = 0; i < c->nbody; i++)
	{
		const GdlLiteral *l = &c->body[i];

		gdl_buf_append(&b, i == 0 ? " :- " : ", ");
		switch (l->kind)
		{
			case GDL_LIT_NEG:
				gdl_buf_putc(&b, '!');
				/* fall through */
			case GDL_LIT_ATOM:
				gdl_atom_to_buf(&b, c, &l->atom);
				break;
			case GDL_LIT_CMP:
				gdl_term_to_buf(&b, c, l->lhs);
				gdl_buf_append(&b, " %s ", gdl_cmp_name(l->cmp));
				gdl_term_to_buf(&b, c, l->rhs);
				break;
		}
	}
	gdl_buf_putc(&b, '.');
	return b.data;
}

/* A declaration as canonical text: .decl name(arg: type, ...) */
char *
gdl_decl_to_string(const GdlDecl *d)
{
	GdlBuf		b;
	int			i;

	gdl_buf_init(&b);
	gdl_buf_append(&b, ".decl ");
	gdl_pred_name_to_buf(&b, d->name);
	gdl_buf_putc(&b, '(');
	for (i = 0; i < d->nargs; i++)
		gdl_buf_append(&b, "%s%s: %s", i ? ", " : "", d->argnames[i],
					   gdl_type_name(d->types[i]));
	gdl_buf_putc(&b, ')');
	return b.data;
}
