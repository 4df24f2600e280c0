/*
 * ilp_negatives.c — negative examples when the user gives none.
 *
 * GDL_ILP_NEG_PCA (the default, PRODUCT.md): the partial completeness
 * assumption.  For the positives t(x, _) of each x, about neg_per_pos pairs
 * t(x, y') per positive, y' any known constant of the second argument's
 * class with t(x, y') not a known fact.  Unary targets: constants that are
 * not positives.
 *
 * GDL_ILP_NEG_CLOSED: the closed-world assumption over what the bias can
 * reach.  Every pair (x, y) that the background joins within 'hops' steps
 * (any binary relation over the target's class, either direction) and that
 * is not a known fact is a negative — the near misses a rule of max_body
 * atoms can derive, including wrong subjects and reversed pairs, which
 * partial completeness never labels.  Beyond neg_per_pos per positive they
 * are sampled uniformly, and each kept negative then weighs total / kept in
 * the loss and in every count of negatives, so precision stays calibrated.  For knowledge graphs that are complete apart from
 * held-out facts (the Family graph), this is the assumption that holds.
 *
 * Both are deterministic given the seed.
 */
#include "ilp_int.h"

#include <stdlib.h>

/* Append one negative to the growing arrays. */
static void
push_neg(int32_t **na, int32_t **nb, int64_t *nn, int64_t *ncap, int32_t a, int32_t b)
{
	if (*nn == *ncap)
	{
		*ncap = *ncap * 2 + 64;
		*na = gdl_realloc(*na, sizeof(int32_t) * *ncap);
		*nb = gdl_realloc(*nb, sizeof(int32_t) * *ncap);
	}
	(*na)[*nn] = a;
	(*nb)[*nn] = b;
	(*nn)++;
}

/* Draw a pseudo-random number from a splitmix64 stream. */
static uint64_t
rng_next(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ULL;
	return ilp_mix64(*state);
}

/*
 * Choose 'want' distinct values of 0..nd-1 outside 'taken' (keys built by
 * keyfn) and append them as negatives with first argument x (or unary).
 */
static void
sample_values(IlpWorld *w, IlpKeySet *known, IlpKeySet *negs, int32_t x, int32_t nd,
			  int64_t avail, int64_t want, uint64_t *rng,
			  int32_t **na, int32_t **nb, int64_t *nn, int64_t *ncap)
{
	int64_t		got = 0;
	bool		binary = w->arity == 2;

	if (want <= 0)
		return;
	if (want * 2 > avail)
	{
		/* enumerate the free values, then a partial Fisher-Yates shuffle */
		int32_t    *free = gdl_alloc(sizeof(int32_t) * ((int64_t) nd + 1));
		int64_t		nf = 0;

		for (int32_t v = 0; v < nd; v++)
		{
			uint64_t	k = binary ? ilp_pair_key(x, v) : ilp_pair_key(v, 0);

			if (!ilp_keyset_has(known, k) && !ilp_keyset_has(negs, k))
				free[nf++] = v;
		}
		for (int64_t i = 0; i < nf && got < want; i++)
		{
			int64_t		j = i + (int64_t) (rng_next(rng) % (uint64_t) (nf - i));
			int32_t		t = free[i];

			free[i] = free[j];
			free[j] = t;
			got++;
		}
		for (int64_t i = 0; i < got; i++)
		{
			uint64_t	k = binary ? ilp_pair_key(x, free[i]) : ilp_pair_key(free[i], 0);

			ilp_keyset_add(negs, k);
			push_neg(na, nb, nn, ncap, binary ? x : free[i], binary ? free[i] : 0);
		}
		gdl_free(free);
		return;
	}
	while (got < want)
	{
		int32_t		v = (int32_t) (rng_next(rng) % (uint64_t) nd);
		uint64_t	k = binary ? ilp_pair_key(x, v) : ilp_pair_key(v, 0);

		if (ilp_keyset_has(known, k) || !ilp_keyset_add(negs, k))
			continue;
		push_neg(na, nb, nn, ncap, binary ? x : v, binary ? v : 0);
		got++;
	}
}

