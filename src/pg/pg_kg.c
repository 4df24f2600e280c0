/*
 * pg_kg.c — a program's binary predicates as a knowledge graph for the
 * mining core (gpudl_mine, gpudl_predict): which relations belong to it (one
 * type domain; the others are named in a NOTICE), reading their rows with
 * the caller's rights (tables through SPI, derived predicates through the
 * engine on the CPU), the device of a mining run, and values as text.
 */
#include "pg/gpudl_kg.h"
#include "mine/gdl_mine_device.h"
#include "svc/svc_int.h"

#include "miscadmin.h"
#include "utils/builtins.h"

typedef GpudlKgCandidate KgCandidate;

/* int and bigint hold the same values: one domain. */
static GdlType
domain_of(GdlType t)
{
	return t == GDL_TYPE_INT ? GDL_TYPE_BIGINT : t;
}

/*
 * A relation with a column of a type gpudl does not read: the target is
 * refused (42804), any other relation left out with a NOTICE.
 */
static void
unreadable(const GdlPred *p, int c, const char *target)
{
	bool		is_target = target != NULL && strcmp(p->name, target) == 0;

	gpudl_report_unreadable(is_target ? ERROR : NOTICE, p, c,
							is_target ? "the target of mining or prediction" : "the knowledge graph");
}

/*
 * Every binary predicate of the program: those its rules read or derive,
 * then bound tables no rule mentions (as build_background does for
 * learning).  Returns how many; *out gets them.
 */
static int
collect_candidates(GpudlKg *kg, const char *target, KgCandidate **out)
{
	GdlAnalysis *a = kg->analysis;
	int			bad;
	KgCandidate *c = palloc0(sizeof(KgCandidate) * (a->npreds + list_length(kg->def->bindings) + 1));
	int			n = 0;
	ListCell   *lc;
	int			i;

	for (i = 0; i < a->npreds; i++)
	{
		GdlPred    *p = &a->preds[i];

		if (p->arity != 2)
			continue;
		if ((bad = gpudl_unreadable_column(p)) >= 0)
		{
			unreadable(p, bad, target);
			continue;
		}
		c[n].name = p->name;
		c[n].pred = *p;
		c[n].types[0] = p->types[0];
		c[n].types[1] = p->types[1];
		n++;
	}
	foreach(lc, kg->def->bindings)
	{
		GpudlBinding *b = lfirst(lc);
		GdlPred		p;

		if (!gpudl_unread_binding(kg->def, a, b, &p))
			continue;
		if (p.arity != 2)
			continue;
		if ((bad = gpudl_unreadable_column(&p)) >= 0)
		{
			unreadable(&p, bad, target);
			continue;
		}
		c[n].name = p.name;
		c[n].pred = p;
		c[n].types[0] = p.types[0];
		c[n].types[1] = p.types[1];
		n++;
	}
	*out = c;
	return n;
}

/*
 * The domain: the target's type, else the type most relations relate
 * (the first such relation's on a tie).
 */
static GdlType
choose_domain(const char *program, const char *target, KgCandidate *c, int n)
{
	int			i,
				j;
	int			best = -1,
				best_count = 0;

	if (target != NULL)
	{
		for (i = 0; i < n; i++)
			if (strcmp(c[i].name, target) == 0)
				break;
		if (i == n)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("target \"%s\" is not a binary predicate of program \"%s\"", target, program),
					 errhint("Mine or predict a predicate with two arguments that the program's rules read or derive, or a bound table.")));
		if (domain_of(c[i].types[0]) != domain_of(c[i].types[1]))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("target \"%s\" relates %s to %s; the entities of a knowledge graph have one type",
							target, gdl_type_name(c[i].types[0]), gdl_type_name(c[i].types[1]))));
		return domain_of(c[i].types[0]);
	}
	for (i = 0; i < n; i++)
	{
		int			count = 0;

		if (domain_of(c[i].types[0]) != domain_of(c[i].types[1]))
			continue;
		for (j = 0; j < n; j++)
			if (domain_of(c[j].types[0]) == domain_of(c[i].types[0]) &&
				domain_of(c[j].types[1]) == domain_of(c[i].types[0]))
				count++;
		if (count > best_count)
		{
			best = i;
			best_count = count;
		}
	}
	if (best < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("program \"%s\" has no binary predicate relating values of one type", program),
				 errhint("A knowledge graph is a set of predicates r(subject, object) over one type of entity.")));
	return domain_of(c[best].types[0]);
}

