/*
 * ilp_cover.cu — bulk coverage of the body-2 bias on the GPU: the cover()
 * member of src/ilp/gdl_ilp_device.h.
 *
 * Uploads the adjacency, signatures, unary memberships and examples
 * (GdlIlpDevCoverIn), then: one thread per example counts its entries with
 * ilp_bulk_example (src/ilp/ilp_bulk.h, the very code the CPU runs), an
 * exclusive scan places them, a second pass writes them, a CUB radix sort
 * orders them and a CUB unique drops repeats; the distinct entries are read
 * back.  Same entries as the CPU's by construction; every CUDA error
 * becomes a status and a message.  A graph with a graph_id stays on the
 * device for the next call with that id (several targets over one graph
 * upload only their examples) until cover_release().
 */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cub/cub.cuh>

#include "ilp/ilp_bulk.h"

#define COVER_BLOCK 128

namespace
{

/* Record a CUDA error as the message; true when there was one. */
bool
cover_failed(cudaError_t rc, const char *what, char *errmsg, size_t errlen)
{
	if (rc == cudaSuccess)
		return false;
	snprintf(errmsg, errlen, "%s: %s", what, cudaGetErrorString(rc));
	return true;
}

/* Device buffers of one cover() call, freed together. */
struct CoverBufs
{
	void	   *p[16];
	int			n;

