/*
 * svc_shmem.c — the GPU service's shared state: its settings, the size and
 * initialisation of its shared memory (slots with their buffers, the
 * admission queue, the resident registry), and the registration of the
 * service process with the postmaster.
 *
 * Everything here needs shared_preload_libraries = 'gpudl'.  Without it,
 * svc_active() is false and sessions run the GPU backend themselves, as
 * before the service existed.
 */
#include "svc/svc_int.h"

#include <limits.h>

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"

SvcShared  *svc_shared = NULL;
static LWLockPadded *svc_locks = NULL;	/* the service's two, in gpudl's tranche */

/* gpudl.device and gpudl.cuda_library (registered in pg_gucs.c) */
int			gpudl_device_setting = GPUDL_DEVICE_AUTO;
char	   *gpudl_cuda_library = NULL;

bool		gpudl_service_enabled = true;
int			gpudl_service_slots = 32;
int			gpudl_service_buffer_kb = 4096;
int			gpudl_device_wait_timeout_ms = 60000;
int			gpudl_host_wait_timeout_ms = 0;
int			gpudl_cluster_host_memory_mb = 0;
int			gpudl_device_memory_budget_mb = 0;
int			gpudl_service_backend = SVC_BACKEND_CUDA;

static const struct config_enum_entry service_backend_options[] = {
	{"cuda", SVC_BACKEND_CUDA, false},
	{"cpu", SVC_BACKEND_CPU, false},
	{NULL, 0, false}
};

/*
 * Define the service's settings (from _PG_init, before shared memory).
 *
 * Those that shape the shared memory and the service process are read only
 * at server start.  PostgreSQL lets a library create PGC_POSTMASTER
 * settings only while it is being preloaded (later it is a FATAL), so a
 * session that loads gpudl without shared_preload_libraries gets them as
 * PGC_SIGHUP settings instead: visible, settable in postgresql.conf, and
 * saying that they take effect only when gpudl is preloaded.
 */
