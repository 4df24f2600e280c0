/*
 * plan_explain.c — readable lines describing a compiled plan, for
 * gpudl_explain: strata in evaluation order, each rule with its versions
 * (once / delta versions) and their steps in join order.
 *
 *   stratum 0 (recursive): path/2
 *     rule 2: path(X, Z) :- path(X, Y), edge(Y, Z).
 *       delta path#1: scan path(X, Y) [delta]; join edge(Y, Z) on Y; project path(X, Z)
 */
#include "plan_int.h"

#include <string.h>

static const char *const arith_ops[] = {"+", "-", "*", "/", "%"};
static const char *const cmp_ops[] = {"=", "!=", "<", "<=", ">", ">="};
static const char *const agg_names[] = {"count", "sum", "min", "max"};

/* Print a term of clause c (variables by name). */
void
plan_print_term(GdlBuf *b, const GdlClause *c, const GdlTerm *t)
{
	switch (t->kind)
	{
		case GDL_TERM_VAR:
			gdl_buf_append(b, "%s", c->varnames ? c->varnames[t->var] : "?");
			break;
		case GDL_TERM_ANON:
			gdl_buf_append(b, "_");
			break;
		case GDL_TERM_INT:
			gdl_buf_append(b, "%lld", (long long) t->ival);
			break;
		case GDL_TERM_FLOAT:
			gdl_buf_append(b, "%g", t->fval);
			break;
		case GDL_TERM_TEXT:
			gdl_buf_append(b, "\"%s\"", t->text ? t->text : "");
			break;
		case GDL_TERM_BOOL:
			gdl_buf_append(b, "%s", t->bval ? "true" : "false");
			break;
		case GDL_TERM_BINOP:
			gdl_buf_append(b, "(");
			plan_print_term(b, c, t->left);
			gdl_buf_append(b, " %s ", arith_ops[t->op]);
			plan_print_term(b, c, t->right);
			gdl_buf_append(b, ")");
			break;
		case GDL_TERM_NEG:
			gdl_buf_append(b, "-");
			plan_print_term(b, c, t->left);
			break;
		case GDL_TERM_AGG:
			gdl_buf_append(b, "%s(", agg_names[t->agg]);
			if (t->arg)
				plan_print_term(b, c, t->arg);
			gdl_buf_append(b, ")");
			break;
	}
}

/* Print an atom, its terms as plan_print_term writes them. */
static void
print_atom(GdlBuf *b, const GdlClause *c, const GdlAtom *at)
{
	gdl_atom_print(b, c, at, plan_print_term);
}

/* Print the variables joined on. */
static void
print_keys(GdlBuf *b, const GdlClause *c, const PlanStep *s)
{
	int			k;

	if (s->nkeys == 0)
	{
		gdl_buf_append(b, " (cross product)");
		return;
	}
	gdl_buf_append(b, " on ");
	for (k = 0; k < s->nkeys; k++)
		gdl_buf_append(b, "%s%s", k > 0 ? ", " : "",
					   c->varnames[s->atom.vars[s->rkeys[k]]]);
}

/* Source marker of an atom. */
static const char *
src_name(PlanSrc src)
{
	return src == PLAN_SRC_DELTA ? " [delta]" : (src == PLAN_SRC_OLD ? " [old]" : "");
}

/* Which recursive atom of the version's clause literal lit is (1-based), as EXPLAIN numbers them. */
static int
delta_nth(const GdlPlan *plan, const PlanRule *r, int lit)
{
	const GdlAnalysis *a = plan->a;
	const GdlClause *c = a->clauses[r->clause].clause;
	int			nth = 0,
				k;

	for (k = 0; k <= lit; k++)
		if (c->body[k].kind == GDL_LIT_ATOM &&
			plan->pred_stratum[a->clauses[r->clause].lit_pred[k]] ==
			plan->pred_stratum[r->head_pred])
			nth++;
	return nth;
}

