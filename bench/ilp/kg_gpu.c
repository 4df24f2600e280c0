/*
 * kg_gpu.c — rule learning at knowledge-graph scale, CPU against GPU.
 *
 * Generates a synthetic knowledge graph deterministically: E entities in T
 * types (E / T each), R binary relations of F facts each between two types
 * (1,000,000 facts with the defaults).  The first 60% of the relations are
 * random; each of the others is planted from them — a composition
 * t(X, Y) :- a(X, Z), b(Z, Y), an inverse t(X, Y) :- a(Y, X), or a
 * restriction t(X, Y) :- a(X, Y), c(Y, W) — with 10% of its facts replaced
 * by noise.  Then, for every relation as the target (the others as
 * background, its facts the positives, negatives by partial completeness),
 * gdl_ilp_learn scores every rule of up to max_body (2) atoms: one stage,
 * no deepening, so the whole bias is enumerated, covered and trained.
 *
 * Each target is learned with the CPU trainer and (with -g LIB) again with
 * the GPU trainer of cuda/ilp.cu; the two must select the same rules.  It
 * reports per phase (candidates + coverage, training, selection) the time,
 * candidates per second and epochs per second.
 *
 *   kg_gpu [-e ENTITIES] [-t TYPES] [-r RELATIONS] [-f FACTS_PER_REL]
 *          [-b MAX_BODY] [-E EPOCHS] [-s FIRST] [-n TARGETS] [-g CUDA_LIB] [-c] [-v]
 *   -c: skip the CPU trainer (GPU only)
 *
 * With -S it scores instead: from the facts, every rule of the bias for
 * every target (ilp_score_targets: one base world and one adjacency for the
 * graph, per target its examples and the bulk coverage of ilp_bulk.c), on
 * the CPU and on the GPU, timed in all (world building included) and per
 * phase, and checks that both give the same candidates and coverage; -P
 * also scores the first target the standalone way (its own world and
 * adjacency) and checks it agrees.  -R turns the bulk coverage off for
 * learning (the per-rule joins of before).
 *
 * With -T ROWS:COLS:PER_ROW it benchmarks training alone instead: a random
 * coverage matrix of ROWS examples (a fifth positives) and COLS candidates
 * with PER_ROW candidates per example on average, trained for -E epochs on
 * the CPU and on the GPU (upload included), reporting epochs per second and
 * candidate-epochs per second, and the largest probability difference.
 */
#include "../../test/unit/test_host.h"
#include "../../src/ilp/ilp_int.h"
#include "../../src/ilp/gdl_ilp_device.h"

#include <dlfcn.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/int_opts.h"
#include "../common/kg_synth.h"

/* gdl_ilp_learn under GDL_TRY, in a frame of its own (setjmp). */
static GdlError *
try_learn(const GdlIlpProblem *prob, const GdlIlpParams *params, GdlIlpResult **res)
{
	return GDL_TRY(*res = gdl_ilp_learn(prob, params, NULL));
}

/* Per-mode totals. */
typedef struct ModeTotals
{
	double		total_s;
	GdlIlpTimings t;
	int			planted_found;
	int			planted;
	int			errors;
} ModeTotals;

