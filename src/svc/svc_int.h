/*
 * svc_int.h — the GPU service: one process of the cluster owns the GPU and
 * runs every session's device work, so that device memory, residency and
 * scheduling are decided in one place (docs/DESIGN.md, "GPU service").
 *
 * Pieces (all in src/svc; gpudl_svc.h is what the layers above use):
 *   svc_shmem.c   shared state: settings, sizes, the service's registration
 *   svc_admit.c   admission of device and host memory: queue, budget, history
 *   svc_main.c    the service process (a background worker): loads CUDA once
 *   svc_serve.c   the service's threads, one per slot: run backend operations
 *   svc_proxy.c   a session's GPU backend: each operation sent to a slot
 *   svc_resident.c tables loaded with gpudl_load, once for the cluster
 *   svc_cuda.c    the CUDA module's loader; the service as a session's backend
 *   src/api/api_service.c gpudl_gpu_jobs() and gpudl_service_status()
 *
 * A slot is a mailbox in shared memory: a request (op and arguments, small
 * payloads inline in the slot's buffer, large ones staged in the service's
 * memory in buffer-sized pieces), and the reply in the same place.  The
 * session posts the request and waits; the slot's thread in the service
 * runs it on the real backend and replies.  Both sides spin briefly, then
 * sleep on a process-shared semaphore.
 */
#ifndef SVC_INT_H
#define SVC_INT_H

#include "svc/gpudl_svc.h"

#include <semaphore.h>

#include "fmgr.h"

#include "datatype/timestamp.h"
#include "core/gdl_host.h"
#include "exec/gdl_backend.h"
#include "ilp/gdl_ilp_device.h"
#include "port/atomics.h"

#define SVC_MAX_JOBS	256		/* admissions, waiting or running */
#define SVC_HISTORY		256		/* remembered peaks */
#define SVC_MAX_RESIDENTS 64	/* shared resident tables */
#define SVC_ERRLEN		512
#define SVC_MAX_RELEASE	32		/* releases a request carries (SvcMsg.release) */

/* The service's state, as sessions see it. */
typedef enum SvcState
{
	SVC_ABSENT = 0,				/* not started (or not preloaded) */
	SVC_STARTING,				/* process up, CUDA being initialised */
	SVC_READY,					/* serving */
	SVC_NO_GPU,					/* up, but no GPU works (reason in 'why') */
	SVC_STOPPED					/* ended; the postmaster restarts it */
} SvcState;

/* What an admission asks for. */
typedef enum SvcResource
{
	SVC_RES_DEVICE = 0,
	SVC_RES_HOST = 1
} SvcResource;

typedef enum SvcJobState
{
	SVC_JOB_FREE = 0,
	SVC_JOB_WAITING,
	SVC_JOB_RUNNING
} SvcJobState;

/* One admission: a run waiting for or holding memory. */
typedef struct SvcJob
{
	int			state;			/* SvcJobState */
	int			pid;
	Oid			userid;
	Oid			dbid;
	int			resource;		/* SvcResource */
	uint64		ticket;			/* queue order */
	int64		need;			/* bytes it waits for */
	pg_atomic_uint64 granted;	/* bytes reserved for it (grows while running) */
	pg_atomic_uint64 held;		/* bytes it holds now (device: per the service) */
	TimestampTz enqueued_at;
	TimestampTz started_at;
	int64		waited_us;		/* total time in the queue, retries included */
	int			attempts;
	char		program[64];
	char		goal[128];
	char		phase[32];
} SvcJob;

/* Peak memory of the last successful run of one (database, program, goal). */
typedef struct SvcHistory
{
	uint64		key;
	int64		peak[2];		/* per resource */
	uint64		stamp;
} SvcHistory;

/* A table loaded on the device once for the cluster (svc_resident.c). */
typedef struct SvcResident
{
	bool		used;
	Oid			dbid;
	Oid			relid;
	uint64		fingerprint;	/* of the columns and their dictionary */
	int64		handle;			/* the service's resident pointer */
	int64		bytes;
	int			refs;			/* sessions whose cache uses it */
	int			ncols;
	int64		nrows;
	uint64		last_used;		/* LRU stamp */
	char		relname[64];
} SvcResident;

