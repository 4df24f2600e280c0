/*
 * set.cu — the set operations: dedup, difference, merge and absorb.
 *
 * Packed relations (one uint64 key per row) use CUB radix sort + unique,
 * CUB merge of sorted keys, binary-search membership in sorted keys, and
 * `full` as sorted runs (runs.cu, the default: absorb and difference
 * against such a set are there), or with GDL_CUDA_FULL=hash
 * the hash log of hash.cu: absorb(full, cand) inserts cand into full's
 * device hash set and appends the new keys to its log, so new_full and
 * delta are views of that log and full is never sorted or merged again.
 * difference(A, B) with B in a hash log probes the set; merge(A, B) with A
 * the tip of a log appends B.
 *
 * Wide relations (and mixtures) are concatenated into columns, ordered by
 * a lexicographic row permutation (sort.cu), and reduced by comparing
 * neighbouring rows.
 */
#include <cub/cub.cuh>
#include <string.h>

#include "cu_int.cuh"

/* -------------------------------------------------------------- helpers */

/* Whether every input is packed (or has no rows to convert). */
static bool
all_packed(int nin, GdlBkRel *const *in)
{
	for (int i = 0; i < nin; i++)
		if (in[i]->layout != L_PACKED)
			return false;
	return true;
}

/* Union of the bounds of the inputs into lo/hi; returns their rows in all. */
static int64_t
union_bounds(int nin, GdlBkRel *const *in, int64_t *lo, int64_t *hi)
{
	int64_t		total = 0;

	bounds_empty(in[0]->arity, lo, hi);
	for (int i = 0; i < nin; i++)
	{
		bounds_union(in[0]->arity, lo, hi, in[i]->lo, in[i]->hi);
		total += in[i]->n;
	}
	return total;
}

/* Copy the keys of packed inputs one after the other into dst. */
static int
concat_keys(CuCtx *c, int nin, GdlBkRel *const *in, uint64_t *dst)
{
	int64_t		at = 0;

	for (int i = 0; i < nin; i++)
	{
		if (in[i]->n == 0)
			continue;
		CU_TRY(c, cudaMemcpyAsync(dst + at, rel_keys(in[i]), sizeof(uint64_t) * in[i]->n,
								  cudaMemcpyDefault, c->stream));
		at += in[i]->n;
	}
	return GDL_BK_OK;
}

/* Copy the rows of any inputs one after the other into wide columns (stride ld). */
static int
concat_wide(CuCtx *c, int nin, GdlBkRel *const *in, int64_t *dst, int64_t ld)
{
	int64_t		at = 0;

	for (int i = 0; i < nin; i++)
	{
		CU_OK(rel_copy_wide(c, in[i], dst, ld, at));
		at += in[i]->n;
	}
	return GDL_BK_OK;
}

/*
 * The relation of m unique sorted keys in 'keys' (a buffer of room for
 * 'room' keys): adopted as is when it is at least half full, else copied
 * into an exact buffer so long-lived sets hold no slack.
 */
static int
adopt_keys(CuCtx *c, int arity, DBuf &keys, int64_t m, int64_t room, CuRel **out)
{
	if (m > 0 && m < room / 2)
	{
		DBuf		exact;

		CU_OK(exact.get(c, sizeof(uint64_t) * m));
		CU_TRY(c, cudaMemcpyAsync(exact.p, keys.p, sizeof(uint64_t) * m,
								  cudaMemcpyDefault, c->stream));
		return rel_adopt(c, arity, L_PACKED, m, exact.take(), out);
	}
	return rel_adopt(c, arity, L_PACKED, m, keys.take(), out);
}

