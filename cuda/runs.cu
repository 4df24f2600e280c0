/*
 * runs.cu — `full` of a recursive relation as SORTED RUNS (issue 13): a
 * packed set held as a few disjoint sorted arrays of 8-byte keys, the
 * layout of the CPU backend (src/cpu/cpu_set.c), instead of a hash set plus
 * its log (hash.cu, 20–40 bytes a tuple; 3.7 billion tuples did not fit).
 *
 * absorb(full, cand): cand is sorted and unique (its dedup is a radix sort,
 * done slice by slice by the engine); each candidate is looked up in every
 * run by a binary search narrowed per block of 256 sorted candidates (the
 * block's first and last candidate bound the range, so a thread searches a
 * few cache lines, not the whole run); the candidates found nowhere are the
 * delta, which becomes a new run of the new full as it is (shared, no
 * copy).  Runs are then merged LSM-style: the two smallest while they are
 * within a factor of two of each other, so a tuple is merged O(log n)
 * times; a merge whose output would pass a quarter of the whole set (or the
 * room left under a memory limit) is not made, so merging never doubles
 * `full` (a transient of at most a quarter of it), at the price of a few
 * more runs to search.  Nothing is hashed: 8 bytes a tuple at rest.
 *
 * Under a device memory limit, runs beyond an eighth of the limit move to
 * PINNED HOST memory, largest first (runs_spill): kernels search and merge
 * them in place over the bus (unified addressing), so `full` may be larger
 * than the device limit; only the join transients and the delta must fit.
 *
 * Any operation other than size, download, release, difference (as B) and
 * absorb (as full) flattens such a relation first into one sorted array
 * (rel_flatten; backend.cu does it at the entry points).
 *
 * GDL_CUDA_FULL=hash in the environment keeps the hash log instead (for
 * measurements).
 * Sorted candidates are searched tile by tile: every tile's range in every
 * run is found in parallel (k_tile_bounds) and a short range is searched in
 * shared memory (k_absent_tiles); GDL_CUDA_ABSENT=block keeps the per-block
 * search of before (k_absent_runs) for measurements.
 */
#include <cub/cub.cuh>
#include <stdlib.h>
#include <string.h>

#include "cu_int.cuh"

/* Runs below this many keys are merged whatever their share of the set. */
#define RUNS_SMALL ((int64_t) 1 << 24)

/* Two runs that make fewer keys than this are merged whatever their sizes. */
#define RUNS_TINY ((int64_t) 1 << 20)

/* Candidates per block of the narrowed search (the block size). */
#define RUNS_TILE CU_BLOCK

/* Most keys of a run a tile reads into shared memory (16 KB) to search there. */
#define RUNS_SMEM_KEYS 2048

/* The runs of a set as kernels see them. */
struct DRuns
{
	int			n;
	const uint64_t *k[CU_MAX_RUNS];
	int64_t		len[CU_MAX_RUNS];
};

/* Whether absorb keeps `full` as sorted runs (default) rather than a hash log. */
bool
runs_enabled(void)
{
	static int	env = -1;

	if (env < 0)
	{
		const char *e = getenv("GDL_CUDA_FULL");

		env = (e && strcmp(e, "hash") == 0) ? 0 : 1;
	}
	return env == 1;
}

