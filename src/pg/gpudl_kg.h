/*
 * gpudl_kg.h — the PostgreSQL side of knowledge-graph mining and link
 * prediction (pg_kg.c, pg_kg_rules.c, api_mine.c, api_predict.c): a
 * program's binary predicates as a graph for the mining core
 * (src/mine/gdl_mine.h), stored mined rules, and the values of answers.
 */
#ifndef GPUDL_KG_H
#define GPUDL_KG_H

#include "pg/gpudl_run.h"
#include "mine/gdl_mine.h"

/* One binary predicate of a program, before the domain is chosen. */
typedef struct GpudlKgCandidate
{
	const char *name;
	GdlPred		pred;			/* a copy; for a bound-only table, id -1 */
	GdlType		types[2];
} GpudlKgCandidate;

/*
 * A program's knowledge graph, read with the caller's rights; made for one
 * call, or kept between calls by pg_kg_cache.c (then read-only but for
 * what it makes lazily in its own context cxt).
 */
typedef struct GpudlKg
{
	MemoryContext cxt;			/* the graph's context */
	const char *program;
	const char *target;			/* the target it was prepared for, or NULL */
	GpudlProgramDef *def;
	GdlAnalysis *analysis;		/* the program's own analysis */
	GdlPlan    *plan;			/* compiled lazily for derived predicates */
	GdlDict    *dict;
	GdlType		type;			/* every entity's type (the domain) */
	int			nrels;
	GdlMineRelation *rels;		/* in the graph's order */
	GdlMineGraph *graph;
	GdlAnalysis goals;			/* the graph's relations, for the goal parser */
	char	  **literals;		/* per entity: its literal in rule texts, made lazily */
	char	  **quoted_names;	/* per relation: its name in rule texts, made lazily */
	int			ncand;			/* the program's binary predicates */
	GpudlKgCandidate *cand;
	char	   *left_notice;	/* those left out of the graph, or NULL */
	bool		cached;			/* kept between calls (pg_kg_cache.c) */
	/* each relation's stored rules, parsed on first use (gpudl_kg_rules) */
	MemoryContext rules_cxt;	/* NULL until some are */
	struct GpudlKgRules **rules;
	bool	   *rules_read;
	int64		nrules_parsed;
} GpudlKg;

/*
 * Build the graph of a program: every binary predicate its rules read or
 * derive and every bound binary table whose arguments have the domain's
 * type: the target's (when target is not NULL; it must be one of them),
 * else the type most relations have.  Others are left out with a NOTICE
 * naming them and why.
 */
extern GpudlKg *gpudl_kg_build(const char *program, const char *target);

/*
 * gpudl_kg_build in two steps: prepare reads the catalog only (program,
 * analysis, candidates, domain), read reads the rows and builds the graph
 * (in the current memory context, which must be kg->cxt).
 */
extern GpudlKg *gpudl_kg_prepare(const char *program, const char *target);
extern void gpudl_kg_read(GpudlKg *kg);

/* The NOTICE naming the relations left out of the graph (none: nothing). */
extern void gpudl_kg_left_notice(const GpudlKg *kg, const char *target);

/*
 * The graph of a program for a call: the one this session kept, when it
 * is still current and may be used by the caller (pg_kg_cache.c), else
 * read now (and kept when its tables' changes are counted).
 */
extern GpudlKg *gpudl_kg_acquire(const char *program, const char *target);

/* The end of a call's use of an acquired graph (an error ends it too). */
extern void gpudl_kg_release(GpudlKg *kg);

/* gpudl.kg_cache: keep the last graph between calls. */
extern bool gpudl_kg_cache;

/*
 * The rules stored for a relation of the graph, parsed once per graph and
 * rules' change (kept with a kept graph, else made in the current context):
 * NULL when none are stored.
 */
typedef struct GpudlKgRules
{
	GdlMineRule *rules;
	int64		nrules;
	Datum	   *texts;			/* each rule's text datum */
} GpudlKgRules;

