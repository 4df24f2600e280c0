/*
 * pg_device.c — the GPU backend seen from a PostgreSQL backend: loading
 * gpudl_cuda.so with dlopen on first use (never in the postmaster: nothing
 * here runs from _PG_init), checking once that a device works, choosing the
 * device of a run from gpudl.device, and gpudl_device_info().
 *
 * Without the module, a driver or a device, gpudl.device = auto logs once at
 * DEBUG1 and runs on the CPU; gpudl.device = gpu raises an error saying why.
 *
 * When the GPU service runs (gpudl preloaded, src/svc), a session never
 * loads CUDA: its GPU backend is the service's proxy, and what works or
 * not is what the service found.
 */
#include "pg/gpudl_run.h"

#include <dlfcn.h>
#include <unistd.h>

#include "exec/gdl_backend.h"
#include "ilp/gdl_ilp_device.h"
#include "mine/gdl_mine_device.h"
#include "svc/svc_int.h"
#include "pg/pg_part.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(gpudl_device_info);

/* Signature of the module's optional device description. */
typedef int (*DeviceInfoFn) (char *name, size_t namelen, int64_t *total, int64_t *free_bytes);

static bool probed = false;
static const GdlBackend *gpu_backend = NULL;
static DeviceInfoFn gpu_device_info = NULL;
/* part.cu: one GPU of several (issue 14) */
typedef int (*DeviceInfoNFn) (int device, char *name, size_t namelen, int64_t *total, int64_t *free_bytes);
static DeviceInfoNFn gpu_device_info_n = NULL;
static char gpu_unavailable[512];
static const GdlIlpDevice *gpu_ilp = NULL;
static const GdlMineDevice *gpu_mine = NULL;

/* Declared here and in api_learn.c, its one caller. */
extern bool gpudl_ilp_device_setup(void);
/* Declared here and in pg_kg.c, its one caller. */
extern bool gpudl_mine_device_setup(void);

/*
 * Load the module and check that a context can be created, once per
 * backend process; the outcome (or the reason for failure) is remembered.
 */
static void
probe_gpu(void)
{
	void	   *handle;
	const GdlBackend *b;
	const char *why = NULL;
	void	   *ctx;
	GdlBkConfig cfg;

	if (probed)
		return;
	probed = true;
	b = gpudl_open_cuda_module(&handle, gpu_unavailable, sizeof(gpu_unavailable));
	if (b == NULL)
		return;
	memset(&cfg, 0, sizeof(cfg));
	ctx = b->ctx_create(&cfg, &why);
	if (ctx == NULL)
	{
		snprintf(gpu_unavailable, sizeof(gpu_unavailable),
				 "no usable GPU: %s", why ? why : "unknown reason");
		return;
	}
	b->ctx_destroy(ctx);
	gpu_backend = b;
	gpu_device_info = (DeviceInfoFn) dlsym(handle, "gdl_cuda_device_info");
	gpu_device_info_n = (DeviceInfoNFn) dlsym(handle, "gdl_cuda_device_info_n");
	{
		GdlIlpDeviceEntryFn ilp_entry;

		ilp_entry = (GdlIlpDeviceEntryFn) dlsym(handle, GDL_ILP_DEVICE_ENTRY_SYMBOL);
		gpu_ilp = ilp_entry ? ilp_entry() : NULL;
		if (gpu_ilp != NULL && gpu_ilp->abi != GDL_ILP_DEVICE_ABI)
			gpu_ilp = NULL;
	}
	{
		GdlMineDeviceEntryFn mine_entry;

		mine_entry = (GdlMineDeviceEntryFn) dlsym(handle, GDL_MINE_DEVICE_ENTRY_SYMBOL);
		gpu_mine = mine_entry ? mine_entry() : NULL;
		if (gpu_mine != NULL && gpu_mine->abi != GDL_MINE_DEVICE_ABI)
			gpu_mine = NULL;
	}
}

/*
 * Register the GPU's rule-learning trainer with the ILP core for the next
 * gdl_ilp_learn, as gpudl.device says: cpu unregisters it, auto lets large
 * problems train on it, gpu every problem (and raises, as for runs, when no
 * GPU works).  Returns whether a device is registered.
 */
bool
gpudl_ilp_device_setup(void)
{
	gdl_ilp_register_device(NULL);
	if (gpudl_device_setting == GPUDL_DEVICE_CPU)
		return false;
	if (svc_active() && gpudl_service_enabled)
	{
		/* the service owns the GPU: train and cover there (svc_ilp.c) */
		const GdlIlpDevice *proxy = svc_ilp_proxy_device();

		if (proxy == NULL)
			return false;
		gdl_ilp_register_device(proxy);
	}
	else if (gpudl_choose_gpu_backend() == NULL || gpu_ilp == NULL)
		return false;
	else
		gdl_ilp_register_device(gpu_ilp);
	gdl_ilp_set_device_mode(gpudl_device_setting == GPUDL_DEVICE_GPU ?
							GDL_ILP_DEVICE_ALWAYS : GDL_ILP_DEVICE_AUTO);
	return true;
}