/* First position in a[lo, hi) whose key is >= k (upper: > k). */
static __device__ __forceinline__ int64_t
bsearch_bound(const uint64_t *a, int64_t lo, int64_t hi, uint64_t k, bool upper)
{
	while (lo < hi)
	{
		int64_t		mid = (lo + hi) >> 1;
		uint64_t	v = a[mid];

		if (v < k || (upper && v == k))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Kernel: flags[i] = 1 when q[i] is in none of the runs.  With q sorted,
 * each block first bounds the range of every run its 256 candidates can
 * fall in (two searches per block), then each thread searches that range
 * only.  The tile loop is block-uniform (the barriers need every thread).
 */
static __global__ void
k_absent_runs(const uint64_t *q, int64_t m, DRuns rs, bool q_sorted, uint8_t *flags)
{
	__shared__ int64_t s_lo,
				s_hi;

	for (int64_t t0 = (int64_t) blockIdx.x * RUNS_TILE; t0 < m; t0 += (int64_t) gridDim.x * RUNS_TILE)
	{
		int64_t		i = t0 + threadIdx.x;
		int64_t		tl = t0 + RUNS_TILE - 1 < m ? t0 + RUNS_TILE - 1 : m - 1;
		bool		valid = i < m;
		uint64_t	key = valid ? q[i] : 0;
		uint8_t		absent = 1;

		for (int r = 0; r < rs.n; r++)
		{
			const uint64_t *a = rs.k[r];
			int64_t		lo = 0,
						hi = rs.len[r];

			if (q_sorted)
			{
				if (threadIdx.x == 0)
					s_lo = bsearch_bound(a, 0, rs.len[r], q[t0], false);
				if (threadIdx.x == 32)
					s_hi = bsearch_bound(a, 0, rs.len[r], q[tl], true);
				__syncthreads();
				lo = s_lo;
				hi = s_hi;
				__syncthreads();
			}
			if (valid && absent)
			{
				int64_t		p = bsearch_bound(a, lo, hi, key, false);

				if (p < hi && a[p] == key)
					absent = 0;
			}
		}
		if (valid)
			flags[i] = absent;
	}
}

/*
 * Kernel: bounds[r * (ntiles + 1) + t] = the first position of run r whose
 * key is >= q[t * RUNS_TILE] (the run's length for t = ntiles).  One thread
 * per (run, tile), so the tiles' bounds are found in parallel rather than
 * by one thread of each block while the other 255 wait.
 */
static __global__ void
k_tile_bounds(const uint64_t *q, DRuns rs, int64_t ntiles, int64_t *bounds)
{
	int64_t		total = (int64_t) rs.n * (ntiles + 1);

	for (int64_t x = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; x < total;
		 x += (int64_t) gridDim.x * blockDim.x)
	{
		int			r = (int) (x / (ntiles + 1));
		int64_t		t = x % (ntiles + 1);

		bounds[x] = t == ntiles ? rs.len[r] :
			bsearch_bound(rs.k[r], 0, rs.len[r], q[t * RUNS_TILE], false);
	}
}

/*
 * Kernel: flags[i] = 1 when q[i] (ascending) is in none of the runs,
 * one block per tile of RUNS_TILE candidates.  A tile's candidates can only
 * equal keys of run r in [bounds[t], bounds[t + 1]) (the next tile's first
 * candidate is larger than all of this tile's, or equal to the last, which
 * widens the range by that one key); a range of at most
 * RUNS_SMEM_KEYS keys is read once, coalesced, into shared memory and
 * searched there, so the dependent loads of 256 binary searches hit shared
 * memory instead of L2 and DRAM; a longer range is searched in place.
 * Branches on the range are block-uniform (the barriers need every thread).
 */
static __global__ void
k_absent_tiles(const uint64_t *q, int64_t m, DRuns rs, int64_t ntiles, const int64_t *bounds,
			   uint8_t *flags)
{
	__shared__ uint64_t s_keys[RUNS_SMEM_KEYS];

	for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x)
	{
		int64_t		i = t * RUNS_TILE + threadIdx.x;
		int64_t		tl = (t + 1) * RUNS_TILE - 1 < m ? (t + 1) * RUNS_TILE - 1 : m - 1;
		bool		valid = i < m;
		uint64_t	key = valid ? q[i] : 0;
		uint8_t		absent = 1;

		for (int r = 0; r < rs.n; r++)
		{
			const uint64_t *a = rs.k[r];
			int64_t		lo = bounds[(int64_t) r * (ntiles + 1) + t],
						hi = bounds[(int64_t) r * (ntiles + 1) + t + 1];
			int64_t		len;

			/* q may repeat a key across the tile's end: the next tile starts at it */
			if (hi < rs.len[r] && a[hi] == q[tl])
				hi++;
			len = hi - lo;
			if (len <= 0)
				continue;
			if (len <= RUNS_SMEM_KEYS)
			{
				for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
					s_keys[j] = a[lo + j];
				__syncthreads();
				if (valid && absent)
				{
					int64_t		p = bsearch_bound(s_keys, 0, len, key, false);

					if (p < len && s_keys[p] == key)
						absent = 0;
				}
				__syncthreads();
			}
			else if (valid && absent)
			{
				int64_t		p = bsearch_bound(a, lo, hi, key, false);

				if (p < hi && a[p] == key)
					absent = 0;
			}
		}
		if (valid)
			flags[i] = absent;
	}
}

/* The kernels' view of the runs of r (a runs relation, or a sorted plain one). */
static DRuns
runs_view(const CuRel *r)
{
	DRuns		d;

	memset(&d, 0, sizeof(d));
	if (r->nruns > 0)
	{
		d.n = r->nruns;
		for (int k = 0; k < r->nruns; k++)
		{
			d.k[k] = (const uint64_t *) r->rst[k]->data + r->roff[k];
			d.len[k] = r->rn[k];
		}
	}
	else if (r->n > 0)
	{
		d.n = 1;
		d.k[0] = rel_keys(r);
		d.len[0] = r->n;
	}
	return d;
}

/*
 * Whether sorted lookups use the per-block search of before
 * (GDL_CUDA_ABSENT=block; kept for A/B measurements) instead of the tiled
 * search, the default since it was measured (BENCHMARKS.md, issue 23).
 */
static bool
absent_blockwise(void)
{
	static int	env = -1;

	if (env < 0)
	{
		const char *e = getenv("GDL_CUDA_ABSENT");

		env = (e && strcmp(e, "block") == 0) ? 1 : 0;
	}
	return env == 1;
}

/*
 * flags[i] = 1 for each key q[i] (i < m) that is not a row of 'set' (runs,
 * or a plain SORTED packed set).  q_sorted: q ascending, so the
 * tiles' ranges in each run are found first (k_tile_bounds) and each tile
 * searches its range in shared memory (k_absent_tiles); unsorted keys are
 * each searched in the whole of every run.
 */
int
runs_flag_absent(CuCtx *c, const CuRel *set, const uint64_t *q, int64_t m, bool q_sorted,
				 uint8_t *flags)
{
	DRuns		d = runs_view(set);
	int64_t		ntiles = (m + RUNS_TILE - 1) / RUNS_TILE;
	DBuf		bounds;

	if (m == 0)
		return GDL_BK_OK;
	if (!q_sorted || d.n == 0 || absent_blockwise())
	{
		c->cnt.launches++;
		/* cu_grid gives one block per RUNS_TILE (= CU_BLOCK) candidates, capped */
		k_absent_runs<<<cu_grid(m), RUNS_TILE, 0, c->stream>>>(q, m, d, q_sorted, flags);
		CU_LAUNCHED(c);
		return GDL_BK_OK;
	}
	CU_OK(bounds.get(c, sizeof(int64_t) * (size_t) d.n * (size_t) (ntiles + 1)));
	c->cnt.launches += 2;
	k_tile_bounds<<<cu_grid((int64_t) d.n * (ntiles + 1)), CU_BLOCK, 0, c->stream>>>(q, d, ntiles,
																			bounds.as<int64_t>());
	CU_LAUNCHED(c);
	k_absent_tiles<<<cu_grid(m), RUNS_TILE, 0, c->stream>>>(q, m, d, ntiles, bounds.as<int64_t>(),
															 flags);
	CU_LAUNCHED(c);
	return GDL_BK_OK;
}

/* A new store holding n keys (contents unset), one reference. */
static int
store_new(CuCtx *c, int64_t n, CuStore **out)
{
	CuStore    *st = (CuStore *) calloc(1, sizeof(CuStore));

	*out = nullptr;
	if (!st)
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "out of host memory");
	st->refs = 1;
	st->ld = n;
	if (pool_get(c, sizeof(uint64_t) * (size_t) n, &st->data) != GDL_BK_OK)
	{
		free(st);
		return GDL_BK_ERR_NO_MEMORY;
	}
	*out = st;
	return GDL_BK_OK;
}

