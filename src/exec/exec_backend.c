/*
 * exec_backend.c — which backend runs an evaluation: the one the host
 * registered for the run's device (the CPU backend at start-up, the GPU
 * backend after loading the CUDA module or attaching to the GPU service).
 * The engine names no backend: it sees only gdl_backend.h.  Also turns backend status codes into host errors, and remembers
 * the live backend context so that an error escaping gdl_run can release
 * the device resources it holds (gdl_engine_abort_cleanup).
 */
#include "exec_int.h"

static const GdlBackend *backends[GDL_DEVICE_GPU + 1];
static int64_t engine_batch_rows = INT64_C(32) << 20;

/* The live context of the running evaluation (NULL between runs). */
static const GdlBackend *cur_bk;
static void *cur_ctx;

/* The backend for a device, or NULL when none is available. */
const GdlBackend *
gdl_backend_for(GdlDevice device)
{
	if (device < 0 || device > GDL_DEVICE_GPU)
		return NULL;
	return backends[device];
}

/* Register (or with NULL, forget) the backend of a device. */
void
gdl_backend_register(GdlDevice device, const GdlBackend *backend)
{
	if (device >= 0 && device <= GDL_DEVICE_GPU)
		backends[device] = backend;
}

/* Set the CPU backend's worker threads (0: one per CPU, up to 16). */
void
gdl_engine_set_threads(int nthreads)
{
	gdl_set_threads(nthreads);
}

/* Most join output rows one batch of a rule should produce (0: no batching). */
void
gdl_engine_set_batch_rows(int64_t rows)
{
	engine_batch_rows = rows < 0 ? 0 : rows;
}

/* The configured batch size. */
int64_t
exec_batch_rows(void)
{
	return engine_batch_rows;
}

/* The configured worker threads. */
int
exec_threads(void)
{
	return gdl_threads();
}

/* Remember (or with NULL, forget) the live backend context. */
void
exec_set_current(const GdlBackend *bk, void *ctx)
{
	cur_bk = bk;
	cur_ctx = ctx;
}

/* Release non-host resources of a run that an error interrupted. */
void
gdl_engine_abort_cleanup(void)
{
	const GdlBackend *bk = cur_bk;
	void	   *ctx = cur_ctx;

	cur_bk = NULL;
	cur_ctx = NULL;
	if (bk && ctx && bk->ctx_abort)
		bk->ctx_abort(ctx);
	exec_part_abort();			/* the contexts of a partitioned run (exec_part.c) */
}

/*
 * Raise a host error for a failed backend operation.  The context is
 * destroyed first (its relations are of no use any more).
 */
void
exec_check(ExecState *es, int status, const char *what)
{
	GdlErrCode	code;
	char	   *msg;

	if (status == GDL_BK_OK)
		return;
	msg = gdl_strdup(es->bk->last_error(es->ctx));
	switch (status)
	{
		case GDL_BK_ERR_DIV_ZERO:
			code = GDL_ERR_DIVISION_BY_ZERO;
			break;
		case GDL_BK_ERR_OVERFLOW:
			code = GDL_ERR_OVERFLOW;
			break;
		case GDL_BK_ERR_NO_MEMORY:
			code = GDL_ERR_DEVICE_MEMORY;
			break;
		case GDL_BK_ERR_DEVICE:
			code = GDL_ERR_DEVICE;
			break;
		default:
			code = GDL_ERR_INTERNAL;
			break;
	}
	exec_set_current(NULL, NULL);
	exec_part_forget(es->ctx);	/* a partition's context (exec_part.c) */
	es->bk->ctx_destroy(es->ctx);
	es->ctx = NULL;
	if (code == GDL_ERR_DIVISION_BY_ZERO || code == GDL_ERR_OVERFLOW)
		gdl_error(code, NULL, NULL, "%s",	/* the same words on every backend */
				  code == GDL_ERR_DIVISION_BY_ZERO ? "division by zero" : "integer out of range");
	if (code == GDL_ERR_DEVICE_MEMORY)
		gdl_error(code, msg, "Lower the data size, raise gpudl.device_memory_limit, or use gpudl.device = cpu.",
				  "out of device memory in %s", what);
	gdl_error(code, msg, NULL, "%s backend failed in %s", es->bk->name, what);
}
