/*
 * ilp_adam.c — the optimiser: Adam over candidate logits, and the epoch loop
 * that trains candidate probabilities p = sigmoid(w) on the noisy-or loss.
 *
 * Every candidate starts at the same logit (ILP_W0, a small probability), so
 * the start is deterministic; a candidate whose logit ends above the start
 * was pushed up by the data.  Training stops early once the loss, checked
 * every ILP_STALL_EVERY epochs, no longer moves.  The coverage matrix is built once and never changes across epochs.
 * With a device registered (ilp_device.c) and a large matrix, the same
 * epochs run there instead.
 */
#include "ilp_int.h"

#include <math.h>

#define ILP_W0			(-3.0)	/* initial logit: p = 0.047 */
#define ILP_STALL_EVERY 10		/* epochs between loss checks */
#define ILP_STALL_TOL	1e-6	/* relative loss change over them that ends training */

/* Set up Adam for n parameters with the usual betas. */
void
ilp_adam_init(IlpAdam *a, int32_t n, double lr)
{
	a->n = n;
	a->lr = lr;
	a->beta1 = 0.9;
	a->beta2 = 0.999;
	a->eps = 1e-8;
	a->t = 0;
	a->m = gdl_alloc(sizeof(double) * (n + 1));
	a->v = gdl_alloc(sizeof(double) * (n + 1));
}

/* One Adam step: w -= lr * mhat / (sqrt(vhat) + eps). */
void
ilp_adam_step(IlpAdam *a, double *w, const double *g)
{
	double		b1t,
				b2t;

	a->t++;
	b1t = 1.0 - pow(a->beta1, (double) a->t);
	b2t = 1.0 - pow(a->beta2, (double) a->t);
	for (int32_t i = 0; i < a->n; i++)
	{
		double		mh,
					vh;

		a->m[i] = a->beta1 * a->m[i] + (1.0 - a->beta1) * g[i];
		a->v[i] = a->beta2 * a->v[i] + (1.0 - a->beta2) * g[i] * g[i];
		mh = a->m[i] / b1t;
		vh = a->v[i] / b2t;
		w[i] -= a->lr * mh / (sqrt(vh) + a->eps);
	}
}

/* Release the moment vectors. */
void
ilp_adam_free(IlpAdam *a)
{
	gdl_free(a->m);
	gdl_free(a->v);
	a->m = a->v = NULL;
}

/* The logistic function. */
static double
sigmoid(double x)
{
	return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}

/*
 * Train the probabilities of the matrix's candidates for up to 'epochs'
 * epochs; out->prob receives the final probabilities, out->loss the loss
 * at them, out->epochs the epochs run.
 */
void
ilp_train(const IlpCsr *m, int32_t npos, int epochs, double lr, IlpTrainOut *out)
{
	int32_t		n = m->ncols;
	double	   *w = gdl_alloc(sizeof(double) * (n + 1));
	double	   *g = gdl_alloc(sizeof(double) * (n + 1));
	double	   *p = gdl_alloc(sizeof(double) * (n + 1));
	double		prev = INFINITY;
	int			e;
	IlpAdam		adam;

	out->on_device = false;
	if (ilp_train_device(m, npos, epochs, lr, ILP_W0, ILP_STALL_EVERY, ILP_STALL_TOL, out))
	{
		gdl_free(w);
		gdl_free(g);
		gdl_free(p);
		return;
	}
	ilp_adam_init(&adam, n, lr);
	for (int32_t c = 0; c < n; c++)
	{
		w[c] = ILP_W0;
		p[c] = sigmoid(w[c]);
	}
	for (e = 0; e < epochs; e++)
	{
		bool		check = e % ILP_STALL_EVERY == 0;
		double		loss;

		gdl_check_interrupts();
		loss = ilp_loss_grad_w(m, npos, p, g, check);
		ilp_adam_step(&adam, w, g);
		for (int32_t c = 0; c < n; c++)
			p[c] = sigmoid(w[c]);
		if (!check)
			continue;
		ilp_progress("training", e, loss);
		if (fabs(prev - loss) <= ILP_STALL_TOL * (1.0 + fabs(loss)))
		{
			e++;
			break;
		}
		prev = loss;
	}
	out->epochs = e;
	out->loss = ilp_loss_forward(m, npos, p, NULL);
	out->prob = p;
	ilp_adam_free(&adam);
	gdl_free(w);
	gdl_free(g);
}

/* The probability every candidate starts from. */
double
ilp_initial_prob(void)
{
	return sigmoid(ILP_W0);
}
