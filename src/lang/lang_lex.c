/*
 * lang_lex.c — turns Datalog source text into tokens, and formats syntax
 * errors (line, column and the source line with a caret under the problem).
 *
 * Comments are %, // and block comments.  '%' is also the modulo operator:
 * it is read as modulo only between two operands of an expression (after a
 * variable, a constant or an expression's closing parenthesis, and before a
 * digit, a variable, '(' or '-'); anywhere else it starts a comment.
 */
#include "lang_int.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Lexer
{
	const char *src;
	int			pos;
	int			line;
	int			col;
	GdlToken   *toks;
	int			ntoks;
	int			cap;
	/* per open '(' : was it an atom's (preceded by an identifier)? */
	bool	   *atomparen;
	int			depth;
	int			depthcap;
} Lexer;

/*
 * Quote the source line that holds 'offset', and put a caret under the
 * offending column on the next line.  Long lines are cut to a window around
 * the column so the caret stays readable.
 */
char *
gdl_source_excerpt(const char *src, int offset)
{
	int			ls = offset;
	int			le = offset;
	int			line = 1;
	int			from;
	int			to;
	GdlBuf		b;
	size_t		prefix;
	int			i;

	for (i = 0; i < offset && src[i]; i++)
		if (src[i] == '\n')
			line++;
	while (ls > 0 && src[ls - 1] != '\n')
		ls--;
	while (src[le] && src[le] != '\n')
		le++;
	from = ls;
	to = le;
	if (offset - from > 60)
		from = offset - 40;
	if (to - offset > 60)
		to = offset + 40;
	/* do not cut a UTF-8 sequence in half */
	while (from > ls && (src[from] & 0xC0) == 0x80)
		from--;
	while (to < le && (src[to] & 0xC0) == 0x80)
		to++;

	gdl_buf_init(&b);
	gdl_buf_append(&b, "line %d: ", line);
	if (from > ls)
		gdl_buf_append(&b, "...");
	prefix = b.len;
	gdl_buf_putsn(&b, src + from, (size_t) (to - from));
	if (to < le)
		gdl_buf_append(&b, "...");
	gdl_buf_putc(&b, '\n');
	for (i = 0; i < (int) prefix; i++)
		gdl_buf_putc(&b, ' ');
	for (i = from; i < offset && i < to; i++)
	{
		if ((src[i] & 0xC0) == 0x80)
			continue;
		gdl_buf_putc(&b, src[i] == '\t' ? '\t' : ' ');
	}
	gdl_buf_putc(&b, '^');
	return b.data;
}

/* Raise a syntax error: "syntax error at line L, column C: <what>". */
void
gdl_syntax_error(const char *src, int offset, GdlLoc loc, const char *hint,
				 const char *fmt,...)
{
	va_list		ap;
	char		what[512];

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	gdl_error(GDL_ERR_SYNTAX, gdl_source_excerpt(src, offset), hint,
			  "syntax error at line %d, column %d: %s", loc.line, loc.col, what);
}

/* Describe a token for messages: end of input, or its text in quotes. */
char *
gdl_token_desc(const char *src, const GdlToken *t)
{
	int			n = t->end - t->start;

	if (t->kind == TK_EOF)
		return gdl_strdup("end of input");
	if (n > 30)
		return gdl_sprintf("\"%.*s...\"", 27, src + t->start);
	return gdl_sprintf("\"%.*s\"", n, src + t->start);
}

/* Move the cursor n bytes forward, keeping line and column current. */
static void
advance(Lexer *lx, int n)
{
	while (n-- > 0 && lx->src[lx->pos])
	{
		unsigned char c = (unsigned char) lx->src[lx->pos++];

		if (c == '\n')
		{
			lx->line++;
			lx->col = 1;
		}
		else if ((c & 0xC0) != 0x80)
			lx->col++;
	}
}

/* Raise a syntax error at the lexer's current position. */
static void
lex_error_here(Lexer *lx, int offset, GdlLoc loc, const char *what)
{
	gdl_syntax_error(lx->src, offset, loc, NULL, "%s", what);
}