/* Operations a slot carries. */
typedef enum SvcOp
{
	SVC_OP_NONE = 0,
	SVC_OP_CTX_CREATE, SVC_OP_CTX_DESTROY, SVC_OP_CTX_ABORT, SVC_OP_COUNTERS,
	SVC_OP_SET_TEXT_RANKS, SVC_OP_UPLOAD, SVC_OP_DOWNLOAD, SVC_OP_SIZE,
	SVC_OP_RELEASE, SVC_OP_JOIN, SVC_OP_ANTIJOIN, SVC_OP_MAP, SVC_OP_DEDUP,
	SVC_OP_DIFFERENCE, SVC_OP_MERGE, SVC_OP_ABSORB, SVC_OP_AGGREGATE,
	SVC_OP_SLICE, SVC_OP_JOIN_COUNT, SVC_OP_RESIDENT_CREATE,
	SVC_OP_RESIDENT_FREE, SVC_OP_FROM_RESIDENT, SVC_OP_STAGE_PUT,
	SVC_OP_STAGE_GET, SVC_OP_RESET,
	SVC_OP_MINE,				/* rule mining's counting (svc_mine.c) */
	SVC_OP_ILP_TRAIN,			/* rule learning's training (svc_ilp.c) */
	SVC_OP_ILP_COVER			/* rule learning's bulk coverage (svc_ilp.c) */
} SvcOp;

/* The request, then the reply, of one operation. */
typedef struct SvcMsg
{
	int32		op;				/* SvcOp */
	int32		status;			/* reply: GdlBkStatus */
	int32		staged;			/* payload is in the service's staging area */
	int32		job;			/* admission the run belongs to (-1: none) */
	int64		a[8];			/* request arguments, then reply values */
	int64		len;			/* payload bytes (request, then reply) */
	GdlBkCounters counters;		/* reply: the context's counters after the op */
	int32		has_counters;	/* reply: counters are filled in */
	int64		out_rel[2];		/* reply: the relations the op made (0: none) */
	int64		out_rows[2];	/* ... and their rows when known (-1: not) */
	int32		nrelease;		/* request: relations to release before the op */
	int64		release_ctx;	/* ... of this context */
	int64		release[SVC_MAX_RELEASE];
	char		errmsg[SVC_ERRLEN];
} SvcMsg;

/*
 * A slot's owner: free, a session's, or given up by a session whose
 * request was still running when it was interrupted (cancel, timeout,
 * termination).  An orphaned slot belongs to its service thread until the
 * request ends: the thread then destroys what the slot holds and frees it,
 * so that nothing the service writes later lands in another session's
 * request (issue 20).
 */
typedef enum SvcSlotState
{
	SVC_SLOT_FREE = 0,
	SVC_SLOT_BUSY,
	SVC_SLOT_ORPHAN
} SvcSlotState;

/* A session's mailbox to one service thread. */
typedef struct SvcSlot
{
	int			state;			/* SvcSlotState: FREE -> BUSY under the admission
								 * lock; ORPHAN -> FREE by the service thread */
	int			pid;			/* session holding it */
	pg_atomic_uint32 cancel;	/* the session wants the request in flight stopped */
	sem_t		req_sem;		/* posted by the session */
	sem_t		rep_sem;		/* posted by the service */
	pg_atomic_uint64 req_seq;	/* requests posted */
	pg_atomic_uint64 rep_seq;	/* requests answered */
	SvcMsg		msg;
	Size		buf_offset;		/* from the start of SvcShared */
} SvcSlot;

/* Everything in shared memory. */
typedef struct SvcShared
{
	/* the service process */
	int			state;			/* SvcState */
	int			pid;
	pg_atomic_uint32 generation;	/* bumped at each service start */
	char		device[128];
	char		why[256];		/* SVC_NO_GPU: the reason */
	bool		has_resident;	/* the served backend keeps resident tables */
	bool		has_absorb;		/* ... and has the optional operations */
	bool		has_slice;
	bool		has_join_count;
	bool		has_mine;		/* the module counts rule mining (svc_mine.c) */
	bool		has_ilp;		/* the module trains rule learning (svc_ilp.c) */
	int64		device_total;
	int64		device_free_at_start;
	TimestampTz started_at;

	/* admission (lock 0) */
	pg_atomic_uint64 committed[2];	/* bytes granted per resource */
	int64		device_budget;	/* set by the service */
	uint64		next_ticket;
	uint64		next_stamp;
	SvcJob		jobs[SVC_MAX_JOBS];
	SvcHistory	history[SVC_HISTORY];

	/* shared residents (lock 1) */
	SvcResident residents[SVC_MAX_RESIDENTS];

	/* slots */
	int			nslots;
	Size		bufsize;
	SvcSlot		slots[FLEXIBLE_ARRAY_MEMBER];
} SvcShared;

