/*
 * join.cu — equi-join and anti-join, with join indexes cached on the right
 * relation's handle (relations are immutable; the engine passes the
 * relation reused across rounds as R).
 *
 * Index.  R's rows ordered by a 64-bit join key, probed by binary search or,
 * when the key is one small non-negative column, by a dense offset array
 * (CSR).  A packed R needs no row ids: its index is its own keys, sorted
 * with the key column in the high half (SELF mode), so a probe returns R's
 * rows directly (and a sorted R with key column 0 is its own index).  Wide
 * R: sorted (join key, row id) pairs; the join key is the value itself for
 * one column, two 32-bit values packed for two, else a hash whose matches
 * are verified column by column.
 *
 * Join.  Count then materialize: one kernel counts each L row's matches, a
 * CUB scan gives output offsets, one host sync learns the total, then an
 * expand kernel writes the rows: each warp takes 32 consecutive L rows and
 * spreads their matches over its lanes (a warp scan and a shuffle-based
 * search), so writes are coalesced and one busy key does not stall a
 * thread.
 */
#include <stdlib.h>
#include <string.h>

#include <cub/cub.cuh>

#include "cu_int.cuh"

/* How a row's join key is formed from its key columns. */
enum
{
	JK_ONE,						/* one column, its 64-bit pattern */
	JK_ONE32,					/* one column in [0, 2^32) (else no match) */
	JK_TWO32,					/* two columns in [0, 2^32): a << 32 | b */
	JK_HASH						/* any columns: a hash, matches verified */
};

/* The key columns of one side. */
struct JSpec
{
	int			nkeys;
	int			mode;
	int			cols[CU_MAX_ARITY];
};

/* A join index as kernels see it. */
struct DIx
{
	int			shift;			/* join key = sk[i] >> shift */
	int64_t		n;
	const uint64_t *sk;
	const uint32_t *perm;		/* row ids, or NULL: sk are the rows (SELF) */
	const int64_t *off;			/* dense offsets, or NULL: binary search */
	int64_t		dn;				/* keys covered by off: [0, dn) */
};

/* A join index cached on a relation. */
struct CuIndex
{
	CuIndex    *next;
	int			nkeys;
	int			keys[CU_MAX_ARITY];
	int			mode;			/* JK_* */
	bool		self;			/* sk are R's packed rows */
	bool		swap;			/* self, arity 2: sk = col1 << 32 | col0 */
	int			shift;
	int64_t		n;
	uint64_t   *sk;
	uint32_t   *perm;
	int64_t    *off;
	int64_t		dn;
	bool		own_sk;			/* sk is ours (else R's own keys) */
};

/* The output columns of a join. */
struct OutSpec
{
	int			nout;
	int8_t		side[CU_MAX_ARITY];
	int8_t		col[CU_MAX_ARITY];
};

/* ------------------------------------------------------- device helpers */

/* The join key of row i of r; false when the row can match nothing. */
static __device__ __forceinline__ bool
jkey_of(const DRel &r, int64_t i, const JSpec &s, uint64_t &jk)
{
	if (s.mode == JK_ONE)
	{
		jk = (uint64_t) dget(r, i, s.cols[0]);
		return true;
	}
	if (s.mode == JK_ONE32)
	{
		uint64_t	v = (uint64_t) dget(r, i, s.cols[0]);

		jk = v;
		return v <= 0xffffffffULL;
	}
	if (s.mode == JK_TWO32)
	{
		uint64_t	a = (uint64_t) dget(r, i, s.cols[0]);
		uint64_t	b = (uint64_t) dget(r, i, s.cols[1]);

		jk = (a << 32) | b;
		return a <= 0xffffffffULL && b <= 0xffffffffULL;
	}
	{
		uint64_t	h = 0x9e3779b97f4a7c15ULL;

		for (int k = 0; k < s.nkeys; k++)
			h = cu_mix(h ^ (uint64_t) dget(r, i, s.cols[k])) + (uint64_t) k;
		jk = h;
		return true;
	}
}

