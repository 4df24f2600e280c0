/*
 * part.cu — the CUDA backend's part in partitioned runs (issue 14): how
 * many GPUs it sees and making one current, so that the engine's
 * partitioned driver (src/exec/exec_part.c) can put each partition's
 * context on its own device (GdlBackend.device_count / select_device), and
 * a description of every device for gpudl_device_info()'s per-GPU rows.
 */
#include <cstdio>
#include <cstdint>

#include <cuda_runtime.h>

#define PART_EXPORT extern "C" __attribute__((visibility("default")))

/* GPUs the runtime sees (0 when none or no driver). */
PART_EXPORT int
cu_part_device_count(void)
{
	int			n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return 0;
	}
	return n;
}

/* Make GPU 'device' current for this thread; 0 on success. */
PART_EXPORT int
cu_part_select_device(int device)
{
	if (cudaSetDevice(device) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return -1;
	}
	return 0;
}

/*
 * Name, total and free bytes of GPU 'device' (gdl_cuda_device_info does
 * device 0).  Returns 0, or -1 when it cannot be asked.  Leaves the
 * current device as it found it.
 */
PART_EXPORT int
gdl_cuda_device_info_n(int device, char *name, size_t namelen, int64_t *total, int64_t *free_bytes)
{
	cudaDeviceProp prop;
	size_t		f = 0,
				t = 0;
	int			cur = 0;
	int			rc = 0;

	if (cudaGetDevice(&cur) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return -1;
	}
	if (cudaSetDevice(device) != cudaSuccess || cudaMemGetInfo(&f, &t) != cudaSuccess)
		rc = -1;
	(void) cudaSetDevice(cur);
	(void) cudaGetLastError();
	if (rc != 0)
		return rc;
	if (namelen > 0)
		snprintf(name, namelen, "GPU %d: %s (sm_%d%d, %d SMs)", device, prop.name, prop.major,
				 prop.minor, prop.multiProcessorCount);
	*total = (int64_t) t;
	*free_bytes = (int64_t) f;
	return 0;
}
