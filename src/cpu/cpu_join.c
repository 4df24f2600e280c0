/*
 * cpu_join.c — equi-join and anti-join of the CPU backend.
 *
 * The right input gets an index over its key columns, cached on its handle
 * (relations are immutable, so the index lives as long as the relation): row
 * ids grouped by an encoded join key, found by direct addressing when the
 * key range is small (dense ids: a CSR) or through an open-addressing hash
 * table otherwise.  A sorted packed relation indexed on a prefix of its
 * columns needs no permutation at all.  The left input is split into chunks
 * that threads take in turn: a counting pass, a prefix sum, then a pass that
 * writes every output row at its place (count-then-materialize), so the
 * output keeps the left input's row order.
 */
#include "cpu_int.h"

#include <stdatomic.h>
#include <string.h>

#define JOIN_CHUNK 4096

/* 64-bit mixer (splitmix64 finalizer). */
static inline uint64_t
mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

/* Bits needed for an unsigned range. */
static int
bitlen(uint64_t v)
{
	return v == 0 ? 0 : 64 - __builtin_clzll(v);
}

/* Join key of row i of r over columns cols, in the index's encoding; false: no match possible. */
static inline bool
encode_key(const CpuIndex *ix, const CpuRel *r, int64_t i, const int *cols, uint64_t *jk)
{
	uint64_t	k = 0;
	int			c;

	if (ix->hashed)
	{
		k = UINT64_C(0x9e3779b97f4a7c15);
		for (c = 0; c < ix->nkeys; c++)
			k = mix64(k ^ (uint64_t) cpu_get(r, i, cols[c]));
		*jk = k;
		return true;
	}
	for (c = 0; c < ix->nkeys; c++)
	{
		int64_t		v = cpu_get(r, i, cols[c]);

		if (v < ix->klo[c] || v > ix->khi[c])
			return false;
		k |= ((uint64_t) v - (uint64_t) ix->klo[c]) << ix->kshift[c];
	}
	*jk = k;
	return true;
}

/* Range [*s, *e) of index positions holding join key jk; false if none. */
static inline bool
index_lookup(const CpuIndex *ix, uint64_t jk, int64_t *s, int64_t *e)
{
	if (ix->direct)
	{
		if (jk >= (uint64_t) ix->ndirect)
			return false;
		*s = ix->off[jk];
		*e = ix->off[jk + 1];
		return *s < *e;
	}
	else
	{
		uint64_t	h = mix64(jk) & ix->hmask;

		for (;;)
		{
			if (ix->hstart[h] < 0)
				return false;
			if (ix->hkey[h] == jk)
			{
				*s = ix->hstart[h];
				*e = ix->hend[h];
				return true;
			}
			h = (h + 1) & ix->hmask;
		}
	}
}

/* Build the hash table over runs of equal keys in sorted jk[0..n). */
static void
index_build_hash(CpuCtx *ctx, CpuIndex *ix, const uint64_t *jk, int64_t n)
{
	int64_t		distinct = 0,
				i,
				cap = 16;

	for (i = 0; i < n; i++)
		if (i == 0 || jk[i] != jk[i - 1])
			distinct++;
	while (cap < distinct * 2)
		cap <<= 1;
	ix->hmask = (uint64_t) cap - 1;
	ix->hkey = gdl_alloc(sizeof(uint64_t) * cap);
	ix->hstart = gdl_alloc(sizeof(int64_t) * cap);
	ix->hend = gdl_alloc(sizeof(int64_t) * cap);
	ix->bytes += cap * 24;
	for (i = 0; i < cap; i++)
		ix->hstart[i] = -1;
	i = 0;
	while (i < n)
	{
		int64_t		j = i + 1;
		uint64_t	h;

		while (j < n && jk[j] == jk[i])
			j++;
		h = mix64(jk[i]) & ix->hmask;
		while (ix->hstart[h] >= 0)
			h = (h + 1) & ix->hmask;
		ix->hkey[h] = jk[i];
		ix->hstart[h] = i;
		ix->hend[h] = j;
		i = j;
	}
}