/*
 * A new store of n keys in PINNED HOST memory (a cold run spilled off the
 * device under a memory limit): kernels read and write it through unified
 * addressing, over the bus.
 */
static int
store_new_host(CuCtx *c, int64_t n, CuStore **out)
{
	CuStore    *st = (CuStore *) calloc(1, sizeof(CuStore));
	cudaError_t e;

	*out = nullptr;
	if (!st)
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "out of host memory");
	if (!cu_pin_take((int64_t) sizeof(uint64_t) * n))
	{
		free(st);
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY,
					   "out of pinned host memory for %lld keys of a set moved off the device (the module's cap on pinned memory)",
					   (long long) n);
	}
	e = cudaHostAlloc(&st->data, sizeof(uint64_t) * (size_t) n,
					  cudaHostAllocMapped | cudaHostAllocPortable);
	if (e != cudaSuccess)
	{
		cu_pin_give((int64_t) sizeof(uint64_t) * n);
		free(st);
		(void) cudaGetLastError();
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY,
					   "out of pinned host memory for %lld keys of a set moved off the device",
					   (long long) n);
	}
	st->refs = 1;
	st->ld = n;
	st->host = true;
	c->host_bytes += (int64_t) sizeof(uint64_t) * n;
	if (c->host_bytes > c->host_peak)
		c->host_peak = c->host_bytes;
	*out = st;
	return GDL_BK_OK;
}

