/*
 * cu_int.cuh — internals shared by the files of the CUDA backend (the .cu files of cuda/):
 * the context, the relation layout, device views of relations, the memory
 * pool and error helpers.
 *
 * Layout.  A relation of arity 0 is a row count only (UNIT).  A relation is
 * PACKED — one uint64 key per row — when its arity is 1 (the key is the
 * value's bit pattern) or 2 with both columns known to lie in [0, 2^32)
 * (key = c0 << 32 | c1, so key order is row order).  Otherwise it is WIDE:
 * column-major int64, column c of row i at cols[c * ld + i].  Column bounds
 * [lo, hi] are conservative and inherited through every operation, so the
 * layout of a recursive predicate stays the same from round to round.
 *
 * Storage.  Relations are immutable views [off, off + n) of a refcounted
 * CuStore (or, for `full` kept as SORTED RUNS, of several: runs.cu).  A
 * store is a plain block (in pinned host memory for a run spilled under a
 * memory limit), or a HASH LOG (packed only, GDL_CUDA_FULL=hash): an
 * append-only key array plus a device hash set mapping key -> log position.
 * absorb() appends the new keys of a round to the log of `full`, so the new
 * full relation and the delta are zero-copy views of the same log, while the
 * older prefixes stay valid (the log only grows).  Membership in a view is
 * "in the hash set with a position inside the view".
 *
 * Deferred dedup.  dedup() of packed bags returns a PENDING relation (the
 * bag itself); absorb() and merge() into a hash log insert the bag as it is
 * (the hash set drops the duplicates: no sort), every other use finishes
 * the dedup first (rel_force, called by the entry points in backend.cu).
 *
 * Host syncs.  Every operation that produces rows learns its row count on
 * the host before it returns (one stream sync), so size() waits only to
 * finish a pending dedup.
 * Everything else is asynchronous on the context's own stream; device memory
 * is freed stream-ordered.
 *
 * Nothing here includes a PostgreSQL or gpudl host header: only
 * src/exec/gdl_backend.h.
 */
#ifndef CU_INT_CUH
#define CU_INT_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/gdl_backend.h"

#define CU_MAX_ARITY GDL_BK_MAX_ARITY
#define CU_EMPTY_KEY (~0ULL)	/* free slot of a device hash table */
#define CU_BLOCK 256			/* threads per block of our own kernels */
#define CU_HPIN 256			/* int64 slots of pinned host scratch */
#define CU_MAX_RUNS 40			/* most sorted runs of one set (runs.cu) */

enum CuLayout
{
	L_UNIT = 0,					/* arity 0: no data */
	L_PACKED = 1,				/* one uint64 key per row */
	L_WIDE = 2					/* column-major int64 */
};

struct CuIndex;

/* Device storage shared by relations (refcounted). */
struct CuStore
{
	int			refs;
	void	   *data;			/* packed keys or wide columns (pool memory) */
	int64_t		ld;				/* wide: rows per column */
	/*
	 * host: data is PINNED HOST memory (cudaHostAlloc, reachable from
	 * kernels through unified addressing): a cold run of `full` moved off
	 * the device under a memory limit (runs.cu); freed with cudaFreeHost,
	 * not counted in the context's device bytes
	 */
	bool		host;
	/* hash log (packed only) */
	bool		is_log;
	int64_t		lcap;			/* keys the log has room for */
	int64_t		lcount;			/* keys in the log (host copy) */
	uint64_t   *tkeys;			/* hash table: key or CU_EMPTY_KEY */
	uint32_t   *tpos;			/* hash table: log position of the key */
	uint64_t	tmask;			/* table size - 1 (a power of two) */
	unsigned long long *dcount;	/* device copy of lcount */
};

/* A relation (the backend's GdlBkRel). */
struct GdlBkRel
{
	GdlBkRel   *prev;			/* live list of the context */
	GdlBkRel   *next;
	int			arity;
	int			layout;			/* CuLayout */
	int64_t		n;				/* rows (always known on the host) */
	int64_t		off;			/* first row in the store */
	bool		is_set;			/* no duplicate rows */
	bool		sorted;			/* packed: keys ascending */
	bool		pending;		/* a dedup not done yet: a packed bag (rel_force) */
	CuStore    *st;				/* NULL when n == 0 or arity == 0 */
	struct CuIndex *indexes;	/* join indexes cached on this handle */
	/*
	 * SORTED RUNS (runs.cu): nruns > 0 makes this packed set the union of
	 * nruns disjoint sorted key arrays, run k = rows [roff[k], roff[k] +
	 * rn[k]) of store rst[k] (one reference each); st is then NULL.  Only
	 * size, download, release, difference (as B) and absorb (as full) take
	 * such a relation as it is; every other operation flattens it first
	 * (rel_flatten: one sorted array).
	 */
	int			nruns;
	CuStore    *rst[CU_MAX_RUNS];
	int64_t		roff[CU_MAX_RUNS];
	int64_t		rn[CU_MAX_RUNS];
	int64_t		lo[CU_MAX_ARITY];	/* conservative bounds; lo > hi: none */
	int64_t		hi[CU_MAX_ARITY];
};

