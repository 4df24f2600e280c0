/*
 * cpu_rel.c — relations of the CPU backend: allocation, bounds, packed-key
 * schemas and conversions between the packed and wide layouts.
 */
#include "cpu_int.h"

#include <string.h>

/* Create an empty relation of the given arity and link it into the context. */
CpuRel *
cpu_rel_new(CpuCtx *ctx, int arity)
{
	CpuRel	   *r = gdl_alloc(sizeof(CpuRel));

	r->arity = arity;
	cpu_bounds_empty(arity, r->lo, r->hi);
	r->next = ctx->live;
	if (ctx->live)
		ctx->live->prev = r;
	ctx->live = r;
	return r;
}

/*
 * A buffer of at least 'bytes' bytes (contents undefined), reusing a freed
 * big buffer when one fits: its pages are mapped already, so reuse costs
 * no page faults.  *cap gets the real size.
 */
void *
cpu_buf_get(CpuCtx *ctx, int64_t bytes, int64_t *cap)
{
	int			i,
				best = -1,
				largest = -1;
	void	   *p;

	if (bytes < 8)
		bytes = 8;
	if (bytes >= CPU_POOL_MIN_BYTES)
	{
		for (i = 0; i < ctx->npool; i++)
		{
			if (ctx->pool[i].bytes >= bytes && ctx->pool[i].bytes <= 4 * bytes &&
				(best < 0 || ctx->pool[i].bytes < ctx->pool[best].bytes))
				best = i;
			if (largest < 0 || ctx->pool[i].bytes > ctx->pool[largest].bytes)
				largest = i;
		}
		if (best < 0 && largest >= 0 && ctx->pool[largest].bytes < bytes)
			best = largest;		/* too small: replaced by a bigger one below */
		if (best >= 0)
		{
			p = ctx->pool[best].p;
			*cap = ctx->pool[best].bytes;
			ctx->pool_bytes -= *cap;
			ctx->pool[best] = ctx->pool[--ctx->npool];
			if (*cap < bytes)
			{
				/*
				 * not realloc: it would copy the old contents, which nobody
				 * needs, into freshly faulted pages (glibc moves a block of
				 * the heap by copying it)
				 */
				gdl_free(p);
				p = gdl_alloc_uninit((size_t) bytes);
				*cap = bytes;
			}
			return p;
		}
	}
	*cap = bytes;
	return gdl_alloc_uninit((size_t) bytes);	/* written by the caller, huge pages */
}

/* Give a buffer back: big ones are kept for reuse, within limits. */
void
cpu_buf_put(CpuCtx *ctx, void *p, int64_t cap)
{
	int64_t		keep;

	if (p == NULL)
		return;
	if (cap < CPU_POOL_MIN_BYTES)
	{
		gdl_free(p);
		return;
	}
	if (ctx->npool == CPU_POOL_MAX)
	{
		int			i,
					small = 0;

		for (i = 1; i < ctx->npool; i++)
			if (ctx->pool[i].bytes < ctx->pool[small].bytes)
				small = i;
		ctx->pool_bytes -= ctx->pool[small].bytes;
		gdl_free(ctx->pool[small].p);
		ctx->pool[small] = ctx->pool[--ctx->npool];
	}
	ctx->pool[ctx->npool].p = p;
	ctx->pool[ctx->npool].bytes = cap;
	ctx->npool++;
	ctx->pool_bytes += cap;
	/*
	 * do not keep more idle memory than is in use, plus some slack; under a
	 * memory limit, at most a quarter of the room left (idle buffers count
	 * against the host's limit like live ones)
	 */
	keep = ctx->bytes > (INT64_C(512) << 20) ? ctx->bytes : (INT64_C(512) << 20);
	if (ctx->limit > 0)
	{
		int64_t		room = ctx->limit - ctx->bytes;

		room = room > 0 ? room / 4 : 0;
		if (room < keep)
			keep = room;
	}
	while (ctx->npool > 0 && ctx->pool_bytes > keep)
	{
		int			i,
					big = 0;

		for (i = 1; i < ctx->npool; i++)
			if (ctx->pool[i].bytes > ctx->pool[big].bytes)
				big = i;
		ctx->pool_bytes -= ctx->pool[big].bytes;
		gdl_free(ctx->pool[big].p);
		ctx->pool[big] = ctx->pool[--ctx->npool];
	}
}

