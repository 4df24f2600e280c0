/*
 * mine_enum.c — the CPU miner's counting: every body grounding enumerated in
 * bulk, per entity x, in two passes over the graph.
 *
 * Per x, each raw body B (mine_int.h) is met as a group: the distinct y with
 * B(x, y), obtained by walking x's links (levels of signature-grouped,
 * deduplicated frontiers: Z, then W, then Y) and the parallel and cycle
 * pairs of mine_graph.c.  No rule is joined on its own.
 *
 *   pass 1 (support): for each group, every y that some head relation r
 *     links from x (r(x, y)) adds 1 to support(r, B), in a per-thread hash
 *     map merged after each round; (r, B) over min_support and
 *     min_head_coverage survive as candidates.
 *   pass 2 (denominators): the walk again, pruned to the candidates'
 *     bodies (and their prefixes); each group adds |Y| to body_size(B) and,
 *     for each candidate head r with x in r's subjects, to
 *     pca_body_size(r, B).
 *
 * Work is split by x over gdl_parallel threads in rounds (the host's
 * interrupt check runs between rounds); counts are sums, so results do not
 * depend on the thread count.  Workers use malloc for their own scratch
 * (never the host), release it before the round ends and report a failed
 * allocation through a flag the main thread raises.
 */
#include "mine_int.h"

#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- hash maps */

/* (head, body key) -> count; cnt == 0 marks an empty slot. */
typedef struct SupEnt
{
	uint64_t	key;
	int32_t		head;
	int64_t		cnt;
} SupEnt;

typedef struct SupMap
{
	SupEnt	   *e;
	int64_t		cap;			/* power of two, or 0 */
	int64_t		n;
	bool		host;			/* memory from gdl_alloc (else malloc) */
} SupMap;

/* Hash of a (head, key) pair. */
static inline uint64_t
sup_hash(uint64_t key, int32_t head)
{
	return mine_mix(key * 0x9e3779b97f4a7c15ULL + (uint64_t) head);
}

/* Double the map's capacity (at least 1024); false when out of memory. */
static bool
supmap_grow(SupMap *m)
{
	int64_t		ncap = m->cap ? m->cap * 2 : 1024;
	SupEnt	   *ne = m->host ? gdl_alloc(sizeof(SupEnt) * ncap) : calloc(ncap, sizeof(SupEnt));

	if (ne == NULL)
		return false;
	for (int64_t i = 0; i < m->cap; i++)
	{
		/* a large map's rehash is long: stop in it on an interrupt (as if out of memory) */
		if ((i & ((1 << 16) - 1)) == 0 && i > 0 && gdl_interrupt_pending())
		{
			if (m->host)
				gdl_free(ne);
			else
				free(ne);
			return false;
		}
		if (m->e[i].cnt)
		{
			uint64_t	h = sup_hash(m->e[i].key, m->e[i].head) & (ncap - 1);

			while (ne[h].cnt)
				h = (h + 1) & (ncap - 1);
			ne[h] = m->e[i];
		}
	}
	if (m->e)
	{
		if (m->host)
			gdl_free(m->e);
		else
			free(m->e);
	}
	m->e = ne;
	m->cap = ncap;
	return true;
}

/* Add d to (head, key); false when out of memory. */
static inline bool
supmap_add(SupMap *m, uint64_t key, int32_t head, int64_t d)
{
	uint64_t	h;

	if ((m->n + 1) * 2 > m->cap && !supmap_grow(m))
		return false;
	h = sup_hash(key, head) & (m->cap - 1);
	while (m->e[h].cnt)
	{
		if (m->e[h].key == key && m->e[h].head == head)
		{
			m->e[h].cnt += d;
			return true;
		}
		h = (h + 1) & (m->cap - 1);
	}
	m->e[h].key = key;
	m->e[h].head = head;
	m->e[h].cnt = d;
	m->n++;
	return true;
}

/* Read-only key -> index table (body keys of pass 2, prefixes). */
typedef struct KeyIdx
{
	uint64_t   *key;
	int64_t    *idx;			/* -1: empty */
	int64_t		cap;
} KeyIdx;

/* Build a table of n keys (index i for keys[i]; duplicates keep the first). */
static void
keyidx_build(KeyIdx *t, const uint64_t *keys, int64_t n)
{
	t->cap = 16;
	while (t->cap < 2 * n + 16)
		t->cap *= 2;
	t->key = gdl_alloc(sizeof(uint64_t) * t->cap);
	t->idx = gdl_alloc(sizeof(int64_t) * t->cap);
	for (int64_t i = 0; i < t->cap; i++)
		t->idx[i] = -1;
	for (int64_t i = 0; i < n; i++)
	{
		uint64_t	h = mine_mix(keys[i]) & (t->cap - 1);

		while (t->idx[h] >= 0 && t->key[h] != keys[i])
			h = (h + 1) & (t->cap - 1);
		if (t->idx[h] < 0)
		{
			t->key[h] = keys[i];
			t->idx[h] = i;
		}
	}
}

/* The index of key, or -1. */
static inline int64_t
keyidx_get(const KeyIdx *t, uint64_t key)
{
	uint64_t	h = mine_mix(key) & (t->cap - 1);

	while (t->idx[h] >= 0)
	{
		if (t->key[h] == key)
			return t->idx[h];
		h = (h + 1) & (t->cap - 1);
	}
	return -1;
}

static void
keyidx_free(KeyIdx *t)
{
	gdl_free(t->key);
	gdl_free(t->idx);
}

