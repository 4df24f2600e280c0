/*
 * mine_const.c — the rules with constants of gdl_mine (options.constants,
 * AMIE 3's -const): every rule of the forms listed in gdl_mine.h over
 * min_support and min_head_coverage, with exact support, body_size and
 * pca_body_size.
 *
 * Constants are never tried from the cross product of entities: each form
 * is refined from a rule without its constants whose support bounds theirs
 * (AMIE's refinement order), and the constants are the bindings that the
 * supported head facts actually meet:
 *
 *   head r(X, c) / r(c, X)  the head link h from x to c (h = 2r, or 2r + 1
 *                           for r(c, X)): the head facts H of (h, c) are
 *                           the links of c with signature h ^ 1; only
 *                           (h, c) with |H| over the thresholds go on.
 *     l(X, d)               each link (l, d) of each x in H is a binding;
 *                           sorted and counted (links are distinct, so each
 *                           x counts once).
 *     l(X, Z), m(X, Z)      the cycle pairs (l < m) of each x in H.
 *     l(X, Z), m(Z, d)      first l: #x in H with a link l must pass; then
 *                           the distinct (m, d) reached from each such x
 *                           through its l-neighbours.
 *     l(X, Z), Z free       (AnyBURL's AC2 of one atom) #x in H with a link
 *                           l; its denominators are per signature, counted
 *                           once per head link h (sig_ents, head_pca).
 *   head r(X, Y)            l(X, Y) must pass as a rule of its own (its
 *     l(X, Y), m(X|Y, d)    support bounds the constant rule's); then the
 *                           links (m, d) of x (of y) of each fact r(x, y)
 *                           with l(x, y).
 *
 * Denominators are then counted per candidate from its constant d (the
 * x with the body true are reached backwards from d).  Everything is
 * integer counting over sorted keys: single-threaded, deterministic, the
 * same whether the variable rules were counted on the CPU or the GPU.
 */
#include "mine_int.h"

#include <stdlib.h>
#include <string.h>

/* A growable array of 64-bit keys. */
typedef struct KeyVec
{
	uint64_t   *v;
	int64_t		n;
	int64_t		cap;
} KeyVec;

/*
 * Distinct head facts per key, without sorting: each key's count of
 * distinct x (the x come one at a time, so "last x seen" suffices), in an
 * open-addressing index whose slots are valid for the current generation
 * only (a reset is O(1)); entries in insertion order for the walk over
 * them.  The sorts this replaced were three quarters of mining FB15k-237's
 * constant rules.
 */
typedef struct KcEntry
{
	uint64_t	key;
	int64_t		count;
	int32_t		last;			/* the last x counted */
} KcEntry;

typedef struct KeyCount
{
	KcEntry    *e;
	int64_t		n;
	int64_t		ecap;
	int64_t    *slot;			/* scap: entry index, valid where sgen == gen */
	uint32_t   *sgen;
	int64_t		scap;
	uint32_t	gen;
} KeyCount;

/* The state of one run. */
typedef struct ConstRun
{
	const GdlMineGraph *g;
	const GdlMineOptions *o;
	int64_t		minsup;
	double		min_hc;			/* constants_min_head_coverage, or min_head_coverage */
	int			body_from;		/* the body sizes mined: [body_from, body_to] */
	int			body_to;
	uint32_t   *stamp;			/* per entity: the generation that saw it */
	uint32_t	gen;
	GdlMineRule *out;
	int64_t		n;
	int64_t		cap;
	/* cycle pairs of every entity as (a << 32 | b, x), sorted; built lazily */
	struct CyclePair *cp;
	int64_t		ncp;
	bool		cp_built;
	/* per signature l: #entities with a link l; and, for the head link h
	 * being mined, #entities with links h and l (the open rules' denominators) */
	int64_t    *sig_ents;
	int64_t    *head_pca;
	/* count_path's memo (PathMemo below), cleared per head link */
	struct PathMemo *memo;
	int64_t		memo_cap;
	int64_t		memo_n;
	KeyCount	kc;				/* mine_head_constant's counts */
} ConstRun;

/* One cycle pair (a, b) of entity x. */
typedef struct CyclePair
{
	uint64_t	key;			/* a << 32 | b */
	int32_t		x;
} CyclePair;

/*
 * The array v (elements of elem bytes, room for *cap) with room for element
 * n: resized to first elements when full, then to twice as many each time
 * (gdl_grow with 64-bit counts: the rules and keys outgrow an int).
 */
