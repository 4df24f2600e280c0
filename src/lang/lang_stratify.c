/*
 * lang_stratify.c — stratification: the dependency graph of derived
 * predicates, its strongly connected components (Tarjan, iterative so deep
 * programs cannot overflow the stack), and strata in evaluation order.
 * Recursion through negation or into an aggregate head is rejected.
 */
#include "lang_int.h"

#include <string.h>

/* A dependency: head predicate 'from' reads body predicate 'to'. */
typedef struct DepEdge
{
	int			from;
	int			to;
	bool		neg;			/* through negation or aggregation */
	bool		viaagg;			/* the head aggregates */
	int			clause;
} DepEdge;

typedef struct Graph
{
	int			n;
	int			nedges;
	DepEdge    *edges;			/* sorted by 'from' (stable) */
	int		   *first;			/* CSR offsets, n + 1 */
} Graph;

/* Build the dependency graph over derived predicates, edges in clause order. */
static void
build_graph(GdlAnalysis *a, Graph *g)
{
	int			i;
	int			j;
	int			cap = 16;
	DepEdge    *raw = gdl_alloc(sizeof(DepEdge) * cap);
	int		   *pos;

	g->n = a->npreds;
	g->nedges = 0;
	for (i = 0; i < a->nclauses; i++)
	{
		GdlClauseInfo *info = &a->clauses[i];
		GdlClause  *c = info->clause;
		bool		agg = false;

		for (j = 0; j < c->head.nargs; j++)
			if (c->head.args[j]->kind == GDL_TERM_AGG)
				agg = true;
		for (j = 0; j < c->nbody; j++)
		{
			int			to = info->lit_pred[j];
			DepEdge    *e;

			if (to < 0 || a->preds[to].is_edb)
				continue;
			if (g->nedges == cap)
			{
				cap *= 2;
				raw = gdl_realloc(raw, sizeof(DepEdge) * cap);
			}
			e = &raw[g->nedges++];
			e->from = info->head_pred;
			e->to = to;
			e->neg = c->body[j].kind == GDL_LIT_NEG || agg;
			e->viaagg = agg && c->body[j].kind != GDL_LIT_NEG;
			e->clause = i;
		}
	}
	/* counting sort by 'from', stable */
	g->first = gdl_alloc(sizeof(int) * (g->n + 1));
	for (i = 0; i < g->nedges; i++)
		g->first[raw[i].from + 1]++;
	for (i = 0; i < g->n; i++)
		g->first[i + 1] += g->first[i];
	pos = gdl_alloc(sizeof(int) * (g->n + 1));
	memcpy(pos, g->first, sizeof(int) * g->n);
	g->edges = gdl_alloc(sizeof(DepEdge) * (g->nedges + 1));
	for (i = 0; i < g->nedges; i++)
		g->edges[pos[raw[i].from]++] = raw[i];
}

/*
 * Tarjan's algorithm with an explicit stack.  Components come out in
 * dependency order (a component after every component it reads), which is
 * the evaluation order.  Fills comp[] and returns the number of components.
 */
static int
tarjan(GdlAnalysis *a, const Graph *g, int *comp)
{
	int			n = g->n;
	int		   *index = gdl_alloc(sizeof(int) * (n + 1));
	int		   *low = gdl_alloc(sizeof(int) * (n + 1));
	bool	   *onstack = gdl_alloc(sizeof(bool) * (n + 1));
	int		   *stack = gdl_alloc(sizeof(int) * (n + 1));
	int		   *cstack = gdl_alloc(sizeof(int) * (n + 1));	/* call stack: node */
	int		   *cedge = gdl_alloc(sizeof(int) * (n + 1));	/* next edge per frame */
	int			sp = 0;
	int			csp;
	int			next_index = 0;
	int			ncomp = 0;
	int			root;

	for (root = 0; root < n; root++)
		index[root] = -1;
	for (root = 0; root < n; root++)
	{
		if (index[root] >= 0 || a->preds[root].is_edb)
			continue;
		csp = 0;
		cstack[csp] = root;
		cedge[csp++] = g->first[root];
		index[root] = low[root] = next_index++;
		stack[sp++] = root;
		onstack[root] = true;
		while (csp > 0)
		{
			int			v = cstack[csp - 1];

			if (cedge[csp - 1] < g->first[v + 1])
			{
				int			w = g->edges[cedge[csp - 1]++].to;

				if (index[w] < 0)
				{
					index[w] = low[w] = next_index++;
					stack[sp++] = w;
					onstack[w] = true;
					cstack[csp] = w;
					cedge[csp++] = g->first[w];
				}
				else if (onstack[w] && index[w] < low[v])
					low[v] = index[w];
				continue;
			}
			csp--;
			if (csp > 0 && low[v] < low[cstack[csp - 1]])
				low[cstack[csp - 1]] = low[v];
			if (low[v] == index[v])
			{
				int			w;

				do
				{
					w = stack[--sp];
					onstack[w] = false;
					comp[w] = ncomp;
				} while (w != v);
				ncomp++;
			}
		}
	}
	return ncomp;
}

