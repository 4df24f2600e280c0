/*
 * pg_progress.c — progress of running evaluations and learns, visible to
 * every session (the gpudl_progress view).  Shared memory: one slot per
 * backend.
 */
#include "gpudl_pg.h"

/* Bytes of the progress slots. */
Size
gpudl_progress_shmem_size(void)
{
	return 0;
}

/* Reset the progress slots at postmaster start. */
void
gpudl_progress_shmem_init(void *mem, bool found)
{
}
