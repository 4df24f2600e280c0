/*
 * mine_predict_index.c — mined rules prepared once for many prediction
 * queries (gdl_predict_index).
 *
 * Answering a query walks every rule of its relation.  On a graph like
 * FB15k-237 most of them are one-atom rules with a constant head,
 * r(X, "c") :- s(X, "d") or r(X, "c") :- s(X, Z): a query binding X = h
 * fires one of them exactly when h has that link, and each check was two
 * binary searches (the constants' entities) and a lookup, for every rule,
 * for every query.  Here each rule's constants are resolved to the graph's
 * entities once, and for each direction of query the rules are split into:
 *
 *   - links: X bound, body s(X, "d") / s("d", X): keyed (link signature,
 *     d), found by walking h's own links (tens) instead of the rules
 *     (thousands);
 *   - open: X bound, body s(X, Z) / s(Z, X): keyed by the signature, fired
 *     when h has any link of it;
 *   - by head: the query binds the head's constant side, r(?, "c"): only
 *     the rules whose constant is c apply, found by their head entity, then
 *     searched as before;
 *   - general: every other rule (head r(X, Y), longer bodies), searched as
 *     before.
 *
 * A rule whose constants the graph lacks never fires and is left out.
 * The answers are those of the walk over every rule (test_mine compares
 * them); only the order the rules are visited in changes, and the hits are
 * sorted afterwards anyway.
 */
#include "mine_int.h"

#include <stdlib.h>
#include <string.h>

/* qsort order of keyed rules: key, then rule. */
static int
cmp_keyed(const void *a, const void *b)
{
	const PredKeyed *x = a,
			   *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->rule < y->rule ? -1 : x->rule > y->rule;
}

/* Sort a list by key (an empty list has no array to hand qsort). */
static void
keyed_sort(PredKeyedList *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(PredKeyed), cmp_keyed);
}

/* Append rule i with key to list l (its capacity grown as needed). */
static void
keyed_add(PredKeyedList *l, uint64_t key, int32_t rule)
{
	if (l->n == l->cap)
	{
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = gdl_realloc(l->v, sizeof(PredKeyed) * l->cap);
	}
	l->v[l->n].key = key;
	l->v[l->n].rule = rule;
	l->n++;
}

/*
 * The signature of body atom `at` seen from X when it is s(X, o) or
 * s(o, X) with o not X (its other argument in *other); -1 otherwise.
 */
static int64_t
x_signature(const GdlMineAtom *at, int *other)
{
	if (at->a == GDL_MINE_X && at->b != GDL_MINE_X)
	{
		*other = at->b;
		return 2 * (int64_t) at->rel;
	}
	if (at->b == GDL_MINE_X && at->a != GDL_MINE_X)
	{
		*other = at->a;
		return 2 * (int64_t) at->rel + 1;
	}
	return -1;
}

/* gdl_mine.h: see the file's comment.  NULL for more rules than an int32 counts. */
GdlPredictIndex *
gdl_predict_index(const GdlMineGraph *g, const GdlMineRule *rules, int64_t nrules)
{
	GdlPredictIndex *ix;

	if (nrules < 0 || nrules > INT32_MAX)
		return NULL;
	ix = gdl_alloc(sizeof(GdlPredictIndex));
	memset(ix, 0, sizeof(*ix));
	ix->rules = rules;
	ix->nrules = nrules;
	ix->fixed = gdl_alloc(sizeof(int32_t) * (nrules + 1));
	ix->cval = gdl_alloc(sizeof(int32_t) * GDL_MINE_MAX_BODY * (nrules + 1));
	for (int64_t i = 0; i < nrules; i++)
	{
		const GdlMineRule *r = &rules[i];
		bool		consts_ok = true;

		if ((i & 4095) == 0)
			gdl_check_interrupts();
		ix->fixed[i] = r->head_const == GDL_MINE_HEAD_VARS ? -1 : gdl_mine_graph_entity(g, r->head_value);
		for (int k = 0; k < GDL_MINE_MAX_BODY; k++)
		{
			int32_t    *cv = &ix->cval[i * GDL_MINE_MAX_BODY + k];

			*cv = -1;
			if (k < r->nbody && (r->body[k].a == GDL_MINE_C || r->body[k].b == GDL_MINE_C))
			{
				*cv = gdl_mine_graph_entity(g, r->body[k].value);
				consts_ok &= *cv >= 0;
			}
		}
		if (r->nbody < 1 || r->nbody > GDL_MINE_MAX_BODY || !consts_ok)
			continue;			/* never fires */
		for (int d = 0; d < 2; d++)
		{
			bool		subject_bound = d == 1;
			int			other = -1;
			int64_t		sig;

			if (r->head_const == GDL_MINE_HEAD_VARS)
				keyed_add(&ix->general[d], 0, (int32_t) i);
			else if (subject_bound == (r->head_const == GDL_MINE_HEAD_SUBJECT))
			{
				/* the query binds the constant: it must be the rule's */
				if (ix->fixed[i] >= 0)
					keyed_add(&ix->byhead[d], (uint64_t) ix->fixed[i], (int32_t) i);
			}
			else if (ix->fixed[i] < 0)
				continue;		/* the one answer is no entity */
			else
			{
				/* X bound, the one answer c: fired by X's links, or searched */
				sig = r->nbody == 1 ? x_signature(&r->body[0], &other) : -1;
				if (sig >= 0 && other == GDL_MINE_C)
					keyed_add(&ix->links[d], ((uint64_t) sig << 32) | (uint32_t) ix->cval[i * GDL_MINE_MAX_BODY],
							  (int32_t) i);
				else if (sig >= 0)
					keyed_add(&ix->open[d], (uint64_t) sig, (int32_t) i);
				else
					keyed_add(&ix->general[d], 0, (int32_t) i);
			}
		}
	}
	for (int d = 0; d < 2; d++)
	{
		/* general keeps the rules' order; the keyed lists are searched by key */
		keyed_sort(&ix->byhead[d]);
		keyed_sort(&ix->links[d]);
		keyed_sort(&ix->open[d]);
	}
	return ix;
}

/* gdl_mine.h: free an index of gdl_predict_index (NULL is ignored). */
void
gdl_predict_index_free(GdlPredictIndex *ix)
{
	if (ix == NULL)
		return;
	for (int d = 0; d < 2; d++)
	{
		gdl_free(ix->general[d].v);
		gdl_free(ix->byhead[d].v);
		gdl_free(ix->links[d].v);
		gdl_free(ix->open[d].v);
	}
	gdl_free(ix->fixed);
	gdl_free(ix->cval);
	gdl_free(ix);
}

/* The first entry of l with key >= key (l->n when none). */
int64_t
pred_keyed_lower(const PredKeyedList *l, uint64_t key)
{
	int64_t		lo = 0,
				hi = l->n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (l->v[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
