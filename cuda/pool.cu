/*
 * pool.cu — device memory of a context.
 *
 * Every device buffer of a context comes from its own CUDA memory pool
 * (cudaMemPoolCreate), allocated and freed in stream order on the context's
 * stream.  The pool keeps freed memory reserved (release threshold = max),
 * so after the first rounds a fixpoint loop reuses memory and never reaches
 * the driver's allocator; temporaries can be freed without a host sync.
 *
 * On top of the pool we keep our own ledger (pointer -> size): it enforces
 * GdlBkConfig.memory_limit, asks the admission hook (GdlBkConfig.reserve)
 * before growing, reports the peak, and lets ctx_destroy and
 * ctx_abort free whatever is still held before destroying the pool, so the
 * device's free memory returns to where it was.
 *
 * HOST OVERFLOW (issue 13): a buffer that would pass the context's limit,
 * or that the device cannot hold, is taken from PINNED, MAPPED host memory
 * instead of failing (kernels and CUB read and write it over the bus
 * through unified addressing): a round whose transients do not fit on the
 * device runs slower but finishes, and only when host memory is exhausted
 * too does the allocation fail (53200 in the engine).  These buffers have
 * their own ledger (hallocs), count in host_bytes, not in the device bytes,
 * and are freed after a stream sync (host memory is not stream-ordered).
 * Uploads (backend.cu, c->strict), limits below POOL_OVERFLOW_MIN and the
 * admission hook's refusals keep failing as before.
 */
#include <atomic>
#include <mutex>
#include <vector>
#include <cstdlib>
#include <unistd.h>
#include <unordered_map>

#include "cu_int.cuh"

typedef std::unordered_map<void *, size_t> AllocMap;

/*
 * The smallest device limit with host overflow: below it the device has no
 * room to work in (a run would live on the bus), so allocations past the
 * limit fail as before and `gpudl.device = auto` retries on the CPU.
 */
#define POOL_OVERFLOW_MIN ((int64_t) 16 << 20)

/* Create the context's memory pool and ledger. */
int
pool_init(CuCtx *c)
{
	cudaMemPoolProps props = {};
	uint64_t	keep = UINT64_MAX;

	props.allocType = cudaMemAllocationTypePinned;
	props.handleTypes = cudaMemHandleTypeNone;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = c->dev;
	c->allocs = new AllocMap();
	CU_TRY(c, cudaMemPoolCreate(&c->pool, &props));
	c->pool_ok = true;
	CU_TRY(c, cudaMemPoolSetAttribute(c->pool, cudaMemPoolAttrReleaseThreshold, &keep));
	return GDL_BK_OK;
}

/*
 * Pinned host memory is never paged out, so the module as a whole (every
 * context of the process: the GPU service holds many) pins at most half of
 * the machine's memory, or GDL_CUDA_PIN_LIMIT_MB when set; past that an
 * overflow fails as "out of device and host memory" (53200) instead of
 * starving the host.
 */
static std::atomic<int64_t> pinned_total{0};

static int64_t
pin_limit(void)
{
	static int64_t limit = -1;

	if (limit < 0)
	{
		const char *env = getenv("GDL_CUDA_PIN_LIMIT_MB");
		long		pages = sysconf(_SC_PHYS_PAGES);
		long		psize = sysconf(_SC_PAGE_SIZE);

		if (env && *env)
			limit = (int64_t) atoll(env) << 20;
		else if (pages > 0 && psize > 0)
			limit = (int64_t) pages * psize / 2;
		else
			limit = (int64_t) 16 << 30;
	}
	return limit;
}

/* Count 'bytes' more of pinned host memory; false when past the module's cap. */
bool
cu_pin_take(int64_t bytes)
{
	int64_t		now = pinned_total.fetch_add(bytes) + bytes;

	if (now > pin_limit())
	{
		pinned_total.fetch_sub(bytes);
		return false;
	}
	return true;
}

/* Give back what cu_pin_take counted. */
void
cu_pin_give(int64_t bytes)
{
	pinned_total.fetch_sub(bytes);
}

/*
 * A host overflow buffer of 'bytes': pinned, mapped host memory that kernels
 * use in place (see the top of the file).  Fails with GDL_BK_ERR_NO_MEMORY
 * only when the host cannot pin that much.
 */
