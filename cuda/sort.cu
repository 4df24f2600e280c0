/*
 * sort.cu — the CUB building blocks the operations share: radix sort of
 * packed keys, unique, stream compaction by flags, exclusive scan, and the
 * lexicographic row permutation of wide relations (one stable radix sort of
 * (column value, row id) pairs per column, last column first).
 *
 * Temporary storage comes from the context's pool; every call runs on the
 * context's stream.  Only the functions that must return a count to the
 * host (unique_keys, select_flagged) wait for the stream.
 */
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "cu_int.cuh"

/* Exchange the buffers of two DBufs (after a double-buffered CUB sort). */
static void
dbuf_swap(DBuf &a, DBuf &b)
{
	void	   *p = a.p;

	a.p = b.p;
	b.p = p;
}

/*
 * Sort n packed keys in 'keys' on bits [0, end_bit), using 'alt' (room for n
 * keys) as the second buffer.  On return 'keys' holds the sorted keys.
 */
int
sort_keys(CuCtx *c, DBuf &keys, DBuf &alt, int64_t n, int end_bit)
{
	cub::DoubleBuffer<uint64_t> db(keys.as<uint64_t>(), alt.as<uint64_t>());

	if (n <= 1)
		return GDL_BK_OK;
	CU_OK(cu_cub(c, [&](void *t, size_t &b) {
		return cub::DeviceRadixSort::SortKeys(t, b, db, n, 0, end_bit, c->stream);
	}));
	if (db.Current() != keys.as<uint64_t>())
		dbuf_swap(keys, alt);
	return GDL_BK_OK;
}

/* Copy the first of each run of equal keys of in[0..n) to out; *m = count. */
int
unique_keys(CuCtx *c, const uint64_t *in, uint64_t *out, int64_t n, int64_t *m)
{
	int64_t    *dnum = (int64_t *) c->dscratch;

	*m = 0;
	if (n == 0)
		return GDL_BK_OK;
	CU_OK(cu_cub(c, [&](void *t, size_t &b) {
		return cub::DeviceSelect::Unique(t, b, in, out, dnum, n, c->stream);
	}));
	return cu_read_i64(c, dnum, 1, m);
}

/* Kernel: flags[i] = 1 for the first of each run of equal sorted keys. */
static __global__ void
k_flag_first(const uint64_t *k, int64_t n, uint8_t *flags)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		flags[i] = (i == 0 || k[i] != k[i - 1]) ? 1 : 0;
}

/*
 * Unique of sorted keys IN PLACE (keys[0..*m) afterwards): one byte of
 * flags per key instead of a second key buffer, for unions of big sets.
 */
int
unique_keys_inplace(CuCtx *c, uint64_t *keys, int64_t n, int64_t *m)
{
	int64_t    *dnum = (int64_t *) c->dscratch;
	DBuf		flags;

	*m = n;
	if (n <= 1)
		return GDL_BK_OK;
	CU_OK(flags.get(c, n));
	c->cnt.launches++;
	k_flag_first<<<cu_grid(n), CU_BLOCK, 0, c->stream>>>(keys, n, flags.as<uint8_t>());
	CU_LAUNCHED(c);
	CU_OK(cu_cub(c, [&](void *t, size_t &b) {
		return cub::DeviceSelect::Flagged(t, b, keys, flags.as<uint8_t>(), dnum, n, c->stream);
	}));
	return cu_read_i64(c, dnum, 1, m);
}

/* The keys in[i] with flags[i] != 0, in order, into out; *m = count. */
int
select_keys_flagged(CuCtx *c, const uint64_t *in, const uint8_t *flags, int64_t n,
					uint64_t *out, int64_t *m)
{
	int64_t    *dnum = (int64_t *) c->dscratch;

	*m = 0;
	if (n == 0)
		return GDL_BK_OK;
	CU_OK(cu_cub(c, [&](void *t, size_t &b) {
		return cub::DeviceSelect::Flagged(t, b, in, flags, out, dnum, n, c->stream);
	}));
	return cu_read_i64(c, dnum, 1, m);
}

/* The indexes i < n with flags[i] != 0, ascending, into ids; *m = count. */
int
select_flagged(CuCtx *c, const uint8_t *flags, int64_t n, DBuf &ids, int64_t *m)
{
	int64_t    *dnum = (int64_t *) c->dscratch;
	thrust::counting_iterator<uint32_t> first(0);

	*m = 0;
	CU_OK(ids.get(c, sizeof(uint32_t) * (n > 0 ? n : 1)));
	if (n == 0)
		return GDL_BK_OK;
	if (n > (int64_t) UINT32_MAX)
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "too many rows (%lld) for one operation", (long long) n);
	CU_OK(cu_cub(c, [&](void *t, size_t &b) {
		return cub::DeviceSelect::Flagged(t, b, first, flags, ids.as<uint32_t>(), dnum, n, c->stream);
	}));
	return cu_read_i64(c, dnum, 1, m);
}

