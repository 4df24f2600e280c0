/*
 * ilp_loss.c — the noisy-or likelihood of the examples, forward and backward.
 *
 * With candidate probabilities p_c, an example e derived by the candidates
 * C(e) (a row of the example x candidate CSR matrix) has probability
 *   P(e) = 1 - q(e),  q(e) = prod over c in C(e) of (1 - p_c)
 * and the loss is
 *   L = - sum_pos log max(P, eps) - wneg * sum_neg log max(q, eps)
 * (wneg = 1 unless the negatives are a weighted sample)
 * so an uncovered positive costs -log(eps) and an uncovered negative nothing.
 *
 * Two gradients: with respect to the probabilities (for gpudl_loss_grad; the
 * exact derivative of L, zero where the clamp is active), and with respect
 * to the logits w (p = sigmoid(w)) for training, in the closed forms
 *   dL/dw_c = -p_c q / P   (each positive)      dL/dw_c = p_c   (each negative)
 * which need no division by a small number and keep a signal even where the
 * clamp is active.  Forward is a gather over the rows; backward a scatter.
 */
#include "ilp_int.h"

#include <math.h>

/* Longest row of the matrix (scratch size for leave-one-out products). */
static int64_t
max_row(const IlpCsr *m)
{
	int64_t		mx = 0;

	for (int32_t r = 0; r < m->nrows; r++)
		if (m->off[r + 1] - m->off[r] > mx)
			mx = m->off[r + 1] - m->off[r];
	return mx;
}

/* q(e) = prod (1 - p_c) over the row of e. */
static double
row_q(const IlpCsr *m, int32_t r, const double *p)
{
	double		q = 1.0;

	for (int64_t k = m->off[r]; k < m->off[r + 1]; k++)
		q *= 1.0 - p[m->idx[k]];
	return q;
}

/* The loss contribution of one example given q (negatives weighted). */
static double
example_loss(const IlpCsr *m, bool positive, double q)
{
	double		x = positive ? 1.0 - q : q;

	return -log(x > GDL_ILP_EPS ? x : GDL_ILP_EPS) * (positive ? 1.0 : m->wneg);
}

/* Loss of all examples; P[e] receives each example's probability when not NULL. */
double
ilp_loss_forward(const IlpCsr *m, int32_t npos, const double *p, double *P)
{
	double		loss = 0.0;

	for (int32_t r = 0; r < m->nrows; r++)
	{
		double		q = row_q(m, r, p);

		if (P != NULL)
			P[r] = 1.0 - q;
		loss += example_loss(m, r < npos, q);
	}
	return loss;
}

/*
 * Loss and its gradient with respect to the probabilities, grad[ncols]
 * (overwritten).  Leave-one-out products come from prefix and suffix
 * products of each row, so p_c = 1 needs no special case.
 */
double
ilp_loss_grad_p(const IlpCsr *m, int32_t npos, const double *p, double *grad)
{
	double		loss = 0.0;
	int64_t		mx = max_row(m);
	double	   *pre = gdl_alloc(sizeof(double) * (mx + 1));

	for (int32_t c = 0; c < m->ncols; c++)
		grad[c] = 0.0;
	for (int32_t r = 0; r < m->nrows; r++)
	{
		int64_t		o = m->off[r];
		int64_t		len = m->off[r + 1] - o;
		double		q = row_q(m, r, p);
		bool		positive = r < npos;
		double		suf = 1.0;

		loss += example_loss(m, positive, q);
		if (positive ? 1.0 - q <= GDL_ILP_EPS : q <= GDL_ILP_EPS)
			continue;			/* the clamp is active: flat */
		pre[0] = 1.0;
		for (int64_t k = 0; k < len; k++)
			pre[k + 1] = pre[k] * (1.0 - p[m->idx[o + k]]);
		for (int64_t k = len - 1; k >= 0; k--)
		{
			double		loo = pre[k] * suf;	/* prod over the others */

			if (positive)
				grad[m->idx[o + k]] -= loo / (1.0 - q);
			else
				grad[m->idx[o + k]] += m->wneg * loo / q;
			suf *= 1.0 - p[m->idx[o + k]];
		}
		if ((r & 65535) == 65535)
			gdl_check_interrupts();
	}
	gdl_free(pre);
	return loss;
}

/*
 * Gradient with respect to the logits, grad[ncols] (overwritten); returns
 * the loss when want_loss, else 0 (the logarithms are most of the cost).
 */
double
ilp_loss_grad_w(const IlpCsr *m, int32_t npos, const double *p, double *grad, bool want_loss)
{
	double		loss = 0.0;

	for (int32_t c = 0; c < m->ncols; c++)
		grad[c] = 0.0;
	for (int32_t r = 0; r < m->nrows; r++)
	{
		double		q = row_q(m, r, p);
		double		P = 1.0 - q;

		if (want_loss)
			loss += example_loss(m, r < npos, q);
		if (r < npos)
		{
			double		f;

			if (P <= 0.0)
				continue;
			f = q / P;
			for (int64_t k = m->off[r]; k < m->off[r + 1]; k++)
				grad[m->idx[k]] -= p[m->idx[k]] * f;
		}
		else
		{
			for (int64_t k = m->off[r]; k < m->off[r + 1]; k++)
				grad[m->idx[k]] += m->wneg * p[m->idx[k]];
		}
	}
	return loss;
}
