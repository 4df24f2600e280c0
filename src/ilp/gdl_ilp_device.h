/*
 * gdl_ilp_device.h — an accelerator for the training step of rule learning.
 *
 * Plain C, no gpudl or PostgreSQL types: the CUDA module (cuda/ilp.cu)
 * implements it and the host registers it with gdl_ilp_register_device().
 * A session holds one example x candidate coverage matrix (CSR by example:
 * row pointers and ascending candidate indices, positives first) on the
 * device together with the optimiser state; train() runs the epochs of
 * ilp_train (ilp_adam.c) there — forward (noisy-or per example, a gather
 * over the row), backward (closed-form logit gradient, gathered per
 * candidate over a transposed matrix), Adam — and reads back the final
 * probabilities and loss.  Same start, same Adam, same early stop as the
 * CPU, so the results agree with it to rounding; the CPU stays the
 * reference and takes over whenever the device fails.
 *
 * Errors: every call that can fail returns a status (0 ok) and writes a
 * one-line reason to errmsg (errlen bytes, NUL-terminated).
 */
#ifndef GDL_ILP_DEVICE_H
#define GDL_ILP_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GDL_ILP_DEVICE_ABI 4		/* 2: cover() and cover_free(); 3: skip_pred, graph_id, cover_release(); 4: GdlIlpDevTrain.stop */
#define GDL_ILP_DEVICE_ENTRY_SYMBOL "gdl_cuda_ilp_entry"

typedef struct GdlIlpDevSession GdlIlpDevSession;

/* The matrix and labels of one training problem. */
typedef struct GdlIlpDevProblem
{
	int32_t		nrows;			/* examples */
	int32_t		ncols;			/* candidates */
	int32_t		npos;			/* rows 0..npos-1 are positives */
	double		wneg;			/* weight of a negative row's loss */
	const int64_t *off;			/* nrows + 1 row pointers */
	const int32_t *idx;			/* off[nrows] candidate ids, ascending per row */
} GdlIlpDevProblem;

/* How to train (the constants of ilp_adam.c). */
typedef struct GdlIlpDevTrain
{
	int			epochs;			/* at most */
	double		lr;
	double		beta1;
	double		beta2;
	double		adam_eps;
	double		w0;				/* initial logit of every candidate */
	int			stall_every;	/* epochs between loss checks */
	double		stall_tol;		/* relative change that ends training */
	double		loss_eps;		/* clamp of the loss (GDL_ILP_EPS) */

	/*
	 * Polled every few epochs: nonzero means the caller no longer wants the
	 * result (cancel, the session gone): train returns nonzero at once
	 * ("cancelled").  NULL: never asked.
	 */
	int			(*stop) (void *arg);
	void	   *stop_arg;
} GdlIlpDevTrain;

/* What training produced. */
typedef struct GdlIlpDevResult
{
	int			epochs;			/* run */
	double		loss;			/* at the final probabilities */
	double	   *prob;			/* caller's array of ncols, filled */
	double		seconds;		/* device time of train() */
} GdlIlpDevResult;

/*
 * The input of bulk coverage (ilp_bulk.h): the background of a one-class
 * world as one adjacency over entities (every fact of every allowed
 * predicate, seen from both ends), each entity's distinct (predicate,
 * direction) signatures and unary memberships, and the examples.
 * Adjacency entries are z << 32 | pred << 1 | dir (dir 0: pred(e, z),
 * 1: pred(z, e)), ascending per entity; signatures pred << 1 | dir,
 * ascending; all pointers are host memory.
 */
typedef struct GdlIlpDevCoverIn
{
	int32_t		nent;			/* entities (dense ids 0..nent-1) */
	int32_t		nex;			/* examples */
	const int64_t *aoff;		/* nent + 1 */
	const uint64_t *adj;
	const int64_t *soff;		/* nent + 1 */
	const uint32_t *sig;
	const int64_t *uoff;		/* nent + 1 */
	const uint32_t *usig;		/* unary predicates of each entity, ascending */
	const int32_t *ex0;			/* nex: first argument of each example */
	const int32_t *ex1;
	int64_t		max_entries;	/* refuse (status 1) beyond this many raw entries */
	/* ABI 3 */
	int32_t		skip_pred;		/* a predicate whose facts count as absent, or -1 */
	/*
	 * Nonzero: aoff..usig are those of every earlier call with the same id
	 * (one graph scored for several targets), so the module may keep them
	 * on the device until cover_release() or a call with another id.
	 */
	uint64_t	graph_id;
} GdlIlpDevCoverIn;