/* Build an index of r over the key columns. */
static CpuIndex *
index_build(CpuCtx *ctx, CpuRel *r, int nkeys, const int *keys)
{
	CpuIndex   *ix = gdl_alloc(sizeof(CpuIndex));
	int64_t		n = r->n,
				i;
	int			total = 0,
				c;
	bool		identity;
	uint64_t   *jk;

	ix->nkeys = nkeys;
	if (nkeys > 0)
		memcpy(ix->keys, keys, sizeof(int) * nkeys);
	/* exact encoding of the key columns when their ranges fit in 62 bits */
	for (c = nkeys - 1; c >= 0; c--)
	{
		int64_t		lo = r->lo[keys[c]],
					hi = r->hi[keys[c]];

		if (n == 0 || lo > hi)
		{
			lo = 0;
			hi = 0;
		}
		ix->klo[c] = lo;
		ix->khi[c] = hi;
		ix->kshift[c] = (uint8_t) (total < 64 ? total : 63);
		total += bitlen((uint64_t) hi - (uint64_t) lo);
	}
	ix->hashed = total > 62;
	/* rows already in join-key order: a sorted packed prefix */
	identity = !ix->hashed && (r->is_set || r->sorted_cols >= nkeys);
	for (c = 0; c < nkeys && identity; c++)
		if (keys[c] != c)
			identity = false;
	if (nkeys == 0)
		identity = true;

	jk = gdl_alloc(sizeof(uint64_t) * (n > 0 ? n : 1));
	for (i = 0; i < n; i++)
		encode_key(ix, r, i, keys, &jk[i]);

	if (!ix->hashed)
	{
		uint64_t	kmax = 0;

		for (c = 0; c < nkeys; c++)
			kmax |= ((uint64_t) ix->khi[c] - (uint64_t) ix->klo[c]) << ix->kshift[c];
		if (kmax <= (uint64_t) (4 * n + 4096))
		{
			/* direct addressing: a counting sort gives the CSR */
			ix->direct = true;
			ix->ndirect = (int64_t) kmax + 1;
			ix->off = gdl_alloc(sizeof(int64_t) * (ix->ndirect + 1));
			ix->bytes += 8 * (ix->ndirect + 1);
			for (i = 0; i < n; i++)
				ix->off[jk[i] + 1]++;
			for (i = 0; i < ix->ndirect; i++)
				ix->off[i + 1] += ix->off[i];
			if (!identity)
			{
				int64_t    *pos = gdl_alloc(sizeof(int64_t) * (ix->ndirect + 1));

				memcpy(pos, ix->off, sizeof(int64_t) * (ix->ndirect + 1));
				ix->perm = gdl_alloc(sizeof(int64_t) * (n > 0 ? n : 1));
				ix->bytes += 8 * n;
				for (i = 0; i < n; i++)
					ix->perm[pos[jk[i]]++] = i;
				gdl_free(pos);
			}
			gdl_free(jk);
			return ix;
		}
	}
	if (!identity)
	{
		int			rowbits = bitlen((uint64_t) n);
		uint64_t	o = 0;

		for (i = 0; i < n; i++)
			o |= jk[i];
		ix->perm = gdl_alloc(sizeof(int64_t) * (n > 0 ? n : 1));
		ix->bytes += 8 * n;
		if (bitlen(o) + rowbits <= 64)
		{
			uint64_t   *tmp = gdl_alloc(sizeof(uint64_t) * (n > 0 ? n : 1));
			uint64_t   *s;
			uint64_t	rmask = rowbits == 0 ? 0 : (rowbits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << rowbits) - 1);

			for (i = 0; i < n; i++)
				jk[i] = (rowbits == 0 ? 0 : (jk[i] << rowbits)) | (uint64_t) i;
			s = cpu_sort_u64(ctx, jk, tmp, n);
			for (i = 0; i < n; i++)
			{
				ix->perm[i] = (int64_t) (s[i] & rmask);
				jk[i] = rowbits == 0 ? s[i] : s[i] >> rowbits;
			}
			gdl_free(tmp);
		}
		else
		{
			uint64_t   *tk = gdl_alloc(sizeof(uint64_t) * (n > 0 ? n : 1));
			int64_t    *tv = gdl_alloc(sizeof(int64_t) * (n > 0 ? n : 1));

			for (i = 0; i < n; i++)
				ix->perm[i] = i;
			cpu_sort_pairs(jk, ix->perm, tk, tv, n);
			gdl_free(tk);
			gdl_free(tv);
		}
	}
	index_build_hash(ctx, ix, jk, n);
	gdl_free(jk);
	return ix;
}

