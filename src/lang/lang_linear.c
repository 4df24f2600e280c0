/*
 * lang_linear.c — closures written non-linearly, evaluated linearly
 * (issue 23).
 *
 * A binary predicate T whose rules that read T are all concatenations,
 *
 *     T(A, C) :- T(A, B), T(B, C).
 *
 * is the transitive closure R+ of what its other rules derive (R), even
 * when those read T through other predicates (CSPA's valueFlow through
 * memoryAlias): the least fixpoints of T = R ∪ T∘T and of T = R ∪ T∘R are
 * both R+ (each is a prefixpoint of the other's operator, R monotone in T
 * as stratification makes it), so each concatenation rule is replaced by
 * one linear rule per base rule, that rule's body standing in for the
 * second atom; a reflexive base rule T(X, X) :- ... needs none (composing
 * with pairs (y, y) adds nothing):
 *
 *     tc(X, Y) :- edge(X, Y).   tc(X, Z) :- tc(X, Y), tc(Y, Z).
 *  →  tc(X, Y) :- edge(X, Y).   tc(X, Z) :- tc(X, Y), edge(Y, Z).
 *
 * Why: semi-naive evaluation of the non-linear form joins each round's
 * delta with all of T, twice; on a dense closure that is billions of rows a
 * round for tuples already known (CA-HepTh: 40 s on the H200 against 0.06 s
 * for the linear form), while the linear form joins the delta with the base
 * only.  The linear form takes more rounds (the diameter instead of its
 * logarithm), which the engine runs at a few milliseconds each.
 *
 * Conditions (else the program is left as written): T has arity 2, is not
 * declared with an aggregate, has no facts; every rule of T whose body
 * reads T is a concatenation over three distinct variables (either body
 * order); every other rule of T has a head of two variables (the same one
 * twice: reflexive) and at least one has two distinct ones.
 * The rewritten clauses keep the concatenation's catalog rule id and
 * location, and their text is the linear rule (gpudl_explain shows what
 * runs).  The rewrite is idempotent: a program already linear is unchanged.
 */
#include "lang_int.h"

#include <string.h>

/* Is the atom T(v0, v1) over two variables, and which? */
static bool
binary_vars(const GdlAtom *at, int *v0, int *v1)
{
	if (at->nargs != 2 || at->args[0]->kind != GDL_TERM_VAR || at->args[1]->kind != GDL_TERM_VAR)
		return false;
	*v0 = at->args[0]->var;
	*v1 = at->args[1]->var;
	return true;
}

/*
 * Is clause c a concatenation T(A, C) :- T(A, B), T(B, C) (either order)?
 * *first: the body literal T(A, B).
 */
static bool
is_concat(const GdlClause *c, const char *name, int *first)
{
	int			a,
				cc,
				x0,
				x1,
				y0,
				y1;

	if (c->nbody != 2 || c->body[0].kind != GDL_LIT_ATOM || c->body[1].kind != GDL_LIT_ATOM ||
		strcmp(c->body[0].atom.name, name) != 0 || strcmp(c->body[1].atom.name, name) != 0 ||
		!binary_vars(&c->head, &a, &cc) || !binary_vars(&c->body[0].atom, &x0, &x1) ||
		!binary_vars(&c->body[1].atom, &y0, &y1) || a == cc)
		return false;
	for (int k = 0; k < 2; k++)
	{
		int			p0 = k == 0 ? x0 : y0,
					p1 = k == 0 ? x1 : y1,
					q0 = k == 0 ? y0 : x0,
					q1 = k == 0 ? y1 : x1;

		/* T(A, B), T(B, C) with B distinct from A and C */
		if (p0 == a && q1 == cc && p1 == q0 && p1 != a && p1 != cc)
		{
			*first = k;
			return true;
		}
	}
	return false;
}

/* Does a body literal of clause c read predicate name? */
static bool
body_mentions(const GdlClause *c, const char *name)
{
	for (int l = 0; l < c->nbody; l++)
		if (c->body[l].kind != GDL_LIT_CMP && strcmp(c->body[l].atom.name, name) == 0)
			return true;
	return false;
}

/* Is clause c's head T(X, X) (a reflexive base rule)? */
static bool
reflexive_head(const GdlClause *c)
{
	int			v0,
				v1;

	return binary_vars(&c->head, &v0, &v1) && v0 == v1;
}

/* A copy of term t with its variables renamed by map (variable of the base rule -> new). */
static GdlTerm *
copy_term(const GdlTerm *t, const int *map)
{
	GdlTerm    *n;

	if (t == NULL)
		return NULL;
	n = gdl_alloc(sizeof(GdlTerm));
	*n = *t;
	if (t->kind == GDL_TERM_VAR)
		n->var = map[t->var];
	n->left = copy_term(t->left, map);
	n->right = copy_term(t->right, map);
	n->arg = copy_term(t->arg, map);
	return n;
}

