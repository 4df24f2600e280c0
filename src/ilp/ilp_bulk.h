/*
 * ilp_bulk.h — bulk coverage of the body-2 bias of a binary target: the
 * per-example enumeration, shared word for word by the CPU (ilp_bulk.c) and
 * the GPU (cuda/ilp_cover.cu), so both produce the same entries.
 *
 * For an example t(x, y), every rule of the bias that derives it and whose
 * coverage the search asks for is found from the adjacency of x and y alone
 * (GdlIlpDevCoverIn): with X = 0, Y = 1 and the one fresh variable Z = 2,
 *
 *   one atom   closed  p(X, Y) p(Y, X) p(X, X) p(Y, Y) p(X) p(Y): facts of x
 *                      reaching y or x, of y reaching y, unary memberships
 *              open    p(X, Z) p(Z, X) p(Y, Z) p(Z, Y): signatures of x, y
 *   two atoms  a linking atom p(X, Y) or p(Y, X) that holds, with any other
 *              one-atom body that holds (the rule is linked by the first)
 *              A(X, Z), B(Y, Z) in either argument order: a z among the
 *              neighbours of both x and y (a join on z of the two lists)
 *
 * which are all the linked bodies of at most two atoms over the head and one
 * fresh variable (any other two-atom body does not join X and Y, and the
 * search never asks for its coverage).  An atom is coded pattern << 16 |
 * pred, the pattern being a * 4 + (b + 1) over variables 0..2 (b = -1 for
 * unary); a rule's key is its one code, or its two codes in ascending
 * order, so the key does not depend on atom order; an entry is
 * key << 24 | example.  Entries come out with repetitions and in any order;
 * sorting and removing duplicates gives the coverage of every rule as a run
 * of ascending examples.  Facts of in->skip_pred count as absent: a graph
 * indexed once for all its relations serves each target with the target's
 * own relation left out.
 */
#ifndef ILP_BULK_H
#define ILP_BULK_H

#include "gdl_ilp_device.h"

#ifdef __CUDACC__
#define ILP_HD __host__ __device__ static inline
#else
#define ILP_HD static inline
#endif

#define ILP_BULK_PAT(a, b)	((uint32_t) ((a) * 4 + ((b) + 1)))
#define ILP_BULK_NONE		((uint32_t) 0xFFFFF)
#define ILP_BULK_EX_BITS	24
#define ILP_BULK_MAX_PREDS	65536

/* An atom's code: its pattern and predicate. */
ILP_HD uint32_t
ilp_bulk_atom(uint32_t pat, uint32_t pred)
{
	return pat << 16 | pred;
}

/* The key of a one-atom body. */
ILP_HD uint64_t
ilp_bulk_key1(uint32_t c)
{
	return (uint64_t) c << 20 | ILP_BULK_NONE;
}

/* The key of a two-atom body (order-free). */
ILP_HD uint64_t
ilp_bulk_key2(uint32_t c, uint32_t d)
{
	return c < d ? (uint64_t) c << 20 | d : (uint64_t) d << 20 | c;
}

/* The open atom of a signature pred << 1 | dir seen from X (side 0) or Y. */
ILP_HD uint32_t
ilp_bulk_side_atom(uint64_t s, int side)
{
	uint32_t	pred = (uint32_t) (s & 0xFFFFFFFFu) >> 1;
	bool		in = (s & 1) != 0;

	if (side == 0)
		return ilp_bulk_atom(in ? ILP_BULK_PAT(2, 0) : ILP_BULK_PAT(0, 2), pred);
	return ilp_bulk_atom(in ? ILP_BULK_PAT(2, 1) : ILP_BULK_PAT(1, 2), pred);
}

