/*
 * scan_path.c — the planner side of the GpuDatalog custom scan.
 *
 * A set_rel_pathlist hook (chained to any earlier one) looks at function
 * scans in FROM: one call of gpudl_query or gpudl_count, without WITH
 * ORDINALITY.  For those it replaces the function scan path with a
 * CustomPath of the same cost, parameterized like the function scan by the
 * rels a LATERAL call refers to (gpudl.enable_customscan = off keeps the
 * function scan).  gpudl_query also gets paths parameterized by the outer
 * rels of join conditions "column = outer value", costed as a bound run
 * (GPUDL_BOUND_RUN_FRACTION): a nested loop then runs the scan per outer
 * row, bound, like an index scan.  Turning a path into a plan sorts
 * the scan's conditions: "column = value" with an integer, text or bool
 * column and a value without the scan's own columns and without volatile
 * functions (a constant, a parameter of a prepared statement, an outer
 * column of a LATERAL or parameterized join, an expression of those) is
 * pushed into the goal — it binds the goal argument of that column, and the
 * evaluation is goal-directed for it; anything else stays a filter.  When no column of
 * the scan is read at all (count(*) above), the engine only counts.
 *
 * The plan is a CustomScan with scanrelid 0 whose custom_scan_tlist lists
 * the function's columns (a function is no relation the executor could
 * open); see scan.h for what custom_exprs and custom_private carry.
 */
#include "api/scan.h"

#include "access/htup_details.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_language.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parse_relation.h"
#include "parser/parsetree.h"
#include "nodes/supportnodes.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(gpudl_planner_support);

extern PGDLLEXPORT Datum gpudl_query(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum gpudl_count(PG_FUNCTION_ARGS);

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

static Plan *plan_gpudl_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							 List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods gpudl_path_methods = {
	.CustomName = GPUDL_SCAN_NAME,
	.PlanCustomPath = plan_gpudl_path,
};

static const CustomScanMethods gpudl_scan_methods = {
	.CustomName = GPUDL_SCAN_NAME,
	.CreateCustomScanState = gpudl_scan_create_state,
};

/*
 * Which gpudl function a function call is: GPUDL_SCAN_QUERY, _COUNT, or -1.
 * Compared by the C function behind the SQL name, so a function of another
 * name, schema or language never matches.
 */
static int
gpudl_function_kind(Oid funcid)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	bool		is_c;
	FmgrInfo	fi;

	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	if (!HeapTupleIsValid(tup))
		return -1;
	proc = (Form_pg_proc) GETSTRUCT(tup);
	is_c = proc->prolang == ClanguageId && proc->pronargs == 2;
	ReleaseSysCache(tup);
	if (!is_c)
		return -1;
	fmgr_info(funcid, &fi);
	if (fi.fn_addr == gpudl_query)
		return GPUDL_SCAN_QUERY;
	if (fi.fn_addr == gpudl_count)
		return GPUDL_SCAN_COUNT;
	return -1;
}

/* The function call of a function RTE the scan can run, else NULL. */
static FuncExpr *
gpudl_rte_call(RangeTblEntry *rte, int *kind)
{
	RangeTblFunction *rtfunc;
	FuncExpr   *f;

	if (rte->rtekind != RTE_FUNCTION || rte->funcordinality ||
		list_length(rte->functions) != 1)
		return NULL;
	rtfunc = linitial_node(RangeTblFunction, rte->functions);
	if (!IsA(rtfunc->funcexpr, FuncExpr))
		return NULL;
	f = (FuncExpr *) rtfunc->funcexpr;
	if (list_length(f->args) != 2 || contain_subplans((Node *) f->args))
		return NULL;
	*kind = gpudl_function_kind(f->funcid);
	return *kind < 0 ? NULL : f;
}

/* Does an expression read a whole row of relation rti? */
static bool
reads_whole_row(Node *node, Index rti)
{
	Bitmapset  *attrs = NULL;

	pull_varattnos(node, rti, &attrs);
	return bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs);
}

/* The Var under binary-compatible relabelling, or NULL. */
static Var *
strip_to_var(Node *n)
{
	while (n && IsA(n, RelabelType))
		n = (Node *) ((RelabelType *) n)->arg;
	return (n && IsA(n, Var)) ? (Var *) n : NULL;
}

/*
 * Is operator opno on a column of type coltype an equality the engine
 * decides exactly: integers (any widths), text under a deterministic
 * collation, bool?
 */
static bool
pushable_operator(Oid opno, Oid coltype, Oid collid)
{
	switch (coltype)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return get_op_opfamily_strategy(opno, INTEGER_BTREE_FAM_OID) == BTEqualStrategyNumber;
		case TEXTOID:
		case VARCHAROID:
			return opno == TextEqualOperator &&
				(!OidIsValid(collid) || get_collation_isdeterministic(collid));
		case BOOLOID:
			return opno == BooleanEqualOperator;
		default:
			return false;
	}
}