/* Append a token of 'kind' spanning [start, lx->pos). */
static GdlToken *
push_token(Lexer *lx, GdlTokKind kind, int start, GdlLoc loc)
{
	GdlToken   *t;

	if (lx->ntoks == lx->cap)
	{
		lx->cap *= 2;
		lx->toks = gdl_realloc(lx->toks, sizeof(GdlToken) * lx->cap);
	}
	t = &lx->toks[lx->ntoks++];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->start = start;
	t->end = lx->pos;
	t->loc = loc;
	return t;
}

/* Is c a character that may continue an identifier? */
static bool
is_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || c == '_';
}

/*
 * Decide whether a '%' at the cursor is the modulo operator: the previous
 * token ends an operand and the next non-blank character starts one.
 */
static bool
percent_is_modulo(Lexer *lx)
{
	const GdlToken *prev;
	const char *p;

	if (lx->ntoks == 0)
		return false;
	prev = &lx->toks[lx->ntoks - 1];
	switch (prev->kind)
	{
		case TK_VAR:
		case TK_ANON:
		case TK_INT:
		case TK_FLOAT:
		case TK_IDENT:
		case TK_STRING:
			break;
		case TK_RPAREN:
			/* the ')' just closed lx->depth's paren; atom parens end atoms */
			if (lx->depth < lx->depthcap && lx->atomparen[lx->depth])
				return false;
			break;
		default:
			return false;
	}
	p = lx->src + lx->pos + 1;
	while (*p == ' ' || *p == '\t')
		p++;
	return (*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'Z') ||
		*p == '_' || *p == '(' || *p == '-';
}

/* Skip blanks and comments; raise on an unterminated block comment. */
static void
skip_space(Lexer *lx)
{
	for (;;)
	{
		char		c = lx->src[lx->pos];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v')
			advance(lx, 1);
		else if ((c == '%' && !percent_is_modulo(lx)) ||
				 (c == '/' && lx->src[lx->pos + 1] == '/'))
		{
			while (lx->src[lx->pos] && lx->src[lx->pos] != '\n')
				advance(lx, 1);
		}
		else if (c == '/' && lx->src[lx->pos + 1] == '*')
		{
			int			start = lx->pos;
			GdlLoc		loc = {lx->line, lx->col};
			const char *end = strstr(lx->src + lx->pos + 2, "*/");

			if (end == NULL)
				lex_error_here(lx, start, loc, "unterminated /* comment");
			advance(lx, (int) (end + 2 - (lx->src + lx->pos)));
		}
		else
			return;
	}
}

/* Lex a number: an integer, or a float with a fraction and/or exponent. */
static void
lex_number(Lexer *lx, int start, GdlLoc loc)
{
	const char *s = lx->src;
	int			p = lx->pos;
	bool		isfloat = false;
	GdlToken   *t;

	while (s[p] >= '0' && s[p] <= '9')
		p++;
	if (s[p] == '.' && s[p + 1] >= '0' && s[p + 1] <= '9')
	{
		isfloat = true;
		p++;
		while (s[p] >= '0' && s[p] <= '9')
			p++;
	}
	if ((s[p] == 'e' || s[p] == 'E') &&
		((s[p + 1] >= '0' && s[p + 1] <= '9') ||
		 ((s[p + 1] == '+' || s[p + 1] == '-') && s[p + 2] >= '0' && s[p + 2] <= '9')))
	{
		isfloat = true;
		p += 2;
		while (s[p] >= '0' && s[p] <= '9')
			p++;
	}
	advance(lx, p - lx->pos);
	if (isfloat)
	{
		char	   *txt = gdl_strndup(s + start, (size_t) (p - start));
		double		v;

		errno = 0;
		v = strtod(txt, NULL);
		if (errno == ERANGE && (v > 1.0 || v < -1.0))
			gdl_syntax_error(s, start, loc, "float8 holds values up to about 1.8e308",
							 "float constant %s is out of range", txt);
		t = push_token(lx, TK_FLOAT, start, loc);
		t->fval = v;
	}
	else
	{
		uint64_t	v = 0;
		int			i;

		for (i = start; i < p; i++)
		{
			uint64_t	d = (uint64_t) (s[i] - '0');

			if (v > (GDL_INT_MAG_MAX - d) / 10)
				gdl_syntax_error(s, start, loc, "integers are 64-bit (bigint)",
								 "integer constant %.*s is out of range",
								 p - start > 40 ? 40 : p - start, s + start);
			v = v * 10 + d;
		}
		t = push_token(lx, TK_INT, start, loc);
		t->uval = v;
	}
}