/* The index positions [s, e) holding join key jk. */
static __device__ __forceinline__ void
ix_range(const DIx &ix, uint64_t jk, int64_t &s, int64_t &e)
{
	if (ix.off)
	{
		if (jk < (uint64_t) ix.dn)
		{
			s = ix.off[jk];
			e = ix.off[jk + 1];
		}
		else
			s = e = 0;
		return;
	}
	int64_t		lo = 0,
				hi = ix.n;

	while (lo < hi)
	{
		int64_t		mid = (lo + hi) >> 1;

		if ((ix.sk[mid] >> ix.shift) < jk)
			lo = mid + 1;
		else
			hi = mid;
	}
	s = lo;
	hi = ix.n;
	while (lo < hi)
	{
		int64_t		mid = (lo + hi) >> 1;

		if ((ix.sk[mid] >> ix.shift) <= jk)
			lo = mid + 1;
		else
			hi = mid;
	}
	e = lo;
}

/* Whether L row li and R row ri agree on every key column (hash mode). */
static __device__ __forceinline__ bool
keys_match(const DRel &L, int64_t li, const JSpec &ls, const DRel &R, int64_t ri, const JSpec &rs)
{
	for (int k = 0; k < ls.nkeys; k++)
		if (dget(L, li, ls.cols[k]) != dget(R, ri, rs.cols[k]))
			return false;
	return true;
}

/* -------------------------------------------------------------- kernels */

/* Kernel: jk[i] and perm[i] = i for the rows of R (index build). */
static __global__ void
k_ix_keys(DRel R, JSpec rs, uint64_t *jk, uint32_t *perm)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < R.n; i += stride)
	{
		uint64_t	k = 0;

		(void) jkey_of(R, i, rs, k);
		jk[i] = k;
		perm[i] = (uint32_t) i;
	}
}

/* Kernel: packed words with R's key column high (swap: exchange halves). */
static __global__ void
k_ix_words(const uint64_t *keys, int64_t n, bool swap, uint64_t *out)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
	{
		uint64_t	k = keys[i];

		out[i] = swap ? ((k << 32) | (k >> 32)) : k;
	}
}

/* Kernel: off[v] = first index position with key >= v, for v in [0, dn]. */
static __global__ void
k_ix_offsets(const uint64_t *sk, int64_t n, int shift, int64_t *off, int64_t dn)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t v = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; v <= dn; v += stride)
	{
		int64_t		lo = 0,
					hi = n;

		while (lo < hi)
		{
			int64_t		mid = (lo + hi) >> 1;

			if ((int64_t) (sk[mid] >> shift) < v)
				lo = mid + 1;
			else
				hi = mid;
		}
		off[v] = lo;
	}
}

/*
 * Kernel: matches of each L row.  With 'flags' (anti-join): flags[i] = no
 * match.  Else cnt[i] = matches and start[i] = first index position.
 */
static __global__ void
k_join_count(DRel L, JSpec ls, DIx ix, DRel R, JSpec rs, bool verify,
			 int64_t *cnt, int64_t *start, uint8_t *flags)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < L.n; i += stride)
	{
		uint64_t	jk = 0;
		int64_t		s = 0,
					e = 0,
					c = 0;

		if (jkey_of(L, i, ls, jk))
			ix_range(ix, jk, s, e);
		if (!verify)
			c = e - s;
		else
			for (int64_t p = s; p < e; p++)
				if (keys_match(L, i, ls, R, ix.perm[p], rs))
					c++;
		if (flags)
			flags[i] = c == 0 ? 1 : 0;
		else
		{
			cnt[i] = c;
			start[i] = s;
		}
	}
}