/* Whether st's keys are in host memory (a spilled run or a pool overflow buffer). */
static bool
store_on_host(CuCtx *c, const CuStore *st)
{
	return st->host || pool_on_host(c, st->data);
}

/* Whether a merged run of 'keys' keys (plus merge scratch) fits under the limit. */
static bool
runs_merge_fits(const CuCtx *c, int64_t keys)
{
	int64_t		need = (int64_t) sizeof(uint64_t) * (keys + keys / 64) + 16384;

	return c->limit <= 0 || c->bytes + need <= c->limit;
}

/*
 * Merge runs i and j of r (disjoint sorted keys) into one; j is removed.
 * The merged run is on the host when either input is, or when it would not
 * fit under the device memory limit.
 */
static int
runs_merge_two(CuCtx *c, CuRel *r, int i, int j)
{
	CuStore    *st = nullptr;
	const uint64_t *a = (const uint64_t *) r->rst[i]->data + r->roff[i];
	const uint64_t *b = (const uint64_t *) r->rst[j]->data + r->roff[j];
	int64_t		na = r->rn[i],
				nb = r->rn[j];
	bool		host = store_on_host(c, r->rst[i]) || store_on_host(c, r->rst[j]) ||
		(c->limit > 0 && !runs_merge_fits(c, na + nb));

	if (host)
		CU_OK(store_new_host(c, na + nb, &st));
	else
		CU_OK(store_new(c, na + nb, &st));
	int			s = merge_keys(c, a, na, b, nb, (uint64_t *) st->data);

	if (s != GDL_BK_OK)
	{
		store_unref(c, st);
		return s;
	}
	store_unref(c, r->rst[i]);
	store_unref(c, r->rst[j]);
	r->rst[i] = st;
	r->roff[i] = 0;
	r->rn[i] = na + nb;
	for (int k = j; k + 1 < r->nruns; k++)
	{
		r->rst[k] = r->rst[k + 1];
		r->roff[k] = r->roff[k + 1];
		r->rn[k] = r->rn[k + 1];
	}
	r->nruns--;
	return GDL_BK_OK;
}

/* The two smallest runs of r: *i the smallest, *j the next. */
static void
runs_two_smallest(const CuRel *r, int *i, int *j)
{
	int			a = -1,
				b = -1;

	for (int k = 0; k < r->nruns; k++)
	{
		if (a < 0 || r->rn[k] < r->rn[a])
		{
			b = a;
			a = k;
		}
		else if (b < 0 || r->rn[k] < r->rn[b])
			b = k;
	}
	*i = a;
	*j = b;
}

/*
 * LSM upkeep after a run was added: merge the two smallest runs while they
 * are within a factor of two or tiny (and the merged run stays under a
 * quarter of the set, or is small); past CU_MAX_RUNS - 1 runs merge anyway.
 * Under a limit a merge that would not fit goes to host memory.
 */
