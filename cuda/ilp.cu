/*
 * ilp.cu — training of candidate probabilities for rule learning on the
 * GPU: the device half of src/ilp/gdl_ilp_device.h, exported as
 * gdl_cuda_ilp_entry() beside gdl_backend_entry.
 *
 * A session uploads the example x candidate coverage matrix once (CSR by
 * example) and derives its transpose on the device (stable radix sort of
 * the entries by candidate, so each candidate's examples stay ascending).
 * Every epoch is then two kernels on the session's stream:
 *
 *   rows   one thread per example: q = prod (1 - p_c) over its row, in
 *          row order as on the CPU, and the example's gradient factor
 *          (-q / P for a positive, wneg for a negative); the loss terms on
 *          check epochs (summed by a deterministic CUB reduction)
 *   cols   one warp per candidate: dL/dw_c = sum over its examples of
 *          p_c * factor (gathered over the transpose: no atomics), then the
 *          Adam step and p_c = sigmoid(w_c), fused
 *
 * The host reads the loss back only on the epochs where the CPU checks for
 * a stall (one 8-byte copy and sync every ILP_STALL_EVERY epochs).  Same
 * start, same Adam, same stop rule as ilp_train on the CPU; the arithmetic
 * is written with explicit rounding intrinsics so nvcc does not fuse it, so
 * the results agree with the CPU to rounding (the warp sums of the
 * gradient are in another order; exp and log may differ in the last bit).
 *
 * No PostgreSQL header, nothing at load time; every CUDA error becomes a
 * status and a message.
 */
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>

#include <cub/cub.cuh>

#include "ilp/gdl_ilp_device.h"

#define ILP_BLOCK 256

struct GdlIlpDevSession
{
	cudaStream_t stream;
	int32_t		nrows;
	int32_t		ncols;
	int32_t		npos;
	double		wneg;
	int64_t		nnz;
	int64_t    *off;			/* nrows + 1 */
	int32_t    *idx;			/* nnz */
	int64_t    *toff;			/* ncols + 1: transpose */
	int32_t    *trow;			/* nnz: examples of each candidate, ascending */
	double	   *w;				/* ncols: logits */
	double	   *p;				/* ncols: probabilities */
	double	   *m;				/* ncols: Adam moments */
	double	   *v;
	double	   *f;				/* nrows: gradient factor per example */
	double	   *rloss;			/* nrows: loss term per example */
	double	   *P;				/* nrows: example probabilities (forward) */
	double	   *dloss;			/* 1: summed loss */
	double	   *hloss;			/* pinned host copy */
	void	   *tmp;			/* CUB scratch of the loss reduction */
	size_t		tmpbytes;
};