/* ------------------------------------------------------- worker scratch */

/* The signature groups of one expansion: group i is sig[i] -> ptr[i][0..len[i]). */
typedef struct Groups
{
	int			ng;
	int			cap;
	uint32_t   *sig;
	const int32_t **ptr;
	int64_t    *len;
	int64_t    *off;			/* into ys while filling */
	int32_t    *ys;
	int64_t		ycap;
} Groups;

/* A parallel-pair tuple gathered for MINE_SH_P2P. */
typedef struct PairY
{
	uint64_t	ab;
	int32_t		y;
} PairY;

/* Everything a run shares, read-only in the workers but for the per-task parts. */
typedef struct MineRun
{
	const GdlMineGraph *g;
	int			pass;			/* 1 or 2 */
	int			maxb;
	int			target;
	bool		oi;				/* object identity (x-identity): no other
								 * variable binds X's entity */
	int			nthreads;
	int32_t		round_from;
	int32_t		round_to;
	int32_t		cursor;			/* next x (atomic) */
	int			failed;			/* a worker ran out of memory (atomic) */
	double		deadline;		/* gdl_now_ms() past which the run gives up (0: none) */
	int			timed_out;		/* the deadline passed (atomic) */

	/* pass 1 */
	SupMap		tmaps[GDL_MAX_THREADS];

	/* pass 2 */
	KeyIdx		bodies;			/* body key -> body index */
	int64_t    *bcoff;			/* body b's candidates: [bcoff[b], bcoff[b+1]) */
	int32_t    *chead;			/* per candidate (sorted by body): its head */
	int64_t    *tbody[GDL_MAX_THREADS];	/* per thread: body_size per body */
	int64_t    *tpca[GDL_MAX_THREADS];	/* per thread: pca_body_size per candidate */
	bool	   *need_p1;		/* per sig: some path body starts with it */
	bool	   *need_p2p;		/* per sig: some P2P body starts with it */
	KeyIdx		need_p3;		/* prefixes (s1, s2) of P3 bodies */
	uint64_t   *p3mask;			/* per prefix: the s3 of its bodies, a bit each */
	int			maskwords;
	KeyIdx		need_pp;		/* pairs (a, b) of PP2 bodies */
	bool		has_shape[16];
} MineRun;

/* One worker's scratch. */
typedef struct Worker
{
	MineRun    *run;
	int			tid;
	int32_t		x;
	uint32_t   *seen;			/* per entity: dedupe generation */
	uint32_t	gen;
	int32_t    *lstamp;			/* per entity: x + 1 when x links to it */
	int32_t    *lpos;			/* its first by-neighbour link of x */
	int32_t    *dom;			/* per relation: x + 1 when x is a subject */
	uint32_t   *sstamp;			/* per sig: expansion generation */
	int64_t    *scnt;
	uint32_t	sgen;
	Groups		g2;
	Groups		g3;
	PairY	   *pairs;
	int64_t		pcap;
	int32_t    *pys;
	int64_t		pycap;
	uint64_t   *hits;			/* expand_hits's gathering */
	int64_t		hcap;
	int32_t    *oiys;			/* emit's ys without x (object identity) */
	int64_t		oicap;
	int32_t    *oiz;			/* a Z frontier without x */
	int64_t		oizcap;
	bool		oom;
	bool		stop;			/* an interrupt is pending: leave the round */
	uint32_t	polls;			/* emits since the last interrupt poll */
} Worker;

/* Grow a malloc'd array to hold n elements of size sz; false on failure. */
static bool
grow(void **p, int64_t *cap, int64_t n, size_t sz)
{
	int64_t		c = *cap ? *cap : 64;
	void	   *np;

	if (n <= *cap)
		return true;
	while (c < n)
		c *= 2;
	np = realloc(*p, c * sz);
	if (np == NULL)
		return false;
	*p = np;
	*cap = c;
	return true;
}

/* Make room for n groups; false on failure. */
static bool
groups_reserve(Groups *gr, int n)
{
	int64_t		c = gr->cap;
	int64_t		c1 = c,
				c2 = c,
				c3 = c,
				c4 = c;

	if (n <= gr->cap)
		return true;
	if (!grow((void **) &gr->sig, &c1, n, sizeof(uint32_t)) ||
		!grow((void **) &gr->ptr, &c2, n, sizeof(int32_t *)) ||
		!grow((void **) &gr->len, &c3, n, sizeof(int64_t)) ||
		!grow((void **) &gr->off, &c4, n, sizeof(int64_t)))
		return false;
	gr->cap = (int) c1;
	return true;
}

static void
groups_free(Groups *gr)
{
	free(gr->sig);
	free((void *) gr->ptr);
	free(gr->len);
	free(gr->off);
	free(gr->ys);
}

/* A fresh dedupe generation (wrapping clears the marks). */
static inline uint32_t
next_gen(Worker *w)
{
	if (++w->gen == 0)
	{
		memset(w->seen, 0, sizeof(uint32_t) * w->run->g->nent);
		w->gen = 1;
	}
	return w->gen;
}

/* qsort order of 32-bit unsigned values. */
static int
cmp_u32(const void *a, const void *b)
{
	return MINE_CMP(*(const uint32_t *) a, *(const uint32_t *) b);
}

/* qsort order of PairY by (ab, y). */
static int
cmp_pairy(const void *a, const void *b)
{
	const PairY *x = a,
			   *y = b;

	return mine_cmp_pair(x->ab, x->y, y->ab, y->y);
}

