/*
 * mine_canon.c — rules as the outside sees them: the raw body keys of the
 * enumerator turned into atoms, the canonical form (the smallest sequence of
 * (rel, a, b) over the renamings of Z and W and the orders of the body),
 * the order results are sorted by, and the text of a rule.
 */
#include "mine_int.h"

#include <string.h>

/* The atom of a link from variable u to variable v with signature sig. */
GdlMineAtom
mine_link_atom(uint32_t sig, int u, int v)
{
	GdlMineAtom a;

	memset(&a, 0, sizeof(a));
	a.rel = (int32_t) (sig >> 1);
	a.a = (int8_t) ((sig & 1) ? v : u);
	a.b = (int8_t) ((sig & 1) ? u : v);
	return a;
}

/*
 * The atom of a link from variable u to the constant value with signature
 * sig: l(u, c) for an even sig, l(c, u) for an odd one.
 */
GdlMineAtom
mine_const_atom(uint32_t sig, int u, int64_t value)
{
	GdlMineAtom a = mine_link_atom(sig, u, GDL_MINE_C);

	a.value = value;
	return a;
}

/* Body atoms of a raw shape (see MINE_SH_* in mine_int.h). */
int
mine_key_nbody(uint64_t key)
{
	switch (mine_key_shape(key))
	{
		case MINE_SH_L:
			return 1;
		case MINE_SH_LL:
		case MINE_SH_P2:
			return 2;
		default:
			return 3;
	}
}

/*
 * The variables (u, v) of each body link of a raw shape, in the order of
 * the key's signatures (see MINE_SH_* in mine_int.h).
 */
#define XY {GDL_MINE_X, GDL_MINE_Y}
#define XZ {GDL_MINE_X, GDL_MINE_Z}
#define ZY {GDL_MINE_Z, GDL_MINE_Y}
static const int8_t shape_links[MINE_SH_P3 + 1][GDL_MINE_MAX_BODY][2] = {
	[MINE_SH_L] = {XY},
	[MINE_SH_LL] = {XY, XY},
	[MINE_SH_LLL] = {XY, XY, XY},
	[MINE_SH_P2] = {XZ, ZY},
	[MINE_SH_P2L] = {XZ, ZY, XY},
	[MINE_SH_PP2] = {XZ, XZ, ZY},
	[MINE_SH_P2P] = {XZ, ZY, ZY},
	[MINE_SH_CXL] = {XZ, XZ, XY},
	[MINE_SH_CYL] = {XY, {GDL_MINE_Y, GDL_MINE_Z}, {GDL_MINE_Y, GDL_MINE_Z}},
	[MINE_SH_P3] = {XZ, {GDL_MINE_Z, GDL_MINE_W}, {GDL_MINE_W, GDL_MINE_Y}},
};
#undef XY
#undef XZ
#undef ZY

/* A rule zeroed but for its head and the number of body atoms. */
void
mine_rule_init(GdlMineRule *r, int32_t head, int head_const, int64_t head_value, int nbody)
{
	memset(r, 0, sizeof(*r));
	r->head = head;
	r->head_const = head_const;
	r->head_value = head_value;
	r->nbody = nbody;
}

/* The rule head(X, Y) :- body of a raw key (not yet canonical). */
void
mine_key_rule(uint64_t key, int32_t head, GdlMineRule *r)
{
	int			shape = mine_key_shape(key);

	mine_rule_init(r, head, GDL_MINE_HEAD_VARS, 0, mine_key_nbody(key));
	if (shape >= MINE_SH_L && shape <= MINE_SH_P3)
		for (int i = 0; i < r->nbody; i++)
			r->body[i] = mine_link_atom(mine_key_sig(key, i), shape_links[shape][i][0],
										shape_links[shape][i][1]);
	gdl_mine_canonical(r);
}

/* Does the raw body hold a link X->Y with signature sig (an atom on (X, Y))? */
bool
mine_key_has_atom(uint64_t key, uint32_t sig)
{
	switch (mine_key_shape(key))
	{
		case MINE_SH_LLL:
			if (mine_key_sig(key, 2) == sig)
				return true;
			/* FALLTHROUGH */
		case MINE_SH_LL:
			if (mine_key_sig(key, 1) == sig)
				return true;
			/* FALLTHROUGH */
		case MINE_SH_L:
		case MINE_SH_CYL:
			return mine_key_sig(key, 0) == sig;
		case MINE_SH_P2L:
		case MINE_SH_CXL:
			return mine_key_sig(key, 2) == sig;
		default:
			return false;
	}
}

/* Order of atoms: (rel, a, b, value); a constant argument sorts last. */
static int
atom_cmp(const GdlMineAtom *x, const GdlMineAtom *y)
{
	MINE_CMP_RET(x->rel, y->rel);
	MINE_CMP_RET(x->a, y->a);
	MINE_CMP_RET(x->b, y->b);
	MINE_CMP_RET(x->value, y->value);
	return 0;
}

