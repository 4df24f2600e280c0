/*
 * cpu_par.c — the CPU backend's parallel loop: run one task per thread with
 * pthreads, the calling thread taking task 0.  Tasks must not call any gdl_*
 * host function (hosts are not thread safe); they only use buffers allocated
 * before the loop.  All threads are joined before cpu_parallel returns.
 */
#include "cpu_int.h"

#include <pthread.h>
#include <time.h>

typedef struct ParTask
{
	CpuTaskFn	fn;
	void	   *arg;
	int			tid;
	int			ntasks;
} ParTask;

/* pthread entry point: run one task. */
static void *
par_main(void *p)
{
	ParTask    *t = p;

	t->fn(t->arg, t->tid, t->ntasks);
	return NULL;
}

/*
 * Run fn(arg, tid, nthreads) for every tid < nthreads, in parallel.  When a
 * thread cannot be started its task runs on the calling thread afterwards.
 */
void
cpu_parallel(int nthreads, CpuTaskFn fn, void *arg)
{
	pthread_t	th[CPU_MAX_THREADS];
	ParTask		tasks[CPU_MAX_THREADS];
	bool		started[CPU_MAX_THREADS];
	int			t;

	if (nthreads > CPU_MAX_THREADS)
		nthreads = CPU_MAX_THREADS;
	if (nthreads <= 1)
	{
		fn(arg, 0, 1);
		return;
	}
	for (t = 1; t < nthreads; t++)
	{
		tasks[t].fn = fn;
		tasks[t].arg = arg;
		tasks[t].tid = t;
		tasks[t].ntasks = nthreads;
		started[t] = pthread_create(&th[t], NULL, par_main, &tasks[t]) == 0;
	}
	fn(arg, 0, nthreads);
	for (t = 1; t < nthreads; t++)
	{
		if (started[t])
			pthread_join(th[t], NULL);
		else
			fn(arg, t, nthreads);
	}
}

/* The share [*from, *to) of n items that task tid of ntasks works on. */
void
cpu_split(int64_t n, int tid, int ntasks, int64_t *from, int64_t *to)
{
	*from = (int64_t) ((__int128) n * tid / ntasks);
	*to = (int64_t) ((__int128) n * (tid + 1) / ntasks);
}

/* Monotonic clock in milliseconds. */
double
cpu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}