/* Values of the output row for L row li and R row ri, written at position o. */
template < int FIXED >
static __device__ __forceinline__ void
emit_row(const DOut &o, int64_t pos, const DRel &L, int64_t li, const DRel &R, int64_t ri,
		 const OutSpec &os)
{
	if constexpr (FIXED > 0)
	{
		int64_t		v[FIXED < 2 ? 2 : FIXED];

#pragma unroll
		for (int j = 0; j < FIXED; j++)
			v[j] = os.side[j] == 0 ? dget(L, li, os.col[j]) : dget(R, ri, os.col[j]);
		dput(o, pos, v);
	}
	else
	{
		int64_t		v[CU_MAX_ARITY];

		for (int j = 0; j < os.nout; j++)
			v[j] = os.side[j] == 0 ? dget(L, li, os.col[j]) : dget(R, ri, os.col[j]);
		dput(o, pos, v);
	}
}

/*
 * Kernel: write the matches of exact-key joins.  Each warp takes 32
 * consecutive L rows, scans their counts, and its lanes walk the warp's
 * output positions t, finding the row of t by a shuffle binary search.
 */
template < int FIXED >
static __global__ void
k_join_expand(DRel L, DRel R, const uint32_t *perm, const int64_t *cnt, const int64_t *start,
			  const int64_t *off, OutSpec os, DOut o)
{
	const unsigned full = 0xffffffffu;
	int			lane = threadIdx.x & 31;
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t base = (int64_t) blockIdx.x * blockDim.x + threadIdx.x - lane; base < L.n;
		 base += stride)
	{
		int64_t		i = base + lane;
		int64_t		c = i < L.n ? cnt[i] : 0;
		int64_t		st = i < L.n ? start[i] : 0;
		int64_t		incl = c;
		int64_t		total,
					obase;

		for (int d = 1; d < 32; d <<= 1)
		{
			int64_t		y = __shfl_up_sync(full, incl, d);

			if (lane >= d)
				incl += y;
		}
		total = __shfl_sync(full, incl, 31);
		obase = __shfl_sync(full, lane == 0 ? off[base] : 0, 0);
		for (int64_t t0 = 0; t0 < total; t0 += 32)
		{
			int64_t		t = t0 + lane;
			int			k = 0;

			for (int step = 16; step >= 1; step >>= 1)
			{
				int64_t		v = __shfl_sync(full, incl, k + step - 1);

				if (v <= t)
					k += step;
			}
			int64_t		ck = __shfl_sync(full, c, k);
			int64_t		ik = __shfl_sync(full, incl, k);
			int64_t		sk = __shfl_sync(full, st, k);

			if (t < total)
			{
				int64_t		p = sk + (t - (ik - ck));
				int64_t		ri = perm ? (int64_t) perm[p] : p;

				emit_row<FIXED>(o, obase + t, L, base + k, R, ri, os);
			}
		}
	}
}

/* Kernel: write the verified matches of hash-key joins, one thread per L row. */
static __global__ void
k_join_hash_emit(DRel L, JSpec ls, DIx ix, DRel R, JSpec rs, const int64_t *cnt,
				 const int64_t *off, OutSpec os, DOut o)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < L.n; i += stride)
	{
		uint64_t	jk = 0;
		int64_t		s = 0,
					e = 0,
					w = off[i];

		if (cnt[i] == 0 || !jkey_of(L, i, ls, jk))
			continue;
		ix_range(ix, jk, s, e);
		for (int64_t p = s; p < e; p++)
		{
			int64_t		ri = ix.perm[p];

			if (keys_match(L, i, ls, R, ri, rs))
				emit_row<0>(o, w++, L, i, R, ri, os);
		}
	}
}

/* Kernel: the cross product, output row q = (L row q / R.n, R row q % R.n). */
static __global__ void
k_join_cross(DRel L, DRel R, int64_t total, OutSpec os, DOut o)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t q = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; q < total; q += stride)
		emit_row<0>(o, q, L, q / R.n, R, q % R.n, os);
}

/* --------------------------------------------------------------- indexes */

/* Free one index. */
static void
index_free(CuCtx *c, CuIndex *ix)
{
	if (ix->own_sk)
		pool_put(c, ix->sk);
	pool_put(c, ix->perm);
	pool_put(c, ix->off);
	free(ix);
}