/* Sort n atoms (n <= 3) by atom_cmp. */
static void
sort_atoms(GdlMineAtom *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && atom_cmp(&v[j], &v[j - 1]) < 0; j--)
		{
			GdlMineAtom t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

/* Rename variable from to to in the body. */
static void
rename_var(GdlMineAtom *v, int n, int from, int to)
{
	for (int i = 0; i < n; i++)
	{
		if (v[i].a == from)
			v[i].a = (int8_t) to;
		if (v[i].b == from)
			v[i].b = (int8_t) to;
	}
}

/*
 * Canonical form: W renamed Z when Z is absent; the body sorted; when both
 * Z and W occur, the smaller of that and the body with Z and W swapped.
 */
void
gdl_mine_canonical(GdlMineRule *r)
{
	GdlMineAtom alt[GDL_MINE_MAX_BODY];
	bool		hasz = false,
				hasw = false;
	int			n = r->nbody;

	if (n < 0 || n > GDL_MINE_MAX_BODY)
		return;
	for (int i = 0; i < n; i++)
	{
		hasz |= r->body[i].a == GDL_MINE_Z || r->body[i].b == GDL_MINE_Z;
		hasw |= r->body[i].a == GDL_MINE_W || r->body[i].b == GDL_MINE_W;
	}
	if (hasw && !hasz)
	{
		rename_var(r->body, n, GDL_MINE_W, GDL_MINE_Z);
		hasw = false;
	}
	sort_atoms(r->body, n);
	if (!hasw)
		return;
	memcpy(alt, r->body, sizeof(GdlMineAtom) * n);
	rename_var(alt, n, GDL_MINE_Z, 99);
	rename_var(alt, n, GDL_MINE_W, GDL_MINE_Z);
	rename_var(alt, n, 99, GDL_MINE_W);
	sort_atoms(alt, n);
	for (int i = 0; i < n; i++)
	{
		int			c = atom_cmp(&alt[i], &r->body[i]);

		if (c < 0)
		{
			memcpy(r->body, alt, sizeof(GdlMineAtom) * n);
			return;
		}
		if (c > 0)
			return;
	}
}

/*
 * Result order: head, the head's form (head(X, Y) first, then head(X, c),
 * then head(c, X)) and constant, the number of body atoms, the atoms.
 */
int
mine_rule_cmp(const GdlMineRule *a, const GdlMineRule *b)
{
	MINE_CMP_RET(a->head, b->head);
	MINE_CMP_RET(a->head_const, b->head_const);
	MINE_CMP_RET(a->head_value, b->head_value);
	MINE_CMP_RET(a->nbody, b->nbody);
	for (int i = 0; i < a->nbody; i++)
	{
		int			c = atom_cmp(&a->body[i], &b->body[i]);

		if (c)
			return c;
	}
	return 0;
}

/* Append a NUL-terminated string. */
static void
buf_puts(GdlBuf *b, const char *s)
{
	gdl_buf_putsn(b, s, strlen(s));
}

/*
 * One argument of an atom: a variable's name or the constant's literal
 * (its decimal value without a literal function).
 */
static void
append_arg(GdlBuf *b, int arg, int64_t value, GdlMineLiteralFn literal, void *ctx)
{
	static const char vars[] = "XYZW";

	if (arg == GDL_MINE_C && literal == NULL)
		gdl_buf_append(b, "%lld", (long long) value);
	else if (arg == GDL_MINE_C)
		buf_puts(b, literal(ctx, value));
	else
		gdl_buf_putc(b, vars[arg & 3]);
}

/* A relation's name as the parser reads it: given (qnames), or quoted now. */
static void
append_relname(GdlBuf *b, const GdlMineGraph *g, const char *const *qnames, int rel)
{
	if (qnames != NULL)
		buf_puts(b, qnames[rel]);
	else
		gdl_pred_name_to_buf(b, gdl_mine_graph_relname(g, rel));
}

/* The text of a rule (gdl_mine_rule_text_lit, gdl_mine_rule_text_q). */
static char *
rule_text(const GdlMineGraph *g, const char *const *qnames, const GdlMineRule *r,
		  GdlMineLiteralFn literal, void *ctx)
{
	GdlBuf		b;

	gdl_buf_init(&b);
	append_relname(&b, g, qnames, r->head);
	gdl_buf_putc(&b, '(');
	if (r->head_const == GDL_MINE_HEAD_OBJECT)
	{
		buf_puts(&b, "X, ");
		append_arg(&b, GDL_MINE_C, r->head_value, literal, ctx);
	}
	else if (r->head_const == GDL_MINE_HEAD_SUBJECT)
	{
		append_arg(&b, GDL_MINE_C, r->head_value, literal, ctx);
		buf_puts(&b, ", X");
	}
	else
		buf_puts(&b, "X, Y");
	buf_puts(&b, ") :- ");
	for (int i = 0; i < r->nbody; i++)
	{
		const GdlMineAtom *at = &r->body[i];

		if (i)
			buf_puts(&b, ", ");
		append_relname(&b, g, qnames, at->rel);
		gdl_buf_putc(&b, '(');
		append_arg(&b, at->a, at->value, literal, ctx);
		buf_puts(&b, ", ");
		append_arg(&b, at->b, at->value, literal, ctx);
		gdl_buf_putc(&b, ')');
	}
	gdl_buf_putc(&b, '.');
	return b.data;
}

/* See gdl_mine.h. */
char *
gdl_mine_rule_text_lit(const GdlMineGraph *g, const GdlMineRule *r, GdlMineLiteralFn literal,
					   void *ctx)
{
	return rule_text(g, NULL, r, literal, ctx);
}

/* See gdl_mine.h. */
char *
gdl_mine_rule_text_q(const GdlMineGraph *g, const char *const *qnames, const GdlMineRule *r,
					 GdlMineLiteralFn literal, void *ctx)
{
	return rule_text(g, qnames, r, literal, ctx);
}

/* "head(X, Y) :- p(X, Z), q(Z, Y)." with the graph's relation names. */
char *
gdl_mine_rule_text(const GdlMineGraph *g, const GdlMineRule *r)
{
	return gdl_mine_rule_text_lit(g, r, NULL, NULL);
}