/* The index of r over the key columns, built on first use and cached. */
CpuIndex *
cpu_index_get(CpuCtx *ctx, CpuRel *r, int nkeys, const int *keys)
{
	CpuIndex   *ix;

	for (ix = r->indexes; ix; ix = ix->next)
		if (ix->nkeys == nkeys && (nkeys == 0 || memcmp(ix->keys, keys, sizeof(int) * nkeys) == 0))
			return ix;
	ix = index_build(ctx, r, nkeys, keys);
	ix->next = r->indexes;
	r->indexes = ix;
	cpu_account(ctx, ix->bytes);
	r->bytes += ix->bytes;
	return ix;
}

/* Free every index cached on r. */
void
cpu_index_free_all(CpuCtx *ctx, CpuRel *r)
{
	while (r->indexes)
	{
		CpuIndex   *ix = r->indexes;

		r->indexes = ix->next;
		gdl_free(ix->off);
		gdl_free(ix->hkey);
		gdl_free(ix->hstart);
		gdl_free(ix->hend);
		gdl_free(ix->perm);
		gdl_free(ix);
	}
}

/* Whether R's row p really has L's row i key values (hashed indexes). */
static inline bool
verify(const CpuRel *L, int64_t i, const int *lkeys, const CpuRel *R, int64_t p,
	   const int *rkeys, int nkeys)
{
	int			c;

	for (c = 0; c < nkeys; c++)
		if (cpu_get(L, i, lkeys[c]) != cpu_get(R, p, rkeys[c]))
			return false;
	return true;
}

/* Shared state of a parallel join. */
typedef struct JoinPar
{
	CpuRel	   *L;
	CpuRel	   *R;
	CpuIndex   *ix;
	const int  *lkeys;
	const int  *rkeys;
	int			nkeys;
	int			nout;
	const GdlBkColRef *out;
	int64_t		nchunks;
	atomic_long next;
	int64_t    *counts;			/* per chunk; then output offsets */
	bool		packed;
	CpuSchema	osch;
	uint64_t   *okeys;
	int64_t    *ocols[CPU_MAX_ARITY];
	bool		write;
	bool		fast;			/* all packed, exact key: join_chunk_packed */
	uint8_t    *keep;			/* antijoin: per left row */
} JoinPar;

/* Decoding of one column of a packed relation: ((key >> shift) & mask) + base. */
typedef struct ColDec
{
	uint8_t		shift;
	uint64_t	mask;
	uint64_t	base;
} ColDec;

/* How column c of packed relation r is decoded. */
static ColDec
col_dec(const CpuRel *r, int c)
{
	ColDec		d;
	const CpuSchema *s = &r->sch;

	d.shift = s->bits[c] == 0 ? 0 : s->shift[c];
	d.mask = s->bits[c] == 0 ? 0 : (s->bits[c] == 64 ? ~UINT64_C(0) : (UINT64_C(1) << s->bits[c]) - 1);
	d.base = (uint64_t) s->base[c];
	return d;
}

/*
 * The hot path: packed left, right and output, exact join key.  Output
 * columns are moved from key to key with shifts and masks only.
 */