static void *
grow64(void *v, int64_t n, int64_t *cap, int64_t first, size_t elem)
{
	if (n == *cap)
	{
		*cap = *cap ? 2 * *cap : first;
		v = gdl_realloc(v, elem * *cap);
	}
	return v;
}

/* Append a key. */
static void
kv_push(KeyVec *k, uint64_t x)
{
	k->v = grow64(k->v, k->n, &k->cap, 256, sizeof(uint64_t));
	k->v[k->n++] = x;
}

/* Sort the keys. */
static void
kv_sort(KeyVec *k)
{
	if (k->n > 1)
		mine_sort_u64(k->v, k->n);
}

/* Forget every key (the next generation of the index). */
static void
kc_reset(KeyCount *kc)
{
	kc->n = 0;
	if (kc->sgen != NULL && ++kc->gen == 0)
	{
		memset(kc->sgen, 0, sizeof(uint32_t) * kc->scap);
		kc->gen = 1;
	}
}

/* The index slot of key: its entry's, or the free one where it goes. */
static inline int64_t
kc_find(const KeyCount *kc, uint64_t key)
{
	int64_t		i = (int64_t) (((key * 0x9E3779B97F4A7C15ull) >> 20) & (uint64_t) (kc->scap - 1));

	while (kc->sgen[i] == kc->gen && kc->e[kc->slot[i]].key != key)
		i = (i + 1) & (kc->scap - 1);
	return i;
}

/* Rebuild the index at twice the size (or its first size). */
static void
kc_grow(KeyCount *kc)
{
	if (kc->sgen != NULL)
	{
		gdl_free(kc->slot);
		gdl_free(kc->sgen);
	}
	kc->scap = kc->scap ? 2 * kc->scap : 4096;
	kc->slot = gdl_alloc_uninit(sizeof(int64_t) * kc->scap);
	kc->sgen = gdl_alloc(sizeof(uint32_t) * kc->scap);
	kc->gen = 1;
	for (int64_t j = 0; j < kc->n; j++)
	{
		int64_t		i = kc_find(kc, kc->e[j].key);

		kc->sgen[i] = kc->gen;
		kc->slot[i] = j;
	}
}

/* Count head fact x for key (once per x: the x come in order). */
static inline void
kc_add(KeyCount *kc, uint64_t key, int32_t x)
{
	int64_t		i;

	if (2 * (kc->n + 1) > kc->scap)
		kc_grow(kc);
	i = kc_find(kc, key);
	if (kc->sgen[i] != kc->gen)
	{
		kc->e = grow64(kc->e, kc->n, &kc->ecap, 4096, sizeof(KcEntry));
		kc->sgen[i] = kc->gen;
		kc->slot[i] = kc->n;
		kc->e[kc->n].key = key;
		kc->e[kc->n].count = 1;
		kc->e[kc->n].last = x;
		kc->n++;
		return;
	}
	if (kc->e[kc->slot[i]].last != x)
	{
		kc->e[kc->slot[i]].count++;
		kc->e[kc->slot[i]].last = x;
	}
}

/* Two 32-bit fields as one sortable key: (signature, entity) or (sig, sig). */
static inline uint64_t
pair_key(uint32_t hi, uint32_t lo)
{
	return ((uint64_t) hi << 32) | lo;
}

/* Support over min_support and the constants' head coverage for head relation rel? */
static bool
passes(const ConstRun *cr, int rel, int64_t sup)
{
	return sup >= cr->minsup &&
		!((double) sup / (double) cr->g->nfacts[rel] < cr->min_hc);
}

/* Has entity x a link with signature sig? */
static bool
has_sig(const GdlMineGraph *g, int32_t x, uint32_t sig)
{
	int64_t		b,
				e;

	return mine_graph_links(g, x, sig, &b, &e);
}

/* A new rule in the output, zeroed, with its head. */
static GdlMineRule *
new_rule(ConstRun *cr, int rel, int head_const, int64_t head_value, int nbody)
{
	GdlMineRule *r;

	cr->out = grow64(cr->out, cr->n, &cr->cap, 64, sizeof(GdlMineRule));
	r = &cr->out[cr->n++];
	mine_rule_init(r, rel, head_const, head_value, nbody);
	return r;
}

