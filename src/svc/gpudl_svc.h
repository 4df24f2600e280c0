/*
 * gpudl_svc.h — what the PostgreSQL glue (src/pg) and the SQL functions
 * (src/api) need of the service layer besides its internals (svc_int.h):
 * the settings it reads, its shared memory and the CUDA module loader.
 *
 * src/svc sits below src/pg: nothing here includes a header of src/pg.
 */
#ifndef GPUDL_SVC_H
#define GPUDL_SVC_H

#include "postgres.h"

#include "exec/gdl_backend.h"
#include "utils/guc.h"

/* gpudl.device: registered with the other settings (pg_gucs.c); stored here. */
typedef enum GpudlDeviceSetting
{
	GPUDL_DEVICE_AUTO, GPUDL_DEVICE_CPU, GPUDL_DEVICE_GPU
} GpudlDeviceSetting;

extern int	gpudl_device_setting;
extern char *gpudl_cuda_library;

/*
 * One integer setting, a row of the tables that gpudl_define_int_settings
 * defines (svc_shmem.c for the service's, pg_gucs.c for the others).
 */
typedef struct GpudlIntSetting
{
	const char *name;
	const char *short_desc;
	const char *long_desc;
	int		   *var;
	int			boot;
	int			min;
	int			max;
	GucContext	context;
	int			flags;
	GucIntAssignHook assign;
} GpudlIntSetting;

extern void gpudl_define_int_settings(const GpudlIntSetting *s, int n);

/* The service's shared memory, one module of gpudl's registry (pg_shmem.c). */
union LWLockPadded;
extern Size gpudl_svc_shmem_size(void);
extern void gpudl_svc_shmem_init(void *mem, bool found, union LWLockPadded *locks);

/* The CUDA module, for a session's probe and the service's start (svc_cuda.c). */
extern char *gpudl_expand_libdir(const char *path);
extern const GdlBackend *gpudl_open_cuda_module(void **handle, char *why, size_t whylen);

/* The service as a session's GPU backend (svc_cuda.c). */
extern const GdlBackend *svc_service_backend(void);
extern const char *svc_unavailable_reason(void);

#endif							/* GPUDL_SVC_H */