/*
 * Merge the sorted keys a[0..na) and b[0..nb) into out (room for na + nb;
 * repeats kept; no sync): unions and run merges (set.cu, runs.cu).
 */
int
merge_keys(CuCtx *c, const uint64_t *a, int64_t na, const uint64_t *b, int64_t nb, uint64_t *out)
{
	return cu_cub(c, [&](void *t, size_t &bytes) {
		return cub::DeviceMerge::MergeKeys(t, bytes, a, na, b, nb, out,
										   cuda::std::less<uint64_t>(), c->stream);
	});
}

/* out[i] = in[0] + ... + in[i - 1] over n values (no sync). */
int
exclusive_scan(CuCtx *c, const int64_t *in, int64_t *out, int64_t n)
{
	if (n == 0)
		return GDL_BK_OK;
	return cu_cub(c, [&](void *t, size_t &b) {
		return cub::DeviceScan::ExclusiveSum(t, b, in, out, n, c->stream);
	});
}

/* Kernel: perm[i] = i. */
static __global__ void
k_iota(uint32_t *perm, int64_t n)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		perm[i] = (uint32_t) i;
}

/* Kernel: keys[i] = column col of row perm[i] (of row i when perm is NULL). */
static __global__ void
k_col_keys(DRel r, int col, const uint32_t *perm, uint64_t *keys)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < r.n; i += stride)
		keys[i] = (uint64_t) dget(r, perm ? perm[i] : i, col);
}

/*
 * The permutation that sorts the rows of r by columns cols[0..ncols)
 * (lexicographic, each column as its uint64 bit pattern; stable).  lo/hi are
 * bounds of the columns of r (indexed by column number) that shorten the
 * sorted bit range.  perm receives n uint32 row ids.
 */
int
sort_perm(CuCtx *c, const DRel &r, int ncols, const int *cols,
		  const int64_t *lo, const int64_t *hi, DBuf &perm)
{
	int64_t		n = r.n;
	DBuf		alt,
				keys,
				kalt;
	bool		identity = true;

	if (n > (int64_t) UINT32_MAX)
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "too many rows (%lld) to sort", (long long) n);
	CU_OK(perm.get(c, sizeof(uint32_t) * (n > 0 ? n : 1)));
	if (n == 0)
		return GDL_BK_OK;
	c->cnt.launches++;
	k_iota<<<cu_grid(n), CU_BLOCK, 0, c->stream>>>(perm.as<uint32_t>(), n);
	CU_LAUNCHED(c);
	if (n == 1 || ncols == 0)
		return GDL_BK_OK;
	CU_OK(alt.get(c, sizeof(uint32_t) * n));
	CU_OK(keys.get(c, sizeof(uint64_t) * n));
	CU_OK(kalt.get(c, sizeof(uint64_t) * n));
	for (int k = ncols - 1; k >= 0; k--)
	{
		int			col = cols[k];
		int			end_bit = 64;

		if (lo[col] > hi[col])
			continue;			/* no values: nothing to order by */
		if (lo[col] >= 0)
			end_bit = cu_bits((uint64_t) hi[col]);
		if (end_bit == 0)
			continue;			/* a constant 0 column */
		c->cnt.launches++;
		k_col_keys<<<cu_grid(n), CU_BLOCK, 0, c->stream>>>(r, col, identity ? nullptr : perm.as<uint32_t>(),
														  keys.as<uint64_t>());
		CU_LAUNCHED(c);
		{
			cub::DoubleBuffer<uint64_t> dk(keys.as<uint64_t>(), kalt.as<uint64_t>());
			cub::DoubleBuffer<uint32_t> dv(perm.as<uint32_t>(), alt.as<uint32_t>());

			CU_OK(cu_cub(c, [&](void *t, size_t &b) {
				return cub::DeviceRadixSort::SortPairs(t, b, dk, dv, n, 0, end_bit, c->stream);
			}));
			if (dv.Current() != perm.as<uint32_t>())
				dbuf_swap(perm, alt);
			if (dk.Current() != keys.as<uint64_t>())
				dbuf_swap(keys, kalt);
		}
		identity = false;
	}
	return GDL_BK_OK;
}