/* Free the indexes cached on a relation. */
void
index_free_all(CuCtx *c, CuRel *r)
{
	while (r->indexes)
	{
		CuIndex    *ix = r->indexes;

		r->indexes = ix->next;
		index_free(c, ix);
	}
}

/* Choose how an index over R's key columns is laid out. */
static void
index_plan(const CuRel *R, int nkeys, const int *keys, CuIndex *ix)
{
	ix->nkeys = nkeys;
	memcpy(ix->keys, keys, sizeof(int) * nkeys);
	ix->n = R->n;
	if (R->layout == L_PACKED && R->arity == 1 && nkeys == 1)
	{
		ix->self = true;
		ix->mode = JK_ONE;
		ix->shift = 0;
	}
	else if (R->layout == L_PACKED && R->arity == 2 && nkeys == 1)
	{
		ix->self = true;
		ix->mode = JK_ONE32;
		ix->shift = 32;
		ix->swap = keys[0] == 1;
	}
	else if (R->layout == L_PACKED && R->arity == 2 && nkeys == 2 && keys[0] != keys[1])
	{
		ix->self = true;
		ix->mode = JK_TWO32;
		ix->shift = 0;
		ix->swap = keys[0] == 1;
	}
	else
	{
		ix->self = false;
		ix->shift = 0;
		if (nkeys == 1)
			ix->mode = JK_ONE;
		else if (nkeys == 2 &&
				 R->lo[keys[0]] >= 0 && R->hi[keys[0]] <= (int64_t) 0xffffffffLL &&
				 R->lo[keys[1]] >= 0 && R->hi[keys[1]] <= (int64_t) 0xffffffffLL)
			ix->mode = JK_TWO32;
		else
			ix->mode = JK_HASH;
	}
}

/* Radix-sort bit range of R's join keys under plan ix. */
static int
index_end_bit(const CuRel *R, const CuIndex *ix)
{
	int			k0 = ix->keys[0];

	if (ix->mode == JK_HASH || R->lo[k0] < 0 || R->lo[k0] > R->hi[k0])
		return 64;
	if (ix->mode == JK_ONE32 || ix->mode == JK_TWO32)
		return 32 + cu_bits((uint64_t) R->hi[k0]);
	return cu_bits((uint64_t) R->hi[k0]) < 1 ? 1 : cu_bits((uint64_t) R->hi[k0]);
}