extern SvcShared *svc_shared;

/* settings (svc_shmem.c) */
extern bool gpudl_service_enabled;
extern int	gpudl_service_slots;
extern int	gpudl_service_buffer_kb;
extern int	gpudl_device_wait_timeout_ms;
extern int	gpudl_host_wait_timeout_ms;
extern int	gpudl_cluster_host_memory_mb;
extern int	gpudl_device_memory_budget_mb;
extern int	gpudl_service_backend;

typedef enum SvcBackendKind
{
	SVC_BACKEND_CUDA, SVC_BACKEND_CPU
} SvcBackendKind;

extern void gpudl_svc_define_gucs(void);
extern void gpudl_svc_register_worker(void);
extern bool svc_active(void);
extern char *svc_slot_buf(SvcSlot *slot);
extern struct LWLock *svc_admit_lock(void);
extern struct LWLock *svc_resident_lock(void);

/* the service process (svc_main.c, svc_serve.c) */
extern PGDLLEXPORT void gpudl_svc_main(Datum arg);
extern void svc_serve_start(const GdlBackend *bk);
extern void svc_serve_stop(int wait_ms);
extern int64 svc_reserve_bytes(int job, int64 bytes_after);

/* admission (svc_admit.c) */
typedef struct SvcAdmission
{
	int			job;			/* index in jobs[], -1 when not admitted */
	int			resource;
	int64		need;
} SvcAdmission;

extern int64 svc_budget(int resource);
extern uint64 svc_history_key(const char *program, int64 version, const char *goal);
extern int64 svc_history_peak(uint64 key, int resource);
extern void svc_history_record(uint64 key, int resource, int64 peak);
extern bool svc_admit(SvcAdmission *adm, int resource, int64 need, const char *program,
					  const char *goal, int timeout_ms, char *busy, size_t busylen);
extern bool svc_admit_grow(SvcAdmission *adm, int64 bytes_after);
extern int64 svc_admit_granted(const SvcAdmission *adm);
extern void svc_admit_release(SvcAdmission *adm);
extern void svc_admit_set_phase(const SvcAdmission *adm, const char *phase);
extern void svc_admit_release_all(void);

/* a session's side (svc_proxy.c) */
extern const GdlBackend *svc_proxy_backend(void);
extern void svc_proxy_set_job(int job);
extern int	svc_call(SvcSlot *slot, SvcMsg *m);
extern SvcSlot *svc_slot_acquire(char *why, size_t whylen);
extern void svc_slot_release(SvcSlot *slot);

/*
 * A request's payload as pieces, each array padded to 8 bytes so that the
 * service can point into it (svc_wire_put; the service skips the same
 * padding with svc_wire_pad).
 */
#define SVC_WIRE_MAX 48
typedef struct SvcWire
{
	const void *data[SVC_WIRE_MAX];
	int64		lens[SVC_WIRE_MAX];
	int			n;
} SvcWire;

extern void svc_wire_put(SvcWire *w, const void *data, int64 bytes);

static inline int64
svc_wire_pad(int64 bytes)
{
	return (bytes + 7) & ~(int64) 7;
}

/* a whole GPU job of a session (mining, learning): admitted, then sent */
struct SvcAdmission;
extern bool svc_admit_job(struct SvcAdmission *adm, int64 need, const char *program,
						  const char *goal, const char *phase, const char *cpu_work,
						  char *why, size_t whylen);

/*
 * One such job's call, from admission to reply (svc_ilp.c, svc_mine.c):
 * SVC_JOB_CALL_INIT starts it not admitted, with an empty request.
 */
typedef struct SvcJobCall
{
	SvcAdmission adm;
	SvcWire		wire;			/* the request's payload */
	int64		args[4];		/* the request's arguments, then the reply's */
	char	   *reply;			/* the reply's payload (palloc'd), or NULL */
	int64		reply_len;
} SvcJobCall;