typedef struct GdlIlpDevice
{
	int			abi;			/* GDL_ILP_DEVICE_ABI */
	const char *name;			/* e.g. "cuda" */
	/* upload a problem; NULL on failure (errmsg says why) */
	GdlIlpDevSession *(*create) (const GdlIlpDevProblem *prob, char *errmsg, size_t errlen);
	/* train from the initial logits (may be called again: starts over) */
	int			(*train) (GdlIlpDevSession *s, const GdlIlpDevTrain *t, GdlIlpDevResult *out,
						  char *errmsg, size_t errlen);
	/* loss at given probabilities; P[nrows] receives each example's when not NULL */
	int			(*forward) (GdlIlpDevSession *s, const double *prob, double *P, double *loss,
							char *errmsg, size_t errlen);
	void		(*destroy) (GdlIlpDevSession *s);
	/*
	 * Bulk coverage (ilp_bulk.h): every (rule key, example) entry of the
	 * body-2 bias, sorted ascending and distinct, in an array the module
	 * allocates (*out, *nout entries), released with cover_free.  NULL when
	 * the module has none.  Status 1: more than max_entries raw entries.
	 */
	int			(*cover) (const GdlIlpDevCoverIn *in, uint64_t **out, int64_t *nout,
						  double *seconds, char *errmsg, size_t errlen);
	void		(*cover_free) (uint64_t *p);
	/* ABI 3: drop what cover() keeps on the device for a graph_id (may be NULL) */
	void		(*cover_release) (void);
} GdlIlpDevice;

typedef const GdlIlpDevice *(*GdlIlpDeviceEntryFn) (void);

/* When gdl_ilp_learn trains on a registered device. */
typedef enum GdlIlpDeviceMode
{
	GDL_ILP_DEVICE_AUTO = 0,	/* when the matrix is large enough */
	GDL_ILP_DEVICE_ALWAYS,		/* whenever one is registered */
	GDL_ILP_DEVICE_NEVER		/* CPU only */
} GdlIlpDeviceMode;

/* Register (NULL: unregister) the device; the pointer must stay valid. */
extern void gdl_ilp_register_device(const GdlIlpDevice *dev);
extern const GdlIlpDevice *gdl_ilp_device(void);
extern void gdl_ilp_set_device_mode(GdlIlpDeviceMode mode);

/* Time spent by the phases of gdl_ilp_learn, accumulated (benchmarks). */
typedef struct GdlIlpTimings
{
	double		candidates_s;	/* enumeration and coverage */
	double		train_s;		/* training (CPU or device, incl. upload) */
	double		select_s;		/* selection and tightening */
	int64_t		nodes;			/* bias rules whose coverage was computed */
	int64_t		candidates;		/* columns trained */
	int64_t		nnz;			/* matrix entries trained */
	int64_t		epochs;			/* epochs run */
	double		cand_epochs;	/* sum of candidates x epochs over trainings */
	int64_t		device_trainings;	/* trainings done on the device */
	int64_t		cpu_trainings;
	char		last_device_error[256];
	/* bulk coverage of the body-2 bias (ilp_bulk.c) */
	double		bulk_s;			/* building it: input, entries, index */
	double		bulk_device_s;	/* of which the device's cover() */
	int64_t		bulk_builds;	/* on the device or the CPU */
	int64_t		bulk_device;	/* of which on the device */
	int64_t		bulk_entries;	/* distinct (rule, example) entries */
	int64_t		bulk_keys;		/* distinct rules with some coverage */
	int64_t		bulk_hits;		/* rule coverages answered by the bulk */
	int64_t		bulk_misses;	/* answered per rule (shape not in the bulk) */
	double		bulk_input_s;	/* of bulk_s: building the adjacency on the host */
	double		bulk_graph_s;	/* one adjacency for several targets (ilp_bulk_graph_build) */
	double		bulk_sort_s;	/* of bulk_s: sorting entries on the CPU */
	int64_t		bulk_shared;	/* bulk coverages that reused a shared adjacency */
} GdlIlpTimings;

/* Bulk coverage of body-2 biases on (default) or off (per-rule joins only). */
extern void gdl_ilp_set_bulk(bool on);

extern GdlIlpTimings gdl_ilp_timings;

#endif							/* GDL_ILP_DEVICE_H */