/* Build the index of plan ix over R (R->n > 0). */
static int
index_build(CuCtx *c, CuRel *R, CuIndex *ix)
{
	int64_t		n = R->n;
	int			k0 = ix->keys[0];
	DBuf		sk,
				alt;

	if (ix->self)
	{
		bool		natural = !ix->swap;

		if (natural && R->sorted && !R->st->is_log)
		{
			ix->sk = (uint64_t *) rel_keys(R);
			ix->own_sk = false;
		}
		else
		{
			CU_OK(sk.get(c, sizeof(uint64_t) * n));
			CU_OK(alt.get(c, sizeof(uint64_t) * n));
			c->cnt.launches++;
			k_ix_words<<<cu_grid(n), CU_BLOCK, 0, c->stream>>>(rel_keys(R), n, ix->swap,
															   sk.as<uint64_t>());
			CU_LAUNCHED(c);
			CU_OK(sort_keys(c, sk, alt, n, R->arity == 1 ? index_end_bit(R, ix) :
							32 + cu_bits((uint64_t) (R->hi[k0] < 0 ? 0 : R->hi[k0]))));
			ix->sk = (uint64_t *) sk.take();
			ix->own_sk = true;
		}
	}
	else
	{
		JSpec		rs;
		DBuf		perm,
					palt;

		if (n > (int64_t) UINT32_MAX)
			return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "join input too large (%lld rows)", (long long) n);
		rs.nkeys = ix->nkeys;
		rs.mode = ix->mode;
		memcpy(rs.cols, ix->keys, sizeof(int) * ix->nkeys);
		CU_OK(sk.get(c, sizeof(uint64_t) * n));
		CU_OK(alt.get(c, sizeof(uint64_t) * n));
		CU_OK(perm.get(c, sizeof(uint32_t) * n));
		CU_OK(palt.get(c, sizeof(uint32_t) * n));
		c->cnt.launches++;
		k_ix_keys<<<cu_grid(n), CU_BLOCK, 0, c->stream>>>(rel_drel(R), rs, sk.as<uint64_t>(),
														  perm.as<uint32_t>());
		CU_LAUNCHED(c);
		{
			cub::DoubleBuffer<uint64_t> dk(sk.as<uint64_t>(), alt.as<uint64_t>());
			cub::DoubleBuffer<uint32_t> dv(perm.as<uint32_t>(), palt.as<uint32_t>());
			int			eb = index_end_bit(R, ix);

			CU_OK(cu_cub(c, [&](void *t, size_t &b) {
				return cub::DeviceRadixSort::SortPairs(t, b, dk, dv, n, 0, eb, c->stream);
			}));
			ix->sk = (uint64_t *) (dk.Current() == sk.as<uint64_t>() ? sk.take() : alt.take());
			ix->perm = (uint32_t *) (dv.Current() == perm.as<uint32_t>() ? perm.take() : palt.take());
			ix->own_sk = true;
		}
	}

	/* dense offsets for one small non-negative key column */
	if ((ix->mode == JK_ONE || ix->mode == JK_ONE32) && R->lo[k0] >= 0 &&
		R->hi[k0] < (4 * n > (1 << 20) ? 4 * n : (1 << 20)))
	{
		DBuf		off;

		ix->dn = R->hi[k0] + 1;
		CU_OK(off.get(c, sizeof(int64_t) * (ix->dn + 1)));
		c->cnt.launches++;
		k_ix_offsets<<<cu_grid(ix->dn + 1), CU_BLOCK, 0, c->stream>>>(ix->sk, n, ix->shift,
																	   off.as<int64_t>(), ix->dn);
		CU_LAUNCHED(c);
		ix->off = (int64_t *) off.take();
	}
	return GDL_BK_OK;
}

/* The index of R over keys (cached on R; built on first use). */
static int
index_get(CuCtx *c, CuRel *R, int nkeys, const int *keys, CuIndex **out)
{
	CuIndex    *ix;
	int			s;

	for (ix = R->indexes; ix; ix = ix->next)
		if (ix->nkeys == nkeys && memcmp(ix->keys, keys, sizeof(int) * nkeys) == 0)
		{
			*out = ix;
			return GDL_BK_OK;
		}
	ix = (CuIndex *) calloc(1, sizeof(CuIndex));
	if (!ix)
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "out of host memory");
	index_plan(R, nkeys, keys, ix);
	s = index_build(c, R, ix);
	if (s != GDL_BK_OK)
	{
		index_free(c, ix);
		return s;
	}
	ix->next = R->indexes;
	R->indexes = ix;
	*out = ix;
	return GDL_BK_OK;
}

/* The kernels' view of an index. */
static DIx
index_dix(const CuIndex *ix)
{
	DIx			d;

	d.shift = ix->shift;
	d.n = ix->n;
	d.sk = ix->sk;
	d.perm = ix->perm;
	d.off = ix->off;
	d.dn = ix->dn;
	return d;
}

/* R as the expand kernel reads it: the sorted words themselves in SELF mode. */
static DRel
index_rows(const CuIndex *ix, const CuRel *R)
{
	DRel		d = rel_drel(R);

	if (ix->self)
	{
		d.layout = L_PACKED;
		d.keys = ix->sk;
	}
	return d;
}

