/*
 * hash.cu — the hash log: an append-only array of packed keys plus a device
 * hash set (open addressing, linear probing, atomicCAS insert) mapping each
 * key to its position in the array.
 *
 * It is how `full` of a recursive relation lives on the device: absorb()
 * inserts the round's candidates; a key that was not there is appended to
 * the log (positions handed out per warp with one atomicAdd), so the new
 * full relation is the log's longer prefix and the delta is the appended
 * slice, both without copying or sorting full.  Older prefixes stay valid
 * because the log only grows: a view [off, off + n) contains key k iff k is
 * in the table with off <= pos < off + n.
 *
 * The table keeps its load under one half; the log and the table grow by
 * doubling (the table is rebuilt from the log), so rounds stop reallocating
 * once the relation stops growing.  CU_EMPTY_KEY marks a free slot, so a
 * relation whose keys could equal it (arity 1 holding -1, or arity 2 holding
 * (2^32-1, 2^32-1)) does not use a hash log.
 */
#include <stdlib.h>

#include "cu_int.cuh"

/* Whether r's keys can live in a hash log (packed, never CU_EMPTY_KEY). */
bool
hlog_usable(const CuRel *r)
{
	if (r->layout != L_PACKED)
		return false;
	if (r->arity == 1)
		return !(r->lo[0] <= -1 && r->hi[0] >= -1);
	return r->hi[0] < (int64_t) 0xffffffffLL || r->hi[1] < (int64_t) 0xffffffffLL;
}

/* Whether r is the whole current content of a hash log (it may append). */
bool
hlog_is_tip(const CuRel *r)
{
	return r->st && r->st->is_log && r->off == 0 && r->n == r->st->lcount;
}

/* Kernel: insert keys[i] with log position pos0 + i (keys known distinct). */
static __global__ void
k_insert_known(const uint64_t *keys, int64_t n, int64_t pos0,
			   unsigned long long *tkeys, uint32_t *tpos, uint64_t mask)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
	{
		unsigned long long k = keys[i];
		uint64_t	s = cu_mix(k) & mask;

		for (;;)
		{
			unsigned long long prev = atomicCAS(&tkeys[s], CU_EMPTY_KEY, k);

			if (prev == CU_EMPTY_KEY)
			{
				tpos[s] = (uint32_t) (pos0 + i);
				break;
			}
			if (prev == k)
				break;
			s = (s + 1) & mask;
		}
	}
}

/*
 * Kernel: insert keys[0..n); each key not yet present is appended to the log
 * at a position taken from *count (one atomicAdd per warp).  The loop is
 * warp-uniform so the ballot sees every lane.
 */
static __global__ void
k_insert_new(const uint64_t *keys, int64_t n, unsigned long long *tkeys, uint32_t *tpos,
			 uint64_t mask, uint64_t *log, unsigned long long *count)
{
	int			lane = threadIdx.x & 31;
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t b = (int64_t) blockIdx.x * blockDim.x + threadIdx.x - lane; b < n; b += stride)
	{
		int64_t		i = b + lane;
		bool		ins = false;
		uint64_t	s = 0;
		unsigned long long k = 0;
		unsigned	m;

		if (i < n)
		{
			k = keys[i];
			s = cu_mix(k) & mask;
			for (;;)
			{
				unsigned long long cur = tkeys[s];

				if (cur == k)
					break;
				if (cur == CU_EMPTY_KEY)
				{
					unsigned long long prev = atomicCAS(&tkeys[s], CU_EMPTY_KEY, k);

					if (prev == CU_EMPTY_KEY)
					{
						ins = true;
						break;
					}
					if (prev == k)
						break;
				}
				s = (s + 1) & mask;
			}
		}
		m = __ballot_sync(0xffffffffu, ins);
		if (m)
		{
			int			leader = __ffs(m) - 1;
			unsigned long long base = 0;

			if (lane == leader)
				base = atomicAdd(count, (unsigned long long) __popc(m));
			base = __shfl_sync(0xffffffffu, base, leader);
			if (ins)
			{
				unsigned long long pos = base + __popc(m & ((1u << lane) - 1));

				log[pos] = k;
				tpos[s] = (uint32_t) pos;
			}
		}
	}
}

/* Kernel: flags[i] = 1 when q[i] is NOT in the view [lo, hi) of the log. */
static __global__ void
k_absent(const uint64_t *q, int64_t m, const unsigned long long *tkeys, const uint32_t *tpos,
		 uint64_t mask, int64_t lo, int64_t hi, uint8_t *flags)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride)
	{
		unsigned long long k = q[i];
		uint64_t	s = cu_mix(k) & mask;
		uint8_t		absent = 1;

		for (;;)
		{
			unsigned long long cur = tkeys[s];

			if (cur == k)
			{
				int64_t		p = tpos[s];

				absent = (p >= lo && p < hi) ? 0 : 1;
				break;
			}
			if (cur == CU_EMPTY_KEY)
				break;
			s = (s + 1) & mask;
		}
		flags[i] = absent;
	}
}

/* Kernel: *p = v (a device counter set without a host round trip). */
static __global__ void
k_set_u64(unsigned long long *p, unsigned long long v)
{
	*p = v;
}