/* Learn every target in one mode; results go to res[] (may be NULL). */
static void
run_mode(KgRel *rels, int first, int ntargets, const GdlIlpParams *params, bool gpu, bool verbose,
		 ModeTotals *mt, char **programs)
{
	GdlType		types[2] = {GDL_TYPE_BIGINT, GDL_TYPE_BIGINT};
	GdlIlpRelation *bg = malloc(sizeof(GdlIlpRelation) * nrels);

	memset(mt, 0, sizeof(*mt));
	memset(&gdl_ilp_timings, 0, sizeof(gdl_ilp_timings));
	gdl_ilp_set_device_mode(gpu ? GDL_ILP_DEVICE_ALWAYS : GDL_ILP_DEVICE_NEVER);
	for (int r = first; r < first + ntargets; r++)
	{
		GdlIlpProblem prob;
		GdlIlpResult *res = NULL;
		GdlError   *err;
		GdlColumns	pos;
		int64_t    *pc[2];
		int			nb = 0;
		double		t0;

		for (int q = 0; q < nrels; q++)
		{
			if (q == r)
				continue;
			bg[nb].name = rels[q].name;
			bg[nb].arity = 2;
			bg[nb].types[0] = bg[nb].types[1] = GDL_TYPE_BIGINT;
			bg[nb].rows.ncols = 2;
			bg[nb].rows.nrows = rels[q].n;
			bg[nb].rows.cols = gdl_alloc(sizeof(int64_t *) * 2);
			bg[nb].rows.cols[0] = rels[q].a;
			bg[nb].rows.cols[1] = rels[q].b;
			nb++;
		}
		pc[0] = rels[r].a;
		pc[1] = rels[r].b;
		pos.ncols = 2;
		pos.nrows = rels[r].n;
		pos.cols = pc;
		memset(&prob, 0, sizeof(prob));
		prob.nrels = nb;
		prob.rels = bg;
		prob.target = rels[r].name;
		prob.arity = 2;
		prob.types[0] = types[0];
		prob.types[1] = types[1];
		prob.example_types[0] = prob.example_types[1] = GDL_TYPE_UNKNOWN;
		prob.positives = &pos;
		t0 = now_s();
		err = try_learn(&prob, params, &res);
		mt->total_s += now_s() - t0;
		if (err)
		{
			printf("  %s: error: %s\n", rels[r].name, err->message);
			mt->errors++;
			gdl_test_reset();
			continue;
		}
		if (rels[r].planted[0])
		{
			mt->planted++;
			/* recovered: the program explains the planted 90% with precision */
			if (res->train_recall >= 0.85 && res->train_precision >= 0.9)
				mt->planted_found++;
		}
		if (programs)
			programs[r] = strdup(res->program);
		if (verbose)
			printf("  %s [%s] %.2fs: %s\n    planted: %s\n    learned: %s\n", rels[r].name,
				   gpu ? "gpu" : "cpu", now_s() - t0, res->message,
				   rels[r].planted[0] ? rels[r].planted : "(none)",
				   res->nrules > 0 ? res->rules[0].rule : "(none)");
		gdl_test_reset();
	}
	mt->t = gdl_ilp_timings;
	free(bg);
}

/* A fingerprint of a candidate set: its rules and their coverage. */
static uint64_t
cands_hash(const IlpCandSet *cs)
{
	uint64_t	h = ilp_mix64((uint64_t) cs->n);

	for (int32_t i = 0; i < cs->n; i++)
	{
		const IlpCand *c = &cs->c[i];

		h = ilp_mix64(h ^ ((uint64_t) c->rule.nlits << 16 | (uint64_t) c->rule.natoms << 8 |
						   (uint64_t) c->rule.nvars));
		for (int k = 0; k < c->rule.nlits; k++)
			h = ilp_mix64(h ^ ((uint64_t) (uint16_t) c->rule.lits[k].pred << 16 |
							   (uint64_t) (uint8_t) c->rule.lits[k].a << 8 |
							   (uint64_t) (uint8_t) c->rule.lits[k].b));
		h = ilp_mix64(h ^ (uint64_t) c->ncov);
		for (int32_t k = 0; k < c->ncov; k++)
			h = ilp_mix64(h ^ (uint64_t) c->cov[k]);
	}
	return h;
}

/* What the scoring benchmark (-S) gathers per backend. */
typedef struct ScoreRun
{
	double		total_s;		/* KG facts to every target scored */
	double		world_s;		/* of which building worlds (base once, each target's) */
	GdlIlpTimings t;
	int64_t		nodes;			/* bias rules whose coverage the search used */
	int64_t		cands;			/* candidates kept */
	int64_t		nex;			/* examples */
	int			ntargets;
	uint64_t   *hash;			/* per target (in order) */
} ScoreRun;

/* ilp_score_targets callback: count and fingerprint. */
static void
score_one(void *arg, int pred, const IlpWorld *w, const IlpCandSet *cs)
{
	ScoreRun   *sr = arg;

	sr->nodes += cs->nodes;
	sr->cands += cs->n;
	sr->nex += w->npos + w->nneg;
	sr->hash[sr->ntargets++] = cands_hash(cs);
}