/*
 * Can a condition be pushed into the goal?  It must be "column = value"
 * (either way round) with a pushable operator, and the value must not read
 * the scan's own columns or call volatile functions.  Sets the goal
 * argument and the side of the column.
 */
static bool
pushable_clause(PlannerInfo *root, Index rti, Expr *clause, int *arg, int *side)
{
	OpExpr	   *op;
	int			s;

	if (!IsA(clause, OpExpr) || list_length(((OpExpr *) clause)->args) != 2)
		return false;
	op = (OpExpr *) clause;
	for (s = 0; s < 2; s++)
	{
		Var		   *v = strip_to_var(list_nth(op->args, s));
		Node	   *other = list_nth(op->args, 1 - s);

		if (v == NULL || v->varno != rti || v->varlevelsup != 0 || v->varattno < 1)
			continue;
		if (bms_is_member(rti, pull_varnos(root, other)) ||
			contain_volatile_functions(other) || contain_subplans(other))
			continue;
		if (!pushable_operator(op->opno, v->vartype, op->inputcollid))
			continue;
		*arg = v->varattno - 1;
		*side = s;
		return true;
	}
	return false;
}

/*
 * A run with a goal argument bound by a join is costed at this fraction of
 * an unbound run: goal-directed evaluation explores a small part of what the
 * whole program derives (CA-HepTh: 8,639 of 74,619,885 tuples).  With it a
 * join whose outer side has few rows becomes a nested loop that runs the
 * scan once per outer row, bound, like an index nested loop.
 */
#define GPUDL_BOUND_RUN_FRACTION 0.02

/* A CustomPath of the scan, costed from the function scan's path. */
static CustomPath *
make_path(PlannerInfo *root, RelOptInfo *rel, const Path *fs, Relids required_outer,
		  double fraction)
{
	CustomPath *cp = makeNode(CustomPath);

	cp->path.pathtype = T_CustomScan;
	cp->path.parent = rel;
	cp->path.pathtarget = rel->reltarget;
	cp->path.param_info = get_baserel_parampathinfo(root, rel, required_outer);
	cp->path.parallel_aware = false;
	cp->path.parallel_safe = false;
	cp->path.parallel_workers = 0;
	cp->path.rows = cp->path.param_info ? cp->path.param_info->ppi_rows : fs->rows;
	cp->path.startup_cost = fs->startup_cost * fraction;
	cp->path.total_cost = fs->total_cost * fraction;
	cp->path.pathkeys = NIL;
	cp->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN | CUSTOMPATH_SUPPORT_PROJECTION;
	cp->custom_paths = NIL;
	cp->custom_private = NIL;
	cp->methods = &gpudl_path_methods;
	return cp;
}

/* Equivalence-class callback: is the member column *arg of this rel? */
static bool
ec_member_is_column(PlannerInfo *root, RelOptInfo *rel, EquivalenceClass *ec,
					EquivalenceMember *em, void *arg)
{
	Var		   *v = strip_to_var((Node *) em->em_expr);

	return v != NULL && v->varno == rel->relid && v->varlevelsup == 0 &&
		v->varattno == *(int *) arg;
}

/* Add the outer rels a pushable join clause needs, once, to *outers. */
static void
add_outer_rels(PlannerInfo *root, RelOptInfo *rel, RestrictInfo *ri, List **outers)
{
	Relids		req;
	ListCell   *lc;
	int			arg,
				side;

	if (!pushable_clause(root, rel->relid, ri->clause, &arg, &side))
		return;
	req = bms_union(ri->clause_relids, rel->lateral_relids);
	req = bms_del_member(req, rel->relid);
	if (bms_is_empty(req) || bms_overlap(req, rel->lateral_referencers))
		return;
	foreach(lc, *outers)
		if (bms_equal(lfirst(lc), req))
			return;
	*outers = lappend(*outers, req);
}

/*
 * The sets of outer rels whose values could bind a goal argument through a
 * join condition "column = outer expression" (also one implied by an
 * equivalence class).
 */
static List *
join_parameterizations(PlannerInfo *root, RelOptInfo *rel)
{
	List	   *outers = NIL;
	ListCell   *lc;
	int			col;

	foreach(lc, rel->joininfo)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		if (join_clause_is_movable_to(ri, rel))
			add_outer_rels(root, rel, ri, &outers);
	}
	if (rel->has_eclass_joins)
		for (col = 1; col <= rel->max_attr; col++)
		{
			List	   *clauses = generate_implied_equalities_for_column(root, rel,
																		 ec_member_is_column,
																		 &col,
																		 rel->lateral_referencers);

			foreach(lc, clauses)
				add_outer_rels(root, rel, lfirst_node(RestrictInfo, lc), &outers);
		}
	return outers;
}

