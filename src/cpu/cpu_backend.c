/*
 * cpu_backend.c — the CPU backend's entry points: context, errors, upload
 * and download, sizes, and the GdlBackend table that ties the cpu_*.c
 * operations together.  All memory comes from the host (gdl_alloc), so an
 * error raised by the host frees it with the rest of the arena.
 */
#include "cpu_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Record an error message; returns the status for 'return cpu_fail(...)'. */
int
cpu_fail(CpuCtx *ctx, int status, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(ctx->errmsg, sizeof(ctx->errmsg), fmt, ap);
	va_end(ap);
	return status;
}

/* Count bytes held by relations and indexes; keep the peak. */
void
cpu_account(CpuCtx *ctx, int64_t delta_bytes)
{
	ctx->bytes += delta_bytes;
	if (ctx->bytes > ctx->peak_bytes)
		ctx->peak_bytes = ctx->bytes;
}

/* Create a context; nthreads 0 means one per online CPU (at most 16). */
static void *
cpu_ctx_create(const GdlBkConfig *cfg, const char **errmsg)
{
	CpuCtx	   *ctx = gdl_alloc(sizeof(CpuCtx));
	int			nt = cfg ? cfg->nthreads : 0;

	if (nt <= 0)
	{
		long		ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		nt = ncpu > 0 ? (int) ncpu : 1;
		if (nt > 16)
			nt = 16;
	}
	if (nt > CPU_MAX_THREADS)
		nt = CPU_MAX_THREADS;
	ctx->nthreads = nt;
	ctx->limit = cfg && cfg->memory_limit > 0 ? cfg->memory_limit : 0;
	strcpy(ctx->errmsg, "no error");
	return ctx;
}

/* Free every live relation and the context. */
static void
cpu_ctx_destroy(void *vctx)
{
	CpuCtx	   *ctx = vctx;

	while (ctx->live)
		cpu_rel_free(ctx, ctx->live);
	cpu_pool_free_all(ctx);
	gdl_free(ctx->ranks);
	gdl_free(ctx);
}

/* After a host error everything is host memory: nothing to do. */
static void
cpu_ctx_abort(void *vctx)
{
}

/* Message of the last failure. */
static const char *
cpu_last_error(void *vctx)
{
	return ((CpuCtx *) vctx)->errmsg;
}

/* Memory counters. */
static void
cpu_counters(void *vctx, GdlBkCounters *out)
{
	CpuCtx	   *ctx = vctx;

	memset(out, 0, sizeof(*out));
	out->peak_bytes = ctx->peak_bytes;
	out->bytes_held = ctx->bytes + ctx->pool_bytes;
	out->bytes_capacity = ctx->limit;
}

/* Keep a copy of the text rank table. */
static int
cpu_set_text_ranks(void *vctx, const int32_t *ranks, int32_t n)
{
	CpuCtx	   *ctx = vctx;

	gdl_free(ctx->ranks);
	ctx->ranks = gdl_alloc(sizeof(int32_t) * (n > 0 ? n : 1));
	memcpy(ctx->ranks, ranks, sizeof(int32_t) * n);
	ctx->nranks = n;
	return GDL_BK_OK;
}

/* A bag from host columns (copied). */
static int
cpu_upload(void *vctx, int ncols, int64_t nrows, const int64_t *const *cols, GdlBkRel **out)
{
	CpuCtx	   *ctx = vctx;

	*out = NULL;
	if (ncols < 0 || ncols > CPU_MAX_ARITY || nrows < 0)
		return cpu_fail(ctx, GDL_BK_ERR_INVALID, "bad upload shape");
	*out = cpu_rel_from_cols(ctx, ncols, nrows, (int64_t **) cols, NULL, NULL, NULL);
	/* no rows, or one row, is trivially a set (the engine starts from empty sets) */
	if (nrows == 0 || (nrows == 1 && ncols > 0))
		(*out)->is_set = true;
	return GDL_BK_OK;
}

/* Copy a relation into host columns. */
static int
cpu_download(void *vctx, GdlBkRel *rel, int64_t *const *cols)
{
	int			c;

	cpu_rel_flatten(vctx, rel);
	for (c = 0; c < rel->arity; c++)
		cpu_rel_decode_col(rel, c, 0, rel->n, cols[c]);
	return GDL_BK_OK;
}

/* Number of rows. */
static int
cpu_size(void *vctx, GdlBkRel *rel, int64_t *nrows)
{
	*nrows = rel->n;
	return GDL_BK_OK;
}

/* Rows of a relation: always known on the CPU. */
static int64_t
cpu_size_known(void *vctx, GdlBkRel *rel)
{
	(void) vctx;
	return rel ? rel->n : -1;
}

/* Rows [from, to) of a relation (a copy). */
static int
cpu_slice(void *vctx, GdlBkRel *rel, int64_t from, int64_t to, GdlBkRel **result)
{
	CpuCtx	   *ctx = vctx;
	CpuRel	   *r;
	int			c;

	*result = NULL;
	if (from < 0 || to > rel->n || from > to)
		return cpu_fail(ctx, GDL_BK_ERR_INVALID, "slice [%lld, %lld) out of range",
						(long long) from, (long long) to);
	cpu_rel_flatten(ctx, rel);
	r = cpu_rel_like(ctx, rel, to - from);
	if (rel->packed)
		memcpy(r->keys, rel->keys + from, sizeof(uint64_t) * (to - from));
	else
	{
		for (c = 0; c < rel->arity; c++)
			memcpy(r->cols[c], rel->cols[c] + from, sizeof(int64_t) * (to - from));
	}
	r->n = to - from;
	*result = r;
	return GDL_BK_OK;
}

/* Free a relation. */
static void
cpu_release(void *vctx, GdlBkRel *rel)
{
	if (rel)
		cpu_rel_free(vctx, rel);
}

static const GdlBackend cpu_backend = {
	.abi = GDL_BACKEND_ABI,
	.name = "cpu",
	.ctx_create = cpu_ctx_create,
	.ctx_destroy = cpu_ctx_destroy,
	.ctx_abort = cpu_ctx_abort,
	.last_error = cpu_last_error,
	.counters = cpu_counters,
	.set_text_ranks = cpu_set_text_ranks,
	.upload = cpu_upload,
	.download = cpu_download,
	.size = cpu_size,
	.release = cpu_release,
	.slice = cpu_slice,
	.join = cpu_op_join,
	.join_count = cpu_op_join_count,
	.antijoin = cpu_op_antijoin,
	.map = cpu_op_map,
	.dedup = cpu_op_dedup,
	.difference = cpu_op_difference,
	.merge = cpu_op_merge,
	.absorb = cpu_op_absorb,
	.aggregate = cpu_op_aggregate,
	.size_known = cpu_size_known,
};

/* The CPU backend's operation table. */
const GdlBackend *
gdl_cpu_backend(void)
{
	return &cpu_backend;
}
