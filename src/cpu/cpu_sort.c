/*
 * cpu_sort.c — sorting for the CPU backend: LSD radix sort of uint64 keys
 * over only the bits that vary (parallel over threads), sorting of
 * pre-grouped segments, key/payload pair sorting, a permutation sort of
 * wide rows by columns, and unique.
 */
#include "cpu_int.h"

#include <string.h>

#define RADIX_MAX_BITS 11
#define RADIX_BUCKETS (1 << RADIX_MAX_BITS)
#define PAR_MIN_N (1 << 16)		/* below this, sort on one thread */

/* Insertion sort for short arrays. */
static void
insertion_u64(uint64_t *a, int64_t n)
{
	int64_t		i,
				j;

	for (i = 1; i < n; i++)
	{
		uint64_t	v = a[i];

		for (j = i; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

/* Digit layout for sorting bits [lowbit, highbit]: passes and their width. */
static void
digit_plan(int lowbit, int highbit, int *passes, int *width)
{
	int			nbits = highbit - lowbit + 1;

	*passes = (nbits + RADIX_MAX_BITS - 1) / RADIX_MAX_BITS;
	*width = (nbits + *passes - 1) / *passes;
}

/*
 * Sort a[0..n) by bits [lowbit, highbit] of the keys (the other bits must
 * agree on all keys for a full order) on the calling thread; tmp has room
 * for n keys.  The result is in a.
 */
void
cpu_sort_u64_seq(uint64_t *a, uint64_t *tmp, int64_t n, int lowbit, int highbit)
{
	int64_t		cnt[RADIX_BUCKETS];
	int			passes,
				width,
				p;
	uint64_t   *src = a,
			   *dst = tmp;

	if (n < 48)
	{
		insertion_u64(a, n);
		return;
	}
	if (highbit < lowbit)
		return;
	digit_plan(lowbit, highbit, &passes, &width);
	for (p = 0; p < passes; p++)
	{
		int			shift = lowbit + p * width;
		uint64_t	mask = (UINT64_C(1) << width) - 1;
		int64_t		sum = 0,
					i;
		int			b;
		uint64_t   *t;

		memset(cnt, 0, sizeof(int64_t) << width);
		for (i = 0; i < n; i++)
			cnt[(src[i] >> shift) & mask]++;
		for (b = 0; b < (1 << width); b++)
		{
			int64_t		c = cnt[b];

			cnt[b] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
		{
			uint64_t	v = src[i];

			dst[cnt[(v >> shift) & mask]++] = v;
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, (size_t) n * sizeof(uint64_t));
}

/* Shared state of a parallel radix sort. */
typedef struct RadixPar
{
	uint64_t   *src;
	uint64_t   *dst;
	int64_t		n;
	int			shift;
	int			width;
	int64_t    *hist;			/* [tid][bucket] */
	uint64_t	or_[CPU_MAX_THREADS];
	uint64_t	and_[CPU_MAX_THREADS];
} RadixPar;

/* Task: OR and AND of the keys of this thread's share. */
static void
radix_orand_task(void *arg, int tid, int nt)
{
	RadixPar   *rp = arg;
	int64_t		from,
				to,
				i;
	uint64_t	o = 0,
				a = ~UINT64_C(0);

	cpu_split(rp->n, tid, nt, &from, &to);
	for (i = from; i < to; i++)
	{
		o |= rp->src[i];
		a &= rp->src[i];
	}
	rp->or_[tid] = o;
	rp->and_[tid] = a;
}

/* Task: histogram of this thread's share for the current digit. */
static void
radix_hist_task(void *arg, int tid, int nt)
{
	RadixPar   *rp = arg;
	int64_t		from,
				to,
				i;
	int64_t    *h = rp->hist + (size_t) tid * RADIX_BUCKETS;
	uint64_t	mask = (UINT64_C(1) << rp->width) - 1;
	int			shift = rp->shift;

	cpu_split(rp->n, tid, nt, &from, &to);
	memset(h, 0, sizeof(int64_t) << rp->width);
	for (i = from; i < to; i++)
		h[(rp->src[i] >> shift) & mask]++;
}

/* Task: scatter this thread's share to its bucket offsets. */
static void
radix_scatter_task(void *arg, int tid, int nt)
{
	RadixPar   *rp = arg;
	int64_t		from,
				to,
				i;
	int64_t    *h = rp->hist + (size_t) tid * RADIX_BUCKETS;
	uint64_t	mask = (UINT64_C(1) << rp->width) - 1;
	int			shift = rp->shift;
	uint64_t   *src = rp->src,
			   *dst = rp->dst;

	cpu_split(rp->n, tid, nt, &from, &to);
	for (i = from; i < to; i++)
	{
		uint64_t	v = src[i];

		dst[h[(v >> shift) & mask]++] = v;
	}
}

/*
 * Sort n keys.  tmp has room for n keys.  Returns the buffer holding the
 * result (a or tmp).  Only the bits that differ between keys are sorted on.
 */
uint64_t *
cpu_sort_u64(CpuCtx *ctx, uint64_t *a, uint64_t *tmp, int64_t n)
{
	RadixPar	rp;
	int			nt = ctx->nthreads;
	uint64_t	o = 0,
				an = ~UINT64_C(0),
				vary;
	int			lowbit,
				highbit,
				passes,
				width,
				p,
				t;

	if (n < PAR_MIN_N || nt <= 1)
	{
		for (int64_t i = 0; i < n; i++)
		{
			o |= a[i];
			an &= a[i];
		}
		vary = o ^ an;
		if (vary)
			cpu_sort_u64_seq(a, tmp, n, __builtin_ctzll(vary), 63 - __builtin_clzll(vary));
		return a;
	}
	memset(&rp, 0, sizeof(rp));
	rp.src = a;
	rp.dst = tmp;
	rp.n = n;
	cpu_parallel(nt, radix_orand_task, &rp);
	for (t = 0; t < nt; t++)
	{
		o |= rp.or_[t];
		an &= rp.and_[t];
	}
	vary = o ^ an;
	if (vary == 0)
		return a;
	lowbit = __builtin_ctzll(vary);
	highbit = 63 - __builtin_clzll(vary);
	digit_plan(lowbit, highbit, &passes, &width);
	rp.hist = gdl_alloc(sizeof(int64_t) * RADIX_BUCKETS * nt);
	for (p = 0; p < passes; p++)
	{
		int64_t		sum = 0;
		int			b;
		uint64_t   *sw;

		rp.shift = lowbit + p * width;
		rp.width = width;
		cpu_parallel(nt, radix_hist_task, &rp);
		for (b = 0; b < (1 << width); b++)
			for (t = 0; t < nt; t++)
			{
				int64_t    *h = rp.hist + (size_t) t * RADIX_BUCKETS + b;
				int64_t		c = *h;

				*h = sum;
				sum += c;
			}
		cpu_parallel(nt, radix_scatter_task, &rp);
		sw = rp.src;
		rp.src = rp.dst;
		rp.dst = sw;
	}
	gdl_free(rp.hist);
	return rp.src;
}

/* Shared state of a segment sort. */
typedef struct SegPar
{
	uint64_t   *a;
	uint64_t   *tmp;
	int64_t		n;
	int			segshift;
	int64_t    *bounds;			/* start of each thread's share, aligned to segments */
} SegPar;

/* Task: sort every segment in this thread's share by the low bits. */
static void
seg_task(void *arg, int tid, int nt)
{
	SegPar	   *sp = arg;
	int64_t		i = sp->bounds[tid],
				end = sp->bounds[tid + 1];
	int			shift = sp->segshift;

	while (i < end)
	{
		uint64_t	seg = shift >= 64 ? 0 : sp->a[i] >> shift;
		int64_t		j = i + 1;
		uint64_t	o = 0,
					an = ~UINT64_C(0),
					vary;
		int64_t		k;

		while (j < end && (shift >= 64 ? 0 : sp->a[j] >> shift) == seg)
			j++;
		for (k = i; k < j; k++)
		{
			o |= sp->a[k];
			an &= sp->a[k];
		}
		vary = o ^ an;
		if (vary)
		{
			if (j - i < 48)
				insertion_u64(sp->a + i, j - i);
			else
				cpu_sort_u64_seq(sp->a + i, sp->tmp + i, j - i,
								 __builtin_ctzll(vary), 63 - __builtin_clzll(vary));
		}
		i = j;
	}
}

/*
 * Sort keys that are already ordered by their bits above segshift: each run
 * of equal high bits is sorted on its own (in cache), in parallel.
 */
void
cpu_sort_segments(CpuCtx *ctx, uint64_t *a, uint64_t *tmp, int64_t n, int segshift)
{
	SegPar		sp;
	int64_t		bounds[CPU_MAX_THREADS + 1];
	int			nt = ctx->nthreads,
				t;

	if (n < PAR_MIN_N)
		nt = 1;
	sp.a = a;
	sp.tmp = tmp;
	sp.n = n;
	sp.segshift = segshift;
	sp.bounds = bounds;
	bounds[0] = 0;
	for (t = 1; t < nt; t++)
	{
		int64_t		b = (int64_t) ((__int128) n * t / nt);

		if (b < bounds[t - 1])
			b = bounds[t - 1];
		/* move to the start of a segment */
		while (b > 0 && b < n && segshift < 64 && (a[b] >> segshift) == (a[b - 1] >> segshift))
			b++;
		if (segshift >= 64)
			b = n;
		bounds[t] = b;
	}
	bounds[nt] = n;
	cpu_parallel(nt, seg_task, &sp);
}

/*
 * Stable sort of (k, v) pairs by k on one thread; tk/tv are scratch of n.
 * The result is in k/v.
 */
void
cpu_sort_pairs(uint64_t *k, int64_t *v, uint64_t *tk, int64_t *tv, int64_t n)
{
	int64_t		cnt[RADIX_BUCKETS];
	uint64_t	o = 0,
				an = ~UINT64_C(0),
				vary;
	int			lowbit,
				highbit,
				passes,
				width,
				p;
	uint64_t   *sk = k,
			   *dk = tk;
	int64_t    *sv = v,
			   *dv = tv;
	int64_t		i;

	for (i = 0; i < n; i++)
	{
		o |= k[i];
		an &= k[i];
	}
	vary = o ^ an;
	if (vary == 0)
		return;
	lowbit = __builtin_ctzll(vary);
	highbit = 63 - __builtin_clzll(vary);
	digit_plan(lowbit, highbit, &passes, &width);
	for (p = 0; p < passes; p++)
	{
		int			shift = lowbit + p * width;
		uint64_t	mask = (UINT64_C(1) << width) - 1;
		int64_t		sum = 0;
		int			b;
		uint64_t   *t;
		int64_t    *tw;

		memset(cnt, 0, sizeof(int64_t) << width);
		for (i = 0; i < n; i++)
			cnt[(sk[i] >> shift) & mask]++;
		for (b = 0; b < (1 << width); b++)
		{
			int64_t		c = cnt[b];

			cnt[b] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
		{
			int64_t		d = cnt[(sk[i] >> shift) & mask]++;

			dk[d] = sk[i];
			dv[d] = sv[i];
		}
		t = sk;
		sk = dk;
		dk = t;
		tw = sv;
		sv = dv;
		dv = tw;
	}
	if (sk != k)
	{
		memcpy(k, sk, (size_t) n * sizeof(uint64_t));
		memcpy(v, sv, (size_t) n * sizeof(int64_t));
	}
}

/*
 * A permutation of r's rows sorting them lexicographically (signed) by the
 * given columns: stable LSD passes, last column first.  gdl_alloc'ed.
 */
int64_t *
cpu_sort_perm_cols(CpuCtx *ctx, const CpuRel *r, int ncols, const int *cols)
{
	int64_t		n = r->n;
	int64_t    *perm = gdl_alloc(sizeof(int64_t) * (n > 0 ? n : 1));
	int64_t    *tv = gdl_alloc(sizeof(int64_t) * (n > 0 ? n : 1));
	uint64_t   *k = gdl_alloc(sizeof(uint64_t) * (n > 0 ? n : 1));
	uint64_t   *tk = gdl_alloc(sizeof(uint64_t) * (n > 0 ? n : 1));
	int64_t		i;
	int			c;

	for (i = 0; i < n; i++)
		perm[i] = i;
	for (c = ncols - 1; c >= 0; c--)
	{
		for (i = 0; i < n; i++)
			k[i] = (uint64_t) cpu_get(r, perm[i], cols[c]) ^ (UINT64_C(1) << 63);
		cpu_sort_pairs(k, perm, tk, tv, n);
	}
	gdl_free(tv);
	gdl_free(k);
	gdl_free(tk);
	return perm;
}

/* Remove adjacent duplicates of sorted a[0..n); returns the new length. */
int64_t
cpu_unique_u64(CpuCtx *ctx, uint64_t *a, int64_t n)
{
	int64_t		i,
				m;

	if (n == 0)
		return 0;
	for (i = 1, m = 1; i < n; i++)
		if (a[i] != a[m - 1])
			a[m++] = a[i];
	return m;
}
