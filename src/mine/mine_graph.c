/*
 * mine_graph.c — the graph the miner and the predictor walk: dense entity
 * ids (the rank of each value among the distinct values of every fact),
 * every entity's links in both directions of every relation, sorted and
 * distinct (duplicate facts count once), a directory of each entity's
 * signatures (the fact lookup: binary searches), and the parallel and cycle
 * pairs the three-atom shapes need.  Everything is O(facts) in memory.
 */
#include "mine_int.h"

#include <stdlib.h>
#include <string.h>

/* Insertion sort of v[0, n): the short runs of mine_sort_u64. */
static void
insertion_sort_u64(uint64_t *v, int64_t n)
{
	for (int64_t i = 1; i < n; i++)
	{
		uint64_t	x = v[i];
		int64_t		j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/*
 * mine_int.h: sort n unsigned 64-bit keys ascending, in place.  A
 * quicksort with the comparisons inline (libc's qsort calls a comparator
 * for each: sorting the link keys of the enumeration through it was a
 * third of FB15k-237's mining time): Hoare partitions around the median
 * of the first, middle and last key, put in order first so that the pivot
 * sits in the middle (never the last place: both sides are non-empty), the
 * smaller side sorted by recursion (depth at most log2 n), runs of 24 or
 * fewer by insertion.
 */
void
mine_sort_u64(uint64_t *v, int64_t n)
{
	while (n > 24)
	{
		int64_t		mid = n / 2,
					i = -1,
					j = n;
		uint64_t	pivot,
					t;

		if (v[mid] < v[0])
			t = v[mid], v[mid] = v[0], v[0] = t;
		if (v[n - 1] < v[mid])
		{
			t = v[n - 1], v[n - 1] = v[mid], v[mid] = t;
			if (v[mid] < v[0])
				t = v[mid], v[mid] = v[0], v[0] = t;
		}
		pivot = v[mid];
		for (;;)
		{
			do
				i++;
			while (v[i] < pivot);
			do
				j--;
			while (v[j] > pivot);
			if (i >= j)
				break;
			t = v[i], v[i] = v[j], v[j] = t;
		}
		/* [0, j] <= pivot <= [j + 1, n) */
		if (j + 1 < n - (j + 1))
		{
			mine_sort_u64(v, j + 1);
			v += j + 1;
			n -= j + 1;
		}
		else
		{
			mine_sort_u64(v + j + 1, n - (j + 1));
			n = j + 1;
		}
	}
	insertion_sort_u64(v, n);
}

/*
 * Sort n signed 64-bit values: LSD radix sort, 8 bits a pass (the sign bit
 * flipped), skipping passes where every value has the same byte.  tmp holds
 * n values.
 */
static void
radix_sort_i64(int64_t *v, int64_t *tmp, int64_t n)
{
	int64_t    *src = v,
			   *dst = tmp;

	for (int shift = 0; shift < 64; shift += 8)
	{
		int64_t		cnt[257] = {0};

		for (int64_t i = 0; i < n; i++)
			cnt[((((uint64_t) src[i]) ^ (1ULL << 63)) >> shift & 0xff) + 1]++;
		if (n > 0 && cnt[((((uint64_t) src[0]) ^ (1ULL << 63)) >> shift & 0xff) + 1] == n)
			continue;
		for (int b = 0; b < 256; b++)
			cnt[b + 1] += cnt[b];
		for (int64_t i = 0; i < n; i++)
			dst[cnt[(((uint64_t) src[i]) ^ (1ULL << 63)) >> shift & 0xff]++] = src[i];
		{
			int64_t    *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != v)
		memcpy(v, src, sizeof(int64_t) * n);
}

/*
 * The binary search of the graph's sorted arrays: lo (an int64_t lvalue,
 * from the start of the range) becomes the first i of [lo, hi) with
 * v[i] >= x, or hi, where v ascends over [lo, hi).  A macro: the values
 * are 64-bit, the link arrays 32-bit.
 */
#define LOWER_BOUND(v, lo, hi, x) \
	for (int64_t count_ = (hi) - (lo); count_ > 0;) \
	{ \
		int64_t		half_ = count_ / 2; \
		\
		if ((v)[(lo) + half_] < (x)) \
		{ \
			(lo) += half_ + 1; \
			count_ -= half_ + 1; \
		} \
		else \
			count_ = half_; \
	}

/* Dense id of a value by binary search, or -1. */
static int32_t
find_value(const int64_t *v, int32_t n, int64_t value)
{
	int64_t		lo = 0;

	LOWER_BOUND(v, lo, n, value);
	return lo < n && v[lo] == value ? (int32_t) lo : -1;
}

/*
 * Work shared by the parallel sorts of the build: first the links as
 * sig << 32 | nb, sorted and made distinct (cnt receives how many), then as
 * nb << 32 | sig, sorted only (cnt NULL); either grouped by entity.
 */
typedef struct BuildPar
{
	GdlMineGraph *g;
	uint64_t   *ent;			/* per link, grouped by entity */
	int64_t    *cnt;			/* distinct links per entity after sort, or NULL */
} BuildPar;

/* The dense ids of every fact's arguments, computed in parallel. */
typedef struct MapPar
{
	const GdlMineGraph *g;
	int			nrels;
	const GdlMineRelation *rels;
	const int64_t *first;		/* per relation: index of its first fact */
	int64_t		total;
	int32_t    *ids;			/* 2 per fact: subject, object */
} MapPar;

/* Map the task's share of the facts to dense ids (binary searches). */
static void
map_task(void *arg, int tid, int ntasks)
{
	MapPar	   *p = arg;
	int64_t		from,
				to;
	int			r = 0;

	gdl_split(p->total, tid, ntasks, &from, &to);
	for (int64_t f = from; f < to; f++)
	{
		while (f >= p->first[r + 1])
			r++;
		p->ids[2 * f] = find_value(p->g->values, p->g->nent, p->rels[r].rows.cols[0][f - p->first[r]]);
		p->ids[2 * f + 1] = find_value(p->g->values, p->g->nent, p->rels[r].rows.cols[1][f - p->first[r]]);
	}
}

/*
 * Sort each entity's links (task share of entities), and with cnt make them
 * distinct and count them.
 */
static void
build_sort_task(void *arg, int tid, int ntasks)
{
	BuildPar   *p = arg;
	int64_t		from,
				to;

	gdl_split(p->g->nent, tid, ntasks, &from, &to);
	for (int64_t e = from; e < to; e++)
	{
		uint64_t   *v = p->ent + p->g->aoff[e];
		int64_t		n = p->g->aoff[e + 1] - p->g->aoff[e],
					m = 0;

		mine_sort_u64(v, n);
		if (p->cnt == NULL)
			continue;
		for (int64_t i = 0; i < n; i++)
			if (m == 0 || v[i] != v[m - 1])
				v[m++] = v[i];
		p->cnt[e] = m;
	}
}

/*
 * The parallel pairs of every entity: for each neighbour reached by k >= 2
 * signatures, the k(k-1)/2 pairs; then per entity sorted by (a, b, z), and
 * the distinct (a, b) as cycle pairs.  Serial: the pairs are few.
 */
static void
build_pairs(GdlMineGraph *g)
{
	int64_t		npp = 0,
				ncp = 0;
	uint64_t   *tmp;
	int64_t		tmpcap = 16;

	g->ppoff = gdl_alloc(sizeof(int64_t) * (g->nent + 1));
	g->cpoff = gdl_alloc(sizeof(int64_t) * (g->nent + 1));
	for (int32_t e = 0; e < g->nent; e++)
	{
		int64_t		i = g->aoff[e];

		while (i < g->aoff[e + 1])
		{
			int64_t		j = i;

			while (j < g->aoff[e + 1] && g->bnb[j] == g->bnb[i])
				j++;
			npp += (j - i) * (j - i - 1) / 2;
			i = j;
		}
	}
	g->ppa = gdl_alloc(sizeof(int32_t) * (npp + 1));
	g->ppb = gdl_alloc(sizeof(int32_t) * (npp + 1));
	g->ppz = gdl_alloc(sizeof(int32_t) * (npp + 1));
	g->cpa = gdl_alloc(sizeof(int32_t) * (npp + 1));
	g->cpb = gdl_alloc(sizeof(int32_t) * (npp + 1));
	tmp = gdl_alloc(sizeof(uint64_t) * tmpcap);
	npp = 0;
	for (int32_t e = 0; e < g->nent; e++)
	{
		int64_t		i = g->aoff[e],
					n = 0;

		if (g->aoff[e + 1] - g->aoff[e] >= (1 << 26))
			gdl_error(GDL_ERR_LIMIT, NULL, NULL, "an entity has more than %d links", 1 << 26);
		g->ppoff[e] = npp;
		g->cpoff[e] = ncp;
		while (i < g->aoff[e + 1])
		{
			int64_t		j = i;

			while (j < g->aoff[e + 1] && g->bnb[j] == g->bnb[i])
				j++;
			for (int64_t a = i; a < j; a++)
				for (int64_t b = a + 1; b < j; b++)
				{
					if (n + 1 > tmpcap)
					{
						tmpcap *= 2;
						tmp = gdl_realloc(tmp, sizeof(uint64_t) * tmpcap);
					}
					/* a's and b's signatures < 2^19, z < 2^31: 19+19+31 > 64, so
					 * pack (a, b) into one 38-bit field and z separately */
					tmp[n++] = ((uint64_t) g->bsig[a] << 45) | ((uint64_t) g->bsig[b] << 26) |
						(uint64_t) (a - g->aoff[e]);
				}
			i = j;
		}
		mine_sort_u64(tmp, n);
		for (int64_t k = 0; k < n; k++)
		{
			int32_t		a = (int32_t) (tmp[k] >> 45),
						b = (int32_t) ((tmp[k] >> 26) & MINE_SIG_MASK);
			int64_t		li = g->aoff[e] + (int64_t) (tmp[k] & ((1u << 26) - 1));

			g->ppa[npp] = a;
			g->ppb[npp] = b;
			g->ppz[npp] = g->bnb[li];
			npp++;
			if (k == 0 || (tmp[k] >> 26) != (tmp[k - 1] >> 26))
			{
				g->cpa[ncp] = a;
				g->cpb[ncp] = b;
				ncp++;
			}
		}
	}
	g->ppoff[g->nent] = npp;
	g->cpoff[g->nent] = ncp;
	gdl_free(tmp);
}

/*
 * Build the graph of nrels binary relations: dense ids, links, signature
 * directory, parallel and cycle pairs.  Raises on a relation that is not
 * binary or on more relations or entities than the encodings hold.
 */
GdlMineGraph *
gdl_mine_graph_build(int nrels, const GdlMineRelation *rels)
{
	GdlMineGraph *g = gdl_alloc(sizeof(GdlMineGraph));
	int64_t		nvals = 0,
				nl,
				ns = 0;
	int64_t    *vals;
	int64_t    *fill;
	BuildPar	bp;
	MapPar		mp;
	int64_t    *first;
	int			threads = gdl_threads();

	if (nrels < 0 || nrels > MINE_MAX_RELS)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "mining supports at most %d relations", MINE_MAX_RELS);
	g->nrels = nrels;
	g->names = gdl_alloc(sizeof(char *) * (nrels + 1));
	g->nfacts = gdl_alloc(sizeof(int64_t) * (nrels + 1));
	for (int r = 0; r < nrels; r++)
	{
		if (rels[r].rows.ncols != 2)
			gdl_error(GDL_ERR_DATATYPE, NULL, NULL, "relation \"%s\" is not binary",
					  rels[r].name ? rels[r].name : "?");
		g->names[r] = gdl_strdup(rels[r].name ? rels[r].name : gdl_sprintf("r%d", r));
		nvals += 2 * (int64_t) rels[r].rows.nrows;
	}

	/* dense ids: the distinct values, ascending */
	vals = gdl_alloc(sizeof(int64_t) * (nvals + 1));
	nvals = 0;
	for (int r = 0; r < nrels; r++)
		for (size_t i = 0; i < rels[r].rows.nrows; i++)
		{
			vals[nvals++] = rels[r].rows.cols[0][i];
			vals[nvals++] = rels[r].rows.cols[1][i];
		}
	{
		int64_t    *tmp = gdl_alloc(sizeof(int64_t) * (nvals + 1));

		radix_sort_i64(vals, tmp, nvals);
		gdl_free(tmp);
	}
	{
		int64_t		m = 0;

		for (int64_t i = 0; i < nvals; i++)
			if (m == 0 || vals[i] != vals[m - 1])
				vals[m++] = vals[i];
		if (m > INT32_MAX - 1)
			gdl_error(GDL_ERR_LIMIT, NULL, NULL, "mining supports at most %d entities", INT32_MAX - 1);
		g->nent = (int32_t) m;
	}
	g->values = gdl_alloc(sizeof(int64_t) * (g->nent + 1));
	memcpy(g->values, vals, sizeof(int64_t) * g->nent);
	gdl_free(vals);
	gdl_check_interrupts();

	/* the dense ids of every fact */
	mp.g = g;
	mp.nrels = nrels;
	mp.rels = rels;
	mp.first = first = gdl_alloc(sizeof(int64_t) * (nrels + 2));
	for (int r = 0; r < nrels; r++)
		first[r + 1] = first[r] + (int64_t) rels[r].rows.nrows;
	first[nrels + 1] = INT64_MAX;
	mp.total = first[nrels];
	mp.ids = gdl_alloc(sizeof(int32_t) * (2 * mp.total + 1));
	gdl_parallel(threads, map_task, &mp);
	gdl_check_interrupts();

	/* every fact as two links, grouped by entity (counting sort) */
	g->aoff = gdl_alloc(sizeof(int64_t) * (g->nent + 1));
	nl = 2 * mp.total;
	for (int64_t f = 0; f < 2 * mp.total; f++)
		g->aoff[mp.ids[f] + 1]++;
	for (int32_t e = 0; e < g->nent; e++)
		g->aoff[e + 1] += g->aoff[e];
	fill = gdl_alloc(sizeof(int64_t) * (g->nent + 1));
	memcpy(fill, g->aoff, sizeof(int64_t) * (g->nent + 1));
	bp.g = g;
	bp.ent = gdl_alloc(sizeof(uint64_t) * (nl + 1));
	bp.cnt = gdl_alloc(sizeof(int64_t) * (g->nent + 1));
	for (int r = 0; r < nrels; r++)
		for (int64_t f = first[r]; f < first[r + 1]; f++)
		{
			int32_t		s = mp.ids[2 * f];
			int32_t		o = mp.ids[2 * f + 1];

			bp.ent[fill[s]++] = ((uint64_t) (2 * r) << 32) | (uint32_t) o;
			bp.ent[fill[o]++] = ((uint64_t) (2 * r + 1) << 32) | (uint32_t) s;
		}
	gdl_free(mp.ids);
	gdl_free(first);
	gdl_check_interrupts();
	gdl_parallel(threads, build_sort_task, &bp);
	gdl_check_interrupts();

	/* compact the distinct links */
	nl = 0;
	for (int32_t e = 0; e < g->nent; e++)
	{
		int64_t		from = g->aoff[e];

		g->aoff[e] = nl;
		for (int64_t i = 0; i < bp.cnt[e]; i++)
			bp.ent[nl++] = bp.ent[from + i];
	}
	g->aoff[g->nent] = nl;
	g->nlinks = nl;
	g->asig = gdl_alloc(sizeof(int32_t) * (nl + 1));
	g->anb = gdl_alloc(sizeof(int32_t) * (nl + 1));
	g->bsig = gdl_alloc(sizeof(int32_t) * (nl + 1));
	g->bnb = gdl_alloc(sizeof(int32_t) * (nl + 1));
	for (int64_t i = 0; i < nl; i++)
	{
		g->asig[i] = (int32_t) (bp.ent[i] >> 32);
		g->anb[i] = (int32_t) (uint32_t) bp.ent[i];
		if ((g->asig[i] & 1) == 0)
			g->nfacts[g->asig[i] >> 1]++;
		bp.ent[i] = (bp.ent[i] << 32) | (bp.ent[i] >> 32);
	}
	gdl_free(bp.cnt);
	bp.cnt = NULL;
	gdl_parallel(threads, build_sort_task, &bp);
	for (int64_t i = 0; i < nl; i++)
	{
		g->bnb[i] = (int32_t) (bp.ent[i] >> 32);
		g->bsig[i] = (int32_t) (uint32_t) bp.ent[i];
	}
	gdl_free(bp.ent);
	gdl_free(fill);

	/* relations with a fact r(e, e) (prediction proposes e for r(e, ?) only there) */
	g->reflexive = gdl_alloc(sizeof(bool) * (nrels + 1));
	for (int32_t e = 0; e < g->nent; e++)
		for (int64_t i = g->aoff[e]; i < g->aoff[e + 1]; i++)
			if (g->anb[i] == e && (g->asig[i] & 1) == 0)
				g->reflexive[g->asig[i] >> 1] = true;

	/* signature directory */
	g->soff = gdl_alloc(sizeof(int64_t) * (g->nent + 1));
	for (int32_t e = 0; e < g->nent; e++)
		for (int64_t i = g->aoff[e]; i < g->aoff[e + 1]; i++)
			if (i == g->aoff[e] || g->asig[i] != g->asig[i - 1])
				ns++;
	g->ssig = gdl_alloc(sizeof(int32_t) * (ns + 1));
	g->sbeg = gdl_alloc(sizeof(int64_t) * (ns + 1));
	g->send = gdl_alloc(sizeof(int64_t) * (ns + 1));
	ns = 0;
	for (int32_t e = 0; e < g->nent; e++)
	{
		g->soff[e] = ns;
		for (int64_t i = g->aoff[e]; i < g->aoff[e + 1]; i++)
			if (i == g->aoff[e] || g->asig[i] != g->asig[i - 1])
			{
				if (ns > g->soff[e])
					g->send[ns - 1] = i;
				g->ssig[ns] = g->asig[i];
				g->sbeg[ns] = i;
				ns++;
			}
		if (ns > g->soff[e])
			g->send[ns - 1] = g->aoff[e + 1];
	}
	g->soff[g->nent] = ns;
	gdl_check_interrupts();
	build_pairs(g);
	return g;
}

int
gdl_mine_graph_nrels(const GdlMineGraph *g)
{
	return g->nrels;
}

const char *
gdl_mine_graph_relname(const GdlMineGraph *g, int rel)
{
	return rel >= 0 && rel < g->nrels ? g->names[rel] : NULL;
}

int64_t
gdl_mine_graph_nfacts(const GdlMineGraph *g, int rel)
{
	return rel >= 0 && rel < g->nrels ? g->nfacts[rel] : 0;
}

int32_t
gdl_mine_graph_entity(const GdlMineGraph *g, int64_t value)
{
	return find_value(g->values, g->nent, value);
}

int64_t
gdl_mine_graph_value(const GdlMineGraph *g, int32_t entity)
{
	return g->values[entity];
}

int32_t
gdl_mine_graph_nentities(const GdlMineGraph *g)
{
	return g->nent;
}

/*
 * The first i of [lo, hi) with v[i] >= x, or hi, where v ascends over
 * [lo, hi): the binary search of the graph's sorted link arrays.
 */
int64_t
mine_lower_bound(const int32_t *v, int64_t lo, int64_t hi, int64_t x)
{
	LOWER_BOUND(v, lo, hi, x);
	return lo;
}

/* The links of entity e with signature sig: [*beg, *end); false when none. */
bool
mine_graph_links(const GdlMineGraph *g, int32_t e, uint32_t sig, int64_t *beg, int64_t *end)
{
	/* signatures are not negative: the signed search orders them as unsigned */
	int64_t		lo = mine_lower_bound(g->ssig, g->soff[e], g->soff[e + 1], sig);

	if (lo < g->soff[e + 1] && (uint32_t) g->ssig[lo] == sig)
	{
		*beg = g->sbeg[lo];
		*end = g->send[lo];
		return true;
	}
	return false;
}

/* Does rel(s, o) hold?  Two binary searches. */
bool
gdl_mine_graph_has(const GdlMineGraph *g, int rel, int32_t s, int32_t o)
{
	int64_t		lo,
				end;

	if (rel < 0 || rel >= g->nrels || s < 0 || s >= g->nent || o < 0 || o >= g->nent)
		return false;
	if (!mine_graph_links(g, s, 2 * (uint32_t) rel, &lo, &end))
		return false;
	lo = mine_lower_bound(g->anb, lo, end, o);
	return lo < end && g->anb[lo] == o;
}
