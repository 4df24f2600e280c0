/*
 * exec_part_xchg.c — moving tuples between the partitions of a partitioned
 * run (issue 14): the owner of a tuple is the hash of one of its columns
 * modulo the partitions; an exchange sends every row of each partition's
 * relation to the partition that owns it (or, for a replicated layout, to
 * every partition).
 *
 * This is the HOST exchange: rows are downloaded from their partition's
 * context, bucketed by owner on the host and uploaded into the owners'
 * contexts (on the CPU backend both are memcpy).  It serves the CPU, several
 * partitions on one GPU, and several GPUs of a backend without a device
 * exchange.  The device exchange over NCCL (cuda/nccl_comm.cu: counts
 * first, then rows, with grouped ncclSend/ncclRecv per peer) has the same
 * shape; docs/DESIGN.md says what remains to wire it in.
 */
#include "exec_part_int.h"

#include <string.h>

/* The partition that owns value v (a 64-bit mix, so that ids in steps spread). */
int
part_owner(int64_t v, int P)
{
	uint64_t	h = (uint64_t) v;

	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return (int) (h % (uint64_t) P);
}

/* Host columns for n rows (arity arrays plus the NULL the engine ends them with). */
static int64_t **
host_cols(int arity, int64_t n)
{
	int64_t   **c = gdl_alloc(sizeof(int64_t *) * (arity + 1));
	int			k;

	for (k = 0; k < arity; k++)
		c[k] = gdl_alloc(sizeof(int64_t) * (n > 0 ? n : 1));
	return c;
}

static void
free_cols(int64_t **c, int arity)
{
	int			k;

	if (c == NULL)
		return;
	for (k = 0; k < arity; k++)
		gdl_free(c[k]);
	gdl_free(c);
}

/*
 * Route the rows of src[s] (NULL: none) by column 'key' (-1: every row to
 * every partition) into new bags dst[d] in each partition's context.  The
 * sources are not released.  Charges each partition's exchange time, and
 * rows and bytes that cross between partitions.
 */
void
part_exchange(PartRun *pr, GdlBkRel *const *src, int arity, int key, GdlBkRel **dst)
{
	int			P = pr->P,
				s,
				d,
				k;
	int64_t    *n = gdl_alloc(sizeof(int64_t) * P);
	int64_t   **cnt = gdl_alloc(sizeof(int64_t *) * P);	/* cnt[s][d] */
	int64_t  ***rows = gdl_alloc(sizeof(int64_t **) * P);
	int		  **owner = gdl_alloc(sizeof(int *) * P);
	int64_t    *fill = gdl_alloc(sizeof(int64_t) * P);

	/* every partition's rows to the host, each row's owner */
	for (s = 0; s < P; s++)
	{
		double		t0 = gdl_now_ms();
		int64_t		r;

		cnt[s] = gdl_alloc(sizeof(int64_t) * P);
		if (src[s] == NULL)
			continue;
		part_select(pr, s);
		n[s] = exec_size(&pr->es[s], src[s]);
		if (n[s] == 0)
			continue;
		rows[s] = host_cols(arity, n[s]);
		exec_check(&pr->es[s], pr->bk->download(pr->es[s].ctx, src[s], rows[s]), "exchange");
		if (key >= 0)
		{
			owner[s] = gdl_alloc(sizeof(int) * n[s]);
			for (r = 0; r < n[s]; r++)
			{
				owner[s][r] = part_owner(rows[s][key][r], P);
				cnt[s][owner[s][r]]++;
			}
		}
		else
			for (d = 0; d < P; d++)
				cnt[s][d] = n[s];
		pr->ps[s].ms_exchange += gdl_now_ms() - t0;
	}
	/* each owner's rows, from every partition, into its context */
	for (d = 0; d < P; d++)
	{
		double		t0 = gdl_now_ms();
		int64_t		tot = 0,
					r;
		int64_t   **out;

		for (s = 0; s < P; s++)
			tot += cnt[s][d];
		out = host_cols(arity, tot);
		memset(fill, 0, sizeof(int64_t) * P);
		tot = 0;
		for (s = 0; s < P; s++)
		{
			if (cnt[s][d] == 0)
				continue;
			if (key < 0)
			{
				for (k = 0; k < arity; k++)
					memcpy(out[k] + tot, rows[s][k], sizeof(int64_t) * n[s]);
				tot += n[s];
			}
			else
				for (r = 0; r < n[s]; r++)
					if (owner[s][r] == d)
					{
						for (k = 0; k < arity; k++)
							out[k][tot] = rows[s][k][r];
						tot++;
					}
			if (s != d)
			{
				pr->ps[s].rows_sent += cnt[s][d];
				pr->ps[s].bytes_sent += cnt[s][d] * arity * (int64_t) sizeof(int64_t);
				pr->ps[d].rows_received += cnt[s][d];
				pr->ps[d].bytes_received += cnt[s][d] * arity * (int64_t) sizeof(int64_t);
			}
		}
		dst[d] = part_upload(pr, d, arity, tot, out);
		free_cols(out, arity);
		pr->ps[d].ms_exchange += gdl_now_ms() - t0;
	}
	for (s = 0; s < P; s++)
	{
		free_cols(rows[s], arity);
		gdl_free(owner[s]);
		gdl_free(cnt[s]);
	}
	gdl_free(n);
	gdl_free(cnt);
	gdl_free(rows);
	gdl_free(owner);
	gdl_free(fill);
}

/*
 * Host columns of a table split by column 'key' (-1: all rows to every
 * partition), uploaded as bags dst[p] into each partition's context.
 */
void
part_split_host(PartRun *pr, const GdlColumns *cols, int key, GdlBkRel **dst)
{
	int			P = pr->P,
				arity = cols->ncols,
				p,
				k;
	int64_t		n = (int64_t) cols->nrows,
				r;
	int		   *owner = NULL;
	int64_t    *cnt = gdl_alloc(sizeof(int64_t) * P);

	if (key < 0)
	{
		for (p = 0; p < P; p++)
			dst[p] = part_upload(pr, p, arity, n, cols->cols);
		gdl_free(cnt);
		return;
	}
	owner = gdl_alloc(sizeof(int) * (n > 0 ? n : 1));
	for (r = 0; r < n; r++)
	{
		owner[r] = part_owner(cols->cols[key][r], P);
		cnt[owner[r]]++;
	}
	for (p = 0; p < P; p++)
	{
		int64_t   **out = host_cols(arity, cnt[p]);
		int64_t		m = 0;

		for (r = 0; r < n; r++)
			if (owner[r] == p)
			{
				for (k = 0; k < arity; k++)
					out[k][m] = cols->cols[k][r];
				m++;
			}
		dst[p] = part_upload(pr, p, arity, m, out);
		free_cols(out, arity);
	}
	gdl_free(owner);
	gdl_free(cnt);
}