static int
pool_get_host(CuCtx *c, size_t bytes, void **out)
{
	void	   *p = nullptr;
	cudaError_t e;

	if (!cu_pin_take((int64_t) bytes))
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY,
					   "out of device and host memory: %zu bytes requested, %lld device bytes held (limit %lld), %lld host bytes held; pinned host memory is capped at %lld bytes",
					   bytes, (long long) c->bytes, (long long) c->limit,
					   (long long) c->host_bytes, (long long) pin_limit());
	e = cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
	if (e != cudaSuccess)
	{
		cu_pin_give((int64_t) bytes);
		(void) cudaGetLastError();
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY,
					   "out of device and host memory: %zu bytes requested, %lld device bytes held (limit %lld), %lld host bytes held",
					   bytes, (long long) c->bytes, (long long) c->limit,
					   (long long) c->host_bytes);
	}
	if (!c->hallocs)
		c->hallocs = new AllocMap();
	(*(AllocMap *) c->hallocs)[p] = bytes;
	c->host_bytes += (int64_t) bytes;
	if (c->host_bytes > c->host_peak)
		c->host_peak = c->host_bytes;
	*out = p;
	return GDL_BK_OK;
}

/* Whether p is a host overflow buffer of the context. */
bool
pool_on_host(CuCtx *c, const void *p)
{
	AllocMap   *h = (AllocMap *) c->hallocs;

	return p && h && h->find((void *) p) != h->end();
}

/*
 * A device buffer of 'bytes' (rounded up to 256) in stream order; NULL for 0
 * bytes.  Past the context's limit, or when the device is full, a host
 * overflow buffer instead (not for uploads, c->strict); fails with
 * GDL_BK_ERR_NO_MEMORY when the host is full too, or when the admission
 * hook refuses the growth.
 */
int
pool_get(CuCtx *c, size_t bytes, void **out)
{
	AllocMap   *m = (AllocMap *) c->allocs;
	void	   *p = nullptr;
	cudaError_t e;

	*out = nullptr;
	if (bytes == 0)
		return GDL_BK_OK;
	bytes = (bytes + 255) & ~(size_t) 255;
	if (c->limit >= POOL_OVERFLOW_MIN && c->bytes + (int64_t) bytes > c->limit && c->strict == 0)
		return pool_get_host(c, bytes, out);
	if (c->limit > 0 && c->bytes + (int64_t) bytes > c->limit)
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY,
					   "device memory limit exceeded: %lld bytes held, %zu more requested, limit %lld",
					   (long long) c->bytes, bytes, (long long) c->limit);
	if (c->reserve && c->reserve(c->reserve_arg, c->bytes + (int64_t) bytes) != 0)
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY,
					   "device busy: other runs hold the device memory this run needs (%lld bytes held, %zu more requested)",
					   (long long) c->bytes, bytes);
	e = cudaMallocFromPoolAsync(&p, bytes, c->pool, c->stream);
	if (e != cudaSuccess)
	{
		(void) cudaGetLastError();
		if (e == cudaErrorMemoryAllocation && c->strict == 0)
			return pool_get_host(c, bytes, out);
		if (e == cudaErrorMemoryAllocation)
			return cu_fail(c, GDL_BK_ERR_NO_MEMORY,
						   "out of device memory: %zu bytes requested, %lld held",
						   bytes, (long long) c->bytes);
		return cu_err(c, e, "cudaMallocFromPoolAsync");
	}
	(*m)[p] = bytes;
	c->bytes += (int64_t) bytes;
	if (c->bytes > c->cnt.peak_bytes)
		c->cnt.peak_bytes = c->bytes;
	*out = p;
	return GDL_BK_OK;
}

/* Bytes of the pool buffer p (0 when p is not one). */
size_t
pool_size(CuCtx *c, const void *p)
{
	AllocMap   *m = (AllocMap *) c->allocs;
	AllocMap::iterator it;

	if (!p || !m)
		return 0;
	it = m->find((void *) p);
	if (it == m->end() && c->hallocs)
	{
		AllocMap   *h = (AllocMap *) c->hallocs;

		it = h->find((void *) p);
		return it == h->end() ? 0 : it->second;
	}
	return it == m->end() ? 0 : it->second;
}