/* Comma-separated names of the predicates in component k. */
static char *
component_names(GdlAnalysis *a, const int *comp, int k)
{
	GdlBuf		b;
	int			i;
	int			shown = 0;

	gdl_buf_init(&b);
	for (i = 0; i < a->npreds; i++)
	{
		if (a->preds[i].is_edb || comp[i] != k)
			continue;
		if (shown == 10)
		{
			gdl_buf_append(&b, ", ...");
			break;
		}
		gdl_buf_append(&b, "%s%s", shown ? ", " : "", a->preds[i].name);
		shown++;
	}
	return b.data;
}

/* Reject a negative or aggregating edge inside one component. */
static void
check_edges(GdlAnalysis *a, const Graph *g, const int *comp)
{
	int			i;

	for (i = 0; i < g->nedges; i++)
	{
		const DepEdge *e = &g->edges[i];
		const GdlClause *c = a->clauses[e->clause].clause;
		const char *from = a->preds[e->from].name;
		const char *to = a->preds[e->to].name;
		char	   *cycle;
		char	   *detail;
		const char *hint = "stratified Datalog: a predicate can be negated or aggregated over only "
			"once it is fully computed, so it must not depend on the rule's head";

		if (!e->neg || comp[e->from] != comp[e->to])
			continue;
		detail = gdl_sprintf("rule at line %d: %s", c->loc.line, gdl_clause_to_string(c));
		if (e->from == e->to)
		{
			if (e->viaagg)
				gdl_error(GDL_ERR_STRATIFY, detail, hint,
						  "recursion through aggregation is not allowed: the aggregate rule for \"%s\" "
						  "reads \"%s\" itself", from, to);
			gdl_error(GDL_ERR_STRATIFY, detail, hint,
					  "recursion through negation is not allowed: a rule for \"%s\" negates \"%s\" itself",
					  from, to);
		}
		cycle = component_names(a, comp, comp[e->from]);
		if (e->viaagg)
			gdl_error(GDL_ERR_STRATIFY, detail, hint,
					  "recursion through aggregation is not allowed: the aggregate rule for \"%s\" "
					  "reads \"%s\", which depends on \"%s\" (cycle: %s)", from, to, from, cycle);
		gdl_error(GDL_ERR_STRATIFY, detail, hint,
				  "recursion through negation is not allowed: a rule for \"%s\" negates \"%s\", "
				  "which depends on \"%s\" (cycle: %s)", from, to, from, cycle);
	}
}

/*
 * Compute strata: one per component, in evaluation order; set each
 * predicate's stratum and each clause's recursive flag.
 */
void
gdl_lang_stratify(GdlAnalysis *a)
{
	Graph		g;
	int		   *comp = gdl_alloc(sizeof(int) * (a->npreds + 1));
	int			ncomp;
	int			i;
	int			j;

	build_graph(a, &g);
	ncomp = tarjan(a, &g, comp);
	check_edges(a, &g, comp);

	a->nstrata = ncomp;
	a->strata = gdl_alloc(sizeof(GdlStratum) * (ncomp + 1));
	/* size the arrays first, then fill them */
	for (i = 0; i < a->npreds; i++)
		if (!a->preds[i].is_edb)
			a->strata[comp[i]].npreds++;
	for (i = 0; i < a->nclauses; i++)
		a->strata[comp[a->clauses[i].head_pred]].nclauses++;
	for (i = 0; i < ncomp; i++)
	{
		GdlStratum *s = &a->strata[i];

		s->preds = gdl_alloc(sizeof(int) * (s->npreds + 1));
		s->clauses = gdl_alloc(sizeof(int) * (s->nclauses + 1));
		s->recursive = s->npreds > 1;
		s->npreds = 0;
		s->nclauses = 0;
	}
	/* predicates in id order */
	for (i = 0; i < a->npreds; i++)
	{
		GdlStratum *s;

		if (a->preds[i].is_edb)
			continue;
		s = &a->strata[comp[i]];
		a->preds[i].stratum = comp[i];
		s->preds[s->npreds++] = i;
	}
	for (i = 0; i < g.nedges; i++)
		if (g.edges[i].from == g.edges[i].to)
			a->strata[comp[g.edges[i].from]].recursive = true;
	/* clauses in program order */
	for (i = 0; i < a->nclauses; i++)
	{
		GdlClauseInfo *info = &a->clauses[i];
		int			k = comp[info->head_pred];
		GdlStratum *s = &a->strata[k];

		s->clauses[s->nclauses++] = i;
		for (j = 0; j < info->clause->nbody; j++)
		{
			int			bp = info->lit_pred[j];

			if (bp >= 0 && !a->preds[bp].is_edb && comp[bp] == k)
				info->recursive = true;
		}
	}
}
