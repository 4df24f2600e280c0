/*
 * test_tables.h — fake tables for the tests that run Datalog programs on
 * the engine (test_engine.c, test_magic.c): named relations of int and text
 * columns held in memory, filled by hand or at random, which a resolver
 * reports to the analysis and a loader hands to gdl_run.
 */
#ifndef TEST_TABLES_H
#define TEST_TABLES_H

#include "test_host.h"
#include "../../src/exec/gdl_engine.h"

#define MAXT 8					/* tables at most */
#define MAXROWS 4096			/* rows of a table at most */
#define MAXCOLS 4				/* columns of a table at most */

typedef struct Table
{
	const char *name;
	int			ncols;
	GdlType		types[MAXCOLS];
	int			nrows;
	int64_t		ival[MAXROWS][MAXCOLS];	/* int columns */
	const char *sval[MAXROWS][MAXCOLS];	/* text columns */
	int			loads;			/* times tables_load loaded it */
} Table;

extern Table tables[MAXT];
extern int	ntables;

/* Add (or reset to empty) the table name of ncols columns of type. */
extern Table *table(const char *name, int ncols, GdlType type);
/* The table name; NULL when there is none. */
extern const Table *table_get(const char *name);
/* A random int table: values below range, xorshift64 from *rng. */
extern void tables_random_ints(uint64_t *rng, const char *name, int ncols, int nrows, int range);
/* A random pair of text columns over words[0..nw), xorshift64 from *rng. */
extern void tables_random_text(uint64_t *rng, const char *name, int nrows, const char *const *words,
							   int nw);
/* A GdlResolveFn for the tables: relid 100 + index, columns a, b, c, d. */
extern bool tables_resolve(void *arg, const char *name, GdlRelInfo *out);
/* The encoded value of cell (r, c) of t: text through dict. */
extern int64_t table_cell(const Table *t, int r, int c, GdlDict *dict);
/* Load table name into out (counting the load); raise when there is none. */
extern void tables_load(const char *name, GdlDict *dict, GdlColumns *out);

#endif							/* TEST_TABLES_H */