/* Smallest power of two >= v. */
static uint64_t
pow2_at_least(uint64_t v)
{
	uint64_t	p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/*
 * Lean sizing: under a device memory limit (GdlBkConfig.memory_limit:
 * gpudl.device_memory_limit, or the engine's slicing tests), or with
 * GDL_CUDA_LEAN=1 in the environment (a measuring knob), tables are filled
 * up to 3/4 instead of 1/2, logs grow by 1/2 instead of doubling, and the
 * smallest sizes are 4096 instead of 2^20 slots and 2^18 keys: about a
 * third less memory for `full`, for longer probe sequences.
 */
static bool
hlog_lean(const CuCtx *c)
{
	static int	env = -1;

	if (env < 0)
	{
		const char *e = getenv("GDL_CUDA_LEAN");

		env = e && e[0] == '1';
	}
	return env == 1 || c->limit > 0;
}

/* Keys a table of st may hold before it must grow. */
static int64_t
table_room(const CuCtx *c, const CuStore *st)
{
	uint64_t	slots = st->tmask + 1;

	return (int64_t) (hlog_lean(c) ? slots / 4 * 3 : slots / 2);
}

/*
 * Install tk and tp (tcap slots) as st's table and fill it with the log's
 * keys: the end of a rebuild, at the new size or (short of memory) the old.
 */
static int
hlog_fill_table(CuCtx *c, CuStore *st, void *tk, void *tp, uint64_t tcap)
{
	st->tkeys = (uint64_t *) tk;
	st->tpos = (uint32_t *) tp;
	st->tmask = tcap - 1;
	CU_TRY(c, cudaMemsetAsync(tk, 0xff, sizeof(uint64_t) * tcap, c->stream));
	if (st->lcount > 0)
	{
		c->cnt.launches++;
		k_insert_known<<<cu_grid(st->lcount), CU_BLOCK, 0, c->stream>>>(
			(const uint64_t *) st->data, st->lcount, 0,
			(unsigned long long *) st->tkeys, st->tpos, st->tmask);
		CU_LAUNCHED(c);
	}
	return GDL_BK_OK;
}

/*
 * Build a new table of at least 2 * need slots (lean: 4/3 * need) from the
 * log's keys.  While the table is small it at least quadruples (not when
 * lean), so a relation growing from thousands to tens of millions of rows
 * is rebuilt a few times only.  The old table goes first: the new one is
 * filled from the log, so the two never coexist (they were the peak of a
 * growing fixpoint: 1.5 times the new table).
 */
static int
hlog_rebuild_table(CuCtx *c, CuStore *st, int64_t need)
{
	bool		lean = hlog_lean(c);
	uint64_t	tcap = pow2_at_least(lean ? (uint64_t) need / 3 * 4 + 4 : (uint64_t) need * 2);
	uint64_t	old = st->tkeys ? st->tmask + 1 : 0;
	uint64_t	least = lean ? ((uint64_t) 1 << 12) : ((uint64_t) 1 << 20);

	if (tcap < least)
		tcap = least;
	if (!lean && old > 0 && old < ((uint64_t) 1 << 27) && tcap < old * 4)
		tcap = old * 4;
	void	   *tk = nullptr,
			   *tp = nullptr;

	pool_put(c, st->tkeys);
	pool_put(c, st->tpos);
	st->tkeys = nullptr;
	st->tpos = nullptr;
	st->tmask = 0;
	if (pool_get(c, sizeof(uint64_t) * tcap, &tk) != GDL_BK_OK ||
		pool_get(c, sizeof(uint32_t) * tcap, &tp) != GDL_BK_OK)
	{
		int			s;

		/* keep the store usable: its old table again (just freed, so it fits) */
		pool_put(c, tk);
		if (old == 0)
			return GDL_BK_ERR_NO_MEMORY;
		tk = tp = nullptr;
		s = pool_get(c, sizeof(uint64_t) * old, &tk);
		if (s == GDL_BK_OK)
			s = pool_get(c, sizeof(uint32_t) * old, &tp);
		if (s != GDL_BK_OK)
		{
			pool_put(c, tk);
			return s;
		}
		tcap = old;
		(void) cu_fail(c, GDL_BK_ERR_NO_MEMORY, "device memory limit exceeded: no room to grow a hash set to %llu slots",
					   (unsigned long long) pow2_at_least((uint64_t) need));
		CU_OK(hlog_fill_table(c, st, tk, tp, tcap));
		return GDL_BK_ERR_NO_MEMORY;
	}
	return hlog_fill_table(c, st, tk, tp, tcap);
}

/* Make room in a log for 'need' keys in all: grow the array and the table. */
static int
hlog_reserve(CuCtx *c, CuStore *st, int64_t need)
{
	if (need > st->lcap)
	{
		bool		lean = hlog_lean(c);
		int64_t		grown = lean ? need + need / 2 : need * 2,
					least = lean ? (1 << 12) : (1 << 18);
		int64_t		cap = grown < least ? least : grown;
		void	   *p = nullptr;

		CU_OK(pool_get(c, sizeof(uint64_t) * cap, &p));
		if (st->lcount > 0)
			CU_TRY(c, cudaMemcpyAsync(p, st->data, sizeof(uint64_t) * st->lcount,
									  cudaMemcpyDefault, c->stream));
		pool_put(c, st->data);
		st->data = p;
		st->lcap = cap;
	}
	if (!st->tkeys || need > table_room(c, st))
		CU_OK(hlog_rebuild_table(c, st, need));
	return GDL_BK_OK;
}

/*
 * A hash log holding exactly the rows of the packed set 'full', with room
 * for 'extra' more keys: full's own log when full is its tip, else a new
 * log built from full's keys.  The caller gets one reference (store_unref).
 */
int
hlog_tip(CuCtx *c, CuRel *full, int64_t extra, CuStore **out)
{
	CuStore    *st;
	int			s;

	*out = nullptr;
	if (hlog_is_tip(full))
	{
		st = full->st;
		CU_OK(hlog_reserve(c, st, st->lcount + extra));
		st->refs++;
		*out = st;
		return GDL_BK_OK;
	}
	st = (CuStore *) calloc(1, sizeof(CuStore));
	if (!st)
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "out of host memory");
	st->refs = 1;
	st->is_log = true;
	s = pool_get(c, sizeof(unsigned long long), (void **) &st->dcount);
	if (s == GDL_BK_OK)
		s = hlog_reserve(c, st, full->n + extra);
	if (s == GDL_BK_OK && full->n > 0)
	{
		cudaError_t e = cudaMemcpyAsync(st->data, rel_keys(full), sizeof(uint64_t) * full->n,
										cudaMemcpyDefault, c->stream);

		s = e == cudaSuccess ? GDL_BK_OK : cu_err(c, e, "hlog copy");
		st->lcount = full->n;
		if (s == GDL_BK_OK)
		{
			c->cnt.launches++;
			k_insert_known<<<cu_grid(full->n), CU_BLOCK, 0, c->stream>>>(
				(const uint64_t *) st->data, full->n, 0,
				(unsigned long long *) st->tkeys, st->tpos, st->tmask);
			e = cudaGetLastError();
			s = e == cudaSuccess ? GDL_BK_OK : cu_err(c, e, "hlog insert");
		}
	}
	if (s == GDL_BK_OK)
	{
		c->cnt.launches++;
		k_set_u64<<<1, 1, 0, c->stream>>>(st->dcount, (unsigned long long) full->n);
		cudaError_t e = cudaGetLastError();

		s = e == cudaSuccess ? GDL_BK_OK : cu_err(c, e, "hlog count");
	}
	if (s != GDL_BK_OK)
	{
		store_unref(c, st);
		return s;
	}
	*out = st;
	return GDL_BK_OK;
}