#define SVC_JOB_CALL_INIT {{-1, SVC_RES_DEVICE, 0}}

extern int	svc_job_request(SvcJobCall *jc, int op, char *why, size_t whylen);
extern int	svc_job_wrong_reply(char *reply, const char *what, char *why, size_t whylen);

/* a request outside any context: payload in pieces, reply payload palloc'd */
extern int	svc_proxy_request(int op, int job, int64 *args, int nargs,
							  const void *const *data, const int64 *lens, int npieces,
							  char **reply, int64 *reply_len, char *err, size_t errlen);

/*
 * Rule mining in the service (svc_mine.c, svc_serve.c).  The request's
 * payload is this header, then the arrays of GdlMineDevIn in the order of
 * svc_mine.c's wire_pieces (each padded to 8 bytes); the reply's payload is
 * the GdlMineDevCand array, a[0] its length, a[1..3] the seconds (as bits).
 */
typedef struct SvcMineWire
{
	int32		nent;
	int32		nrels;
	int64		nlinks;
	int64		npp;			/* parallel pairs: ppoff[nent] */
	int64		ncp;			/* cycle pairs: cpoff[nent] */
	int32		max_body;
	int32		target;
	int64		min_support;
	double		min_head_coverage;
} SvcMineWire;

struct GdlMineDevice;
extern void svc_serve_set_mine(const struct GdlMineDevice *dev);
extern bool svc_serve_stopping(void);

/* a job of the service: stoppable, its memory freed at the end (svc_job.c) */
typedef struct SvcJobScope SvcJobScope;
extern SvcJobScope *svc_job_begin(SvcSlot *slot);
extern void svc_job_end(SvcJobScope *sc);
extern bool svc_job_should_stop(SvcJobScope *sc);
extern int	svc_job_stop_cb(void *arg);
extern const GdlHost *svc_job_host_hooks(void);
extern const struct GdlMineDevice *svc_cpu_mine_device(void);

/*
 * Rule learning's device work in the service (svc_ilp.c, svc_serve.c):
 * one training (create, train, destroy) or one bulk coverage per request.
 * Payloads: the header, then the arrays as svc_ilp.c puts them.
 */
typedef struct SvcIlpTrainWire
{
	GdlIlpDevProblem prob;		/* the service points off and idx into the
								 * payload */
	int64		nnz;			/* prob.off[prob.nrows] */
	GdlIlpDevTrain train;		/* the service sets stop and stop_arg */
} SvcIlpTrainWire;

typedef struct SvcIlpCoverWire
{
	int32		nent;
	int32		nex;
	int64		nadj;			/* aoff[nent] */
	int64		nsig;			/* soff[nent] */
	int64		nusig;			/* uoff[nent] */
	int64		max_entries;
	int32		skip_pred;
	int32		pad;
} SvcIlpCoverWire;

struct GdlIlpDevice;
extern void svc_serve_set_ilp(const struct GdlIlpDevice *dev);
extern const struct GdlIlpDevice *svc_ilp_proxy_device(void);
extern const struct GdlMineDevice *svc_mine_proxy_device(void);
extern void svc_mine_set_label(const char *program, const char *target);

/* resident tables (svc_resident.c, svc_proxy.c) */
extern bool svc_resident_make_room(int64 bytes);
extern uint64 svc_resident_fingerprint(int ncols, int64 nrows, const int64 *const *cols,
									   int nstrings,
									   const char *(*string_at) (void *arg, int i, int *len),
									   void *arg);
extern void *svc_resident_acquire(Oid relid, uint64 fingerprint, int ncols, int64 nrows,
								  const int64 *const *cols, int64 *bytes, const char **why);
extern void svc_resident_release(int idx, int64 handle, int64 bytes);
extern int	svc_resident_sharers(Oid relid, int64 *bytes);
extern bool svc_proxy_resident_create_raw(int ncols, int64 nrows, const int64 *const *cols,
										  int64 *handle, int64 *bytes, const char **why);
extern void svc_proxy_resident_free_raw(int64 handle);
extern void *svc_proxy_resident_wrap(int64 handle, int idx);

#endif							/* SVC_INT_H */
