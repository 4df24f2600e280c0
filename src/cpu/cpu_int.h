/*
 * cpu_int.h — internals of the CPU backend (src/cpu): the relation layout,
 * packed-key schemas, join indexes and the helpers the cpu_*.c files share.
 *
 * Layout.  A relation is either PACKED — one uint64 key per row, the columns
 * bit-packed after subtracting a base (col 0 most significant, so key order
 * is lexicographic row order) — or WIDE — one int64 array per column.  A
 * relation is packed whenever its column bounds fit in 64 bits together,
 * which covers the hot binary relations of graph programs (two 32-bit ids)
 * and most ternary ones.  Bounds are CONSERVATIVE (a superset of the values)
 * and inherited through joins, projections and set operations, so the
 * schema of a recursive predicate stays the same from round to round and
 * set operations between its full, delta and new relations work on keys
 * directly.
 *
 * Every buffer is allocated with gdl_alloc on the main thread; worker threads
 * (gdl_parallel) only read and write buffers handed to them.
 */
#ifndef CPU_INT_H
#define CPU_INT_H

#include <string.h>

#include "../core/gdl_host.h"
#include "../exec/gdl_backend.h"
#include "../exec/gdl_engine.h"

#define CPU_MAX_ARITY GDL_BK_MAX_ARITY
#define CPU_MAX_THREADS GDL_MAX_THREADS

/* How the columns of a packed relation sit in its keys. */
typedef struct CpuSchema
{
	int			arity;
	int64_t		base[CPU_MAX_ARITY];
	uint8_t		bits[CPU_MAX_ARITY];
	uint8_t		shift[CPU_MAX_ARITY];
} CpuSchema;

typedef struct CpuIndex CpuIndex;
typedef struct CpuCtx CpuCtx;

/*
 * A sorted run of keys shared by relations (reference counted).  The full
 * relation of a recursive predicate is kept as a few disjoint runs of
 * geometrically decreasing size (a log-structured set): absorbing a round's
 * delta appends it as a run and merges only runs of similar size, instead
 * of rewriting the whole relation every round.
 */
typedef struct CpuRun
{
	uint64_t   *keys;
	int64_t		n;
	int64_t		cap;			/* bytes */
	int			refs;
} CpuRun;

#define CPU_MAX_RUNS 32

/* A relation (the backend's GdlBkRel). */
struct GdlBkRel
{
	struct GdlBkRel *prev;		/* live list of the context */
	struct GdlBkRel *next;
	int			arity;
	int64_t		n;
	bool		packed;
	bool		is_set;			/* sorted (lexicographically) and unique */
	int			sorted_cols;	/* rows non-decreasing on this many leading cols */
	uint64_t   *keys;			/* packed: n keys */
	int64_t    *cols[CPU_MAX_ARITY];	/* wide: arity columns */
	int64_t		lo[CPU_MAX_ARITY];	/* conservative bounds; lo > hi: no values */
	int64_t		hi[CPU_MAX_ARITY];
	CpuSchema	sch;			/* packed only */
	CpuIndex   *indexes;		/* join indexes cached on this handle */
	int64_t		bytes;			/* bytes of keys/cols/indexes, for accounting */
	int64_t		kcap;			/* bytes allocated for keys (0 when they belong to runs) */
	/*
	 * Packed sets may be made of runs: then keys aliases runs[0]->keys when
	 * there is one run, and is NULL (cpu_rel_flatten first) when several.
	 */
	int			nruns;
	CpuRun	   *runs[CPU_MAX_RUNS];
	int64_t		ccap[CPU_MAX_ARITY];	/* bytes allocated per column */
};

typedef struct GdlBkRel CpuRel;

#define CPU_POOL_MAX 16
#define CPU_POOL_MIN_BYTES (256 * 1024)

/* A freed big buffer kept for reuse (its pages stay mapped: no page faults). */
typedef struct CpuBuf
{
	void	   *p;
	int64_t		bytes;
} CpuBuf;