/* ilp_score_targets under GDL_TRY. */
static GdlError *
try_score(const GdlIlpRelation *bg, const int *targets, int ntargets, const IlpBias *bias,
		  const IlpNegSpec *neg, ScoreRun *sr)
{
	return GDL_TRY(ilp_score_targets(bg, nrels, targets, ntargets, bias, neg, score_one, sr,
									 &sr->world_s));
}

/*
 * Score every rule of up to max_body atoms for every target (-S), from the
 * KG facts: ilp_score_targets builds the base world and the adjacency once,
 * then per target its examples and the coverage of the whole bias, on the
 * CPU and, with a device, on the GPU; the candidates and their coverage
 * must be the same.  With check (-P), the first target is also scored the
 * standalone way (ilp_world_build of the others, its own bulk input) and
 * must agree.
 */
static int
score_bench(KgRel *rels, int first, int ntargets, const GdlIlpParams *params, bool skip_cpu,
			bool check)
{
	GdlIlpRelation *bg = calloc(nrels, sizeof(GdlIlpRelation));
	int64_t   **cols = calloc(2 * nrels, sizeof(int64_t *));
	int		   *targets = calloc(ntargets, sizeof(int));
	IlpBias		bias = {params->max_body, false, false, true, 1, 20000000};
	IlpNegSpec	neg = {GDL_ILP_NEG_PCA, 4, params->max_body, 0};
	ScoreRun	run[2];
	int			rc = 0;

	for (int q = 0; q < nrels; q++)
	{
		bg[q].name = rels[q].name;
		bg[q].arity = 2;
		bg[q].types[0] = bg[q].types[1] = GDL_TYPE_BIGINT;
		bg[q].rows.ncols = 2;
		bg[q].rows.nrows = rels[q].n;
		bg[q].rows.cols = cols + 2 * q;
		cols[2 * q] = rels[q].a;
		cols[2 * q + 1] = rels[q].b;
	}
	for (int i = 0; i < ntargets; i++)
		targets[i] = first + i;
	memset(run, 0, sizeof(run));
	printf("scoring every rule of up to %d body atoms for %d targets, from the facts "
		   "(%d threads on the CPU)\n", params->max_body, ntargets, (int) sysconf(_SC_NPROCESSORS_ONLN));
	for (int mode = 0; mode < 2; mode++)
	{
		ScoreRun   *sr = &run[mode];
		GdlError   *err;
		double		t0,
					bulk_cpu;

		if ((mode == 0 && skip_cpu) || (mode == 1 && gdl_ilp_device() == NULL))
			continue;
		sr->hash = calloc(ntargets, sizeof(uint64_t));
		gdl_ilp_set_device_mode(mode == 1 ? GDL_ILP_DEVICE_ALWAYS : GDL_ILP_DEVICE_NEVER);
		memset(&gdl_ilp_timings, 0, sizeof(gdl_ilp_timings));
		t0 = now_s();
		err = try_score(bg, targets, ntargets, &bias, &neg, sr);
		sr->total_s = now_s() - t0;
		sr->t = gdl_ilp_timings;
		if (err != NULL)
		{
			printf("%s: error: %s\n", mode ? "gpu" : "cpu", err->message);
			gdl_test_reset();
			return 1;
		}
		bulk_cpu = sr->t.bulk_s - sr->t.bulk_device_s;
		printf("%-4s TOTAL %.3f s for %d targets (%.3g rules scored/s, %.3g rules with coverage/s): "
			   "worlds %.3f s (base once + each target's examples), adjacency once %.3f s, "
			   "bulk coverage %.3f s (device %.3f s, %lld of %lld on the device; host %.3f s, "
			   "of which CPU sort %.3f s), search over it %.3f s | %lld examples, %lld entries, "
			   "%lld rules with coverage, %lld bias rules scored, %lld candidates, %lld rules joined apart\n",
			   mode ? "gpu" : "cpu", sr->total_s, sr->ntargets, sr->nodes / sr->total_s,
			   sr->t.bulk_keys / sr->total_s, sr->world_s, sr->t.bulk_graph_s, sr->t.bulk_s,
			   sr->t.bulk_device_s, (long long) sr->t.bulk_device, (long long) sr->t.bulk_builds,
			   bulk_cpu, sr->t.bulk_sort_s,
			   sr->total_s - sr->world_s - sr->t.bulk_graph_s - sr->t.bulk_s,
			   (long long) sr->nex, (long long) sr->t.bulk_entries, (long long) sr->t.bulk_keys,
			   (long long) sr->nodes, (long long) sr->cands, (long long) sr->t.bulk_misses);
		if (mode == 1 && sr->t.bulk_device < sr->t.bulk_builds)
			printf("gpu: not every bulk coverage on the device: %s\n", sr->t.last_device_error);
		gdl_test_reset();
	}
	if (run[0].hash != NULL && run[1].hash != NULL)
	{
		int			same = 0;

		for (int i = 0; i < ntargets; i++)
			same += run[0].hash[i] == run[1].hash[i];
		printf("same candidates and coverage on CPU and GPU: %d of %d targets; speed-up %.2fx\n",
			   same, ntargets, run[0].total_s / run[1].total_s);
		rc |= same != ntargets;
	}
	if (check)
	{
		/* the first target the standalone way: world from the others, own bulk input */
		GdlIlpProblem prob;
		GdlColumns	pos;
		IlpWorld   *w;
		IlpCandSet *cs;
		double		t0 = now_s(),
					tw;
		uint64_t	h,
					want = run[skip_cpu ? 1 : 0].hash ? run[skip_cpu ? 1 : 0].hash[0] : 0;

		memset(&prob, 0, sizeof(prob));
		prob.nrels = nrels - 1;
		prob.rels = calloc(nrels, sizeof(GdlIlpRelation));
		for (int q = 0, k = 0; q < nrels; q++)
			if (q != first)
				((GdlIlpRelation *) prob.rels)[k++] = bg[q];
		pos = bg[first].rows;
		prob.target = rels[first].name;
		prob.arity = 2;
		prob.types[0] = prob.types[1] = GDL_TYPE_BIGINT;
		prob.example_types[0] = prob.example_types[1] = GDL_TYPE_UNKNOWN;
		prob.positives = &pos;
		w = ilp_world_build(&prob, true, false, &neg);
		tw = now_s() - t0;
		cs = ilp_candidates(w, &bias);
		h = cands_hash(cs);
		printf("%s standalone (own world %.2f s, own adjacency; %.2f s in all): same candidates "
			   "and coverage as the shared graph: %s\n", rels[first].name, tw, now_s() - t0,
			   h == want ? "yes" : "NO");
		rc |= h != want;
		free((void *) prob.rels);
		gdl_test_reset();
	}
	free(bg);
	free(cols);
	free(targets);
	return rc;
}

