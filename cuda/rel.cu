/*
 * rel.cu — relations of the CUDA backend: creation, views and sharing of
 * refcounted stores, release, column bounds, and the layout conversions
 * (packed <-> wide, gather of selected rows) the operations build on.
 */
#include <stdlib.h>
#include <string.h>

#include "cu_int.cuh"

/* Link a new relation into the context's live list. */
static CuRel *
rel_alloc(CuCtx *c, int arity)
{
	CuRel	   *r = (CuRel *) calloc(1, sizeof(CuRel));

	if (!r)
		return nullptr;
	r->arity = arity;
	r->layout = arity == 0 ? L_UNIT : L_PACKED;
	bounds_empty(arity, r->lo, r->hi);
	r->next = c->live;
	if (c->live)
		c->live->prev = r;
	c->live = r;
	return r;
}

/*
 * A new relation of n rows with its own store of the given layout (contents
 * unset; bounds empty).
 */
int
rel_new(CuCtx *c, int arity, int layout, int64_t n, CuRel **out)
{
	CuRel	   *r;
	CuStore    *st;
	size_t		bytes;

	*out = nullptr;
	r = rel_alloc(c, arity);
	if (!r)
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "out of host memory");
	r->n = n;
	r->layout = arity == 0 ? L_UNIT : layout;
	if (arity == 0 || n == 0)
	{
		*out = r;
		return GDL_BK_OK;
	}
	st = (CuStore *) calloc(1, sizeof(CuStore));
	if (!st)
	{
		rel_free(c, r);
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "out of host memory");
	}
	st->refs = 1;
	st->ld = n;
	r->st = st;
	bytes = sizeof(int64_t) * (size_t) n * (layout == L_PACKED ? 1 : (size_t) arity);
	if (pool_get(c, bytes, &st->data) != GDL_BK_OK)
	{
		rel_free(c, r);
		return GDL_BK_ERR_NO_MEMORY;
	}
	*out = r;
	return GDL_BK_OK;
}

/*
 * A new relation of n rows with bounds lo/hi, packed when they allow it,
 * else wide (contents unset): the result of most operations.
 */
int
rel_new_bounded(CuCtx *c, int arity, int64_t n, const int64_t *lo, const int64_t *hi, CuRel **out)
{
	CuRel	   *r;

	*out = nullptr;
	CU_OK(rel_new(c, arity, cu_packable(arity, lo, hi) ? L_PACKED : L_WIDE, n, &r));
	memcpy(r->lo, lo, sizeof(int64_t) * arity);
	memcpy(r->hi, hi, sizeof(int64_t) * arity);
	*out = r;
	return GDL_BK_OK;
}

/* A packed relation viewing rows [off, off + n) of a store (shared). */
int
rel_view(CuCtx *c, CuStore *st, int arity, int64_t off, int64_t n, CuRel **out)
{
	CuRel	   *r = rel_alloc(c, arity);

	*out = nullptr;
	if (!r)
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "out of host memory");
	r->layout = L_PACKED;
	r->n = n;
	r->off = off;
	r->st = st;
	st->refs++;
	*out = r;
	return GDL_BK_OK;
}

/* An arity-0 relation of n rows. */
int
rel_unit(CuCtx *c, int64_t n, CuRel **out)
{
	CuRel	   *r = rel_alloc(c, 0);

	*out = nullptr;
	if (!r)
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "out of host memory");
	r->n = n;
	r->is_set = n <= 1;
	*out = r;
	return GDL_BK_OK;
}