/* The fake analysis the goal parser checks goals against: the graph's relations. */
static void
build_goal_analysis(GpudlKg *kg)
{
	int			i;

	memset(&kg->goals, 0, sizeof(kg->goals));
	kg->goals.npreds = kg->nrels;
	kg->goals.preds = palloc0(sizeof(GdlPred) * (kg->nrels + 1));
	for (i = 0; i < kg->nrels; i++)
	{
		GdlPred    *p = &kg->goals.preds[i];

		p->id = i;
		p->name = (char *) kg->rels[i].name;
		p->arity = 2;
		p->types = palloc(sizeof(GdlType) * 2);
		p->types[0] = p->types[1] = kg->type == GDL_TYPE_BIGINT ? GDL_TYPE_BIGINT : kg->type;
		p->is_edb = true;
		p->stratum = -1;
	}
}

/*
 * See gpudl_kg.h: what a graph is made of, read from the catalog only (the
 * program, its analysis, its binary predicates and the domain), in the
 * current memory context; gpudl_kg_read reads the rows.
 */
GpudlKg *
gpudl_kg_prepare(const char *program, const char *target)
{
	GpudlKg    *kg = palloc0(sizeof(GpudlKg));

	gpudl_install_host();
	kg->cxt = CurrentMemoryContext;
	kg->program = pstrdup(program);
	kg->target = target ? pstrdup(target) : NULL;
	kg->def = gpudl_load_program(program);
	kg->analysis = gpudl_analyze_program(kg->def);
	kg->dict = gdl_dict_create();
	kg->ncand = collect_candidates(kg, target, &kg->cand);
	kg->type = choose_domain(program, target, kg->cand, kg->ncand);
	return kg;
}

/*
 * See gpudl_kg.h: the rows of every relation of the domain, the graph over
 * them (rows freed once it holds them) and the goal parser's relations;
 * the relations left out are named in a NOTICE (kept in kg->left_notice
 * for a call that reuses the graph).
 */
void
gpudl_kg_read(GpudlKg *kg)
{
	StringInfoData left;
	int			i,
				nleft = 0;

	initStringInfo(&left);
	kg->rels = palloc0(sizeof(GdlMineRelation) * (kg->ncand + 1));
	for (i = 0; i < kg->ncand; i++)
	{
		KgCandidate *c = &kg->cand[i];
		GdlMineRelation *r;

		if (domain_of(c->types[0]) != kg->type || domain_of(c->types[1]) != kg->type)
		{
			appendStringInfo(&left, "%s%s(%s, %s)", nleft ? ", " : "", gdl_pred_name_quote(c->name),
							 gdl_type_name(c->types[0]), gdl_type_name(c->types[1]));
			nleft++;
			continue;
		}
		r = &kg->rels[kg->nrels++];
		r->name = pstrdup(c->name);
		gpudl_predicate_rows(kg->analysis, &kg->plan, kg->dict, &c->pred, &r->rows);
		CHECK_FOR_INTERRUPTS();
	}
	if (nleft > 0)
	{
		kg->left_notice = psprintf("%d binary predicate%s of program \"%s\" left out of the knowledge graph: %s",
								   nleft, nleft == 1 ? "" : "s", kg->program, left.data);
		gpudl_kg_left_notice(kg, kg->target);
	}
	kg->graph = gdl_mine_graph_build(kg->nrels, kg->rels);
	/* the graph holds its own copy of the facts */
	for (i = 0; i < kg->nrels; i++)
	{
		GdlColumns *rows = &kg->rels[i].rows;

		for (int c = 0; c < rows->ncols; c++)
			if (rows->cols && rows->cols[c])
				pfree(rows->cols[c]);
		if (rows->cols)
			pfree(rows->cols);
		memset(rows, 0, sizeof(*rows));
	}
	build_goal_analysis(kg);
}