/* Train a random matrix on the CPU and on the device (-T). */
static int
train_bench(const char *spec, int epochs, bool skip_cpu)
{
	int			rows = 0,
				cols = 0,
				per = 0;
	int32_t    *ncov;
	int32_t   **cov;
	IlpCsr	   *m;
	IlpTrainOut cpu,
				gpu;
	double		t0,
				tc = 0,
				tg;
	double		worst = 0;

	if (sscanf(spec, "%d:%d:%d", &rows, &cols, &per) != 3 || rows < 1 || cols < 1 || per < 1)
	{
		fprintf(stderr, "-T wants ROWS:COLS:PER_ROW\n");
		return 2;
	}
	/* coverage lists: candidate c covers each example with probability per/cols */
	ncov = calloc(cols, sizeof(int32_t));
	cov = calloc(cols, sizeof(int32_t *));
	{
		int32_t    *cap = calloc(cols, sizeof(int32_t));

		for (int32_t r = 0; r < rows; r++)
		{
			int			k = 1 + (int) (next_rand() % (uint64_t) (2 * per - 1));

			for (int j = 0; j < k; j++)
			{
				/* skewed: low ids are general candidates */
				uint64_t	u = next_rand();
				int32_t		c = (int32_t) ((u % (uint64_t) cols) * ((u >> 40) % 1024) / 1024);

				if (ncov[c] > 0 && cov[c][ncov[c] - 1] == r)
					continue;
				if (ncov[c] == cap[c])
				{
					cap[c] = cap[c] ? cap[c] * 2 : 8;
					cov[c] = realloc(cov[c], sizeof(int32_t) * cap[c]);
				}
				cov[c][ncov[c]++] = r;
			}
		}
		free(cap);
	}
	m = ilp_csr_build(rows, cols, ncov, cov);
	for (int32_t c = 0; c < cols; c++)
		free(cov[c]);
	free(cov);
	free(ncov);
	printf("training: %d examples, %d candidates, %lld entries, %d epochs at most\n", rows, cols,
		   (long long) m->off[rows], epochs);
	if (!skip_cpu)
	{
		gdl_ilp_set_device_mode(GDL_ILP_DEVICE_NEVER);
		t0 = now_s();
		ilp_train(m, rows / 5, epochs, 0.1, &cpu);
		tc = now_s() - t0;
		printf("cpu: %d epochs in %.3f s: %.1f epochs/s, %.3g candidate-epochs/s, loss %.6f\n",
			   cpu.epochs, tc, cpu.epochs / tc, (double) cols * cpu.epochs / tc, cpu.loss);
	}
	if (gdl_ilp_device() == NULL)
		return 0;
	gdl_ilp_set_device_mode(GDL_ILP_DEVICE_ALWAYS);
	for (int rep = 0; rep < 2; rep++)	/* the first pays CUDA's start-up */
	{
		t0 = now_s();
		ilp_train(m, rows / 5, epochs, 0.1, &gpu);
		tg = now_s() - t0;
		if (!gpu.on_device)
		{
			printf("gpu: failed: %s\n", gdl_ilp_timings.last_device_error);
			return 1;
		}
		printf("gpu%s: %d epochs in %.3f s (upload and transpose included): %.1f epochs/s, "
			   "%.3g candidate-epochs/s, loss %.6f\n", rep == 0 ? " (cold)" : "",
			   gpu.epochs, tg, gpu.epochs / tg, (double) cols * gpu.epochs / tg, gpu.loss);
	}
	if (!skip_cpu)
	{
		for (int32_t c = 0; c < cols; c++)
		{
			double		d = fabs(cpu.prob[c] - gpu.prob[c]) / fmax(1.0, fabs(cpu.prob[c]));

			worst = fmax(worst, d);
		}
		printf("cpu vs gpu: same epochs %s, max probability difference %.2g, "
			   "loss difference %.2g; speed-up %.1fx\n", cpu.epochs == gpu.epochs ? "yes" : "NO",
			   worst, fabs(cpu.loss - gpu.loss) / fmax(1.0, fabs(cpu.loss)), tc / tg);
	}
	return 0;
}

