/*
 * api_module.c — module entry: the magic block and _PG_init, which wires the
 * layers together at library load: settings (src/pg/pg_gucs.c and the
 * service's, src/svc/svc_shmem.c), shared memory, the GPU service's worker,
 * the host hooks, the maintained tables' hook on program changes
 * (src/maint) and the planner hook of the GpuDatalog scan (scan_path.c).
 *
 * _PG_init runs in the postmaster when the library is preloaded, so it must
 * not touch CUDA: the GPU backend is dlopen'ed lazily by the backend that
 * first needs it.
 */
#include "pg/gpudl_pg.h"
#include "maint/gpudl_maint.h"
#include "svc/svc_int.h"
#include "api/scan.h"

#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* Library load: settings, hooks and the service's registration (no CUDA here). */
void
_PG_init(void)
{
	gpudl_define_gucs();
	gpudl_svc_define_gucs();
	MarkGUCPrefixReserved("gpudl");
	gpudl_shmem_install();
	gpudl_svc_register_worker();
	gpudl_install_host();
	gpudl_program_changed_hook = gpudl_maint_program_changed;
	gpudl_scan_init();
}
