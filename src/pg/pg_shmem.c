/*
 * pg_shmem.c — gpudl's shared memory, one registry for every module that
 * needs a cluster-wide view: the GPU service and its admission queues
 * (src/svc), shared resident tables, progress of running work.
 *
 * Shared memory exists only when gpudl is in shared_preload_libraries
 * (PostgreSQL 15 has no way to add it later).  Without it every module must
 * keep working per session, as gpudl did before: gpudl_shmem_ready() says
 * which mode a backend is in.
 *
 * A module adds one line to 'modules' below: the bytes it needs, how many
 * LWLocks it wants in gpudl's tranche, and an init function that runs once
 * per postmaster start (and after a crash restart) under AddinShmemInitLock.
 */
#include "pg/gpudl_pg.h"
#include "svc/gpudl_svc.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

/* One shared-memory user. */
typedef struct GpudlShmemModule
{
	const char *name;
	Size		(*size) (void);
	int			nlocks;
	void		(*init) (void *mem, bool found, LWLockPadded *locks);	/* its first lock */
} GpudlShmemModule;

static const GpudlShmemModule modules[] = {
	{"gpudl service", gpudl_svc_shmem_size, 2, gpudl_svc_shmem_init},
	{"gpudl progress", gpudl_progress_shmem_size, 1, gpudl_progress_shmem_init},
};

#define NMODULES ((int) lengthof(modules))

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static bool shmem_requested = false;
static bool shmem_ready = false;
static void *module_mem[lengthof(modules)];

/* Whether gpudl's shared memory exists in this process. */
bool
gpudl_shmem_ready(void)
{
	return shmem_ready;
}

/* Request the space and the locks of every module (postmaster only). */
static void
gpudl_shmem_request(void)
{
	Size		total = 0;
	int			nlocks = 0;
	int			i;

	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	for (i = 0; i < NMODULES; i++)
	{
		total = add_size(total, MAXALIGN(modules[i].size()));
		nlocks += modules[i].nlocks;
	}
	RequestAddinShmemSpace(total);
	RequestNamedLWLockTranche("gpudl", nlocks);
}

/* Attach (or create, in the postmaster) every module's struct. */
static void
gpudl_shmem_startup(void)
{
	LWLockPadded *locks;
	int			base = 0;
	int			i;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	locks = GetNamedLWLockTranche("gpudl");
	for (i = 0; i < NMODULES; i++)
	{
		bool		found;

		module_mem[i] = ShmemInitStruct(modules[i].name, modules[i].size(), &found);
		modules[i].init(module_mem[i], found, &locks[base]);
		base += modules[i].nlocks;
	}
	LWLockRelease(AddinShmemInitLock);
	shmem_ready = true;
}

/*
 * Install the hooks, from _PG_init while shared_preload_libraries is being
 * processed (a later load gets no shared memory).
 */
void
gpudl_shmem_install(void)
{
	if (!process_shared_preload_libraries_in_progress || shmem_requested)
		return;
	shmem_requested = true;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = gpudl_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = gpudl_shmem_startup;
}
