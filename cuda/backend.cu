/*
 * backend.cu — the CUDA backend's entry point (gdl_backend_entry) and its
 * context: creation and teardown, errors, text ranks, counters, and the
 * operations that move data (upload, download, size, release).
 *
 * Every entry point is a thin wrapper that checks its arguments, runs the
 * operation inside try/catch (nothing may throw into the C host), and turns
 * every CUDA error into a status plus a last_error() message.  Nothing CUDA
 * happens when the module is loaded: the driver is first touched by
 * ctx_create.
 */
#include <new>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_int.cuh"

#define CU_EXPORT extern "C" __attribute__((visibility("default")))

static char g_create_err[256];	/* ctx_create's message (static storage) */

/* Record a message for last_error() and return the status. */
int
cu_fail(CuCtx *c, int status, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
	va_end(ap);
	return status;
}

/*
 * A failed CUDA call: out of memory becomes GDL_BK_ERR_NO_MEMORY, anything
 * else GDL_BK_ERR_DEVICE.  Clears the (non-sticky) error state.
 */
int
cu_err(CuCtx *c, cudaError_t e, const char *what)
{
	int			st = (e == cudaErrorMemoryAllocation) ? GDL_BK_ERR_NO_MEMORY : GDL_BK_ERR_DEVICE;

	(void) cudaGetLastError();
	return cu_fail(c, st, "CUDA error %s (%s) in %s",
				   cudaGetErrorName(e), cudaGetErrorString(e), what);
}

/* Free everything a context holds (device memory, stream, pinned memory). */
static void
ctx_teardown(CuCtx *c)
{
	while (c->live)
		rel_free(c, c->live);
	if (c->dranks)
		pool_put(c, c->dranks);
	if (c->dscratch)
		pool_put(c, c->dscratch);
	pool_release_all(c);
	cu_hpin_give(c->hpin);	/* kept for the next context: no page-locked free */
	c->hpin = nullptr;
	if (c->stream)
		(void) cudaStreamDestroy(c->stream);
	(void) cudaGetLastError();
	free(c);
}

/* ctx_create: pick the current device, make a stream, a pool, scratch. */
static void *
w_ctx_create(const GdlBkConfig *cfg, const char **errmsg)
{
	int			ndev = 0;
	int			pools = 0;
	cudaError_t e;
	CuCtx	   *c;
	void	   *p = nullptr;

	e = cudaGetDeviceCount(&ndev);
	if (e != cudaSuccess || ndev == 0)
	{
		snprintf(g_create_err, sizeof(g_create_err), "no CUDA device: %s",
				 e != cudaSuccess ? cudaGetErrorString(e) : "none found");
		(void) cudaGetLastError();
		if (errmsg)
			*errmsg = g_create_err;
		return nullptr;
	}
	c = (CuCtx *) calloc(1, sizeof(CuCtx));
	if (!c)
	{
		snprintf(g_create_err, sizeof(g_create_err), "out of host memory");
		if (errmsg)
			*errmsg = g_create_err;
		return nullptr;
	}
	c->limit = cfg ? cfg->memory_limit : 0;
	c->reserve = cfg ? cfg->reserve : nullptr;
	c->reserve_arg = cfg ? cfg->reserve_arg : nullptr;
	e = cudaGetDevice(&c->dev);
	if (e == cudaSuccess)
		e = cudaSetDevice(c->dev);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&c->nsm, cudaDevAttrMultiProcessorCount, c->dev);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, c->dev);
	if (e == cudaSuccess && !pools)
		e = cudaErrorNotSupported;
	if (e == cudaSuccess)
	{
		int			least = 0,
					greatest = 0;

		/* a high-priority stream for short queries sharing the device (cfg->priority) */
		if (cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess)
			least = greatest = 0;
		e = cudaStreamCreateWithPriority(&c->stream, cudaStreamNonBlocking,
										 cfg && cfg->priority > 0 ? greatest : least);
	}
	if (e == cudaSuccess)
		e = (c->hpin = cu_hpin_take()) != nullptr ? cudaSuccess : cudaErrorMemoryAllocation;
	if (e == cudaSuccess && pool_init(c) != GDL_BK_OK)
		e = cudaErrorMemoryAllocation;
	if (e == cudaSuccess && pool_get(c, 64 * sizeof(uint64_t), &p) != GDL_BK_OK)
		e = cudaErrorMemoryAllocation;
	if (e != cudaSuccess)
	{
		snprintf(g_create_err, sizeof(g_create_err), "CUDA initialisation failed: %s",
				 cudaGetErrorString(e));
		ctx_teardown(c);
		if (errmsg)
			*errmsg = g_create_err;
		return nullptr;
	}
	c->dscratch = (unsigned long long *) p;
	{
		size_t		free_b = 0,
					total_b = 0;

		/* what the engine may plan with when no limit is set (exec_mem.c) */
		if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
			c->capacity = (int64_t) free_b + c->bytes;
		else
			(void) cudaGetLastError();
	}
	strcpy(c->errmsg, "no error");
	return c;
}