/* A new handle on the same rows (immutable, so the store is shared). */
int
rel_share(CuCtx *c, const CuRel *src, CuRel **out)
{
	CuRel	   *r;

	if (src->arity == 0)
		return rel_unit(c, src->n, out);
	r = rel_alloc(c, src->arity);
	*out = nullptr;
	if (!r)
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "out of host memory");
	r->layout = src->layout;
	r->n = src->n;
	r->off = src->off;
	r->is_set = src->is_set;
	r->sorted = src->sorted;
	r->pending = src->pending;
	r->st = src->st;
	if (r->st)
		r->st->refs++;
	r->nruns = src->nruns;
	for (int k = 0; k < src->nruns; k++)
	{
		r->rst[k] = src->rst[k];
		r->roff[k] = src->roff[k];
		r->rn[k] = src->rn[k];
		r->rst[k]->refs++;
	}
	bounds_copy(r, src);
	*out = r;
	return GDL_BK_OK;
}

/* Drop one reference to a store; free its device memory with the last. */
void
store_unref(CuCtx *c, CuStore *st)
{
	if (!st || --st->refs > 0)
		return;
	if (st->host)
	{
		/* kernels may still read it: host memory is not stream-ordered */
		(void) cudaStreamSynchronize(c->stream);
		(void) cudaFreeHost(st->data);
		c->host_bytes -= (int64_t) sizeof(uint64_t) * st->ld;
		cu_pin_give((int64_t) sizeof(uint64_t) * st->ld);
		free(st);
		return;
	}
	pool_put(c, st->data);
	if (st->is_log)
	{
		pool_put(c, st->tkeys);
		pool_put(c, st->tpos);
		pool_put(c, st->dcount);
	}
	free(st);
}

/* Release a relation: its indexes, its share of the store, the handle. */
void
rel_free(CuCtx *c, CuRel *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		c->live = r->next;
	if (r->next)
		r->next->prev = r->prev;
	join_count_forget(c, r);
	index_free_all(c, r);
	store_unref(c, r->st);
	for (int k = 0; k < r->nruns; k++)
		store_unref(c, r->rst[k]);
	free(r);
}

/*
 * slice: rows [from, to) of a relation, a view sharing its store (packed
 * keys and wide columns both start at off; a view of a hash log stays a
 * set of its own rows).  rel must be forced (no pending dedup).
 */
int
cu_op_slice(CuCtx *c, CuRel *rel, int64_t from, int64_t to, CuRel **result)
{
	CuRel	   *r;

	*result = nullptr;
	if (from < 0 || to > rel->n || from > to)
		return cu_fail(c, GDL_BK_ERR_INVALID, "slice [%lld, %lld) out of range",
					   (long long) from, (long long) to);
	if (rel->arity == 0)
		return rel_unit(c, to - from, result);
	CU_OK(rel_share(c, rel, &r));
	r->off = rel->off + from;
	r->n = to - from;
	if (r->n == 0)
	{
		store_unref(c, r->st);
		r->st = nullptr;
		r->off = 0;
	}
	*result = r;
	return GDL_BK_OK;
}

/* Device keys of a packed relation (NULL when it has no rows). */
const uint64_t *
rel_keys(const CuRel *r)
{
	return r->st ? (const uint64_t *) r->st->data + r->off : nullptr;
}

/* The kernels' view of a relation. */
DRel
rel_drel(const CuRel *r)
{
	DRel		d;

	d.layout = r->layout;
	d.arity = r->arity;
	d.n = r->n;
	d.ld = r->st ? r->st->ld : 0;
	d.keys = r->layout == L_PACKED ? rel_keys(r) : nullptr;
	d.cols = (r->layout == L_WIDE && r->st) ? (const int64_t *) r->st->data + r->off : nullptr;
	return d;
}

/* Where kernels write the rows of a relation made by rel_new. */
DOut
rel_dout(CuRel *r)
{
	DOut		o;

	o.layout = r->layout;
	o.arity = r->arity;
	o.ld = r->st ? r->st->ld : 0;
	o.keys = (r->layout == L_PACKED && r->st) ? (uint64_t *) r->st->data : nullptr;
	o.cols = (r->layout == L_WIDE && r->st) ? (int64_t *) r->st->data : nullptr;
	return o;
}

