/*
 * bench_mine.c — knowledge-graph rule mining (src/mine), CPU against GPU.
 *
 * Generates the synthetic graph of bench/ilp/kg_gpu.c deterministically (the
 * same generator, copied): E entities in T types, R binary relations of F
 * facts each between two types; the first 60% random, each of the others
 * planted from them (a composition, an inverse or a restriction) with 10%
 * noise.  Or reads a TSV graph (subject, relation, object per line, e.g.
 * kinship) with -k FILE.  Then mines every rule of up to max_body atoms for
 * every relation (gdl_mine) and prints the phase times, the rules found, the
 * candidates measured and a fingerprint of the rule set (with every
 * measure), so that CPU and GPU runs can be compared; with -g both run and
 * the fingerprints must agree.
 *
 *   bench_mine [-e ENTITIES] [-t TYPES] [-r RELATIONS] [-f FACTS_PER_REL]
 *              [-k TSV_FILE] [-b MAX_BODY] [-H MIN_HEAD_COVERAGE]
 *              [-C MIN_PCA_CONFIDENCE] [-s MIN_SUPPORT] [-T THREADS]
 *              [-g CUDA_LIB] [-c] [-K] [-B MAX_BODY_CONSTANTS]
 *              [-h CONSTANTS_MIN_HEAD_COVERAGE] [-A MAX_SECONDS] [-q QUERIES] [-v]
 *   -c: GPU only (skip the CPU run); -K: also rules with constants
 *   (options.constants; counted on the CPU for either device), -B and -h
 *   their own bounds; -A: anytime mining within MAX_SECONDS; -q: then
 *   answer QUERIES random queries r(s, ?) / r(?, o) (of the graph's facts,
 *   half each way) with the last run's rules on every thread
 *   (gdl_predict_many, max aggregation) and print the time; -v: print the rules
 */
#include "../../test/unit/test_host.h"
#include "../../src/mine/gdl_mine.h"
#include "../../src/mine/gdl_mine_device.h"

#include <dlfcn.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/kg_synth.h"

/* Read a TSV graph: subject, relation, object; names become ids. */
static KgRel *
read_tsv(const char *path)
{
	FILE	   *f = fopen(path, "r");
	char		line[4096];
	char	  **ents = NULL;
	int			nents = 0,
				cape = 0;
	KgRel	   *rels = calloc(1024, sizeof(KgRel));

	if (!f)
	{
		perror(path);
		exit(2);
	}
	nrels = 0;
	while (fgets(line, sizeof(line), f))
	{
		char	   *s = strtok(line, "\t\r\n"),
				   *p = strtok(NULL, "\t\r\n"),
				   *o = strtok(NULL, "\t\r\n");
		int64_t		id[2];
		char	   *nm[2] = {s, o};
		int			r;

		if (!s || !p || !o)
			continue;
		for (int k = 0; k < 2; k++)
		{
			int			e;

			for (e = 0; e < nents && strcmp(ents[e], nm[k]) != 0; e++)
				;
			if (e == nents)
			{
				if (nents == cape)
				{
					cape = cape ? cape * 2 : 256;
					ents = realloc(ents, sizeof(char *) * cape);
				}
				ents[nents++] = strdup(nm[k]);
			}
			id[k] = e;
		}
		for (r = 0; r < nrels && strcmp(rels[r].name, p) != 0; r++)
			;
		if (r == nrels)
		{
			if (nrels == 1024 || strlen(p) >= sizeof(rels[r].name))
			{
				fprintf(stderr, "%s: more than 1024 relations, or a name of %zu bytes\n", path, strlen(p));
				exit(2);
			}
			snprintf(rels[r].name, sizeof(rels[r].name), "%s", p);
			nrels++;
		}
		if (rels[r].n == rels[r].cap)
		{
			rels[r].cap = rels[r].cap ? rels[r].cap * 2 : 64;
			rels[r].a = realloc(rels[r].a, sizeof(int64_t) * rels[r].cap);
			rels[r].b = realloc(rels[r].b, sizeof(int64_t) * rels[r].cap);
		}
		rels[r].a[rels[r].n] = id[0];
		rels[r].b[rels[r].n] = id[1];
		rels[r].n++;
	}
	fclose(f);
	nent = nents;
	return rels;
}