/* Negatives by the partial completeness assumption (see the file header). */
static void
pca_negatives(IlpWorld *w, IlpKeySet *known, int neg_per_pos, int64_t seed,
			  int32_t **na, int32_t **nb, int64_t *nn)
{
	IlpKeySet	negs;
	int64_t		ncap = 0;
	uint64_t	rng;

	*na = *nb = NULL;
	*nn = 0;
	ilp_keyset_init(&negs, (int64_t) w->npos * neg_per_pos + 16);
	if (w->arity == 1)
	{
		int32_t		nd = w->dom[w->cls[0]].n;
		int64_t		avail = nd - (int64_t) known->n;
		int64_t		want = (int64_t) w->npos * neg_per_pos;

		rng = ilp_mix64((uint64_t) seed);
		if (avail > 0)
			sample_values(w, known, &negs, 0, nd, avail, want < avail ? want : avail,
						  &rng, na, nb, nn, &ncap);
	}
	else
	{
		/* positives grouped by x, in ascending order of x */
		uint64_t   *keys = gdl_alloc(sizeof(uint64_t) * (w->npos + 1));
		int32_t		nd = w->dom[w->cls[1]].n;

		for (int32_t i = 0; i < w->npos; i++)
			keys[i] = ilp_pair_key(w->ex[0][i], w->ex[1][i]);
		qsort(keys, w->npos, sizeof(uint64_t), ilp_cmp_u64);
		for (int32_t i = 0; i < w->npos;)
		{
			int32_t		x = (int32_t) (keys[i] >> 32);
			int32_t		j = i;
			int64_t		nknown = 0;
			int64_t		avail,
						want;

			while (j < w->npos && (int32_t) (keys[j] >> 32) == x)
				j++;
			/*
			 * known facts of x: positives here plus background facts of the
			 * target (counted twice when both: avail may only be too small)
			 */
			if (w->known->n > 0)
				nknown = w->known->fwd_off[x + 1] - w->known->fwd_off[x];
			nknown += j - i;
			avail = nd - nknown;
			want = (int64_t) (j - i) * neg_per_pos;
			rng = ilp_mix64((uint64_t) seed ^ ilp_mix64((uint64_t) x + 1));
			if (avail > 0)
				sample_values(w, known, &negs, x, nd, avail, want < avail ? want : avail,
							  &rng, na, nb, nn, &ncap);
			i = j;
			if ((i & 1023) == 0)
				gdl_check_interrupts();
		}
		gdl_free(keys);
	}
	ilp_keyset_free(&negs);
}


/*
 * The undirected graph of all binary background relations over one value
 * class, as CSR over that class's domain.
 */
static void
union_graph(const IlpWorld *w, int cls, int64_t **off_out, int32_t **adj_out)
{
	int32_t		nd = w->dom[cls].n;
	int64_t    *off = gdl_alloc(sizeof(int64_t) * ((int64_t) nd + 2));
	int64_t    *fill;
	int32_t    *adj;
	int64_t		m = 0;

	for (int p = 0; p < w->npreds; p++)
	{
		const IlpPred *pr = &w->preds[p];

		if (pr->kind != ILP_PRED_BG || pr->arity != 2 || pr->cls[0] != cls || pr->cls[1] != cls)
			continue;
		for (int64_t i = 0; i < pr->rel->n; i++)
		{
			off[pr->rel->a[i] + 1]++;
			off[pr->rel->b[i] + 1]++;
		}
		m += 2 * pr->rel->n;
	}
	for (int32_t v = 0; v < nd; v++)
		off[v + 1] += off[v];
	adj = gdl_alloc(sizeof(int32_t) * (m + 1));
	fill = gdl_alloc(sizeof(int64_t) * ((int64_t) nd + 1));
	for (int32_t v = 0; v <= nd; v++)
		fill[v] = off[v];
	for (int p = 0; p < w->npreds; p++)
	{
		const IlpPred *pr = &w->preds[p];

		if (pr->kind != ILP_PRED_BG || pr->arity != 2 || pr->cls[0] != cls || pr->cls[1] != cls)
			continue;
		for (int64_t i = 0; i < pr->rel->n; i++)
		{
			adj[fill[pr->rel->a[i]]++] = pr->rel->b[i];
			adj[fill[pr->rel->b[i]]++] = pr->rel->a[i];
		}
	}
	gdl_free(fill);
	*off_out = off;
	*adj_out = adj;
}

/*
 * Visit every y within 'hops' steps of x (x itself included when a path
 * returns to it) and call back on the pairs that are not known facts.
 * Returns how many there were.  stamp/depth/queue are caller scratch.
 */