/*
 * Expand a frontier: for every signature sig leaving some entity of F, the
 * distinct entities reached from F through sig, as groups sorted by sig.
 * With one entity the groups point into the graph (no copy).  With a mask
 * (a bit per signature), only the signatures it holds.
 */
static bool
expand(Worker *w, const int32_t *F, int64_t nF, Groups *out, const uint64_t *mask)
{
	const GdlMineGraph *g = w->run->g;
	int64_t		total = 0;
	uint32_t	sg;

	out->ng = 0;
	if (nF == 1)
	{
		int32_t		e = F[0];
		int			n = (int) (g->soff[e + 1] - g->soff[e]);

		if (!groups_reserve(out, n))
			return false;
		for (int i = 0; i < n; i++)
		{
			int64_t		k = g->soff[e] + i;
			uint32_t	s = (uint32_t) g->ssig[k];

			if (mask && !((mask[s >> 6] >> (s & 63)) & 1))
				continue;
			out->sig[out->ng] = s;
			out->ptr[out->ng] = g->anb + g->sbeg[k];
			out->len[out->ng] = g->send[k] - g->sbeg[k];
			out->ng++;
		}
		return true;
	}
	if (++w->sgen == 0)
	{
		memset(w->sstamp, 0, sizeof(uint32_t) * 2 * g->nrels);
		w->sgen = 1;
	}
	sg = w->sgen;
	for (int64_t i = 0; i < nF; i++)
		for (int64_t k = g->soff[F[i]]; k < g->soff[F[i] + 1]; k++)
		{
			uint32_t	s = (uint32_t) g->ssig[k];

			if (mask && !((mask[s >> 6] >> (s & 63)) & 1))
				continue;
			if (w->sstamp[s] != sg)
			{
				w->sstamp[s] = sg;
				w->scnt[s] = 0;
				if (!groups_reserve(out, out->ng + 1))
					return false;
				out->sig[out->ng++] = s;
			}
			w->scnt[s] += g->send[k] - g->sbeg[k];
			total += g->send[k] - g->sbeg[k];
		}
	if (!grow((void **) &out->ys, &out->ycap, total, sizeof(int32_t)))
		return false;
	if (out->ng > 32)
		qsort(out->sig, out->ng, sizeof(uint32_t), cmp_u32);
	else
		for (int i = 1; i < out->ng; i++)
			for (int j = i; j > 0 && out->sig[j] < out->sig[j - 1]; j--)
			{
				uint32_t	t = out->sig[j];

				out->sig[j] = out->sig[j - 1];
				out->sig[j - 1] = t;
			}
	total = 0;
	for (int i = 0; i < out->ng; i++)
	{
		out->off[i] = total;
		/* scnt becomes the fill position of the sig */
		int64_t		c = w->scnt[out->sig[i]];

		w->scnt[out->sig[i]] = total;
		total += c;
	}
	for (int64_t i = 0; i < nF; i++)
		for (int64_t k = g->soff[F[i]]; k < g->soff[F[i] + 1]; k++)
		{
			uint32_t	s = (uint32_t) g->ssig[k];
			int64_t		n = g->send[k] - g->sbeg[k];

			if (mask && !((mask[s >> 6] >> (s & 63)) & 1))
				continue;
			memcpy(out->ys + w->scnt[s], g->anb + g->sbeg[k], sizeof(int32_t) * n);
			w->scnt[s] += n;
		}
	for (int i = 0; i < out->ng; i++)
	{
		int32_t    *v = out->ys + out->off[i];
		int64_t		n = w->scnt[out->sig[i]] - out->off[i],
					m = 0;
		uint32_t	gen = next_gen(w);

		for (int64_t j = 0; j < n; j++)
			if (w->seen[v[j]] != gen)
			{
				w->seen[v[j]] = gen;
				v[m++] = v[j];
			}
		out->ptr[i] = v;
		out->len[i] = m;
	}
	return true;
}

/*
 * Object identity: drop entity x from every group of an expansion (a Z or
 * W frontier may not bind X's entity).  Groups that point into the graph
 * (a one-entity expansion) are copied into the groups' own buffer first.
 */
static bool
groups_drop(Groups *gr, int32_t x)
{
	int64_t		need = 0,
				fill = 0;

	for (int i = 0; i < gr->ng; i++)
		for (int64_t k = 0; k < gr->len[i]; k++)
			if (gr->ptr[i][k] == x)
			{
				if (gr->ys != NULL && gr->ptr[i] >= gr->ys && gr->ptr[i] < gr->ys + gr->ycap)
				{
					/* our own buffer: remove in place */
					int32_t    *v = (int32_t *) gr->ptr[i];

					memmove(v + k, v + k + 1, sizeof(int32_t) * (gr->len[i] - k - 1));
					gr->len[i]--;
				}
				else
					need += gr->len[i];
				break;
			}
	if (need == 0)
		return true;
	if (!grow((void **) &gr->ys, &gr->ycap, need, sizeof(int32_t)))
		return false;
	for (int i = 0; i < gr->ng; i++)
	{
		int64_t		k;

		for (k = 0; k < gr->len[i] && gr->ptr[i][k] != x; k++)
			;
		if (k == gr->len[i])
			continue;
		memcpy(gr->ys + fill, gr->ptr[i], sizeof(int32_t) * k);
		memcpy(gr->ys + fill + k, gr->ptr[i] + k + 1, sizeof(int32_t) * (gr->len[i] - k - 1));
		gr->ptr[i] = gr->ys + fill;
		gr->len[i]--;
		fill += gr->len[i];
	}
	return true;
}

