/*
 * test_tables.c — fake tables for the engine tests (see test_tables.h):
 * one copy of the tables, their resolver and their loader.
 */
#include "test_tables.h"
#include "test_util.h"

#include <string.h>

Table		tables[MAXT];
int			ntables;

static const char *const colnames[] = {"a", "b", "c", "d"};
static const char *const typnames[] = {"int4", "int4", "int4", "int4"};

/* Add (or reset) a table. */
Table *
table(const char *name, int ncols, GdlType type)
{
	Table	   *t = NULL;
	int			i;

	for (i = 0; i < ntables; i++)
		if (strcmp(tables[i].name, name) == 0)
			t = &tables[i];
	if (t == NULL)
		t = &tables[ntables++];
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->ncols = ncols;
	for (i = 0; i < ncols; i++)
		t->types[i] = type;
	return t;
}

/* A table by name. */
const Table *
table_get(const char *name)
{
	int			i;

	for (i = 0; i < ntables; i++)
		if (strcmp(tables[i].name, name) == 0)
			return &tables[i];
	return NULL;
}

/* A random int relation with values below 'range'. */
void
tables_random_ints(uint64_t *rng, const char *name, int ncols, int nrows, int range)
{
	Table	   *t = table(name, ncols, GDL_TYPE_INT);
	int			i,
				c;

	for (i = 0; i < nrows; i++)
		for (c = 0; c < ncols; c++)
			t->ival[i][c] = (int64_t) (gdl_test_xorshift(rng) % (uint64_t) range);
	t->nrows = nrows;
}

/* A random text relation over the first 'nw' words. */
void
tables_random_text(uint64_t *rng, const char *name, int nrows, const char *const *words, int nw)
{
	Table	   *t = table(name, 2, GDL_TYPE_TEXT);
	int			i;

	for (i = 0; i < nrows; i++)
	{
		t->sval[i][0] = words[gdl_test_xorshift(rng) % nw];
		t->sval[i][1] = words[gdl_test_xorshift(rng) % nw];
	}
	t->nrows = nrows;
}

/* Resolver for the analysis. */
bool
tables_resolve(void *arg, const char *name, GdlRelInfo *out)
{
	const Table *t = table_get(name);

	if (t == NULL)
		return false;
	out->relid = 100 + (uint32_t) (t - tables);
	out->display_name = (char *) t->name;
	out->ncols = t->ncols;
	out->types = (GdlType *) t->types;
	out->colnames = (char **) colnames;
	out->typnames = (char **) typnames;
	return true;
}

/* Encoded cell value. */
int64_t
table_cell(const Table *t, int r, int c, GdlDict *dict)
{
	if (t->types[c] == GDL_TYPE_TEXT)
		return gdl_dict_intern(dict, t->sval[r][c], strlen(t->sval[r][c]));
	return t->ival[r][c];
}

/* The loader's part for a table: its columns, encoded. */
void
tables_load(const char *name, GdlDict *dict, GdlColumns *out)
{
	Table	   *t = (Table *) table_get(name);
	int			r,
				c;

	if (t == NULL)
		gdl_error(GDL_ERR_UNDEFINED, NULL, NULL, "no table %s", name);
	t->loads++;
	out->ncols = t->ncols;
	out->nrows = t->nrows;
	out->cols = gdl_alloc(sizeof(int64_t *) * (out->ncols + 1));
	for (c = 0; c < out->ncols; c++)
	{
		out->cols[c] = gdl_alloc(sizeof(int64_t) * (out->nrows + 1));
		for (r = 0; r < t->nrows; r++)
			out->cols[c][r] = table_cell(t, r, c, dict);
	}
}