/* Concatenation of relations without dedup (the caller knows they are disjoint). */
static int
concat_rels(CuCtx *c, int nin, GdlBkRel *const *in, CuRel **out)
{
	int			arity = in[0]->arity;
	int64_t		lo[CU_MAX_ARITY],
				hi[CU_MAX_ARITY];
	int64_t		total = union_bounds(nin, in, lo, hi);
	CuRel	   *r;

	if (arity == 0)
		return rel_unit(c, total, out);
	if (all_packed(nin, in))
	{
		CU_OK(rel_new(c, arity, L_PACKED, total, &r));
		if (total > 0)
		{
			int			s = concat_keys(c, nin, in, (uint64_t *) r->st->data);

			if (s != GDL_BK_OK)
			{
				rel_free(c, r);
				return s;
			}
		}
	}
	else
	{
		DBuf		cols;

		CU_OK(cols.get(c, sizeof(int64_t) * arity * (total > 0 ? total : 1)));
		CU_OK(concat_wide(c, nin, in, cols.as<int64_t>(), total));
		CU_OK(rel_from_wide(c, arity, cols.as<int64_t>(), total, total, lo, hi, &r));
	}
	memcpy(r->lo, lo, sizeof(int64_t) * arity);
	memcpy(r->hi, hi, sizeof(int64_t) * arity);
	*out = r;
	return GDL_BK_OK;
}

/* ------------------------------------------------------------ wide rows */

/* Whether rows i and j of a wide view are equal. */
static __device__ __forceinline__ bool
rows_equal(const DRel &r, int64_t i, int64_t j)
{
	for (int k = 0; k < r.arity; k++)
		if (r.cols[(int64_t) k * r.ld + i] != r.cols[(int64_t) k * r.ld + j])
			return false;
	return true;
}

/* Kernel: flag the first row of each run of equal rows in perm order. */
static __global__ void
k_flag_unique(DRel r, const uint32_t *perm, uint8_t *flags)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; p < r.n; p += stride)
		flags[p] = (p == 0 || !rows_equal(r, perm[p], perm[p - 1])) ? 1 : 0;
}

/*
 * Kernel: for the concatenation A (rows < na) then B, in stable sorted
 * order, flag the A rows that are not followed by an equal B row.
 */
static __global__ void
k_flag_diff(DRel r, const uint32_t *perm, int64_t na, uint8_t *flags)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; p < r.n; p += stride)
	{
		uint32_t	row = perm[p];
		bool		keep = row < na;

		if (keep && p + 1 < r.n && perm[p + 1] >= na && rows_equal(r, row, perm[p + 1]))
			keep = false;
		flags[p] = keep ? 1 : 0;
	}
}

/* Kernel: output row i = source row perm[ids[i]], in the output's layout. */
static __global__ void
k_gather_perm(DRel src, const uint32_t *perm, const uint32_t *ids, int64_t m, DOut o)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;
	int64_t		v[CU_MAX_ARITY];

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride)
	{
		int64_t		row = perm[ids[i]];

		for (int k = 0; k < src.arity; k++)
			v[k] = dget(src, row, k);
		dput(o, i, v);
	}
}

/*
 * Rows of the wide view w kept by 'flag' (a kernel over the permutation
 * sorted with bounds lo/hi) become a new set with bounds rlo/rhi (its
 * layout chosen by them).  mode 0: unique rows; mode 1: rows < na without
 * an equal row >= na (difference).
 */
static int
wide_select(CuCtx *c, const DRel &w, int mode, int64_t na,
			const int64_t *lo, const int64_t *hi,
			const int64_t *rlo, const int64_t *rhi, CuRel **out)
{
	int			cols[CU_MAX_ARITY];
	DBuf		perm,
				flags,
				ids;
	int64_t		m = 0;
	CuRel	   *r;

	for (int k = 0; k < w.arity; k++)
		cols[k] = k;
	CU_OK(sort_perm(c, w, w.arity, cols, lo, hi, perm));
	CU_OK(flags.get(c, w.n > 0 ? w.n : 1));
	if (w.n > 0)
	{
		c->cnt.launches++;
		if (mode == 0)
			k_flag_unique<<<cu_grid(w.n), CU_BLOCK, 0, c->stream>>>(w, perm.as<uint32_t>(),
																  flags.as<uint8_t>());
		else
			k_flag_diff<<<cu_grid(w.n), CU_BLOCK, 0, c->stream>>>(w, perm.as<uint32_t>(), na,
																flags.as<uint8_t>());
		CU_LAUNCHED(c);
	}
	CU_OK(select_flagged(c, flags.as<uint8_t>(), w.n, ids, &m));
	CU_OK(rel_new_bounded(c, w.arity, m, rlo, rhi, &r));
	r->is_set = true;
	if (m > 0)
	{
		c->cnt.launches++;
		k_gather_perm<<<cu_grid(m), CU_BLOCK, 0, c->stream>>>(w, perm.as<uint32_t>(),
															  ids.as<uint32_t>(), m, rel_dout(r));
		if (cudaGetLastError() != cudaSuccess)
		{
			rel_free(c, r);
			return cu_fail(c, GDL_BK_ERR_DEVICE, "kernel launch failed (gather_perm)");
		}
	}
	*out = r;
	return GDL_BK_OK;
}

