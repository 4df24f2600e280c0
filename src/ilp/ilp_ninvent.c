/*
 * ilp_ninvent.c — invented helper predicates of the refinement search
 * (issue 22: predicate invention where a helper makes the program small).
 *
 * Two kinds of helper, each over binary background relations:
 *
 *   closure  edge_plus(X, Y) :- edge(X, Y).
 *            edge_plus(X, Y) :- edge(X, Z), edge_plus(Z, Y).
 *            (a recursive helper: reachability, "some ancestor", cycles)
 *   union    father_or_mother(X, Y) :- father(X, Y).
 *            father_or_mother(X, Y) :- mother(X, Y).
 *            (a disjunction the target's rules would otherwise repeat)
 *
 * A helper's name says what it is, made an identifier from the last part
 * of its relations' names ("/people/person/father" gives "father_plus").
 * Each is materialised as a relation of the world, so the joins, the
 * coverage and the fixpoints read it like any other; its clauses are printed
 * with the program that uses it and counted in the program's size (5 and 4
 * literals), so a helper survives only where it makes the program smaller
 * or possible at all.  Sizes are bounded as the bulk path's closures are: a
 * closure at most 8 times its base (at least 65,536 tuples), all helpers
 * together at most 4 M tuples; a helper past its bound is left out.
 */
#include "ilp_refine.h"

#include <stdlib.h>
#include <string.h>

#define NX_HELPER_GROWTH	8
#define NX_HELPER_FLOOR		65536
#define NX_HELPER_TOTAL		4000000
#define NX_MAX_UNIONS		16

/* Is relation r binary with both arguments in one class? */
static bool
one_domain(const NxRel *r)
{
	return r->arity == 2 && r->cls[0] == r->cls[1] && r->n > 0 && r->helper == NX_HELPER_NONE;
}

/* Index of v among the sorted distinct values vals[0..n-1] (it is there). */
static int64_t
value_id(const int64_t *vals, int64_t n, int64_t v)
{
	return ilp_search_i64(vals, n, v, false);
}

/*
 * The transitive closure of r (binary, tuples sorted by the first argument)
 * into rows, by a breadth-first search from every source over dense value
 * ids; false (rows empty) when it would pass cap tuples.
 */
static bool
closure_rows(const NxRel *r, int64_t cap, GdlColumns *rows)
{
	int64_t		nv = 0;
	int64_t    *vals = gdl_alloc(sizeof(int64_t) * (2 * r->n + 1));
	int64_t    *off;
	int64_t    *dst;
	int64_t    *stamp;
	int64_t    *queue;
	int64_t		n = 0,
				alloc = r->n * 2 + 16;
	bool		ok = true;

	memcpy(vals, r->col[0], sizeof(int64_t) * r->n);
	memcpy(vals + r->n, r->col[1], sizeof(int64_t) * r->n);
	qsort(vals, 2 * r->n, sizeof(int64_t), ilp_cmp_i64);
	for (int64_t i = 0; i < 2 * r->n; i++)
		if (i == 0 || vals[i] != vals[i - 1])
			vals[nv++] = vals[i];
	/* successors per source id: col[0] is sorted, so each source's run is contiguous */
	off = gdl_alloc(sizeof(int64_t) * (nv + 1));
	dst = gdl_alloc(sizeof(int64_t) * (r->n + 1));
	for (int64_t t = 0; t < r->n; t++)
	{
		off[value_id(vals, nv, r->col[0][t]) + 1]++;
		dst[t] = value_id(vals, nv, r->col[1][t]);
	}
	for (int64_t i = 0; i < nv; i++)
		off[i + 1] += off[i];
	stamp = gdl_alloc(sizeof(int64_t) * (nv + 1));
	queue = gdl_alloc(sizeof(int64_t) * (nv + 1));
	rows->ncols = 2;
	rows->cols = gdl_alloc(sizeof(int64_t *) * 2);
	rows->cols[0] = gdl_alloc(sizeof(int64_t) * alloc);
	rows->cols[1] = gdl_alloc(sizeof(int64_t) * alloc);
	for (int64_t s = 0; s < nv && ok; s++)
	{
		int64_t		qh = 0,
					qt = 0;

		if (off[s] == off[s + 1])
			continue;
		gdl_check_interrupts();
		queue[qt++] = s;
		while (qh < qt && ok)
		{
			int64_t		u = queue[qh++];

			for (int64_t k = off[u]; k < off[u + 1]; k++)
			{
				int64_t		v = dst[k];

				if (stamp[v] == s + 1)
					continue;
				stamp[v] = s + 1;
				queue[qt++] = v;
				if (n == cap)
				{
					ok = false;
					break;
				}
				if (n == alloc)
				{
					alloc *= 2;
					rows->cols[0] = gdl_realloc(rows->cols[0], sizeof(int64_t) * alloc);
					rows->cols[1] = gdl_realloc(rows->cols[1], sizeof(int64_t) * alloc);
				}
				rows->cols[0][n] = vals[s];
				rows->cols[1][n] = vals[v];
				n++;
			}
		}
	}
	rows->nrows = ok ? (size_t) n : 0;
	gdl_free(vals);
	gdl_free(off);
	gdl_free(dst);
	gdl_free(stamp);
	gdl_free(queue);
	return ok;
}

/* The rows of a ∪ b (same arity). */
static void
union_rows(const NxRel *a, const NxRel *b, GdlColumns *rows)
{
	rows->ncols = a->arity;
	rows->nrows = (size_t) (a->n + b->n);
	rows->cols = gdl_alloc(sizeof(int64_t *) * a->arity);
	for (int k = 0; k < a->arity; k++)
	{
		rows->cols[k] = gdl_alloc(sizeof(int64_t) * (a->n + b->n + 1));
		memcpy(rows->cols[k], a->col[k], sizeof(int64_t) * a->n);
		memcpy(rows->cols[k] + a->n, b->col[k], sizeof(int64_t) * b->n);
	}
}