/* ctx_destroy: release the context and all its relations. */
static void
w_ctx_destroy(void *ctx)
{
	if (ctx)
		ctx_teardown((CuCtx *) ctx);
}

/*
 * ctx_abort: the host is unwinding an error.  Our bookkeeping lives in our
 * own malloc'ed memory (never the host's), so this is the same as destroy.
 */
static void
w_ctx_abort(void *ctx)
{
	if (ctx)
		ctx_teardown((CuCtx *) ctx);
}

/* last_error: the message of the last failure. */
static const char *
w_last_error(void *ctx)
{
	return ctx ? ((CuCtx *) ctx)->errmsg : "no CUDA context";
}

/* counters: transfers and peak memory of the context. */
static void
w_counters(void *ctx, GdlBkCounters *out)
{
	if (ctx && out)
	{
		CuCtx	   *c = (CuCtx *) ctx;

		*out = c->cnt;
		out->bytes_held = c->bytes;
		out->bytes_capacity = c->limit > 0 ? c->limit : c->capacity;
	}
}

/* Turn a C++ exception escaping an operation into a status. */
#define CU_GUARD(c, body) \
	try { return (body); } \
	catch (const std::bad_alloc &) { return cu_fail((c), GDL_BK_ERR_NO_MEMORY, "out of host memory"); } \
	catch (...) { return cu_fail((c), GDL_BK_ERR_DEVICE, "unexpected C++ exception in the CUDA backend"); }

/*
 * Make a relation usable by every operation: finish its pending dedup
 * (set.cu: dedup defers its sort until a result is needed) and flatten
 * sorted runs into one array (runs.cu).
 */
static int
rel_ready(CuCtx *c, GdlBkRel *r)
{
	CU_OK(rel_force(c, r));
	return rel_flatten(c, r);
}

/* Run an operation on ready inputs (b may be NULL). */
template < class F >
static int
with_forced(CuCtx *c, GdlBkRel *a, GdlBkRel *b, F &&op)
{
	CU_OK(rel_ready(c, a));
	if (b)
		CU_OK(rel_ready(c, b));
	return op();
}

/* The same for n inputs. */
template < class F >
static int
with_forced_all(CuCtx *c, int nin, GdlBkRel *const *in, F &&op)
{
	for (int i = 0; i < nin; i++)
		CU_OK(rel_ready(c, in[i]));
	return op();
}

/* set_text_ranks: copy the rank table to the device. */
static int
ranks_body(CuCtx *c, const int32_t *ranks, int32_t n)
{
	void	   *p = nullptr;

	if (n < 0 || (n > 0 && !ranks))
		return cu_fail(c, GDL_BK_ERR_INVALID, "set_text_ranks: bad arguments");
	if (c->dranks)
		pool_put(c, c->dranks);
	c->dranks = nullptr;
	c->nranks = 0;
	if (n == 0)
		return GDL_BK_OK;
	CU_OK(pool_get(c, sizeof(int32_t) * n, &p));
	c->dranks = (int32_t *) p;
	CU_TRY(c, cudaMemcpyAsync(p, ranks, sizeof(int32_t) * n, cudaMemcpyHostToDevice, c->stream));
	c->nranks = n;
	c->cnt.transfers++;
	c->cnt.bytes_to_device += (int64_t) sizeof(int32_t) * n;
	return GDL_BK_OK;
}