/* See gpudl_kg.h. */
void
gpudl_kg_left_notice(const GpudlKg *kg, const char *target)
{
	if (kg->left_notice != NULL)
		ereport(NOTICE,
				(errmsg_internal("%s", kg->left_notice),
				 errdetail("The graph's entities are of type %s%s; a relation over other types cannot share them.",
						   gdl_type_name(kg->type),
						   target ? psprintf(" (the type of target \"%s\")", target) : " (the type most relations have)")));
}

/* See gpudl_kg.h. */
GpudlKg *
gpudl_kg_build(const char *program, const char *target)
{
	GpudlKg    *kg = gpudl_kg_prepare(program, target);

	gpudl_kg_read(kg);
	return kg;
}

/* See gpudl_kg.h. */
int
gpudl_kg_relation(const GpudlKg *kg, const char *name, bool missing_ok)
{
	int			i;

	for (i = 0; i < gdl_mine_graph_nrels(kg->graph); i++)
		if (strcmp(gdl_mine_graph_relname(kg->graph, i), name) == 0)
			return i;
	if (!missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("target \"%s\" is not a relation of program \"%s\"'s knowledge graph",
						name, kg->program)));
	return -1;
}

/* See gpudl_kg.h. */
char *
gpudl_kg_value_text(const GpudlKg *kg, int64_t value)
{
	switch (kg->type)
	{
		case GDL_TYPE_TEXT:
			{
				size_t		len;
				const char *s = gdl_dict_string(kg->dict, (int32_t) value, &len);

				return pnstrdup(s, len);
			}
		case GDL_TYPE_BOOL:
			return pstrdup(value ? "true" : "false");
		case GDL_TYPE_FLOAT8:
			{
				double		f;

				memcpy(&f, &value, sizeof(f));
				return psprintf("%.17g", f);
			}
		default:
			return psprintf("%lld", (long long) value);
	}
}

/* See gpudl_kg.h. */
char *
gpudl_kg_quote_text(const char *s)
{
	StringInfoData b;
	const char *p;

	initStringInfo(&b);
	appendStringInfoChar(&b, '"');
	for (p = s; *p; p++)
	{
		if (*p == '"' || *p == '\\')
			appendStringInfoChar(&b, '\\');
		if (*p == '\n')
			appendStringInfoString(&b, "\\n");
		else
			appendStringInfoChar(&b, *p);
	}
	appendStringInfoChar(&b, '"');
	return b.data;
}

/* See gpudl_kg.h. */
char *
gpudl_kg_value_literal(const GpudlKg *kg, int64_t value)
{
	char	   *s = gpudl_kg_value_text(kg, value);

	return kg->type == GDL_TYPE_TEXT ? gpudl_kg_quote_text(s) : s;
}

/*
 * gpudl_kg_value_literal as the core's literal function, each entity's
 * literal made once per graph (millions of rule texts share a few
 * thousand constants).
 */
static const char *
kg_literal(void *ctx, int64_t value)
{
	GpudlKg    *kg = (GpudlKg *) ctx;
	int32_t		e = gdl_mine_graph_entity(kg->graph, value);

	if (e < 0)
		return gpudl_kg_value_literal(kg, value);
	if (kg->literals == NULL)
		kg->literals = MemoryContextAllocZero(kg->cxt, sizeof(char *) * (gdl_mine_graph_nentities(kg->graph) + 1));
	if (kg->literals[e] == NULL)
	{
		/* in the graph's context: a graph kept between calls keeps them */
		MemoryContext old = MemoryContextSwitchTo(kg->cxt);

		kg->literals[e] = gpudl_kg_value_literal(kg, value);
		MemoryContextSwitchTo(old);
	}
	return kg->literals[e];
}

