/*
 * run_tasks.c — the ILP task suite runner: for every task of
 * shared/data/ilp/tasks, learn the target f from the train world, evaluate
 * the learned program on the independent test world (to fixpoint, with the
 * Datalog engine when built in), and print test accuracy, time to learn and
 * the rules.
 *
 *   run_tasks [-d TASKS_DIR] [-b MAX_BODY] [-R] [-e EPOCHS] [-n REPEAT] [-v] [TASK...]
 *
 * -R turns recursion off; -n repeats learning and reports the median time.
 * Exit status 0 when every task is learned exactly except at most one.
 */
#include "ilp_data.h"
#include "../unit/test_host.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Options
{
	const char *dir;
	int			max_body;
	bool		recursive;
	int			epochs;
	int			repeat;
	bool		verbose;
	bool		own_eval;
} Options;

/* qsort comparator for task names. */
static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* qsort comparator for doubles. */
static int
cmp_dbl(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/* Learn once; the error raised, or NULL (kept apart from loops: setjmp). */
static __attribute__((noinline)) GdlError *
try_learn(const GdlIlpProblem *prob, const GdlIlpParams *params, const GdlIlpEvalHook *hook,
		  GdlIlpResult **res)
{
	return GDL_TRY(*res = gdl_ilp_learn(prob, params, hook));
}

/* Fraction of test examples the program classifies right. */
static double
test_accuracy(const Options *o, const IlpData *test, GdlDict *dict, const char *program,
			  const GdlType *types, int *tp, int *fp)
{
	IlpDataHookArg h;
	bool	   *dp = gdl_alloc(test->pos.nrows + 1);
	bool	   *dn = gdl_alloc(test->neg.nrows + 1);
	size_t		right = 0;

	memset(&h, 0, sizeof(h));
	h.data = test;
	h.dict = dict;
	h.target = "f";
	h.arity = test->arity;
	h.types[0] = types[0];
	h.types[1] = types[1];
	h.use_engine = !o->own_eval;
	ilp_data_hook(&h, program, "f", test->arity, &test->pos, dp);
	ilp_data_hook(&h, program, "f", test->arity, &test->neg, dn);
	*tp = *fp = 0;
	for (size_t i = 0; i < test->pos.nrows; i++)
	{
		right += dp[i] ? 1 : 0;
		*tp += dp[i] ? 1 : 0;
	}
	for (size_t i = 0; i < test->neg.nrows; i++)
	{
		right += dn[i] ? 0 : 1;
		*fp += dn[i] ? 1 : 0;
	}
	return (double) right / (double) (test->pos.nrows + test->neg.nrows);
}

/* Learn one task and judge it on its test world; returns the test accuracy. */
static double
run_task(const Options *o, const char *name, double *secs)
{
	char	   *tdir = gdl_sprintf("%s/%s/train", o->dir, name);
	char	   *vdir = gdl_sprintf("%s/%s/test", o->dir, name);
	GdlDict    *dict = gdl_dict_create();
	IlpData		train,
				test;
	GdlIlpProblem prob;
	GdlIlpParams params;
	GdlIlpEvalHook hook;
	IlpDataHookArg harg;
	GdlIlpResult *res = NULL;
	double	   *times = gdl_alloc(sizeof(double) * o->repeat);
	double		acc;
	int			tp,
				fp;
	GdlError   *err;

	if (!ilp_data_load_dir(tdir, dict, &train) || !ilp_data_load_dir(vdir, dict, &test))
	{
		printf("%-16s cannot load\n", name);
		return 0.0;
	}
	memset(&prob, 0, sizeof(prob));
	prob.nrels = train.nrels;
	prob.rels = train.rels;
	prob.target = "f";
	prob.arity = train.arity;
	prob.types[0] = train.ex_types[0];
	prob.types[1] = train.ex_types[1];
	prob.example_types[0] = train.ex_types[0];
	prob.example_types[1] = train.ex_types[1];
	prob.positives = &train.pos;
	prob.negatives = train.neg.nrows > 0 ? &train.neg : NULL;
	gdl_ilp_params_default(&params);
	params.max_body = o->max_body;
	params.allow_recursive = o->recursive;
	params.epochs = o->epochs;
	memset(&harg, 0, sizeof(harg));
	harg.data = &train;
	harg.dict = dict;
	harg.target = "f";
	harg.arity = train.arity;
	harg.types[0] = prob.types[0];
	harg.types[1] = prob.types[1];
	harg.use_engine = !o->own_eval;
	hook.fn = ilp_data_hook;
	hook.arg = &harg;

	for (int r = 0; r < o->repeat; r++)
	{
		double		t0 = ilp_data_now();

		err = try_learn(&prob, &params, &hook, &res);
		times[r] = ilp_data_now() - t0;
		if (err)
		{
			printf("%-16s error: %s\n", name, err->message);
			return 0.0;
		}
	}
	qsort(times, o->repeat, sizeof(double), cmp_dbl);
	*secs = times[o->repeat / 2];
	acc = test_accuracy(o, &test, dict, res->program, prob.types, &tp, &fp);
	printf("%-16s acc %.3f  (tp %d/%zu, fp %d/%zu)  %.3f s  %d rule%s\n", name, acc, tp,
		   test.pos.nrows, fp, test.neg.nrows, *secs, res->nrules, res->nrules == 1 ? "" : "s");
	for (int i = 0; i < res->nrules; i++)
	{
		printf("    %s", res->rules[i].rule);
		if (o->verbose)
			printf("   p=%.3f prec=%.3f rec=%.3f loss=%.3f hc=%.3f std=%.3f pca=%.3f",
				   res->rules[i].probability, res->rules[i].precision, res->rules[i].recall,
				   res->rules[i].loss, res->rules[i].head_coverage,
				   res->rules[i].std_confidence, res->rules[i].pca_confidence);
		printf("\n");
		if (res->rules[i].aux && o->verbose)
			printf("      aux: %s\n", res->rules[i].aux);
	}
	if (o->verbose)
		printf("    [%s; epochs %d, loss %.4f; %lld fixpoint calls]\n", res->message,
			   res->epochs, res->final_loss, (long long) harg.calls);
	return acc;
}

int
main(int argc, char **argv)
{
	Options		o = {"/work/shared/data/ilp/tasks", 3, true, 200, 1, false, false};
	int			opt;
	char	   *tasks[256];
	int			ntasks = 0,
				exact = 0;
	double		total = 0.0,
				worst = 0.0;

	while ((opt = getopt(argc, argv, "d:b:Re:n:vo")) != -1)
	{
		switch (opt)
		{
			case 'd':
				o.dir = optarg;
				break;
			case 'b':
				o.max_body = atoi(optarg);
				break;
			case 'R':
				o.recursive = false;
				break;
			case 'e':
				o.epochs = atoi(optarg);
				break;
			case 'n':
				o.repeat = atoi(optarg) > 0 ? atoi(optarg) : 1;
				break;
			case 'v':
				o.verbose = true;
				break;
			case 'o':
				o.own_eval = true;
				break;
			default:
				fprintf(stderr, "usage: %s [-d dir] [-b max_body] [-R] [-e epochs] [-n repeat] [-v] [-o] [task...]\n",
						argv[0]);
				return 2;
		}
	}
	gdl_test_host_install();
	if (!ilp_data_engine_available())
		o.own_eval = true;
	if (optind < argc)
		for (int i = optind; i < argc && ntasks < 256; i++)
			tasks[ntasks++] = argv[i];
	else
	{
		DIR		   *dh = opendir(o.dir);
		struct dirent *de;

		if (dh == NULL)
		{
			fprintf(stderr, "cannot open %s\n", o.dir);
			return 2;
		}
		while ((de = readdir(dh)) != NULL && ntasks < 256)
			if (de->d_name[0] != '.')
				tasks[ntasks++] = strdup(de->d_name);
		closedir(dh);
		qsort(tasks, ntasks, sizeof(char *), cmp_str);
	}
	printf("ILP task suite: max_body %d, recursion %s, epochs %d, evaluation by %s\n",
		   o.max_body, o.recursive ? "on" : "off", o.epochs,
		   o.own_eval ? "the ILP evaluator" : "the Datalog engine");
	for (int i = 0; i < ntasks; i++)
	{
		double		secs = 0.0;
		double		acc = run_task(&o, tasks[i], &secs);

		exact += acc >= 1.0 ? 1 : 0;
		total += secs;
		worst = secs > worst ? secs : worst;
		gdl_test_reset();
	}
	printf("exact on the test world: %d of %d; learning time total %.3f s, slowest %.3f s\n",
		   exact, ntasks, total, worst);
	if (optind >= argc)
		for (int i = 0; i < ntasks; i++)
			free(tasks[i]);
	return exact + 1 >= ntasks ? 0 : 1;
}