static int
w_set_text_ranks(void *ctx, const int32_t *ranks, int32_t n)
{
	CuCtx	   *c = (CuCtx *) ctx;

	CU_GUARD(c, ranks_body(c, ranks, n));
}

/*
 * upload: host columns to a new bag.  Bounds are computed exactly here;
 * binary relations of 32-bit non-negative values are packed on the host
 * and sent as one key array.
 */
static int
upload_body(CuCtx *c, int ncols, int64_t n, const int64_t *const *cols, CuRel **out)
{
	int64_t		lo[CU_MAX_ARITY],
				hi[CU_MAX_ARITY];
	CuRel	   *r = nullptr;
	int			st;

	if (ncols < 0 || ncols > CU_MAX_ARITY || n < 0 || (n > 0 && ncols > 0 && !cols))
		return cu_fail(c, GDL_BK_ERR_INVALID, "upload: bad arguments");
	if (ncols == 0)
		return rel_unit(c, n, out);
	bounds_empty(ncols, lo, hi);
	for (int k = 0; k < ncols; k++)
	{
		const int64_t *v = n > 0 ? cols[k] : nullptr;	/* cols may be NULL when n == 0 */

		if (n > 0 && !v)
			return cu_fail(c, GDL_BK_ERR_INVALID, "upload: column %d is NULL", k);
		for (int64_t i = 0; i < n; i++)
		{
			if (v[i] < lo[k])
				lo[k] = v[i];
			if (v[i] > hi[k])
				hi[k] = v[i];
		}
	}
	CU_OK(rel_new_bounded(c, ncols, n, lo, hi, &r));
	r->is_set = n <= 1;			/* the engine starts fixpoints from empty uploads */
	r->sorted = n <= 1;
	st = GDL_BK_OK;
	if (n > 0 && r->layout == L_PACKED && ncols == 1)
	{
		cudaError_t e = cudaMemcpyAsync(r->st->data, cols[0], sizeof(int64_t) * n,
										cudaMemcpyHostToDevice, c->stream);

		if (e != cudaSuccess)
			st = cu_err(c, e, "upload");
		c->cnt.transfers++;
	}
	else if (n > 0 && r->layout == L_PACKED)
	{
		uint64_t   *buf = (uint64_t *) malloc(sizeof(uint64_t) * n);

		if (!buf)
		{
			rel_free(c, r);
			return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "upload: out of host memory");
		}
		cudaError_t e;

		for (int64_t i = 0; i < n; i++)
			buf[i] = ((uint64_t) cols[0][i] << 32) | (uint64_t) cols[1][i];
		e = cudaMemcpyAsync(r->st->data, buf, sizeof(uint64_t) * n,
							cudaMemcpyHostToDevice, c->stream);
		if (e != cudaSuccess)
			st = cu_err(c, e, "upload");
		free(buf);
		c->cnt.transfers++;
	}
	else if (n > 0)
	{
		for (int k = 0; k < ncols && st == GDL_BK_OK; k++)
		{
			cudaError_t e = cudaMemcpyAsync((int64_t *) r->st->data + (int64_t) k * r->st->ld,
											cols[k], sizeof(int64_t) * n,
											cudaMemcpyHostToDevice, c->stream);

			if (e != cudaSuccess)
				st = cu_err(c, e, "upload");
			c->cnt.transfers++;
		}
	}
	c->cnt.bytes_to_device += (int64_t) sizeof(int64_t) * n * (r->layout == L_PACKED ? 1 : ncols);
	if (st != GDL_BK_OK)
	{
		rel_free(c, r);
		return st;
	}
	*out = r;
	return GDL_BK_OK;
}

static int
w_upload(void *ctx, int ncols, int64_t nrows, const int64_t *const *cols, GdlBkRel **out)
{
	CuCtx	   *c = (CuCtx *) ctx;

	if (!out)
		return cu_fail(c, GDL_BK_ERR_INVALID, "upload: no output");
	*out = nullptr;
	/* an upload must fit on the device: no host overflow (pool.cu) */
	c->strict++;
	try
	{
		int			st = upload_body(c, ncols, nrows, cols, out);

		c->strict--;
		return st;
	}
	catch (const std::bad_alloc &)
	{
		c->strict--;
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "out of host memory");
	}
	catch (...)
	{
		c->strict--;
		return cu_fail(c, GDL_BK_ERR_DEVICE, "unexpected C++ exception in the CUDA backend");
	}
}