/* Print one mode's line. */
static void
report(const char *name, const ModeTotals *m)
{
	printf("%-4s total %8.2f s | candidates+coverage %8.2f s (%lld bias rules covered, %.0f/s) | train %8.3f s "
		   "(%lld candidates, %lld nnz, %lld epochs: %.0f candidates/s, %.1f epochs/s, "
		   "%.3g candidate-epochs/s) | select %6.2f s | planted targets recovered (recall >= 0.85, precision >= 0.9) %d/%d | errors %d\n",
		   name, m->total_s, m->t.candidates_s, (long long) m->t.nodes,
		   m->t.candidates_s > 0 ? m->t.nodes / m->t.candidates_s : 0, m->t.train_s, (long long) m->t.candidates,
		   (long long) m->t.nnz, (long long) m->t.epochs,
		   m->t.train_s > 0 ? m->t.candidates / m->t.train_s : 0,
		   m->t.train_s > 0 ? m->t.epochs / m->t.train_s : 0,
		   m->t.train_s > 0 ? m->t.cand_epochs / m->t.train_s : 0,
		   m->t.select_s, m->planted_found, m->planted, m->errors);
}

int
main(int argc, char **argv)
{
	GdlIlpParams params;
	const char *lib = NULL;
	const char *tspec = NULL;
	int			ntargets = -1,
				first = 0;
	bool		skip_cpu = false,
				verbose = false,
				score = false,
				per_rule = false;
	int			opt;
	KgRel	   *rels;
	int64_t		total = 0;
	double		t0;
	ModeTotals	cpu,
				gpu;
	char	  **pc,
			  **pg;
	const BenchIntOpt int_opts[] = {
		{'e', &nent}, {'t', &ntypes}, {'r', &nrels}, {'f', &nfacts},
		{'b', &params.max_body}, {'E', &params.epochs}, {'n', &ntargets}, {'s', &first},
		{0, NULL}
	};

	gdl_test_host_install();
	gdl_ilp_params_default(&params);
	params.max_body = 2;
	params.deepen = false;
	while ((opt = bench_getopt(argc, argv, "e:t:r:f:b:E:n:s:g:cvT:SPR", int_opts)) != -1)
	{
		switch (opt)
		{
			case 'g':
				lib = optarg;
				break;
			case 'c':
				skip_cpu = true;
				break;
			case 'v':
				verbose = true;
				break;
			case 'T':
				tspec = optarg;
				break;
			case 'S':
				score = true;
				break;
			case 'P':
				per_rule = true;
				break;
			case 'R':
				gdl_ilp_set_bulk(false);
				break;
			default:
				fprintf(stderr, "usage: kg_gpu [-e N] [-t N] [-r N] [-f N] [-b N] [-E N] "
						"[-s N] [-n N] [-g LIB] [-c] [-v] [-T R:C:K] [-S [-P]] [-R]\n");
				return 2;
		}
	}
	if (lib != NULL)
	{
		void	   *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		GdlIlpDeviceEntryFn entry = h ? (GdlIlpDeviceEntryFn) dlsym(h, GDL_ILP_DEVICE_ENTRY_SYMBOL) : NULL;

		if (entry == NULL)
		{
			printf("gpu: cannot load %s: %s\n", lib, h ? "no entry" : dlerror());
			return 1;
		}
		gdl_ilp_register_device(entry());
	}
	if (tspec != NULL)
		return train_bench(tspec, params.epochs, skip_cpu);
	if (first < 0 || first >= nrels)
		first = 0;
	if (ntargets < 0 || ntargets > nrels - first)
		ntargets = nrels - first;
	t0 = now_s();
	rels = make_kg();
	for (int r = 0; r < nrels; r++)
		total += rels[r].n;
	printf("synthetic KG: %d entities in %d types, %d relations, %lld facts (%.2f s to generate)\n",
		   nent, ntypes, nrels, (long long) total, now_s() - t0);
	if (score)
		return score_bench(rels, first, ntargets, &params, skip_cpu, per_rule);
	printf("learning targets r%d..r%d, max_body %d, %d epochs, every candidate (no deepening)\n",
		   first, first + ntargets - 1, params.max_body, params.epochs);
	pc = calloc(nrels, sizeof(char *));
	pg = calloc(nrels, sizeof(char *));
	memset(&cpu, 0, sizeof(cpu));
	memset(&gpu, 0, sizeof(gpu));
	if (!skip_cpu)
	{
		run_mode(rels, first, ntargets, &params, false, verbose, &cpu, pc);
		report("cpu", &cpu);
	}
	if (gdl_ilp_device() != NULL)
	{
		run_mode(rels, first, ntargets, &params, true, verbose, &gpu, pg);
		report("gpu", &gpu);
		if (gpu.t.cpu_trainings > 0)
			printf("gpu: %lld trainings fell back to the CPU (%s)\n",
				   (long long) gpu.t.cpu_trainings, gpu.t.last_device_error);
		if (!skip_cpu)
		{
			int			same = 0;

			for (int r = first; r < first + ntargets; r++)
				same += pc[r] && pg[r] && strcmp(pc[r], pg[r]) == 0;
			printf("same learned program on CPU and GPU: %d of %d targets\n", same, ntargets);
			if (gpu.t.train_s > 0)
				printf("training speed-up: %.1fx; whole run: %.2fx\n",
					   cpu.t.train_s / gpu.t.train_s, cpu.total_s / gpu.total_s);
		}
	}
	return 0;
}
