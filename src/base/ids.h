/* ids.h - the ids that key the tables (External ids, correlation, device
 * and stream ids) and the 64 bits they are kept in.
 *
 * CUPTI's ids are uint64 (an External id that other code pushes through
 * cuptiActivityPushExternalCorrelationId can be anything), torch's
 * int64, and the reference takes any Python int.  So a run's ids may lie
 * anywhere in [-2^63, 2^64): a table key is the id modulo 2^64 (its two's
 * complement), which is exact as long as no run holds a negative id and
 * one at or above 2^63 of the same kind, which would share keys.  The
 * readers note which of the two each kind has met (CM_ID_NEG, CM_ID_HIGH),
 * and a run that has both is refused before anything is written
 * (cm_gpu_check_ids).  Given one kind's signs, a key gives back its id
 * (cm_id_value) and orders as the ids do (cm_id_order). */
#ifndef CM_IDS_H
#define CM_IDS_H

#include <stdint.h>
#include "base/pyval.h"

#define CM_ID_NEG 1u  /* an id below 0 was met */
#define CM_ID_HIGH 2u /* an id in [2^63, 2^64) was met */

/* The kinds of ids, each one space of keys. */
enum { CM_IDS_EXT, CM_IDS_CORR, CM_IDS_DEV, CM_IDS_STREAM, CM_IDS_N };

/* The key of id V: 1 and *KEY when V lies in [-2^63, 2^64), its signs
 * or'ed into *SIGNS (when not NULL); 0 when V needs more than 64 bits. */
static inline int cm_id_key(cm_int v, int64_t *key, unsigned *signs)
{
	if (v < INT64_MIN || v > (cm_int)UINT64_MAX)
		return 0;
	*key = (int64_t)(uint64_t)(unsigned __int128)v;
	if (signs)
		*signs |= v < 0 ? CM_ID_NEG : v > INT64_MAX ? CM_ID_HIGH : 0;
	return 1;
}

/* The same signs or'ed into *SIGNS, which other threads may be or-ing
 * into at once (a word written only the first time a sign is met). */
static inline void cm_id_note_shared(unsigned *signs, unsigned s)
{
	if (s && (__atomic_load_n(signs, __ATOMIC_RELAXED) & s) != s)
		__atomic_fetch_or(signs, s, __ATOMIC_RELAXED);
}

/* The id of KEY, in a kind whose ids had SIGNS. */
static inline cm_int cm_id_value(int64_t key, unsigned signs)
{
	return (signs & CM_ID_HIGH) && key < 0 ? (cm_int)(uint64_t)key : (cm_int)key;
}

/* KEY as a signed word that orders as the ids do: in a kind with ids at or
 * above 2^63 (and so none below 0) the keys order as unsigned words. */
static inline int64_t cm_id_order(int64_t key, unsigned signs)
{
	return (signs & CM_ID_HIGH) ? (int64_t)((uint64_t)key ^ (UINT64_C(1) << 63)) : key;
}

#endif