/* FNV-style fingerprint of the rule set and every measure. */
static uint64_t
fingerprint(const GdlMineResult *res)
{
	uint64_t	h = 1469598103934665603ULL;

	for (int64_t i = 0; i < res->nrules; i++)
	{
		const GdlMineRule *r = &res->rules[i];
		int64_t		v[6 + 4 * GDL_MINE_MAX_BODY];
		int			n = 0;

		v[n++] = r->head;
		if (r->head_const != GDL_MINE_HEAD_VARS)
		{
			v[n++] = r->head_const;
			v[n++] = r->head_value;
		}
		v[n++] = r->support;
		v[n++] = r->body_size;
		v[n++] = r->pca_body_size;
		for (int k = 0; k < r->nbody; k++)
		{
			v[n++] = r->body[k].rel;
			v[n++] = r->body[k].a;
			v[n++] = r->body[k].b;
			if (r->body[k].a == GDL_MINE_C || r->body[k].b == GDL_MINE_C)
				v[n++] = r->body[k].value;
		}
		for (int k = 0; k < n; k++)
		{
			h ^= (uint64_t) v[k];
			h *= 1099511628211ULL;
		}
	}
	return h;
}

/* gdl_mine under GDL_TRY. */
static GdlError *
try_mine(const GdlMineGraph *g, const GdlMineOptions *o, GdlMineResult **res)
{
	return GDL_TRY(*res = gdl_mine(g, o));
}

static GdlMineResult *last_result;	/* the last run's rules, for -q */

/* One mining run: print times and counts; returns the fingerprint. */
static uint64_t
run_one(const char *label, const GdlMineGraph *g, const GdlMineOptions *o, bool verbose)
{
	GdlMineResult *res = NULL;
	GdlError   *e = try_mine(g, o, &res);
	int64_t		bylen[4] = {0};
	uint64_t	fp;

	if (e)
	{
		printf("%s: error: %s\n", label, e->message);
		return 0;
	}
	for (int64_t i = 0; i < res->nrules; i++)
		bylen[res->rules[i].nbody]++;
	fp = fingerprint(res);
	last_result = res;
	if (res->timed_out)
		printf("%s: max_seconds ran out: complete up to %d body atoms (%d with constants)\n", label,
			   res->complete_body, res->complete_body_constants);
	printf("%s: enumerate %.3fs  measures %.3fs  index %.3fs  constants %.3fs  total %.3fs\n", label,
		   res->times.enumerate, res->times.measures, res->times.index, res->times.constants,
		   res->times.total);
	printf("%s: rules %ld (%ld/%ld/%ld of 1/2/3 atoms)  candidates %ld  fingerprint %016llx\n",
		   label, (long) res->nrules, (long) bylen[1], (long) bylen[2], (long) bylen[3],
		   (long) res->candidates, (unsigned long long) fp);
	if (verbose)
		for (int64_t i = 0; i < res->nrules; i++)
			printf("  %-60s sup %ld hc %.3f std %.3f pca %.3f\n", gdl_mine_rule_text(g, &res->rules[i]),
				   (long) res->rules[i].support, res->rules[i].head_coverage,
				   res->rules[i].std_confidence, res->rules[i].pca_confidence);
	return fp;
}

/*
 * Answer nq random queries (each a random fact's subject or object, half
 * each way) with res's rules of the query's relation, on every thread.
 */
static void
run_queries(const GdlMineGraph *g, const KgRel *kg, const GdlMineResult *res, int64_t nq)
{
	GdlPredictJob *jobs = calloc(nq + 1, sizeof(GdlPredictJob));
	int64_t    *from = calloc(nrels + 1, sizeof(int64_t));
	int64_t    *to = calloc(nrels + 1, sizeof(int64_t));
	GdlPredictOptions po;
	uint64_t	seed = 0x9E3779B97F4A7C15ull;
	int64_t		nj = 0,
				answers = 0,
				with = 0;
	double		t0;

	for (int64_t i = res->nrules - 1; i >= 0; i--)
		from[res->rules[i].head] = i;
	for (int64_t i = 0; i < res->nrules; i++)
		to[res->rules[i].head] = i + 1;
	gdl_predict_options_init(&po);
	po.use_pca = false;
	po.smoothing = 20;
	po.exclude_known = true;
	po.limit = 100;
	for (int64_t q = 0; q < nq; q++)
	{
		int			r;
		int64_t		f;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		r = (int) ((seed >> 33) % (uint64_t) nrels);
		if (kg[r].n == 0)
			continue;
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		f = (int64_t) ((seed >> 33) % (uint64_t) kg[r].n);
		jobs[nj].rules = res->rules + from[r];
		jobs[nj].nrules = to[r] > from[r] ? to[r] - from[r] : 0;
		jobs[nj].q.rel = r;
		jobs[nj].q.subject_bound = q % 2 == 0;
		jobs[nj].q.value = q % 2 == 0 ? kg[r].a[f] : kg[r].b[f];
		nj++;
	}
	t0 = now_s();
	gdl_predict_many(g, jobs, nj, &po);
	for (int64_t j = 0; j < nj; j++)
	{
		answers += jobs[j].res->nanswers;
		with += jobs[j].res->nanswers > 0;
		gdl_predict_result_free(jobs[j].res);
	}
	printf("predict: %ld queries (%ld with answers), %ld answers (at most 100 each) in %.3fs on %d threads\n",
		   (long) nj, (long) with, (long) answers, now_s() - t0, gdl_threads());
	free(jobs);
	free(from);
	free(to);
}