/* Lex a quoted string ("..." or '...') with \" \' \\ \n \t \r escapes. */
static void
lex_string(Lexer *lx, int start, GdlLoc loc)
{
	char		quote = lx->src[lx->pos];
	GdlBuf		b;
	GdlToken   *t;

	gdl_buf_init(&b);
	advance(lx, 1);
	for (;;)
	{
		char		c = lx->src[lx->pos];

		if (c == '\0' || c == '\n')
			gdl_syntax_error(lx->src, start, loc,
							 "close the string on the same line; write a newline as \\n",
							 "unterminated string");
		if (c == quote)
		{
			advance(lx, 1);
			break;
		}
		if (c == '\\')
		{
			char		e = lx->src[lx->pos + 1];
			GdlLoc		eloc = {lx->line, lx->col};

			switch (e)
			{
				case '"':
				case '\'':
				case '\\':
					gdl_buf_putc(&b, e);
					break;
				case 'n':
					gdl_buf_putc(&b, '\n');
					break;
				case 't':
					gdl_buf_putc(&b, '\t');
					break;
				case 'r':
					gdl_buf_putc(&b, '\r');
					break;
				default:
					if (e == '\0' || e == '\n')
						gdl_syntax_error(lx->src, start, loc, NULL, "unterminated string");
					gdl_syntax_error(lx->src, lx->pos, eloc,
									 "valid escapes are \\\" \\' \\\\ \\n \\t \\r",
									 "invalid escape sequence \"\\%c\" in string",
									 ((unsigned char) e) < 0x80 && e >= ' ' ? e : '?');
			}
			advance(lx, 2);
			continue;
		}
		gdl_buf_putc(&b, c);
		advance(lx, 1);
	}
	t = push_token(lx, TK_STRING, start, loc);
	t->str = b.data;
}

/* Report a character that starts no token, spelled out readably. */
static void
bad_char(Lexer *lx, int start, GdlLoc loc)
{
	unsigned char c = (unsigned char) lx->src[lx->pos];
	int			n = 1;
	char		shown[16];

	if (c >= 0xC0)
	{
		while (n < 4 && (((unsigned char) lx->src[lx->pos + n]) & 0xC0) == 0x80)
			n++;
		snprintf(shown, sizeof(shown), "\"%.*s\"", n, lx->src + lx->pos);
	}
	else if (c < 0x20 || c >= 0x7F)
		snprintf(shown, sizeof(shown), "\\x%02X", c);
	else
		snprintf(shown, sizeof(shown), "\"%c\"", c);
	gdl_syntax_error(lx->src, start, loc,
					 c >= 'A' && c <= 'Z' ? NULL :
					 "identifiers use ASCII letters, digits and _; quote other text as \"...\"",
					 "unexpected character %s", shown);
}

/*
 * The operators and punctuation other than parentheses, those of two
 * characters first; "==" and "<>" are other spellings of "=" and "!=".
 */
static const struct
{
	const char *text;
	GdlTokKind	kind;
}			puncts[] =
{
	{":-", TK_IMPLIES}, {"!=", TK_NE}, {"==", TK_EQ}, {"<=", TK_LE}, {"<>", TK_NE}, {">=", TK_GE},
	{",", TK_COMMA}, {".", TK_DOT}, {":", TK_COLON}, {"!", TK_BANG}, {"=", TK_EQ}, {"<", TK_LT},
	{">", TK_GT}, {"+", TK_PLUS}, {"-", TK_MINUS}, {"*", TK_STAR}, {"/", TK_SLASH},
	{"%", TK_PERCENT},
};