/* One line for one rule version. */
static char *
rule_line(const GdlPlan *plan, const PlanRule *r)
{
	const GdlAnalysis *a = plan->a;
	const GdlClause *c = a->clauses[r->clause].clause;
	GdlBuf		b;
	int			i,
				k;

	gdl_buf_init(&b);
	if (r->delta_lit >= 0)
	{
		gdl_buf_append(&b, "    delta %s#%d: ", gdl_pred_name_quote(c->body[r->delta_lit].atom.name),
					   delta_nth(plan, r, r->delta_lit));
		if (r->mirrored)
		{
			/* run as another version's mirror (plan_mirror.c) */
			gdl_buf_append(&b, "the mirror of delta %s#%d",
						   gdl_pred_name_quote(c->body[r->mirror_of].atom.name),
						   delta_nth(plan, r, r->mirror_of));
			return b.data;
		}
	}
	else
		gdl_buf_append(&b, "    once: ");
	for (i = 0; i < r->nsteps; i++)
	{
		const PlanStep *s = &r->steps[i];

		if (i > 0)
			gdl_buf_append(&b, "; ");
		switch (s->kind)
		{
			case PSTEP_UNIT:
				gdl_buf_append(&b, "unit");
				break;
			case PSTEP_START:
				gdl_buf_append(&b, "scan ");
				print_atom(&b, c, &c->body[s->atom.lit].atom);
				gdl_buf_append(&b, "%s", src_name(s->atom.src));
				if (s->atom.sorted)
					gdl_buf_append(&b, " sorted by %s", c->varnames[s->atom.vars[0]]);
				break;
			case PSTEP_JOIN:
				if (s->sort_left)
					gdl_buf_append(&b, "sort; ");
				gdl_buf_append(&b, "join ");
				print_atom(&b, c, &c->body[s->atom.lit].atom);
				gdl_buf_append(&b, "%s", src_name(s->atom.src));
				print_keys(&b, c, s);
				break;
			case PSTEP_ANTI:
				gdl_buf_append(&b, "anti-join ");
				print_atom(&b, c, &c->body[s->atom.lit].atom);
				print_keys(&b, c, s);
				break;
			case PSTEP_MAP:
				if (s->nfilters > 0)
				{
					gdl_buf_append(&b, "filter ");
					for (k = 0; k < s->nfilters; k++)
					{
						const GdlLiteral *lit = &c->body[s->filters[k]];

						if (k > 0)
							gdl_buf_append(&b, ", ");
						plan_print_term(&b, c, lit->lhs);
						gdl_buf_append(&b, " %s ", cmp_ops[lit->cmp]);
						plan_print_term(&b, c, lit->rhs);
					}
					if (s->is_head || s->nvars > 0)
						gdl_buf_append(&b, "; ");
				}
				if (s->is_head)
				{
					gdl_buf_append(&b, r->is_agg ? "aggregate " : "project ");
					print_atom(&b, c, &c->head);
				}
				else
				{
					gdl_buf_append(&b, "keep (");
					for (k = 0; k < s->nvars; k++)
						gdl_buf_append(&b, "%s%s", k > 0 ? ", " : "", c->varnames[s->vars[k]]);
					gdl_buf_append(&b, ")");
				}
				break;
		}
	}
	if (r->head_in_join)
	{
		gdl_buf_append(&b, "; project ");
		print_atom(&b, c, &c->head);
	}
	if (r->mirror_perm)
	{
		gdl_buf_append(&b, "; mirror %s(", gdl_pred_name_quote(c->head.name));
		for (k = 0; k < c->head.nargs; k++)
		{
			if (k > 0)
				gdl_buf_append(&b, ", ");
			plan_print_term(&b, c, c->head.args[r->mirror_perm[k]]);
		}
		gdl_buf_append(&b, ")");
	}
	return b.data;
}

/* The catalog id of a clause's rule row, or its index when it has none. */
static long long
rule_id(const GdlAnalysis *a, int ci)
{
	int			item = a->clauses[ci].item;

	if (a->prog && item >= 0 && item < a->prog->nitems && a->prog->items[item].rule_id != 0)
		return (long long) a->prog->items[item].rule_id;
	return ci + 1;
}

/* Text lines describing the compiled plan. */
int
gdl_plan_explain(const GdlPlan *plan, char ***lines_out)
{
	const GdlAnalysis *a = plan->a;
	GdlLines		out = {0};
	int			s,
				i,
				k;

	for (s = 0; s < plan->nstrata; s++)
	{
		const PlanStratum *ps = &plan->strata[s];
		GdlBuf		b;
		int			ci;

		gdl_buf_init(&b);
		gdl_buf_append(&b, "stratum %d (%s):", s, ps->recursive ? "recursive" : "non-recursive");
		for (i = 0; i < ps->npreds; i++)
			gdl_buf_append(&b, "%s %s/%d", i > 0 ? "," : "", gdl_pred_name_quote(a->preds[ps->preds[i]].name),
						   a->preds[ps->preds[i]].arity);
		gdl_lines_add(&out, b.data);
		if (ps->nfacts > 0)
			gdl_lines_add(&out, gdl_sprintf("  facts: %d", ps->nfacts));
		/* rules in clause order, each with its versions */
		for (ci = 0; ci < a->nclauses; ci++)
		{
			bool		header = false;

			for (k = 0; k < ps->ninit + ps->nrec; k++)
			{
				const PlanRule *r = k < ps->ninit ? &ps->init[k] : &ps->rec[k - ps->ninit];

				if (r->clause != ci)
					continue;
				if (!header)
				{
					const GdlClause *c = a->clauses[ci].clause;

					gdl_lines_add(&out, gdl_sprintf("  rule %lld: %s", rule_id(a, ci),
											   c->text ? c->text : gdl_pred_name_quote(c->head.name)));
					header = true;
				}
				gdl_lines_add(&out, rule_line(plan, r));
			}
		}
	}
	for (i = 0; i < a->npreds; i++)
		if (a->preds[i].is_edb)
			gdl_lines_add(&out, gdl_sprintf("edb %s/%d%s%s", gdl_pred_name_quote(a->preds[i].name), a->preds[i].arity,
									   a->preds[i].rel.display_name ? " = " : "",
									   a->preds[i].rel.display_name ? a->preds[i].rel.display_name : ""));
	*lines_out = out.v;
	return out.n;
}
