/*
 * svc_shmem.c — shared state of the GPU service: placeholder until the
 * service lands.
 */
#include "gpudl_pg.h"

Size
gpudl_svc_shmem_size(void)
{
	return 0;
}

void
gpudl_svc_shmem_init(void *mem, bool found)
{
}
