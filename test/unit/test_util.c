/*
 * test_util.c — helpers shared by the standalone test binaries (see
 * test_util.h and test_rows.h): one copy of what several tests need.
 */
#include "test_util.h"
#include "test_rows.h"
#include "../../src/mine/mine_int.h"

#include <dlfcn.h>
#include <string.h>

/* xorshift64: a small deterministic generator. */
uint64_t
gdl_test_xorshift(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* splitmix64: the golden-ratio step, then the miner's finaliser. */
uint64_t
gdl_test_splitmix(uint64_t *state)
{
	return mine_mix(*state += 0x9e3779b97f4a7c15ULL);
}

/* Parse and analyse; NULL (and a failed check) on error. */
GdlAnalysis *
gdl_test_analyze(const char *src, GdlResolveFn resolve)
{
	GdlProgram *volatile p = NULL;
	GdlAnalysis *volatile a = NULL;
	GdlError   *e = GDL_TRY(p = gdl_parse(src); a = gdl_analyze(p, resolve, NULL));

	CHECK_MSG(e == NULL, "analysis of <%s> failed: %s / %s", src, e ? e->message : "",
			  e && e->detail ? e->detail : "");
	return e ? NULL : a;
}

/* Load the CUDA module and take its backend; NULL, and why, when impossible. */
const GdlBackend *
gdl_test_load_backend(void **handle, char *why, size_t whylen)
{
	const char *path = getenv("GDL_CUDA_LIB");
	void	   *h;
	GdlBackendEntryFn entry;
	const GdlBackend *b;

	if (!path || !*path)
		path = GDL_TEST_CUDA_LIB;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
	{
		snprintf(why, whylen, "cannot load %s: %s", path, dlerror());
		return NULL;
	}
	entry = (GdlBackendEntryFn) dlsym(h, GDL_BACKEND_ENTRY_SYMBOL);
	if (!entry || !(b = entry()) || b->abi != GDL_BACKEND_ABI)
	{
		snprintf(why, whylen, "%s: no entry point or ABI mismatch", path);
		return NULL;
	}
	if (handle)
		*handle = h;
	return b;
}

/* Load the CUDA module and find an entry point; NULL, said, when impossible. */
void *
gdl_test_module_entry(const char *test, const char *lib, const char *symbol)
{
	void	   *h;
	void	   *entry;

	if (lib == NULL)
		lib = GDL_TEST_CUDA_LIB;
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL)
	{
		printf("%s: skipped (no GPU: cannot load %s: %s)\n", test, lib, dlerror());
		return NULL;
	}
	entry = dlsym(h, symbol);
	if (entry == NULL)
		printf("%s: skipped (no GPU: %s has no %s)\n", test, lib, symbol);
	return entry;
}

/* Two columns of nrows values each, allocated in the arena. */
void
gdl_test_pair_columns(GdlColumns *c, int64_t nrows)
{
	c->ncols = 2;
	c->nrows = nrows;
	c->cols = gdl_alloc(sizeof(int64_t *) * 2);
	c->cols[0] = gdl_alloc(sizeof(int64_t) * nrows);
	c->cols[1] = gdl_alloc(sizeof(int64_t) * nrows);
}

/* R random relations over n entities (self-loops, repeats). */
GdlMineRelation *
gdl_test_mine_rels(uint64_t *rng, int n, int R, int64_t f)
{
	GdlMineRelation *rels = gdl_alloc(sizeof(GdlMineRelation) * R);

	for (int r = 0; r < R; r++)
	{
		int64_t		m = f + (int64_t) (gdl_test_splitmix(rng) % (uint64_t) (f + 1));
		GdlColumns *c = &rels[r].rows;

		rels[r].name = gdl_sprintf("p%d", r);
		gdl_test_pair_columns(c, m + 1);
		for (int64_t i = 0; i < m; i++)
		{
			c->cols[0][i] = 3 * (int64_t) (gdl_test_splitmix(rng) % n) - 10;
			c->cols[1][i] = 3 * (int64_t) (gdl_test_splitmix(rng) % n) - 10;
		}
		c->cols[0][m] = c->cols[0][0];
		c->cols[1][m] = c->cols[1][0];
	}
	return rels;
}

/* The graph size of a differential run by seed. */
GdlTestMineSize
gdl_test_mine_size(int seed, int dense_n, int dense_mod, int sparse_n, int sparse_step)
{
	GdlTestMineSize s;

	s.dense = seed % 2 == 0;
	s.n = s.dense ? dense_n + seed % dense_mod : sparse_n + sparse_step * seed;
	s.R = 1 + seed % 5;
	s.f = s.dense ? (int64_t) s.n * s.n / 3 : s.n;
	return s;
}

/* Vary the mining options by seed: body length and thresholds. */
void
gdl_test_mine_vary(GdlMineOptions *o, int seed, int deep_from, int every)
{
	o->max_body = seed >= deep_from ? 3 : 1 + seed % 3;
	if (seed % every == 0)
	{
		o->min_head_coverage = 0;
		o->min_confidence = 0;
	}
	else if (seed % every == 1)
		o->min_support = 2;
}

/* Does the device's mining result d give the CPU's c, rule for rule? */
void
gdl_test_mine_same(const GdlMineGraph *g, const GdlMineResult *c, const GdlMineResult *d,
				   const char *what, const char *device)
{
	CHECK_MSG(c->nrules == d->nrules && c->candidates == d->candidates,
			  "%s: cpu %ld rules (%ld candidates), %s %ld (%ld)", what, (long) c->nrules,
			  (long) c->candidates, device, (long) d->nrules, (long) d->candidates);
	if (c->nrules == d->nrules)
	{
		int64_t		bad = 0;

		for (int64_t i = 0; i < c->nrules; i++)
			if (memcmp(&c->rules[i], &d->rules[i], sizeof(GdlMineRule)) != 0 && bad++ < 3)
				CHECK_MSG(false, "%s: rule %ld: cpu %s (%ld/%ld/%ld), %s %s (%ld/%ld/%ld)", what,
						  (long) i, gdl_mine_rule_text(g, &c->rules[i]), (long) c->rules[i].support,
						  (long) c->rules[i].body_size, (long) c->rules[i].pca_body_size, device,
						  gdl_mine_rule_text(g, &d->rules[i]), (long) d->rules[i].support,
						  (long) d->rules[i].body_size, (long) d->rules[i].pca_body_size);
		CHECK(bad == 0);
	}
}

/* ------------------------------------------------------------ host rows */

int			rows_cmp_arity;

/* Random rows: every value from the test's own generator. */
Rows
rows_random_of(int arity, int64_t n, RowsValueFn val, int cls, int64_t range)
{
	Rows		r;

	r.arity = arity;
	r.n = n;
	r.v = malloc(sizeof(int64_t) * (n * arity + 1));
	for (int64_t i = 0; i < n * arity; i++)
		r.v[i] = val(cls, range);
	return r;
}

/* Lexicographic row comparison for qsort (arity from rows_cmp_arity). */
int
rows_cmp(const void *a, const void *b)
{
	const int64_t *x = a,
			   *y = b;

	for (int k = 0; k < rows_cmp_arity; k++)
		if (x[k] != y[k])
			return x[k] < y[k] ? -1 : 1;
	return 0;
}