/* Whether rows with these bounds can be packed into one uint64 key. */
bool
cu_packable(int arity, const int64_t *lo, const int64_t *hi)
{
	if (arity == 1)
		return true;
	if (arity != 2)
		return false;
	for (int k = 0; k < 2; k++)
		if (lo[k] <= hi[k] && (lo[k] < 0 || hi[k] > (int64_t) 0xffffffffLL))
			return false;
	return true;
}

/* Bounds of no values. */
void
bounds_empty(int arity, int64_t *lo, int64_t *hi)
{
	for (int k = 0; k < arity; k++)
	{
		lo[k] = INT64_MAX;
		hi[k] = INT64_MIN;
	}
}

/* Widen bounds lo/hi by lo2/hi2. */
void
bounds_union(int arity, int64_t *lo, int64_t *hi, const int64_t *lo2, const int64_t *hi2)
{
	for (int k = 0; k < arity; k++)
	{
		if (lo2[k] < lo[k])
			lo[k] = lo2[k];
		if (hi2[k] > hi[k])
			hi[k] = hi2[k];
	}
}

/* Copy the bounds of src to dst (same arity). */
void
bounds_copy(CuRel *dst, const CuRel *src)
{
	memcpy(dst->lo, src->lo, sizeof(int64_t) * src->arity);
	memcpy(dst->hi, src->hi, sizeof(int64_t) * src->arity);
}

/*
 * Mark r as the union of sets A and B: their bounds joined, a sorted set.
 * The end of both unions (set.cu's on the device, runs.cu's in host memory).
 */
void
rel_mark_union(CuRel *r, const CuRel *A, const CuRel *B)
{
	bounds_copy(r, A);
	bounds_union(A->arity, r->lo, r->hi, B->lo, B->hi);
	r->is_set = true;
	r->sorted = true;
}

/* Highest key bit (exclusive) a radix sort of packed rows with these bounds needs. */
int
key_end_bit(int arity, const int64_t *lo, const int64_t *hi)
{
	int			b;

	if (lo[0] > hi[0])
		return 1;
	if (arity == 1)
		b = lo[0] >= 0 ? cu_bits((uint64_t) hi[0]) : 64;
	else
		b = 32 + cu_bits((uint64_t) (hi[0] < 0 ? 0 : hi[0]));
	return b < 1 ? 1 : b;
}

/*
 * A relation of n rows whose store takes over the pool buffer 'data' (n keys
 * when packed, arity columns of n rows when wide).  The buffer is freed
 * with the store, also when this fails.
 */
int
rel_adopt(CuCtx *c, int arity, int layout, int64_t n, void *data, CuRel **out)
{
	CuRel	   *r;
	CuStore    *st;

	*out = nullptr;
	if (arity == 0 || n == 0)
	{
		pool_put(c, data);
		return rel_new(c, arity, layout, n, out);
	}
	st = (CuStore *) calloc(1, sizeof(CuStore));
	r = st ? rel_alloc(c, arity) : nullptr;
	if (!r)
	{
		free(st);
		pool_put(c, data);
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "out of host memory");
	}
	st->refs = 1;
	st->ld = n;
	st->data = data;
	r->st = st;
	r->layout = layout;
	r->n = n;
	*out = r;
	return GDL_BK_OK;
}

/* Kernel: rows of src as columns into dst (stride ld) from row row0. */
static __global__ void
k_to_wide(DRel src, int64_t *dst, int64_t ld, int64_t row0)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < src.n; i += stride)
		for (int k = 0; k < src.arity; k++)
			dst[(int64_t) k * ld + row0 + i] = dget(src, i, k);
}