static void
join_chunk_packed(JoinPar *jp, int64_t from, int64_t to, int64_t ch)
{
	const CpuRel *L = jp->L,
			   *R = jp->R;
	const CpuIndex *ix = jp->ix;
	const int64_t *perm = ix->perm;
	ColDec		lk[CPU_MAX_ARITY],
				lo[CPU_MAX_ARITY],
				ro[CPU_MAX_ARITY];
	uint64_t	lo_add[CPU_MAX_ARITY],
				ro_add[CPU_MAX_ARITY];
	uint8_t		lo_sh[CPU_MAX_ARITY],
				ro_sh[CPU_MAX_ARITY];
	int			nl = 0,
				nr = 0,
				nk = ix->nkeys,
				j,
				k;
	int64_t		i,
				cnt = 0,
				o = jp->write ? jp->counts[ch] : 0;
	const uint64_t *lkeys = L->keys,
			   *rkeys = R->keys;

	for (k = 0; k < nk; k++)
		lk[k] = col_dec(L, jp->lkeys[k]);
	for (j = 0; j < jp->nout; j++)
	{
		const CpuRel *src = jp->out[j].side == 0 ? L : R;
		ColDec		d = col_dec(src, jp->out[j].col);
		uint64_t	add = d.base - (uint64_t) jp->osch.base[j];
		uint8_t		sh = jp->osch.bits[j] == 0 ? 0 : jp->osch.shift[j];

		if (jp->osch.bits[j] == 0)
			continue;			/* a constant column: nothing to store */
		if (jp->out[j].side == 0)
		{
			lo[nl] = d;
			lo_add[nl] = add;
			lo_sh[nl++] = sh;
		}
		else
		{
			ro[nr] = d;
			ro_add[nr] = add;
			ro_sh[nr++] = sh;
		}
	}
	for (i = from; i < to; i++)
	{
		uint64_t	key = lkeys[i],
					jk = 0,
					lpart = 0;
		int64_t		s,
					e,
					q;
		bool		ok = true;

		for (k = 0; k < nk; k++)
		{
			int64_t		v = (int64_t) (((key >> lk[k].shift) & lk[k].mask) + lk[k].base);

			if (v < ix->klo[k] || v > ix->khi[k])
			{
				ok = false;
				break;
			}
			jk |= ((uint64_t) v - (uint64_t) ix->klo[k]) << ix->kshift[k];
		}
		if (!ok || !index_lookup(ix, jk, &s, &e))
			continue;
		if (!jp->write)
		{
			cnt += e - s;
			continue;
		}
		for (j = 0; j < nl; j++)
			lpart |= (((key >> lo[j].shift) & lo[j].mask) + lo_add[j]) << lo_sh[j];
		if (nr == 1 && perm == NULL)
		{
			ColDec		d = ro[0];
			uint64_t	add = ro_add[0];
			uint8_t		sh = ro_sh[0];
			uint64_t   *dst = jp->okeys + o;

			for (q = s; q < e; q++)
				dst[q - s] = lpart | ((((rkeys[q] >> d.shift) & d.mask) + add) << sh);
			o += e - s;
			continue;
		}
		for (q = s; q < e; q++)
		{
			uint64_t	rk = rkeys[perm ? perm[q] : q],
						out = lpart;

			for (j = 0; j < nr; j++)
				out |= (((rk >> ro[j].shift) & ro[j].mask) + ro_add[j]) << ro_sh[j];
			jp->okeys[o++] = out;
		}
	}
	if (!jp->write)
		jp->counts[ch] = cnt;
}

/* Task: count (or write) the output of left chunks taken in turn. */
static void
join_task(void *arg, int tid, int nt)
{
	JoinPar    *jp = arg;
	const CpuRel *L = jp->L,
			   *R = jp->R;
	const CpuIndex *ix = jp->ix;
	const int64_t *perm = ix->perm;
	int			nout = jp->nout;

	for (;;)
	{
		int64_t		ch = atomic_fetch_add(&jp->next, 1);
		int64_t		from,
					to,
					i,
					cnt = 0,
					o;

		if (ch >= jp->nchunks || gdl_interrupt_pending())
			break;				/* an interrupt: the caller raises (gdl_check_stop) */
		from = ch * JOIN_CHUNK;
		to = from + JOIN_CHUNK < L->n ? from + JOIN_CHUNK : L->n;
		if (jp->fast)
		{
			join_chunk_packed(jp, from, to, ch);
			continue;
		}
		o = jp->write ? jp->counts[ch] : 0;
		for (i = from; i < to; i++)
		{
			uint64_t	jk;
			int64_t		s,
						e,
						q;

			if (!encode_key(ix, L, i, jp->lkeys, &jk) || !index_lookup(ix, jk, &s, &e))
				continue;
			if (!jp->write)
			{
				if (!ix->hashed)
					cnt += e - s;
				else
					for (q = s; q < e; q++)
						cnt += verify(L, i, jp->lkeys, R, perm ? perm[q] : q, jp->rkeys, jp->nkeys);
				continue;
			}
			for (q = s; q < e; q++)
			{
				int64_t		p = perm ? perm[q] : q;
				int			j;

				if (ix->hashed && !verify(L, i, jp->lkeys, R, p, jp->rkeys, jp->nkeys))
					continue;
				if (jp->packed)
				{
					uint64_t	k = 0;

					for (j = 0; j < nout; j++)
						k |= cpu_enc(&jp->osch, j, jp->out[j].side == 0 ?
									 cpu_get(L, i, jp->out[j].col) : cpu_get(R, p, jp->out[j].col));
					jp->okeys[o] = k;
				}
				else
					for (j = 0; j < nout; j++)
						jp->ocols[j][o] = jp->out[j].side == 0 ?
							cpu_get(L, i, jp->out[j].col) : cpu_get(R, p, jp->out[j].col);
				o++;
			}
		}
		if (!jp->write)
			jp->counts[ch] = cnt;
	}
}