void
gpudl_svc_define_gucs(void)
{
	GucContext	startup = process_shared_preload_libraries_in_progress
		? PGC_POSTMASTER : PGC_SIGHUP;
	const GpudlIntSetting ints[] = {
		{"gpudl.service_slots", "GPU runs the service serves at once (more wait for a slot).", "Read at server start, with shared_preload_libraries.", &gpudl_service_slots, 32, 1, 256, startup, 0, NULL},
		{"gpudl.service_buffer", "Shared buffer of each service slot, in kB (transfers pass through it in pieces).", "Read at server start, with shared_preload_libraries.", &gpudl_service_buffer_kb, 4096, 64, 1024 * 1024, startup, GUC_UNIT_KB, NULL},
		{"gpudl.device_wait_timeout", "How long a GPU run waits for device memory held by other runs (0: no limit).", "Past it gpudl.device = auto runs on the CPU and gpu raises 53200.", &gpudl_device_wait_timeout_ms, 60000, 0, INT_MAX, PGC_USERSET, GUC_UNIT_MS, NULL},
		{"gpudl.host_wait_timeout", "How long a CPU run waits for the cluster's host memory budget (0: no limit).", "Past it the run raises 53200; statement_timeout and cancel also end the wait.", &gpudl_host_wait_timeout_ms, 0, 0, INT_MAX, PGC_USERSET, GUC_UNIT_MS, NULL},
		{"gpudl.cluster_host_memory", "Host memory the CPU runs of all sessions may hold together, in MB (0: half of physical memory).", "A run that would pass it waits for others to finish (needs shared_preload_libraries).", &gpudl_cluster_host_memory_mb, 0, 0, INT_MAX, PGC_SIGHUP, GUC_UNIT_MB, NULL},
		{"gpudl.device_memory_budget", "Device memory all GPU runs and shared resident tables may hold together, in MB (0: 92% of the device memory free when the service starts).", NULL, &gpudl_device_memory_budget_mb, 0, 0, INT_MAX, PGC_SIGHUP, GUC_UNIT_MB, NULL},
	};

	DefineCustomBoolVariable("gpudl.service",
							 "Runs GPU work in one service process of the cluster (needs shared_preload_libraries).",
							 "Off: each session loads the GPU backend itself.  Read at server start, and only when gpudl is in shared_preload_libraries.",
							 &gpudl_service_enabled, true, startup, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpudl.service_backend",
							 "What the GPU service serves: cuda, or (for tests without a GPU) the CPU backend.",
							 "cpu runs every gpudl.device = gpu run through the service on its CPU backend, so that the service's protocol, queue and faults can be tested anywhere.  Read at server start, with shared_preload_libraries.",
							 &gpudl_service_backend, SVC_BACKEND_CUDA, service_backend_options,
							 startup, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	gpudl_define_int_settings(ints, lengthof(ints));
}

/*
 * Define n integer settings from a table, in its order: one row a setting
 * instead of one DefineCustomIntVariable call each (the service's here,
 * the others in pg_gucs.c).  No setting has a check or show hook.
 */
void
gpudl_define_int_settings(const GpudlIntSetting *s, int n)
{
	for (int i = 0; i < n; i++)
		DefineCustomIntVariable(s[i].name, s[i].short_desc, s[i].long_desc, s[i].var,
								s[i].boot, s[i].min, s[i].max, s[i].context, s[i].flags,
								NULL, s[i].assign, NULL);
}

/* Whether this session runs with the service's shared state. */
bool
svc_active(void)
{
	return svc_shared != NULL;
}

/* Bytes of one slot's buffer. */
static Size
slot_bufsize(void)
{
	return MAXALIGN((Size) gpudl_service_buffer_kb * 1024);
}

/* Bytes of the whole shared state: header, slots, then the slots' buffers. */
Size
gpudl_svc_shmem_size(void)
{
	Size		size = offsetof(SvcShared, slots);

	size = add_size(size, mul_size(gpudl_service_slots, sizeof(SvcSlot)));
	size = MAXALIGN(size);
	size = add_size(size, mul_size(gpudl_service_slots, slot_bufsize()));
	return size;
}

/* Set up the shared state at postmaster start (and after a crash restart). */
void
gpudl_svc_shmem_init(void *mem, bool found, LWLockPadded *locks)
{
	SvcShared  *s = (SvcShared *) mem;
	Size		off;
	int			i;

	svc_locks = locks;
	svc_shared = s;
	if (found)
		return;
	memset(s, 0, offsetof(SvcShared, slots));
	pg_atomic_init_u32(&s->generation, 0);
	pg_atomic_init_u64(&s->committed[0], 0);
	pg_atomic_init_u64(&s->committed[1], 0);
	for (i = 0; i < SVC_MAX_JOBS; i++)
	{
		pg_atomic_init_u64(&s->jobs[i].granted, 0);
		pg_atomic_init_u64(&s->jobs[i].held, 0);
	}
	s->next_ticket = 1;
	s->next_stamp = 1;
	s->nslots = gpudl_service_slots;
	s->bufsize = slot_bufsize();
	off = MAXALIGN(offsetof(SvcShared, slots) + sizeof(SvcSlot) * s->nslots);
	for (i = 0; i < s->nslots; i++)
	{
		SvcSlot    *slot = &s->slots[i];

		memset(slot, 0, sizeof(*slot));
		if (sem_init(&slot->req_sem, 1, 0) != 0 || sem_init(&slot->rep_sem, 1, 0) != 0)
			elog(FATAL, "gpudl: could not create the service's semaphores: %m");
		pg_atomic_init_u64(&slot->req_seq, 0);
		pg_atomic_init_u64(&slot->rep_seq, 0);
		pg_atomic_init_u32(&slot->cancel, 0);
		slot->buf_offset = off + (Size) i * s->bufsize;
	}
}

/* A slot's transfer buffer. */
char *
svc_slot_buf(SvcSlot *slot)
{
	return (char *) svc_shared + slot->buf_offset;
}

/* The admission lock: jobs, history, slots. */
struct LWLock *
svc_admit_lock(void)
{
	return &svc_locks[0].lock;
}

/* The resident registry's lock. */
struct LWLock *
svc_resident_lock(void)
{
	return &svc_locks[1].lock;
}

/*
 * Ask the postmaster to start the service process (from _PG_init while
 * preloading).  It restarts it a second after it ends.
 */
void
gpudl_svc_register_worker(void)
{
	BackgroundWorker w;

	if (!process_shared_preload_libraries_in_progress || !gpudl_service_enabled)
		return;
	memset(&w, 0, sizeof(w));
	/* connected (to no database): in pg_stat_activity, and pg_terminate_backend reaches it */
	w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w.bgw_start_time = BgWorkerStart_ConsistentState;
	w.bgw_restart_time = 1;
	snprintf(w.bgw_library_name, BGW_MAXLEN, "gpudl");
	snprintf(w.bgw_function_name, BGW_MAXLEN, "gpudl_svc_main");
	snprintf(w.bgw_name, BGW_MAXLEN, "gpudl GPU service");
	snprintf(w.bgw_type, BGW_MAXLEN, "gpudl GPU service");
	RegisterBackgroundWorker(&w);
}
