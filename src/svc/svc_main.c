/*
 * svc_main.c — the GPU service process: a background worker, started by the
 * postmaster when gpudl is preloaded and restarted a second after it ends.
 * It is the only process of the cluster that loads the CUDA module and
 * touches the driver (the postmaster never does): it creates the CUDA
 * context once, measures the device, sets the cluster's device budget, and
 * starts one thread per slot (svc_serve.c).  Sessions then pay no CUDA
 * start-up of their own.
 *
 * Without a usable GPU it stays up in state "no GPU" with the reason, so
 * that sessions learn why at once and run on the CPU (gpudl.device = auto).
 * On SIGTERM it marks itself stopped and exits with code 1, so the
 * postmaster restarts it; sessions waiting on it see the generation change
 * and end their run with an error (or finish on the CPU under auto).
 */
#include "svc/svc_int.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "exec/gdl_engine.h"
#include "ilp/gdl_ilp_device.h"
#include "mine/gdl_mine_device.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

/* Signature of the module's optional device description. */
typedef int (*DeviceInfoFn) (char *name, size_t namelen, int64_t *total, int64_t *free_bytes);

static volatile sig_atomic_t got_sigterm = false;

/* SIGTERM: end at the next turn of the main loop. */
static void
svc_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	got_sigterm = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

/*
 * A fault in the service (a bug, or the driver): write the stack to the
 * server log, then die as the signal would (the postmaster restarts the
 * cluster, as for any crashed process attached to shared memory).
 */
static void
svc_fault(int sig)
{
	void	   *frames[64];
	int			n = backtrace(frames, 64);
	static const char head[] = "gpudl GPU service: fatal signal; stack:\n";

	if (write(2, head, sizeof(head) - 1) < 0)
		n = n;					/* nothing to do: the stack below may still print */
	backtrace_symbols_fd(frames, n, 2);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Stay up without a GPU, saying why, until told to stop. */
static void
serve_without_gpu(const char *why)
{
	strlcpy(svc_shared->why, why, sizeof(svc_shared->why));
	svc_shared->state = SVC_NO_GPU;
	elog(LOG, "gpudl GPU service: no GPU: %s", why);
	while (!got_sigterm)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();	/* absorb ProcSignalBarriers (DROP DATABASE waits for them) */
	}
	svc_shared->state = SVC_STOPPED;
	proc_exit(1);
}

/*
 * Forget what a previous service process left: requests it never answered,
 * shared residents (their device memory died with it) and their bytes.
 */
static void
reset_previous_generation(void)
{
	int			i;

	LWLockAcquire(svc_resident_lock(), LW_EXCLUSIVE);
	for (i = 0; i < SVC_MAX_RESIDENTS; i++)
	{
		SvcResident *r = &svc_shared->residents[i];

		if (r->used)
			pg_atomic_fetch_sub_u64(&svc_shared->committed[SVC_RES_DEVICE], (uint64) r->bytes);
		memset(r, 0, sizeof(*r));
	}
	LWLockRelease(svc_resident_lock());
	for (i = 0; i < svc_shared->nslots; i++)
	{
		SvcSlot    *slot = &svc_shared->slots[i];

		pg_atomic_write_u64(&slot->rep_seq, pg_atomic_read_u64(&slot->req_seq));
		/* slots given up during the previous service: nothing of them is left */
		if (slot->state == SVC_SLOT_ORPHAN)
		{
			slot->pid = 0;
			slot->state = SVC_SLOT_FREE;
		}
	}
}

/*
 * Serve the CPU backend instead of CUDA (gpudl.service_backend = cpu): the
 * service's protocol, queue and faults, tested where there is no GPU.
 */
static void
serve_cpu_backend(void)
{
	gdl_set_host(svc_job_host_hooks());
	strlcpy(svc_shared->device, "CPU backend in the GPU service (gpudl.service_backend = cpu)",
			sizeof(svc_shared->device));
	svc_shared->device_total = INT64CONST(4) << 30;
	svc_shared->device_free_at_start = svc_shared->device_total;
	svc_shared->device_budget = svc_shared->device_total;
	/* mining jobs count on the CPU core in the service: the job path is tested */
	svc_serve_set_mine(svc_cpu_mine_device());
	svc_serve_start(gdl_cpu_backend());
	svc_shared->state = SVC_READY;
	elog(LOG, "gpudl GPU service: serving the CPU backend (gpudl.service_backend = cpu), %d slots",
		 svc_shared->nslots);
}

