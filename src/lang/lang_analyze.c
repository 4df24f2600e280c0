/*
 * lang_analyze.c — the analysis driver: makes closures written non-linearly
 * linear (lang_linear.c), then runs resolution, safety, typing and
 * stratification in that order over a parsed program, and looks predicates
 * up by name afterwards.
 */
#include "lang_int.h"

#include <string.h>

/*
 * Check and annotate a program.  Order matters for messages: an unsafe
 * variable is reported as unsafe, and recursion through aggregation as
 * such, before anything tries to type them.
 */
GdlAnalysis *
gdl_analyze(GdlProgram *prog, GdlResolveFn resolve, void *resolve_arg)
{
	GdlAnalysis *a = gdl_alloc(sizeof(GdlAnalysis));

	gdl_lang_linearize(prog);	/* closures written non-linearly run linearly */
	a->prog = prog;
	gdl_lang_resolve(a, resolve, resolve_arg);
	if (a->preds == NULL)
		a->preds = gdl_alloc(sizeof(GdlPred));
	gdl_lang_safety(a);
	gdl_lang_stratify(a);
	gdl_lang_types(a);
	return a;
}

/* Find a predicate by name; -1 if absent. */
int
gdl_analysis_find_pred(const GdlAnalysis *a, const char *name)
{
	int			i;

	for (i = 0; i < a->npreds; i++)
		if (strcmp(a->preds[i].name, name) == 0)
			return i;
	return -1;
}