/* Key specs of both sides for an index. */
static void
index_specs(const CuIndex *ix, const int *lkeys, JSpec *ls, JSpec *rs)
{
	ls->nkeys = rs->nkeys = ix->nkeys;
	ls->mode = rs->mode = ix->mode;
	memcpy(ls->cols, lkeys, sizeof(int) * ix->nkeys);
	memcpy(rs->cols, ix->keys, sizeof(int) * ix->nkeys);
}

/* ----------------------------------------------------------------- join */

/* Validate key and output column numbers of a join. */
static int
join_check(CuCtx *c, const CuRel *L, const CuRel *R, int nkeys, const int *lkeys,
		   const int *rkeys, int nout, const GdlBkColRef *out)
{
	for (int k = 0; k < nkeys; k++)
		if (lkeys[k] < 0 || lkeys[k] >= L->arity || rkeys[k] < 0 || rkeys[k] >= R->arity)
			return cu_fail(c, GDL_BK_ERR_INVALID, "join: key column out of range");
	for (int j = 0; j < nout; j++)
		if (out[j].side < 0 || out[j].side > 1 ||
			out[j].col < 0 || out[j].col >= (out[j].side ? R->arity : L->arity))
			return cu_fail(c, GDL_BK_ERR_INVALID, "join: output column out of range");
	return GDL_BK_OK;
}

/* Launch the expand kernel specialised for 1, 2 or any output columns. */
static void
launch_expand(CuCtx *c, const DRel &L, const DRel &R, const uint32_t *perm, const int64_t *cnt,
			  const int64_t *start, const int64_t *off, const OutSpec &os, const DOut &o)
{
	unsigned	g = cu_grid(L.n);

	c->cnt.launches++;
	if (o.layout == L_PACKED && os.nout == 2)
		k_join_expand<2><<<g, CU_BLOCK, 0, c->stream>>>(L, R, perm, cnt, start, off, os, o);
	else if (o.layout == L_PACKED && os.nout == 1)
		k_join_expand<1><<<g, CU_BLOCK, 0, c->stream>>>(L, R, perm, cnt, start, off, os, o);
	else
		k_join_expand<0><<<g, CU_BLOCK, 0, c->stream>>>(L, R, perm, cnt, start, off, os, o);
}

/* Give the kept counts of the last join_count back to the pool. */
static void
jc_clear(CuCtx *c)
{
	if (c->jc.cnt)
		pool_put(c, c->jc.cnt);
	if (c->jc.start)
		pool_put(c, c->jc.start);
	if (c->jc.off)
		pool_put(c, c->jc.off);
	memset(&c->jc, 0, sizeof(c->jc));
}

/* A relation is being freed: drop kept counts that refer to it. */
void
join_count_forget(CuCtx *c, const CuRel *r)
{
	if (c->jc.L && (c->jc.L == r || c->jc.R == r))
		jc_clear(c);
}

/* Whether the kept counts are those of this join. */
static bool
jc_match(const CuCtx *c, const CuRel *L, const CuRel *R, int nkeys, const int *lkeys,
		 const int *rkeys)
{
	if (c->jc.L != L || c->jc.R != R || c->jc.nkeys != nkeys)
		return false;
	for (int k = 0; k < nkeys; k++)
		if (c->jc.lkeys[k] != lkeys[k] || c->jc.rkeys[k] != rkeys[k])
			return false;
	return true;
}

/*
 * The count phase of a keyed join (L and R not empty): R's index, per L row
 * its matches (cnt), first index position (start) and output offset (off),
 * and the total, read back to the host.
 */