typedef GdlBkRel CuRel;

/*
 * The counts of the last join_count, kept for the join() that usually
 * follows it on the same inputs (the engine counts before it joins, to
 * decide whether to slice): per L row the matches (cnt, n + 1), the first
 * index position (start) and the output offsets (off, n + 1).
 */
struct CuJoinCount
{
	const CuRel *L;
	const CuRel *R;
	int			nkeys;
	int			lkeys[CU_MAX_ARITY];
	int			rkeys[CU_MAX_ARITY];
	void	   *cnt;
	void	   *start;
	void	   *off;
	int64_t		total;
};

/* The backend context. */
struct CuCtx
{
	int			dev;
	cudaStream_t stream;
	cudaMemPool_t pool;
	bool		pool_ok;
	int64_t		limit;			/* memory_limit, 0 = none */
	int			(*reserve) (void *arg, int64_t bytes_after);	/* admission hook */
	void	   *reserve_arg;
	int64_t		bytes;			/* bytes held now */
	int64_t		host_bytes;		/* pinned host bytes: spilled runs (runs.cu), overflow (pool.cu) */
	int64_t		host_peak;		/* the most of them at once */
	void	   *allocs;			/* pointer -> size map (pool.cu) */
	void	   *hallocs;		/* pointer -> size map of host overflow buffers (pool.cu) */
	int			strict;			/* > 0: no host overflow (uploads must fit: pool.cu) */
	int64_t    *hpin;			/* pinned host scratch, CU_HPIN int64 */
	unsigned long long *dscratch;	/* device scratch, 64 uint64 */
	int32_t    *dranks;			/* text ranks on the device */
	int32_t		nranks;
	int			nsm;
	CuRel	   *live;
	GdlBkCounters cnt;
	int64_t		capacity;		/* device bytes free at creation (GdlBkCounters.bytes_capacity) */
	CuJoinCount jc;				/* last join_count (join.cu); jc.L NULL: none */
	char		errmsg[512];
};

/* ----------------------------------------------------- device row views */

/* A relation as kernels see it. */
struct DRel
{
	int			layout;
	int			arity;
	int64_t		n;
	int64_t		ld;
	const uint64_t *keys;
	const int64_t *cols;
};

/* Device columns (stride ld, n rows) seen as a wide relation. */
static inline DRel
cu_wide_view(int arity, const int64_t *cols, int64_t n, int64_t ld)
{
	return DRel{L_WIDE, arity, n, ld, nullptr, cols};
}

/* Where a kernel writes rows of a new relation. */
struct DOut
{
	int			layout;
	int			arity;
	int64_t		ld;
	uint64_t   *keys;
	int64_t    *cols;
};

/* Column c of row i of a relation. */
static __device__ __forceinline__ int64_t
dget(const DRel &r, int64_t i, int c)
{
	if (r.layout == L_PACKED)
	{
		uint64_t	k = r.keys[i];

		if (r.arity == 1)
			return (int64_t) k;
		return c == 0 ? (int64_t) (k >> 32) : (int64_t) (k & 0xffffffffULL);
	}
	return r.cols[(int64_t) c * r.ld + i];
}

/* Write row i of an output from its values v[0..arity). */
static __device__ __forceinline__ void
dput(const DOut &o, int64_t i, const int64_t *v)
{
	if (o.layout == L_PACKED)
	{
		if (o.arity == 1)
			o.keys[i] = (uint64_t) v[0];
		else
			o.keys[i] = ((uint64_t) v[0] << 32) | ((uint64_t) v[1] & 0xffffffffULL);
	}
	else if (o.layout == L_WIDE)
	{
		for (int c = 0; c < o.arity; c++)
			o.cols[(int64_t) c * o.ld + i] = v[c];
	}
}

/* Murmur3's 64-bit finalizer: the hash of hash tables and join keys. */
static __host__ __device__ __forceinline__ uint64_t
cu_mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

/* Blocks for a grid-stride kernel over n items. */
static inline unsigned
cu_grid(int64_t n)
{
	int64_t		b = (n + CU_BLOCK - 1) / CU_BLOCK;

	if (b < 1)
		b = 1;
	if (b > 65535 * 8)
		b = 65535 * 8;
	return (unsigned) b;
}

