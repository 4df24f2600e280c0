/*
 * pg_module.c — module entry: the magic block, _PG_init and gpudl's settings
 * (PRODUCT.md section 4).
 *
 * _PG_init runs in the postmaster when the library is preloaded, so it must
 * not touch CUDA: the GPU backend is dlopen'ed lazily by the backend that
 * first needs it.
 */
#include "gpudl_pg.h"

#include <limits.h>

#include "utils/guc.h"

PG_MODULE_MAGIC;

int			gpudl_device_setting = GPUDL_DEVICE_AUTO;
int			gpudl_device_memory_limit_mb = 0;
int			gpudl_max_iterations = 100000;
int			gpudl_host_memory_limit_mb = 0;
char	   *gpudl_cuda_library = NULL;

static const struct config_enum_entry device_options[] = {
	{"auto", GPUDL_DEVICE_AUTO, false},
	{"cpu", GPUDL_DEVICE_CPU, false},
	{"gpu", GPUDL_DEVICE_GPU, false},
	{NULL, 0, false}
};

void		_PG_init(void);

/* Define gpudl.* settings and reserve the prefix. */
void
gpudl_define_gucs(void)
{
	DefineCustomEnumVariable("gpudl.device",
							 "Where gpudl evaluates programs: auto, cpu or gpu.",
							 "auto uses a GPU when one works, else the CPU; gpu fails when none works.",
							 &gpudl_device_setting, GPUDL_DEVICE_AUTO, device_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpudl.device_memory_limit",
							"Device memory one backend may hold, in MB (0: no limit).",
							NULL, &gpudl_device_memory_limit_mb, 0, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("gpudl.max_iterations",
							"Fixpoint rounds before a run stops with an error.",
							NULL, &gpudl_max_iterations, 100000, 1, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpudl.host_memory_limit",
							"Host memory one evaluation may hold, in MB (0: three quarters of physical memory).",
							"Past it the evaluation stops with an error instead of exhausting the machine.",
							&gpudl_host_memory_limit_mb, 0, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomStringVariable("gpudl.cuda_library",
							   "Path of the GPU backend module to dlopen.",
							   NULL, &gpudl_cuda_library, "$libdir/gpudl_cuda.so",
							   PGC_SUSET, 0, NULL, NULL, NULL);
	MarkGUCPrefixReserved("gpudl");
}

/* Library load: settings and host hooks only (no CUDA here). */
void
_PG_init(void)
{
	gpudl_define_gucs();
	gpudl_install_host();
}
