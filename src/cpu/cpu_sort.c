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

/* In-place quicksort (median of three), insertion sort below 32 keys. */
static void
quick_u64(uint64_t *a, int64_t n)
{
	while (n > 32)
	{
		uint64_t	x = a[0],
					y = a[n / 2],
					z = a[n - 1],
					p,
					t;
		int64_t		i = 0,
					j = n - 1;

		p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
		for (;;)
		{
			while (a[i] < p)
				i++;
			while (a[j] > p)
				j--;
			if (i >= j)
				break;
			t = a[i];
			a[i] = a[j];
			a[j] = t;
			i++;
			j--;
		}
		/* recurse into the smaller part, loop on the larger */
		if (j + 1 < n - j - 1)
		{
			quick_u64(a, j + 1);
			a += j + 1;
			n -= j + 1;
		}
		else
		{
			quick_u64(a + j + 1, n - j - 1);
			n = j + 1;
		}
	}
	insertion_u64(a, n);
}

/* Digit layout for sorting bits [lowbit, highbit]: passes and their width. */
static void
digit_plan(int lowbit, int highbit, int *passes, int *width)
{
	int			nbits = highbit - lowbit + 1;

	*passes = (nbits + RADIX_MAX_BITS - 1) / RADIX_MAX_BITS;
	*width = (nbits + *passes - 1) / *passes;
}

/* The bits that differ between some of keys[0..n): OR xor AND of them all. */
static uint64_t
key_bits_vary(const uint64_t *keys, int64_t n)
{
	uint64_t	o = 0,
				an = ~UINT64_C(0);

	for (int64_t i = 0; i < n; i++)
	{
		o |= keys[i];
		an &= keys[i];
	}
	return o ^ an;
}

/*
 * One LSD pass's bucket starts: cnt[b] = how many of keys[0..n) have a
 * digit (width bits at shift) below b.
 */
static void
digit_offsets(const uint64_t *keys, int64_t n, int shift, int width, int64_t *cnt)
{
	uint64_t	mask = (UINT64_C(1) << width) - 1;
	int64_t		sum = 0;

	memset(cnt, 0, sizeof(int64_t) << width);
	for (int64_t i = 0; i < n; i++)
		cnt[(keys[i] >> shift) & mask]++;
	for (int b = 0; b < (1 << width); b++)
	{
		int64_t		c = cnt[b];

		cnt[b] = sum;
		sum += c;
	}
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
		int64_t		i;
		uint64_t   *t;

		digit_offsets(src, n, shift, width, cnt);
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
	bool		scatter;		/* radix_digit_task: scatter (else count) */
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

	gdl_split(rp->n, tid, nt, &from, &to);
	for (i = from; i < to; i++)
	{
		o |= rp->src[i];
		a &= rp->src[i];
	}
	rp->or_[tid] = o;
	rp->and_[tid] = a;
}

/*
 * Task: one pass over this thread's share for the current digit: its
 * histogram, or (rp->scatter) its keys scattered to its bucket offsets.
 * The two steps of a pass read the share and the digit alike.
 */
static void
radix_digit_task(void *arg, int tid, int nt)
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

	gdl_split(rp->n, tid, nt, &from, &to);
	if (!rp->scatter)
	{
		memset(h, 0, sizeof(int64_t) << rp->width);
		for (i = from; i < to; i++)
			h[(src[i] >> shift) & mask]++;
		return;
	}
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
		vary = key_bits_vary(a, n);
		if (vary)
			cpu_sort_u64_seq(a, tmp, n, __builtin_ctzll(vary), 63 - __builtin_clzll(vary));
		return a;
	}
	memset(&rp, 0, sizeof(rp));
	rp.src = a;
	rp.dst = tmp;
	rp.n = n;
	gdl_parallel(nt, radix_orand_task, &rp);
	gdl_check_stop();	/* stopped tasks leave partial results: raise */
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
		rp.scatter = false;
		gdl_parallel(nt, radix_digit_task, &rp);
		gdl_check_stop();	/* stopped tasks leave partial results: raise */
		for (b = 0; b < (1 << width); b++)
			for (t = 0; t < nt; t++)
			{
				int64_t    *h = rp.hist + (size_t) t * RADIX_BUCKETS + b;
				int64_t		c = *h;

				*h = sum;
				sum += c;
			}
		rp.scatter = true;
		gdl_parallel(nt, radix_digit_task, &rp);
		gdl_check_stop();	/* stopped tasks leave partial results: raise */
		sw = rp.src;
		rp.src = rp.dst;
		rp.dst = sw;
	}
	gdl_free(rp.hist);
	return rp.src;
}

#define SEG_BITMAP_BITS (1 << 20)

/* Shared state of a segment sort + unique. */
typedef struct SegUniq
{
	const uint64_t *src;
	uint64_t   *dst;
	int			segshift;
	int64_t		bounds[CPU_MAX_THREADS + 1];
	int64_t		cnt[CPU_MAX_THREADS];
	uint64_t   *bitmaps;		/* SEG_BITMAP_BITS / 64 words per thread, zeroed */
} SegUniq;

