/*
 * info.cu — a description of the GPU for gpudl_device_info(): its name and
 * its total and free memory.  Exported beside gdl_backend_entry; the
 * extension looks it up with dlsym and does without it when missing.
 */
#include <cstdio>
#include <cstring>
#include <cstdint>

#include <cuda_runtime.h>

/*
 * Fill name (NUL-terminated, at most namelen bytes), total and free bytes
 * of device 0.  Returns 0, or -1 when no device can be asked.
 */
extern "C" __attribute__((visibility("default"))) int
gdl_cuda_device_info(char *name, size_t namelen, int64_t *total, int64_t *free_bytes)
{
	cudaDeviceProp prop;
	size_t		f = 0,
				t = 0;

	if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess)
		return -1;
	if (cudaSetDevice(0) != cudaSuccess || cudaMemGetInfo(&f, &t) != cudaSuccess)
		return -1;
	if (namelen > 0)
		snprintf(name, namelen, "%s (sm_%d%d, %d SMs)", prop.name, prop.major, prop.minor,
				 prop.multiProcessorCount);
	*total = (int64_t) t;
	*free_bytes = (int64_t) f;
	return 0;
}
