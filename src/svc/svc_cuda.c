/*
 * svc_cuda.c — the CUDA module (gpudl.cuda_library) opened with dlopen and
 * checked against this build's backend ABI, for a session's own probe
 * (src/pg/pg_device.c) and for the service's start (svc_main.c); and the
 * service seen as a session's GPU backend.  Never called in the postmaster.
 */
#include "svc/svc_int.h"

#include <dlfcn.h>

#include "miscadmin.h"

/* "$libdir/x" -> pkglib_path/x, as the dynamic loader does for modules. */
char *
gpudl_expand_libdir(const char *path)
{
	if (strncmp(path, "$libdir", 7) == 0)
		return psprintf("%s%s", pkglib_path, path + 7);
	return pstrdup(path);
}

/*
 * dlopen gpudl.cuda_library and check it is a backend of this ABI (the
 * session's probe below and the GPU service's start both use it).  NULL,
 * with the reason in 'why', when it cannot be used; *handle is the module.
 */
const GdlBackend *
gpudl_open_cuda_module(void **handle, char *why, size_t whylen)
{
	char	   *path = gpudl_expand_libdir(gpudl_cuda_library);
	GdlBackendEntryFn entry;
	const GdlBackend *b;

	*handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (*handle == NULL)
	{
		snprintf(why, whylen, "could not load the GPU backend \"%s\": %s", path, dlerror());
		return NULL;
	}
	entry = (GdlBackendEntryFn) dlsym(*handle, GDL_BACKEND_ENTRY_SYMBOL);
	if (entry == NULL || (b = entry()) == NULL || b->abi != GDL_BACKEND_ABI)
	{
		snprintf(why, whylen, "\"%s\" is not a gpudl backend of this version", path);
		return NULL;
	}
	return b;
}

/*
 * The service's proxy backend once the service serves a GPU, or NULL when
 * it has none.  A session that arrives while the service is starting (or
 * being restarted) waits for it, up to 30 seconds; one that finds no
 * service at all (it could not be started: max_worker_processes) waits 2.
 */
const GdlBackend *
svc_service_backend(void)
{
	int			waited_ms = 0;

	while (((svc_shared->state == SVC_STARTING || svc_shared->state == SVC_STOPPED) && waited_ms < 30000) ||
		   (svc_shared->state == SVC_ABSENT && waited_ms < 2000))
	{
		pg_usleep(10000L);
		waited_ms += 10;
		CHECK_FOR_INTERRUPTS();
	}
	return svc_shared->state == SVC_READY ? svc_proxy_backend() : NULL;
}

/* Why the service serves no GPU (for messages). */
const char *
svc_unavailable_reason(void)
{
	switch (svc_shared->state)
	{
		case SVC_READY:
			return "the GPU service is ready";
		case SVC_NO_GPU:
			return svc_shared->why;
		case SVC_STARTING:
			return "the GPU service is still starting";
		case SVC_STOPPED:
			return "the GPU service has stopped (the postmaster restarts it)";
		default:
			return "the GPU service is not running (gpudl.service = off, or max_worker_processes too low)";
	}
}