static int
count_matches(CuCtx *c, CuRel *L, CuRel *R, int nkeys, const int *lkeys, const int *rkeys,
			  CuIndex **ixp, DBuf &cnt, DBuf &start, DBuf &off, int64_t *total)
{
	JSpec		ls,
				rs;
	CuIndex    *ix;

	CU_OK(index_get(c, R, nkeys, rkeys, &ix));
	index_specs(ix, lkeys, &ls, &rs);
	CU_OK(cnt.get(c, sizeof(int64_t) * (L->n + 1)));
	CU_OK(start.get(c, sizeof(int64_t) * L->n));
	CU_OK(off.get(c, sizeof(int64_t) * (L->n + 1)));
	CU_TRY(c, cudaMemsetAsync(cnt.as<int64_t>() + L->n, 0, sizeof(int64_t), c->stream));
	c->cnt.launches++;
	k_join_count<<<cu_grid(L->n), CU_BLOCK, 0, c->stream>>>(
		rel_drel(L), ls, index_dix(ix), rel_drel(R), rs, ix->mode == JK_HASH,
		cnt.as<int64_t>(), start.as<int64_t>(), nullptr);
	CU_LAUNCHED(c);
	CU_OK(exclusive_scan(c, cnt.as<int64_t>(), off.as<int64_t>(), L->n + 1));
	CU_OK(cu_read_i64(c, off.as<int64_t>() + L->n, 1, total));
	*ixp = ix;
	return GDL_BK_OK;
}

/*
 * join_count: the rows join() would produce, from its count phase; the
 * counts are kept so that a join() on the same inputs right after does not
 * count again.
 */
int
cu_op_join_count(CuCtx *c, CuRel *L, CuRel *R, int nkeys, const int *lkeys, const int *rkeys,
				 int64_t *count)
{
	DBuf		cnt,
				start,
				off;
	CuIndex    *ix = nullptr;
	int64_t		total = 0;

	CU_OK(join_check(c, L, R, nkeys, lkeys, rkeys, 0, nullptr));
	if (nkeys > 0 && (L->arity == 0 || R->arity == 0))
		return cu_fail(c, GDL_BK_ERR_INVALID, "join: keys on an arity-0 relation");
	jc_clear(c);
	*count = 0;
	if (L->n == 0 || R->n == 0)
		return GDL_BK_OK;
	if (nkeys == 0)
	{
		*count = L->n > INT64_MAX / R->n ? INT64_MAX : L->n * R->n;
		return GDL_BK_OK;
	}
	CU_OK(count_matches(c, L, R, nkeys, lkeys, rkeys, &ix, cnt, start, off, &total));
	c->jc.L = L;
	c->jc.R = R;
	c->jc.nkeys = nkeys;
	memcpy(c->jc.lkeys, lkeys, sizeof(int) * nkeys);
	memcpy(c->jc.rkeys, rkeys, sizeof(int) * nkeys);
	c->jc.cnt = cnt.take();
	c->jc.start = start.take();
	c->jc.off = off.take();
	c->jc.total = total;
	*count = total;
	return GDL_BK_OK;
}