/* Has the parallel-pair group [p, q) a z other than x (object identity)? */
static inline bool
pairs_other_than(const GdlMineGraph *g, int64_t p, int64_t q, int32_t x)
{
	for (; p < q; p++)
		if (g->ppz[p] != x)
			return true;
	return false;
}

/*
 * v[0..n) without x (object identity: a Z or Y may not be X's entity): v
 * itself when x is not there, else a copy in *buf; *n is updated.  NULL
 * when out of memory.
 */
static const int32_t *
without_x(int32_t **buf, int64_t *cap, const int32_t *v, int64_t *n, int32_t x)
{
	int64_t		k;

	for (k = 0; k < *n && v[k] != x; k++)
		;
	if (k == *n)
		return v;
	if (!grow((void **) buf, cap, *n, sizeof(int32_t)))
		return NULL;
	memcpy(*buf, v, sizeof(int32_t) * k);
	memcpy(*buf + k, v + k + 1, sizeof(int32_t) * (*n - k - 1));
	(*n)--;
	return *buf;
}

/*
 * Pass 1's last level: expand F as expand() does, but keep only the y that
 * x links to (only those can count as support), gathered as sig << 32 | y,
 * sorted and distinct, into groups of out.  Much less than the whole
 * frontier where the graph is sparse.
 */
static bool
expand_hits(Worker *w, const int32_t *F, int64_t nF, Groups *out)
{
	const GdlMineGraph *g = w->run->g;
	int32_t		x1 = w->x + 1;
	int64_t		n = 0;

	out->ng = 0;
	for (int64_t i = 0; i < nF; i++)
		for (int64_t k = g->aoff[F[i]]; k < g->aoff[F[i] + 1]; k++)
			if (w->lstamp[g->anb[k]] == x1)
			{
				if (!grow((void **) &w->hits, &w->hcap, n + 1, sizeof(uint64_t)))
					return false;
				w->hits[n++] = ((uint64_t) (uint32_t) g->asig[k] << 32) | (uint32_t) g->anb[k];
			}
	if (n == 0)
		return true;
	if (nF > 1)
	{
		int64_t		m = 0;

		mine_sort_u64(w->hits, n);
		for (int64_t i = 0; i < n; i++)
			if (m == 0 || w->hits[i] != w->hits[m - 1])
				w->hits[m++] = w->hits[i];
		n = m;
	}
	if (!grow((void **) &out->ys, &out->ycap, n, sizeof(int32_t)))
		return false;
	for (int64_t i = 0; i < n; i++)
	{
		uint32_t	s = (uint32_t) (w->hits[i] >> 32);

		out->ys[i] = (int32_t) (uint32_t) w->hits[i];
		if (out->ng == 0 || out->sig[out->ng - 1] != s)
		{
			if (!groups_reserve(out, out->ng + 1))
				return false;
			out->sig[out->ng] = s;
			out->off[out->ng] = i;
			out->ng++;
		}
	}
	for (int k = 0; k < out->ng; k++)
	{
		out->ptr[k] = out->ys + out->off[k];
		out->len[k] = (k + 1 < out->ng ? out->off[k + 1] : n) - out->off[k];
	}
	return true;
}

/*
 * Count one group: body key with the distinct y's ys[0..n) of x.
 * Pass 1 adds the support of every head r with r(x, y); pass 2 adds to the
 * body size and to the PCA denominators of the body's candidates.
 */
static inline void
emit(Worker *w, uint64_t key, const int32_t *ys, int64_t n)
{
	MineRun    *run = w->run;
	const GdlMineGraph *g = run->g;
	int32_t		x = w->x;

	/* every 256 groups, poll for an interrupt: stop as out of memory does */
	if ((++w->polls & 255) == 0 && gdl_interrupt_pending())
	{
		w->stop = true;
		w->oom = true;
	}
	if (w->oom)
		return;
	if (run->oi)
	{
		/* y == x: under object identity Y is not X's entity */
		if ((ys = without_x(&w->oiys, &w->oicap, ys, &n, x)) == NULL)
		{
			w->oom = true;
			return;
		}
		if (n == 0)
			return;
	}
	if (run->pass == 1)
	{
		int64_t		xa = g->aoff[x],
					xb = g->aoff[x + 1];

		for (int64_t i = 0; i < n; i++)
		{
			int32_t		y = ys[i];

			if (w->lstamp[y] != x + 1)
				continue;
			for (int64_t j = xa + w->lpos[y]; j < xb && g->bnb[j] == y; j++)
			{
				uint32_t	s = (uint32_t) g->bsig[j];

				if (s & 1)
					continue;
				if (run->target >= 0 && (int) (s >> 1) != run->target)
					continue;
				if (mine_key_has_atom(key, s))
					continue;
				if (!supmap_add(&run->tmaps[w->tid], key, (int32_t) (s >> 1), 1))
					w->oom = true;
			}
		}
	}
	else
	{
		int64_t		b = keyidx_get(&run->bodies, key);

		if (b < 0)
			return;
		run->tbody[w->tid][b] += n;
		for (int64_t c = run->bcoff[b]; c < run->bcoff[b + 1]; c++)
			if (w->dom[run->chead[c]] == x + 1)
				run->tpca[w->tid][c] += n;
	}
}