/* ---------------------------------------------------------------- dedup */

/*
 * Dedup of packed inputs, deferred: the result is a PENDING relation holding
 * the bag (the input's own keys for one input, else their concatenation).
 * absorb() and merge() into a hash log take the bag as it is (the hash set
 * removes the duplicates, with no sort at all); any other use sorts it first
 * (rel_force).
 */
static int
dedup_packed(CuCtx *c, int nin, GdlBkRel *const *in, CuRel **out)
{
	CuRel	   *r;

	if (nin == 1)
		CU_OK(rel_share(c, in[0], &r));
	else
		CU_OK(concat_rels(c, nin, in, &r));
	r->is_set = false;
	r->sorted = false;
	r->pending = r->n > 1;
	r->is_set = !r->pending;
	*out = r;
	return GDL_BK_OK;
}

/*
 * Finish a pending dedup in place: radix sort and unique into a store of
 * its own (the rows stay the same set, so the handle may change its
 * representation).
 */
int
rel_force(CuCtx *c, CuRel *r)
{
	int64_t		n = r->n,
				m = 0;
	DBuf		keys,
				alt;
	CuRel	   *tmp = nullptr;

	if (!r->pending)
		return GDL_BK_OK;
	CU_OK(alt.get(c, sizeof(uint64_t) * n));
	if (r->st->refs == 1 && !r->st->is_log && !r->st->host && r->off == 0 && !r->indexes)
	{
		/*
		 * nobody else sees the bag (the engine released it after dedup):
		 * sort its own buffer, one copy of the bag less at the peak; a
		 * failed sort gives the buffer back unchanged (CUB fails before
		 * its first pass, on its scratch)
		 */
		int			st;

		keys.c = c;
		keys.p = r->st->data;
		r->st->data = nullptr;
		st = sort_keys(c, keys, alt, n, key_end_bit(r->arity, r->lo, r->hi));
		if (st != GDL_BK_OK)
		{
			r->st->data = keys.take();
			return st;
		}
	}
	else
	{
		CU_OK(keys.get(c, sizeof(uint64_t) * n));
		CU_TRY(c, cudaMemcpyAsync(keys.p, rel_keys(r), sizeof(uint64_t) * n,
								  cudaMemcpyDefault, c->stream));
		CU_OK(sort_keys(c, keys, alt, n, key_end_bit(r->arity, r->lo, r->hi)));
	}
	CU_OK(unique_keys(c, keys.as<uint64_t>(), alt.as<uint64_t>(), n, &m));
	CU_OK(adopt_keys(c, r->arity, alt, m, n, &tmp));
	/* move tmp's store into r */
	index_free_all(c, r);
	store_unref(c, r->st);
	r->st = tmp->st;
	tmp->st = nullptr;
	rel_free(c, tmp);
	r->off = 0;
	r->n = m;
	r->pending = false;
	r->is_set = true;
	r->sorted = true;
	return GDL_BK_OK;
}