/* download: copy a relation into host columns (packed keys unpacked here). */
static int
download_body(CuCtx *c, CuRel *r, int64_t *const *cols)
{
	int64_t		n = r->n;

	if (n == 0 || r->arity == 0)
		return GDL_BK_OK;
	for (int k = 0; k < r->arity; k++)
		if (!cols || !cols[k])
			return cu_fail(c, GDL_BK_ERR_INVALID, "download: column %d is NULL", k);
	if (r->layout == L_PACKED)
	{
		if (r->nruns > 0)
			CU_OK(runs_download(c, r, (uint64_t *) cols[0]));
		else
		{
			CU_TRY(c, cudaMemcpyAsync(cols[0], rel_keys(r), sizeof(uint64_t) * n,
									  cudaMemcpyDefault, c->stream));
			CU_TRY(c, cudaStreamSynchronize(c->stream));
			c->cnt.transfers++;
			c->cnt.bytes_from_device += (int64_t) sizeof(uint64_t) * n;
		}
		if (r->arity == 2)
		{
			uint64_t   *k = (uint64_t *) cols[0];

			for (int64_t i = 0; i < n; i++)
			{
				uint64_t	key = k[i];

				cols[0][i] = (int64_t) (key >> 32);
				cols[1][i] = (int64_t) (key & 0xffffffffULL);
			}
		}
		return GDL_BK_OK;
	}
	for (int k = 0; k < r->arity; k++)
	{
		CU_TRY(c, cudaMemcpyAsync(cols[k], (int64_t *) r->st->data + (int64_t) k * r->st->ld + r->off,
								  sizeof(int64_t) * n, cudaMemcpyDefault, c->stream));
		c->cnt.transfers++;
		c->cnt.bytes_from_device += (int64_t) sizeof(int64_t) * n;
	}
	CU_TRY(c, cudaStreamSynchronize(c->stream));
	return GDL_BK_OK;
}

static int
w_download(void *ctx, GdlBkRel *rel, int64_t *const *cols)
{
	CuCtx	   *c = (CuCtx *) ctx;

	if (!rel)
		return cu_fail(c, GDL_BK_ERR_INVALID, "download: no relation");
	/* sorted runs download run by run (no flattening copy) */
	CU_GUARD(c, [&] { CU_OK(rel_force(c, rel)); return download_body(c, rel, cols); }());
}

/* size: the row count, always known on the host (no sync). */
static int
w_size(void *ctx, GdlBkRel *rel, int64_t *nrows)
{
	CuCtx	   *c = (CuCtx *) ctx;

	if (!rel || !nrows)
		return cu_fail(c, GDL_BK_ERR_INVALID, "size: bad arguments");
	*nrows = 0;
	CU_GUARD(c, [&] { CU_OK(rel_force(c, rel)); *nrows = rel->n; return (int) GDL_BK_OK; }());
}

/* size_known: the rows when no deferred dedup is pending, else -1. */
static int64_t
w_size_known(void *ctx, GdlBkRel *rel)
{
	(void) ctx;
	return (rel && !rel->pending) ? rel->n : -1;
}

/* release: free a relation (its storage when no other view shares it). */
static void
w_release(void *ctx, GdlBkRel *rel)
{
	if (ctx && rel)
		rel_free((CuCtx *) ctx, rel);
}

/* join (see gdl_backend.h). */
static int
w_join(void *ctx, GdlBkRel *L, GdlBkRel *R, int nkeys, const int *lkeys, const int *rkeys,
	   int nout, const GdlBkColRef *out, GdlBkRel **result)
{
	CuCtx	   *c = (CuCtx *) ctx;

	if (!result || !L || !R || nkeys < 0 || nout < 0 || nout > CU_MAX_ARITY ||
		(nkeys > 0 && (!lkeys || !rkeys)) || (nout > 0 && !out))
		return cu_fail(c, GDL_BK_ERR_INVALID, "join: bad arguments");
	*result = nullptr;
	CU_GUARD(c, with_forced(c, L, R, [&] { return cu_op_join(c, L, R, nkeys, lkeys, rkeys, nout, out, result); }));
}