/*
 * The part of a relation's name a helper's name is made of: after the last
 * '/' when there is one (knowledge graphs spell relations as paths,
 * "/people/person/father"), else the whole.
 */
static const char *
short_name(const char *name)
{
	const char *slash = strrchr(name, '/');

	return slash && slash[1] ? slash + 1 : name;
}

/* IlpNameAt of an NxRel array. */
static const char *
rel_name_at(const void *names, int i)
{
	return ((const NxRel *) names)[i].name;
}

/* A helper's name: the stem made an identifier, unique among the world's relations. */
static char *
helper_name(const NxWorld *w, const NxRel *rels, int nrels, const char *stem)
{
	return ilp_unique_name(ilp_identifier(stem), "", w->target, rel_name_at, rels, nrels);
}

/* Append a helper built from rows (its tuples made distinct and indexed). */
static void
add_helper(NxWorld *w, NxRel **rels, int *n, int *cap, int kind, int a, int b,
		   const char *stem, GdlColumns *rows)
{
	NxRel	   *h;

	if (*n == *cap)
	{
		*cap = *cap * 2 + 8;
		*rels = gdl_realloc(*rels, sizeof(NxRel) * (*cap + 1));
	}
	h = &(*rels)[*n];
	memset(h, 0, sizeof(*h));
	h->name = helper_name(w, *rels, *n, stem);
	h->arity = 2;
	h->cls[0] = (*rels)[a].cls[0];
	h->cls[1] = (*rels)[a].cls[1];
	h->helper = (int8_t) kind;
	h->base[0] = (int16_t) a;
	h->base[1] = (int16_t) b;
	nx_rel_set(h, rows);
	for (int k = 0; k < rows->ncols; k++)
		gdl_free(rows->cols[k]);
	gdl_free(rows->cols);
	(*n)++;
}

/*
 * Add the helpers of the world's binary relations after them (call before
 * the target is appended): the closure of each relation over one class,
 * then the unions of two relations of the same classes (at most
 * NX_MAX_UNIONS, in name order).  Returns how many were added.
 */
int
nx_world_add_helpers(NxWorld *w)
{
	int			nbase = w->nrels;
	int			n = w->nrels;
	int			cap = w->nrels;
	int			nunions = 0;
	int64_t		left = NX_HELPER_TOTAL;
	NxRel	   *rels = gdl_alloc(sizeof(NxRel) * (cap + 1));

	memcpy(rels, w->rels, sizeof(NxRel) * w->nrels);
	for (int i = 0; i < nbase; i++)
	{
		GdlColumns	rows;
		int64_t		lim = rels[i].n * NX_HELPER_GROWTH;

		if (!one_domain(&rels[i]))
			continue;
		if (lim < NX_HELPER_FLOOR)
			lim = NX_HELPER_FLOOR;
		if (lim > left)
			lim = left;
		memset(&rows, 0, sizeof(rows));
		if (!closure_rows(&rels[i], lim, &rows))
		{
			gdl_free(rows.cols[0]);
			gdl_free(rows.cols[1]);
			gdl_free(rows.cols);
			continue;
		}
		left -= (int64_t) rows.nrows;
		add_helper(w, &rels, &n, &cap, NX_HELPER_CLOSURE, i, i,
				   gdl_sprintf("%s_plus", short_name(rels[i].name)), &rows);
	}
	for (int i = 0; i < nbase; i++)
		for (int j = i + 1; j < nbase && nunions < NX_MAX_UNIONS; j++)
		{
			GdlColumns	rows;

			if (rels[i].arity != 2 || rels[j].arity != 2 || rels[i].n == 0 || rels[j].n == 0 ||
				rels[i].cls[0] != rels[j].cls[0] || rels[i].cls[1] != rels[j].cls[1] ||
				rels[i].n + rels[j].n > left)
				continue;
			left -= rels[i].n + rels[j].n;
			union_rows(&rels[i], &rels[j], &rows);
			add_helper(w, &rels, &n, &cap, NX_HELPER_UNION, i, j,
					   gdl_sprintf("%s_or_%s", short_name(rels[i].name), short_name(rels[j].name)), &rows);
			nunions++;
		}
	gdl_free(w->rels);
	w->rels = rels;
	w->nrels = n;
	return n - nbase;
}

/* Literals of a helper's definition (0 for a relation of the data). */
int
nx_helper_literals(const NxRel *r)
{
	switch (r->helper)
	{
		case NX_HELPER_CLOSURE:
			return 5;
		case NX_HELPER_UNION:
			return 4;
		default:
			return 0;
	}
}

/* The clauses defining helper relation i of the world (two lines). */
char *
nx_helper_text(const NxWorld *w, int i)
{
	const NxRel *h = &w->rels[i];
	char	   *name = gdl_pred_name_quote(h->name);
	char	   *a = gdl_pred_name_quote(w->rels[h->base[0]].name);
	char	   *b = gdl_pred_name_quote(w->rels[h->base[1]].name);

	if (h->helper == NX_HELPER_CLOSURE)
		return gdl_sprintf("%s(X, Y) :- %s(X, Y).\n%s(X, Y) :- %s(X, Z), %s(Z, Y).",
						   name, a, name, a, name);
	return gdl_sprintf("%s(X, Y) :- %s(X, Y).\n%s(X, Y) :- %s(X, Y).", name, a, name, b);
}
