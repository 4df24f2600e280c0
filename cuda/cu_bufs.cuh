/*
 * cu_bufs.cuh — for the learners' GPU calls (ilp_cover.cu, mine.cu), which
 * report into the caller's message buffer rather than a CuCtx: a CUDA
 * failure recorded as that message, and the device buffers of one call,
 * freed together when the call returns.
 */
#ifndef CU_BUFS_CUH
#define CU_BUFS_CUH

#include <cstdio>
#include <vector>

/* Record a CUDA error as the message; true when there was one. */
static inline bool
cu_msg_failed(cudaError_t rc, const char *what, char *errmsg, size_t errlen)
{
	if (rc == cudaSuccess)
		return false;
	snprintf(errmsg, errlen, "%s: %s", what, cudaGetErrorString(rc));
	return true;
}

/* Device buffers of one call, freed together. */
struct CuBufs
{
	std::vector<void *> p;

	~CuBufs()
	{
		for (void *q : p)
			cudaFree(q);
	}
	/* cudaMalloc, remembered */
	template <typename T> bool alloc(T **out, size_t bytes, char *errmsg, size_t errlen)
	{
		void	   *q = NULL;

		if (cu_msg_failed(cudaMalloc(&q, bytes > 0 ? bytes : 8), "device memory", errmsg, errlen))
			return false;
		p.push_back(q);
		*out = (T *) q;
		return true;
	}
	/* free one buffer before the others */
	void		release(void *q)
	{
		for (size_t i = 0; i < p.size(); i++)
			if (p[i] == q)
			{
				cudaFree(q);
				p.erase(p.begin() + i);
				return;
			}
	}
	/* a host array copied to a new buffer: at once, or queued on *async */
	template <typename T> bool up(const T *src, int64_t n, const T **dst, char *errmsg, size_t errlen,
								  const cudaStream_t *async = NULL)
	{
		T		   *d;
		size_t		bytes = sizeof(T) * (size_t) n;

		if (!alloc(&d, bytes, errmsg, errlen))
			return false;
		if (n > 0 && cu_msg_failed(async ? cudaMemcpyAsync(d, src, bytes, cudaMemcpyHostToDevice, *async) :
								   cudaMemcpy(d, src, bytes, cudaMemcpyHostToDevice),
								   "upload", errmsg, errlen))
			return false;
		*dst = d;
		return true;
	}
};

#endif							/* CU_BUFS_CUH */