/* Significant bits of a non-negative bound (0 for 0). */
static inline int
cu_bits(uint64_t v)
{
	int			b = 0;

	while (v)
	{
		b++;
		v >>= 1;
	}
	return b;
}

/* ---------------------------------------------------- errors (backend.cu) */

extern int	cu_fail(CuCtx *c, int status, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));
extern int	cu_err(CuCtx *c, cudaError_t e, const char *what);

/* Return from the calling function when a CUDA call fails. */
#define CU_TRY(c, call) \
	do { cudaError_t e_ = (call); \
		 if (e_ != cudaSuccess) return cu_err((c), e_, #call); } while (0)

/* Return when a backend call fails. */
#define CU_OK(expr) \
	do { int s_ = (expr); if (s_ != GDL_BK_OK) return s_; } while (0)

/* Check that the last kernel launch was accepted. */
#define CU_LAUNCHED(c) CU_TRY((c), cudaGetLastError())

/* ------------------------------------------------------------- pool.cu */

extern int	pool_init(CuCtx *c);
extern int	pool_get(CuCtx *c, size_t bytes, void **out);
extern void pool_put(CuCtx *c, void *p);
extern size_t pool_size(CuCtx *c, const void *p);
extern bool pool_on_host(CuCtx *c, const void *p);
extern bool cu_pin_take(int64_t bytes);
extern void cu_pin_give(int64_t bytes);
extern int64_t *cu_hpin_take(void);
extern void cu_hpin_give(int64_t *p);
extern void pool_release_all(CuCtx *c);
extern int	cu_read_i64(CuCtx *c, const void *dptr, int n, int64_t *out);
extern int	cu_sync(CuCtx *c);

/* A pool buffer freed (stream-ordered) when it goes out of scope. */
struct DBuf
{
	CuCtx	   *c = nullptr;
	void	   *p = nullptr;

	DBuf() = default;
	DBuf(const DBuf &) = delete;
	DBuf &operator=(const DBuf &) = delete;
	~DBuf()
	{
		if (p)
			pool_put(c, p);
	}
	/* Allocate bytes (frees what it held). */
	int			get(CuCtx *ctx, size_t bytes)
	{
		if (p)
			pool_put(c, p);
		c = ctx;
		p = nullptr;
		return pool_get(ctx, bytes, &p);
	}
	/* Give up ownership. */
	void	   *take()
	{
		void	   *q = p;

		p = nullptr;
		return q;
	}
	template < class T > T *as() const
	{
		return (T *) p;
	}
};

/* Run a CUB algorithm twice: size query, then with pool temp storage. */
template < class F >
static int
cu_cub(CuCtx *c, F &&f)
{
	size_t		bytes = 0;
	DBuf		tmp;

	CU_TRY(c, f(nullptr, bytes));
	CU_OK(tmp.get(c, bytes ? bytes : 16));
	CU_TRY(c, f(tmp.p, bytes));
	c->cnt.library_calls++;
	return GDL_BK_OK;
}

/* -------------------------------------------------------------- rel.cu */

extern int	rel_new(CuCtx *c, int arity, int layout, int64_t n, CuRel **out);
extern int	rel_new_bounded(CuCtx *c, int arity, int64_t n, const int64_t *lo, const int64_t *hi,
							CuRel **out);
extern int	rel_view(CuCtx *c, CuStore *st, int arity, int64_t off, int64_t n, CuRel **out);
extern void rel_free(CuCtx *c, CuRel *r);
extern void store_unref(CuCtx *c, CuStore *st);
extern DRel rel_drel(const CuRel *r);
extern DOut rel_dout(CuRel *r);
extern const uint64_t *rel_keys(const CuRel *r);
extern bool cu_packable(int arity, const int64_t *lo, const int64_t *hi);
extern void bounds_empty(int arity, int64_t *lo, int64_t *hi);
extern void bounds_union(int arity, int64_t *lo, int64_t *hi, const int64_t *lo2, const int64_t *hi2);
extern void bounds_copy(CuRel *dst, const CuRel *src);
extern void rel_mark_union(CuRel *r, const CuRel *A, const CuRel *B);
extern int	key_end_bit(int arity, const int64_t *lo, const int64_t *hi);
extern int	rel_adopt(CuCtx *c, int arity, int layout, int64_t n, void *data, CuRel **out);
extern int	rel_copy_wide(CuCtx *c, const CuRel *r, int64_t *dst, int64_t ld, int64_t row0);
extern int	rel_from_wide(CuCtx *c, int arity, const int64_t *cols, int64_t ld, int64_t n,
						  const int64_t *lo, const int64_t *hi, CuRel **out);
extern int	rel_gather(CuCtx *c, const CuRel *src, const uint32_t *ids, int64_t m, CuRel **out);
extern int	rel_share(CuCtx *c, const CuRel *src, CuRel **out);
extern int	rel_unit(CuCtx *c, int64_t n, CuRel **out);
extern int	rel_force(CuCtx *c, CuRel *r);

/* ------------------------------------------------------------- sort.cu */

extern int	sort_keys(CuCtx *c, DBuf &keys, DBuf &alt, int64_t n, int end_bit);
extern int	unique_keys(CuCtx *c, const uint64_t *in, uint64_t *out, int64_t n, int64_t *m);
extern int	unique_keys_inplace(CuCtx *c, uint64_t *keys, int64_t n, int64_t *m);
extern int	select_keys_flagged(CuCtx *c, const uint64_t *in, const uint8_t *flags, int64_t n,
								uint64_t *out, int64_t *m);
extern int	sort_perm(CuCtx *c, const DRel &r, int ncols, const int *cols,
					  const int64_t *lo, const int64_t *hi, DBuf &perm);
extern int	select_flagged(CuCtx *c, const uint8_t *flags, int64_t n, DBuf &ids, int64_t *m);
extern int	exclusive_scan(CuCtx *c, const int64_t *in, int64_t *out, int64_t n);
extern int	merge_keys(CuCtx *c, const uint64_t *a, int64_t na, const uint64_t *b, int64_t nb,
					   uint64_t *out);

/* ------------------------------------------------------------- hash.cu */

extern bool hlog_usable(const CuRel *r);
extern bool hlog_is_tip(const CuRel *r);
extern int	hlog_tip(CuCtx *c, CuRel *full, int64_t extra, CuStore **out);
extern int	hlog_insert(CuCtx *c, CuStore *st, const CuRel *src, bool may_dup);
extern int	hlog_flag_absent(CuCtx *c, const CuRel *set, const uint64_t *q, int64_t m, uint8_t *flags);

/* ------------------------------------------------------------- runs.cu */

extern bool runs_enabled(void);
extern int	rel_flatten(CuCtx *c, CuRel *r);
extern int	runs_flag_absent(CuCtx *c, const CuRel *set, const uint64_t *q, int64_t m,
							 bool q_sorted, uint8_t *flags);
extern int	runs_absorb(CuCtx *c, CuRel *full, CuRel *cand, CuRel **new_full, CuRel **delta);
extern int	runs_download(CuCtx *c, const CuRel *r, uint64_t *dst);
extern int	runs_union_host(CuCtx *c, CuRel *A, CuRel *B, bool disjoint, CuRel **out);

/* --------------------------------------------------------- resident.cu */

extern void *cu_resident_create(int ncols, int64_t nrows, const int64_t *const *cols,
								int64_t *bytes, const char **errmsg);
extern void cu_resident_free(void *res);
extern int	cu_op_from_resident(CuCtx *c, void *res, int ncols, const int *colidx,
								const int32_t *const *remap, const int32_t *remap_len,
								CuRel **out);

/* ---------------------------------------------------- the operations */

extern int	cu_op_dedup(CuCtx *c, int nin, GdlBkRel *const *in, GdlBkRel **result);
extern int	cu_op_difference(CuCtx *c, CuRel *A, CuRel *B, CuRel **result);
extern int	cu_op_merge(CuCtx *c, CuRel *A, CuRel *B, CuRel **result);
extern int	cu_op_absorb(CuCtx *c, CuRel *full, CuRel *cand, CuRel **new_full, CuRel **delta);
extern int	cu_op_join(CuCtx *c, CuRel *L, CuRel *R, int nkeys, const int *lkeys,
					   const int *rkeys, int nout, const GdlBkColRef *out, CuRel **result);
extern int	cu_op_antijoin(CuCtx *c, CuRel *L, CuRel *R, int nkeys, const int *lkeys,
						   const int *rkeys, CuRel **result);
extern void index_free_all(CuCtx *c, CuRel *r);
extern int	cu_op_join_count(CuCtx *c, CuRel *L, CuRel *R, int nkeys, const int *lkeys,
							 const int *rkeys, int64_t *count);
extern void join_count_forget(CuCtx *c, const CuRel *r);
extern int	cu_op_slice(CuCtx *c, CuRel *rel, int64_t from, int64_t to, CuRel **result);
extern int	cu_op_map(CuCtx *c, CuRel *in, int nfilter, const GdlBkExpr *filter,
					  int nout, const GdlBkExpr *out, CuRel **result);
extern int	cu_op_aggregate(CuCtx *c, CuRel *in, int ngroup, const int *group,
							int nagg, const GdlBkAgg *aggs, CuRel **result);

#endif							/* CU_INT_CUH */
