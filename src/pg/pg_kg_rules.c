/*
 * pg_kg_rules.c — rules stored by gpudl_mine(commit => true) in
 * gpudl.mined_rules, read back as rules of a graph for gpudl_predict: each
 * rule's text parsed with the language's parser, its variables mapped to
 * the core's X, Y, Z, W and its predicates to the graph's relations, its
 * measures as stored.
 */
#include "gpudl_kg.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

/* The core's variable of a clause variable: X, Y from the head, then Z, W. */
static int
rule_var(int *map, int *next, int var)
{
	if (map[var] < 0)
	{
		if (*next > GDL_MINE_W)
			return -1;
		map[var] = (*next)++;
	}
	return map[var];
}

/*
 * One stored rule as a rule of the graph; false (with *why) when it does
 * not fit: a relation not in the graph, or not in the mining language.
 */
static bool
parse_rule(GpudlKg *kg, const char *text, int head, GdlMineRule *out, const char **why)
{
	GdlProgram *prog = gpudl_parse_text(text, "a mined rule");
	GdlClause  *c;
	int		   *map;
	int			next = GDL_MINE_Z;
	int			i;

	if (prog->nitems != 1 || prog->items[0].kind != GDL_ITEM_CLAUSE)
	{
		*why = "not one clause";
		return false;
	}
	c = prog->items[0].clause;
	if (c->head.nargs != 2 || c->nbody < 1 || c->nbody > GDL_MINE_MAX_BODY ||
		c->head.args[0]->kind != GDL_TERM_VAR || c->head.args[1]->kind != GDL_TERM_VAR)
	{
		*why = "not a rule of the mining language";
		return false;
	}
	map = palloc(sizeof(int) * (c->nvars + 1));
	for (i = 0; i < c->nvars; i++)
		map[i] = -1;
	map[c->head.args[0]->var] = GDL_MINE_X;
	map[c->head.args[1]->var] = GDL_MINE_Y;
	memset(out, 0, sizeof(*out));
	out->head = head;
	out->nbody = c->nbody;
	for (i = 0; i < c->nbody; i++)
	{
		GdlLiteral *l = &c->body[i];
		int			a,
					b;

		if (l->kind != GDL_LIT_ATOM || l->atom.nargs != 2 ||
			l->atom.args[0]->kind != GDL_TERM_VAR || l->atom.args[1]->kind != GDL_TERM_VAR)
		{
			*why = "not a rule of the mining language";
			return false;
		}
		out->body[i].rel = gpudl_kg_relation(kg, l->atom.name, true);
		if (out->body[i].rel < 0)
		{
			*why = psprintf("\"%s\" is not in the knowledge graph", l->atom.name);
			return false;
		}
		a = rule_var(map, &next, l->atom.args[0]->var);
		b = rule_var(map, &next, l->atom.args[1]->var);
		if (a < 0 || b < 0)
		{
			*why = "more than four variables";
			return false;
		}
		out->body[i].a = (int8_t) a;
		out->body[i].b = (int8_t) b;
	}
	return true;
}

/* See gpudl_kg.h. */
bool
gpudl_kg_stored_rules(GpudlKg *kg, const char *target, GdlMineRule **rules, int64 *nrules,
					  char ***texts)
{
	MemoryContext caller = CurrentMemoryContext;
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		args[2];
	int			head = gpudl_kg_relation(kg, target, false);
	uint64		i,
				n;
	int64		kept = 0;

	args[0] = CStringGetTextDatum(kg->program);
	args[1] = CStringGetTextDatum(target);
	SPI_connect();
	if (SPI_execute_with_args("SELECT rule, support, body_size, pca_body_size, head_coverage, "
							  "std_confidence, pca_confidence FROM gpudl.mined_rules "
							  "WHERE program = $1 AND target = $2 ORDER BY id",
							  2, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not read gpudl.mined_rules");
	n = SPI_processed;
	MemoryContextSwitchTo(caller);
	*rules = palloc0(sizeof(GdlMineRule) * (n + 1));
	*texts = palloc0(sizeof(char *) * (n + 1));
	for (i = 0; i < n; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		char	   *rtext = TextDatumGetCString(SPI_getbinval(tup, desc, 1, &isnull));
		GdlMineRule *r = &(*rules)[kept];
		const char *why = NULL;

		if (!parse_rule(kg, rtext, head, r, &why))
		{
			ereport(NOTICE,
					(errmsg("mined rule \"%s\" of program \"%s\" is not used: %s", rtext, kg->program, why),
					 errhint("Mine the program again with gpudl_mine(..., commit => true).")));
			continue;
		}
		r->support = DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));
		r->body_size = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
		r->pca_body_size = DatumGetInt64(SPI_getbinval(tup, desc, 4, &isnull));
		r->head_coverage = DatumGetFloat8(SPI_getbinval(tup, desc, 5, &isnull));
		r->std_confidence = DatumGetFloat8(SPI_getbinval(tup, desc, 6, &isnull));
		r->pca_confidence = DatumGetFloat8(SPI_getbinval(tup, desc, 7, &isnull));
		(*texts)[kept] = rtext;
		kept++;
		CHECK_FOR_INTERRUPTS();
	}
	SPI_finish();
	*nrules = kept;
	return n > 0;
}