int
main(int argc, char **argv)
{
	GdlMineOptions o;
	const char *lib = NULL,
			   *tsv = NULL;
	bool		gpu_only = false,
				verbose = false;
	int			opt;
	KgRel	   *kg;
	GdlMineRelation *rels;
	GdlMineGraph *g;
	double		t0;
	int64_t		total = 0;
	uint64_t	fcpu = 0,
				fgpu = 0;
	int64_t		nqueries = 0;

	gdl_test_host_install();
	gdl_mine_options_init(&o);
	while ((opt = getopt(argc, argv, "e:t:r:f:k:b:H:C:s:T:g:cKB:h:A:q:v")) != -1)
	{
		switch (opt)
		{
			case 'e': nent = atoi(optarg); break;
			case 't': ntypes = atoi(optarg); break;
			case 'r': nrels = atoi(optarg); break;
			case 'f': nfacts = atoi(optarg); break;
			case 'k': tsv = optarg; break;
			case 'b': o.max_body = atoi(optarg); break;
			case 'H': o.min_head_coverage = atof(optarg); break;
			case 'C': o.min_confidence = atof(optarg); break;
			case 's': o.min_support = atol(optarg); break;
			case 'T': o.threads = atoi(optarg); break;
			case 'g': lib = optarg; break;
			case 'c': gpu_only = true; break;
			case 'K': o.constants = true; break;
			case 'B': o.max_body_constants = atoi(optarg); break;
			case 'h': o.constants_min_head_coverage = atof(optarg); break;
			case 'A': o.max_seconds = atof(optarg); break;
			case 'q': nqueries = atol(optarg); break;
			case 'v': verbose = true; break;
			default:
				fprintf(stderr, "usage: %s [-e E] [-t T] [-r R] [-f F] [-k TSV] [-b MAX_BODY] "
						"[-H HC] [-C CONF] [-s SUP] [-T THREADS] [-g CUDA_LIB] [-c] [-K] [-B MBC] [-h CHC] "
						"[-A SECONDS] [-q QUERIES] [-v]\n", argv[0]);
				return 2;
		}
	}
	t0 = now_s();
	kg = tsv ? read_tsv(tsv) : make_kg();
	rels = calloc(nrels, sizeof(GdlMineRelation));
	for (int r = 0; r < nrels; r++)
	{
		rels[r].name = kg[r].name;
		rels[r].rows.ncols = 2;
		rels[r].rows.nrows = kg[r].n;
		rels[r].rows.cols = malloc(sizeof(int64_t *) * 2);
		rels[r].rows.cols[0] = kg[r].a;
		rels[r].rows.cols[1] = kg[r].b;
		total += kg[r].n;
	}
	printf("graph: %s, %d relations, %ld facts (generated in %.2fs)\n",
		   tsv ? tsv : "synthetic", nrels, (long) total, now_s() - t0);
	t0 = now_s();
	g = gdl_mine_graph_build(nrels, rels);
	printf("graph index: %d entities, %.3fs; max_body %d, hc %g, pca conf %g, threads %d%s\n",
		   gdl_mine_graph_nentities(g), now_s() - t0, o.max_body, o.min_head_coverage,
		   o.min_confidence, o.threads > 0 ? o.threads : gdl_threads(),
		   o.constants ? ", constants" : "");
	if (!gpu_only)
	{
		o.device = GDL_DEVICE_CPU;
		fcpu = run_one("cpu", g, &o, verbose);
	}
	if (lib)
	{
		void	   *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		GdlMineDeviceEntryFn entry = h ? (GdlMineDeviceEntryFn) dlsym(h, GDL_MINE_DEVICE_ENTRY_SYMBOL) : NULL;
		const GdlMineDevice *dev = entry ? entry() : NULL;

		if (!dev)
		{
			printf("gpu: no mining device in %s (%s)\n", lib, h ? "no entry" : dlerror());
			return gpu_only ? 1 : 0;
		}
		gdl_mine_register_device(dev);
		o.device = GDL_DEVICE_GPU;
		fgpu = run_one("gpu", g, &o, verbose && gpu_only);
		if (gdl_mine_device_last_error()[0])
			printf("gpu: device error: %s\n", gdl_mine_device_last_error());
		if (!gpu_only)
		{
			printf("cpu and gpu fingerprints %s\n", fcpu == fgpu ? "agree" : "DIFFER");
			if (fcpu != fgpu)
				return 1;
		}
	}
	if (nqueries > 0 && last_result)
	{
		if (o.threads > 0)
			gdl_set_threads(o.threads);
		run_queries(g, kg, last_result, nqueries);
	}
	return 0;
}