/*
 * The last rule, measured: canonical, or dropped at once when below the
 * confidence thresholds (gdl_mine would drop it anyway; FB15k-237 at head
 * coverage 0.01 has 62 M two-atom constant rules, most of them below 0.1,
 * too many to hold).
 */
static void
finish_rule(ConstRun *cr, GdlMineRule *r)
{
	double		pca = r->pca_body_size > 0 ? (double) r->support / r->pca_body_size : 0;
	double		std = r->body_size > 0 ? (double) r->support / r->body_size : 0;

	if (pca < cr->o->min_confidence || std < cr->o->min_std_confidence)
	{
		cr->n--;
		return;
	}
	gdl_mine_canonical(r);
}

/* The rule with a constant head of link h to entity c. */
static GdlMineRule *
head_rule(ConstRun *cr, uint32_t h, int32_t c, int nbody)
{
	return new_rule(cr, (int) (h >> 1), (h & 1) ? GDL_MINE_HEAD_SUBJECT : GDL_MINE_HEAD_OBJECT,
					cr->g->values[c], nbody);
}

/* Next generation of the per-entity stamps (cleared on wrap-around). */
static void
next_gen(ConstRun *cr)
{
	if (++cr->gen == 0)
	{
		memset(cr->stamp, 0, sizeof(uint32_t) * (cr->g->nent + 1));
		cr->gen = 1;
	}
}

/* qsort order of cycle pairs: key, then entity. */
static int
cmp_cycle(const void *a, const void *b)
{
	const CyclePair *x = a,
			   *y = b;

	return mine_cmp_pair(x->key, x->x, y->key, y->x);
}

/* Every entity's cycle pairs, sorted by (a, b, x); once per run. */
static void
build_cycle_index(ConstRun *cr)
{
	const GdlMineGraph *g = cr->g;
	int64_t		n = g->cpoff[g->nent];

	cr->cp_built = true;
	cr->ncp = n;
	cr->cp = gdl_alloc(sizeof(CyclePair) * (n + 1));
	for (int32_t x = 0; x < g->nent; x++)
		for (int64_t k = g->cpoff[x]; k < g->cpoff[x + 1]; k++)
		{
			cr->cp[k].key = pair_key((uint32_t) g->cpa[k], (uint32_t) g->cpb[k]);
			cr->cp[k].x = x;
		}
	if (n > 1)
		qsort(cr->cp, n, sizeof(CyclePair), cmp_cycle);
}