/* Check key column numbers against the arities. */
static int
check_keys(CpuCtx *ctx, CpuRel *L, CpuRel *R, int nkeys, const int *lkeys, const int *rkeys)
{
	int			k;

	if (nkeys < 0 || nkeys > CPU_MAX_ARITY)
		return cpu_fail(ctx, GDL_BK_ERR_INVALID, "bad number of join keys %d", nkeys);
	for (k = 0; k < nkeys; k++)
		if (lkeys[k] < 0 || lkeys[k] >= L->arity || rkeys[k] < 0 || rkeys[k] >= R->arity)
			return cpu_fail(ctx, GDL_BK_ERR_INVALID, "join key column out of range");
	return GDL_BK_OK;
}

/* A join's shared state for L, R and their key columns; the rest zero. */
static void
join_par_init(JoinPar *jp, CpuRel *L, CpuRel *R, int nkeys, const int *lkeys, const int *rkeys)
{
	memset(jp, 0, sizeof(*jp));
	jp->L = L;
	jp->R = R;
	jp->lkeys = lkeys;
	jp->rkeys = rkeys;
	jp->nkeys = nkeys;
}

/*
 * R's index on its keys and L split into chunks, a count per chunk: what
 * join and join_count both run join_task over.
 */
static void
join_par_chunks(CpuCtx *ctx, JoinPar *jp)
{
	jp->ix = cpu_index_get(ctx, jp->R, jp->nkeys, jp->rkeys);
	jp->nchunks = (jp->L->n + JOIN_CHUNK - 1) / JOIN_CHUNK;
	jp->counts = gdl_alloc(sizeof(int64_t) * jp->nchunks);
}

/*
 * One pass of join_task over L's chunks (counting, or writing when
 * jp->write), on every thread when there are several chunks.
 */
static void
join_pass(CpuCtx *ctx, JoinPar *jp)
{
	atomic_store(&jp->next, 0);
	gdl_parallel(jp->nchunks > 1 ? ctx->nthreads : 1, join_task, jp);
	gdl_check_stop();	/* stopped tasks leave partial results: raise */
}

/* Backend op: equi-join of L and R with projection. */
int
cpu_op_join(void *vctx, GdlBkRel *L, GdlBkRel *R, int nkeys, const int *lkeys,
			const int *rkeys, int nout, const GdlBkColRef *out, GdlBkRel **result)
{
	CpuCtx	   *ctx = vctx;
	JoinPar		jp;
	CpuRel	   *res;
	int64_t		total = 0,
				ch;
	int			j,
				st,
				sorted;

	*result = NULL;
	if ((st = check_keys(ctx, L, R, nkeys, lkeys, rkeys)) != GDL_BK_OK)
		return st;
	cpu_rel_flatten(ctx, L);
	cpu_rel_flatten(ctx, R);
	if (nout < 0 || nout > CPU_MAX_ARITY)
		return cpu_fail(ctx, GDL_BK_ERR_INVALID, "bad join output arity %d", nout);
	res = cpu_rel_new(ctx, nout);
	for (j = 0; j < nout; j++)
	{
		const CpuRel *src = out[j].side == 0 ? L : R;

		if (out[j].side < 0 || out[j].side > 1 || out[j].col < 0 || out[j].col >= src->arity)
		{
			cpu_rel_free(ctx, res);
			return cpu_fail(ctx, GDL_BK_ERR_INVALID, "join output column out of range");
		}
		res->lo[j] = src->lo[out[j].col];
		res->hi[j] = src->hi[out[j].col];
	}
	/* the output keeps the left order: sorted on a shared prefix of columns */
	for (sorted = 0; sorted < nout && sorted < L->sorted_cols; sorted++)
		if (out[sorted].side != 0 || out[sorted].col != sorted)
			break;
	res->sorted_cols = sorted;
	if (L->n == 0 || R->n == 0)
	{
		if (cpu_schema_make(nout, res->lo, res->hi, &res->sch))
			cpu_rel_alloc_keys(ctx, res, 0);
		else
			cpu_rel_alloc_cols(ctx, res, 0);
		*result = res;
		return GDL_BK_OK;
	}
	join_par_init(&jp, L, R, nkeys, lkeys, rkeys);
	join_par_chunks(ctx, &jp);
	jp.nout = nout;
	jp.out = out;
	jp.packed = cpu_schema_make(nout, res->lo, res->hi, &jp.osch);
	jp.fast = jp.packed && L->packed && R->packed && !jp.ix->hashed;
	join_pass(ctx, &jp);
	for (ch = 0; ch < jp.nchunks; ch++)
	{
		int64_t		c = jp.counts[ch];

		jp.counts[ch] = total;
		total += c;
	}
	if (jp.packed)
	{
		res->sch = jp.osch;
		cpu_rel_alloc_keys(ctx, res, total);
		jp.okeys = res->keys;
	}
	else
	{
		cpu_rel_alloc_cols(ctx, res, total);
		for (j = 0; j < nout; j++)
			jp.ocols[j] = res->cols[j];
	}
	jp.write = true;
	join_pass(ctx, &jp);
	res->n = total;
	gdl_free(jp.counts);
	*result = res;
	return GDL_BK_OK;
}