/* The backend context. */
struct CpuCtx
{
	CpuBuf		pool[CPU_POOL_MAX];
	int			npool;
	int64_t		pool_bytes;
	int			nthreads;
	CpuRel	   *live;			/* every relation not yet released */
	int32_t    *ranks;
	int32_t		nranks;
	int64_t		bytes;			/* bytes held by relations now */
	int64_t		peak_bytes;
	int64_t		limit;			/* GdlBkConfig.memory_limit: a target, 0 = none */
	char		errmsg[256];
};

/*
 * A join index over some key columns of a relation: its rows grouped by key.
 * The key columns are encoded into one 64-bit "join key": exactly (packed
 * after subtracting the column minimums) when they fit, else a hash, in
 * which case a probe verifies the key values of every candidate row.
 */
struct CpuIndex
{
	CpuIndex   *next;
	int			nkeys;
	int			keys[CPU_MAX_ARITY];
	bool		hashed;			/* join key is a hash: verify candidates */
	int64_t		klo[CPU_MAX_ARITY];	/* exact: per key column min, max, shift */
	int64_t		khi[CPU_MAX_ARITY];
	uint8_t		kshift[CPU_MAX_ARITY];
	/* direct addressing: rows of join key k are perm[off[k] .. off[k+1]) */
	bool		direct;
	int64_t		ndirect;
	int64_t    *off;
	/* hash mode: open addressing over distinct join keys */
	uint64_t	hmask;
	uint64_t   *hkey;
	int64_t    *hstart;			/* -1: empty slot */
	int64_t    *hend;
	int64_t    *perm;			/* row ids in join key order; NULL = identity */
	int64_t		bytes;
};

/* ------------------------------------------------------------ cpu_rel.c */

extern CpuRel *cpu_rel_new(CpuCtx *ctx, int arity);
extern void cpu_rel_free(CpuCtx *ctx, CpuRel *r);
extern void cpu_rel_alloc_keys(CpuCtx *ctx, CpuRel *r, int64_t n);
extern void cpu_rel_alloc_cols(CpuCtx *ctx, CpuRel *r, int64_t n);
extern void cpu_rel_shrink(CpuCtx *ctx, CpuRel *r, int64_t n);
extern void cpu_bounds_empty(int arity, int64_t *lo, int64_t *hi);
extern void cpu_bounds_union(int arity, int64_t *lo, int64_t *hi,
							 const int64_t *lo2, const int64_t *hi2);
extern bool cpu_schema_make(int arity, const int64_t *lo, const int64_t *hi, CpuSchema *s);
extern bool cpu_schema_compatible(const CpuSchema *a, const CpuSchema *b);
extern void *cpu_buf_get(CpuCtx *ctx, int64_t bytes, int64_t *cap);
extern void cpu_buf_put(CpuCtx *ctx, void *p, int64_t cap);
extern void cpu_pool_free_all(CpuCtx *ctx);
extern CpuRel *cpu_rel_from_cols(CpuCtx *ctx, int arity, int64_t n, int64_t **cols,
								 const int64_t *caps, const int64_t *lo, const int64_t *hi);
extern CpuRel *cpu_rel_repack(CpuCtx *ctx, const CpuRel *r, const CpuSchema *s);
extern CpuRel *cpu_rel_widen(CpuCtx *ctx, const CpuRel *r);
extern CpuRel *cpu_rel_like(CpuCtx *ctx, const CpuRel *r, int64_t n);
extern CpuRun *cpu_run_new(CpuCtx *ctx, int64_t n);
extern void cpu_run_unref(CpuCtx *ctx, CpuRun *run);
extern void cpu_rel_flatten(CpuCtx *ctx, CpuRel *r);
extern void cpu_rel_decode_col(const CpuRel *r, int c, int64_t from, int64_t n, int64_t *out);