namespace
{

/* Record a CUDA failure as a message; true when there was one. */
bool
failed(cudaError_t e, const char *what, char *errmsg, size_t errlen)
{
	if (e == cudaSuccess)
		return false;
	if (errlen > 0)
		snprintf(errmsg, errlen, "CUDA %s: %s", what, cudaGetErrorString(e));
	(void) cudaGetLastError();	/* clear a non-sticky error */
	return true;
}

/* The logistic function, as on the CPU. */
__device__ double
dsigmoid(double x)
{
	if (x >= 0)
		return __ddiv_rn(1.0, __dadd_rn(1.0, exp(-x)));
	double		e = exp(x);

	return __ddiv_rn(e, __dadd_rn(1.0, e));
}

/* Row of each matrix entry (for the transpose). */
__global__ void
k_entry_rows(int32_t nrows, const int64_t *off, int32_t *rows)
{
	int32_t		r = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (r >= nrows)
		return;
	for (int64_t k = off[r]; k < off[r + 1]; k++)
		rows[k] = r;
}

/* Entries per candidate (counts land in toff[c + 1]). */
__global__ void
k_col_count(int64_t nnz, const int32_t *idx, unsigned long long *cnt)
{
	int64_t		k = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (k < nnz)
		atomicAdd(&cnt[idx[k] + 1], 1ULL);
}

/* Start: every logit at w0, moments zero. */
__global__ void
k_init(int32_t n, double w0, double p0, double *w, double *p, double *m, double *v)
{
	int32_t		c = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (c >= n)
		return;
	w[c] = w0;
	p[c] = p0;
	m[c] = 0.0;
	v[c] = 0.0;
}

/*
 * Forward per example: q over the row, the gradient factor, and with
 * want_loss the loss term; P (when not NULL) the example's probability.
 */
__global__ void
k_rows(int32_t nrows, int32_t npos, double wneg, double eps, const int64_t *off,
	   const int32_t *idx, const double *p, double *f, double *rloss, double *P, bool want_loss)
{
	int32_t		r = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;
	double		q = 1.0;

	if (r >= nrows)
		return;
	for (int64_t k = off[r]; k < off[r + 1]; k++)
		q = __dmul_rn(q, __dsub_rn(1.0, p[idx[k]]));
	bool		positive = r < npos;
	double		PP = __dsub_rn(1.0, q);

	if (positive)
		f[r] = PP <= 0.0 ? 0.0 : -__ddiv_rn(q, PP);
	else
		f[r] = wneg;
	if (P != NULL)
		P[r] = PP;
	if (want_loss)
	{
		double		x = positive ? PP : q;

		rloss[r] = __dmul_rn(-log(x > eps ? x : eps), positive ? 1.0 : wneg);
	}
}

/*
 * One warp per candidate: the logit gradient gathered over the transpose,
 * then the Adam step and the new probability.
 */
__global__ void
k_cols_adam(int32_t ncols, const int64_t *toff, const int32_t *trow, const double *f,
			double *w, double *p, double *m, double *v, double lr, double beta1, double beta2,
			double aeps, double b1t, double b2t)
{
	int64_t		gt = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;
	int64_t		c = gt >> 5;
	int			lane = threadIdx.x & 31;
	double		sum = 0.0;

	if (c >= ncols)
		return;					/* whole warps leave together */
	double		pc = p[c];

	for (int64_t k = toff[c] + lane; k < toff[c + 1]; k += 32)
		sum = __dadd_rn(sum, __dmul_rn(pc, f[trow[k]]));
	for (int o = 16; o > 0; o >>= 1)
		sum = __dadd_rn(sum, __shfl_down_sync(0xffffffffu, sum, o));
	if (lane != 0)
		return;
	double		g = sum;
	double		mm = __dadd_rn(__dmul_rn(beta1, m[c]), __dmul_rn(__dsub_rn(1.0, beta1), g));
	double		vv = __dadd_rn(__dmul_rn(beta2, v[c]),
							   __dmul_rn(__dmul_rn(__dsub_rn(1.0, beta2), g), g));
	double		mh = __ddiv_rn(mm, b1t);
	double		vh = __ddiv_rn(vv, b2t);
	double		ww = __dsub_rn(w[c], __ddiv_rn(__dmul_rn(lr, mh), __dadd_rn(__dsqrt_rn(vh), aeps)));

	m[c] = mm;
	v[c] = vv;
	w[c] = ww;
	p[c] = dsigmoid(ww);
}

/* Blocks for n threads. */
unsigned
nblocks(int64_t n)
{
	return (unsigned) ((n + ILP_BLOCK - 1) / ILP_BLOCK);
}

/* Free everything a session holds (NULL members are skipped). */
void
session_free(GdlIlpDevSession *s)
{
	void	   *ptrs[] = {s->off, s->idx, s->toff, s->trow, s->w, s->p, s->m, s->v,
	s->f, s->rloss, s->P, s->dloss, s->tmp};

	if (s->stream)
		(void) cudaStreamSynchronize(s->stream);
	for (void *q : ptrs)
		if (q)
			(void) cudaFree(q);
	if (s->hloss)
		(void) cudaFreeHost(s->hloss);
	if (s->stream)
		(void) cudaStreamDestroy(s->stream);
	(void) cudaGetLastError();
	delete s;
}

/*
 * The two steps of the transpose: the entries' rows sorted by column into
 * trow, the per-column counts scanned into toff; with tmp NULL, only the
 * scratch each needs (into tb, tb2), as CUB sizes it.
 */
bool
transpose_sort_scan(GdlIlpDevSession *s, void *tmp, size_t &tb, size_t &tb2, int32_t *keys_out,
					int32_t *rows, unsigned long long *cnt, int bits, char *errmsg, size_t errlen)
{
	bool		sizing = tmp == NULL;

	return !failed(cub::DeviceRadixSort::SortPairs(tmp, tb, s->idx, keys_out, rows, s->trow,
												   s->nnz, 0, bits, s->stream),
				   sizing ? "sort size" : "sort", errmsg, errlen) &&
		!failed(cub::DeviceScan::InclusiveSum(tmp, tb2, cnt, s->toff, s->ncols + 1, s->stream),
				sizing ? "scan size" : "scan", errmsg, errlen);
}

/* Build the transpose (toff, trow) on the device. */
bool
build_transpose(GdlIlpDevSession *s, char *errmsg, size_t errlen)
{
	int32_t    *rows = NULL;
	int32_t    *keys_out = NULL;
	void	   *tmp = NULL;
	size_t		tb = 0,
				tb2 = 0;
	unsigned long long *cnt = NULL;	/* entries per candidate, at c + 1 */
	int			bits = 1;
	bool		ok = false;

	while (bits < 31 && ((int64_t) 1 << bits) < (int64_t) s->ncols)
		bits++;
	if (failed(cudaMemsetAsync(s->toff, 0, sizeof(int64_t) * (s->ncols + 1), s->stream),
			   "memset", errmsg, errlen))
		return false;
	if (s->nnz == 0)
		return true;
	if (failed(cudaMalloc(&cnt, sizeof(unsigned long long) * (s->ncols + 1)), "malloc", errmsg,
			   errlen) ||
		failed(cudaMemsetAsync(cnt, 0, sizeof(unsigned long long) * (s->ncols + 1), s->stream),
			   "memset", errmsg, errlen) ||
		failed(cudaMalloc(&rows, sizeof(int32_t) * s->nnz), "malloc", errmsg, errlen) ||
		failed(cudaMalloc(&keys_out, sizeof(int32_t) * s->nnz), "malloc", errmsg, errlen))
		goto done;
	k_entry_rows<<<nblocks(s->nrows), ILP_BLOCK, 0, s->stream>>>(s->nrows, s->off, rows);
	k_col_count<<<nblocks(s->nnz), ILP_BLOCK, 0, s->stream>>>(s->nnz, s->idx, cnt);
	if (failed(cudaGetLastError(), "launch", errmsg, errlen))
		goto done;
	if (!transpose_sort_scan(s, NULL, tb, tb2, keys_out, rows, cnt, bits, errmsg, errlen))
		goto done;
	if (tb2 > tb)
		tb = tb2;
	if (failed(cudaMalloc(&tmp, tb), "malloc", errmsg, errlen))
		goto done;
	tb2 = tb;
	if (!transpose_sort_scan(s, tmp, tb, tb2, keys_out, rows, cnt, bits, errmsg, errlen))
		goto done;
	ok = !failed(cudaStreamSynchronize(s->stream), "transpose", errmsg, errlen);
done:
	if (s->stream)
		(void) cudaStreamSynchronize(s->stream);
	if (rows)
		(void) cudaFree(rows);
	if (keys_out)
		(void) cudaFree(keys_out);
	if (tmp)
		(void) cudaFree(tmp);
	if (cnt)
		(void) cudaFree(cnt);
	return ok;
}

/* Allocate n bytes of device memory into *p. */
bool
dev_alloc(void *p, size_t n, char *errmsg, size_t errlen)
{
	return !failed(cudaMalloc((void **) p, n > 0 ? n : 8), "malloc", errmsg, errlen);
}

/* Upload a problem and set up the session; NULL on failure. */
GdlIlpDevSession *
ilp_create(const GdlIlpDevProblem *pr, char *errmsg, size_t errlen)
{
	GdlIlpDevSession *s = new(std::nothrow) GdlIlpDevSession;
	int64_t		nnz;

	if (s == NULL)
	{
		snprintf(errmsg, errlen, "out of host memory");
		return NULL;
	}
	memset(s, 0, sizeof(*s));
	if (pr->nrows < 0 || pr->ncols < 0 || pr->npos < 0 || pr->npos > pr->nrows ||
		pr->off == NULL || (pr->nrows > 0 && pr->off[0] != 0))
	{
		snprintf(errmsg, errlen, "invalid coverage matrix");
		delete s;
		return NULL;
	}
	nnz = pr->off[pr->nrows];
	s->nrows = pr->nrows;
	s->ncols = pr->ncols;
	s->npos = pr->npos;
	s->wneg = pr->wneg;
	s->nnz = nnz;
	if (failed(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), "stream", errmsg,
			   errlen))
	{
		s->stream = NULL;
		goto fail;
	}
	if (!dev_alloc(&s->off, sizeof(int64_t) * (s->nrows + 1), errmsg, errlen) ||
		!dev_alloc(&s->idx, sizeof(int32_t) * nnz, errmsg, errlen) ||
		!dev_alloc(&s->toff, sizeof(int64_t) * (s->ncols + 1), errmsg, errlen) ||
		!dev_alloc(&s->trow, sizeof(int32_t) * nnz, errmsg, errlen) ||
		!dev_alloc(&s->w, sizeof(double) * s->ncols, errmsg, errlen) ||
		!dev_alloc(&s->p, sizeof(double) * s->ncols, errmsg, errlen) ||
		!dev_alloc(&s->m, sizeof(double) * s->ncols, errmsg, errlen) ||
		!dev_alloc(&s->v, sizeof(double) * s->ncols, errmsg, errlen) ||
		!dev_alloc(&s->f, sizeof(double) * s->nrows, errmsg, errlen) ||
		!dev_alloc(&s->rloss, sizeof(double) * s->nrows, errmsg, errlen) ||
		!dev_alloc(&s->dloss, sizeof(double), errmsg, errlen))
		goto fail;
	if (failed(cudaMallocHost((void **) &s->hloss, sizeof(double)), "host alloc", errmsg, errlen))
	{
		s->hloss = NULL;
		goto fail;
	}
	if (failed(cudaMemcpyAsync(s->off, pr->off, sizeof(int64_t) * (s->nrows + 1),
							   cudaMemcpyHostToDevice, s->stream), "upload", errmsg, errlen) ||
		(nnz > 0 &&
		 failed(cudaMemcpyAsync(s->idx, pr->idx, sizeof(int32_t) * nnz, cudaMemcpyHostToDevice,
								s->stream), "upload", errmsg, errlen)))
		goto fail;
	if (failed(cub::DeviceReduce::Sum(NULL, s->tmpbytes, s->rloss, s->dloss, s->nrows,
									  s->stream), "reduce size", errmsg, errlen) ||
		!dev_alloc(&s->tmp, s->tmpbytes, errmsg, errlen))
		goto fail;
	if (!build_transpose(s, errmsg, errlen))
		goto fail;
	return s;
fail:
	session_free(s);
	return NULL;
}