static int
runs_compact(CuCtx *c, CuRel *r)
{
	while (r->nruns > 1)
	{
		int			i,
					j;
		int64_t		merged;
		bool		must = r->nruns >= CU_MAX_RUNS - 1;

		runs_two_smallest(r, &i, &j);
		merged = r->rn[i] + r->rn[j];
		if (!must)
		{
			if (r->rn[i] * 2 < r->rn[j] && merged > RUNS_TINY)
				break;
			if (merged > RUNS_SMALL && merged > r->n / 4)
				break;
		}
		CU_OK(runs_merge_two(c, r, i < j ? i : j, i < j ? j : i));
	}
	return GDL_BK_OK;
}

/*
 * Turn a runs relation into one sorted array in place (the same set; the
 * handle changes representation only): merge the two smallest runs until
 * one is left, then view it.  Plain relations are left alone.
 */
int
rel_flatten(CuCtx *c, CuRel *r)
{
	if (r->nruns == 0)
		return GDL_BK_OK;
	while (r->nruns > 1)
	{
		int			i,
					j;

		runs_two_smallest(r, &i, &j);
		CU_OK(runs_merge_two(c, r, i < j ? i : j, i < j ? j : i));
	}
	r->st = r->rst[0];			/* the reference moves */
	r->off = r->roff[0];
	r->n = r->rn[0];
	r->rst[0] = nullptr;
	r->nruns = 0;
	r->sorted = true;
	r->is_set = true;
	return GDL_BK_OK;
}

/*
 * Under a device memory limit, keep at most an eighth of the limit of r's
 * runs on the device (the rest is for the delta, a slice's reduction and
 * the round's new tuples): move the largest device runs (never the one of
 * store 'keep', the delta the next round joins) to pinned host memory.
 * The device copy is freed when no other relation shares it (the engine
 * releases the previous `full` right after absorb).
 */
static int
runs_spill(CuCtx *c, CuRel *r, const CuStore *keep)
{
	int64_t		dev = 0;

	if (c->limit <= 0)
		return GDL_BK_OK;
	for (int k = 0; k < r->nruns; k++)
		if (!store_on_host(c, r->rst[k]))
			dev += (int64_t) sizeof(uint64_t) * r->rn[k];
	while (dev > c->limit / 8)
	{
		int			big = -1;
		CuStore    *st = nullptr;
		cudaError_t e;

		for (int k = 0; k < r->nruns; k++)
			if (!store_on_host(c, r->rst[k]) && r->rst[k] != keep && (big < 0 || r->rn[k] > r->rn[big]))
				big = k;
		if (big < 0)
			break;
		CU_OK(store_new_host(c, r->rn[big], &st));
		e = cudaMemcpyAsync(st->data, (const uint64_t *) r->rst[big]->data + r->roff[big],
							sizeof(uint64_t) * r->rn[big], cudaMemcpyDefault, c->stream);
		if (e != cudaSuccess)
		{
			store_unref(c, st);
			return cu_err(c, e, "runs: spill to host");
		}
		store_unref(c, r->rst[big]);
		r->rst[big] = st;
		r->roff[big] = 0;
		dev -= (int64_t) sizeof(uint64_t) * r->rn[big];
	}
	return GDL_BK_OK;
}

/* A sorted copy of a packed set that is not sorted (a new relation). */
static int
sorted_copy(CuCtx *c, const CuRel *src, CuRel **out)
{
	DBuf		keys,
				alt;
	CuRel	   *r;

	CU_OK(keys.get(c, sizeof(uint64_t) * src->n));
	CU_OK(alt.get(c, sizeof(uint64_t) * src->n));
	CU_TRY(c, cudaMemcpyAsync(keys.p, rel_keys(src), sizeof(uint64_t) * src->n,
							  cudaMemcpyDefault, c->stream));
	CU_OK(sort_keys(c, keys, alt, src->n, key_end_bit(src->arity, src->lo, src->hi)));
	alt.get(c, 0);
	CU_OK(rel_adopt(c, src->arity, L_PACKED, src->n, keys.take(), &r));
	bounds_copy(r, src);
	r->is_set = true;
	r->sorted = true;
	*out = r;
	return GDL_BK_OK;
}

