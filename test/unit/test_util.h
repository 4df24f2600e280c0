/*
 * test_util.h — helpers shared by the standalone test binaries (test_util.c
 * is linked into each, next to test_host.c), so that the tests do not each
 * carry their own copy: deterministic random generators, parse-and-analyse
 * that fails the test on an error, a bad ILP parameter's check, loading the
 * CUDA module, random mining relations and the check that a mining device
 * agrees with the CPU.
 */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include "test_host.h"
#include "../../src/exec/gdl_backend.h"
#include "../../src/ilp/gdl_ilp.h"
#include "../../src/lang/gdl_lang.h"
#include "../../src/mine/gdl_mine.h"

/* The CUDA module's path when $GDL_CUDA_LIB (or an argument) names none. */
#define GDL_TEST_CUDA_LIB "../../cuda/gpudl_cuda.so"

/* xorshift64: advance *state and return it. */
extern uint64_t gdl_test_xorshift(uint64_t *state);
/* splitmix64: advance *state and return its mix. */
extern uint64_t gdl_test_splitmix(uint64_t *state);

/*
 * Check that learning prob with the default parameters but params.field =
 * value fails with GDL_ERR_PARAM (a macro, so a failure names the caller's
 * line); params is left so.
 */
#define CHECK_ILP_BAD_PARAM(prob, params, field, value) do { \
	GdlError   *bad_e_; \
	gdl_ilp_params_default(&(params)); \
	(params).field = (value); \
	bad_e_ = GDL_TRY(gdl_ilp_learn(&(prob), &(params), NULL)); \
	CHECK(bad_e_ != NULL && bad_e_->code == GDL_ERR_PARAM); \
} while (0)

/* Parse and analyse src with resolve; NULL (and a failed check) on error. */
extern GdlAnalysis *gdl_test_analyze(const char *src, GdlResolveFn resolve);

/*
 * The CUDA module's backend ($GDL_CUDA_LIB, else GDL_TEST_CUDA_LIB), with
 * its dlopen handle in *handle; NULL with the reason in why when it cannot
 * be loaded or does not match this ABI.
 */
extern const GdlBackend *gdl_test_load_backend(void **handle, char *why, size_t whylen);

/*
 * The entry point `symbol` of the CUDA module lib (NULL: the default path);
 * NULL after printing "<test>: skipped (no GPU: ...)" when it cannot be
 * loaded or lacks the symbol.
 */
extern void *gdl_test_module_entry(const char *test, const char *lib, const char *symbol);

/* Two columns of nrows values each (ncols, nrows, cols), in the arena. */
extern void gdl_test_pair_columns(GdlColumns *c, int64_t nrows);

/*
 * R binary relations "p<r>" of about f random facts (f to 2f, splitmix64
 * from *rng) over n entities 3i - 10, self-loops and repeats included, the
 * first fact repeated at the end.
 */
extern GdlMineRelation *gdl_test_mine_rels(uint64_t *rng, int n, int R, int64_t f);

/*
 * The random graph of a differential run by seed: dense on even seeds
 * (dense_n + seed % dense_mod entities, about n * n / 3 facts a relation),
 * else sparse (sparse_n + sparse_step * seed entities, about n facts);
 * 1 + seed % 5 relations.
 */
typedef struct GdlTestMineSize
{
	bool		dense;
	int			n;				/* entities */
	int			R;				/* relations */
	int64_t		f;				/* about so many facts a relation */
} GdlTestMineSize;

extern GdlTestMineSize gdl_test_mine_size(int seed, int dense_n, int dense_mod, int sparse_n,
										  int sparse_step);

/*
 * Options for a differential run by seed: max_body 1 + seed % 3, 3 from
 * seed deep_from on; every `every` seeds no coverage or confidence bound,
 * and the seed after, min_support 2.
 */
extern void gdl_test_mine_vary(GdlMineOptions *o, int seed, int deep_from, int every);

/*
 * Check that a device's mining result d (device: its name in messages) is
 * the CPU's c: the same rule and candidate counts and the very same rules
 * with the same measures (the first three that differ are reported); what
 * names the case.
 */
extern void gdl_test_mine_same(const GdlMineGraph *g, const GdlMineResult *c,
							   const GdlMineResult *d, const char *what, const char *device);

#endif							/* TEST_UTIL_H */