/* join_count (see gdl_backend.h): counts kept for the join that follows. */
static int
w_join_count(void *ctx, GdlBkRel *L, GdlBkRel *R, int nkeys, const int *lkeys,
			 const int *rkeys, int64_t *count)
{
	CuCtx	   *c = (CuCtx *) ctx;

	if (!count || !L || !R || nkeys < 0 || nkeys > CU_MAX_ARITY || (nkeys > 0 && (!lkeys || !rkeys)))
		return cu_fail(c, GDL_BK_ERR_INVALID, "join_count: bad arguments");
	*count = 0;
	CU_GUARD(c, with_forced(c, L, R, [&] { return cu_op_join_count(c, L, R, nkeys, lkeys, rkeys, count); }));
}

/* slice (see gdl_backend.h): a view of the rows, no copy. */
static int
w_slice(void *ctx, GdlBkRel *rel, int64_t from, int64_t to, GdlBkRel **result)
{
	CuCtx	   *c = (CuCtx *) ctx;

	if (!rel || !result)
		return cu_fail(c, GDL_BK_ERR_INVALID, "slice: bad arguments");
	*result = nullptr;
	CU_GUARD(c, with_forced(c, rel, nullptr, [&] { return cu_op_slice(c, rel, from, to, result); }));
}

/* antijoin (see gdl_backend.h). */
static int
w_antijoin(void *ctx, GdlBkRel *L, GdlBkRel *R, int nkeys, const int *lkeys,
		   const int *rkeys, GdlBkRel **result)
{
	CuCtx	   *c = (CuCtx *) ctx;

	if (!result || !L || !R || nkeys < 0 || (nkeys > 0 && (!lkeys || !rkeys)))
		return cu_fail(c, GDL_BK_ERR_INVALID, "antijoin: bad arguments");
	*result = nullptr;
	CU_GUARD(c, with_forced(c, L, R, [&] { return cu_op_antijoin(c, L, R, nkeys, lkeys, rkeys, result); }));
}

/* map (see gdl_backend.h). */
static int
w_map(void *ctx, GdlBkRel *in, int nfilter, const GdlBkExpr *filter,
	  int nout, const GdlBkExpr *out, GdlBkRel **result)
{
	CuCtx	   *c = (CuCtx *) ctx;

	if (!result || !in || nfilter < 0 || nout < 0 || nout > CU_MAX_ARITY ||
		(nfilter > 0 && !filter) || (nout > 0 && !out))
		return cu_fail(c, GDL_BK_ERR_INVALID, "map: bad arguments");
	*result = nullptr;
	CU_GUARD(c, with_forced(c, in, nullptr, [&] { return cu_op_map(c, in, nfilter, filter, nout, out, result); }));
}

/* dedup (see gdl_backend.h). */
static int
w_dedup(void *ctx, int nin, GdlBkRel *const *in, GdlBkRel **result)
{
	CuCtx	   *c = (CuCtx *) ctx;

	if (!result || nin < 1 || !in)
		return cu_fail(c, GDL_BK_ERR_INVALID, "dedup: bad arguments");
	*result = nullptr;
	for (int i = 0; i < nin; i++)
		if (!in[i] || in[i]->arity != in[0]->arity)
			return cu_fail(c, GDL_BK_ERR_INVALID, "dedup: inputs of different arity");
	CU_GUARD(c, with_forced_all(c, nin, in, [&] { return cu_op_dedup(c, nin, in, result); }));
}

/* difference (see gdl_backend.h). */
static int
w_difference(void *ctx, GdlBkRel *A, GdlBkRel *B, GdlBkRel **result)
{
	CuCtx	   *c = (CuCtx *) ctx;

	if (!result || !A || !B || A->arity != B->arity)
		return cu_fail(c, GDL_BK_ERR_INVALID, "difference: bad arguments");
	*result = nullptr;
	/* B (usually full) may stay as sorted runs: cu_op_difference searches them */
	CU_GUARD(c, with_forced(c, A, nullptr, [&] {
		CU_OK(rel_force(c, B));
		return cu_op_difference(c, A, B, result);
	}));
}