/* Is shape sh counted in this pass? */
static inline bool
want(const MineRun *run, int sh)
{
	return run->pass == 1 || run->has_shape[sh];
}

/* The paths out of x through the first link group (s1, Z). */
static void
enum_paths(Worker *w, uint32_t s1, const int32_t *Z, int64_t nZ)
{
	MineRun    *run = w->run;
	const GdlMineGraph *g = run->g;
	int32_t		x = w->x;
	int64_t		xa = g->aoff[x],
				xb = g->aoff[x + 1];
	Groups	   *G2 = &w->g2,
			   *G3 = &w->g3;

	if (!expand(w, Z, nZ, G2, NULL) || (run->oi && !groups_drop(G2, x)))
	{
		w->oom = true;
		return;
	}
	for (int i = 0; i < G2->ng && !w->oom; i++)
	{
		uint32_t	s2 = G2->sig[i];
		const int32_t *W = G2->ptr[i];
		int64_t		nW = G2->len[i];

		if (want(run, MINE_SH_P2))
			emit(w, mine_key(MINE_SH_P2, s1, s2, 0), W, nW);
		if (run->maxb < 3)
			continue;
		if (want(run, MINE_SH_P2L))
			for (int64_t k = 0; k < nW; k++)
			{
				int32_t		y = W[k];

				if (w->lstamp[y] != x + 1)
					continue;
				for (int64_t j = xa + w->lpos[y]; j < xb && g->bnb[j] == y; j++)
					emit(w, mine_key(MINE_SH_P2L, s1, s2, (uint32_t) g->bsig[j]), &W[k], 1);
			}
		int64_t		pi = -1;

		if (run->pass == 1 ||
			(run->has_shape[MINE_SH_P3] && (pi = keyidx_get(&run->need_p3, mine_key(0, s1, s2, 0))) >= 0))
		{
			if (!(run->pass == 1 ? expand_hits(w, W, nW, G3)
				  : expand(w, W, nW, G3, run->p3mask + pi * run->maskwords)))
			{
				w->oom = true;
				return;
			}
			for (int k = 0; k < G3->ng; k++)
				emit(w, mine_key(MINE_SH_P3, s1, s2, G3->sig[k]), G3->ptr[k], G3->len[k]);
		}
	}
	if (run->maxb >= 3 && !w->oom && (run->pass == 1 || run->need_p2p[s1]))
	{
		/* parallel second links: the (a, b, y) of every z, distinct */
		int64_t		n = 0;

		for (int64_t k = 0; k < nZ; k++)
			n += g->ppoff[Z[k] + 1] - g->ppoff[Z[k]];
		if (n == 0)
			return;
		if (!grow((void **) &w->pairs, &w->pcap, n, sizeof(PairY)) ||
			!grow((void **) &w->pys, &w->pycap, n, sizeof(int32_t)))
		{
			w->oom = true;
			return;
		}
		n = 0;
		for (int64_t k = 0; k < nZ; k++)
			for (int64_t p = g->ppoff[Z[k]]; p < g->ppoff[Z[k] + 1]; p++)
			{
				w->pairs[n].ab = ((uint64_t) g->ppa[p] << 32) | (uint32_t) g->ppb[p];
				w->pairs[n].y = g->ppz[p];
				n++;
			}
		if (nZ > 1)
			qsort(w->pairs, n, sizeof(PairY), cmp_pairy);
		for (int64_t p = 0; p < n;)
		{
			int64_t		q = p,
						m = 0;

			while (q < n && w->pairs[q].ab == w->pairs[p].ab)
			{
				if (q == p || w->pairs[q].y != w->pairs[q - 1].y)
					w->pys[m++] = w->pairs[q].y;
				q++;
			}
			emit(w, mine_key(MINE_SH_P2P, s1, (uint32_t) (w->pairs[p].ab >> 32),
							 (uint32_t) w->pairs[p].ab), w->pys, m);
			p = q;
		}
	}
}

