/*
 * pg_kg_rules.c — rules stored by gpudl_mine(commit => true) in
 * gpudl.mined_rules, read back as rules of a graph for gpudl_predict: each
 * rule's text parsed with the language's parser, its variables mapped to
 * the core's X, Y, Z, W, its constants to the graph's entities (text through
 * the graph's dictionary) and its predicates to the graph's relations, its
 * measures as stored.
 */
#include "pg/gpudl_kg.h"
#include "svc/svc_int.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

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

/* Is the term a constant (of any type)? */
static bool
term_is_constant(const GdlTerm *t)
{
	return t->kind == GDL_TERM_INT || t->kind == GDL_TERM_FLOAT ||
		t->kind == GDL_TERM_TEXT || t->kind == GDL_TERM_BOOL;
}

/*
 * A constant of a stored rule as a value of the graph (text through the
 * graph's dictionary); false (with *why) when its type is not the graph's
 * or no fact of the graph mentions it.
 */
static bool
rule_constant(GpudlKg *kg, const GdlTerm *t, int64_t *value, const char **why)
{
	bool		ok = true;

	switch (t->kind)
	{
		case GDL_TERM_TEXT:
			ok = kg->type == GDL_TYPE_TEXT;
			*value = ok ? gdl_dict_lookup(kg->dict, t->text, strlen(t->text)) : -1;
			break;
		case GDL_TERM_INT:
			if (kg->type == GDL_TYPE_FLOAT8)
			{
				double		f = (double) t->ival;

				memcpy(value, &f, sizeof(f));
			}
			else
			{
				ok = kg->type == GDL_TYPE_BIGINT;
				*value = t->ival;
			}
			break;
		case GDL_TERM_FLOAT:
			ok = kg->type == GDL_TYPE_FLOAT8;
			memcpy(value, &t->fval, sizeof(double));
			break;
		case GDL_TERM_BOOL:
			ok = kg->type == GDL_TYPE_BOOL;
			*value = t->bval ? 1 : 0;
			break;
		default:
			ok = false;
			break;
	}
	if (!ok)
	{
		*why = psprintf("a constant is not of the knowledge graph's type %s", gdl_type_name(kg->type));
		return false;
	}
	if ((t->kind == GDL_TERM_TEXT && *value < 0) || gdl_mine_graph_entity(kg->graph, *value) < 0)
	{
		*why = t->kind == GDL_TERM_TEXT ?
			psprintf("constant \"%s\" is not an entity of the knowledge graph", t->text) :
			"a constant is not an entity of the knowledge graph";
		return false;
	}
	return true;
}

/*
 * One stored rule as a rule of the graph; false (with *why) when it does
 * not fit: a relation or a constant not in the graph, or not in the mining
 * language.  Heads r(X, Y), r(X, c) and r(c, X); body atoms with at most
 * one constant each.
 */
static bool
parse_rule(GpudlKg *kg, const char *text, int head, GdlMineRule *out, const char **why)
{
	GdlProgram *prog = gpudl_parse_text(text, "a mined rule");
	GdlClause  *c;
	GdlTerm   **ha;
	int		   *map;
	int			next = GDL_MINE_Z;
	int			i;

	if (prog->nitems != 1 || prog->items[0].kind != GDL_ITEM_CLAUSE)
	{
		*why = "not one clause";
		return false;
	}
	c = prog->items[0].clause;
	*why = "not a rule of the mining language";
	if (c->head.nargs != 2 || c->nbody < 1 || c->nbody > GDL_MINE_MAX_BODY)
		return false;
	ha = c->head.args;
	if (!(ha[0]->kind == GDL_TERM_VAR || term_is_constant(ha[0])) ||
		!(ha[1]->kind == GDL_TERM_VAR || term_is_constant(ha[1])) ||
		(ha[0]->kind != GDL_TERM_VAR && ha[1]->kind != GDL_TERM_VAR))
		return false;
	map = palloc(sizeof(int) * (c->nvars + 1));
	for (i = 0; i < c->nvars; i++)
		map[i] = -1;
	memset(out, 0, sizeof(*out));
	out->head = head;
	out->nbody = c->nbody;
	if (ha[0]->kind == GDL_TERM_VAR && ha[1]->kind == GDL_TERM_VAR)
	{
		map[ha[0]->var] = GDL_MINE_X;
		map[ha[1]->var] = GDL_MINE_Y;
	}
	else
	{
		bool		subject = ha[0]->kind != GDL_TERM_VAR;

		out->head_const = subject ? GDL_MINE_HEAD_SUBJECT : GDL_MINE_HEAD_OBJECT;
		map[ha[subject ? 1 : 0]->var] = GDL_MINE_X;
		if (!rule_constant(kg, ha[subject ? 0 : 1], &out->head_value, why))
			return false;
	}
	for (i = 0; i < c->nbody; i++)
	{
		GdlLiteral *l = &c->body[i];
		int			arg[2];

		*why = "not a rule of the mining language";
		if (l->kind != GDL_LIT_ATOM || l->atom.nargs != 2 ||
			(term_is_constant(l->atom.args[0]) && term_is_constant(l->atom.args[1])))
			return false;
		out->body[i].rel = gpudl_kg_relation(kg, l->atom.name, true);
		if (out->body[i].rel < 0)
		{
			*why = psprintf("\"%s\" is not in the knowledge graph", l->atom.name);
			return false;
		}
		for (int k = 0; k < 2; k++)
		{
			GdlTerm    *t = l->atom.args[k];

			if (term_is_constant(t))
			{
				if (!rule_constant(kg, t, &out->body[i].value, why))
					return false;
				arg[k] = GDL_MINE_C;
			}
			else if (t->kind == GDL_TERM_VAR)
			{
				arg[k] = rule_var(map, &next, t->var);
				if (arg[k] < 0)
				{
					*why = "more than four variables";
					return false;
				}
			}
			else
				return false;
		}
		out->body[i].a = (int8_t) arg[0];
		out->body[i].b = (int8_t) arg[1];
	}
	return true;
}