/* merge (see gdl_backend.h). */
static int
w_merge(void *ctx, GdlBkRel *A, GdlBkRel *B, GdlBkRel **result)
{
	CuCtx	   *c = (CuCtx *) ctx;

	if (!result || !A || !B || A->arity != B->arity)
		return cu_fail(c, GDL_BK_ERR_INVALID, "merge: bad arguments");
	*result = nullptr;
	CU_GUARD(c, cu_op_merge(c, A, B, result));
}

/* absorb (see gdl_backend.h). */
static int
w_absorb(void *ctx, GdlBkRel *full, GdlBkRel *cand, GdlBkRel **new_full, GdlBkRel **delta)
{
	CuCtx	   *c = (CuCtx *) ctx;

	if (!new_full || !delta || !full || !cand || full->arity != cand->arity)
		return cu_fail(c, GDL_BK_ERR_INVALID, "absorb: bad arguments");
	*new_full = nullptr;
	*delta = nullptr;
	CU_GUARD(c, cu_op_absorb(c, full, cand, new_full, delta));
}

/* aggregate (see gdl_backend.h). */
static int
w_aggregate(void *ctx, GdlBkRel *in, int ngroup, const int *group,
			int nagg, const GdlBkAgg *aggs, GdlBkRel **result)
{
	CuCtx	   *c = (CuCtx *) ctx;

	if (!result || !in || ngroup < 0 || nagg < 0 || ngroup + nagg > CU_MAX_ARITY ||
		(ngroup > 0 && !group) || (nagg > 0 && !aggs))
		return cu_fail(c, GDL_BK_ERR_INVALID, "aggregate: bad arguments");
	*result = nullptr;
	CU_GUARD(c, with_forced(c, in, nullptr, [&] { return cu_op_aggregate(c, in, ngroup, group, nagg, aggs, result); }));
}

/* from_resident (see gdl_backend.h). */
static int
w_from_resident(void *ctx, void *res, int ncols, const int *colidx,
				const int32_t *const *remap, const int32_t *remap_len, GdlBkRel **out)
{
	CuCtx	   *c = (CuCtx *) ctx;

	if (!out || !res || ncols < 0 || ncols > CU_MAX_ARITY || (ncols > 0 && !colidx) ||
		(remap && !remap_len))
		return cu_fail(c, GDL_BK_ERR_INVALID, "from_resident: bad arguments");
	*out = nullptr;
	CU_GUARD(c, cu_op_from_resident(c, res, ncols, colidx, remap, remap_len, out));
}

/* part.cu: the devices of partitioned runs (issue 14) */
extern "C" int cu_part_device_count(void);
extern "C" int cu_part_select_device(int device);

static const GdlBackend g_cuda_backend = {
	GDL_BACKEND_ABI,
	"cuda",
	w_ctx_create,
	w_ctx_destroy,
	w_ctx_abort,
	w_last_error,
	w_counters,
	w_set_text_ranks,
	w_upload,
	w_download,
	w_size,
	w_release,
	w_join,
	w_antijoin,
	w_map,
	w_dedup,
	w_difference,
	w_merge,
	w_absorb,
	w_aggregate,
	w_slice,
	w_join_count,
	cu_resident_create,
	cu_resident_free,
	w_from_resident,
	cu_part_device_count,		/* part.cu (issue 14) */
	cu_part_select_device,
	w_size_known,
};

/* The module's entry point: the operation table (touches no CUDA). */
CU_EXPORT const GdlBackend *
gdl_backend_entry(void)
{
	return &g_cuda_backend;
}

/*
 * Test hook (not part of gdl_backend.h): free and total device memory, for
 * the leak check of test_cuda_backend.  0 on success.
 */
CU_EXPORT int
gdl_cuda_debug_meminfo(size_t *free_bytes, size_t *total_bytes)
{
	if (cudaMemGetInfo(free_bytes, total_bytes) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return -1;
	}
	return 0;
}
