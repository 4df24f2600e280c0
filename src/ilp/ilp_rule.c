/*
 * ilp_rule.c — candidate rules as values: the canonical form (atoms in the
 * order that gives the smallest encoding, existential variables numbered by
 * first appearance, the inequality last), the total order that fixes
 * candidate ids, hashing, and printing as Datalog source and as a template.
 */
#include "ilp_int.h"

#include <string.h>

/*
 * Names of the variables: head variables first (X, or X and Y), then the
 * existential ones in order of first appearance.
 */
static const char *const var_names[] = {"X", "Y", "Z", "W", "V", "U", "T", "S"};

/* The printed name of variable v (the same for either head arity). */
static const char *
var_name(int arity, int v)
{
	(void) arity;
	return var_names[v];
}

/* Compare two literals field by field. */
static int
lit_cmp(const IlpLit *x, const IlpLit *y)
{
	ILP_CMP_RET(x->pred, y->pred);
	ILP_CMP_RET(x->a, y->a);
	ILP_CMP_RET(x->b, y->b);
	return 0;
}

/*
 * Total order of canonical rules: fewer atoms first, then without an
 * inequality first, then literal by literal (predicates in name order).
 */
int
ilp_rule_cmp(const IlpRule *x, const IlpRule *y)
{
	ILP_CMP_RET(x->natoms, y->natoms);
	ILP_CMP_RET(x->nlits, y->nlits);
	for (int i = 0; i < x->nlits; i++)
	{
		int			c = lit_cmp(&x->lits[i], &y->lits[i]);

		if (c != 0)
			return c;
	}
	return 0;
}

/* Hash of a canonical rule. */
uint64_t
ilp_rule_hash(const IlpRule *r)
{
	uint64_t	h = (uint64_t) r->nlits * 31 + r->natoms;

	for (int i = 0; i < r->nlits; i++)
	{
		uint64_t	l = ((uint64_t) (uint16_t) r->lits[i].pred << 16) |
			((uint64_t) (uint8_t) r->lits[i].a << 8) | (uint8_t) r->lits[i].b;

		h = ilp_mix64(h ^ l);
	}
	return h;
}

/*
 * Encode the atoms in the order perm with existential variables renamed by
 * first appearance; write the renaming to map.
 */
static void
encode_perm(const IlpRule *r, int arity, const int *perm, IlpRule *out, int8_t *map)
{
	int			next = arity;

	for (int v = 0; v < ILP_MAX_VARS; v++)
		map[v] = v < arity ? v : -1;
	*out = *r;
	for (int i = 0; i < r->natoms; i++)
	{
		const IlpLit *l = &r->lits[perm[i]];

		if (map[l->a] < 0)
			map[l->a] = next++;
		if (l->b >= 0 && map[l->b] < 0)
			map[l->b] = next++;
		out->lits[i].pred = l->pred;
		out->lits[i].a = map[l->a];
		out->lits[i].b = l->b >= 0 ? map[l->b] : -1;
	}
	for (int i = r->natoms; i < r->nlits; i++)
	{
		int8_t		a = map[r->lits[i].a];
		int8_t		b = map[r->lits[i].b];

		out->lits[i].pred = -1;
		out->lits[i].a = a < b ? a : b;
		out->lits[i].b = a < b ? b : a;
	}
	for (int v = 0; v < r->nvars; v++)
		if (map[v] >= 0)
			out->vcls[map[v]] = r->vcls[v];
}

/*
 * Put a rule in canonical form: among all orders of its atoms, the one whose
 * encoding (variables renamed by first appearance) is smallest.
 */
