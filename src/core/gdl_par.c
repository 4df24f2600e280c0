/*
 * gdl_par.c — the core's parallel loop and clock, shared by the CPU backend
 * (src/cpu) and rule learning (src/ilp): run one task per thread with
 * pthreads, the calling thread taking task 0.  Tasks must not call any gdl_*
 * host function (hosts are not thread safe): they only read and write
 * buffers allocated before the loop.  Every thread is joined before
 * gdl_parallel returns, so no thread outlives a host call.
 */
#include "gdl_host.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int	threads_setting;	/* gdl_set_threads; 0 = automatic */
static __thread void *thread_tag;	/* gdl_set_thread_tag; inherited by workers */

typedef struct ParTask
{
	GdlTaskFn	fn;
	void	   *arg;
	int			tid;
	int			ntasks;
	void	   *tag;			/* the calling thread's tag */
} ParTask;

/* pthread entry point: run one task. */
static void *
par_main(void *p)
{
	ParTask    *t = p;

	thread_tag = t->tag;
	t->fn(t->arg, t->tid, t->ntasks);
	return NULL;
}

/*
 * Run fn(arg, tid, ntasks) for every tid < ntasks (at most GDL_MAX_THREADS),
 * in parallel.  When a thread cannot be started its task runs on the
 * calling thread afterwards, so every task always runs.
 */
void
gdl_parallel(int ntasks, GdlTaskFn fn, void *arg)
{
	pthread_t	th[GDL_MAX_THREADS];
	ParTask		tasks[GDL_MAX_THREADS];
	bool		started[GDL_MAX_THREADS];
	int			t;

	if (ntasks > GDL_MAX_THREADS)
		ntasks = GDL_MAX_THREADS;
	if (ntasks <= 1)
	{
		fn(arg, 0, 1);
		return;
	}
	for (t = 1; t < ntasks; t++)
	{
		tasks[t].fn = fn;
		tasks[t].arg = arg;
		tasks[t].tid = t;
		tasks[t].ntasks = ntasks;
		tasks[t].tag = thread_tag;
		started[t] = pthread_create(&th[t], NULL, par_main, &tasks[t]) == 0;
	}
	fn(arg, 0, ntasks);
	for (t = 1; t < ntasks; t++)
	{
		if (started[t])
			pthread_join(th[t], NULL);
		else
			fn(arg, t, ntasks);
	}
}

/* A loop started by gdl_parallel_start: its threads, joined by gdl_parallel_join. */
struct GdlParRun
{
	int			ntasks;
	pthread_t	th[GDL_MAX_THREADS];
	ParTask		tasks[GDL_MAX_THREADS];
	bool		started[GDL_MAX_THREADS];
};

/*
 * Start fn(arg, tid, ntasks) for every tid < ntasks on threads of their own
 * and return at once, so that the calling thread can do other work (the
 * host's, which tasks may not do) while they run; gdl_parallel_join waits
 * for them.  Without memory for the handle the loop runs here and now, and
 * NULL is returned (gdl_parallel_join(NULL) does nothing).
 */
GdlParRun *
gdl_parallel_start(int ntasks, GdlTaskFn fn, void *arg)
{
	GdlParRun  *r = malloc(sizeof(GdlParRun));
	int			t;

	if (ntasks > GDL_MAX_THREADS)
		ntasks = GDL_MAX_THREADS;
	if (ntasks < 1)
		ntasks = 1;
	if (r == NULL)
	{
		gdl_parallel(ntasks, fn, arg);
		return NULL;
	}
	r->ntasks = ntasks;
	for (t = 0; t < ntasks; t++)
	{
		r->tasks[t].fn = fn;
		r->tasks[t].arg = arg;
		r->tasks[t].tid = t;
		r->tasks[t].ntasks = ntasks;
		r->tasks[t].tag = thread_tag;
		r->started[t] = pthread_create(&r->th[t], NULL, par_main, &r->tasks[t]) == 0;
	}
	return r;
}

/*
 * Wait for a loop of gdl_parallel_start and free its handle; a task whose
 * thread could not be started runs now on the calling thread.
 */
void
gdl_parallel_join(GdlParRun *r)
{
	int			t;

	if (r == NULL)
		return;
	for (t = 0; t < r->ntasks; t++)
	{
		if (r->started[t])
			pthread_join(r->th[t], NULL);
		else
			r->tasks[t].fn(r->tasks[t].arg, t, r->ntasks);
	}
	free(r);
}

/* The calling thread's tag (see gdl_host.h); workers inherit it. */
void
gdl_set_thread_tag(void *tag)
{
	thread_tag = tag;
}

void *
gdl_thread_tag(void)
{
	return thread_tag;
}

/*
 * Worker threads the core may use per operation (the CPU backend's joins and
 * set operations, rule learning's bulk coverage): n, or with 0 one per
 * online CPU up to 16.  The host sets it (gpudl.threads).
 */
void
gdl_set_threads(int n)
{
	threads_setting = n < 0 ? 0 : n > GDL_MAX_THREADS ? GDL_MAX_THREADS : n;
}

/* The worker threads to use now (see gdl_set_threads); at least 1. */
int
gdl_threads(void)
{
	long		ncpu;

	if (threads_setting > 0)
		return threads_setting;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	return ncpu < 1 ? 1 : ncpu > 16 ? 16 : (int) ncpu;
}

/* The share [*from, *to) of n items that task tid of ntasks works on. */
void
gdl_split(int64_t n, int tid, int ntasks, int64_t *from, int64_t *to)
{
	*from = (int64_t) ((__int128) n * tid / ntasks);
	*to = (int64_t) ((__int128) n * (tid + 1) / ntasks);
}

/* Monotonic clock in milliseconds. */
double
gdl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}
