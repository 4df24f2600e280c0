/*
 * resident.cu — tables kept on the device across runs (gpudl_load).
 *
 * A resident table is a column-major int64 copy of a table's columns in
 * device memory of its own (cudaMalloc, not a context's pool: it outlives
 * every context), plus the bounds of each column kept on the host.  A run
 * turns it into a relation of its context with one kernel: it picks the
 * columns a predicate reads, maps text ids of the table's dictionary to the
 * run's through small tables uploaded for the run, and writes the rows in
 * the layout the bounds allow (packed or wide).  The table's rows never
 * cross the bus again; only the text-id tables do (4 bytes per distinct
 * string).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_int.cuh"

/* A table resident on the device. */
struct CuResident
{
	int			ncols;
	int64_t		nrows;
	int64_t    *data;			/* ncols columns of nrows values (cudaMalloc) */
	int64_t    *lo;				/* per column: smallest and largest value */
	int64_t    *hi;
	int64_t		bytes;
};

/* What the kernel reads: resident columns, their order, their text maps. */
struct ResSpec
{
	const int64_t *src;
	int64_t		ld;
	int			ncols;
	int			col[CU_MAX_ARITY];
	const int32_t *remap[CU_MAX_ARITY];
	int32_t		remap_len[CU_MAX_ARITY];
};

static char g_res_err[256];		/* resident_create's message (static storage) */

/* Fail resident_create with a message; frees what was made so far. */
static void *
res_fail(CuResident *r, const char **errmsg, const char *what, cudaError_t e)
{
	snprintf(g_res_err, sizeof(g_res_err), "%s%s%s", what,
			 e != cudaSuccess ? ": " : "", e != cudaSuccess ? cudaGetErrorString(e) : "");
	(void) cudaGetLastError();
	if (errmsg)
		*errmsg = g_res_err;
	cu_resident_free(r);
	return nullptr;
}

/*
 * Copy ncols host columns of nrows values to the device and keep them
 * there; NULL with *errmsg on failure (no device, out of memory).
 */
void *
cu_resident_create(int ncols, int64_t nrows, const int64_t *const *cols,
				   int64_t *bytes, const char **errmsg)
{
	CuResident *r;
	int			ndev = 0;
	cudaError_t e;
	size_t		colbytes = sizeof(int64_t) * (size_t) nrows;

	if (ncols < 0 || ncols > CU_MAX_ARITY || nrows < 0 || (nrows > 0 && ncols > 0 && !cols))
		return res_fail(nullptr, errmsg, "resident table: bad arguments", cudaSuccess);
	e = cudaGetDeviceCount(&ndev);
	if (e != cudaSuccess || ndev == 0)
		return res_fail(nullptr, errmsg, "no CUDA device", e);
	r = (CuResident *) calloc(1, sizeof(CuResident));
	if (!r)
		return res_fail(nullptr, errmsg, "out of host memory", cudaSuccess);
	r->ncols = ncols;
	r->nrows = nrows;
	r->lo = (int64_t *) calloc(ncols + 1, sizeof(int64_t));
	r->hi = (int64_t *) calloc(ncols + 1, sizeof(int64_t));
	if (!r->lo || !r->hi)
		return res_fail(r, errmsg, "out of host memory", cudaSuccess);
	bounds_empty(ncols, r->lo, r->hi);
	for (int k = 0; k < ncols; k++)
		for (int64_t i = 0; i < nrows; i++)
		{
			if (cols[k][i] < r->lo[k])
				r->lo[k] = cols[k][i];
			if (cols[k][i] > r->hi[k])
				r->hi[k] = cols[k][i];
		}
	if (nrows > 0 && ncols > 0)
	{
		e = cudaMalloc((void **) &r->data, colbytes * ncols);
		if (e != cudaSuccess)
		{
			r->data = nullptr;
			return res_fail(r, errmsg, "out of device memory for a loaded table", e);
		}
		r->bytes = (int64_t) (colbytes * ncols);
		for (int k = 0; k < ncols; k++)
		{
			e = cudaMemcpy(r->data + (int64_t) k * nrows, cols[k], colbytes, cudaMemcpyHostToDevice);
			if (e != cudaSuccess)
				return res_fail(r, errmsg, "copy of a loaded table to the device failed", e);
		}
	}
	if (bytes)
		*bytes = r->bytes;
	return r;
}

/* Free a resident table (NULL is ignored). */
void
cu_resident_free(void *res)
{
	CuResident *r = (CuResident *) res;

	if (!r)
		return;
	if (r->data)
		(void) cudaFree(r->data);
	(void) cudaGetLastError();
	free(r->lo);
	free(r->hi);
	free(r);
}

