/*
 * lang_safety.c — range restriction: every variable that must have a value
 * (head, negated atom, comparison, arithmetic, aggregate) is bound by a
 * positive body atom or by an assignment "V = expr" whose right side is
 * bound.  Also marks which "=" literals are assignments (lit_assigns) and
 * normalises "expr = V" assignments to "V = expr".
 */
#include "lang_int.h"

#include <string.h>

/* Raise GDL_ERR_UNSAFE for variable 'name' of clause c with a reason. */
static void
unsafe(const GdlClause *c, GdlLoc loc, const char *name, const char *where,
	   const char *hint)
	__attribute__((noreturn));
static void
unsafe(const GdlClause *c, GdlLoc loc, const char *name, const char *where,
	   const char *hint)
{
	gdl_error(GDL_ERR_UNSAFE,
			  gdl_sprintf("%s: %s", c->nbody > 0 ? "rule" : "fact", gdl_clause_to_string(c)),
			  hint,
			  "unsafe %s at line %d, column %d: variable %s %s",
			  c->nbody > 0 ? "rule" : "fact", loc.line, loc.col, name, where);
}

/* Is every variable of t bound; see gdl_lang.h. */
bool
gdl_term_bound(const GdlTerm *t, const bool *bound, bool anon_bound, bool agg_arg)
{
	if (t == NULL)
		return true;
	switch (t->kind)
	{
		case GDL_TERM_VAR:
			return bound[t->var];
		case GDL_TERM_ANON:
			return anon_bound;
		case GDL_TERM_BINOP:
			return gdl_term_bound(t->left, bound, anon_bound, agg_arg) &&
				gdl_term_bound(t->right, bound, anon_bound, agg_arg);
		case GDL_TERM_NEG:
			return gdl_term_bound(t->left, bound, anon_bound, agg_arg);
		case GDL_TERM_AGG:
			return agg_arg && gdl_term_bound(t->arg, bound, anon_bound, agg_arg);
		default:
			return true;
	}
}

/* Does every variable of t have bound[] set (and t holds no _)? */
static bool
term_bound(const GdlTerm *t, const bool *bound)
{
	return gdl_term_bound(t, bound, false, true);
}

/*
 * Find the first unbound variable (or _) in t; returns it, and sets
 * *in_arith when it sits inside arithmetic.
 */
static const GdlTerm *
first_unbound(const GdlTerm *t, const bool *bound, bool arith, bool *in_arith)
{
	const GdlTerm *r;

	switch (t->kind)
	{
		case GDL_TERM_VAR:
		case GDL_TERM_ANON:
			if (t->kind == GDL_TERM_VAR && bound[t->var])
				return NULL;
			*in_arith = arith;
			return t;
		case GDL_TERM_BINOP:
			r = first_unbound(t->left, bound, true, in_arith);
			return r ? r : first_unbound(t->right, bound, true, in_arith);
		case GDL_TERM_NEG:
			return first_unbound(t->left, bound, true, in_arith);
		default:
			return NULL;
	}
}

/* The printable name of a variable term. */
static const char *
var_name(const GdlClause *c, const GdlTerm *t)
{
	return t->kind == GDL_TERM_ANON ? "_" : c->varnames[t->var];
}

/* A fact must be ground: constants only. */
static void
check_fact(const GdlClause *c)
{
	int			i;

	for (i = 0; i < c->head.nargs; i++)
	{
		const GdlTerm *t = c->head.args[i];

		if (t->kind == GDL_TERM_VAR || t->kind == GDL_TERM_ANON)
			unsafe(c, t->loc, var_name(c, t), "makes the fact non-ground",
				   "facts hold constants only: numbers, \"strings\", lower-case symbols, "
				   "true or false (variables start with an upper-case letter or _)");
		if (t->kind == GDL_TERM_AGG)
			gdl_error(GDL_ERR_UNSAFE, gdl_sprintf("fact: %s", gdl_clause_to_string(c)),
					  "aggregates need a body to range over, as in deg(X, count(Y)) :- edge(X, Y).",
					  "unsafe fact at line %d, column %d: aggregate %s(...) in a fact",
					  t->loc.line, t->loc.col, gdl_agg_name(t->agg));
	}
}

