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

#include "cu_bufs.cuh"
#include "ilp/ilp_bulk.h"

#define COVER_BLOCK 128

namespace
{

/*
 * The graph of the last call with a nonzero graph_id, kept on the device:
 * a graph scored for several targets is uploaded once.
 */
struct Resident
{
	uint64_t	id;
	CuBufs	   *bufs;
	const int64_t *aoff;
	const uint64_t *adj;
	const int64_t *soff;
	const uint32_t *sig;
	const int64_t *uoff;
	const uint32_t *usig;
};

Resident	resident = {0, NULL, NULL, NULL, NULL, NULL, NULL, NULL};

/*
 * Point dst's graph arrays at src's: a call's input at the resident graph,
 * or the resident graph at a call's upload (the two share the field names).
 */
template <typename D, typename S>
void
copy_graph(D &dst, const S &src)
{
	dst.aoff = src.aoff;
	dst.adj = src.adj;
	dst.soff = src.soff;
	dst.sig = src.sig;
	dst.uoff = src.uoff;
	dst.usig = src.usig;
}

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
upload_graph(CuBufs &b, const GdlIlpDevCoverIn *hin, GdlIlpDevCoverIn *in, cudaStream_t st,
			 char *errmsg, size_t errlen)
{
	return b.up(hin->aoff, (int64_t) in->nent + 1, &in->aoff, errmsg, errlen, &st) &&
		b.up(hin->adj, hin->aoff[in->nent], &in->adj, errmsg, errlen, &st) &&
		b.up(hin->soff, (int64_t) in->nent + 1, &in->soff, errmsg, errlen, &st) &&
		b.up(hin->sig, hin->soff[in->nent], &in->sig, errmsg, errlen, &st) &&
		b.up(hin->uoff, (int64_t) in->nent + 1, &in->uoff, errmsg, errlen, &st) &&
		b.up(hin->usig, hin->uoff[in->nent], &in->usig, errmsg, errlen, &st);
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
	CuBufs	b;
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
		copy_graph(in, resident);
	}
	else if (in.graph_id != 0)
	{
		resident_release();
		resident.bufs = new CuBufs();
		if (!upload_graph(*resident.bufs, hin, &in, st, errmsg, errlen))
		{
			resident_release();
			return -1;
		}
		resident.id = in.graph_id;
		copy_graph(resident, in);
	}
	else if (!upload_graph(b, hin, &in, st, errmsg, errlen))
		return -1;
	if (!b.up(hin->ex0, in.nex, &in.ex0, errmsg, errlen, &st) ||
		!b.up(hin->ex1, in.nex, &in.ex1, errmsg, errlen, &st) ||
		!b.alloc(&count, sizeof(int64_t) * ((size_t) in.nex + 1), errmsg, errlen) ||
		!b.alloc(&off, sizeof(int64_t) * ((size_t) in.nex + 1), errmsg, errlen) ||
		!b.alloc(&dnsel, sizeof(int64_t), errmsg, errlen))
		return -1;
	if (in.nex > 0)
	{
		cover_kernel<<<grid, COVER_BLOCK, 0, st>>>(in, count, NULL, NULL);
		if (cu_msg_failed(cudaGetLastError(), "count kernel", errmsg, errlen))
			return -1;
		cub::DeviceScan::ExclusiveSum(NULL, need, count, off, in.nex, st);
		tmpbytes = need;
		if (!b.alloc(&tmp, tmpbytes, errmsg, errlen))
			return -1;
		if (cu_msg_failed(cub::DeviceScan::ExclusiveSum(tmp, tmpbytes, count, off, in.nex, st),
						 "scan", errmsg, errlen) ||
			cu_msg_failed(cudaMemcpyAsync(&total, off + in.nex - 1, sizeof(int64_t),
										 cudaMemcpyDeviceToHost, st), "download", errmsg, errlen) ||
			cu_msg_failed(cudaMemcpyAsync(&last, count + in.nex - 1, sizeof(int64_t),
										 cudaMemcpyDeviceToHost, st), "download", errmsg, errlen) ||
			cu_msg_failed(cudaStreamSynchronize(st), "count", errmsg, errlen))
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
		if (cu_msg_failed(cudaGetLastError(), "fill kernel", errmsg, errlen))
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
		if (cu_msg_failed(cub::DeviceRadixSort::SortKeys(tmp, tmpbytes, ent, sorted, total, 0, 64, st),
						 "sort", errmsg, errlen) ||
			cu_msg_failed(cub::DeviceSelect::Unique(tmp, tmpbytes, sorted, ent, dnsel, total, st),
						 "unique", errmsg, errlen) ||
			cu_msg_failed(cudaMemcpyAsync(&nsel, dnsel, sizeof(int64_t), cudaMemcpyDeviceToHost, st),
						 "download", errmsg, errlen) ||
			cu_msg_failed(cudaStreamSynchronize(st), "sort", errmsg, errlen))
			return -1;
	}
	host = (uint64_t *) malloc(sizeof(uint64_t) * ((size_t) nsel + 1));
	if (host == NULL)
	{
		snprintf(errmsg, errlen, "out of host memory for %lld entries", (long long) nsel);
		return -1;
	}
	if (nsel > 0 &&
		(cu_msg_failed(cudaMemcpyAsync(host, ent, sizeof(uint64_t) * (size_t) nsel,
									  cudaMemcpyDeviceToHost, st), "download", errmsg, errlen) ||
		 cu_msg_failed(cudaStreamSynchronize(st), "download", errmsg, errlen)))
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