/* A copy of literal l with its variables renamed by map. */
static GdlLiteral
copy_literal(const GdlLiteral *l, const int *map)
{
	GdlLiteral	n = *l;

	if (l->kind == GDL_LIT_CMP)
	{
		n.lhs = copy_term(l->lhs, map);
		n.rhs = copy_term(l->rhs, map);
		return n;
	}
	n.atom.args = gdl_alloc(sizeof(GdlTerm *) * (l->atom.nargs + 1));
	for (int k = 0; k < l->atom.nargs; k++)
		n.atom.args[k] = copy_term(l->atom.args[k], map);
	return n;
}

/*
 * The linear rule for concatenation cat and base rule base: cat's head and
 * its first atom T(A, B), then base's body with base's head variables
 * renamed to B and C and its other variables to fresh ones.
 */
static GdlClause *
linear_rule(const GdlClause *cat, int first, const GdlClause *base)
{
	GdlClause  *c = gdl_alloc(sizeof(GdlClause));
	const GdlAtom *t1 = &cat->body[first].atom;
	int		   *map = gdl_alloc(sizeof(int) * (base->nvars + 1));
	int			h0 = base->head.args[0]->var,
				h1 = base->head.args[1]->var;

	*c = *cat;
	c->nvars = cat->nvars;
	c->varnames = gdl_alloc(sizeof(char *) * (cat->nvars + base->nvars + 1));
	memcpy(c->varnames, cat->varnames, sizeof(char *) * cat->nvars);
	for (int v = 0; v < base->nvars; v++)
	{
		if (v == h0)
			map[v] = t1->args[1]->var;	/* B */
		else if (v == h1)
			map[v] = cat->head.args[1]->var;	/* C */
		else
		{
			map[v] = c->nvars;
			c->varnames[c->nvars] = gdl_sprintf("%s_%d", base->varnames[v], c->nvars);
			c->nvars++;
		}
	}
	c->nbody = 1 + base->nbody;
	c->body = gdl_alloc(sizeof(GdlLiteral) * (c->nbody + 1));
	c->body[0] = cat->body[first];
	for (int l = 0; l < base->nbody; l++)
		c->body[1 + l] = copy_literal(&base->body[l], map);
	c->text = gdl_clause_to_string(c);
	gdl_free(map);
	return c;
}

/* May T's rules be made linear?  (See the file comment.) */
static bool
closure_shaped(const GdlProgram *p, const char *name)
{
	int			ncat = 0,
				nbase = 0,
				first;

	for (int i = 0; i < p->nitems; i++)
	{
		const GdlItem *it = &p->items[i];
		int			v0,
					v1;

		if (it->kind == GDL_ITEM_DECL && strcmp(it->decl->name, name) == 0 && it->decl->nargs != 2)
			return false;
		if (it->kind != GDL_ITEM_CLAUSE || strcmp(it->clause->head.name, name) != 0)
			continue;
		if (it->clause->nbody == 0)
			return false;		/* a fact */
		for (int k = 0; k < it->clause->head.nargs; k++)
			if (it->clause->head.args[k]->kind == GDL_TERM_AGG)
				return false;
		if (is_concat(it->clause, name, &first))
			ncat++;
		else if (body_mentions(it->clause, name))
			return false;		/* another rule reading T itself */
		else if (!binary_vars(&it->clause->head, &v0, &v1))
			return false;
		else if (v0 != v1)
			nbase++;
	}
	return ncat > 0 && nbase > 0;
}

bool		gdl_linearize_closures = true;

/* Replace the concatenation rules of closure-shaped predicates by linear ones. */
void
gdl_lang_linearize(GdlProgram *p)
{
	if (!gdl_linearize_closures)
		return;
	for (int i = 0; i < p->nitems; i++)
	{
		const char *name;
		int			n = 0,
					first;
		GdlItem    *items;

		if (p->items[i].kind != GDL_ITEM_CLAUSE)
			continue;
		name = p->items[i].clause->head.name;
		if (!is_concat(p->items[i].clause, name, &first) || !closure_shaped(p, name))
			continue;
		/* every item kept, each concatenation of T replaced by a rule per base rule */
		items = gdl_alloc(sizeof(GdlItem) * (p->nitems * (p->nitems + 1) + 1));
		for (int j = 0; j < p->nitems; j++)
		{
			const GdlItem *it = &p->items[j];

			if (it->kind != GDL_ITEM_CLAUSE || strcmp(it->clause->head.name, name) != 0 ||
				!is_concat(it->clause, name, &first))
			{
				items[n++] = *it;
				continue;
			}
			for (int b = 0; b < p->nitems; b++)
			{
				const GdlItem *bi = &p->items[b];
				int			f2;

				/* a reflexive base rule adds nothing composed: T∘{(y, y)} ⊆ T */
				if (bi->kind != GDL_ITEM_CLAUSE || strcmp(bi->clause->head.name, name) != 0 ||
					is_concat(bi->clause, name, &f2) || reflexive_head(bi->clause))
					continue;
				items[n] = *it;
				items[n].clause = linear_rule(it->clause, first, bi->clause);
				n++;
			}
		}
		p->items = items;
		p->nitems = n;
		i = -1;					/* names may repeat: start over (each T is done once) */
	}
}
