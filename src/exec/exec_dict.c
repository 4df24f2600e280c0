/*
 * exec_dict.c — the text dictionary of a run (GdlDict): strings to dense
 * 32-bit ids in first-seen order, through an open-addressing hash table,
 * and the rank of every id in byte order of the strings, computed lazily
 * for text ordering comparisons and text min/max.
 */
#include "gdl_engine.h"

#include <stdlib.h>
#include <string.h>

struct GdlDict
{
	int32_t		n;				/* strings */
	int32_t		cap;			/* capacity of strs/lens */
	char	  **strs;			/* id -> string (NUL terminated copy) */
	size_t	   *lens;
	int32_t    *table;			/* open addressing: id, or -1 */
	uint32_t	tmask;
	int32_t    *ranks;			/* NULL until asked for, or after new strings */
};

/* FNV-1a hash of a byte string. */
static uint32_t
hash_bytes(const char *s, size_t len)
{
	uint32_t	h = 2166136261u;
	size_t		i;

	for (i = 0; i < len; i++)
	{
		h ^= (unsigned char) s[i];
		h *= 16777619u;
	}
	return h;
}

/* A new, empty dictionary. */
GdlDict *
gdl_dict_create(void)
{
	GdlDict    *d = gdl_alloc(sizeof(GdlDict));
	uint32_t	i;

	d->cap = 64;
	d->strs = gdl_alloc(sizeof(char *) * d->cap);
	d->lens = gdl_alloc(sizeof(size_t) * d->cap);
	d->tmask = 127;
	d->table = gdl_alloc(sizeof(int32_t) * (d->tmask + 1));
	for (i = 0; i <= d->tmask; i++)
		d->table[i] = -1;
	return d;
}

/* Slot of string s in the table: its id's slot or the empty slot to use. */
static uint32_t
find_slot(const GdlDict *d, const char *s, size_t len)
{
	uint32_t	h = hash_bytes(s, len) & d->tmask;

	for (;;)
	{
		int32_t		id = d->table[h];

		if (id < 0 || (d->lens[id] == len && memcmp(d->strs[id], s, len) == 0))
			return h;
		h = (h + 1) & d->tmask;
	}
}

/* Double the hash table. */
static void
grow_table(GdlDict *d)
{
	uint32_t	i;

	gdl_free(d->table);
	d->tmask = d->tmask * 2 + 1;
	d->table = gdl_alloc(sizeof(int32_t) * ((size_t) d->tmask + 1));
	for (i = 0; i <= d->tmask; i++)
		d->table[i] = -1;
	for (i = 0; i < (uint32_t) d->n; i++)
		d->table[find_slot(d, d->strs[i], d->lens[i])] = (int32_t) i;
}

/* The id of a string, adding it when new. */
int32_t
gdl_dict_intern(GdlDict *d, const char *s, size_t len)
{
	uint32_t	slot = find_slot(d, s, len);
	int32_t		id;

	if (d->table[slot] >= 0)
		return d->table[slot];
	if (d->n == INT32_MAX)
		gdl_error(GDL_ERR_LIMIT, NULL, NULL, "too many distinct text values");
	if (d->n == d->cap)
	{
		d->cap *= 2;
		d->strs = gdl_realloc(d->strs, sizeof(char *) * d->cap);
		d->lens = gdl_realloc(d->lens, sizeof(size_t) * d->cap);
	}
	id = d->n++;
	d->strs[id] = gdl_strndup(s, len);
	d->lens[id] = len;
	d->table[slot] = id;
	if (d->ranks)
	{
		gdl_free(d->ranks);
		d->ranks = NULL;
	}
	if ((uint32_t) d->n * 2 > d->tmask)
		grow_table(d);
	return id;
}

/* The id of a string, or -1 when it is not in the dictionary. */
int32_t
gdl_dict_lookup(const GdlDict *d, const char *s, size_t len)
{
	return d->table[find_slot(d, s, len)];
}

/* The string of an id (NUL terminated); its length in *len when not NULL. */
const char *
gdl_dict_string(const GdlDict *d, int32_t id, size_t *len)
{
	if (id < 0 || id >= d->n)
		gdl_error(GDL_ERR_INTERNAL, NULL, NULL, "text id %d out of range", id);
	if (len)
		*len = d->lens[id];
	return d->strs[id];
}

/* Number of strings. */
int32_t
gdl_dict_size(const GdlDict *d)
{
	return d->n;
}

static const GdlDict *sort_dict;

/* qsort comparator: ids by byte order of their strings. */
static int
cmp_ids(const void *a, const void *b)
{
	int32_t		x = *(const int32_t *) a;
	int32_t		y = *(const int32_t *) b;
	size_t		lx = sort_dict->lens[x],
				ly = sort_dict->lens[y];
	int			c = memcmp(sort_dict->strs[x], sort_dict->strs[y], lx < ly ? lx : ly);

	if (c != 0)
		return c;
	return lx < ly ? -1 : (lx > ly ? 1 : 0);
}

/* Rank of every id in byte order of the strings (cached until a new string). */
const int32_t *
gdl_dict_ranks(GdlDict *d)
{
	int32_t    *order;
	int32_t		i;

	if (d->ranks)
		return d->ranks;
	order = gdl_alloc(sizeof(int32_t) * (d->n > 0 ? d->n : 1));
	for (i = 0; i < d->n; i++)
		order[i] = i;
	sort_dict = d;
	qsort(order, (size_t) d->n, sizeof(int32_t), cmp_ids);
	sort_dict = NULL;
	d->ranks = gdl_alloc(sizeof(int32_t) * (d->n > 0 ? d->n : 1));
	for (i = 0; i < d->n; i++)
		d->ranks[order[i]] = i;
	gdl_free(order);
	return d->ranks;
}