/* Every body group of entity x. */
static void
enum_x(Worker *w, int32_t x)
{
	MineRun    *run = w->run;
	const GdlMineGraph *g = run->g;
	int64_t		xa = g->aoff[x],
				xb = g->aoff[x + 1];
	int			maxb = run->maxb;

	if (xa == xb)
		return;
	w->x = x;
	if (run->pass == 1)
	{
		bool		head = false;

		for (int64_t k = g->soff[x]; k < g->soff[x + 1] && !head; k++)
			head = (g->ssig[k] & 1) == 0 &&
				(run->target < 0 || g->ssig[k] == 2 * run->target);
		if (!head)
			return;
	}
	for (int64_t j = xa; j < xb; j++)
		if (w->lstamp[g->bnb[j]] != x + 1)
		{
			w->lstamp[g->bnb[j]] = x + 1;
			w->lpos[g->bnb[j]] = (int32_t) (j - xa);
		}
	for (int64_t k = g->soff[x]; k < g->soff[x + 1]; k++)
		if ((g->ssig[k] & 1) == 0)
			w->dom[g->ssig[k] >> 1] = x + 1;

	/* one link on (X, Y) */
	for (int64_t k = g->soff[x]; k < g->soff[x + 1]; k++)
		emit(w, mine_key(MINE_SH_L, (uint32_t) g->ssig[k], 0, 0), g->anb + g->sbeg[k],
			 g->send[k] - g->sbeg[k]);
	if (maxb < 2)
		return;

	/* two or three parallel links on (X, Y) */
	if (want(run, MINE_SH_LL) || (maxb >= 3 && want(run, MINE_SH_LLL)))
		for (int64_t j = xa; j < xb;)
		{
			int64_t		e = j;

			while (e < xb && g->bnb[e] == g->bnb[j])
				e++;
			for (int64_t a = j; a < e; a++)
				for (int64_t b = a + 1; b < e; b++)
				{
					emit(w, mine_key(MINE_SH_LL, g->bsig[a], g->bsig[b], 0), &g->bnb[j], 1);
					if (maxb >= 3)
						for (int64_t c = b + 1; c < e; c++)
							emit(w, mine_key(MINE_SH_LLL, g->bsig[a], g->bsig[b], g->bsig[c]),
								 &g->bnb[j], 1);
				}
			j = e;
		}

	if (maxb >= 3)
	{
		/* a link on (X, Y) and a cycle Y-Z-Y */
		if (want(run, MINE_SH_CYL))
			for (int64_t j = xa; j < xb && !w->oom; j++)
			{
				int32_t		y = g->anb[j];

				if (!run->oi)
					for (int64_t p = g->cpoff[y]; p < g->cpoff[y + 1]; p++)
						emit(w, mine_key(MINE_SH_CYL, g->asig[j], g->cpa[p], g->cpb[p]), &g->anb[j], 1);
				else
					for (int64_t p = g->ppoff[y]; p < g->ppoff[y + 1];)
					{
						/* object identity: the cycle's Z may not be x */
						int64_t		q = p;

						while (q < g->ppoff[y + 1] && g->ppa[q] == g->ppa[p] && g->ppb[q] == g->ppb[p])
							q++;
						if (pairs_other_than(g, p, q, x))
							emit(w, mine_key(MINE_SH_CYL, g->asig[j], g->ppa[p], g->ppb[p]), &g->anb[j], 1);
						p = q;
					}
			}
		/* a cycle X-Z-X with a link on (X, Y), or with a path Z-Y */
		for (int64_t p = g->ppoff[x]; p < g->ppoff[x + 1] && !w->oom;)
		{
			int64_t		q = p;
			uint32_t	a = g->ppa[p],
						b = g->ppb[p];

			while (q < g->ppoff[x + 1] && g->ppa[q] == (int32_t) a && g->ppb[q] == (int32_t) b)
				q++;
			if (run->oi && !pairs_other_than(g, p, q, x))
			{
				/* object identity: the cycle's only Z is x itself (self-loops) */
				p = q;
				continue;
			}
			if (want(run, MINE_SH_CXL))
				for (int64_t k = g->soff[x]; k < g->soff[x + 1]; k++)
					emit(w, mine_key(MINE_SH_CXL, a, b, (uint32_t) g->ssig[k]),
						 g->anb + g->sbeg[k], g->send[k] - g->sbeg[k]);
			if (run->pass == 1 ||
				(run->has_shape[MINE_SH_PP2] && keyidx_get(&run->need_pp, mine_key(0, a, b, 0)) >= 0))
			{
				int64_t		nz = q - p;
				const int32_t *zs = run->oi ? without_x(&w->oiz, &w->oizcap, g->ppz + p, &nz, x) : g->ppz + p;

				if (zs == NULL ||
					!(run->pass == 1 ? expand_hits(w, zs, nz, &w->g3)
					  : expand(w, zs, nz, &w->g3, NULL)))
				{
					w->oom = true;
					return;
				}
				for (int k = 0; k < w->g3.ng; k++)
					emit(w, mine_key(MINE_SH_PP2, a, b, w->g3.sig[k]), w->g3.ptr[k], w->g3.len[k]);
			}
			p = q;
		}
	}

	/* paths X-Z-Y and X-Z-W-Y and their three-atom variants */
	for (int64_t k = g->soff[x]; k < g->soff[x + 1] && !w->oom; k++)
		if (run->pass == 1 || run->need_p1[g->ssig[k]])
		{
			int64_t		nz = g->send[k] - g->sbeg[k];
			const int32_t *zs = g->anb + g->sbeg[k];

			if (run->oi && (zs = without_x(&w->oiz, &w->oizcap, zs, &nz, x)) == NULL)
				w->oom = true;
			else if (nz > 0)
				enum_paths(w, (uint32_t) g->ssig[k], zs, nz);
		}
}

/* Chunk of entities a worker takes at a time. */
#define MINE_CHUNK 16