/* Kernel: row i of the output = the chosen resident columns of row i, remapped. */
static __global__ void
k_from_resident(ResSpec s, int64_t n, DOut o, unsigned long long *bad)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;
	int64_t		v[CU_MAX_ARITY];

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
	{
		for (int j = 0; j < s.ncols; j++)
		{
			int64_t		x = s.src[(int64_t) s.col[j] * s.ld + i];

			if (s.remap[j])
			{
				if (x < 0 || x >= s.remap_len[j])
				{
					*bad = 1;
					x = 0;
				}
				else
					x = s.remap[j][x];
			}
			v[j] = x;
		}
		dput(o, i, v);
	}
}

/*
 * The bag of a resident table's chosen columns in context c (see
 * from_resident in gdl_backend.h): one kernel over the rows, after the text
 * maps are uploaded.
 */
int
cu_op_from_resident(CuCtx *c, void *res, int ncols, const int *colidx,
					const int32_t *const *remap, const int32_t *remap_len, CuRel **out)
{
	CuResident *t = (CuResident *) res;
	ResSpec		s;
	DBuf		maps[CU_MAX_ARITY];
	DBuf		flag;
	int64_t		lo[CU_MAX_ARITY],
				hi[CU_MAX_ARITY];
	int64_t		bad = 0;
	CuRel	   *r;

	*out = nullptr;
	memset(&s, 0, sizeof(s));
	s.ncols = ncols;
	s.src = t->data;
	s.ld = t->nrows;
	for (int j = 0; j < ncols; j++)
	{
		if (colidx[j] < 0 || colidx[j] >= t->ncols)
			return cu_fail(c, GDL_BK_ERR_INVALID, "from_resident: column %d out of range", colidx[j]);
		s.col[j] = colidx[j];
		lo[j] = t->lo[colidx[j]];
		hi[j] = t->hi[colidx[j]];
		if (remap && remap[j])
		{
			if (remap_len[j] < 0)
				return cu_fail(c, GDL_BK_ERR_INVALID, "from_resident: negative map length");
			bounds_empty(1, &lo[j], &hi[j]);
			for (int32_t v = 0; v < remap_len[j]; v++)
			{
				if (remap[j][v] < lo[j])
					lo[j] = remap[j][v];
				if (remap[j][v] > hi[j])
					hi[j] = remap[j][v];
			}
			if (t->nrows > 0 && remap_len[j] > 0)
			{
				size_t		b = sizeof(int32_t) * (size_t) remap_len[j];

				CU_OK(maps[j].get(c, b));
				CU_TRY(c, cudaMemcpyAsync(maps[j].p, remap[j], b, cudaMemcpyHostToDevice, c->stream));
				c->cnt.bytes_to_device += (int64_t) b;
				c->cnt.transfers++;
				s.remap[j] = maps[j].as<int32_t>();
			}
			else
				s.remap[j] = nullptr;
			s.remap_len[j] = remap_len[j];
			if (t->nrows > 0 && remap_len[j] == 0)
				return cu_fail(c, GDL_BK_ERR_INVALID, "from_resident: empty map for a column with rows");
		}
	}
	if (ncols == 0)
		return rel_unit(c, t->nrows, out);
	CU_OK(rel_new_bounded(c, ncols, t->nrows, lo, hi, &r));
	if (t->nrows > 0)
	{
		int			st;

		st = flag.get(c, sizeof(int64_t));
		if (st == GDL_BK_OK && cudaMemsetAsync(flag.p, 0, sizeof(int64_t), c->stream) != cudaSuccess)
			st = cu_fail(c, GDL_BK_ERR_DEVICE, "from_resident: memset failed");
		if (st == GDL_BK_OK)
		{
			c->cnt.launches++;
			k_from_resident<<<cu_grid(t->nrows), CU_BLOCK, 0, c->stream>>>(
				s, t->nrows, rel_dout(r), flag.as<unsigned long long>());
			if (cudaGetLastError() != cudaSuccess)
				st = cu_fail(c, GDL_BK_ERR_DEVICE, "kernel launch failed (from_resident)");
		}
		if (st == GDL_BK_OK)
			st = cu_read_i64(c, flag.p, 1, &bad);
		if (st == GDL_BK_OK && bad)
			st = cu_fail(c, GDL_BK_ERR_INVALID, "from_resident: a value outside its text map");
		if (st != GDL_BK_OK)
		{
			rel_free(c, r);
			return st;
		}
	}
	*out = r;
	return GDL_BK_OK;
}