/* Backend op: the number of rows cpu_op_join would produce. */
int
cpu_op_join_count(void *vctx, GdlBkRel *L, GdlBkRel *R, int nkeys, const int *lkeys,
				  const int *rkeys, int64_t *count)
{
	CpuCtx	   *ctx = vctx;
	JoinPar		jp;
	int64_t		ch;
	int			st;

	*count = 0;
	if ((st = check_keys(ctx, L, R, nkeys, lkeys, rkeys)) != GDL_BK_OK)
		return st;
	cpu_rel_flatten(ctx, L);
	cpu_rel_flatten(ctx, R);
	if (L->n == 0 || R->n == 0)
		return GDL_BK_OK;
	join_par_init(&jp, L, R, nkeys, lkeys, rkeys);
	join_par_chunks(ctx, &jp);
	jp.packed = cpu_schema_make(0, NULL, NULL, &jp.osch);
	jp.fast = L->packed && R->packed && !jp.ix->hashed;
	join_pass(ctx, &jp);
	for (ch = 0; ch < jp.nchunks; ch++)
		*count += jp.counts[ch];
	gdl_free(jp.counts);
	return GDL_BK_OK;
}

/* Task: mark the left rows without a match. */
static void
anti_task(void *arg, int tid, int nt)
{
	JoinPar    *jp = arg;
	const CpuIndex *ix = jp->ix;
	int64_t		from,
				to,
				i;

	gdl_split(jp->L->n, tid, nt, &from, &to);
	for (i = from; i < to; i++)
	{
		uint64_t	jk;
		int64_t		s,
					e,
					q;
		bool		found = false;

		if (encode_key(ix, jp->L, i, jp->lkeys, &jk) && index_lookup(ix, jk, &s, &e))
		{
			if (!ix->hashed)
				found = true;
			else
				for (q = s; q < e && !found; q++)
					found = verify(jp->L, i, jp->lkeys, jp->R, ix->perm ? ix->perm[q] : q,
								   jp->rkeys, jp->nkeys);
		}
		jp->keep[i] = !found;
	}
}

/* Backend op: rows of L with no match in R. */
int
cpu_op_antijoin(void *vctx, GdlBkRel *L, GdlBkRel *R, int nkeys, const int *lkeys,
				const int *rkeys, GdlBkRel **result)
{
	CpuCtx	   *ctx = vctx;
	JoinPar		jp;
	CpuRel	   *res;
	int64_t		i,
				m = 0;
	int			c,
				st;

	*result = NULL;
	if ((st = check_keys(ctx, L, R, nkeys, lkeys, rkeys)) != GDL_BK_OK)
		return st;
	cpu_rel_flatten(ctx, L);
	cpu_rel_flatten(ctx, R);
	res = cpu_rel_like(ctx, L, L->n);
	join_par_init(&jp, L, R, nkeys, lkeys, rkeys);
	if (R->n > 0 && L->n > 0)
	{
		jp.ix = cpu_index_get(ctx, R, nkeys, rkeys);
		jp.keep = gdl_alloc(L->n);
		gdl_parallel(L->n > 65536 ? ctx->nthreads : 1, anti_task, &jp);
		gdl_check_stop();	/* stopped tasks leave partial results: raise */
	}
	for (i = 0; i < L->n; i++)
	{
		if (jp.keep && !jp.keep[i])
			continue;
		if (L->packed)
			res->keys[m] = L->keys[i];
		else
			for (c = 0; c < L->arity; c++)
				res->cols[c][m] = L->cols[c][i];
		m++;
	}
	gdl_free(jp.keep);
	cpu_rel_shrink(ctx, res, m);
	*result = res;
	return GDL_BK_OK;
}