/* Denominators of r(X, c) :- a(X, Z), b(X, Z): the x with the cycle pair (a, b). */
static void
count_cycle(ConstRun *cr, uint32_t h, uint64_t key, GdlMineRule *r)
{
	int64_t		lo = 0,
				hi;

	if (!cr->cp_built)
		build_cycle_index(cr);
	hi = cr->ncp;
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (cr->cp[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < cr->ncp && cr->cp[lo].key == key; lo++)
	{
		r->body_size++;
		r->pca_body_size += has_sig(cr->g, cr->cp[lo].x, h);
	}
}

/* count_path's walk: the distinct x two links back from d, and those with link h. */
static void
count_path_walk(ConstRun *cr, uint32_t h, uint32_t l, uint32_t m, int32_t d, GdlMineRule *r)
{
	const GdlMineGraph *g = cr->g;
	int64_t		zb,
				ze,
				xb,
				xe;

	next_gen(cr);
	if (!mine_graph_links(g, d, m ^ 1, &zb, &ze))
		return;
	for (int64_t k = zb; k < ze; k++)
		if (mine_graph_links(g, g->anb[k], l ^ 1, &xb, &xe))
			for (int64_t j = xb; j < xe; j++)
			{
				int32_t		x = g->anb[j];

				if (cr->stamp[x] == cr->gen)
					continue;
				cr->stamp[x] = cr->gen;
				r->body_size++;
				r->pca_body_size += has_sig(g, x, h);
			}
}

/*
 * The denominators of the bodies l(X, Z), m(Z, d) already counted for the
 * head link being mined: the same body comes up under many constants c of
 * one head (every film's genre rule meets "released in the USA"), and
 * counting it walks every x two links from d.  Open addressing on
 * (l, m, d); cleared when the head link changes.
 */
typedef struct PathMemo
{
	uint64_t	lm;				/* l << 32 | m, UINT64_MAX: empty */
	int32_t		d;
	int64_t		body_size;
	int64_t		pca_body_size;
} PathMemo;


/* Empty the memo (a new head link), allocating it on first use. */
static void
memo_clear(ConstRun *cr)
{
	if (cr->memo == NULL)
	{
		cr->memo_cap = 1024;
		cr->memo = gdl_alloc_uninit(sizeof(PathMemo) * cr->memo_cap);
	}
	for (int64_t i = 0; i < cr->memo_cap; i++)
		cr->memo[i].lm = UINT64_MAX;
	cr->memo_n = 0;
}

/* The slot of (lm, d): its entry, or the empty slot where it goes. */
static PathMemo *
memo_slot(const ConstRun *cr, uint64_t lm, int32_t d)
{
	PathMemo   *memo = cr->memo;
	int64_t		memo_cap = cr->memo_cap;
	uint64_t	hsh = (lm * 0x9E3779B97F4A7C15ull) ^ ((uint64_t) (uint32_t) d * 0xC2B2AE3D27D4EB4Full);
	int64_t		i = (int64_t) ((hsh >> 17) & (uint64_t) (memo_cap - 1));

	while (memo[i].lm != UINT64_MAX && !(memo[i].lm == lm && memo[i].d == d))
		i = (i + 1) & (memo_cap - 1);
	return &memo[i];
}

/* Keep (lm, d)'s denominators, doubling the table past half full. */
static void
memo_put(ConstRun *cr, uint64_t lm, int32_t d, int64_t body_size, int64_t pca_body_size)
{
	PathMemo   *e;

	if (2 * (cr->memo_n + 1) > cr->memo_cap)
	{
		PathMemo   *old = cr->memo;
		int64_t		oldcap = cr->memo_cap;

		cr->memo_cap *= 2;
		cr->memo = gdl_alloc_uninit(sizeof(PathMemo) * cr->memo_cap);
		for (int64_t i = 0; i < cr->memo_cap; i++)
			cr->memo[i].lm = UINT64_MAX;
		for (int64_t i = 0; i < oldcap; i++)
			if (old[i].lm != UINT64_MAX)
				*memo_slot(cr, old[i].lm, old[i].d) = old[i];
		gdl_free(old);
	}
	e = memo_slot(cr, lm, d);
	if (e->lm == UINT64_MAX)
		cr->memo_n++;
	e->lm = lm;
	e->d = d;
	e->body_size = body_size;
	e->pca_body_size = pca_body_size;
}

/*
 * Denominators of r(X, c) :- l(X, Z), m(Z, d): the distinct x reached from
 * d backwards (z by m ^ 1, then x by l ^ 1); once per head link (memo).
 */
static void
count_path(ConstRun *cr, uint32_t h, uint32_t l, uint32_t m, int32_t d, GdlMineRule *r)
{
	uint64_t	lm = ((uint64_t) l << 32) | m;
	PathMemo   *e = memo_slot(cr, lm, d);

	if (e->lm == lm)
	{
		r->body_size = e->body_size;
		r->pca_body_size = e->pca_body_size;
		return;
	}
	count_path_walk(cr, h, l, m, d, r);
	memo_put(cr, lm, d, r->body_size, r->pca_body_size);
}

/*
 * The PCA denominators of the open rules h(X, c) :- l(X, Z) for every l:
 * #x with links h (some head fact of x's side) and l.  Once per head link.
 */
static void
head_denominators(ConstRun *cr, uint32_t h)
{
	const GdlMineGraph *g = cr->g;

	memset(cr->head_pca, 0, sizeof(int64_t) * 2 * g->nrels);
	for (int32_t x = 0; x < g->nent; x++)
	{
		if (!has_sig(g, x, h))
			continue;
		for (int64_t k = g->soff[x]; k < g->soff[x + 1]; k++)
			cr->head_pca[g->ssig[k]]++;
	}
}

/*
 * The rules with head h(X, c) (link h from X to entity c): bodies l(X, d), l(X, Z) with Z free,
 * l(X, Z), m(X, Z) and l(X, Z), m(Z, d).
 */
static void
mine_head_constant(ConstRun *cr, uint32_t h, int32_t c, int64_t hb, int64_t he, KeyVec *kv,
				   int32_t *lcount)
{
	const GdlMineGraph *g = cr->g;
	int			rel = (int) (h >> 1);

	/* l(X, d): every link of every head fact x */
	kv->n = 0;
	for (int64_t i = hb; i < he && cr->body_from <= 1; i++)
	{
		int32_t		x = g->anb[i];

		for (int64_t k = g->aoff[x]; k < g->aoff[x + 1]; k++)
			if (!((uint32_t) g->asig[k] == h && g->anb[k] == c))
				kv_push(kv, pair_key((uint32_t) g->asig[k], (uint32_t) g->anb[k]));
	}
	kv_sort(kv);
	for (int64_t i = 0, j; i < kv->n; i = j)
	{
		for (j = i; j < kv->n && kv->v[j] == kv->v[i]; j++)
			;
		if (passes(cr, rel, j - i))
		{
			uint32_t	s = (uint32_t) (kv->v[i] >> 32);
			int32_t		d = (int32_t) (kv->v[i] & 0xffffffffu);
			GdlMineRule *r = head_rule(cr, h, c, 1);
			int64_t		xb,
						xe;

			r->body[0] = mine_const_atom(s, GDL_MINE_X, g->values[d]);
			r->support = j - i;
			if (mine_graph_links(g, d, s ^ 1, &xb, &xe))
				for (int64_t k = xb; k < xe; k++)
				{
					r->body_size++;
					r->pca_body_size += has_sig(g, g->anb[k], h);
				}
			finish_rule(cr, r);
		}
	}
	/* l(X, Z), Z free: the head facts x with a link l */
	memset(lcount, 0, sizeof(int32_t) * 2 * g->nrels);
	for (int64_t i = hb; i < he; i++)
	{
		int32_t		x = g->anb[i];

		for (int64_t k = g->soff[x]; k < g->soff[x + 1]; k++)
			lcount[g->ssig[k]]++;
	}
	for (uint32_t l = 0; l < 2 * (uint32_t) g->nrels && cr->body_from <= 1; l++)
	{
		GdlMineRule *r;

		if (!passes(cr, rel, lcount[l]))
			continue;
		r = head_rule(cr, h, c, 1);
		r->body[0] = mine_link_atom(l, GDL_MINE_X, GDL_MINE_Z);
		r->support = lcount[l];
		r->body_size = cr->sig_ents[l];
		r->pca_body_size = cr->head_pca[l];
		finish_rule(cr, r);
	}
	if (cr->body_to < 2)
		return;

	/* l(X, Z), m(X, Z): the cycle pairs of every head fact x */
	kv->n = 0;
	for (int64_t i = hb; i < he; i++)
	{
		int32_t		x = g->anb[i];

		for (int64_t k = g->cpoff[x]; k < g->cpoff[x + 1]; k++)
			kv_push(kv, pair_key((uint32_t) g->cpa[k], (uint32_t) g->cpb[k]));
	}
	kv_sort(kv);
	for (int64_t i = 0, j; i < kv->n; i = j)
	{
		for (j = i; j < kv->n && kv->v[j] == kv->v[i]; j++)
			;
		if (passes(cr, rel, j - i))
		{
			GdlMineRule *r = head_rule(cr, h, c, 2);

			/* both atoms are on (X, Z) */
			r->body[0] = mine_link_atom((uint32_t) (kv->v[i] >> 32), GDL_MINE_X, GDL_MINE_Z);
			r->body[1] = mine_link_atom((uint32_t) (kv->v[i] & 0xffffffffu), GDL_MINE_X, GDL_MINE_Z);
			r->support = j - i;
			count_cycle(cr, h, kv->v[i], r);
			finish_rule(cr, r);
		}
	}

	/* l(X, Z), m(Z, d): first signatures l over the thresholds (lcount, above) */
	for (uint32_t l = 0; l < 2 * (uint32_t) g->nrels; l++)
	{
		if (!passes(cr, rel, lcount[l]))
			continue;
		kc_reset(&cr->kc);
		for (int64_t i = hb; i < he; i++)
		{
			int32_t		x = g->anb[i];
			int64_t		zb,
						ze;

			if (!mine_graph_links(g, x, l, &zb, &ze))
				continue;
			for (int64_t k = zb; k < ze; k++)
			{
				int32_t		z = g->anb[k];

				for (int64_t j = g->aoff[z]; j < g->aoff[z + 1]; j++)
					kc_add(&cr->kc, pair_key((uint32_t) g->asig[j], (uint32_t) g->anb[j]), x);
			}
		}
		for (int64_t i = 0; i < cr->kc.n; i++)
		{
			const KcEntry *ke = &cr->kc.e[i];

			if (passes(cr, rel, ke->count))
			{
				uint32_t	m = (uint32_t) (ke->key >> 32);
				int32_t		d = (int32_t) (ke->key & 0xffffffffu);
				GdlMineRule *r = head_rule(cr, h, c, 2);

				r->body[0] = mine_link_atom(l, GDL_MINE_X, GDL_MINE_Z);
				r->body[1] = mine_const_atom(m, GDL_MINE_Z, g->values[d]);
				r->support = ke->count;
				count_path(cr, h, l, m, d, r);
				finish_rule(cr, r);
			}
		}
	}
}

/* The links from x to y (any signature): [*beg, *end) of bnb/bsig. */
static void
links_between(const GdlMineGraph *g, int32_t x, int32_t y, int64_t *beg, int64_t *end)
{
	int64_t		lo = mine_lower_bound(g->bnb, g->aoff[x], g->aoff[x + 1], y);

	*beg = lo;
	while (lo < g->aoff[x + 1] && g->bnb[lo] == y)
		lo++;
	*end = lo;
}

/* A walk over every link with one signature, entity by entity. */
typedef struct SigWalk
{
	const GdlMineGraph *g;
	uint32_t	sig;
	int32_t		x;				/* the entity walked */
	int64_t		k;				/* its links left: [k, end) of asig/anb */
	int64_t		end;
} SigWalk;

/* Start a walk over the links with signature sig. */
static void
sig_walk_init(SigWalk *w, const GdlMineGraph *g, uint32_t sig)
{
	w->g = g;
	w->sig = sig;
	w->x = -1;
	w->k = w->end = 0;
}

/*
 * The walk's next link: its entity *x and index *k (anb[*k] the neighbour);
 * false past the last one.  Each loop over the facts sig(X, Y) walks so.
 */
static bool
sig_walk_next(SigWalk *w, int32_t *x, int64_t *k)
{
	while (w->k == w->end)
	{
		if (w->x + 1 >= w->g->nent)
			return false;
		w->x++;
		if (!mine_graph_links(w->g, w->x, w->sig, &w->k, &w->end))
			w->k = w->end = 0;
	}
	*x = w->x;
	*k = w->k++;
	return true;
}

/* Does x link to y with signature sig? */
static bool
has_link(const GdlMineGraph *g, int32_t x, uint32_t sig, int32_t y)
{
	int64_t		b,
				e;

	links_between(g, x, y, &b, &e);
	for (; b < e; b++)
		if ((uint32_t) g->bsig[b] == sig)
			return true;
	return false;
}

/*
 * The rules r(X, Y) :- l(X, Y), m(X, d) and r(X, Y) :- l(X, Y), m(Y, d)
 * for head relation rel.
 */
static void
mine_var_head(ConstRun *cr, int rel, KeyVec *kv, int32_t *lcount)
{
	const GdlMineGraph *g = cr->g;
	uint32_t	h = 2 * (uint32_t) rel;
	SigWalk		hw;
	int32_t		x;
	int64_t		k;

	memset(lcount, 0, sizeof(int32_t) * 2 * g->nrels);
	for (sig_walk_init(&hw, g, h); sig_walk_next(&hw, &x, &k);)
	{
		int64_t		b,
					e;

		links_between(g, x, g->anb[k], &b, &e);
		for (; b < e; b++)
			if ((uint32_t) g->bsig[b] != h)
				lcount[g->bsig[b]]++;
	}
	for (uint32_t l = 0; l < 2 * (uint32_t) g->nrels; l++)
	{
		if (l == h || !passes(cr, rel, lcount[l]))
			continue;
		for (int side = 0; side < 2; side++)
		{
			int			var = side == 0 ? GDL_MINE_X : GDL_MINE_Y;

			kv->n = 0;
			for (sig_walk_init(&hw, g, h); sig_walk_next(&hw, &x, &k);)
			{
				int32_t		y = g->anb[k],
							e = side == 0 ? x : y;

				if (!has_link(g, x, l, y))
					continue;
				for (int64_t j = g->aoff[e]; j < g->aoff[e + 1]; j++)
					kv_push(kv, pair_key((uint32_t) g->asig[j], (uint32_t) g->anb[j]));
			}
			kv_sort(kv);
			for (int64_t i = 0, j; i < kv->n; i = j)
			{
				uint32_t	m;
				int32_t		d;
				GdlMineRule *r;
				int64_t		eb,
							ee;

				for (j = i; j < kv->n && kv->v[j] == kv->v[i]; j++)
					;
				if (!passes(cr, rel, j - i))
					continue;
				m = (uint32_t) (kv->v[i] >> 32);
				d = (int32_t) (kv->v[i] & 0xffffffffu);
				r = new_rule(cr, rel, GDL_MINE_HEAD_VARS, 0, 2);
				r->body[0] = mine_link_atom(l, GDL_MINE_X, GDL_MINE_Y);
				r->body[1] = mine_const_atom(m, var, g->values[d]);
				r->support = j - i;
				/* the entities e with m(e, d), and their l-partners */
				if (mine_graph_links(g, d, m ^ 1, &eb, &ee))
					for (int64_t q = eb; q < ee; q++)
					{
						int32_t		e = g->anb[q];
						int64_t		pb,
									pe;

						if (!mine_graph_links(g, e, side == 0 ? l : l ^ 1, &pb, &pe))
							continue;
						if (side == 0)
						{
							r->body_size += pe - pb;
							if (has_sig(g, e, h))
								r->pca_body_size += pe - pb;
						}
						else
							for (int64_t p = pb; p < pe; p++)
							{
								r->body_size++;
								r->pca_body_size += has_sig(g, g->anb[p], h);
							}
					}
				finish_rule(cr, r);
			}
		}
	}
}

/* See mine_int.h. */
GdlMineRule *
mine_const_rules(const GdlMineGraph *g, const GdlMineOptions *o, int body_from, int body_to,
				 double deadline, int64_t *nrules, bool *timed_out)
{
	ConstRun	cr;
	KeyVec		kv = {0};
	int32_t    *lcount = gdl_alloc(sizeof(int32_t) * (2 * g->nrels + 1));

	memset(&cr, 0, sizeof(cr));
	cr.g = g;
	cr.o = o;
	cr.minsup = o->min_support < 1 ? 1 : o->min_support;
	cr.min_hc = o->constants_min_head_coverage < 0 ? o->min_head_coverage
		: o->constants_min_head_coverage;
	cr.body_from = body_from;
	cr.body_to = body_to;
	*timed_out = false;
	cr.stamp = gdl_alloc(sizeof(uint32_t) * (g->nent + 1));
	memset(cr.stamp, 0, sizeof(uint32_t) * (g->nent + 1));
	cr.sig_ents = gdl_alloc(sizeof(int64_t) * (2 * g->nrels + 1));
	cr.head_pca = gdl_alloc(sizeof(int64_t) * (2 * g->nrels + 1));
	for (int32_t x = 0; x < g->nent; x++)
		for (int64_t k = g->soff[x]; k < g->soff[x + 1]; k++)
			cr.sig_ents[g->ssig[k]]++;
	for (int rel = 0; rel < g->nrels && !*timed_out; rel++)
	{
		if ((o->target >= 0 && rel != o->target) || g->nfacts[rel] == 0)
			continue;
		for (uint32_t h = 2 * (uint32_t) rel; h <= 2 * (uint32_t) rel + 1 && !*timed_out; h++)
		{
			head_denominators(&cr, h);
			memo_clear(&cr);
			for (int32_t c = 0; c < g->nent; c++)
			{
				int64_t		hb,
							he;

				/* the head facts: x with link h to c, i.e. c's links h ^ 1 */
				if (!mine_graph_links(g, c, h ^ 1, &hb, &he) || !passes(&cr, rel, he - hb))
					continue;
				mine_head_constant(&cr, h, c, hb, he, &kv, lcount);
				gdl_check_interrupts();
				if (deadline > 0 && gdl_now_ms() > deadline)
				{
					*timed_out = true;
					break;
				}
			}
		}
		if (body_to >= 2 && !*timed_out)
			mine_var_head(&cr, rel, &kv, lcount);
		gdl_check_interrupts();
		if (deadline > 0 && gdl_now_ms() > deadline)
			*timed_out = true;
	}
	gdl_free(kv.v);
	gdl_free(lcount);
	gdl_free(cr.stamp);
	if (cr.memo)
		gdl_free(cr.memo);
	if (cr.kc.e)
		gdl_free(cr.kc.e);
	if (cr.kc.sgen)
	{
		gdl_free(cr.kc.slot);
		gdl_free(cr.kc.sgen);
	}
	gdl_free(cr.sig_ents);
	gdl_free(cr.head_pca);
	if (cr.cp)
		gdl_free(cr.cp);
	*nrules = cr.n;
	return cr.out;
}
