/*
 * gdl_mine_device.h — an accelerator for the counting of rule mining.
 *
 * Plain C, no gpudl or PostgreSQL types: the CUDA module (cuda/mine.cu)
 * implements it and the host registers it with gdl_mine_register_device()
 * (src/pg/pg_device.c can dlsym GDL_MINE_DEVICE_ENTRY_SYMBOL as it does for
 * rule learning).  gdl_mine with device = GDL_DEVICE_GPU hands both counting
 * passes to it: the graph's links go up, every (head, body) pair over
 * min_support and min_head_coverage comes back with its support, body size
 * and PCA body size; the host applies the confidence thresholds and the
 * canonical form.  The counts must equal the CPU's (src/mine/mine_enum.c)
 * exactly; when the device fails, the CPU counts instead.
 *
 * Links: entity e's links are [aoff[e], aoff[e+1]) of sig/nb, sorted by
 * (sig, nb) and distinct; sig = 2p for p(e, nb), 2p + 1 for p(nb, e).
 * A module may refuse (nonzero status) what it cannot hold, e.g. more
 * relations than its key packing takes (cuda/mine.cu: 16383).
 *
 * Body keys (the raw forms of src/mine/mine_int.h): shape << 57 | s0 << 38
 * | s1 << 19 | s2, with signatures of links read from the variable named
 * first to the one named second:
 *   1 L     s0 X->Y                       2 LL   s0 < s1 X->Y
 *   3 LLL   s0 < s1 < s2 X->Y             4 P2   s0 X->Z, s1 Z->Y
 *   5 P2L   s0 X->Z, s1 Z->Y, s2 X->Y     6 PP2  s0 < s1 X->Z, s2 Z->Y
 *   7 P2P   s0 X->Z, s1 < s2 Z->Y         8 CXL  s0 < s1 X->Z, s2 X->Y
 *   9 CYL   s0 X->Y, s1 < s2 Y->Z        10 P3   s0 X->Z, s1 Z->W, s2 W->Y
 * A head r never pairs with a body holding the link X->Y of signature 2r.
 *
 * Errors: a call that fails returns nonzero and writes a one-line reason to
 * errmsg (errlen bytes, NUL-terminated).
 */
#ifndef GDL_MINE_DEVICE_H
#define GDL_MINE_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GDL_MINE_DEVICE_ABI 2
#define GDL_MINE_DEVICE_ENTRY_SYMBOL "gdl_cuda_mine_entry"

/* The mining problem: the graph's links and the support thresholds. */
typedef struct GdlMineDevIn
{
	int32_t		nent;
	int32_t		nrels;
	int64_t		nlinks;			/* aoff[nent] */
	const int64_t *aoff;		/* nent + 1 */
	const int32_t *sig;			/* nlinks */
	const int32_t *nb;			/* nlinks */
	const int32_t *bnb;			/* the same links sorted by (nb, sig) */
	const int32_t *bsig;
	/*
	 * Parallel pairs of each entity e: (a, b, z) with a < b both links
	 * from e to z, sorted, [ppoff[e], ppoff[e+1]); cycle pairs: the
	 * distinct (a, b) of those, [cpoff[e], cpoff[e+1]).
	 */
	const int64_t *ppoff;		/* nent + 1 */
	const int32_t *ppa;
	const int32_t *ppb;
	const int32_t *ppz;
	const int64_t *cpoff;		/* nent + 1 */
	const int32_t *cpa;
	const int32_t *cpb;
	const int64_t *nfacts;		/* nrels: distinct facts per relation */
	int			max_body;		/* 1 .. 3 */
	int			target;			/* head relation, or -1: every relation */
	int64_t		min_support;	/* at least 1 */
	double		min_head_coverage;	/* support / nfacts[head] >= this */

	/*
	 * Polled by the module between steps of its work (every few ms, kernels
	 * included): nonzero means the caller no longer wants the result (a
	 * cancel, the session gone): the module frees what it holds and
	 * returns nonzero at once.  NULL: never asked.  Any thread may call it.
	 */
	int			(*stop) (void *arg);
	void	   *stop_arg;
} GdlMineDevIn;

/* One (head, body) pair over the support thresholds, with its counts. */
typedef struct GdlMineDevCand
{
	uint64_t	key;
	int32_t		head;
	int64_t		support;
	int64_t		body_size;
	int64_t		pca_body_size;
} GdlMineDevCand;

typedef struct GdlMineDevice
{
	int			abi;			/* GDL_MINE_DEVICE_ABI */
	const char *name;			/* e.g. "cuda" */

	/*
	 * Both passes: the candidates in an array the module allocates (*out,
	 * *nout), released with mine_free; any order.  seconds[0] receives the
	 * support pass's time, seconds[1] the denominators', seconds[2] the
	 * upload's.
	 */
	int			(*mine) (const GdlMineDevIn *in, GdlMineDevCand **out, int64_t *nout,
						 double seconds[3], char *errmsg, size_t errlen);
	void		(*mine_free) (GdlMineDevCand *p);
} GdlMineDevice;

typedef const GdlMineDevice *(*GdlMineDeviceEntryFn) (void);

/* Register (NULL: unregister) the device; the pointer must stay valid. */
extern void gdl_mine_register_device(const GdlMineDevice *dev);
extern const GdlMineDevice *gdl_mine_device(void);
/* Why the last GPU mining fell back to the CPU ("" when it did not). */
extern const char *gdl_mine_device_last_error(void);

#endif							/* GDL_MINE_DEVICE_H */