/* Dedup of inputs of any layout through wide columns. */
static int
dedup_wide(CuCtx *c, int nin, GdlBkRel *const *in, CuRel **out)
{
	int			arity = in[0]->arity;
	int64_t		lo[CU_MAX_ARITY],
				hi[CU_MAX_ARITY];
	int64_t		total = union_bounds(nin, in, lo, hi);
	DBuf		cols;

	CU_OK(cols.get(c, sizeof(int64_t) * arity * (total > 0 ? total : 1)));
	CU_OK(concat_wide(c, nin, in, cols.as<int64_t>(), total));
	return wide_select(c, cu_wide_view(arity, cols.as<int64_t>(), total, total), 0, 0, lo, hi,
					   lo, hi, out);
}

/* dedup: the set of rows of the union of the inputs. */
int
cu_op_dedup(CuCtx *c, int nin, GdlBkRel *const *in, GdlBkRel **result)
{
	int64_t		total = 0;

	for (int i = 0; i < nin; i++)
		total += in[i]->n;
	if (in[0]->arity == 0)
		return rel_unit(c, total > 0 ? 1 : 0, result);
	if (nin == 1 && in[0]->is_set)
		return rel_share(c, in[0], result);
	if (all_packed(nin, in))
		return dedup_packed(c, nin, in, result);
	return dedup_wide(c, nin, in, result);
}

/* ----------------------------------------------------------- difference */

/* Kernel: flags[i] = 1 when q[i] is not among the sorted keys b[0..nb). */
static __global__ void
k_absent_sorted(const uint64_t *q, int64_t m, const uint64_t *b, int64_t nb, uint8_t *flags)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride)
	{
		uint64_t	k = q[i];
		int64_t		lo = 0,
					hi = nb;

		while (lo < hi)
		{
			int64_t		mid = (lo + hi) >> 1;

			if (b[mid] < k)
				lo = mid + 1;
			else
				hi = mid;
		}
		flags[i] = (lo < nb && b[lo] == k) ? 0 : 1;
	}
}

/*
 * Difference of packed sets: search B's sorted runs (or sorted B: one run;
 * runs.cu), probe B's hash log, or binary search a sorted copy of B.
 */
static int
difference_packed(CuCtx *c, CuRel *A, CuRel *B, CuRel **out)
{
	DBuf		flags,
				ids,
				bsorted,
				balt;
	int64_t		m = 0;
	const uint64_t *bk = rel_keys(B);

	CU_OK(flags.get(c, A->n));
	if (B->nruns > 0 || B->sorted)
		CU_OK(runs_flag_absent(c, B, rel_keys(A), A->n, A->sorted, flags.as<uint8_t>()));
	else if (B->st->is_log && hlog_usable(A))
		CU_OK(hlog_flag_absent(c, B, rel_keys(A), A->n, flags.as<uint8_t>()));
	else
	{
		if (!B->sorted)
		{
			CU_OK(bsorted.get(c, sizeof(uint64_t) * B->n));
			CU_OK(balt.get(c, sizeof(uint64_t) * B->n));
			CU_TRY(c, cudaMemcpyAsync(bsorted.p, bk, sizeof(uint64_t) * B->n,
									  cudaMemcpyDefault, c->stream));
			CU_OK(sort_keys(c, bsorted, balt, B->n, key_end_bit(B->arity, B->lo, B->hi)));
			bk = bsorted.as<uint64_t>();
		}
		c->cnt.launches++;
		k_absent_sorted<<<cu_grid(A->n), CU_BLOCK, 0, c->stream>>>(rel_keys(A), A->n, bk, B->n,
																  flags.as<uint8_t>());
		CU_LAUNCHED(c);
	}
	CU_OK(select_flagged(c, flags.as<uint8_t>(), A->n, ids, &m));
	if (m == A->n)
		return rel_share(c, A, out);
	CU_OK(rel_gather(c, A, ids.as<uint32_t>(), m, out));
	(*out)->is_set = true;
	return GDL_BK_OK;
}

