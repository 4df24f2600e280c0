/*
 * ilp_data.h — loading rule-learning data for the standalone ILP runners
 * (test/ilp/run_tasks.c, bench/ilp/family.c): tab-separated files into
 * GdlColumns, text dictionary-encoded with one GdlDict, integer columns kept
 * as integers; and the fixpoint hook backed by the Datalog engine.
 */
#ifndef ILP_DATA_H
#define ILP_DATA_H

#include "../../src/ilp/gdl_ilp.h"

#define ILP_DATA_MAX_RELS 64

/* A world: named background relations plus optional examples. */
typedef struct IlpData
{
	int			nrels;
	GdlIlpRelation rels[ILP_DATA_MAX_RELS];
	GdlColumns	pos;
	GdlColumns	neg;
	GdlType		ex_types[2];
	int			arity;
} IlpData;

/* Read a TSV file into columns of encoded values; false if unreadable or empty. */
extern bool ilp_data_read_tsv(const char *path, GdlDict *dict, GdlColumns *out, GdlType *types);

/* Load every *.tsv of a directory: pos.tsv / neg.tsv as examples, the rest as background. */
extern bool ilp_data_load_dir(const char *dir, GdlDict *dict, IlpData *d);

/* Append a relation (name copied). */
extern void ilp_data_add_rel(IlpData *d, const char *name, int arity, const GdlType *types,
							 const GdlColumns *rows);

/* Seconds on a monotonic clock. */
extern double ilp_data_now(void);

/*
 * The fixpoint hook over an IlpData world: the Datalog engine when it is
 * built in (GDL_ILP_ENGINE), else the ILP core's own evaluator.  arg is an
 * IlpDataHookArg.
 */
typedef struct IlpDataHookArg
{
	const IlpData *data;
	GdlDict    *dict;
	const char *target;
	int			arity;
	GdlType		types[2];
	bool		use_engine;
	int64_t		calls;
} IlpDataHookArg;

extern void ilp_data_hook(void *arg, const char *program, const char *target, int arity,
						  const GdlColumns *facts, bool *derived);
extern bool ilp_data_engine_available(void);

#ifdef GDL_ILP_ENGINE
/* Every target row a program derives, by the engine. */
extern GdlResult *ilp_data_derive(IlpDataHookArg *h, const char *program, const char *target,
								  int arity);
#endif

#endif							/* ILP_DATA_H */