/* Write the rows of r as wide columns into dst (stride ld) from row row0. */
int
rel_copy_wide(CuCtx *c, const CuRel *r, int64_t *dst, int64_t ld, int64_t row0)
{
	if (r->n == 0 || r->arity == 0)
		return GDL_BK_OK;
	if (r->layout == L_WIDE)
	{
		for (int k = 0; k < r->arity; k++)
			CU_TRY(c, cudaMemcpyAsync(dst + (int64_t) k * ld + row0,
									  (const int64_t *) r->st->data + (int64_t) k * r->st->ld + r->off,
									  sizeof(int64_t) * r->n, cudaMemcpyDefault, c->stream));
		return GDL_BK_OK;
	}
	c->cnt.launches++;
	k_to_wide<<<cu_grid(r->n), CU_BLOCK, 0, c->stream>>>(rel_drel(r), dst, ld, row0);
	CU_LAUNCHED(c);
	return GDL_BK_OK;
}

/* Kernel: copy rows i of a wide view into an output of any layout. */
static __global__ void
k_from_wide(DRel src, DOut o)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;
	int64_t		v[CU_MAX_ARITY];

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < src.n; i += stride)
	{
		if (o.layout == L_PACKED)
		{
			v[0] = dget(src, i, 0);
			if (o.arity == 2)
				v[1] = dget(src, i, 1);
			dput(o, i, v);
		}
		else
			for (int k = 0; k < o.arity; k++)
				o.cols[(int64_t) k * o.ld + i] = dget(src, i, k);
	}
}

/*
 * A relation from device columns (stride ld, n rows) with the given bounds:
 * packed when the bounds allow it, else a wide copy.
 */
int
rel_from_wide(CuCtx *c, int arity, const int64_t *cols, int64_t ld, int64_t n,
			  const int64_t *lo, const int64_t *hi, CuRel **out)
{
	CuRel	   *r;

	*out = nullptr;
	if (arity == 0)
		return rel_unit(c, n, out);
	CU_OK(rel_new_bounded(c, arity, n, lo, hi, &r));
	if (n > 0)
	{
		c->cnt.launches++;
		k_from_wide<<<cu_grid(n), CU_BLOCK, 0, c->stream>>>(cu_wide_view(arity, cols, n, ld), rel_dout(r));
		if (cudaGetLastError() != cudaSuccess)
		{
			rel_free(c, r);
			return cu_fail(c, GDL_BK_ERR_DEVICE, "kernel launch failed (from_wide)");
		}
	}
	*out = r;
	return GDL_BK_OK;
}

/* Kernel: out row i = src row ids[i] (same layout). */
static __global__ void
k_gather(DRel src, const uint32_t *ids, int64_t m, DOut o)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride)
	{
		int64_t		j = ids[i];

		if (src.layout == L_PACKED)
			o.keys[i] = src.keys[j];
		else
			for (int k = 0; k < src.arity; k++)
				o.cols[(int64_t) k * o.ld + i] = src.cols[(int64_t) k * src.ld + j];
	}
}

/*
 * The rows ids[0..m) of src, in that order, as a new relation of src's
 * layout and bounds.  ids ascending keeps src's order, so the result keeps
 * its set and sorted flags.
 */
int
rel_gather(CuCtx *c, const CuRel *src, const uint32_t *ids, int64_t m, CuRel **out)
{
	CuRel	   *r;

	*out = nullptr;
	if (src->arity == 0)
		return rel_unit(c, m, out);
	CU_OK(rel_new(c, src->arity, src->layout, m, &r));
	bounds_copy(r, src);
	r->is_set = src->is_set;
	r->sorted = src->sorted;
	if (m > 0)
	{
		c->cnt.launches++;
		k_gather<<<cu_grid(m), CU_BLOCK, 0, c->stream>>>(rel_drel(src), ids, m, rel_dout(r));
		if (cudaGetLastError() != cudaSuccess)
		{
			rel_free(c, r);
			return cu_fail(c, GDL_BK_ERR_DEVICE, "kernel launch failed (gather)");
		}
	}
	*out = r;
	return GDL_BK_OK;
}
