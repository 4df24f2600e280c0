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
	gdl_free(r->keys);
	for (c = 0; c < r->arity; c++)
		gdl_free(r->cols[c]);
	cpu_account(ctx, -r->bytes);
	gdl_free(r);
}

/* Make r a packed relation with room for n keys. */
void
cpu_rel_alloc_keys(CpuCtx *ctx, CpuRel *r, int64_t n)
{
	r->packed = true;
	r->keys = gdl_alloc((size_t) (n > 0 ? n : 1) * sizeof(uint64_t));
	r->bytes += (n > 0 ? n : 1) * (int64_t) sizeof(uint64_t);
	cpu_account(ctx, (n > 0 ? n : 1) * (int64_t) sizeof(uint64_t));
}

/* Make r a wide relation with room for n rows per column. */
void
cpu_rel_alloc_cols(CpuCtx *ctx, CpuRel *r, int64_t n)
{
	int			c;

	r->packed = false;
	for (c = 0; c < r->arity; c++)
	{
		r->cols[c] = gdl_alloc((size_t) (n > 0 ? n : 1) * sizeof(int64_t));
		r->bytes += (n > 0 ? n : 1) * (int64_t) sizeof(int64_t);
		cpu_account(ctx, (n > 0 ? n : 1) * (int64_t) sizeof(int64_t));
	}
}

/* Set r->n and give back the unused tail of its buffers. */
void
cpu_rel_shrink(CpuCtx *ctx, CpuRel *r, int64_t n)
{
	int64_t		m = n > 0 ? n : 1;
	int64_t		nb;
	int			c;

	r->n = n;
	if (r->packed)
	{
		nb = m * (int64_t) sizeof(uint64_t);
		if (nb < r->bytes)
			r->keys = gdl_realloc(r->keys, (size_t) nb);
	}
	else
	{
		nb = m * (int64_t) sizeof(int64_t) * r->arity;
		if (nb < r->bytes)
			for (c = 0; c < r->arity; c++)
				r->cols[c] = gdl_realloc(r->cols[c], (size_t) m * sizeof(int64_t));
	}
	if (nb < r->bytes)
	{
		cpu_account(ctx, nb - r->bytes);
		r->bytes = nb;
	}
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
 * NULL.  Packs when the bounds allow.  With 'owned' the columns were
 * gdl_alloc'ed by the caller and are taken over (or freed); else copied.
 */
CpuRel *
cpu_rel_from_cols(CpuCtx *ctx, int arity, int64_t n, int64_t **cols,
				  const int64_t *lo, const int64_t *hi, bool owned)
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
		for (i = 0; i < n; i++)
		{
			uint64_t	k = 0;

			for (c = 0; c < arity; c++)
				k |= cpu_enc(&s, c, cols[c][i]);
			r->keys[i] = k;
		}
		r->n = n;
		if (owned)
			for (c = 0; c < arity; c++)
				gdl_free(cols[c]);
		return r;
	}
	if (owned)
	{
		r->packed = false;
		for (c = 0; c < arity; c++)
			r->cols[c] = cols[c];
		r->bytes = (n > 0 ? n : 1) * (int64_t) sizeof(int64_t) * arity;
		cpu_account(ctx, r->bytes);
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
