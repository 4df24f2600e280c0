/*
 * bench/common/gpu_load.h — the benchmarks' loader of the CUDA backend
 * module: dlopen it, check its ABI, register it as the GPU backend; exit
 * with a message when it cannot (a benchmark without its device is no
 * benchmark).  Header-only, for the standalone benchmark programs
 * (bench/engine, bench/analysis), which link the core without PostgreSQL.
 */
#ifndef GDL_BENCH_GPU_LOAD_H
#define GDL_BENCH_GPU_LOAD_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../src/exec/gdl_backend.h"

/* Load the CUDA backend module lib and register it (exits when it cannot). */
static inline void
bench_load_gpu(const char *lib)
{
	void	   *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	GdlBackendEntryFn entry;
	const GdlBackend *b;

	if (h == NULL)
	{
		fprintf(stderr, "cannot load %s: %s\n", lib, dlerror());
		exit(2);
	}
	entry = (GdlBackendEntryFn) dlsym(h, GDL_BACKEND_ENTRY_SYMBOL);
	if (entry == NULL || (b = entry()) == NULL || b->abi != GDL_BACKEND_ABI)
	{
		fprintf(stderr, "%s is not a gpudl backend of ABI %d\n", lib, GDL_BACKEND_ABI);
		exit(2);
	}
	gdl_backend_register(GDL_DEVICE_GPU, b);
}

#endif							/* GDL_BENCH_GPU_LOAD_H */
