/*
 * lang_explain.c — the strata of an analysed program as text lines, for
 * gpudl_explain: each stratum with its predicates and rules in evaluation
 * order, then the derived predicates' types and the tables read.
 *
 *   stratum 0: path/2 (recursive)
 *     [rule 12] path(X, Y) :- edge(X, Y).
 *   idb path/2: path(int, int)
 *   edb edge/2: public.edge(int, int)
 */
#include "lang_int.h"

/* Predicates whose facts are listed one by one; more are summarised. */
#define EXPLAIN_MAX_FACTS 5

/* "name(type, type)" for a predicate's argument types. */
static char *
signature(const char *name, int n, const GdlType *types)
{
	GdlBuf		b;
	int			i;

	gdl_buf_init(&b);
	gdl_buf_append(&b, "%s(", name);
	for (i = 0; i < n; i++)
		gdl_buf_append(&b, "%s%s", i ? ", " : "", gdl_type_name(types[i]));
	gdl_buf_putc(&b, ')');
	return b.data;
}

/* One line for a clause: "  [rule N] canonical text". */
static char *
clause_line(const GdlAnalysis *a, int ci)
{
	const GdlClauseInfo *info = &a->clauses[ci];
	int64_t		id = a->prog->items[info->item].rule_id;
	char	   *txt = gdl_clause_to_string(info->clause);

	if (id != 0)
		return gdl_sprintf("  [rule %lld] %s", (long long) id, txt);
	return gdl_sprintf("  %s", txt);
}

/* Lines for one stratum: header, then its clauses in program order. */
static void
explain_stratum(const GdlAnalysis *a, int k, GdlLines *out)
{
	const GdlStratum *s = &a->strata[k];
	GdlBuf		b;
	int			i;
	int		   *nfacts = gdl_alloc(sizeof(int) * (s->npreds + 1));

	gdl_buf_init(&b);
	gdl_buf_append(&b, "stratum %d: ", k);
	for (i = 0; i < s->npreds; i++)
	{
		const GdlPred *p = &a->preds[s->preds[i]];

		gdl_buf_append(&b, "%s%s/%d", i ? ", " : "", gdl_pred_name_quote(p->name), p->arity);
	}
	if (s->recursive)
		gdl_buf_append(&b, " (recursive)");
	if (s->nclauses == 0)
		gdl_buf_append(&b, " (declared, no clauses)");
	gdl_lines_add(out, b.data);

	/* many facts of a predicate are summarised in one line */
	for (i = 0; i < s->npreds; i++)
	{
		const GdlPred *p = &a->preds[s->preds[i]];
		int			j;

		for (j = 0; j < p->nclauses; j++)
			if (a->clauses[p->clauses[j]].clause->nbody == 0)
				nfacts[i]++;
		if (nfacts[i] > EXPLAIN_MAX_FACTS)
			gdl_lines_add(out, gdl_sprintf("  %d facts of %s/%d", nfacts[i],
										   gdl_pred_name_quote(p->name), p->arity));
	}
	for (i = 0; i < s->nclauses; i++)
	{
		const GdlClauseInfo *info = &a->clauses[s->clauses[i]];
		int			pi;

		if (info->clause->nbody == 0)
		{
			for (pi = 0; pi < s->npreds; pi++)
				if (s->preds[pi] == info->head_pred)
					break;
			if (pi < s->npreds && nfacts[pi] > EXPLAIN_MAX_FACTS)
				continue;
		}
		gdl_lines_add(out, clause_line(a, s->clauses[i]));
	}
}

/*
 * Lines describing strata (evaluation order), derived predicate types and
 * tables read.  Deterministic: strata, predicates and clauses come in a
 * fixed order.
 */
int
gdl_explain_strata(const GdlAnalysis *a, char ***lines_out)
{
	GdlLines		out = {0};
	int			i;

	for (i = 0; i < a->nstrata; i++)
		explain_stratum(a, i, &out);
	for (i = 0; i < a->npreds; i++)
	{
		const GdlPred *p = &a->preds[i];

		if (!p->is_edb)
			gdl_lines_add(&out, gdl_sprintf("idb %s/%d: %s%s", gdl_pred_name_quote(p->name), p->arity,
									   signature(gdl_pred_name_quote(p->name), p->arity, p->types),
									   p->decl ? " (declared)" : ""));
	}
	for (i = 0; i < a->npreds; i++)
	{
		const GdlPred *p = &a->preds[i];

		if (p->is_edb)
			gdl_lines_add(&out, gdl_sprintf("edb %s/%d: %s", gdl_pred_name_quote(p->name), p->arity,
									   signature(p->rel.display_name, p->arity, p->types)));
	}
	if (out.v == NULL)
		out.v = gdl_alloc(sizeof(char *));
	*lines_out = out.v;
	return out.n;
}