/* The punctuation token at characters c c2, and its length; false when none. */
static bool
punct_token(char c, char c2, GdlTokKind *kind, int *len)
{
	int			i;

	for (i = 0; i < (int) (sizeof(puncts) / sizeof(puncts[0])); i++)
	{
		const char *t = puncts[i].text;

		if (t[0] == c && (t[1] == '\0' || t[1] == c2))
		{
			*kind = puncts[i].kind;
			*len = t[1] ? 2 : 1;
			return true;
		}
	}
	return false;
}

/* Track parentheses so percent_is_modulo can tell atom parens apart. */
static void
open_paren(Lexer *lx, bool atom)
{
	lx->atomparen = gdl_grow(lx->atomparen, lx->depth, &lx->depthcap, 16, sizeof(bool));
	lx->atomparen[lx->depth++] = atom;
}

/*
 * Split the source into tokens, ending with one TK_EOF.  Raises syntax
 * errors for bad characters, unterminated strings and comments, and
 * out-of-range numbers.
 */
GdlToken *
gdl_lex(const char *src, int *ntoks)
{
	Lexer		lx;

	if (strlen(src) > INT_MAX / 2)
		gdl_error(GDL_ERR_LIMIT, NULL, NULL, "Datalog source text is too long");
	memset(&lx, 0, sizeof(lx));
	lx.src = src;
	lx.line = 1;
	lx.col = 1;
	lx.cap = 64;
	lx.toks = gdl_alloc(sizeof(GdlToken) * lx.cap);

	for (;;)
	{
		int			start;
		GdlLoc		loc;
		char		c;
		char		c2;
		GdlTokKind	k;
		int			len = 1;

		skip_space(&lx);
		start = lx.pos;
		loc.line = lx.line;
		loc.col = lx.col;
		c = src[lx.pos];
		c2 = c ? src[lx.pos + 1] : '\0';
		if (c == '\0')
		{
			GdlToken   *t;

			/*
			 * Place end of input right after the last token, so "expected
			 * ..." errors quote the line where something is missing.
			 */
			if (lx.ntoks > 0)
			{
				GdlToken   *prev = &lx.toks[lx.ntoks - 1];
				int			i;

				start = prev->end;
				loc = prev->loc;
				for (i = prev->start; i < prev->end; i++)
					if ((src[i] & 0xC0) != 0x80)
						loc.col++;
			}
			t = push_token(&lx, TK_EOF, start, loc);
			t->end = start;
			break;
		}
		if (c >= '0' && c <= '9')
		{
			lex_number(&lx, start, loc);
			continue;
		}
		if (c == '"' || c == '\'')
		{
			lex_string(&lx, start, loc);
			continue;
		}
		if (is_ident_char(c))
		{
			GdlToken   *t;
			int			p = lx.pos;

			while (is_ident_char(src[p]))
				p++;
			advance(&lx, p - lx.pos);
			if (c == '_' && p - start == 1)
				k = TK_ANON;
			else if (c == '_' || (c >= 'A' && c <= 'Z'))
				k = TK_VAR;
			else
				k = TK_IDENT;
			t = push_token(&lx, k, start, loc);
			t->str = gdl_strndup(src + start, (size_t) (p - start));
			continue;
		}
		switch (c)
		{
			case '(':
				k = TK_LPAREN;
				/* a name or a quoted name before '(' makes an atom */
				open_paren(&lx, lx.ntoks > 0 && (lx.toks[lx.ntoks - 1].kind == TK_IDENT ||
												 lx.toks[lx.ntoks - 1].kind == TK_STRING));
				break;
			case ')':
				k = TK_RPAREN;
				if (lx.depth > 0)
					lx.depth--;
				break;
			default:
				if (!punct_token(c, c2, &k, &len))
				{
					bad_char(&lx, start, loc);
					return NULL;	/* not reached */
				}
		}
		advance(&lx, len);
		push_token(&lx, k, start, loc);
	}
	*ntoks = lx.ntoks;
	return lx.toks;
}