void
ilp_rule_canon(IlpRule *r, int arity)
{
	static const int perms1[1][3] = {{0, 1, 2}};
	static const int perms2[2][3] = {{0, 1, 2}, {1, 0, 2}};
	static const int perms3[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
	const int (*perms)[3];
	int			nperm;
	IlpRule		best,
				cand;
	int8_t		map[ILP_MAX_VARS];

	switch (r->natoms)
	{
		case 0:
		case 1:
			perms = perms1;
			nperm = 1;
			break;
		case 2:
			perms = perms2;
			nperm = 2;
			break;
		default:
			perms = perms3;
			nperm = 6;
			break;
	}
	encode_perm(r, arity, perms[0], &best, map);
	for (int p = 1; p < nperm; p++)
	{
		encode_perm(r, arity, perms[p], &cand, map);
		if (ilp_rule_cmp(&cand, &best) < 0)
			best = cand;
	}
	/* unused slots zeroed so that whole structs compare and hash alike */
	for (int i = best.nlits; i < ILP_MAX_LITS; i++)
	{
		best.lits[i].pred = 0;
		best.lits[i].a = 0;
		best.lits[i].b = 0;
	}
	for (int v = best.nvars; v < ILP_MAX_VARS; v++)
		best.vcls[v] = 0;
	*r = best;
}

/* Does every head variable occur in some atom of the body? */
bool
ilp_rule_safe(const IlpRule *r, int arity)
{
	for (int v = 0; v < arity; v++)
	{
		bool		found = false;

		for (int i = 0; i < r->natoms && !found; i++)
			found = r->lits[i].a == v || r->lits[i].b == v;
		if (!found)
			return false;
	}
	return true;
}

/*
 * Is the rule a candidate: every head variable in some atom, and for a
 * binary head, X and Y joined through the body's atoms (no cross products
 * like "f(X, Y) :- p(X, Z), q(Y)", which derive every pair of two sets).
 */
bool
ilp_rule_linked(const IlpRule *r, int arity)
{
	int8_t		comp[ILP_MAX_VARS];
	bool		changed = true;

	if (!ilp_rule_safe(r, arity))
		return false;
	if (arity < 2)
		return true;
	for (int v = 0; v < ILP_MAX_VARS; v++)
		comp[v] = v;
	while (changed)
	{
		changed = false;
		for (int i = 0; i < r->natoms; i++)
		{
			const IlpLit *l = &r->lits[i];
			int8_t		m;

			if (l->b < 0 || comp[l->a] == comp[l->b])
				continue;
			m = comp[l->a] < comp[l->b] ? comp[l->a] : comp[l->b];
			comp[l->a] = comp[l->b] = m;
			changed = true;
		}
	}
	return comp[0] == comp[1];
}

/* Does the body use a predicate of the given kind? */
bool
ilp_rule_uses(const IlpRule *r, const IlpWorld *w, IlpPredKind kind)
{
	for (int i = 0; i < r->natoms; i++)
		if (w->preds[r->lits[i].pred].kind == kind)
			return true;
	return false;
}

/* Append the head "f(X, Y)" of a rule (a template's "H" is no name: bare). */
static void
put_head(GdlBuf *b, const IlpWorld *w, const char *name, bool template)
{
	if (template)
		gdl_buf_append(b, "%s", name);
	else
		gdl_pred_name_to_buf(b, name);
	gdl_buf_append(b, "(%s", var_name(w->arity, 0));
	if (w->arity == 2)
		gdl_buf_append(b, ", %s", var_name(w->arity, 1));
	gdl_buf_putc(b, ')');
}

/* Print a rule as a Datalog clause, e.g. "f(X, Y) :- p(X, Z), q(Z, Y)." */
char *
ilp_rule_text(const IlpRule *r, const IlpWorld *w)
{
	GdlBuf		b;

	gdl_buf_init(&b);
	put_head(&b, w, w->target_name, false);
	gdl_buf_append(&b, " :- ");
	for (int i = 0; i < r->nlits; i++)
	{
		const IlpLit *l = &r->lits[i];

		if (i > 0)
			gdl_buf_append(&b, ", ");
		if (l->pred < 0)
			gdl_buf_append(&b, "%s != %s", var_name(w->arity, l->a), var_name(w->arity, l->b));
		else if (l->b < 0)
			gdl_buf_append(&b, "%s(%s)", gdl_pred_name_quote(w->preds[l->pred].name),
						   var_name(w->arity, l->a));
		else
			gdl_buf_append(&b, "%s(%s, %s)", gdl_pred_name_quote(w->preds[l->pred].name),
						   var_name(w->arity, l->a), var_name(w->arity, l->b));
	}
	gdl_buf_putc(&b, '.');
	return b.data;
}

/*
 * Print a rule's shape: the head as H, body predicates as P, Q, R in order
 * of first appearance (the target as H, closures with a '+'), e.g.
 * "H(X, Y) :- P(X, Z), Q(Z, Y)."
 */
char *
ilp_rule_template(const IlpRule *r, const IlpWorld *w)
{
	static const char letters[] = "PQRS";
	int16_t		seen[ILP_MAX_LITS];
	int			nseen = 0;
	GdlBuf		b;

	gdl_buf_init(&b);
	put_head(&b, w, "H", true);
	gdl_buf_append(&b, " :- ");
	for (int i = 0; i < r->nlits; i++)
	{
		const IlpLit *l = &r->lits[i];
		int			k;
		const IlpPred *p;

		if (i > 0)
			gdl_buf_append(&b, ", ");
		if (l->pred < 0)
		{
			gdl_buf_append(&b, "%s != %s", var_name(w->arity, l->a), var_name(w->arity, l->b));
			continue;
		}
		p = &w->preds[l->pred];
		if (p->kind == ILP_PRED_TARGET)
			gdl_buf_putc(&b, 'H');
		else
		{
			for (k = 0; k < nseen && seen[k] != l->pred; k++)
				;
			if (k == nseen)
				seen[nseen++] = l->pred;
			gdl_buf_putc(&b, letters[k]);
			if (p->kind == ILP_PRED_CLOSURE)
				gdl_buf_putc(&b, '+');
		}
		if (l->b < 0)
			gdl_buf_append(&b, "(%s)", var_name(w->arity, l->a));
		else
			gdl_buf_append(&b, "(%s, %s)", var_name(w->arity, l->a), var_name(w->arity, l->b));
	}
	gdl_buf_putc(&b, '.');
	return b.data;
}

/* The two clauses defining an invented closure predicate. */
char *
ilp_closure_text(const IlpWorld *w, int pred)
{
	const IlpPred *p = &w->preds[pred];
	char	   *name = gdl_pred_name_quote(p->name);
	char	   *base = gdl_pred_name_quote(w->preds[p->base].name);

	return gdl_sprintf("%s(X, Y) :- %s(X, Y).\n%s(X, Y) :- %s(X, Z), %s(Z, Y).",
					   name, base, name, base, name);
}

/* Clauses of the invented predicates a rule uses (each once), or NULL. */
char *
ilp_rule_aux(const IlpRule *r, const IlpWorld *w)
{
	GdlBuf		b;
	bool		any = false;

	gdl_buf_init(&b);
	for (int i = 0; i < r->natoms; i++)
	{
		bool		dup = false;

		if (w->preds[r->lits[i].pred].kind != ILP_PRED_CLOSURE)
			continue;
		for (int j = 0; j < i; j++)
			dup = dup || r->lits[j].pred == r->lits[i].pred;
		if (dup)
			continue;
		if (any)
			gdl_buf_putc(&b, '\n');
		gdl_buf_append(&b, "%s", ilp_closure_text(w, r->lits[i].pred));
		any = true;
	}
	return any ? b.data : NULL;
}