/* Sum the loss terms into *s->hloss (asynchronously: sync before reading). */
bool
launch_loss(GdlIlpDevSession *s, char *errmsg, size_t errlen)
{
	size_t		tb = s->tmpbytes;

	if (s->nrows == 0)
		return !failed(cudaMemsetAsync(s->dloss, 0, sizeof(double), s->stream), "memset",
					   errmsg, errlen) &&
			!failed(cudaMemcpyAsync(s->hloss, s->dloss, sizeof(double), cudaMemcpyDeviceToHost,
									s->stream), "copy", errmsg, errlen);
	return !failed(cub::DeviceReduce::Sum(s->tmp, tb, s->rloss, s->dloss, s->nrows, s->stream),
				   "reduce", errmsg, errlen) &&
		!failed(cudaMemcpyAsync(s->hloss, s->dloss, sizeof(double), cudaMemcpyDeviceToHost,
								s->stream), "copy", errmsg, errlen);
}

/* Launch the row kernel. */
bool
launch_rows(GdlIlpDevSession *s, double eps, double *P, bool want_loss, char *errmsg,
			size_t errlen)
{
	if (s->nrows > 0)
		k_rows<<<nblocks(s->nrows), ILP_BLOCK, 0, s->stream>>>(s->nrows, s->npos, s->wneg, eps,
															   s->off, s->idx, s->p, s->f,
															   s->rloss, P, want_loss);
	return !failed(cudaGetLastError(), "launch", errmsg, errlen);
}