/*
 * The planner hook: offer the GpuDatalog scan for calls of gpudl_query and
 * gpudl_count in FROM — in place of the function scan, and (gpudl_query
 * with gpudl.enable_pushdown) parameterized by the outer rels of join
 * conditions that can bind a goal argument.
 */
static void
gpudl_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	Path	   *fs = NULL;
	ListCell   *lc;
	int			kind;

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);
	if (!gpudl_enable_customscan || rel->reloptkind != RELOPT_BASEREL ||
		gpudl_rte_call(rte, &kind) == NULL)
		return;
	/* whole-row references need the function scan's row type */
	if (reads_whole_row((Node *) rel->reltarget->exprs, rti))
		return;
	foreach(lc, rel->baserestrictinfo)
		if (reads_whole_row((Node *) lfirst_node(RestrictInfo, lc)->clause, rti))
			return;
	foreach(lc, rel->pathlist)
		if (((Path *) lfirst(lc))->pathtype == T_FunctionScan)
			fs = lfirst(lc);
	if (fs == NULL)
		return;

	/* take the function scan's place (also as a rescanned inner side) */
	rel->pathlist = list_delete_ptr(rel->pathlist, fs);
	add_path(rel, &make_path(root, rel, fs, rel->lateral_relids, 1.0)->path);

	if (kind == GPUDL_SCAN_QUERY && gpudl_enable_pushdown)
		foreach(lc, join_parameterizations(root, rel))
			add_path(rel, &make_path(root, rel, fs, lfirst(lc), GPUDL_BOUND_RUN_FRACTION)->path);
}

/*
 * gpudl.planner_support(internal), the planner support function of
 * gpudl_query and gpudl_count.  It answers no request (the defaults stand);
 * its point is that the planner calls it while costing a call, which loads
 * the library — and installs the hook above — before the first gpudl call of
 * a session is planned, so that call runs through the GpuDatalog scan too.
 */
Datum
gpudl_planner_support(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(NULL);
}

/* Register the planner hook and the scan's methods (from _PG_init). */
void
gpudl_scan_init(void)
{
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = gpudl_set_rel_pathlist;
	RegisterCustomScanMethods(&gpudl_scan_methods);
}

/*
 * Turn the chosen path into a CustomScan: program and goal arguments,
 * pushed-down conditions, the remaining filter, and one scan column per
 * column of the function.
 */
static Plan *
plan_gpudl_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cs = makeNode(CustomScan);
	Index		rti = rel->relid;
	RangeTblEntry *rte = planner_rt_fetch(rti, root);
	FuncExpr   *f;
	int			kind;
	List	   *colvars = NIL;
	List	   *pushed = NIL;
	List	   *args = NIL;
	List	   *sides = NIL;
	List	   *rest = NIL;
	Bitmapset  *attrs = NULL;
	int			flags = 0;
	ListCell   *lc;
	int			i = 0;

	f = gpudl_rte_call(rte, &kind);
	if (f == NULL)
		elog(ERROR, "gpudl: GpuDatalog path on a relation it cannot scan");

	foreach(lc, clauses)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
		int			arg,
					side;

		if (ri->pseudoconstant)
			continue;			/* a gating Result above checks those */
		if (gpudl_enable_pushdown && kind == GPUDL_SCAN_QUERY &&
			pushable_clause(root, rti, ri->clause, &arg, &side))
		{
			pushed = lappend(pushed, ri->clause);
			args = lappend_int(args, arg);
			sides = lappend_int(sides, side);
		}
		else
			rest = lappend(rest, ri->clause);
	}

	/* does anything above read a column?  If not, the engine only counts */
	pull_varattnos((Node *) best_path->path.pathtarget->exprs, rti, &attrs);
	pull_varattnos((Node *) rest, rti, &attrs);
	if (kind == GPUDL_SCAN_QUERY && bms_is_empty(attrs))
		flags |= GPUDL_SCAN_COUNT_ONLY;

	/* the scan tuple: every column of the function, in order */
	expandRTE(rte, rti, 0, -1, false, NULL, &colvars);
	cs->custom_scan_tlist = NIL;
	foreach(lc, colvars)
	{
		i++;
		cs->custom_scan_tlist = lappend(cs->custom_scan_tlist,
										makeTargetEntry((Expr *) lfirst(lc), i, NULL, false));
	}

	cs->scan.plan.targetlist = tlist;
	cs->scan.plan.qual = rest;
	cs->scan.scanrelid = 0;
	cs->flags = best_path->flags;
	cs->custom_plans = NIL;
	cs->custom_exprs = list_concat(list_make2(linitial(f->args), lsecond(f->args)), pushed);
	cs->custom_private = list_make4(makeInteger(kind), makeInteger(flags), args, sides);
	cs->custom_relids = NULL;	/* set by the caller */
	cs->methods = &gpudl_scan_methods;
	return &cs->scan.plan;
}