/*
 * See gpudl_kg.h.  The parser names the head's variables X (and Y) and the
 * others Z, then W, in the order the body first names them; the miner's
 * canonical form may name them otherwise (and leaves nothing else set but
 * the rule), so the copy is renamed the same way.
 */
void
gpudl_kg_rule_as_parsed(const GdlMineRule *in, GdlMineRule *out)
{
	int			map[GDL_MINE_C + 1];
	int			next = GDL_MINE_Z;

	for (int v = 0; v <= GDL_MINE_C; v++)
		map[v] = -1;
	memset(out, 0, sizeof(*out));
	out->head = in->head;
	out->nbody = in->nbody;
	out->head_const = in->head_const;
	map[GDL_MINE_X] = GDL_MINE_X;
	if (in->head_const == GDL_MINE_HEAD_VARS)
		map[GDL_MINE_Y] = GDL_MINE_Y;
	else
		out->head_value = in->head_value;
	for (int i = 0; i < in->nbody; i++)
	{
		const GdlMineAtom *a = &in->body[i];
		int8_t		arg[2] = {a->a, a->b};

		out->body[i].rel = a->rel;
		for (int k = 0; k < 2; k++)
		{
			if (arg[k] == GDL_MINE_C)
			{
				out->body[i].value = a->value;
				continue;
			}
			if (map[arg[k]] < 0)
				map[arg[k]] = next++;
			arg[k] = (int8_t) map[arg[k]];
		}
		out->body[i].a = arg[0];
		out->body[i].b = arg[1];
	}
	out->support = in->support;
	out->body_size = in->body_size;
	out->pca_body_size = in->pca_body_size;
	out->head_coverage = in->head_coverage;
	out->std_confidence = in->std_confidence;
	out->pca_confidence = in->pca_confidence;
}

/* See gpudl_kg.h. */
GpudlKgRules *
gpudl_kg_stored_rules(GpudlKg *kg, int rel)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext parse_cxt;
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		args[2];
	GpudlKgRules *kr;
	uint64		i,
				n;

	args[0] = CStringGetTextDatum(kg->program);
	args[1] = CStringGetTextDatum(kg->rels[rel].name);
	SPI_connect();
	if (SPI_execute_with_args("SELECT rule, support, body_size, pca_body_size, head_coverage, "
							  "std_confidence, pca_confidence FROM gpudl.mined_rules "
							  "WHERE program = $1 AND target = $2 ORDER BY id",
							  2, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not read gpudl.mined_rules");
	n = SPI_processed;
	MemoryContextSwitchTo(caller);
	if (n == 0)
	{
		SPI_finish();
		return NULL;
	}
	/*
	 * Each rule is parsed in a context of its own, reset after it: only the
	 * flat GdlMineRule and the text stay (a parse tree per rule kept 6 M
	 * stored rules over 18 GB), and the host memory count gets back what
	 * the reset frees.
	 */
	parse_cxt = AllocSetContextCreate(caller, "gpudl mined rule", ALLOCSET_SMALL_SIZES);
	kr = palloc0(sizeof(GpudlKgRules));
	kr->rules = palloc0(sizeof(GdlMineRule) * (n + 1));
	kr->texts = palloc0(sizeof(Datum) * (n + 1));
	for (i = 0; i < n; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		Datum		rule = SPI_getbinval(tup, desc, 1, &isnull);
		GdlMineRule *r = &kr->rules[kr->nrules];
		const char *why = NULL;
		int64		held = gpudl_memory_held();
		bool		ok;

		MemoryContextSwitchTo(parse_cxt);
		ok = parse_rule(kg, TextDatumGetCString(rule), rel, r, &why);
		if (!ok)
			ereport(NOTICE,
					(errmsg("mined rule \"%s\" of program \"%s\" is not used: %s",
							TextDatumGetCString(rule), kg->program, why),
					 errhint("Mine the program again with gpudl_mine(..., commit => true).")));
		MemoryContextSwitchTo(caller);
		MemoryContextReset(parse_cxt);
		gpudl_memory_set_held(held);
		if (!ok)
		{
			memset(r, 0, sizeof(*r));
			continue;
		}
		r->support = DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));
		r->body_size = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
		r->pca_body_size = DatumGetInt64(SPI_getbinval(tup, desc, 4, &isnull));
		r->head_coverage = DatumGetFloat8(SPI_getbinval(tup, desc, 5, &isnull));
		r->std_confidence = DatumGetFloat8(SPI_getbinval(tup, desc, 6, &isnull));
		r->pca_confidence = DatumGetFloat8(SPI_getbinval(tup, desc, 7, &isnull));
		/* the text as the result's rules array holds it, copied out of SPI */
		kr->texts[kr->nrules++] = PointerGetDatum(PG_DETOAST_DATUM_COPY(rule));
		CHECK_FOR_INTERRUPTS();
	}
	MemoryContextDelete(parse_cxt);
	SPI_finish();
	return kr;
}