/* Check one clause and fill its lit_assigns. */
static void
check_clause(GdlClauseInfo *info)
{
	GdlClause  *c = info->clause;
	bool	   *bound;
	bool		changed;
	int			i;
	int			j;

	if (c->nbody == 0)
	{
		check_fact(c);
		return;
	}
	bound = gdl_alloc(sizeof(bool) * (c->nvars + 1));
	for (i = 0; i < c->nbody; i++)
	{
		GdlLiteral *l = &c->body[i];

		if (l->kind != GDL_LIT_ATOM)
			continue;
		for (j = 0; j < l->atom.nargs; j++)
			if (l->atom.args[j]->kind == GDL_TERM_VAR)
				bound[l->atom.args[j]->var] = true;
	}

	/* assignments, in any order: repeat until no new variable is bound */
	do
	{
		changed = false;
		for (i = 0; i < c->nbody; i++)
		{
			GdlLiteral *l = &c->body[i];

			if (l->kind != GDL_LIT_CMP || l->cmp != GDL_CMP_EQ || info->lit_assigns[i])
				continue;
			if (l->rhs->kind == GDL_TERM_VAR && !bound[l->rhs->var] &&
				!(l->lhs->kind == GDL_TERM_VAR && !bound[l->lhs->var]) &&
				term_bound(l->lhs, bound))
			{
				GdlTerm    *tmp = l->lhs;

				l->lhs = l->rhs;
				l->rhs = tmp;
			}
			if (l->lhs->kind == GDL_TERM_VAR && !bound[l->lhs->var] &&
				term_bound(l->rhs, bound))
			{
				info->lit_assigns[i] = true;
				bound[l->lhs->var] = true;
				changed = true;
			}
		}
	} while (changed);

	/* the head */
	for (i = 0; i < c->head.nargs; i++)
	{
		const GdlTerm *t = c->head.args[i];

		if (t->kind == GDL_TERM_ANON)
			unsafe(c, t->loc, "_", "appears in the head",
				   "the anonymous variable _ has no value; name a variable bound in the body, or use a constant");
		if (t->kind == GDL_TERM_VAR && !bound[t->var])
			unsafe(c, t->loc, var_name(c, t), "in the head is not bound by a positive body atom",
				   gdl_sprintf("every variable in the head must appear in a positive body atom "
							   "or be assigned, as in %s = X + 1", var_name(c, t)));
		if (t->kind == GDL_TERM_AGG)
		{
			if (!bound[t->arg->var])
				unsafe(c, t->arg->loc, var_name(c, t->arg),
					   gdl_sprintf("aggregated by %s(...) is not bound by a positive body atom",
								   gdl_agg_name(t->agg)),
					   "the aggregated variable must appear in a positive body atom");
			for (j = 0; j < c->head.nargs; j++)
				if (c->head.args[j]->kind == GDL_TERM_VAR && c->head.args[j]->var == t->arg->var)
					unsafe(c, c->head.args[j]->loc, var_name(c, t->arg),
						   gdl_sprintf("is both aggregated by %s(...) and a grouping argument of the head",
									   gdl_agg_name(t->agg)),
						   "group by other variables than the one aggregated");
		}
	}

	/* negated atoms and comparisons */
	for (i = 0; i < c->nbody; i++)
	{
		GdlLiteral *l = &c->body[i];
		const GdlTerm *u;
		bool		arith = false;

		if (l->kind == GDL_LIT_NEG)
		{
			for (j = 0; j < l->atom.nargs; j++)
			{
				const GdlTerm *t = l->atom.args[j];

				if (t->kind == GDL_TERM_VAR && !bound[t->var])
					unsafe(c, t->loc, var_name(c, t), "in a negated atom is not bound by a positive body atom",
						   "every variable of a negated atom must appear in a positive body atom; "
						   "use _ for an argument that may take any value");
			}
		}
		else if (l->kind == GDL_LIT_CMP && !info->lit_assigns[i])
		{
			/* in "V = expr" that cannot assign, blame expr's unbound variable */
			if (l->cmp == GDL_CMP_EQ && l->lhs->kind == GDL_TERM_VAR)
			{
				u = first_unbound(l->rhs, bound, false, &arith);
				if (u == NULL)
					u = first_unbound(l->lhs, bound, false, &arith);
			}
			else
			{
				u = first_unbound(l->lhs, bound, false, &arith);
				if (u == NULL)
					u = first_unbound(l->rhs, bound, false, &arith);
			}
			if (u == NULL)
				continue;
			if (u->kind == GDL_TERM_ANON)
				unsafe(c, u->loc, "_", "appears in a comparison",
					   "the anonymous variable _ has no value to compare");
			unsafe(c, u->loc, var_name(c, u),
				   arith ? "in an arithmetic expression is not bound by a positive body atom" :
				   "in a comparison is not bound by a positive body atom",
				   "variables of comparisons and arithmetic must appear in a positive body atom, "
				   "or be assigned first (V = expression) from bound variables");
		}
	}
}

/* Check every clause of the analysis. */
void
gdl_lang_safety(GdlAnalysis *a)
{
	int			i;

	for (i = 0; i < a->nclauses; i++)
	{
		gdl_check_interrupts();
		check_clause(&a->clauses[i]);
	}
}