/* Free every pooled buffer. */
void
cpu_pool_free_all(CpuCtx *ctx)
{
	while (ctx->npool > 0)
		gdl_free(ctx->pool[--ctx->npool].p);
	ctx->pool_bytes = 0;
}

/* Free a relation's buffers, its indexes and itself. */
void
cpu_rel_free(CpuCtx *ctx, CpuRel *r)
{
	int			c;

	if (r == NULL)
		return;
	cpu_index_free_all(ctx, r);
	if (r->prev)
		r->prev->next = r->next;
	else
		ctx->live = r->next;
	if (r->next)
		r->next->prev = r->prev;
	cpu_account(ctx, -r->bytes);
	if (r->nruns > 0)
	{
		for (c = 0; c < r->nruns; c++)
			cpu_run_unref(ctx, r->runs[c]);
	}
	else
		cpu_buf_put(ctx, r->keys, r->kcap);
	for (c = 0; c < r->arity; c++)
		cpu_buf_put(ctx, r->cols[c], r->ccap[c]);
	gdl_free(r);
}

/* A run with room for n keys, one reference. */
CpuRun *
cpu_run_new(CpuCtx *ctx, int64_t n)
{
	CpuRun	   *run = gdl_alloc(sizeof(CpuRun));

	run->keys = cpu_buf_get(ctx, n * (int64_t) sizeof(uint64_t), &run->cap);
	run->refs = 1;
	cpu_account(ctx, run->cap);
	return run;
}

/* Drop a reference to a run; the last one frees it. */
void
cpu_run_unref(CpuCtx *ctx, CpuRun *run)
{
	if (--run->refs > 0)
		return;
	cpu_account(ctx, -run->cap);
	cpu_buf_put(ctx, run->keys, run->cap);
	gdl_free(run);
}

/* Make r a packed relation with room for n keys. */
void
cpu_rel_alloc_keys(CpuCtx *ctx, CpuRel *r, int64_t n)
{
	r->packed = true;
	r->keys = cpu_buf_get(ctx, n * (int64_t) sizeof(uint64_t), &r->kcap);
	r->bytes += r->kcap;
	cpu_account(ctx, r->kcap);
}

/* Make r a wide relation with room for n rows per column. */
void
cpu_rel_alloc_cols(CpuCtx *ctx, CpuRel *r, int64_t n)
{
	int			c;

	r->packed = false;
	for (c = 0; c < r->arity; c++)
	{
		r->cols[c] = cpu_buf_get(ctx, n * (int64_t) sizeof(int64_t), &r->ccap[c]);
		r->bytes += r->ccap[c];
		cpu_account(ctx, r->ccap[c]);
	}
}

/* Resize one buffer to 'need' bytes when it is much bigger; returns the new cap. */
static int64_t
shrink_buf(CpuCtx *ctx, CpuRel *r, void **p, int64_t cap, int64_t need)
{
	if (need < 8)
		need = 8;
	if (need >= cap / 2 || (cap >= CPU_POOL_MIN_BYTES && need >= cap / 4))
		return cap;
	*p = gdl_realloc(*p, (size_t) need);
	r->bytes -= cap - need;
	cpu_account(ctx, need - cap);
	return need;
}

/* Set r->n and give back a large unused tail of its buffers. */
void
cpu_rel_shrink(CpuCtx *ctx, CpuRel *r, int64_t n)
{
	int			c;

	r->n = n;
	if (r->packed)
		r->kcap = shrink_buf(ctx, r, (void **) &r->keys, r->kcap, n * (int64_t) sizeof(uint64_t));
	else
		for (c = 0; c < r->arity; c++)
			r->ccap[c] = shrink_buf(ctx, r, (void **) &r->cols[c], r->ccap[c],
									n * (int64_t) sizeof(int64_t));
}