/* First index in adj[lo, hi) whose z is >= z (entries ascending by z). */
ILP_HD int64_t
ilp_bulk_lower(const uint64_t *adj, int64_t lo, int64_t hi, uint64_t z)
{
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if ((adj[mid] >> 32) < z)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Is an adjacency entry or signature one of the skipped predicate's? */
ILP_HD bool
ilp_bulk_skipped(const GdlIlpDevCoverIn *in, uint64_t t)
{
	return (int32_t) ((uint32_t) (t & 0xFFFFFFFFu) >> 1) == in->skip_pred;
}

/* Where the closed atoms of one example are. */
typedef struct IlpBulkEx
{
	int64_t		r1,
				n1;				/* facts of x with z = y: p(X, Y), p(Y, X) */
	int64_t		r2,
				n2;				/* facts of x with z = x: p(X, X) */
	int64_t		r3,
				n3;				/* facts of y with z = y: p(Y, Y) */
	int64_t		u1,
				nu1;			/* unary memberships of x */
	int64_t		u2,
				nu2;			/* of y */
	int64_t		s1,
				ns1;			/* signatures of x */
	int64_t		s2,
				ns2;			/* of y */
} IlpBulkEx;

/* Closed atom k (0 <= k < n1+n2+n3+nu1+nu2), or NONE where there is none. */
ILP_HD uint32_t
ilp_bulk_closed(const GdlIlpDevCoverIn *in, const IlpBulkEx *b, int64_t k)
{
	uint64_t	t;

	if (k < b->n1)
	{
		t = in->adj[b->r1 + k];
		if (ilp_bulk_skipped(in, t))
			return ILP_BULK_NONE;
		return ilp_bulk_atom((t & 1) ? ILP_BULK_PAT(1, 0) : ILP_BULK_PAT(0, 1),
							 (uint32_t) (t & 0xFFFFFFFFu) >> 1);
	}
	k -= b->n1;
	if (k < b->n2)
	{
		t = in->adj[b->r2 + k];
		return (t & 1) || ilp_bulk_skipped(in, t) ? ILP_BULK_NONE :
			ilp_bulk_atom(ILP_BULK_PAT(0, 0), (uint32_t) (t & 0xFFFFFFFFu) >> 1);
	}
	k -= b->n2;
	if (k < b->n3)
	{
		t = in->adj[b->r3 + k];
		return (t & 1) || ilp_bulk_skipped(in, t) ? ILP_BULK_NONE :
			ilp_bulk_atom(ILP_BULK_PAT(1, 1), (uint32_t) (t & 0xFFFFFFFFu) >> 1);
	}
	k -= b->n3;
	if (k < b->nu1)
		return (int32_t) in->usig[b->u1 + k] == in->skip_pred ? ILP_BULK_NONE :
			ilp_bulk_atom(ILP_BULK_PAT(0, -1), in->usig[b->u1 + k]);
	k -= b->nu1;
	return (int32_t) in->usig[b->u2 + k] == in->skip_pred ? ILP_BULK_NONE :
		ilp_bulk_atom(ILP_BULK_PAT(1, -1), in->usig[b->u2 + k]);
}

/* Open atom k (0 <= k < ns1 + ns2), or NONE (the skipped predicate). */
ILP_HD uint32_t
ilp_bulk_open(const GdlIlpDevCoverIn *in, const IlpBulkEx *b, int64_t k)
{
	uint32_t	s = k < b->ns1 ? in->sig[b->s1 + k] : in->sig[b->s2 + k - b->ns1];

	if (ilp_bulk_skipped(in, s))
		return ILP_BULK_NONE;
	return ilp_bulk_side_atom(s, k < b->ns1 ? 0 : 1);
}

/*
 * The entries of example e: written to out when it is not NULL; returns how
 * many (the same count with and without out).
 */
ILP_HD int64_t
ilp_bulk_example(const GdlIlpDevCoverIn *in, int32_t e, uint64_t *out)
{
	uint64_t	x = (uint64_t) in->ex0[e],
				y = (uint64_t) in->ex1[e];
	int64_t		xa = in->aoff[x],
				xb = in->aoff[x + 1],
				ya = in->aoff[y],
				yb = in->aoff[y + 1];
	int64_t		n = 0,
				nclosed,
				nopen;
	IlpBulkEx	b;

#define ILP_BULK_EMIT(key) \
	do { \
		if (out != NULL) \
			out[n] = (uint64_t) (key) << ILP_BULK_EX_BITS | (uint64_t) e; \
		n++; \
	} while (0)

	b.r1 = ilp_bulk_lower(in->adj, xa, xb, y);
	b.n1 = ilp_bulk_lower(in->adj, b.r1, xb, y + 1) - b.r1;
	b.r2 = ilp_bulk_lower(in->adj, xa, xb, x);
	b.n2 = ilp_bulk_lower(in->adj, b.r2, xb, x + 1) - b.r2;
	b.r3 = ilp_bulk_lower(in->adj, ya, yb, y);
	b.n3 = ilp_bulk_lower(in->adj, b.r3, yb, y + 1) - b.r3;
	b.u1 = in->uoff[x];
	b.nu1 = in->uoff[x + 1] - b.u1;
	b.u2 = in->uoff[y];
	b.nu2 = in->uoff[y + 1] - b.u2;
	b.s1 = in->soff[x];
	b.ns1 = in->soff[x + 1] - b.s1;
	b.s2 = in->soff[y];
	b.ns2 = in->soff[y + 1] - b.s2;
	nclosed = b.n1 + b.n2 + b.n3 + b.nu1 + b.nu2;
	nopen = b.ns1 + b.ns2;

	/* one atom */
	for (int64_t k = 0; k < nclosed; k++)
	{
		uint32_t	c = ilp_bulk_closed(in, &b, k);

		if (c != ILP_BULK_NONE)
			ILP_BULK_EMIT(ilp_bulk_key1(c));
	}
	for (int64_t k = 0; k < nopen; k++)
	{
		uint32_t	o = ilp_bulk_open(in, &b, k);

		if (o != ILP_BULK_NONE)
			ILP_BULK_EMIT(ilp_bulk_key1(o));
	}

	/* a linking atom and any other body atom that holds */
	for (int64_t k = 0; k < b.n1; k++)
	{
		uint32_t	l = ilp_bulk_closed(in, &b, k);

		if (l == ILP_BULK_NONE)
			continue;
		for (int64_t j = 0; j < nclosed; j++)
		{
			uint32_t	c = ilp_bulk_closed(in, &b, j);

			if (c != ILP_BULK_NONE && c != l)
				ILP_BULK_EMIT(ilp_bulk_key2(l, c));
		}
		for (int64_t j = 0; j < nopen; j++)
		{
			uint32_t	o = ilp_bulk_open(in, &b, j);

			if (o != ILP_BULK_NONE)
				ILP_BULK_EMIT(ilp_bulk_key2(l, o));
		}
	}

	/* A(X, Z), B(Y, Z): join the two adjacency lists on z (the shorter drives) */
	{
		bool		xdrives = xb - xa <= yb - ya;
		int64_t		i = xdrives ? xa : ya,
					iend = xdrives ? xb : yb,
					j = xdrives ? ya : xa,
					jend = xdrives ? yb : xb;

		while (i < iend && j < jend)
		{
			uint64_t	z = in->adj[i] >> 32;
			int64_t		ie = ilp_bulk_lower(in->adj, i, iend, z + 1);
			int64_t		js = ilp_bulk_lower(in->adj, j, jend, z);
			int64_t		je;

			if (js >= jend)
				break;
			if ((in->adj[js] >> 32) != z)
			{
				/* skip to the next z of the driving list at or after the other's */
				i = ilp_bulk_lower(in->adj, ie, iend, in->adj[js] >> 32);
				j = js;
				continue;
			}
			je = ilp_bulk_lower(in->adj, js, jend, z + 1);
			for (int64_t p = i; p < ie; p++)
				for (int64_t q = js; q < je; q++)
				{
					if (ilp_bulk_skipped(in, in->adj[p]) || ilp_bulk_skipped(in, in->adj[q]))
						continue;
					{
					uint32_t	c = ilp_bulk_side_atom(in->adj[p], xdrives ? 0 : 1);
					uint32_t	d = ilp_bulk_side_atom(in->adj[q], xdrives ? 1 : 0);

					ILP_BULK_EMIT(ilp_bulk_key2(c, d));
					}
				}
			i = ie;
			j = je;
		}
	}
#undef ILP_BULK_EMIT
	return n;
}

#endif							/* ILP_BULK_H */