/*
 * Load the CUDA module, create the context once (the driver's start-up is
 * paid here, not by sessions), measure the device, set the budget and start
 * serving.  Without a usable GPU, stays up saying why (never returns then).
 */
static void
serve_cuda_backend(void)
{
	void	   *handle;
	const GdlBackend *bk;
	char		reason[512];
	const char *why = NULL;
	void	   *ctx;
	GdlBkConfig cfg;
	DeviceInfoFn info;
	char		name[128] = "cuda device";
	int64_t		total = 0,
				free_bytes = 0;

	bk = gpudl_open_cuda_module(&handle, reason, sizeof(reason));
	if (bk == NULL)
		serve_without_gpu(reason);
	memset(&cfg, 0, sizeof(cfg));
	ctx = bk->ctx_create(&cfg, &why);
	if (ctx == NULL)
		serve_without_gpu(psprintf("no usable GPU: %s", why ? why : "unknown reason"));
	bk->ctx_destroy(ctx);
	info = (DeviceInfoFn) dlsym(handle, "gdl_cuda_device_info");
	if (info)
		(void) info(name, sizeof(name), &total, &free_bytes);
	strlcpy(svc_shared->device, name, sizeof(svc_shared->device));
	svc_shared->device_total = total;
	svc_shared->device_free_at_start = free_bytes;
	svc_shared->device_budget = free_bytes > 0 ? free_bytes / 100 * 92 : INT64CONST(1) << 30;

	{
		GdlMineDeviceEntryFn mine_entry =
			(GdlMineDeviceEntryFn) dlsym(handle, GDL_MINE_DEVICE_ENTRY_SYMBOL);
		const GdlMineDevice *mine = mine_entry ? mine_entry() : NULL;

		GdlIlpDeviceEntryFn ilp_entry =
			(GdlIlpDeviceEntryFn) dlsym(handle, GDL_ILP_DEVICE_ENTRY_SYMBOL);
		const GdlIlpDevice *ilp = ilp_entry ? ilp_entry() : NULL;

		svc_serve_set_mine(mine && mine->abi == GDL_MINE_DEVICE_ABI && mine->mine ? mine : NULL);
		svc_serve_set_ilp(ilp && ilp->abi == GDL_ILP_DEVICE_ABI && ilp->create && ilp->train ? ilp : NULL);
	}
	svc_serve_start(bk);
	svc_shared->state = SVC_READY;
	elog(LOG, "gpudl GPU service: %s, %lld MB free, budget %lld MB, %d slots",
		 name, (long long) (free_bytes >> 20), (long long) (svc_shared->device_budget >> 20),
		 svc_shared->nslots);
}

/* Entry point of the service process. */
void
gpudl_svc_main(Datum arg)
{
	pqsignal(SIGTERM, svc_sigterm);
	pqsignal(SIGINT, SIG_IGN);	/* pg_cancel_backend: nothing to cancel */
	signal(SIGSEGV, svc_fault);
	signal(SIGBUS, svc_fault);
	signal(SIGILL, svc_fault);
	signal(SIGFPE, svc_fault);
	BackgroundWorkerUnblockSignals();
	/* no database: a PGPROC in the proc array, so pg_terminate_backend(pid) works */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("gpudl GPU service");

	svc_shared->pid = MyProcPid;
	svc_shared->started_at = GetCurrentTimestamp();
	svc_shared->device_budget = 0;
	svc_shared->why[0] = '\0';
	svc_shared->has_mine = false;
	svc_shared->has_ilp = false;
	pg_atomic_fetch_add_u32(&svc_shared->generation, 1);
	svc_shared->state = SVC_STARTING;
	reset_previous_generation();

	if (gpudl_service_backend == SVC_BACKEND_CPU)
		serve_cpu_backend();
	else
		serve_cuda_backend();

	while (!got_sigterm)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();	/* absorb ProcSignalBarriers (DROP DATABASE waits for them) */
	}
	svc_shared->state = SVC_STOPPED;
	elog(LOG, "gpudl GPU service: stopping");
	svc_serve_stop(5000);
	proc_exit(1);
}