/* Bounds that contain no value. */
void
cpu_bounds_empty(int arity, int64_t *lo, int64_t *hi)
{
	int			c;

	for (c = 0; c < arity; c++)
	{
		lo[c] = INT64_MAX;
		hi[c] = INT64_MIN;
	}
}

/* Widen (lo, hi) to also contain (lo2, hi2). */
void
cpu_bounds_union(int arity, int64_t *lo, int64_t *hi,
				 const int64_t *lo2, const int64_t *hi2)
{
	int			c;

	for (c = 0; c < arity; c++)
	{
		if (lo2[c] < lo[c])
			lo[c] = lo2[c];
		if (hi2[c] > hi[c])
			hi[c] = hi2[c];
	}
}

/* Bits needed for an unsigned range. */
static int
bitlen(uint64_t v)
{
	return v == 0 ? 0 : 64 - __builtin_clzll(v);
}

/*
 * Choose the packing of columns with the given bounds: base 0 for
 * non-negative columns (so that schemas of related relations agree), the
 * minimum otherwise.  Returns false when the columns need more than 64 bits.
 */
bool
cpu_schema_make(int arity, const int64_t *lo, const int64_t *hi, CpuSchema *s)
{
	int			c;
	int			total = 0;

	memset(s, 0, sizeof(*s));
	s->arity = arity;
	for (c = 0; c < arity; c++)
	{
		if (lo[c] > hi[c])
		{
			s->base[c] = 0;
			s->bits[c] = 0;
			continue;
		}
		s->base[c] = lo[c] >= 0 ? 0 : lo[c];
		s->bits[c] = (uint8_t) bitlen((uint64_t) hi[c] - (uint64_t) s->base[c]);
		total += s->bits[c];
		if (total > 64)
			return false;
	}
	total = 0;
	for (c = arity - 1; c >= 0; c--)
	{
		s->shift[c] = (uint8_t) (total < 64 ? total : 63);
		total += s->bits[c];
	}
	return true;
}

/*
 * Whether keys packed with a and with b compare like their rows: the same
 * bases, and the same bits for every column but the leading one.
 */
bool
cpu_schema_compatible(const CpuSchema *a, const CpuSchema *b)
{
	int			c;

	if (a->arity != b->arity)
		return false;
	for (c = 0; c < a->arity; c++)
	{
		if (a->base[c] != b->base[c])
			return false;
		if (c > 0 && a->bits[c] != b->bits[c])
			return false;
	}
	return true;
}

/*
 * A relation from wide columns of n rows.  Bounds are computed when lo is
 * NULL.  Packs when the bounds allow.  With caps (the buffers' sizes) the
 * columns came from cpu_buf_get and are taken over (or given back); without,
 * they are copied.
 */
CpuRel *
cpu_rel_from_cols(CpuCtx *ctx, int arity, int64_t n, int64_t **cols,
				  const int64_t *caps, const int64_t *lo, const int64_t *hi)
{
	CpuRel	   *r = cpu_rel_new(ctx, arity);
	CpuSchema	s;
	int64_t		i;
	int			c;

	if (lo)
	{
		memcpy(r->lo, lo, sizeof(int64_t) * arity);
		memcpy(r->hi, hi, sizeof(int64_t) * arity);
	}
	else
	{
		for (c = 0; c < arity; c++)
			for (i = 0; i < n; i++)
			{
				if (cols[c][i] < r->lo[c])
					r->lo[c] = cols[c][i];
				if (cols[c][i] > r->hi[c])
					r->hi[c] = cols[c][i];
			}
	}
	if (cpu_schema_make(arity, r->lo, r->hi, &s))
	{
		r->sch = s;
		cpu_rel_alloc_keys(ctx, r, n);
		if (arity == 2)
		{
			/* the common binary case, without the per-column loop */
			for (i = 0; i < n; i++)
				r->keys[i] = cpu_enc(&s, 0, cols[0][i]) | cpu_enc(&s, 1, cols[1][i]);
		}
		else
			for (i = 0; i < n; i++)
			{
				uint64_t	k = 0;

				for (c = 0; c < arity; c++)
					k |= cpu_enc(&s, c, cols[c][i]);
				r->keys[i] = k;
			}
		r->n = n;
		if (caps)
			for (c = 0; c < arity; c++)
				cpu_buf_put(ctx, cols[c], caps[c]);
		return r;
	}
	if (caps)
	{
		r->packed = false;
		for (c = 0; c < arity; c++)
		{
			r->cols[c] = cols[c];
			r->ccap[c] = caps[c];
			r->bytes += caps[c];
			cpu_account(ctx, caps[c]);
		}
	}
	else
	{
		cpu_rel_alloc_cols(ctx, r, n);
		for (c = 0; c < arity; c++)
			memcpy(r->cols[c], cols[c], (size_t) n * sizeof(int64_t));
	}
	r->n = n;
	return r;
}