/* Value of column c of row i. */
static inline int64_t
cpu_get(const CpuRel *r, int64_t i, int c)
{
	if (r->packed)
	{
		const CpuSchema *s = &r->sch;

		if (s->bits[c] == 0)
			return s->base[c];
		return (int64_t) (((r->keys[i] >> s->shift[c]) &
						   (s->bits[c] == 64 ? ~UINT64_C(0) : ((UINT64_C(1) << s->bits[c]) - 1)))
						  + (uint64_t) s->base[c]);
	}
	return r->cols[c][i];
}

/* Encode one column value into its place in a key. */
static inline uint64_t
cpu_enc(const CpuSchema *s, int c, int64_t v)
{
	if (s->bits[c] == 0)
		return 0;
	return ((uint64_t) v - (uint64_t) s->base[c]) << s->shift[c];
}

/* --------------------------------------------------------- cpu_sort.c */

extern uint64_t *cpu_sort_u64(CpuCtx *ctx, uint64_t *a, uint64_t *tmp, int64_t n);
extern void cpu_sort_u64_seq(uint64_t *a, uint64_t *tmp, int64_t n, int lowbit, int highbit);
extern int64_t cpu_sort_unique_segments(CpuCtx *ctx, const uint64_t *src, uint64_t *dst, int64_t n,
										int segshift);
extern void cpu_sort_pairs(uint64_t *k, int64_t *v, uint64_t *tk, int64_t *tv, int64_t n);
extern int64_t *cpu_sort_perm_cols(CpuCtx *ctx, const CpuRel *r, int ncols, const int *cols);
extern int64_t cpu_unique_u64(CpuCtx *ctx, uint64_t *a, int64_t n);

/* ---------------------------------------------------------- cpu_set.c */

extern int	cpu_op_dedup(void *ctx, int nin, GdlBkRel *const *in, GdlBkRel **result);
extern int	cpu_op_difference(void *ctx, GdlBkRel *A, GdlBkRel *B, GdlBkRel **result);
extern int	cpu_op_merge(void *ctx, GdlBkRel *A, GdlBkRel *B, GdlBkRel **result);
extern int	cpu_op_absorb(void *ctx, GdlBkRel *full, GdlBkRel *cand,
						  GdlBkRel **new_full, GdlBkRel **delta);
extern int	cpu_row_cmp(const CpuRel *a, int64_t i, const CpuRel *b, int64_t j);

/* --------------------------------------------------------- cpu_join.c */

extern CpuIndex *cpu_index_get(CpuCtx *ctx, CpuRel *r, int nkeys, const int *keys);
extern void cpu_index_free_all(CpuCtx *ctx, CpuRel *r);
extern int	cpu_op_join(void *ctx, GdlBkRel *L, GdlBkRel *R, int nkeys, const int *lkeys,
						const int *rkeys, int nout, const GdlBkColRef *out, GdlBkRel **result);
extern int	cpu_op_join_count(void *ctx, GdlBkRel *L, GdlBkRel *R, int nkeys,
							  const int *lkeys, const int *rkeys, int64_t *count);
extern int	cpu_op_antijoin(void *ctx, GdlBkRel *L, GdlBkRel *R, int nkeys,
							const int *lkeys, const int *rkeys, GdlBkRel **result);

/* --------------------------------------------------------- cpu_expr.c */

extern int	cpu_op_map(void *ctx, GdlBkRel *in, int nfilter, const GdlBkExpr *filter,
					   int nout, const GdlBkExpr *out, GdlBkRel **result);

/* ---------------------------------------------------------- cpu_agg.c */

extern int	cpu_op_aggregate(void *ctx, GdlBkRel *in, int ngroup, const int *group,
							 int nagg, const GdlBkAgg *aggs, GdlBkRel **result);

/* ------------------------------------------------------ cpu_backend.c */

extern int	cpu_fail(CpuCtx *ctx, int status, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));
extern void cpu_account(CpuCtx *ctx, int64_t delta_bytes);


/* A float8's bit pattern as stored in an int64 slot, and back. */
static inline double
as_f(int64_t v)
{
	double		d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

static inline int64_t
as_i(double d)
{
	int64_t		v;

	memcpy(&v, &d, sizeof(v));
	return v;
}

#endif							/* CPU_INT_H */