/* Host sigmoid, as on the CPU. */
double
hsigmoid(double x)
{
	return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
}

/* Train for up to t->epochs epochs, as ilp_train does on the CPU. */
int
ilp_train(GdlIlpDevSession *s, const GdlIlpDevTrain *t, GdlIlpDevResult *out, char *errmsg,
		  size_t errlen)
{
	auto		start = std::chrono::steady_clock::now();
	double		prev = INFINITY;
	int			e;

	if (s->ncols > 0)
		k_init<<<nblocks(s->ncols), ILP_BLOCK, 0, s->stream>>>(s->ncols, t->w0, hsigmoid(t->w0),
															   s->w, s->p, s->m, s->v);
	if (failed(cudaGetLastError(), "launch", errmsg, errlen))
		return -1;
	for (e = 0; e < t->epochs; e++)
	{
		bool		check = t->stall_every > 0 && e % t->stall_every == 0;
		double		b1t = 1.0 - std::pow(t->beta1, (double) (e + 1));
		double		b2t = 1.0 - std::pow(t->beta2, (double) (e + 1));
		double		loss;

		/*
		 * every epoch, ask the caller whether it still wants the result (an
		 * atomic read; an epoch of a large matrix takes milliseconds, and at
		 * most stall_every of them are queued ahead of the host)
		 */
		if (t->stop != NULL && t->stop(t->stop_arg))
		{
			(void) cudaStreamSynchronize(s->stream);
			snprintf(errmsg, errlen, "cancelled");
			return -1;
		}
		if (!launch_rows(s, t->loss_eps, NULL, check, errmsg, errlen))
			return -1;
		if (check && !launch_loss(s, errmsg, errlen))
			return -1;
		if (s->ncols > 0)
			k_cols_adam<<<nblocks((int64_t) s->ncols * 32), ILP_BLOCK, 0, s->stream>>>(
				s->ncols, s->toff, s->trow, s->f, s->w, s->p, s->m, s->v, t->lr, t->beta1,
				t->beta2, t->adam_eps, b1t, b2t);
		if (failed(cudaGetLastError(), "launch", errmsg, errlen))
			return -1;
		if (!check)
			continue;
		if (failed(cudaStreamSynchronize(s->stream), "epoch", errmsg, errlen))
			return -1;
		loss = *s->hloss;
		if (std::fabs(prev - loss) <= t->stall_tol * (1.0 + std::fabs(loss)))
		{
			e++;
			break;
		}
		prev = loss;
	}
	if (!launch_rows(s, t->loss_eps, NULL, true, errmsg, errlen) ||
		!launch_loss(s, errmsg, errlen))
		return -1;
	if (s->ncols > 0 && out->prob != NULL &&
		failed(cudaMemcpyAsync(out->prob, s->p, sizeof(double) * s->ncols,
							   cudaMemcpyDeviceToHost, s->stream), "download", errmsg, errlen))
		return -1;
	if (failed(cudaStreamSynchronize(s->stream), "train", errmsg, errlen))
		return -1;
	out->epochs = e;
	out->loss = *s->hloss;
	out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	return 0;
}