/* join: see gdl_backend.h. */
int
cu_op_join(CuCtx *c, CuRel *L, CuRel *R, int nkeys, const int *lkeys, const int *rkeys,
		   int nout, const GdlBkColRef *out, CuRel **result)
{
	OutSpec		os;
	int64_t		lo[CU_MAX_ARITY],
				hi[CU_MAX_ARITY];
	int64_t		total = 0;
	CuIndex    *ix = nullptr;
	DBuf		cnt,
				start,
				off;
	CuRel	   *r;
	int			s;

	CU_OK(join_check(c, L, R, nkeys, lkeys, rkeys, nout, out));
	if (nkeys > 0 && (L->arity == 0 || R->arity == 0))
		return cu_fail(c, GDL_BK_ERR_INVALID, "join: keys on an arity-0 relation");
	os.nout = nout;
	for (int j = 0; j < nout; j++)
	{
		const CuRel *src = out[j].side ? R : L;

		os.side[j] = (int8_t) out[j].side;
		os.col[j] = (int8_t) out[j].col;
		lo[j] = src->lo[out[j].col];
		hi[j] = src->hi[out[j].col];
	}

	/* count */
	if (L->n == 0 || R->n == 0)
		total = 0;
	else if (nkeys == 0)
	{
		if (L->n > INT64_MAX / R->n)
			return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "join: cross product too large");
		total = L->n * R->n;
	}
	else if (jc_match(c, L, R, nkeys, lkeys, rkeys))
	{
		/* counted by join_count just before: take its buffers */
		CU_OK(index_get(c, R, nkeys, rkeys, &ix));
		cnt.c = start.c = off.c = c;
		cnt.p = c->jc.cnt;
		start.p = c->jc.start;
		off.p = c->jc.off;
		total = c->jc.total;
		c->jc.cnt = c->jc.start = c->jc.off = nullptr;
		jc_clear(c);
	}
	else
	{
		jc_clear(c);
		CU_OK(count_matches(c, L, R, nkeys, lkeys, rkeys, &ix, cnt, start, off, &total));
	}

	/* materialize */
	if (nout == 0)
		return rel_unit(c, total, result);
	CU_OK(rel_new_bounded(c, nout, total, lo, hi, &r));
	if (total > 0)
	{
		DOut		o = rel_dout(r);

		c->cnt.launches++;
		if (nkeys == 0)
			k_join_cross<<<cu_grid(total), CU_BLOCK, 0, c->stream>>>(rel_drel(L), rel_drel(R),
																	 total, os, o);
		else if (ix->mode == JK_HASH)
		{
			JSpec		ls,
						rs;

			index_specs(ix, lkeys, &ls, &rs);
			c->cnt.launches++;
			k_join_hash_emit<<<cu_grid(L->n), CU_BLOCK, 0, c->stream>>>(
				rel_drel(L), ls, index_dix(ix), rel_drel(R), rs, cnt.as<int64_t>(),
				off.as<int64_t>(), os, o);
		}
		else
		{
			/* SELF indexes hold R's words, maybe with the halves exchanged */
			if (ix->self && ix->swap)
				for (int j = 0; j < nout; j++)
					if (os.side[j] == 1)
						os.col[j] = (int8_t) (1 - os.col[j]);
			launch_expand(c, rel_drel(L), index_rows(ix, R), ix->perm, cnt.as<int64_t>(),
						  start.as<int64_t>(), off.as<int64_t>(), os, o);
		}
		s = cudaGetLastError() == cudaSuccess ? GDL_BK_OK
			: cu_fail(c, GDL_BK_ERR_DEVICE, "join: kernel launch failed");
		if (s != GDL_BK_OK)
		{
			rel_free(c, r);
			return s;
		}
	}
	*result = r;
	return GDL_BK_OK;
}

/* antijoin: rows of L with no match in R on the key columns. */
int
cu_op_antijoin(CuCtx *c, CuRel *L, CuRel *R, int nkeys, const int *lkeys,
			   const int *rkeys, CuRel **result)
{
	CuIndex    *ix;
	JSpec		ls,
				rs;
	DBuf		flags,
				ids;
	int64_t		m = 0;

	CU_OK(join_check(c, L, R, nkeys, lkeys, rkeys, 0, nullptr));
	if (L->n == 0 || R->n == 0)
		return rel_share(c, L, result);
	if (nkeys == 0)
		return rel_gather(c, L, nullptr, 0, result);
	if (L->arity == 0 || R->arity == 0)
		return cu_fail(c, GDL_BK_ERR_INVALID, "antijoin: keys on an arity-0 relation");
	CU_OK(index_get(c, R, nkeys, rkeys, &ix));
	index_specs(ix, lkeys, &ls, &rs);
	CU_OK(flags.get(c, L->n));
	c->cnt.launches++;
	k_join_count<<<cu_grid(L->n), CU_BLOCK, 0, c->stream>>>(
		rel_drel(L), ls, index_dix(ix), rel_drel(R), rs, ix->mode == JK_HASH,
		nullptr, nullptr, flags.as<uint8_t>());
	CU_LAUNCHED(c);
	CU_OK(select_flagged(c, flags.as<uint8_t>(), L->n, ids, &m));
	if (m == L->n)
		return rel_share(c, L, result);
	return rel_gather(c, L, ids.as<uint32_t>(), m, result);
}