/* difference: set A minus set B. */
int
cu_op_difference(CuCtx *c, CuRel *A, CuRel *B, CuRel **result)
{
	GdlBkRel   *both[2] = {A, B};
	DBuf		cols;
	int64_t		total = A->n + B->n;
	int64_t		lo[CU_MAX_ARITY],
				hi[CU_MAX_ARITY];

	if (A->arity == 0)
		return rel_unit(c, (A->n > 0 && B->n == 0) ? 1 : 0, result);
	if (A->n == 0 || B->n == 0)
		return rel_share(c, A, result);
	if (A->layout == L_PACKED && B->layout == L_PACKED)
		return difference_packed(c, A, B, result);
	CU_OK(rel_flatten(c, B));
	CU_OK(cols.get(c, sizeof(int64_t) * A->arity * total));
	CU_OK(concat_wide(c, 2, both, cols.as<int64_t>(), total));
	/* sort by the union of bounds, but the result keeps A's */
	union_bounds(2, both, lo, hi);
	return wide_select(c, cu_wide_view(A->arity, cols.as<int64_t>(), total, total), 1, A->n,
					   lo, hi, A->lo, A->hi, result);
}

/* ---------------------------------------------------------------- merge */

/* Append the keys of 'add' to the hash log whose tip is 'tip': tip U add. */
static int
merge_into_log(CuCtx *c, CuRel *tip, CuRel *add, CuRel **out)
{
	CuStore    *st = nullptr;
	int			s;

	CU_OK(hlog_tip(c, tip, add->pending ? 0 : add->n, &st));
	s = hlog_insert(c, st, add, add->pending);
	if (s == GDL_BK_OK)
		s = rel_view(c, st, tip->arity, 0, st->lcount, out);
	store_unref(c, st);
	CU_OK(s);
	bounds_copy(*out, tip);
	bounds_union(tip->arity, (*out)->lo, (*out)->hi, add->lo, add->hi);
	(*out)->is_set = true;
	return GDL_BK_OK;
}

/* Union of two sorted packed sets: CUB merge, then unique. */
static int
merge_sorted(CuCtx *c, CuRel *A, CuRel *B, bool disjoint, CuRel **out)
{
	int64_t		total = A->n + B->n,
				m = total;
	DBuf		keys;
	const uint64_t *ak = rel_keys(A),
			   *bk = rel_keys(B);
	CuRel	   *r;

	/* past the device limit the union goes to pinned host memory (runs.cu) */
	if (c->limit > 0 &&
		c->bytes + (int64_t) sizeof(uint64_t) * (total + total / 8) + 65536 > c->limit)
		return runs_union_host(c, A, B, disjoint, out);
	CU_OK(keys.get(c, sizeof(uint64_t) * total));
	CU_OK(merge_keys(c, ak, A->n, bk, B->n, keys.as<uint64_t>()));
	if (disjoint)
		CU_OK(rel_adopt(c, A->arity, L_PACKED, total, keys.take(), &r));
	else
	{
		/* in place: a byte per key instead of a second buffer */
		CU_OK(unique_keys_inplace(c, keys.as<uint64_t>(), total, &m));
		CU_OK(adopt_keys(c, A->arity, keys, m, total, &r));
	}
	rel_mark_union(r, A, B);
	*out = r;
	return GDL_BK_OK;
}

/* merge: union of sets A and B. */
int
cu_op_merge(CuCtx *c, CuRel *A, CuRel *B, CuRel **result)
{
	GdlBkRel   *both[2] = {A, B};

	if (A->arity == 0)
		return rel_unit(c, (A->n + B->n) > 0 ? 1 : 0, result);
	CU_OK(rel_flatten(c, A));
	CU_OK(rel_flatten(c, B));
	if (A->layout == L_PACKED && B->layout == L_PACKED && A->n > 0 && B->n > 0)
	{
		bool		fits = A->n + B->n < (int64_t) UINT32_MAX - 1;

		/* a hash log takes a pending bag as it is */
		if (fits && hlog_is_tip(A) && hlog_usable(A) && hlog_usable(B))
			return merge_into_log(c, A, B, result);
		if (fits && hlog_is_tip(B) && hlog_usable(A) && hlog_usable(B))
			return merge_into_log(c, B, A, result);
	}
	CU_OK(rel_force(c, A));
	CU_OK(rel_force(c, B));
	if (B->n == 0)
		return rel_share(c, A, result);
	if (A->n == 0)
		return rel_share(c, B, result);
	if (A->layout == L_PACKED && B->layout == L_PACKED)
	{
		if (A->sorted && B->sorted)
			return merge_sorted(c, A, B, false, result);
		CU_OK(dedup_packed(c, 2, both, result));
		if (rel_force(c, *result) != GDL_BK_OK)
		{
			rel_free(c, *result);
			*result = nullptr;
			return GDL_BK_ERR_NO_MEMORY;
		}
		return GDL_BK_OK;
	}
	return dedup_wide(c, 2, both, result);
}