/*
 * Task: sort and unique every segment of this thread's share of src,
 * writing the result compacted to dst from the share's start.  A segment
 * whose low bits span a small range goes through a bitmap (mark, then scan:
 * sorted and unique at once); others are copied and sorted in place.
 */
static void
seg_uniq_task(void *arg, int tid, int nt)
{
	SegUniq    *su = arg;
	const uint64_t *a = su->src;
	uint64_t   *d = su->dst;
	int64_t		i = su->bounds[tid],
				end = su->bounds[tid + 1],
				out = su->bounds[tid];
	int			shift = su->segshift;
	uint64_t	lowmask = shift >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << shift) - 1;
	uint64_t   *bm = su->bitmaps + (size_t) tid * (SEG_BITMAP_BITS / 64);
	int64_t		polled = i;

	while (i < end)
	{
		/* every ~64K keys, poll: an interrupt leaves the rest (the caller raises) */
		if (i - polled > 65536)
		{
			polled = i;
			if (gdl_interrupt_pending())
				break;
		}
		uint64_t	high = a[i] & ~lowmask;
		uint64_t	mn = a[i] & lowmask,
					mx = mn;
		int64_t		j = i + 1,
					k,
					n;

		while (j < end && (a[j] & ~lowmask) == high)
		{
			uint64_t	l = a[j] & lowmask;

			if (l < mn)
				mn = l;
			if (l > mx)
				mx = l;
			j++;
		}
		n = j - i;
		if (mx - mn < SEG_BITMAP_BITS && (mx - mn) / 64 <= (uint64_t) (4 * n + 64))
		{
			uint64_t	w0 = mn / 64,
						w1 = mx / 64,
						w;

			for (k = i; k < j; k++)
			{
				uint64_t	l = (a[k] & lowmask) - w0 * 64;

				bm[l >> 6] |= UINT64_C(1) << (l & 63);
			}
			for (w = 0; w <= w1 - w0; w++)
			{
				uint64_t	bits = bm[w];

				bm[w] = 0;
				while (bits)
				{
					int			b = __builtin_ctzll(bits);

					d[out++] = high | ((w0 + w) * 64 + (uint64_t) b);
					bits &= bits - 1;
				}
			}
		}
		else
		{
			int64_t		o0 = out;

			memmove(d + out, a + i, sizeof(uint64_t) * n);
			quick_u64(d + o0, n);
			out = o0 + 1;
			for (k = o0 + 1; k < o0 + n; k++)
				if (d[k] != d[out - 1])
					d[out++] = d[k];
		}
		i = j;
	}
	su->cnt[tid] = out - su->bounds[tid];
}

/*
 * Sort and unique keys src[0..n) that are already ordered by their bits
 * above segshift, into dst (room for n; may be src itself); returns the
 * number of unique keys.
 */
int64_t
cpu_sort_unique_segments(CpuCtx *ctx, const uint64_t *src, uint64_t *dst, int64_t n, int segshift)
{
	SegUniq		su;
	int			nt = n < PAR_MIN_N ? 1 : ctx->nthreads,
				t;
	int64_t		pos = 0;
	uint64_t	lowmask = segshift >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << segshift) - 1;

	su.src = src;
	su.dst = dst;
	su.segshift = segshift;
	su.bounds[0] = 0;
	for (t = 1; t < nt; t++)
	{
		int64_t		b = (int64_t) ((__int128) n * t / nt);

		if (b < su.bounds[t - 1])
			b = su.bounds[t - 1];
		while (b > 0 && b < n && (src[b] & ~lowmask) == (src[b - 1] & ~lowmask))
			b++;
		su.bounds[t] = b;
	}
	su.bounds[nt] = n;
	su.bitmaps = gdl_alloc(sizeof(uint64_t) * (SEG_BITMAP_BITS / 64) * nt);
	gdl_parallel(nt, seg_uniq_task, &su);
	gdl_check_stop();	/* stopped tasks leave partial results: raise */
	gdl_free(su.bitmaps);
	for (t = 0; t < nt; t++)
	{
		if (su.bounds[t] != pos && su.cnt[t] > 0)
			memmove(dst + pos, dst + su.bounds[t], sizeof(uint64_t) * su.cnt[t]);
		pos += su.cnt[t];
	}
	return pos;
}

/*
 * Stable sort of (k, v) pairs by k on one thread; tk/tv are scratch of n.
 * The result is in k/v.
 */
void
cpu_sort_pairs(uint64_t *k, int64_t *v, uint64_t *tk, int64_t *tv, int64_t n)
{
	int64_t		cnt[RADIX_BUCKETS];
	uint64_t	vary = key_bits_vary(k, n);
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

	if (vary == 0)
		return;
	lowbit = __builtin_ctzll(vary);
	highbit = 63 - __builtin_clzll(vary);
	digit_plan(lowbit, highbit, &passes, &width);
	for (p = 0; p < passes; p++)
	{
		int			shift = lowbit + p * width;
		uint64_t	mask = (UINT64_C(1) << width) - 1;
		uint64_t   *t;
		int64_t    *tw;

		digit_offsets(sk, n, shift, width, cnt);
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
