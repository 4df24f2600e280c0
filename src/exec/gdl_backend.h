/*
 * gdl_backend.h — the interface between the engine and a backend.
 *
 * A backend implements a small set of BULK COLUMNAR operations on relations
 * it owns.  The engine (src/exec) drives a whole fixpoint through these
 * operations only; it reads nothing back but sizes, until the final answer is
 * downloaded.  Two backends implement it: the CPU backend (src/cpu, linked
 * into the core) and the CUDA backend (cuda/, a separate shared library loaded
 * with dlopen).  This header is self-contained plain C: it includes no other
 * gpudl header, so a backend can be written from it alone.
 *
 * Values.  Every value is an int64_t.  The engine encodes integers as
 * themselves, bool as 0/1, float8 bit-cast (memcpy of the double), and text
 * as dense 32-bit dictionary ids (>= 0).  A backend only needs to know a
 * value's type where an operation says so (float arithmetic/comparison,
 * text ordering through the rank table).
 *
 * Relations.  A GdlBkRel is an opaque handle to a relation of fixed arity
 * (0 to GDL_BK_MAX_ARITY columns) and nrows rows.  Relations are IMMUTABLE:
 * every operation creates a new relation and never changes its inputs, so a
 * backend may cache derived data (indexes, sorted copies) on a handle for its
 * whole life.  An arity-0 relation has rows but no columns (the "unit"
 * relation with one row is the start of a rule with an empty body).  The
 * backend chooses the layout (the CPU backend packs rows whose values fit
 * into one uint64 key, the CUDA one may do the same on the device).
 *
 * A relation is a BAG unless it is a SET: the results of dedup, difference,
 * merge and absorb are sets (no duplicate rows).  difference, merge and absorb
 * take only sets as inputs; the engine guarantees it.  Row order is not part
 * of any contract.
 *
 * Errors.  A backend cannot raise host errors (the CUDA module sees no host
 * interface).  Every operation returns GDL_BK_OK or an error status, leaves
 * its outputs unset (NULL) on error and keeps its inputs valid; last_error()
 * then gives a message the engine raises.  Out of host memory inside the CPU
 * backend is raised by the host allocator directly (it is linked into the
 * core).
 *
 * Threads.  Every entry point is called from the host's main thread, one at
 * a time, for one context.  A backend may use worker threads inside an
 * operation (the CPU backend does) but must join them before returning.
 */
#ifndef GDL_BACKEND_H
#define GDL_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Version of this interface; a loaded module must report the same. */
#define GDL_BACKEND_ABI 3

/* Largest arity of a relation (and number of expressions of a map). */
#define GDL_BK_MAX_ARITY 64

/* Deepest evaluation stack a GdlBkExpr may need. */
#define GDL_BK_MAX_STACK 32

/* Opaque relation handle, owned by the backend context that created it. */
typedef struct GdlBkRel GdlBkRel;

/* Result of every operation. */
typedef enum GdlBkStatus
{
	GDL_BK_OK = 0,
	GDL_BK_ERR_DIV_ZERO,		/* integer or float division/modulo by zero */
	GDL_BK_ERR_OVERFLOW,		/* int64 overflow in arithmetic or sum */
	GDL_BK_ERR_NO_MEMORY,		/* device (or backend) memory exhausted */
	GDL_BK_ERR_DEVICE,			/* driver/device failure */
	GDL_BK_ERR_INVALID			/* bad arguments: an engine bug */
} GdlBkStatus;

/* Settings of a backend context. */
typedef struct GdlBkConfig
{
	int			nthreads;		/* CPU worker threads; 0 = backend's choice */
	/*
	 * Bytes the context may hold; 0 = no limit.  A device backend refuses
	 * growth past it (GDL_BK_ERR_NO_MEMORY); the CPU backend, whose memory
	 * the host limits, takes it as a target (it merges runs of a set and
	 * keeps idle buffers only while that stays under it).  The engine sizes
	 * its join slices from it (exec_mem.c).
	 */
	int64_t		memory_limit;

	/*
	 * Optional admission hook (NULL: none).  A device backend calls it before
	 * it grows the memory it holds, with the bytes it would hold afterwards;
	 * a non-zero return refuses the growth (the operation then fails with
	 * GDL_BK_ERR_NO_MEMORY and a message that starts "device busy").  The
	 * GPU service uses it to keep every run of the cluster inside one budget.
	 * May be called from any thread that runs the context's operations.
	 */
	int			(*reserve) (void *arg, int64_t bytes_after);
	void	   *reserve_arg;

	/*
	 * Scheduling hint: > 0 asks a device backend to run this context's work
	 * before others' (a high-priority stream), so that a short query sharing
	 * the device with long ones is not held behind their kernels.
	 */
	int			priority;
} GdlBkConfig;