	CoverBufs() : n(0) {}
	~CoverBufs()
	{
		for (int i = 0; i < n; i++)
			cudaFree(p[i]);
	}
	/* cudaMalloc, remembered */
	template <typename T> bool alloc(T **out, size_t bytes, char *errmsg, size_t errlen)
	{
		void	   *q = NULL;

		if (cover_failed(cudaMalloc(&q, bytes > 0 ? bytes : 8), "device memory", errmsg, errlen))
			return false;
		p[n++] = q;
		*out = (T *) q;
		return true;
	}
};

/* Copy a host array to a new device buffer. */
template <typename T>
bool
upload(CoverBufs &b, const T *src, int64_t n, const T **dst, cudaStream_t st, char *errmsg,
	   size_t errlen)
{
	T		   *d;

	if (!b.alloc(&d, sizeof(T) * (size_t) n, errmsg, errlen))
		return false;
	if (n > 0 && cover_failed(cudaMemcpyAsync(d, src, sizeof(T) * (size_t) n,
											 cudaMemcpyHostToDevice, st), "upload", errmsg, errlen))
		return false;
	*dst = d;
	return true;
}

/*
 * The graph of the last call with a nonzero graph_id, kept on the device:
 * a graph scored for several targets is uploaded once.
 */
struct Resident
{
	uint64_t	id;
	CoverBufs  *bufs;
	const int64_t *aoff;
	const uint64_t *adj;
	const int64_t *soff;
	const uint32_t *sig;
	const int64_t *uoff;
	const uint32_t *usig;
};

Resident	resident = {0, NULL, NULL, NULL, NULL, NULL, NULL, NULL};

/* Free the resident graph. */
void
resident_release()
{
	delete resident.bufs;
	resident.bufs = NULL;
	resident.id = 0;
}

/* Upload the graph arrays of hin into b, pointing in's at them. */
bool
upload_graph(CoverBufs &b, const GdlIlpDevCoverIn *hin, GdlIlpDevCoverIn *in, cudaStream_t st,
			 char *errmsg, size_t errlen)
{
	return upload(b, hin->aoff, (int64_t) in->nent + 1, &in->aoff, st, errmsg, errlen) &&
		upload(b, hin->adj, hin->aoff[in->nent], &in->adj, st, errmsg, errlen) &&
		upload(b, hin->soff, (int64_t) in->nent + 1, &in->soff, st, errmsg, errlen) &&
		upload(b, hin->sig, hin->soff[in->nent], &in->sig, st, errmsg, errlen) &&
		upload(b, hin->uoff, (int64_t) in->nent + 1, &in->uoff, st, errmsg, errlen) &&
		upload(b, hin->usig, hin->uoff[in->nent], &in->usig, st, errmsg, errlen);
}

/* Entries per example (pass 1) or the entries themselves (pass 2). */
__global__ void
cover_kernel(GdlIlpDevCoverIn in, int64_t *count, const int64_t *off, uint64_t *out)
{
	int32_t		e = (int32_t) (blockIdx.x * (int64_t) blockDim.x + threadIdx.x);

	if (e >= in.nex)
		return;
	if (out == NULL)
		count[e] = ilp_bulk_example(&in, e, NULL);
	else
		ilp_bulk_example(&in, e, out + off[e]);
}

/* The distinct sorted entries; see gdl_ilp_device.h. */
int
ilp_cover(const GdlIlpDevCoverIn *hin, uint64_t **out, int64_t *nout, double *seconds,
		  char *errmsg, size_t errlen)
{
	auto		start = std::chrono::steady_clock::now();
	CoverBufs	b;
	GdlIlpDevCoverIn in = *hin;
	cudaStream_t st = 0;
	int64_t    *count,
			   *off,
			   *dnsel;
	uint64_t   *ent,
			   *sorted;
	int64_t		total = 0,
				last = 0,
				nsel = 0;
	void	   *tmp = NULL;
	size_t		tmpbytes = 0,
				need = 0;
	int			grid = (int) ((in.nex + COVER_BLOCK - 1) / COVER_BLOCK);
	uint64_t   *host;

	*out = NULL;
	*nout = 0;
	if (in.nex <= 0)
		grid = 1;
	if (in.graph_id != 0 && in.graph_id == resident.id)
	{
		in.aoff = resident.aoff;
		in.adj = resident.adj;
		in.soff = resident.soff;
		in.sig = resident.sig;
		in.uoff = resident.uoff;
		in.usig = resident.usig;
	}
	else if (in.graph_id != 0)
	{
		resident_release();
		resident.bufs = new CoverBufs();
		if (!upload_graph(*resident.bufs, hin, &in, st, errmsg, errlen))
		{
			resident_release();
			return -1;
		}
		resident.id = in.graph_id;
		resident.aoff = in.aoff;
		resident.adj = in.adj;
		resident.soff = in.soff;
		resident.sig = in.sig;
		resident.uoff = in.uoff;
		resident.usig = in.usig;
	}
	else if (!upload_graph(b, hin, &in, st, errmsg, errlen))
		return -1;
	if (!upload(b, hin->ex0, in.nex, &in.ex0, st, errmsg, errlen) ||
		!upload(b, hin->ex1, in.nex, &in.ex1, st, errmsg, errlen) ||
		!b.alloc(&count, sizeof(int64_t) * ((size_t) in.nex + 1), errmsg, errlen) ||
		!b.alloc(&off, sizeof(int64_t) * ((size_t) in.nex + 1), errmsg, errlen) ||
		!b.alloc(&dnsel, sizeof(int64_t), errmsg, errlen))
		return -1;
	if (in.nex > 0)
	{
		cover_kernel<<<grid, COVER_BLOCK, 0, st>>>(in, count, NULL, NULL);
		if (cover_failed(cudaGetLastError(), "count kernel", errmsg, errlen))
			return -1;
		cub::DeviceScan::ExclusiveSum(NULL, need, count, off, in.nex, st);
		tmpbytes = need;
		if (!b.alloc(&tmp, tmpbytes, errmsg, errlen))
			return -1;
		if (cover_failed(cub::DeviceScan::ExclusiveSum(tmp, tmpbytes, count, off, in.nex, st),
						 "scan", errmsg, errlen) ||
			cover_failed(cudaMemcpyAsync(&total, off + in.nex - 1, sizeof(int64_t),
										 cudaMemcpyDeviceToHost, st), "download", errmsg, errlen) ||
			cover_failed(cudaMemcpyAsync(&last, count + in.nex - 1, sizeof(int64_t),
										 cudaMemcpyDeviceToHost, st), "download", errmsg, errlen) ||
			cover_failed(cudaStreamSynchronize(st), "count", errmsg, errlen))
			return -1;
		total += last;
	}
	if (total > in.max_entries)
	{
		snprintf(errmsg, errlen, "%lld entries, more than %lld", (long long) total,
				 (long long) in.max_entries);
		return 1;
	}
	if (!b.alloc(&ent, sizeof(uint64_t) * ((size_t) total + 1), errmsg, errlen) ||
		!b.alloc(&sorted, sizeof(uint64_t) * ((size_t) total + 1), errmsg, errlen))
		return -1;
	if (total > 0)
	{
		cover_kernel<<<grid, COVER_BLOCK, 0, st>>>(in, count, off, ent);
		if (cover_failed(cudaGetLastError(), "fill kernel", errmsg, errlen))
			return -1;
		need = 0;
		cub::DeviceRadixSort::SortKeys(NULL, need, ent, sorted, total, 0, 64, st);
		{
			size_t		need2 = 0;

			cub::DeviceSelect::Unique(NULL, need2, sorted, ent, dnsel, total, st);
			if (need2 > need)
				need = need2;
		}
		if (need > tmpbytes)
		{
			void	   *t2;

			if (!b.alloc(&t2, need, errmsg, errlen))
				return -1;
			tmp = t2;
			tmpbytes = need;
		}
		if (cover_failed(cub::DeviceRadixSort::SortKeys(tmp, tmpbytes, ent, sorted, total, 0, 64, st),
						 "sort", errmsg, errlen) ||
			cover_failed(cub::DeviceSelect::Unique(tmp, tmpbytes, sorted, ent, dnsel, total, st),
						 "unique", errmsg, errlen) ||
			cover_failed(cudaMemcpyAsync(&nsel, dnsel, sizeof(int64_t), cudaMemcpyDeviceToHost, st),
						 "download", errmsg, errlen) ||
			cover_failed(cudaStreamSynchronize(st), "sort", errmsg, errlen))
			return -1;
	}
	host = (uint64_t *) malloc(sizeof(uint64_t) * ((size_t) nsel + 1));
	if (host == NULL)
	{
		snprintf(errmsg, errlen, "out of host memory for %lld entries", (long long) nsel);
		return -1;
	}
	if (nsel > 0 &&
		(cover_failed(cudaMemcpyAsync(host, ent, sizeof(uint64_t) * (size_t) nsel,
									  cudaMemcpyDeviceToHost, st), "download", errmsg, errlen) ||
		 cover_failed(cudaStreamSynchronize(st), "download", errmsg, errlen)))
	{
		free(host);
		return -1;
	}
	*out = host;
	*nout = nsel;
	*seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	return 0;
}

}								/* namespace */

/* cover() for cuda/ilp.cu's device table. */
int
gdl_cuda_ilp_cover(const GdlIlpDevCoverIn *in, uint64_t **out, int64_t *nout, double *seconds,
				   char *errmsg, size_t errlen)
{
	return ilp_cover(in, out, nout, seconds, errmsg, errlen);
}

/* cover_release() for the device table. */
void
gdl_cuda_ilp_cover_release(void)
{
	resident_release();
}

/* cover_free() for the device table. */
void
gdl_cuda_ilp_cover_free(uint64_t *p)
{
	free(p);
}