/*
 * See gpudl_kg.h.  Each relation's name is quoted once per graph (in the
 * graph's context, kept with a kept graph), not once per atom of every
 * rule: FB15k-237's names all need quotes ("/film/film/genre"), and a run
 * of 1.7 M rules quoted 6 M of them.
 */
char *
gpudl_kg_rule_text(GpudlKg *kg, const GdlMineRule *r)
{
	if (kg->quoted_names == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(kg->cxt);
		int			n = gdl_mine_graph_nrels(kg->graph);

		kg->quoted_names = palloc(sizeof(char *) * (n + 1));
		for (int i = 0; i < n; i++)
			kg->quoted_names[i] = gdl_pred_name_quote(gdl_mine_graph_relname(kg->graph, i));
		MemoryContextSwitchTo(old);
	}
	return gdl_mine_rule_text_q(kg->graph, (const char *const *) kg->quoted_names, r, kg_literal, (void *) kg);
}

/* In pg_device.c: register the GPU's mining counter as gpudl.device says. */
extern bool gpudl_mine_device_setup(void);

/*
 * See gpudl_kg.h.  The GPU when gpudl.device allows, one works in this
 * session and the CUDA module counts for mining; with the GPU service
 * running, the service counts (svc_mine.c), admitted like a GPU run.
 */
int
gpudl_kg_mine_device(void)
{
	return gpudl_mine_device_setup() ? GDL_DEVICE_GPU : GDL_DEVICE_CPU;
}

/* See gpudl_kg.h. */
void
gpudl_mine_args_init(GpudlMineArgs *a)
{
	memset(a, 0, sizeof(*a));
	a->max_body = 3;
	a->min_head_coverage = 0.01;
	a->min_confidence = 0.1;
	a->min_support = 1;
	a->constants_min_head_coverage = -1;
}

/* Raise 22023 unless the mining arguments are in range. */
void
gpudl_mine_args_check(const GpudlMineArgs *a)
{
	if (a->max_body < 1 || a->max_body > GDL_MINE_MAX_BODY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_body must be between 1 and %d, got %d", GDL_MINE_MAX_BODY, a->max_body)));
	if (!(a->min_head_coverage >= 0 && a->min_head_coverage <= 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_head_coverage must be between 0 and 1, got %g", a->min_head_coverage)));
	if (!(a->min_confidence >= 0 && a->min_confidence <= 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_confidence must be between 0 and 1, got %g", a->min_confidence)));
	if (a->min_support < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_support must be at least 1, got %lld", (long long) a->min_support)));
}

/* See gpudl_kg.h. */
GdlMineResult *
gpudl_kg_mine(GpudlKg *kg, const char *target, const GpudlMineArgs *a)
{
	GdlMineOptions o;
	GdlMineResult *res;
	int			device = gpudl_kg_mine_device();

	gdl_mine_options_init(&o);
	o.target = target ? gpudl_kg_relation(kg, target, false) : -1;
	o.max_body = a->max_body;
	o.min_head_coverage = a->min_head_coverage;
	o.min_confidence = a->min_confidence;
	o.min_support = a->min_support;
	o.constants = a->constants;
	o.max_body_constants = a->max_body_constants;
	o.constants_min_head_coverage = a->constants_min_head_coverage;
	o.max_seconds = a->max_seconds;
	o.device = device;
	gpudl_progress_device(device == GDL_DEVICE_GPU ? "gpu" : "cpu");
	gpudl_progress_phase("mining");
	svc_mine_set_label(kg->program, target);
	res = gdl_mine(kg->graph, &o);
	if (device == GDL_DEVICE_GPU && res->device != GDL_DEVICE_GPU)
		elog(DEBUG1, "gpudl: mining ran on the CPU: %s", gdl_mine_device_last_error());
	gpudl_progress_device(res->device == GDL_DEVICE_GPU ? "gpu" : "cpu");
	return res;
}