/* Extract column c of rows [from, from + n) into out. */
void
cpu_rel_decode_col(const CpuRel *r, int c, int64_t from, int64_t n, int64_t *out)
{
	int64_t		i;

	if (!r->packed)
	{
		memcpy(out, r->cols[c] + from, (size_t) n * sizeof(int64_t));
		return;
	}
	for (i = 0; i < n; i++)
		out[i] = cpu_get(r, from + i, c);
}

/* A packed copy of r in schema s (which must hold r's bounds); flags kept. */
CpuRel *
cpu_rel_repack(CpuCtx *ctx, const CpuRel *r, const CpuSchema *s)
{
	CpuRel	   *o = cpu_rel_new(ctx, r->arity);
	int64_t		i;
	int			c;

	memcpy(o->lo, r->lo, sizeof(r->lo));
	memcpy(o->hi, r->hi, sizeof(r->hi));
	o->sch = *s;
	cpu_rel_alloc_keys(ctx, o, r->n);
	for (i = 0; i < r->n; i++)
	{
		uint64_t	k = 0;

		for (c = 0; c < r->arity; c++)
			k |= cpu_enc(s, c, cpu_get(r, i, c));
		o->keys[i] = k;
	}
	o->n = r->n;
	o->is_set = r->is_set;
	o->sorted_cols = r->sorted_cols;
	return o;
}

/*
 * An empty relation shaped like r with room for n rows: r's arity, bounds,
 * set and sort flags, and layout (packed in r's schema, or wide).  The
 * start of every op whose result keeps rows of r as they are (a slice, an
 * anti-join).
 */
CpuRel *
cpu_rel_like(CpuCtx *ctx, const CpuRel *r, int64_t n)
{
	CpuRel	   *o = cpu_rel_new(ctx, r->arity);

	memcpy(o->lo, r->lo, sizeof(o->lo));
	memcpy(o->hi, r->hi, sizeof(o->hi));
	o->is_set = r->is_set;
	o->sorted_cols = r->sorted_cols;
	if (r->packed)
	{
		o->sch = r->sch;
		cpu_rel_alloc_keys(ctx, o, n);
	}
	else
		cpu_rel_alloc_cols(ctx, o, n);
	return o;
}

/* A wide copy of r; flags kept. */
CpuRel *
cpu_rel_widen(CpuCtx *ctx, const CpuRel *r)
{
	CpuRel	   *o = cpu_rel_new(ctx, r->arity);
	int			c;

	memcpy(o->lo, r->lo, sizeof(r->lo));
	memcpy(o->hi, r->hi, sizeof(r->hi));
	cpu_rel_alloc_cols(ctx, o, r->n);
	for (c = 0; c < r->arity; c++)
		cpu_rel_decode_col(r, c, 0, r->n, o->cols[c]);
	o->n = r->n;
	o->is_set = r->is_set;
	o->sorted_cols = r->sorted_cols;
	return o;
}