/* --------------------------------------------------------------- absorb */

/* absorb through the hash log of full: new_full and delta are log views. */
static int
absorb_log(CuCtx *c, CuRel *full, CuRel *cand, CuRel **new_full, CuRel **delta)
{
	CuStore    *st = nullptr;
	int64_t		n0;
	int			s;

	CU_OK(hlog_tip(c, full, cand->pending ? 0 : cand->n, &st));
	n0 = st->lcount;
	s = hlog_insert(c, st, cand, cand->pending);
	if (s == GDL_BK_OK)
		s = rel_view(c, st, full->arity, 0, st->lcount, new_full);
	if (s == GDL_BK_OK)
		s = rel_view(c, st, full->arity, n0, st->lcount - n0, delta);
	store_unref(c, st);
	if (s != GDL_BK_OK)
	{
		if (*new_full)
			rel_free(c, *new_full);
		*new_full = nullptr;
		return s;
	}
	bounds_copy(*new_full, full);
	bounds_union(full->arity, (*new_full)->lo, (*new_full)->hi, cand->lo, cand->hi);
	bounds_copy(*delta, cand);
	(*new_full)->is_set = true;
	(*delta)->is_set = true;
	return GDL_BK_OK;
}

/* absorb: *delta = cand \ full, *new_full = full U cand (both sets). */
int
cu_op_absorb(CuCtx *c, CuRel *full, CuRel *cand, CuRel **new_full, CuRel **delta)
{
	CuRel	   *d = nullptr;
	int			s;

	if (full->arity == 0)
	{
		int64_t		dn = (full->n == 0 && cand->n > 0) ? 1 : 0;

		CU_OK(rel_unit(c, dn, delta));
		s = rel_unit(c, (full->n + cand->n) > 0 ? 1 : 0, new_full);
		if (s != GDL_BK_OK)
		{
			rel_free(c, *delta);
			*delta = nullptr;
		}
		return s;
	}
	if (cand->n == 0)
	{
		CU_OK(rel_gather(c, cand, nullptr, 0, delta));
		s = rel_share(c, full, new_full);
		if (s != GDL_BK_OK)
		{
			rel_free(c, *delta);
			*delta = nullptr;
		}
		return s;
	}
	CU_OK(rel_force(c, full));
	if (runs_enabled() && full->layout == L_PACKED && cand->layout == L_PACKED)
	{
		CU_OK(rel_force(c, cand));
		return runs_absorb(c, full, cand, new_full, delta);
	}
	CU_OK(rel_flatten(c, full));
	if (full->layout == L_PACKED && cand->layout == L_PACKED &&
		hlog_usable(full) && hlog_usable(cand) &&
		full->n + cand->n < (int64_t) UINT32_MAX - 1)
		return absorb_log(c, full, cand, new_full, delta);
	CU_OK(rel_force(c, cand));

	/* general case: difference, then a disjoint union */
	CU_OK(cu_op_difference(c, cand, full, &d));
	if (d->n == 0)
		s = rel_share(c, full, new_full);
	else if (d->layout == L_PACKED && full->layout == L_PACKED && d->sorted && full->sorted)
		s = merge_sorted(c, full, d, true, new_full);
	else
	{
		GdlBkRel   *both[2] = {full, d};

		s = concat_rels(c, 2, both, new_full);
		if (s == GDL_BK_OK)
			(*new_full)->is_set = true;
	}
	if (s != GDL_BK_OK)
	{
		rel_free(c, d);
		return s;
	}
	*delta = d;
	return GDL_BK_OK;
}