/*
 * Register the GPU's mining counter with the mining core for the next
 * gdl_mine, as gpudl.device says (cpu: none; auto and gpu: the GPU when
 * one works in this session and the module has the counter).  With the GPU
 * service running, the service owns the GPU and counts for the session
 * (svc_mine.c) when its module has the counter.
 * Returns whether a device is registered.
 */
bool
gpudl_mine_device_setup(void)
{
	gdl_mine_register_device(NULL);
	if (gpudl_device_setting == GPUDL_DEVICE_CPU)
		return false;
	if (svc_active() && gpudl_service_enabled)
	{
		/* the service owns the GPU: count there, admitted like a run */
		const GdlMineDevice *proxy = svc_mine_proxy_device();

		if (proxy == NULL)
			return false;
		gdl_mine_register_device(proxy);
		return true;
	}
	if (gpudl_choose_gpu_backend() == NULL || gpu_mine == NULL)
		return false;
	gdl_mine_register_device(gpu_mine);
	return true;
}

/*
 * The backend a run should use under gpudl.device, or NULL for the CPU.
 * Raises when gpudl.device = gpu and no GPU works.
 */
const GdlBackend *
gpudl_choose_gpu_backend(void)
{
	if (gpudl_device_setting == GPUDL_DEVICE_CPU)
		return NULL;
	if (svc_active() && gpudl_service_enabled)
	{
		const GdlBackend *b = svc_service_backend();

		if (b == NULL && gpudl_device_setting == GPUDL_DEVICE_GPU)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("gpudl.device is \"gpu\" but no GPU can be used"),
					 errdetail("%s", svc_unavailable_reason()),
					 errhint("Set gpudl.device to 'auto' or 'cpu' to run on the CPU.")));
		return b;
	}
	probe_gpu();
	if (gpu_backend == NULL && gpudl_device_setting == GPUDL_DEVICE_GPU)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpudl.device is \"gpu\" but no GPU can be used"),
				 errdetail("%s", gpu_unavailable),
				 errhint("Set gpudl.device to 'auto' or 'cpu' to run on the CPU.")));
	if (gpu_backend == NULL)
		elog(DEBUG1, "gpudl: running on the CPU: %s", gpu_unavailable);
	return gpu_backend;
}

/* Add one row to gpudl_device_info's result. */
static void
put_device(ReturnSetInfo *rsinfo, const char *backend, const char *device,
		   int64 total, int64 free_bytes)
{
	Datum		values[4];
	bool		nulls[4] = {false, false, total < 0, free_bytes < 0};

	values[0] = CStringGetTextDatum(backend);
	values[1] = CStringGetTextDatum(device);
	values[2] = Int64GetDatum(total);
	values[3] = Int64GetDatum(free_bytes);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * gpudl_device_info(): the CPU always, and the GPU when one works (or a
 * row saying why not).
 */
Datum
gpudl_device_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	long		pages = sysconf(_SC_PHYS_PAGES);
	long		avail = sysconf(_SC_AVPHYS_PAGES);
	long		pagesize = sysconf(_SC_PAGESIZE);

	InitMaterializedSRF(fcinfo, 0);
	put_device(rsinfo, "cpu", psprintf("%ld cores", sysconf(_SC_NPROCESSORS_ONLN)),
			   (int64) pages * pagesize, (int64) avail * pagesize);
	if (svc_active() && gpudl_service_enabled)
	{
		if (svc_service_backend() != NULL)
			put_device(rsinfo, "cuda", psprintf("%s (GPU service, pid %d)", svc_shared->device, svc_shared->pid),
					   svc_shared->device_total,
					   Max(svc_budget(SVC_RES_DEVICE) - (int64) pg_atomic_read_u64(&svc_shared->committed[SVC_RES_DEVICE]), 0));
		else
			put_device(rsinfo, "none", svc_unavailable_reason(), -1, -1);
		gpudl_part_device_rows(rsinfo);
		return (Datum) 0;
	}
	probe_gpu();
	if (gpu_backend != NULL && gpu_device_info_n && gpu_backend->device_count &&
		gpu_backend->device_count() > 1)
	{
		/* several GPUs (issue 14): a row each */
		int			d,
					n = gpu_backend->device_count();

		for (d = 0; d < n; d++)
		{
			char		name[256];
			int64_t		total = -1,
						free_bytes = -1;

			snprintf(name, sizeof(name), "GPU %d", d);
			(void) gpu_device_info_n(d, name, sizeof(name), &total, &free_bytes);
			put_device(rsinfo, "cuda", name, total, free_bytes);
		}
	}
	else if (gpu_backend != NULL)
	{
		char		name[256] = "cuda device";
		int64_t		total = -1,
					free_bytes = -1;

		if (gpu_device_info)
			(void) gpu_device_info(name, sizeof(name), &total, &free_bytes);
		put_device(rsinfo, "cuda", name, total, free_bytes);
	}
	else
		put_device(rsinfo, "none", gpu_unavailable, -1, -1);
	gpudl_part_device_rows(rsinfo);	/* the last partitioned run (pg_part.c) */
	return (Datum) 0;
}