/* A worker: allocate scratch, take chunks of x until the round is done. */
static void
mine_task(void *arg, int tid, int ntasks)
{
	MineRun    *run = arg;
	const GdlMineGraph *g = run->g;
	Worker		w;

	memset(&w, 0, sizeof(w));
	w.run = run;
	w.tid = tid;
	w.seen = calloc(g->nent + 1, sizeof(uint32_t));
	w.lstamp = calloc(g->nent + 1, sizeof(int32_t));
	w.lpos = calloc(g->nent + 1, sizeof(int32_t));
	w.dom = calloc(g->nrels + 1, sizeof(int32_t));
	w.sstamp = calloc(2 * g->nrels + 1, sizeof(uint32_t));
	w.scnt = calloc(2 * g->nrels + 1, sizeof(int64_t));
	if (!w.seen || !w.lstamp || !w.lpos || !w.dom || !w.sstamp || !w.scnt)
		w.oom = true;
	while (!w.oom && !__atomic_load_n(&run->failed, __ATOMIC_RELAXED))
	{
		int32_t		from = __atomic_fetch_add(&run->cursor, MINE_CHUNK, __ATOMIC_RELAXED);
		int32_t		to;

		if (from >= run->round_to)
			break;
		if (run->deadline > 0 && gdl_now_ms() > run->deadline)
		{
			__atomic_store_n(&run->timed_out, 1, __ATOMIC_RELAXED);
			break;
		}
		to = from + MINE_CHUNK < run->round_to ? from + MINE_CHUNK : run->round_to;
		for (int32_t x = from; x < to && !w.oom && !w.stop; x++)
			enum_x(&w, x);
		if (w.stop)
			break;
	}
	if (w.oom)					/* out of memory, or stopped (gdl_check_stop raises) */
		__atomic_store_n(&run->failed, 1, __ATOMIC_RELAXED);
	free(w.seen);
	free(w.lstamp);
	free(w.lpos);
	free(w.dom);
	free(w.sstamp);
	free(w.scnt);
	groups_free(&w.g2);
	groups_free(&w.g3);
	free(w.pairs);
	free(w.pys);
	free(w.hits);
	free(w.oiys);
	free(w.oiz);
}

/* Free the workers' pass-1 maps (malloc'd). */
static void
free_tmaps(MineRun *run)
{
	for (int t = 0; t < run->nthreads; t++)
	{
		free(run->tmaps[t].e);
		memset(&run->tmaps[t], 0, sizeof(SupMap));
	}
}

/*
 * Run the current pass over every entity in rounds: a parallel loop per
 * round, then (pass 1) the workers' maps merged into 'global' and freed,
 * then the interrupt check.  False when the run's deadline passed (the
 * workers leave at their next chunk; what they counted is dropped).
 */
static bool
run_rounds(MineRun *run, SupMap *global)
{
	int32_t		nent = run->g->nent;
	int32_t		per = nent / 8 + 1;

	if (per < 4096)
		per = 4096;
	for (int32_t from = 0; from < nent; from += per)
	{
		run->round_from = from;
		run->round_to = (int64_t) from + per < nent ? from + per : nent;
		run->cursor = from;
		gdl_parallel(run->nthreads, mine_task, run);
		if (gdl_interrupt_pending())
		{
			free_tmaps(run);
			gdl_check_stop();
		}
		if (run->timed_out)
		{
			free_tmaps(run);
			return false;
		}
		if (run->failed)
		{
			free_tmaps(run);
			gdl_error(GDL_ERR_OUT_OF_MEMORY, NULL, NULL, "out of memory while mining rules");
		}
		if (global)
		{
			/*
			 * Size the global map for every worker's entries first: a map
			 * filled in slot order from a larger one with the same hash
			 * clusters and turns quadratic while it is smaller.
			 */
			int64_t		want = global->n;

			for (int t = 0; t < run->nthreads; t++)
				want += run->tmaps[t].n;
			while ((want + 1) * 2 > global->cap)
				if (!supmap_grow(global))
				{
					free_tmaps(run);
					gdl_check_stop();
					gdl_error(GDL_ERR_OUT_OF_MEMORY, NULL, NULL, "out of memory while mining rules");
				}
			for (int t = 0; t < run->nthreads; t++)
			{
				SupMap	   *m = &run->tmaps[t];

				for (int64_t i = 0; i < m->cap; i++)
				{
					if ((i & ((1 << 16) - 1)) == 0 && gdl_interrupt_pending())
					{
						free_tmaps(run);
						gdl_check_stop();
					}
					if (m->e[i].cnt && !supmap_add(global, m->e[i].key, m->e[i].head, m->e[i].cnt))
					{
						free_tmaps(run);
						gdl_check_stop();
						gdl_error(GDL_ERR_OUT_OF_MEMORY, NULL, NULL, "out of memory while mining rules");
					}
				}
				free(m->e);
				memset(m, 0, sizeof(SupMap));
			}
		}
		gdl_check_interrupts();
	}
	return true;
}

/* Order of candidates: body key, then head (the device's results too). */
int
mine_cand_cmp(const void *a, const void *b)
{
	const MineCand *x = a,
			   *y = b;

	return mine_cmp_pair(x->key, x->head, y->key, y->head);
}

/* Set up the shared part of a run. */
static void
run_init(MineRun *run, const GdlMineGraph *g, const GdlMineOptions *o, int threads, int pass,
		 double deadline)
{
	memset(run, 0, sizeof(*run));
	run->deadline = deadline;
	run->g = g;
	run->pass = pass;
	run->oi = o->object_identity;
	run->maxb = o->max_body < 1 ? 1 : o->max_body > GDL_MINE_MAX_BODY ? GDL_MINE_MAX_BODY : o->max_body;
	run->target = o->target;
	run->nthreads = threads < 1 ? 1 : threads > GDL_MAX_THREADS ? GDL_MAX_THREADS : threads;
}

/*
 * Pass 1: the (head, body) pairs over min_support and min_head_coverage,
 * sorted by (body key, head), with their support; NULL when deadline (a
 * gdl_now_ms() time, 0: none) passed first.
 */