/* Add the rows of the sorted plain packed set s as a run of r (shared). */
static void
runs_add(CuRel *r, const CuRel *s)
{
	r->rst[r->nruns] = s->st;
	r->roff[r->nruns] = s->off;
	r->rn[r->nruns] = s->n;
	s->st->refs++;
	r->nruns++;
	r->n += s->n;
}

/*
 * absorb with `full` as sorted runs: *delta = cand \ full (sorted), and
 * *new_full = full's runs plus delta as a new run, compacted.  Both sets
 * packed; cand forced (no pending dedup).
 */
int
runs_absorb(CuCtx *c, CuRel *full, CuRel *cand, CuRel **new_full, CuRel **delta)
{
	CuRel	   *cs = nullptr,
			   *fs = nullptr,
			   *d = nullptr,
			   *nf = nullptr;
	DBuf		flags;
	int64_t		m = 0;
	int			s = GDL_BK_OK;

	*new_full = *delta = nullptr;
	/* sorted candidates (a merged or radix-sorted set usually is) */
	if (!cand->sorted)
		CU_OK(sorted_copy(c, cand, &cs));
	else
		CU_OK(rel_share(c, cand, &cs));
	/* full as runs: a plain unsorted full (a hash log, an upload) is sorted once */
	if (full->nruns == 0 && full->n > 0 && !full->sorted)
		s = sorted_copy(c, full, &fs);
	else
		s = rel_share(c, full, &fs);
	if (s != GDL_BK_OK)
		goto fail;
	/* the delta: candidates in no run */
	if (fs->n == 0)
	{
		d = cs;
		cs = nullptr;
	}
	else
	{
		DBuf		out;
		CuStore    *hst = nullptr;
		bool		on_host = c->limit > 0 && store_on_host(c, cs->st) &&
			c->bytes + (int64_t) sizeof(uint64_t) * cs->n + 65536 > c->limit;

		/*
		 * the absent keys straight into a buffer of the delta (no row
		 * ids); candidates already on the host past the limit give a
		 * delta on the host too (the next round's join reads it there)
		 */
		s = flags.get(c, cs->n);
		if (s == GDL_BK_OK)
			s = runs_flag_absent(c, fs, rel_keys(cs), cs->n, true, flags.as<uint8_t>());
		if (s == GDL_BK_OK && on_host)
			s = store_new_host(c, cs->n, &hst);
		else if (s == GDL_BK_OK)
			s = out.get(c, sizeof(uint64_t) * cs->n);
		if (s == GDL_BK_OK)
			s = select_keys_flagged(c, rel_keys(cs), flags.as<uint8_t>(), cs->n,
									hst ? (uint64_t *) hst->data : out.as<uint64_t>(), &m);
		flags.get(c, 0);
		if (s == GDL_BK_OK && m == cs->n && !store_on_host(c, cs->st))
		{
			d = cs;				/* all new: the candidates themselves */
			cs = nullptr;
		}
		else if (s == GDL_BK_OK && hst)
			s = m > 0 ? rel_view(c, hst, full->arity, 0, m, &d)
				: rel_new(c, full->arity, L_PACKED, 0, &d);
		else if (s == GDL_BK_OK)
			s = rel_adopt(c, full->arity, L_PACKED, m, out.take(), &d);
		if (hst)
			store_unref(c, hst);	/* d holds it now, or it is freed */
		if (s != GDL_BK_OK)
			goto fail;
	}
	if (cs)
	{
		rel_free(c, cs);
		cs = nullptr;
	}
	bounds_copy(d, cand);
	d->is_set = true;
	d->sorted = true;
	/*
	 * the delta lives on as a run of full: a buffer with slack (a dedup
	 * keeps its buffer when it is at least half full) is copied to its size
	 */
	if (d->n > 0 && pool_size(c, d->st->data) > sizeof(uint64_t) * (size_t) (d->n + d->n / 8) + 4096)
	{
		CuStore    *st = nullptr;

		s = store_new(c, d->n, &st);
		if (s == GDL_BK_OK)
		{
			cudaError_t e = cudaMemcpyAsync(st->data, rel_keys(d), sizeof(uint64_t) * d->n,
											cudaMemcpyDefault, c->stream);

			if (e != cudaSuccess)
			{
				store_unref(c, st);
				s = cu_err(c, e, "runs: copy of the delta");
				goto fail;
			}
			store_unref(c, d->st);
			d->st = st;
			d->off = 0;
		}
		else
			s = GDL_BK_OK;		/* no room for the copy: keep the slack */
	}
	/* the new full: full's runs plus the delta's */
	if (d->n == 0)
		s = rel_share(c, fs, &nf);
	else if (fs->n == 0)
		s = rel_share(c, d, &nf);
	else
	{
		s = rel_new(c, full->arity, L_PACKED, 0, &nf);
		if (s == GDL_BK_OK)
		{
			if (fs->nruns > 0)
			{
				for (int k = 0; k < fs->nruns; k++)
				{
					nf->rst[k] = fs->rst[k];
					nf->roff[k] = fs->roff[k];
					nf->rn[k] = fs->rn[k];
					fs->rst[k]->refs++;
				}
				nf->nruns = fs->nruns;
				nf->n = fs->n;
			}
			else
				runs_add(nf, fs);
			runs_add(nf, d);
			s = runs_compact(c, nf);
			if (s == GDL_BK_OK)
				s = runs_spill(c, nf, d->st);
			if (s == GDL_BK_OK && nf->nruns == 1)
				s = rel_flatten(c, nf);
		}
	}
	if (s != GDL_BK_OK)
		goto fail;
	bounds_copy(nf, full);
	bounds_union(full->arity, nf->lo, nf->hi, cand->lo, cand->hi);
	nf->is_set = true;
	nf->sorted = nf->nruns == 0;
	rel_free(c, fs);
	*new_full = nf;
	*delta = d;
	return GDL_BK_OK;

fail:
	if (cs)
		rel_free(c, cs);
	if (fs)
		rel_free(c, fs);
	if (d)
		rel_free(c, d);
	if (nf)
		rel_free(c, nf);
	return s;
}