/* Free a pool buffer in stream order (NULL is ignored). */
void
pool_put(CuCtx *c, void *p)
{
	AllocMap   *m = (AllocMap *) c->allocs;
	AllocMap::iterator it;

	if (!p || !m)
		return;
	it = m->find(p);
	if (it == m->end())
	{
		AllocMap   *h = (AllocMap *) c->hallocs;

		if (h && (it = h->find(p)) != h->end())
		{
			/* kernels queued before may still use it */
			(void) cudaStreamSynchronize(c->stream);
			(void) cudaFreeHost(p);
			c->host_bytes -= (int64_t) it->second;
			cu_pin_give((int64_t) it->second);
			h->erase(it);
		}
		return;
	}
	c->bytes -= (int64_t) it->second;
	m->erase(it);
	(void) cudaFreeAsync(p, c->stream);
}

/*
 * Free every buffer still held, wait for the stream, and destroy the pool
 * (its reserved memory goes back to the device).  Errors are ignored: this
 * runs on teardown, also after a device failure.
 */
void
pool_release_all(CuCtx *c)
{
	AllocMap   *m = (AllocMap *) c->allocs;

	if (m)
	{
		for (AllocMap::iterator it = m->begin(); it != m->end(); ++it)
			(void) cudaFreeAsync(it->first, c->stream);
		delete m;
		c->allocs = nullptr;
	}
	c->bytes = 0;
	if (c->stream)
		(void) cudaStreamSynchronize(c->stream);
	if (c->hallocs)
	{
		AllocMap   *h = (AllocMap *) c->hallocs;

		for (AllocMap::iterator it = h->begin(); it != h->end(); ++it)
		{
			(void) cudaFreeHost(it->first);
			c->host_bytes -= (int64_t) it->second;
			cu_pin_give((int64_t) it->second);
		}
		delete h;
		c->hallocs = nullptr;
	}
	if (c->pool_ok)
	{
		(void) cudaMemPoolTrimTo(c->pool, 0);
		(void) cudaMemPoolDestroy(c->pool);
		c->pool_ok = false;
	}
	(void) cudaGetLastError();
}

/*
 * Copy n int64 values from the device to the host and wait for them: the
 * one host sync an operation makes to learn its row count (it also surfaces
 * any error of the kernels queued before it).
 */
int
cu_read_i64(CuCtx *c, const void *dptr, int n, int64_t *out)
{
	if (n < 0 || n > CU_HPIN)
		return cu_fail(c, GDL_BK_ERR_INVALID, "internal: read of %d values", n);
	CU_TRY(c, cudaMemcpyAsync(c->hpin, dptr, sizeof(int64_t) * n,
							  cudaMemcpyDeviceToHost, c->stream));
	CU_TRY(c, cudaStreamSynchronize(c->stream));
	for (int i = 0; i < n; i++)
		out[i] = c->hpin[i];
	c->cnt.transfers++;
	c->cnt.bytes_from_device += (int64_t) sizeof(int64_t) * n;
	return GDL_BK_OK;
}

/* Wait for the context's stream, turning a device error into a status. */
int
cu_sync(CuCtx *c)
{
	CU_TRY(c, cudaStreamSynchronize(c->stream));
	return GDL_BK_OK;
}

/*
 * Pinned host scratch (CU_HPIN int64) for contexts, kept for reuse by the
 * whole process: a page-locked allocation or free waits for every kernel
 * on the device, so a context that allocated its own waited, in a shared
 * GPU service, for another session's long kernel (seconds: a new query
 * stuck in ctx_create behind a rule mining).  Allocated once, never freed.
 */
static std::mutex hpin_lock;
static std::vector<int64_t *> hpin_free;

int64_t *
cu_hpin_take(void)
{
	int64_t    *p = nullptr;

	{
		std::lock_guard<std::mutex> g(hpin_lock);

		if (!hpin_free.empty())
		{
			p = hpin_free.back();
			hpin_free.pop_back();
			return p;
		}
	}
	if (cudaMallocHost((void **) &p, CU_HPIN * sizeof(int64_t)) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return nullptr;
	}
	return p;
}

/* Give a context's pinned scratch back for the next context (NULL ignored). */
void
cu_hpin_give(int64_t *p)
{
	if (p == nullptr)
		return;
	try
	{
		std::lock_guard<std::mutex> g(hpin_lock);

		hpin_free.push_back(p);
	}
	catch (...)
	{
		/* no memory for the list: keep the buffer (a few KB) */
	}
}
