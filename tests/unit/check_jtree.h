/* check_jtree.h - the unit tests' comparison of two cm_jval trees, node
 * for node: check_pfelement's and check_pfparse's readings of an element
 * against cm_jval_parse_py's tree.  (pftrace/pfinsert.c's same_value is
 * another rule: a given tree's kept number values count there.) */
#ifndef CHECK_JTREE_H
#define CHECK_JTREE_H

#include "json/jval.h"

#include <string.h>

/* 1 when the trees A and B are the same: types, keys, texts, kids in order. */
static inline int check_same_tree(const cm_jval *a, const cm_jval *b)
{
	if (!a || !b)
		return a == b;
	if (a->type != b->type || a->len != b->len || a->klen != b->klen ||
	    (a->klen && memcmp(a->key, b->key, a->klen)) ||
	    ((a->type == CM_J_NUM || a->type == CM_J_STR) && a->len && memcmp(a->s, b->s, a->len)))
		return 0;
	for (a = a->kids, b = b->kids; a || b; a = a->next, b = b->next)
		if (!a || !b || !check_same_tree(a, b))
			return 0;
	return 1;
}

#endif