/* Loss (and per-example probabilities) at the given candidate probabilities. */
int
ilp_forward(GdlIlpDevSession *s, const double *prob, double *P, double *loss, char *errmsg,
			size_t errlen)
{
	if (s->ncols > 0 &&
		failed(cudaMemcpyAsync(s->p, prob, sizeof(double) * s->ncols, cudaMemcpyHostToDevice,
							   s->stream), "upload", errmsg, errlen))
		return -1;
	if (P != NULL && s->P == NULL && !dev_alloc(&s->P, sizeof(double) * s->nrows, errmsg, errlen))
		return -1;
	if (!launch_rows(s, 1e-6, P ? s->P : NULL, true, errmsg, errlen) ||
		!launch_loss(s, errmsg, errlen))
		return -1;
	if (P != NULL && s->nrows > 0 &&
		failed(cudaMemcpyAsync(P, s->P, sizeof(double) * s->nrows, cudaMemcpyDeviceToHost,
							   s->stream), "download", errmsg, errlen))
		return -1;
	if (failed(cudaStreamSynchronize(s->stream), "forward", errmsg, errlen))
		return -1;
	*loss = *s->hloss;
	return 0;
}

/* End a session. */
void
ilp_destroy(GdlIlpDevSession *s)
{
	if (s != NULL)
		session_free(s);
}

}								/* namespace */

/* Bulk coverage, in ilp_cover.cu. */
extern int	gdl_cuda_ilp_cover(const GdlIlpDevCoverIn *in, uint64_t **out, int64_t *nout,
							   double *seconds, char *errmsg, size_t errlen);
extern void gdl_cuda_ilp_cover_free(uint64_t *p);
extern void gdl_cuda_ilp_cover_release(void);

namespace
{

const GdlIlpDevice ilp_device = {
	GDL_ILP_DEVICE_ABI,
	"cuda",
	ilp_create,
	ilp_train,
	ilp_forward,
	ilp_destroy,
	gdl_cuda_ilp_cover,
	gdl_cuda_ilp_cover_free,
	gdl_cuda_ilp_cover_release
};

}								/* namespace */

/* The entry point the host looks up with dlsym. */
extern "C" __attribute__((visibility("default"))) const GdlIlpDevice *
gdl_cuda_ilp_entry(void)
{
	return &ilp_device;
}
