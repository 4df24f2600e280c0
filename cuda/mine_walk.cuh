/*
 * mine_walk.cuh — the per-entity walk of the GPU miner (cuda/mine.cu), in
 * C that compiles both as CUDA device code and as plain host C, so that the
 * standalone tests can run the very code of the kernels on the CPU
 * (test/unit/test_mine_walk.c) where no GPU is at hand.
 *
 * md_walk_x(run, t) is what one GPU thread does for entity run->xs[t]: the
 * groups of src/mine/mine_enum.c (a raw body and the distinct y with
 * body(x, y)), counted by pass: pass 1 adds supports into a hash table of
 * (body << 14 | head) pairs, pass 2 adds body sizes and PCA denominators
 * of the candidates.  Frontiers are gathered into the thread's scratch as
 * sig << 32 | nb, heapsorted and deduplicated there.  Atomics are CUDA's
 * on the device and GCC's __atomic builtins on the host.
 *
 * Also host-only helpers the driver shares with the test: the frontier
 * bound of each entity, the threshold of pass 1, and the key sets.
 */
#ifndef MINE_WALK_CUH
#define MINE_WALK_CUH

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __CUDACC__
#define MD_HD __host__ __device__ static inline
#else
#define MD_HD static inline
#endif

typedef unsigned long long md_ull;

/* Device key packing: 15-bit signatures, 14-bit heads (body << 14 | head). */
#define MD_SIG_BITS 15
#define MD_SIG_MASK 0x7fffu
#define MD_HEAD_BITS 14
#define MD_MAX_RELS ((1 << MD_HEAD_BITS) - 1)
#define MD_SET_BIT (1ull << 63)	/* marks a used slot of a key set */

/* Raw body shapes (src/mine/gdl_mine_device.h). */
enum
{
	MD_L = 1, MD_LL, MD_LLL, MD_P2, MD_P2L, MD_PP2, MD_P2P, MD_CXL, MD_CYL, MD_P3
};

MD_HD uint64_t
md_key(int sh, uint32_t a, uint32_t b, uint32_t c)
{
	return ((uint64_t) sh << (3 * MD_SIG_BITS)) | ((uint64_t) a << (2 * MD_SIG_BITS)) |
		((uint64_t) b << MD_SIG_BITS) | (uint64_t) c;
}

MD_HD int
md_shape(uint64_t k)
{
	return (int) (k >> (3 * MD_SIG_BITS));
}

MD_HD uint32_t
md_sig(uint64_t k, int i)
{
	return (uint32_t) (k >> ((2 - i) * MD_SIG_BITS)) & MD_SIG_MASK;
}

/* The host's key (19-bit signatures, src/mine/mine_int.h) of a device key. */
MD_HD uint64_t
md_host_key(uint64_t k)
{
	return ((uint64_t) md_shape(k) << 57) | ((uint64_t) md_sig(k, 0) << 38) |
		((uint64_t) md_sig(k, 1) << 19) | (uint64_t) md_sig(k, 2);
}

/* splitmix64's finaliser. */
MD_HD uint64_t
md_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Does the body hold the link X->Y of signature sig (mine_key_has_atom)? */
MD_HD bool
md_has_atom(uint64_t key, uint32_t sig)
{
	switch (md_shape(key))
	{
		case MD_LLL:
			return md_sig(key, 0) == sig || md_sig(key, 1) == sig || md_sig(key, 2) == sig;
		case MD_LL:
			return md_sig(key, 0) == sig || md_sig(key, 1) == sig;
		case MD_L:
		case MD_CYL:
			return md_sig(key, 0) == sig;
		case MD_P2L:
		case MD_CXL:
			return md_sig(key, 2) == sig;
		default:
			return false;
	}
}