static int64_t
near_pairs(const IlpWorld *w, IlpKeySet *known, const int64_t *off, const int32_t *adj,
		   int32_t x, int hops, int32_t *stamp, int32_t *queue, int8_t *depth,
		   uint64_t seed, double keep, int32_t **na, int32_t **nb, int64_t *nn, int64_t *ncap)
{
	int32_t		qh = 0,
				qt = 0;
	int64_t		count = 0;
	bool		self = false;

	stamp[x] = x + 1;
	depth[x] = 0;
	queue[qt++] = x;
	while (qh < qt)
	{
		int32_t		u = queue[qh++];

		if (depth[u] == hops)
			continue;
		for (int64_t k = off[u]; k < off[u + 1]; k++)
		{
			int32_t		v = adj[k];

			if (v == x)
				self = true;
			if (stamp[v] == x + 1)
				continue;
			stamp[v] = x + 1;
			depth[v] = depth[u] + 1;
			queue[qt++] = v;
		}
	}
	/* the reached values (queue[1..]) and x itself when a path comes back */
	for (int32_t i = self ? 0 : 1; i < qt; i++)
	{
		int32_t		y = queue[i];
		uint64_t	k = ilp_pair_key(x, y);

		if (ilp_keyset_has(known, k))
			continue;
		count++;
		if (na != NULL &&
			(double) (ilp_mix64(seed ^ k) >> 11) * (1.0 / 9007199254740992.0) < keep)
			push_neg(na, nb, nn, ncap, x, y);
	}
	return count;
}

/* Negatives by the closed-world assumption over near pairs (see the file header). */
static void
closed_negatives(IlpWorld *w, IlpKeySet *known, const IlpNegSpec *spec,
				 int32_t **na, int32_t **nb, int64_t *nn)
{
	int			cls = w->cls[0];
	int32_t		nd = w->dom[cls].n;
	int64_t    *off;
	int32_t    *adj;
	int32_t    *stamp = gdl_alloc(sizeof(int32_t) * ((int64_t) nd + 1));
	int32_t    *queue = gdl_alloc(sizeof(int32_t) * ((int64_t) nd + 1));
	int8_t	   *depth = gdl_alloc(sizeof(int8_t) * ((int64_t) nd + 1));
	int64_t		total = 0,
				cap = (int64_t) spec->per_pos * w->npos,
				ncap = 0;
	uint64_t	seed = ilp_mix64((uint64_t) spec->seed + 0x51ed);
	double		keep;

	union_graph(w, cls, &off, &adj);
	/* count, then keep each with probability cap / total */
	for (int32_t x = 0; x < nd; x++)
	{
		if ((x & 255) == 0)
			gdl_check_interrupts();
		if (off[x + 1] > off[x])
			total += near_pairs(w, known, off, adj, x, spec->hops, stamp, queue, depth,
								seed, 0.0, NULL, NULL, NULL, NULL);
	}
	for (int32_t x = 0; x < nd; x++)
		stamp[x] = 0;
	keep = total <= cap ? 2.0 : (double) cap / (double) total;
	*na = *nb = NULL;
	*nn = 0;
	for (int32_t x = 0; x < nd; x++)
	{
		if ((x & 255) == 0)
			gdl_check_interrupts();
		if (off[x + 1] > off[x])
			near_pairs(w, known, off, adj, x, spec->hops, stamp, queue, depth,
					   seed, keep, na, nb, nn, &ncap);
	}
	/* a sample stands for all near pairs: weigh each negative accordingly */
	if (*nn > 0 && total > *nn)
		w->neg_weight = (double) total / (double) *nn;
	gdl_free(off);
	gdl_free(adj);
	gdl_free(stamp);
	gdl_free(queue);
	gdl_free(depth);
}

/*
 * Generate negatives for a world whose examples hold only positives so far;
 * 'known' holds the positives and known target facts (packed pairs).
 */
void
ilp_negatives(IlpWorld *w, IlpKeySet *known, const IlpNegSpec *spec,
			  int32_t **na, int32_t **nb, int64_t *nn)
{
	if (spec->mode == GDL_ILP_NEG_CLOSED && w->arity == 2 && w->cls[0] == w->cls[1])
		closed_negatives(w, known, spec, na, nb, nn);
	else
		pca_negatives(w, known, spec->per_pos, spec->seed, na, nb, nn);
}