MineCand *
mine_count_support(const GdlMineGraph *g, const GdlMineOptions *o, int threads,
				   double deadline, int64_t *ncand)
{
	MineRun    *run = gdl_alloc(sizeof(MineRun));
	SupMap		global;
	MineCand   *c;
	int64_t		n = 0;
	int64_t		minsup = o->min_support < 1 ? 1 : o->min_support;

	run_init(run, g, o, threads, 1, deadline);
	memset(&global, 0, sizeof(global));
	global.host = true;
	*ncand = 0;
	if (!run_rounds(run, &global))
	{
		if (global.e)
			gdl_free(global.e);
		gdl_free(run);
		return NULL;
	}
	c = gdl_alloc(sizeof(MineCand) * (global.n + 1));
	for (int64_t i = 0; i < global.cap; i++)
	{
		SupEnt	   *e = &global.e[i];

		if (e->cnt == 0 || e->cnt < minsup ||
			(double) e->cnt / (double) g->nfacts[e->head] < o->min_head_coverage)
			continue;
		c[n].head = e->head;
		c[n].key = e->key;
		c[n].support = e->cnt;
		n++;
	}
	if (global.e)
		gdl_free(global.e);
	gdl_free(run);
	qsort(c, n, sizeof(MineCand), mine_cand_cmp);
	*ncand = n;
	return c;
}

/*
 * Pass 2: body_size and pca_body_size of the candidates c[0..n) (sorted by
 * body key, then head, as pass 1 leaves them); false (the counts unset)
 * when deadline passed first.
 */
bool
mine_count_bodies(const GdlMineGraph *g, const GdlMineOptions *o, int threads,
				  double deadline, MineCand *c, int64_t n)
{
	bool		done = true;
	MineRun    *run = gdl_alloc(sizeof(MineRun));
	uint64_t   *keys = gdl_alloc(sizeof(uint64_t) * (n + 1));
	uint64_t   *p3 = gdl_alloc(sizeof(uint64_t) * (n + 1));
	uint64_t   *pp = gdl_alloc(sizeof(uint64_t) * (n + 1));
	int64_t		nb = 0,
				np3 = 0,
				npp = 0;

	run_init(run, g, o, threads, 2, deadline);
	run->bcoff = gdl_alloc(sizeof(int64_t) * (n + 2));
	run->chead = gdl_alloc(sizeof(int32_t) * (n + 1));
	run->need_p1 = gdl_alloc(sizeof(bool) * (2 * g->nrels + 1));
	run->need_p2p = gdl_alloc(sizeof(bool) * (2 * g->nrels + 1));
	for (int64_t i = 0; i < n; i++)
	{
		uint64_t	k = c[i].key;
		int			sh = mine_key_shape(k);

		run->chead[i] = c[i].head;
		if (i > 0 && k == c[i - 1].key)
			continue;
		run->bcoff[nb] = i;
		keys[nb++] = k;
		run->has_shape[sh] = true;
		if (sh == MINE_SH_P2 || sh == MINE_SH_P2L || sh == MINE_SH_P2P || sh == MINE_SH_P3)
			run->need_p1[mine_key_sig(k, 0)] = true;
		if (sh == MINE_SH_P2P)
			run->need_p2p[mine_key_sig(k, 0)] = true;
		if (sh == MINE_SH_P3)
			p3[np3++] = mine_key(0, mine_key_sig(k, 0), mine_key_sig(k, 1), 0);
		if (sh == MINE_SH_PP2)
			pp[npp++] = mine_key(0, mine_key_sig(k, 0), mine_key_sig(k, 1), 0);
	}
	run->bcoff[nb] = n;
	keyidx_build(&run->bodies, keys, nb);
	keyidx_build(&run->need_p3, p3, np3);
	run->maskwords = (2 * g->nrels + 64) / 64;
	run->p3mask = gdl_alloc(sizeof(uint64_t) * run->maskwords * (np3 + 1));
	for (int64_t b = 0; b < nb; b++)
		if (mine_key_shape(keys[b]) == MINE_SH_P3)
		{
			int64_t		pi = keyidx_get(&run->need_p3, mine_key(0, mine_key_sig(keys[b], 0),
																  mine_key_sig(keys[b], 1), 0));
			uint32_t	s3 = mine_key_sig(keys[b], 2);

			run->p3mask[pi * run->maskwords + (s3 >> 6)] |= 1ull << (s3 & 63);
		}
	keyidx_build(&run->need_pp, pp, npp);
	for (int t = 0; t < run->nthreads; t++)
	{
		run->tbody[t] = gdl_alloc(sizeof(int64_t) * (nb + 1));
		run->tpca[t] = gdl_alloc(sizeof(int64_t) * (n + 1));
	}
	if (n > 0)
		done = run_rounds(run, NULL);
	for (int64_t b = 0; b < nb; b++)
		for (int64_t i = run->bcoff[b]; i < run->bcoff[b + 1]; i++)
		{
			c[i].body_size = 0;
			c[i].pca_body_size = 0;
			for (int t = 0; t < run->nthreads; t++)
			{
				c[i].body_size += run->tbody[t][b];
				c[i].pca_body_size += run->tpca[t][i];
			}
		}
	for (int t = 0; t < run->nthreads; t++)
	{
		gdl_free(run->tbody[t]);
		gdl_free(run->tpca[t]);
	}
	keyidx_free(&run->bodies);
	keyidx_free(&run->need_p3);
	gdl_free(run->p3mask);
	keyidx_free(&run->need_pp);
	gdl_free(run->bcoff);
	gdl_free(run->chead);
	gdl_free(run->need_p1);
	gdl_free(run->need_p2p);
	gdl_free(keys);
	gdl_free(p3);
	gdl_free(pp);
	gdl_free(run);
	return done;
}
