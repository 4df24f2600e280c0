/*
 * gdl_plan.h — the planner's interface: an analysed program compiled into
 * a GdlPlan that the engine (src/exec) runs.  The planner sits below the
 * engine: it includes nothing of src/exec (plan_int.h is what both read).
 */
#ifndef GDL_PLAN_H
#define GDL_PLAN_H

#include "../lang/gdl_lang.h"

/* ----------------------------------------------------------------- plans */

typedef struct GdlPlan GdlPlan;

/*
 * Compile an analysed program: strata, rule order, join order, semi-naive
 * delta versions of recursive rules.  The plan points into 'a'; keep both
 * in the same long-lived arena.
 */
extern GdlPlan *gdl_plan_compile(const GdlAnalysis *a);
extern const GdlAnalysis *gdl_plan_analysis(const GdlPlan *p);
/* Text lines describing the compiled plan, for gpudl_explain. */
extern int	gdl_plan_explain(const GdlPlan *p, char ***lines_out);

#endif							/* GDL_PLAN_H */