/*
 * Union of the sorted packed sets A and B into PINNED HOST memory (merge,
 * then unique in place unless disjoint): merge_sorted's way out when the
 * union would not fit under the device memory limit (the round's new
 * tuples, merged slice by slice, can be as big as the limit).
 */
int
runs_union_host(CuCtx *c, CuRel *A, CuRel *B, bool disjoint, CuRel **out)
{
	CuStore    *st = nullptr;
	CuRel	   *r = nullptr;
	const uint64_t *ak = rel_keys(A),
			   *bk = rel_keys(B);
	int64_t		na = A->n,
				nb = B->n,
				m = na + nb;
	int			s;

	*out = nullptr;
	CU_OK(store_new_host(c, na + nb, &st));
	s = merge_keys(c, ak, na, bk, nb, (uint64_t *) st->data);
	if (s == GDL_BK_OK && !disjoint)
		s = unique_keys_inplace(c, (uint64_t *) st->data, na + nb, &m);
	if (s == GDL_BK_OK)
		s = rel_view(c, st, A->arity, 0, m, &r);
	store_unref(c, st);			/* r holds the store now, or it is freed */
	CU_OK(s);
	rel_mark_union(r, A, B);
	*out = r;
	return GDL_BK_OK;
}

/* Copy the keys of every run of r, one after the other, to host memory. */
int
runs_download(CuCtx *c, const CuRel *r, uint64_t *dst)
{
	int64_t		at = 0;

	for (int k = 0; k < r->nruns; k++)
	{
		CU_TRY(c, cudaMemcpyAsync(dst + at, (const uint64_t *) r->rst[k]->data + r->roff[k],
								  sizeof(uint64_t) * r->rn[k], cudaMemcpyDefault, c->stream));
		c->cnt.transfers++;
		c->cnt.bytes_from_device += (int64_t) sizeof(uint64_t) * r->rn[k];
		at += r->rn[k];
	}
	CU_TRY(c, cudaStreamSynchronize(c->stream));
	return GDL_BK_OK;
}