/* Counters a backend keeps per context (all optional, 0 when unknown). */
typedef struct GdlBkCounters
{
	int64_t		bytes_to_device;
	int64_t		bytes_from_device;
	int64_t		transfers;
	int64_t		peak_bytes;		/* most bytes held at once */
	int64_t		launches;		/* device kernels the backend launched itself */
	int64_t		library_calls;	/* device library algorithms run (CUB: 1-4 kernels each) */

	/*
	 * Memory accounting for the engine's slicing (exec_mem.c), added last so
	 * older readers of the struct are unaffected: the bytes the context
	 * holds NOW (idle pooled buffers included, as they count against the
	 * limit), and the most it may hold (its memory_limit, or for a device
	 * without one what the device had free at context creation; 0 =
	 * unknown).
	 */
	int64_t		bytes_held;
	int64_t		bytes_capacity;
} GdlBkCounters;

/* ---------------------------------------------------------- expressions */

/*
 * A tiny stack bytecode, evaluated per row.  Every slot is an int64_t.
 * Integer ops (ADD..NEG) are checked: overflow gives GDL_BK_ERR_OVERFLOW,
 * DIV/MOD by zero GDL_BK_ERR_DIV_ZERO.  DIV truncates toward zero and MOD
 * takes the sign of the dividend (C and PostgreSQL semantics);
 * INT64_MIN / -1 overflows, INT64_MIN % -1 is 0.  F* ops treat slots as
 * bit-cast doubles; FDIV by 0.0 gives GDL_BK_ERR_DIV_ZERO.  Comparisons push
 * 1 or 0.  RANK replaces a text id by its rank (the table given to
 * set_text_ranks; an id outside it is GDL_BK_ERR_INVALID).
 */
typedef enum GdlBkOp
{
	GDL_BC_COL,					/* push column 'arg' of the input row */
	GDL_BC_CONST,				/* push 'imm' */
	GDL_BC_ADD,					/* pop b, pop a, push a + b */
	GDL_BC_SUB,					/* a - b */
	GDL_BC_MUL,					/* a * b */
	GDL_BC_DIV,					/* a / b */
	GDL_BC_MOD,					/* a % b */
	GDL_BC_NEG,					/* pop a, push -a */
	GDL_BC_FADD,				/* float8 a + b */
	GDL_BC_FSUB,
	GDL_BC_FMUL,
	GDL_BC_FDIV,
	GDL_BC_FNEG,
	GDL_BC_I2F,					/* pop int a, push (double) a */
	GDL_BC_EQ,					/* int64 a == b */
	GDL_BC_NE,
	GDL_BC_LT,
	GDL_BC_LE,
	GDL_BC_GT,
	GDL_BC_GE,
	GDL_BC_FEQ,					/* float8 comparisons */
	GDL_BC_FNE,
	GDL_BC_FLT,
	GDL_BC_FLE,
	GDL_BC_FGT,
	GDL_BC_FGE,
	GDL_BC_RANK,				/* pop text id, push its rank */
	GDL_BC_NOP					/* no effect */
} GdlBkOp;

typedef struct GdlBkInsn
{
	int32_t		op;				/* GdlBkOp */
	int32_t		arg;			/* COL: column number */
	int64_t		imm;			/* CONST: the value */
} GdlBkInsn;

/* One expression: leaves exactly one value on the stack. */
typedef struct GdlBkExpr
{
	int			ncode;
	const GdlBkInsn *code;
} GdlBkExpr;

/* ----------------------------------------------------------- other specs */

/* An output column of a join: column 'col' of the left (side 0) or right (1) input. */
typedef struct GdlBkColRef
{
	int			side;
	int			col;
} GdlBkColRef;

typedef enum GdlBkAggKind
{
	GDL_BK_AGG_COUNT,			/* rows of the group (bigint) */
	GDL_BK_AGG_SUM,				/* checked int64 sum, or float8 sum */
	GDL_BK_AGG_MIN,
	GDL_BK_AGG_MAX
} GdlBkAggKind;

/* How aggregate values compare and add. */
typedef enum GdlBkValKind
{
	GDL_BK_VAL_INT,				/* int64 (also bool) */
	GDL_BK_VAL_FLOAT,			/* bit-cast float8 */
	GDL_BK_VAL_TEXT				/* text id; min/max by rank (set_text_ranks) */
} GdlBkValKind;

typedef struct GdlBkAgg
{
	int			kind;			/* GdlBkAggKind */
	int			valkind;		/* GdlBkValKind */
	int			col;			/* input column; ignored by COUNT */
} GdlBkAgg;

/* ------------------------------------------------------------ interface */

