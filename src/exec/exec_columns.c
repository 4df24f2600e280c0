/*
 * exec_columns.c — rows in columns as sorted runs: where the runs of
 * strictly ascending rows start, and whether a run holds a row (binary
 * search).  An answer of the CPU engine is one run; the GPU engine's
 * sorted-runs layout downloads run by run.  Maintained tables look rows
 * up in a freshly computed relation this way (src/maint/maint_diff.c).
 */
#include "gdl_engine.h"

/* Compare row r of the columns with 'row' (lexicographically): <0, 0, >0. */
static int
compare_row(const GdlColumns *rows, size_t r, const int64_t *row)
{
	int			c;

	for (c = 0; c < rows->ncols; c++)
		if (rows->cols[c][r] != row[c])
			return rows->cols[c][r] < row[c] ? -1 : 1;
	return 0;
}

/*
 * Split the rows into maximal runs of strictly ascending rows: starts[i]
 * is where run i begins, starts[nruns] = nrows.  Returns nruns (0 for no
 * rows), or -1 when there are more than max_runs (starts then holds the
 * first max_runs + 1 entries only).  starts has room for max_runs + 1.
 */
int
gdl_columns_sorted_runs(const GdlColumns *rows, size_t *starts, int max_runs)
{
	int			nruns = 0;
	size_t		r;

	if (rows->nrows == 0)
	{
		starts[0] = 0;
		return 0;
	}
	starts[nruns++] = 0;
	for (r = 1; r < rows->nrows; r++)
	{
		int			c;

		for (c = 0; c < rows->ncols; c++)
			if (rows->cols[c][r - 1] != rows->cols[c][r])
				break;
		if (c == rows->ncols || rows->cols[c][r - 1] > rows->cols[c][r])
		{
			if (nruns == max_runs)
				return -1;
			starts[nruns++] = r;
		}
	}
	starts[nruns] = rows->nrows;
	return nruns;
}

/*
 * The first row of the sorted run [lo, hi) not below 'row', searched from
 * position 'from' outward in doubling steps, then by halves: probes that
 * come in ascending order (a table read in the order it was written) cost a
 * few comparisons each near the last answer, not a search of the whole run.
 */
size_t
gdl_columns_run_seek(const GdlColumns *rows, size_t lo, size_t hi, size_t from, const int64_t *row)
{
	size_t		step = 1;
	size_t		a,
				b;

	if (from < lo)
		from = lo;
	if (from > hi)
		from = hi;
	if (from < hi && compare_row(rows, from, row) < 0)
	{
		/* forward: rows[a] < row; the answer lies in (a, b] */
		a = from;
		b = a + step;
		while (b < hi && compare_row(rows, b, row) < 0)
		{
			a = b;
			step *= 2;
			b = (hi - a > step) ? a + step : hi;
		}
		lo = a + 1;
		hi = b < hi ? b : hi;
	}
	else
	{
		/* backward: rows[b] >= row (or b == hi); the answer lies in (a, b] */
		b = from;
		for (;;)
		{
			if (b == lo)
				return lo;
			a = (b - lo > step) ? b - step : lo;
			if (compare_row(rows, a, row) < 0)
				break;
			b = a;
			step *= 2;
		}
		lo = a + 1;
		hi = b;
	}
	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (compare_row(rows, mid, row) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Does row r of the rows equal 'row'? */
bool
gdl_columns_row_equals(const GdlColumns *rows, size_t r, const int64_t *row)
{
	return compare_row(rows, r, row) == 0;
}

/* Does the sorted run [lo, hi) of the rows hold 'row'?  Binary search. */
bool
gdl_columns_run_has(const GdlColumns *rows, size_t lo, size_t hi, const int64_t *row)
{
	size_t		at = gdl_columns_run_seek(rows, lo, hi, lo, row);

	return at < hi && compare_row(rows, at, row) == 0;
}
