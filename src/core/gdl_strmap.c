/*
 * gdl_strmap.c — a small string -> int map with open addressing, for the
 * core's name look-ups (predicates in analysis, adorned predicates in the
 * magic-sets rewrite).  Keys are not copied: they must outlive the map.
 */
#include "gdl_host.h"

#include <string.h>

/* FNV-1a hash of a NUL-terminated string. */
uint32_t
gdl_hash_string(const char *s)
{
	uint32_t	h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char) *s) * 16777619u;
	return h;
}

/* Look a key up; -1 when absent. */
int
gdl_strmap_get(const GdlStrMap *m, const char *key)
{
	uint32_t	i;

	if (m->nslots == 0)
		return -1;
	for (i = gdl_hash_string(key) & (m->nslots - 1); m->keys[i]; i = (i + 1) & (m->nslots - 1))
		if (strcmp(m->keys[i], key) == 0)
			return m->vals[i];
	return -1;
}

/* Insert or overwrite a key, growing the table at half load. */
void
gdl_strmap_put(GdlStrMap *m, const char *key, int val)
{
	uint32_t	i;

	if (2 * (m->nused + 1) > m->nslots)
	{
		GdlStrMap	old = *m;
		int			j;

		m->nslots = old.nslots ? old.nslots * 2 : 64;
		m->nused = 0;
		m->keys = gdl_alloc(sizeof(char *) * m->nslots);
		m->vals = gdl_alloc(sizeof(int) * m->nslots);
		for (j = 0; j < old.nslots; j++)
			if (old.keys[j])
				gdl_strmap_put(m, old.keys[j], old.vals[j]);
	}
	for (i = gdl_hash_string(key) & (m->nslots - 1); m->keys[i]; i = (i + 1) & (m->nslots - 1))
		if (strcmp(m->keys[i], key) == 0)
		{
			m->vals[i] = val;
			return;
		}
	m->keys[i] = key;
	m->vals[i] = val;
	m->nused++;
}
