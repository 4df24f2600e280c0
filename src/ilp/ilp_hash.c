/*
 * ilp_hash.c — the two hash sets the ILP core needs: 64-bit keys (packed
 * tuples) and candidate rules keyed by their canonical form.  Open
 * addressing with linear probing, capacity a power of two, load <= 1/2.
 */
#include "ilp_int.h"

#include <string.h>

/* Round up to a power of two, at least 16. */
static int64_t
pow2_at_least(int64_t n)
{
	int64_t		c = 16;

	while (c < n)
		c <<= 1;
	return c;
}

/* Start an empty key set sized for about 'expect' keys. */
void
ilp_keyset_init(IlpKeySet *s, int64_t expect)
{
	s->n = 0;
	s->cap = pow2_at_least(expect * 2);
	s->slots = gdl_alloc(sizeof(uint64_t) * s->cap);
}

/* Double the table and reinsert every key. */
static void
keyset_grow(IlpKeySet *s)
{
	uint64_t   *old = s->slots;
	int64_t		oldcap = s->cap;

	s->cap *= 2;
	s->slots = gdl_alloc(sizeof(uint64_t) * s->cap);
	for (int64_t i = 0; i < oldcap; i++)
	{
		if (old[i] != 0)
		{
			int64_t		h = ilp_mix64(old[i]) & (s->cap - 1);

			while (s->slots[h] != 0)
				h = (h + 1) & (s->cap - 1);
			s->slots[h] = old[i];
		}
	}
	gdl_free(old);
}

/* Insert a key; false when it was already there. */
bool
ilp_keyset_add(IlpKeySet *s, uint64_t key)
{
	uint64_t	k = key + 1;
	int64_t		h;

	if ((s->n + 1) * 2 > s->cap)
		keyset_grow(s);
	h = ilp_mix64(k) & (s->cap - 1);
	while (s->slots[h] != 0)
	{
		if (s->slots[h] == k)
			return false;
		h = (h + 1) & (s->cap - 1);
	}
	s->slots[h] = k;
	s->n++;
	return true;
}

/* Membership test. */
bool
ilp_keyset_has(const IlpKeySet *s, uint64_t key)
{
	uint64_t	k = key + 1;
	int64_t		h = ilp_mix64(k) & (s->cap - 1);

	while (s->slots[h] != 0)
	{
		if (s->slots[h] == k)
			return true;
		h = (h + 1) & (s->cap - 1);
	}
	return false;
}

/* Release the table. */
void
ilp_keyset_free(IlpKeySet *s)
{
	gdl_free(s->slots);
	s->slots = NULL;
	s->n = s->cap = 0;
}

/* Start an empty rule set. */
void
ilp_ruleset_init(IlpRuleSet *s)
{
	s->n = 0;
	s->cap = 1024;
	s->slots = gdl_alloc(sizeof(int64_t) * s->cap);
	s->keycap = 512;
	s->keys = gdl_alloc(sizeof(IlpRule) * s->keycap);
}

/* Insert a canonical rule; false when an equal rule is already there. */
bool
ilp_ruleset_add(IlpRuleSet *s, const IlpRule *r)
{
	int64_t		h;

	if ((s->n + 1) * 2 > s->cap)
	{
		int64_t    *old = s->slots;
		int64_t		oldcap = s->cap;

		s->cap *= 2;
		s->slots = gdl_alloc(sizeof(int64_t) * s->cap);
		for (int64_t i = 0; i < oldcap; i++)
		{
			if (old[i] != 0)
			{
				h = ilp_rule_hash(&s->keys[old[i] - 1]) & (s->cap - 1);
				while (s->slots[h] != 0)
					h = (h + 1) & (s->cap - 1);
				s->slots[h] = old[i];
			}
		}
		gdl_free(old);
	}
	h = ilp_rule_hash(r) & (s->cap - 1);
	while (s->slots[h] != 0)
	{
		if (ilp_rule_cmp(&s->keys[s->slots[h] - 1], r) == 0)
			return false;
		h = (h + 1) & (s->cap - 1);
	}
	if (s->n == s->keycap)
	{
		s->keycap *= 2;
		s->keys = gdl_realloc(s->keys, sizeof(IlpRule) * s->keycap);
	}
	s->keys[s->n] = *r;
	s->slots[h] = ++s->n;
	return true;
}

/* Release the set. */
void
ilp_ruleset_free(IlpRuleSet *s)
{
	gdl_free(s->slots);
	gdl_free(s->keys);
	memset(s, 0, sizeof(*s));
}