extern GpudlKgRules *gpudl_kg_rules(GpudlKg *kg, int rel);

/* The graph's index of a relation; -1 when absent (error unless missing_ok). */
extern int	gpudl_kg_relation(const GpudlKg *kg, const char *name, bool missing_ok);

/* A graph value as answer text, and as a constant of a goal ("a", 7). */
extern char *gpudl_kg_value_text(const GpudlKg *kg, int64_t value);
extern char *gpudl_kg_value_literal(const GpudlKg *kg, int64_t value);

/* A text as a goal literal: "a \"b\"". */
extern char *gpudl_kg_quote_text(const char *s);

/*
 * A rule's text with its constants as goal literals ("alice", 7), as the
 * language's parser reads them back: r(X, "bob") :- s(X, "alice").
 */
extern char *gpudl_kg_rule_text(GpudlKg *kg, const GdlMineRule *r);

/* The device a mining run uses under gpudl.device (GDL_DEVICE_CPU or _GPU). */
extern int	gpudl_kg_mine_device(void);

/*
 * Measures a mining run is asked for (api_mine.c), and the run itself:
 * mine rules for 'target' (NULL: every relation) of the graph.
 */
typedef struct GpudlMineArgs
{
	int			max_body;
	double		min_head_coverage;
	double		min_confidence;
	int64		min_support;
	bool		constants;		/* also rules with constants (gdl_mine.h) */
	int			max_body_constants; /* 0: min(max_body, 2) */
	double		constants_min_head_coverage;	/* below 0: min_head_coverage */
	double		max_seconds;	/* 0: no budget (anytime mining, gdl_mine.h) */
} GpudlMineArgs;

/* The 0.4 defaults of the arguments added in 0.5. */
extern void gpudl_mine_args_init(GpudlMineArgs *a);

extern void gpudl_mine_args_check(const GpudlMineArgs *a);
extern GdlMineResult *gpudl_kg_mine(GpudlKg *kg, const char *target, const GpudlMineArgs *a);

/*
 * The rules stored by gpudl_mine(commit => true) for relation rel of the
 * graph (pg_kg_rules.c), as rules of the graph with their texts, in the
 * current memory context; NULL when none are stored.  Rules over relations
 * no longer in the graph are skipped with a NOTICE.  Callers use
 * gpudl_kg_rules, which parses them once per graph.
 */
extern GpudlKgRules *gpudl_kg_stored_rules(GpudlKg *kg, int rel);

/*
 * A mined rule exactly as gpudl_kg_stored_rules reads its stored text
 * back (variables named as the parser names them, the measures kept).
 */
extern void gpudl_kg_rule_as_parsed(const GdlMineRule *in, GdlMineRule *out);

/*
 * After gpudl_mine(commit => true) stored a run's rules (texts[i] the text
 * of res->rules[i]): a graph this session keeps takes them as its parsed
 * stored rules of the mined relations (target, or all), so that the next
 * gpudl_predict does not read and parse them again (pg_kg_cache.c).
 */
extern void gpudl_kg_seed_rules(GpudlKg *kg, const char *target, const GdlMineResult *res,
								char **texts);

/*
 * A committed mining run's rows written into gpudl.mined_rules in bulk
 * (pg_mined_store.c): begin (locks the program's row, checks INSERT on the
 * table), add each rule with its relation's name and text, end (the rows
 * visible to the next statement).  params: the run's jsonb, or 0 for null.
 */
typedef struct GpudlMinedStore GpudlMinedStore;

extern GpudlMinedStore *gpudl_mined_store_begin(const char *program, Datum params);
extern void gpudl_mined_store_add(GpudlMinedStore *st, const char *target, const char *text,
								  const GdlMineRule *r);
extern void gpudl_mined_store_end(GpudlMinedStore *st);

#endif							/* GPUDL_KG_H */