/*
 * How the engine drives a backend, per semi-naive round of a recursive
 * stratum: for each rule version, a chain of join / map / antijoin on the
 * delta and full relations (join_count + slice first when a join's output
 * would pass the engine's batch size), then per predicate dedup of what the
 * rules derived and absorb (or difference + merge) into full; size() of the
 * new delta decides whether another round runs.  Relations it no longer
 * needs are released at once.  Required: everything except counters,
 * absorb, slice, join_count and the three resident-table members, which may
 * be NULL.  New members are only ever added at the end.
 */

typedef struct GdlBackend
{
	int			abi;			/* GDL_BACKEND_ABI */
	const char *name;			/* "cpu", "cuda" */

	/*
	 * Create a context (one per evaluation).  NULL on failure, with a
	 * message in *errmsg (static storage) when errmsg is not NULL.
	 */
	void	   *(*ctx_create) (const GdlBkConfig *cfg, const char **errmsg);

	/* Release a context and every relation still alive in it. */
	void		(*ctx_destroy) (void *ctx);

	/*
	 * Called instead of ctx_destroy after the host raised an error in the
	 * middle of an evaluation (the host's memory is already being freed):
	 * release resources the host does not own (device memory, streams).
	 * Must not touch host memory.  The context is dead afterwards.
	 */
	void		(*ctx_abort) (void *ctx);

	/* Message of the last failed operation (never NULL). */
	const char *(*last_error) (void *ctx);

	/* Fill counters (may be NULL). */
	void		(*counters) (void *ctx, GdlBkCounters *out);

	/*
	 * Rank of every text id, in byte order of the strings: ranks[id] for
	 * 0 <= id < n.  Copied.  Used by GDL_BC_RANK and text min/max.
	 */
	int			(*set_text_ranks) (void *ctx, const int32_t *ranks, int32_t n);

	/*
	 * A bag from host columns: ncols arrays of nrows values, copied during the
	 * call.  nrows may be 0 (cols may then be NULL); ncols 0 with nrows n
	 * makes n empty rows.  The result is a SET when it has no rows (the
	 * engine starts fixpoints from such empty sets).
	 */
	int			(*upload) (void *ctx, int ncols, int64_t nrows,
						   const int64_t *const *cols, GdlBkRel **out);

	/*
	 * Copy a relation into host columns: cols[c] has room for size() values;
	 * the engine ends the array with a NULL (so a proxy knows the arity).
	 */
	int			(*download) (void *ctx, GdlBkRel *rel, int64_t *const *cols);

	/* Number of rows (a host round trip on a device). */
	int			(*size) (void *ctx, GdlBkRel *rel, int64_t *nrows);

	/* Free a relation (NULL is ignored). */
	void		(*release) (void *ctx, GdlBkRel *rel);

	/*
	 * Equi-join, a bag: for every pair (l, r) of rows of L and R with
	 * L[l][lkeys[k]] == R[r][rkeys[k]] for all k < nkeys, one row whose
	 * column j is (out[j].side == 0 ? L[l][out[j].col] : R[r][out[j].col]).
	 * nkeys 0 is the cross product.  nout may be 0 (then the result has as
	 * many empty rows as matches).  The engine passes the growing
	 * intermediate as L and the atom's relation as R: R is usually the one
	 * reused across rounds (worth an index cached on its handle).
	 */
	int			(*join) (void *ctx, GdlBkRel *L, GdlBkRel *R,
						 int nkeys, const int *lkeys, const int *rkeys,
						 int nout, const GdlBkColRef *out, GdlBkRel **result);

	/*
	 * Anti-join, a bag with L's columns: the rows of L for which NO row of R
	 * has R[r][rkeys[k]] == L[l][lkeys[k]] for all k < nkeys.  With nkeys 0:
	 * all of L when R is empty, else nothing.
	 */
	int			(*antijoin) (void *ctx, GdlBkRel *L, GdlBkRel *R,
							 int nkeys, const int *lkeys, const int *rkeys,
							 GdlBkRel **result);

	/*
	 * Filter and compute, a bag: for each input row, evaluate filter[0],
	 * filter[1], ... in order, dropping the row at the first that gives 0
	 * (a later filter and the outputs are NEVER evaluated on a dropped row:
	 * "X != 0, Y = 10 / X" must not divide by zero).  For a kept row, output
	 * column j is the value of out[j].  nfilter and nout may be 0.
	 */
	int			(*map) (void *ctx, GdlBkRel *in,
						int nfilter, const GdlBkExpr *filter,
						int nout, const GdlBkExpr *out, GdlBkRel **result);

	/*
	 * Sort + unique: the SET of rows of the union of nin >= 1 relations of
	 * equal arity.
	 */
	int			(*dedup) (void *ctx, int nin, GdlBkRel *const *in, GdlBkRel **result);

	/* SET A minus SET B (equal arity). */
	int			(*difference) (void *ctx, GdlBkRel *A, GdlBkRel *B, GdlBkRel **result);

	/* Union of SETS A and B (equal arity; usually disjoint). */
	int			(*merge) (void *ctx, GdlBkRel *A, GdlBkRel *B, GdlBkRel **result);

	/*
	 * Optional (may be NULL; then the engine uses difference + merge): the
	 * semi-naive step in one pass.  full and cand are sets;
	 * *delta = cand \ full, *new_full = full U cand.
	 */
	int			(*absorb) (void *ctx, GdlBkRel *full, GdlBkRel *cand,
						   GdlBkRel **new_full, GdlBkRel **delta);

	/*
	 * Group by + aggregates, a set: one row per distinct value of the group
	 * columns 'group[0..ngroup)' of 'in' (a bag: every row counts), with
	 * columns group values then one value per aggs[k].  COUNT gives int64;
	 * SUM int64 (checked) or float8 per valkind; MIN/MAX the extreme value
	 * (text by rank).  No input row gives no output row, also when ngroup is
	 * 0.
	 */
	int			(*aggregate) (void *ctx, GdlBkRel *in, int ngroup, const int *group,
							  int nagg, const GdlBkAgg *aggs, GdlBkRel **result);

	/*
	 * Rows [from, to) of a relation, in its (fixed, backend-defined) row
	 * order: slices of one relation partition it.  A slice of a set is a
	 * set.  Optional (NULL, or join_count NULL: the engine never splits);
	 * near the end of the struct so that backends written before it
	 * (positional initializers) leave it NULL.  The engine uses it to run a
	 * join whose output would be too big over pieces of its left input.
	 */
	int			(*slice) (void *ctx, GdlBkRel *rel, int64_t from, int64_t to,
						  GdlBkRel **result);

	/*
	 * Optional (may be NULL; last so that positional initializers written
	 * before it leave it NULL): the number of rows join() would produce for
	 * these inputs, without producing them.  The engine uses it to split a
	 * join whose output would not fit in memory (with slice()).
	 */
	int			(*join_count) (void *ctx, GdlBkRel *L, GdlBkRel *R,
							   int nkeys, const int *lkeys, const int *rkeys,
							   int64_t *count);

	/*
	 * Optional, all three or none (gpudl_load on a device): a RESIDENT table,
	 * ncols columns of nrows values copied once into the backend's memory
	 * and kept there, outside any context, until resident_free.  Called from
	 * the host's main thread between runs.  NULL on failure, with a message
	 * in *errmsg (static storage).  *bytes is what it holds.
	 */
	void	   *(*resident_create) (int ncols, int64_t nrows, const int64_t *const *cols,
									int64_t *bytes, const char **errmsg);
	void		(*resident_free) (void *res);

	/*
	 * A bag in a context from a resident table, without moving its rows:
	 * output column j is resident column colidx[j], each value v mapped to
	 * remap[j][v] when remap[j] is not NULL (then 0 <= v < remap_len[j]:
	 * text ids of the table's dictionary -> the run's).  The relation may
	 * share the resident's memory; it stays valid while the resident lives.
	 */
	int			(*from_resident) (void *ctx, void *res, int ncols, const int *colidx,
								  const int32_t *const *remap, const int32_t *remap_len,
								  GdlBkRel **out);

	/*
	 * Optional, both or none (issue 14, several GPUs of one host; NULL on a
	 * backend of one device): how many devices the backend can use, and
	 * make device 'device' (0 <= device < device_count()) current for the
	 * calling thread, so that the next ctx_create makes its context there
	 * and operations on a context made there run there.  The partitioned
	 * driver (exec_part.c) selects a partition's device before it works on
	 * the partition.  0 on success.
	 */
	int			(*device_count) (void);
	int			(*select_device) (int device);

	/*
	 * Optional (may be NULL): the rows of 'rel' when they are known without
	 * any work (a relation whose dedup is still deferred is not), else -1.
	 * The GPU service sends them back with every result, so that a session
	 * asks the size of a relation without a round trip of its own.
	 */
	int64_t		(*size_known) (void *ctx, GdlBkRel *rel);
} GdlBackend;

/*
 * Symbol a dlopen'ed backend module exports:
 *     const GdlBackend *gdl_backend_entry(void);
 */
typedef const GdlBackend *(*GdlBackendEntryFn) (void);
#define GDL_BACKEND_ENTRY_SYMBOL "gdl_backend_entry"

#endif							/* GDL_BACKEND_H */