/*
 * Insert the keys of the packed relation src into the log (src may hold
 * duplicates: a pending dedup); keys not yet present are appended.  The
 * table's room is checked before each chunk, so a bag far larger than the
 * set it reduces to never overfills the table: a bag is inserted in chunks
 * of at most the log's size (one host sync each), a set in one chunk.
 * st->lcount is the new count afterwards.
 */
int
hlog_insert(CuCtx *c, CuStore *st, const CuRel *src, bool may_dup)
{
	int64_t		done = 0,
				n = src->n;

	while (done < n)
	{
		int64_t		want = n - done,
					room,
					chunk,
					cnt = st->lcount;

		if (may_dup && want > (st->lcount > (1 << 20) ? st->lcount : (1 << 20)))
			want = st->lcount > (1 << 20) ? st->lcount : (1 << 20);
		room = table_room(c, st);
		room = (room < st->lcap ? room : st->lcap) - st->lcount;
		if (room < want)
		{
			CU_OK(hlog_reserve(c, st, st->lcount + want));
			room = table_room(c, st);
			room = (room < st->lcap ? room : st->lcap) - st->lcount;
		}
		chunk = n - done < room ? n - done : room;
		/* src's keys after the reserve: src may be a view of this very log */
		c->cnt.launches++;
		k_insert_new<<<cu_grid(chunk), CU_BLOCK, 0, c->stream>>>(
			rel_keys(src) + done, chunk, (unsigned long long *) st->tkeys, st->tpos, st->tmask,
			(uint64_t *) st->data, st->dcount);
		CU_LAUNCHED(c);
		CU_OK(cu_read_i64(c, st->dcount, 1, &cnt));
		st->lcount = cnt;
		done += chunk;
	}
	return GDL_BK_OK;
}

/* flags[i] = 1 for each key q[i] that is not a row of the log view 'set'. */
int
hlog_flag_absent(CuCtx *c, const CuRel *set, const uint64_t *q, int64_t m, uint8_t *flags)
{
	const CuStore *st = set->st;

	if (m == 0)
		return GDL_BK_OK;
	c->cnt.launches++;
	k_absent<<<cu_grid(m), CU_BLOCK, 0, c->stream>>>(
		q, m, (const unsigned long long *) st->tkeys, st->tpos, st->tmask,
		set->off, set->off + set->n, flags);
	CU_LAUNCHED(c);
	return GDL_BK_OK;
}