/* 64-bit atomics: CUDA's on the device, GCC's on the host. */
MD_HD md_ull
md_atomic_add(md_ull *p, md_ull v)
{
#ifdef __CUDA_ARCH__
	return atomicAdd(p, v);
#else
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

MD_HD md_ull
md_atomic_cas(md_ull *p, md_ull expect, md_ull v)
{
#ifdef __CUDA_ARCH__
	return atomicCAS(p, expect, v);
#else
	__atomic_compare_exchange_n(p, &expect, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return expect;
#endif
}

MD_HD void
md_atomic_flag(int *p, int v)
{
#ifdef __CUDA_ARCH__
	atomicMax(p, v);
#else
	int			cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
#endif
}

/* The graph (gdl_mine_device.h's arrays, on the device). */
typedef struct MdGraph
{
	int32_t		nent;
	int32_t		nrels;
	int64_t		nlinks;
	const int64_t *aoff;
	const int32_t *asig;
	const int32_t *anb;
	const int32_t *bnb;
	const int32_t *bsig;
	const int64_t *ppoff;
	const int32_t *ppa;
	const int32_t *ppb;
	const int32_t *ppz;
	const int64_t *cpoff;
	const int32_t *cpa;
	const int32_t *cpb;
} MdGraph;

/* Everything a launch reads. */
typedef struct MdRun
{
	MdGraph		g;
	int			pass;			/* 1 or 2 */
	int			maxb;
	int			target;
	/* pass 1: (body << 14 | head) | MD_SET_BIT -> support */
	md_ull	   *hkeys;
	md_ull	   *hvals;
	uint64_t	hmask;
	md_ull	   *hused;
	uint64_t	hlimit;
	int		   *err;			/* 1: table too full, 2: a frontier overflowed */
	/* pass 2 */
	const md_ull *bkeys;		/* body set: key | MD_SET_BIT */
	const int64_t *bidx;
	uint64_t	bmask;
	const int64_t *bcoff;		/* body b's candidates [bcoff[b], bcoff[b+1]) */
	const int32_t *chead;
	md_ull	   *bcnt;
	md_ull	   *pcnt;
	const unsigned char *need_p1;	/* per sig */
	const unsigned char *need_p2p;
	const md_ull *p3keys;
	uint64_t	p3mask;
	const md_ull *ppkeys;
	uint64_t	ppmask;
	unsigned	shapes;			/* bit sh: some candidate body has shape sh */
	/* the launch: work item t is entity xs[t], part parts[t] (NULL: all) */
	const int32_t *parts;
	const int32_t *xs;
	int64_t		nx;
	md_ull	   *scratch;
	int64_t		cap;			/* entries per frontier buffer (three per thread) */
	const volatile int *stop;	/* device flag: nonzero, leave the walk (NULL: none) */
	const volatile int *stop_host;	/* mapped host flag, read rarely (NULL: none) */
} MdRun;

/* Slot of key in a key set, or -1. */
MD_HD int64_t
md_set_find(const md_ull *keys, uint64_t mask, uint64_t key)
{
	uint64_t	h = md_mix(key) & mask;
	md_ull		want = key | MD_SET_BIT;

	for (uint64_t probes = 0; probes <= mask; probes++)
	{
		md_ull		k = keys[h];

		if (k == 0)
			return -1;
		if (k == want)
			return (int64_t) h;
		h = (h + 1) & mask;
	}
	return -1;
}

/*
 * Add 1 to a pass-1 pair; false once the table is past its limit (flag 1:
 * the pass is rerun with a larger table), so that the walk leaves at once:
 * a walk that went on filled the table, and every new pair then probed all
 * of it (a dense graph ran for minutes and did not see a stop request).
 */
MD_HD bool
md_sup_add(const MdRun *run, uint64_t pair)
{
	uint64_t	h = md_mix(pair) & run->hmask;
	md_ull		want = pair | MD_SET_BIT;

	for (uint64_t probes = 0; probes <= run->hmask; probes++)
	{
		md_ull		old = run->hkeys[h];

		if (old == 0)
		{
			old = md_atomic_cas(&run->hkeys[h], 0ull, want);
			if (old == 0)
			{
				md_atomic_add(&run->hvals[h], 1ull);
				if (md_atomic_add(run->hused, 1ull) + 1 > run->hlimit)
				{
					md_atomic_flag(run->err, 1);
					return false;
				}
				return true;
			}
		}
		if (old == want)
		{
			md_atomic_add(&run->hvals[h], 1ull);
			return true;
		}
		h = (h + 1) & run->hmask;
	}
	md_atomic_flag(run->err, 1);
	return false;
}

/* A list of y: int32 array, frontier entries (low 32 bits), pair entries (low 31), one value. */
enum
{
	MD_Y32, MD_Y64, MD_YP, MD_Y1
};
typedef struct MdYs
{
	int			kind;
	const int32_t *p32;
	const md_ull *p64;
	int32_t		one;
} MdYs;

MD_HD int32_t
md_y(const MdYs *ys, int64_t i)
{
	switch (ys->kind)
	{
		case MD_Y32:
			return ys->p32[i];
		case MD_Y64:
			return (int32_t) (uint32_t) ys->p64[i];
		case MD_YP:
			return (int32_t) (ys->p64[i] & 0x7fffffffull);
		default:
			return ys->one;
	}
}

MD_HD MdYs
md_ys32(const int32_t *p)
{
	MdYs		y = {MD_Y32, p, 0, 0};

	return y;
}

MD_HD MdYs
md_ys64(const md_ull *p)
{
	MdYs		y = {MD_Y64, 0, p, 0};

	return y;
}

MD_HD MdYs
md_ysp(const md_ull *p)
{
	MdYs		y = {MD_YP, 0, p, 0};

	return y;
}

MD_HD MdYs
md_ys1(int32_t v)
{
	MdYs		y = {MD_Y1, 0, 0, v};

	return y;
}

/* One thread's state. */
typedef struct MdW
{
	const MdRun *run;
	int32_t		x;
	int64_t		xa;
	int64_t		xb;
	md_ull	   *L2;
	md_ull	   *L3;
	md_ull	   *LP;
	bool		ovf;			/* a frontier overflowed, the table is full, or the run is stopped */
	bool		full;			/* the pass-1 table is past its limit (rerun larger) */
	uint32_t	polls;			/* groups since the stop flag was read */
} MdW;

/* First index in sorted a[lo..hi) with a[i] >= v (hi when none): x's links are searched by it. */
MD_HD int64_t
md_lower_bound(const int32_t *a, int64_t lo, int64_t hi, int32_t v)
{
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First by-neighbour link of x to y (or the end of x's links). */
MD_HD int64_t
md_xlinks(const MdGraph *g, int64_t xa, int64_t xb, int32_t y)
{
	return md_lower_bound(g->bnb, xa, xb, y);
}

/* Is x a subject of relation r? */
MD_HD bool
md_xdom(const MdGraph *g, int64_t xa, int64_t xb, int32_t r)
{
	int64_t		lo = md_lower_bound(g->asig, xa, xb, 2 * r);

	return lo < xb && g->asig[lo] == 2 * r;
}

/*
 * Whether the walk is to leave (ovf), reading the stop flags now and then:
 * the device flag every 64 steps, the mapped host one every 16,384 (a read
 * crosses PCIe).  A step is a group or, in pass 1, one y of a group, whose
 * support updates are the walk's costly part (a dense graph's group took
 * about 1 ms on a CPU core and much longer on a GPU thread: polling per
 * group left a stopped walk running for seconds).  A stopped walk ends as
 * an overflow does: the walk's loops leave on ovf.
 */
MD_HD bool
md_poll(MdW *w)
{
	const MdRun *run = w->run;

	if (run->stop != NULL && (++w->polls & 63) == 0 &&
		(*run->stop != 0 || ((w->polls & 16383) == 0 && run->stop_host != NULL && *run->stop_host != 0)))
		w->ovf = true;
	return w->ovf;
}

/* Count one group (mine_enum.c's emit). */
MD_HD void
md_emit(MdW *w, uint64_t key, MdYs ys, int64_t n)
{
	const MdRun *run = w->run;
	const MdGraph *g = &run->g;

	if (md_poll(w))
		return;
	if (run->pass == 1)
	{
		for (int64_t i = 0; i < n; i++)
		{
			int32_t		y = md_y(&ys, i);

			if (i > 0 && md_poll(w))
				return;
			for (int64_t j = md_xlinks(g, w->xa, w->xb, y); j < w->xb && g->bnb[j] == y; j++)
			{
				uint32_t	s = (uint32_t) g->bsig[j];

				if (s & 1)
					continue;
				if (run->target >= 0 && (int) (s >> 1) != run->target)
					continue;
				if (md_has_atom(key, s))
					continue;
				if (!md_sup_add(run, (key << MD_HEAD_BITS) | (s >> 1)))
				{
					w->ovf = w->full = true;
					return;
				}
			}
		}
	}
	else
	{
		int64_t		slot = md_set_find(run->bkeys, run->bmask, key);
		int64_t		b;

		if (slot < 0)
			return;
		b = run->bidx[slot];
		md_atomic_add(&run->bcnt[b], (md_ull) n);
		for (int64_t c = run->bcoff[b]; c < run->bcoff[b + 1]; c++)
			if (md_xdom(g, w->xa, w->xb, run->chead[c]))
				md_atomic_add(&run->pcnt[c], (md_ull) n);
	}
}

/* Heapsort of n 64-bit keys; sort_unique returns the distinct count. */
MD_HD void
md_sift(md_ull *a, int64_t i, int64_t n)
{
	for (;;)
	{
		int64_t		l = 2 * i + 1,
					c;
		md_ull		t;

		if (l >= n)
			return;
		c = (l + 1 < n && a[l + 1] > a[l]) ? l + 1 : l;
		if (a[i] >= a[c])
			return;
		t = a[i];
		a[i] = a[c];
		a[c] = t;
		i = c;
	}
}

MD_HD int64_t
md_sort_unique(md_ull *a, int64_t n)
{
	int64_t		m = 0;

	for (int64_t i = n / 2 - 1; i >= 0; i--)
		md_sift(a, i, n);
	for (int64_t e = n - 1; e > 0; e--)
	{
		md_ull		t = a[0];

		a[0] = a[e];
		a[e] = t;
		md_sift(a, 0, e);
	}
	for (int64_t i = 0; i < n; i++)
		if (m == 0 || a[i] != a[m - 1])
			a[m++] = a[i];
	return m;
}

/* The links of the frontier F, as sig << 32 | nb, sorted and distinct; -1: overflow. */
MD_HD int64_t
md_expand(MdW *w, MdYs F, int64_t nF, md_ull *out)
{
	const MdGraph *g = &w->run->g;
	int64_t		n = 0;

	for (int64_t i = 0; i < nF; i++)
	{
		int32_t		e = md_y(&F, i);

		for (int64_t k = g->aoff[e]; k < g->aoff[e + 1]; k++)
		{
			if (n >= w->run->cap)
			{
				w->ovf = true;
				return -1;
			}
			out[n++] = ((md_ull) (uint32_t) g->asig[k] << 32) | (uint32_t) g->anb[k];
		}
	}
	return nF > 1 ? md_sort_unique(out, n) : n;
}

/*
 * End of the group that starts at i in the sorted frontier L[0..n): the
 * entries whose bits from 'shift' up equal L[i]'s (one signature, or one
 * pair of signatures).
 */
MD_HD int64_t
md_group_end(const md_ull *L, int64_t i, int64_t n, int shift)
{
	int64_t		j = i;

	while (j < n && (L[j] >> shift) == (L[i] >> shift))
		j++;
	return j;
}

/* Is shape sh counted in this pass? */
MD_HD bool
md_want(const MdRun *run, int sh)
{
	return run->pass == 1 || ((run->shapes >> sh) & 1);
}

/* The paths out of x through the first link group (s1, Z). */
MD_HD void
md_paths(MdW *w, uint32_t s1, const int32_t *Z, int64_t nZ)
{
	const MdRun *run = w->run;
	const MdGraph *g = &run->g;
	int64_t		n2;

	if (md_poll(w))				/* before the frontier's sort: the costly step */
		return;
	n2 = md_expand(w, md_ys32(Z), nZ, w->L2);

	if (n2 < 0)
		return;
	for (int64_t i = 0; i < n2 && !w->ovf;)
	{
		uint32_t	s2 = (uint32_t) (w->L2[i] >> 32);
		int64_t		j = md_group_end(w->L2, i, n2, 32);

		if (md_want(run, MD_P2))
			md_emit(w, md_key(MD_P2, s1, s2, 0), md_ys64(w->L2 + i), j - i);
		if (run->maxb >= 3)
		{
			if (md_want(run, MD_P2L))
				for (int64_t k = i; k < j && !w->ovf; k++)
				{
					int32_t		y = (int32_t) (uint32_t) w->L2[k];

					for (int64_t l = md_xlinks(g, w->xa, w->xb, y); l < w->xb && g->bnb[l] == y; l++)
						md_emit(w, md_key(MD_P2L, s1, s2, (uint32_t) g->bsig[l]), md_ys1(y), 1);
				}
			if (run->pass == 1 ||
				(((run->shapes >> MD_P3) & 1) &&
				 md_set_find(run->p3keys, run->p3mask, md_key(0, s1, s2, 0)) >= 0))
			{
				int64_t		n3 = md_poll(w) ? -1 : md_expand(w, md_ys64(w->L2 + i), j - i, w->L3);

				if (n3 < 0)
					return;
				for (int64_t a = 0; a < n3 && !w->ovf;)
				{
					uint32_t	s3 = (uint32_t) (w->L3[a] >> 32);
					int64_t		b = md_group_end(w->L3, a, n3, 32);

					md_emit(w, md_key(MD_P3, s1, s2, s3), md_ys64(w->L3 + a), b - a);
					a = b;
				}
			}
		}
		i = j;
	}
	if (run->maxb >= 3 && (run->pass == 1 || run->need_p2p[s1]) && !md_poll(w))
	{
		int64_t		n = 0;

		for (int64_t k = 0; k < nZ; k++)
			for (int64_t p = g->ppoff[Z[k]]; p < g->ppoff[Z[k] + 1]; p++)
			{
				if (n >= run->cap)
				{
					w->ovf = true;
					return;
				}
				w->LP[n++] = ((md_ull) (uint32_t) g->ppa[p] << 46) |
					((md_ull) (uint32_t) g->ppb[p] << 31) | (uint32_t) g->ppz[p];
			}
		if (nZ > 1)
			n = md_sort_unique(w->LP, n);
		for (int64_t p = 0; p < n && !w->ovf;)
		{
			md_ull		ab = w->LP[p] >> 31;
			int64_t		q = md_group_end(w->LP, p, n, 31);

			md_emit(w, md_key(MD_P2P, s1, (uint32_t) (ab >> 15), (uint32_t) (ab & MD_SIG_MASK)),
					md_ysp(w->LP + p), q - p);
			p = q;
		}
	}
}

/*
 * The body groups of work item t (mine_enum.c's enum_x): entity xs[t], part
 * parts[t]: 0 the shapes that do not start with a path, k >= 1 the paths
 * through x's k-th first-link signature (so that a graph of few entities
 * still spreads over many threads); every part when parts is NULL.
 */
MD_HD void
md_walk_x(const MdRun *run, int64_t t)
{
	const MdGraph *g = &run->g;
	MdW			w;
	MdW		   *wp = &w;
	int32_t		part = run->parts ? run->parts[t] : -1;

	w.run = run;
	w.x = run->xs[t];
	w.xa = g->aoff[w.x];
	w.xb = g->aoff[w.x + 1];
	w.L2 = run->scratch + 3 * t * run->cap;
	w.L3 = w.L2 + run->cap;
	w.LP = w.L3 + run->cap;
	w.ovf = false;
	w.full = false;
	w.polls = 63;			/* the first step reads the flag */
	if (w.xa == w.xb)
		return;
	if (part <= 0)
	{
		/* one link on (X, Y) */
		for (int64_t a = w.xa; a < w.xb;)
		{
			int64_t		b = a;

			while (b < w.xb && g->asig[b] == g->asig[a])
				b++;
			md_emit(wp, md_key(MD_L, (uint32_t) g->asig[a], 0, 0), md_ys32(g->anb + a), b - a);
			a = b;
		}
		/* two or three parallel links on (X, Y) */
		if (run->maxb >= 2 && (md_want(run, MD_LL) || (run->maxb >= 3 && md_want(run, MD_LLL))))
			for (int64_t j = w.xa; j < w.xb && !w.ovf;)
			{
				int64_t		e = j;

				while (e < w.xb && g->bnb[e] == g->bnb[j])
					e++;
				for (int64_t a = j; a < e && !w.ovf; a++)
					for (int64_t b = a + 1; b < e && !w.ovf; b++)
					{
						md_emit(wp, md_key(MD_LL, g->bsig[a], g->bsig[b], 0), md_ys1(g->bnb[j]), 1);
						if (run->maxb >= 3)
							for (int64_t c = b + 1; c < e; c++)
								md_emit(wp, md_key(MD_LLL, g->bsig[a], g->bsig[b], g->bsig[c]),
										md_ys1(g->bnb[j]), 1);
					}
				j = e;
			}
		if (run->maxb >= 3)
		{
			/* a link on (X, Y) and a cycle Y-Z-Y */
			if (md_want(run, MD_CYL))
				for (int64_t j = w.xa; j < w.xb && !w.ovf; j++)
				{
					int32_t		y = g->anb[j];

					for (int64_t p = g->cpoff[y]; p < g->cpoff[y + 1] && !w.ovf; p++)
						md_emit(wp, md_key(MD_CYL, g->asig[j], g->cpa[p], g->cpb[p]), md_ys1(y), 1);
				}
			/* a cycle X-Z-X with a link on (X, Y), or with a path Z-Y */
			for (int64_t p = g->ppoff[w.x]; p < g->ppoff[w.x + 1] && !w.ovf;)
			{
				int64_t		q = p;
				uint32_t	a = g->ppa[p],
							b = g->ppb[p];

				while (q < g->ppoff[w.x + 1] && g->ppa[q] == (int32_t) a && g->ppb[q] == (int32_t) b)
					q++;
				if (md_want(run, MD_CXL))
					for (int64_t k = w.xa; k < w.xb && !w.ovf;)
					{
						int64_t		e = k;

						while (e < w.xb && g->asig[e] == g->asig[k])
							e++;
						md_emit(wp, md_key(MD_CXL, a, b, (uint32_t) g->asig[k]), md_ys32(g->anb + k), e - k);
						k = e;
					}
				if (run->pass == 1 ||
					(((run->shapes >> MD_PP2) & 1) &&
					 md_set_find(run->ppkeys, run->ppmask, md_key(0, a, b, 0)) >= 0))
				{
					int64_t		n = md_poll(wp) ? 0 : md_expand(wp, md_ys32(g->ppz + p), q - p, w.L3);

					for (int64_t i = 0; i < n && !w.ovf;)
					{
						uint32_t	s2 = (uint32_t) (w.L3[i] >> 32);
						int64_t		j = md_group_end(w.L3, i, n, 32);

						md_emit(wp, md_key(MD_PP2, a, b, s2), md_ys64(w.L3 + i), j - i);
						i = j;
					}
				}
				p = q;
			}
		}
	}
	/* paths X-Z-Y and X-Z-W-Y and their three-atom variants */
	if (part != 0 && run->maxb >= 2)
	{
		int32_t		k = 1;

		for (int64_t a = w.xa; a < w.xb && !w.ovf; k++)
		{
			int64_t		b = a;
			uint32_t	s1 = (uint32_t) g->asig[a];

			while (b < w.xb && g->asig[b] == g->asig[a])
				b++;
			if ((part < 0 || part == k) && (run->pass == 1 || run->need_p1[s1]))
				md_paths(wp, s1, g->anb + a, b - a);
			a = b;
		}
	}
	if (w.ovf)
		md_atomic_flag(run->err, w.full ? 1 : 2);
}

/*
 * The work items of a pass over the entities order[0..n): each entity's
 * part 0, then with paths (max_body >= 2) one part per distinct first-link
 * signature; xs, parts and need (the entity's frontier bound) must hold
 * md_items_count entries.  Returns the number of items.
 */
static inline int64_t
md_items_count(const int32_t *order, int64_t n, const int64_t *aoff, const int32_t *sig, int maxb)
{
	int64_t		m = 0;

	for (int64_t i = 0; i < n; i++)
	{
		int32_t		x = order[i];

		m++;
		if (maxb >= 2)
			for (int64_t k = aoff[x]; k < aoff[x + 1]; k++)
				if (k == aoff[x] || sig[k] != sig[k - 1])
					m++;
	}
	return m;
}

static inline int64_t
md_items(const int32_t *order, int64_t n, const int64_t *aoff, const int32_t *sig, int maxb,
		 const int64_t *need_of, int32_t *xs, int32_t *parts, int64_t *need)
{
	int64_t		m = 0;

	for (int64_t i = 0; i < n; i++)
	{
		int32_t		x = order[i],
					k = 0;

		xs[m] = x;
		parts[m] = 0;
		need[m++] = need_of[x];
		if (maxb >= 2)
			for (int64_t l = aoff[x]; l < aoff[x + 1]; l++)
				if (l == aoff[x] || sig[l] != sig[l - 1])
				{
					xs[m] = x;
					parts[m] = ++k;
					need[m++] = need_of[x];
				}
	}
	return m;
}

/* Does a pass-1 pair pass min_support and min_head_coverage? */
MD_HD bool
md_pair_passes(md_ull key, md_ull sup, const int64_t *nfacts, int64_t minsup, double minhc)
{
	int32_t		head = (int32_t) (key & ((1ull << MD_HEAD_BITS) - 1));

	return key != 0 && (int64_t) sup >= minsup && (double) sup / (double) nfacts[head] >= minhc;
}

/* ------------------------------------------------------ host-only helpers */

/*
 * Each entity's frontier bound (entries of one scratch buffer): two-hop
 * degree sums, with three atoms three-hop sums and the parallel pairs of
 * its neighbours, each capped by what the graph holds (a frontier is a set
 * of distinct entities).  need must hold nent values; d2 is scratch.
 */
static inline void
md_need(int32_t nent, const int64_t *aoff, const int32_t *nb, const int64_t *ppoff, int maxb,
		int64_t *d2, int64_t *need)
{
	int64_t		nlinks = aoff[nent],
				npp = ppoff[nent];

	for (int32_t e = 0; e < nent; e++)
	{
		d2[e] = 0;
		for (int64_t k = aoff[e]; k < aoff[e + 1]; k++)
			d2[e] += aoff[nb[k] + 1] - aoff[nb[k]];
	}
	for (int32_t x = 0; x < nent; x++)
	{
		int64_t		d3 = 0,
					pp = 0,
					v = d2[x] < nlinks ? d2[x] : nlinks;

		if (maxb >= 3)
		{
			for (int64_t k = aoff[x]; k < aoff[x + 1]; k++)
			{
				d3 += d2[nb[k]];
				pp += ppoff[nb[k] + 1] - ppoff[nb[k]];
			}
			if (d3 > nlinks)
				d3 = nlinks;
			if (pp > npp)
				pp = npp;
			v = v > d3 ? v : d3;
			v = v > pp ? v : pp;
		}
		need[x] = v > 1 ? v : 1;
	}
}

/*
 * A key set of n keys (with idx, a key -> index table): *cap slots, a
 * power of two, in malloc'd arrays; keys marked with MD_SET_BIT.  False
 * when out of memory.
 */
static inline bool
md_set_build(const uint64_t *keys, int64_t n, md_ull **kout, int64_t **iout, uint64_t *cap)
{
	uint64_t	c = 16;
	md_ull	   *k;
	int64_t    *ix;

	while (c < 2 * (uint64_t) n + 16)
		c *= 2;
	k = (md_ull *) calloc(c, sizeof(md_ull));
	ix = (int64_t *) malloc(sizeof(int64_t) * c);
	if (k == NULL || ix == NULL)
	{
		free(k);
		free(ix);
		return false;
	}
	for (uint64_t i = 0; i < c; i++)
		ix[i] = -1;
	for (int64_t i = 0; i < n; i++)
	{
		uint64_t	h = md_mix(keys[i]) & (c - 1);
		md_ull		want = keys[i] | MD_SET_BIT;

		while (k[h] != 0 && k[h] != want)
			h = (h + 1) & (c - 1);
		if (k[h] == 0)
		{
			k[h] = want;
			ix[h] = i;
		}
	}
	*kout = k;
	*iout = ix;
	*cap = c;
	return true;
}

/*
 * Pass 2's tables from the candidates (body keys ckey[], heads chead[], n
 * of them, sorted by key then head): the distinct bodies (*bodies, *nb),
 * bcoff (nb + 1), the prefixes of P3 and PP2 bodies (*p3, *np3, *pp,
 * *npp), the first signatures of path bodies (need_p1, need_p2p: 2 nrels
 * + 1 zeroed bytes each) and the shapes present.  Arrays are malloc'd with
 * room for n entries; false when out of memory.
 */
static inline bool
md_pass2_tables(const uint64_t *ckey, int64_t n, int32_t nrels, uint64_t **bodies, int64_t **bcoff,
				int64_t *nb, uint64_t **p3, int64_t *np3, uint64_t **pp, int64_t *npp,
				unsigned char *need_p1, unsigned char *need_p2p, unsigned *shapes)
{
	(void) nrels;
	*bodies = (uint64_t *) malloc(sizeof(uint64_t) * (n + 1));
	*bcoff = (int64_t *) malloc(sizeof(int64_t) * (n + 2));
	*p3 = (uint64_t *) malloc(sizeof(uint64_t) * (n + 1));
	*pp = (uint64_t *) malloc(sizeof(uint64_t) * (n + 1));
	if (!*bodies || !*bcoff || !*p3 || !*pp)
		return false;
	*nb = *np3 = *npp = 0;
	*shapes = 0;
	for (int64_t i = 0; i < n; i++)
	{
		uint64_t	k = ckey[i];
		int			sh = md_shape(k);

		if (i > 0 && k == ckey[i - 1])
			continue;
		(*bcoff)[*nb] = i;
		(*bodies)[(*nb)++] = k;
		*shapes |= 1u << sh;
		if (sh == MD_P2 || sh == MD_P2L || sh == MD_P2P || sh == MD_P3)
			need_p1[md_sig(k, 0)] = 1;
		if (sh == MD_P2P)
			need_p2p[md_sig(k, 0)] = 1;
		if (sh == MD_P3)
			(*p3)[(*np3)++] = md_key(0, md_sig(k, 0), md_sig(k, 1), 0);
		if (sh == MD_PP2)
			(*pp)[(*npp)++] = md_key(0, md_sig(k, 0), md_sig(k, 1), 0);
	}
	(*bcoff)[*nb] = n;
	return true;
}

#endif							/* MINE_WALK_CUH */
