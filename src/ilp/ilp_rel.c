/*
 * ilp_rel.c — indexed relations over dense value ids: a unary or binary
 * relation sorted and deduplicated, with forward (a -> b's) and backward
 * (b -> a's) adjacency in CSR form, membership tests, and the transitive
 * closure used for invented predicates; and the comparators and binary
 * search of sorted arrays the files of the core share.
 */
#include "ilp_int.h"

#include <stdlib.h>
#include <string.h>

/* qsort comparator for uint64 keys (packed tuples, adjacency entries). */
int
ilp_cmp_u64(const void *x, const void *y)
{
	uint64_t	a = *(const uint64_t *) x;
	uint64_t	b = *(const uint64_t *) y;

	return (a > b) - (a < b);
}

/* qsort comparator for int64 values (encoded values, domains). */
int
ilp_cmp_i64(const void *x, const void *y)
{
	int64_t		a = *(const int64_t *) x;
	int64_t		b = *(const int64_t *) y;

	return (a > b) - (a < b);
}

/*
 * Binary search of an ascending array: the first index whose value is >= v,
 * or with after the first whose value is > v (n when there is none).
 */
int64_t
ilp_search_i64(const int64_t *a, int64_t n, int64_t v, bool after)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = (lo + hi) / 2;

		if (a[mid] < v || (after && a[mid] == v))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Build an indexed relation from n tuples (b NULL for unary): sorted,
 * deduplicated, with forward and backward adjacency.
 */
IlpRel *
ilp_rel_build(int arity, const int32_t *ndom, int64_t n, const int32_t *a, const int32_t *b)
{
	IlpRel	   *r = gdl_alloc(sizeof(IlpRel));
	uint64_t   *keys = gdl_alloc(sizeof(uint64_t) * (n + 1));
	int64_t		m = 0;

	r->arity = arity;
	r->ndom[0] = ndom[0];
	r->ndom[1] = arity == 2 ? ndom[1] : 0;
	for (int64_t i = 0; i < n; i++)
		keys[i] = ilp_pair_key(a[i], arity == 2 ? b[i] : 0);
	if (n > 1)
		qsort(keys, n, sizeof(uint64_t), ilp_cmp_u64);
	for (int64_t i = 0; i < n; i++)
		if (m == 0 || keys[i] != keys[m - 1])
			keys[m++] = keys[i];
	r->n = m;
	r->a = gdl_alloc(sizeof(int32_t) * (m + 1));
	for (int64_t i = 0; i < m; i++)
		r->a[i] = (int32_t) (keys[i] >> 32);
	if (arity == 1)
	{
		r->bits = gdl_alloc(sizeof(uint64_t) * (r->ndom[0] / 64 + 1));
		for (int64_t i = 0; i < m; i++)
			ilp_setbit(r->bits, r->a[i]);
		gdl_free(keys);
		return r;
	}
	r->b = gdl_alloc(sizeof(int32_t) * (m + 1));
	r->fwd_off = gdl_alloc(sizeof(int64_t) * (r->ndom[0] + 1));
	r->bwd_off = gdl_alloc(sizeof(int64_t) * (r->ndom[1] + 1));
	r->bwd = gdl_alloc(sizeof(int32_t) * (m + 1));
	for (int64_t i = 0; i < m; i++)
	{
		r->b[i] = (int32_t) (keys[i] & 0xffffffffu);
		r->fwd_off[r->a[i] + 1]++;
		r->bwd_off[r->b[i] + 1]++;
	}
	for (int32_t v = 0; v < r->ndom[0]; v++)
		r->fwd_off[v + 1] += r->fwd_off[v];
	for (int32_t v = 0; v < r->ndom[1]; v++)
		r->bwd_off[v + 1] += r->bwd_off[v];
	{
		int64_t    *pos = gdl_alloc(sizeof(int64_t) * (r->ndom[1] + 1));

		memcpy(pos, r->bwd_off, sizeof(int64_t) * (r->ndom[1] + 1));
		for (int64_t i = 0; i < m; i++)
			r->bwd[pos[r->b[i]]++] = r->a[i];	/* a ascending within each b */
		gdl_free(pos);
	}
	gdl_free(keys);
	return r;
}

/* Release an indexed relation. */
void
ilp_rel_free(IlpRel *r)
{
	if (r == NULL)
		return;
	gdl_free(r->a);
	gdl_free(r->b);
	gdl_free(r->fwd_off);
	gdl_free(r->bwd_off);
	gdl_free(r->bwd);
	gdl_free(r->bits);
	gdl_free(r);
}

/* Is (a, b) — or (a) for unary — in the relation? */
bool
ilp_rel_has(const IlpRel *r, int32_t a, int32_t b)
{
	const int32_t *base;
	int64_t		lo,
				hi;
	int32_t		key;

	if (a < 0 || a >= r->ndom[0])
		return false;
	if (r->arity == 1)
		return ilp_bit(r->bits, a);
	if (b < 0 || b >= r->ndom[1])
		return false;
	/* search the shorter of the two adjacency lists */
	if (r->fwd_off[a + 1] - r->fwd_off[a] <= r->bwd_off[b + 1] - r->bwd_off[b])
	{
		base = r->b;
		lo = r->fwd_off[a];
		hi = r->fwd_off[a + 1] - 1;
		key = b;
	}
	else
	{
		base = r->bwd;
		lo = r->bwd_off[b];
		hi = r->bwd_off[b + 1] - 1;
		key = a;
	}
	while (lo <= hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (base[mid] < key)
			lo = mid + 1;
		else if (base[mid] > key)
			hi = mid - 1;
		else
			return true;
	}
	return false;
}

/*
 * Transitive closure of a binary relation whose columns share a domain:
 * a breadth-first search from every source.  NULL when it would exceed cap.
 */
IlpRel *
ilp_rel_closure(const IlpRel *r, int64_t cap)
{
	int32_t		nd = r->ndom[0];
	int32_t    *stamp = gdl_alloc(sizeof(int32_t) * (nd + 1));
	int32_t    *queue = gdl_alloc(sizeof(int32_t) * (nd + 1));
	int64_t		n = 0,
				alloc = r->n * 2 + 16;
	int32_t    *ca = gdl_alloc(sizeof(int32_t) * alloc);
	int32_t    *cb = gdl_alloc(sizeof(int32_t) * alloc);
	IlpRel	   *out;

	for (int32_t s = 0; s < nd; s++)
	{
		int32_t		qh = 0,
					qt = 0;

		if (r->fwd_off[s] == r->fwd_off[s + 1])
			continue;
		gdl_check_interrupts();
		queue[qt++] = s;
		while (qh < qt)
		{
			int32_t		u = queue[qh++];

			for (int64_t k = r->fwd_off[u]; k < r->fwd_off[u + 1]; k++)
			{
				int32_t		v = r->b[k];

				if (stamp[v] == s + 1)
					continue;
				stamp[v] = s + 1;
				queue[qt++] = v;
				if (n == alloc)
				{
					alloc *= 2;
					ca = gdl_realloc(ca, sizeof(int32_t) * alloc);
					cb = gdl_realloc(cb, sizeof(int32_t) * alloc);
				}
				ca[n] = s;
				cb[n] = v;
				if (++n > cap)
				{
					gdl_free(ca);
					gdl_free(cb);
					gdl_free(stamp);
					gdl_free(queue);
					return NULL;
				}
			}
		}
	}
	out = ilp_rel_build(2, r->ndom, n, ca, cb);
	gdl_free(ca);
	gdl_free(cb);
	gdl_free(stamp);
	gdl_free(queue);
	return out;
}
