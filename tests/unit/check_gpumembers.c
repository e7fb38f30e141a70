/* check_gpumembers.c - the members the render notes as it writes an
 * event (gpu/gpumembers.h), which the .pftrace's encoder takes instead of
 * parsing the text again: their pointers made good when the buffer moves,
 * and each member's key number (kno) and fixed-string mark (sfix), however
 * it was noted.  Apart from the records (check_gpurecs): this is the
 * render's side of its contract with the .pftrace's encoder. */
#include "config.h"
#include "check_common.h"
#include "gpu/gpumembers.h"
#include "base/diag.h"
#include "json/jwrite.h"

/* B's bytes moved elsewhere (a new block, the old freed): what a grow
 * may do. */
static void move_buf(cm_buf *b)
{
	char *p = cm_xmalloc(b->cap);
	memcpy(p, b->p, b->len);
	free(b->p);
	b->p = p;
}

/* gpu_members' pointers into the text: made as each member is written,
 * and made again from their offsets when the buffer moved during the
 * record (MOVE 1: between two members, 2: after the last, 3: before the
 * first, so both pointers stale; 4: between them and back after the last,
 * so the second is stale with the buffer where it began) or not (0). */
START_TEST(gpu_members_moves)
{
	static struct gpu_members m;
	cm_buf b = {0};
	const cm_jval *t, *k;
	size_t at;
	char *home = NULL, *away = cm_xmalloc(256);
	gpu_members_init(&m);
	for (int move = 0; move < 5; move++) {
		b.len = 0;
		cm_buf_grow(&b, 64);
		gpu_members_reset(&m, &b);
		if (move == 3)
			move_buf(&b);
		gpu_members_element(&m);
		cm_buf_lit(&b, "{\"pid\":");
		at = b.len;
		cm_jw_int(&b, 12);
		gpu_members_int(&m, "pid", 3, &b, at, 12);
		if (move == 1)
			move_buf(&b);
		if (move == 4) { /* (room enough: no grow below) */
			home = b.p;
			memcpy(away, b.p, b.len);
			b.p = away;
		}
		cm_buf_lit(&b, ",\"name\":");
		at = b.len;
		cm_buf_lit(&b, "\"ab\"");
		gpu_members_str(&m, "name", 4, &b, at);
		cm_buf_putc(&b, '}');
		if (move == 2)
			move_buf(&b);
		if (move == 4) {
			memcpy(home, b.p, b.len);
			b.p = home;
		}
		gpu_members_fix(&m, &b);
		ck_assert_ptr_nonnull(t = gpu_members_tree(&m, 0));
		ck_assert_uint_eq(t->len, 2);
		k = t->kids;
		ck_assert_ptr_eq(k->s, b.p + 7);
		ck_assert(k->len == 2 && !memcmp(k->s, "12", 2) && k->has_iv == 1 && k->iv == 12);
		k = k->next;
		ck_assert_ptr_eq(k->s, b.p + 18);
		ck_assert(k->len == 2 && !memcmp(k->s, "ab", 2) && !k->next);
	}
	cm_buf_free(&b);
	free(away);
}
END_TEST

/* Every member of an event that gpu_members notes says which it is (kno:
 * the .pftrace's encoder takes its word for it), the one that jval.h's
 * cm_jkey_no finds by its key, whichever way it was noted (node by node,
 * a row copied, a flow or an X event at once); a node deeper says none of
 * them (an arg named "name" is no event's name). */
static void check_kno(const cm_jval *t)
{
	unsigned n = 0;
	ck_assert_ptr_nonnull(t);
	for (const cm_jval *k = t->kids; k; k = k->next, n++) {
		unsigned na = 0;
		ck_assert_msg(k->kno == cm_jkey_no(k->key, k->klen) && k->kno != CM_JK_UNSAID, "\"%.*s\" says %u",
			      (int)k->klen, k->key, k->kno);
		for (const cm_jval *a = k->kids; a; a = a->next, na++)
			ck_assert_uint_eq(a->kno, CM_JK_OTHER);
		ck_assert_uint_eq(na, k->kids ? k->len : 0);
	}
	ck_assert_uint_eq(n, t->len); /* (the members linked, as many as it says) */
}

/* The event T's category and name say sfix (their bytes stay while the
 * encoder's batch lasts) as CAT and NAME, no other member of it. */
static void check_sfix(const cm_jval *t, int cat, int name)
{
	for (const cm_jval *k = t->kids; k; k = k->next)
		ck_assert_msg(k->sfix == (k->kno == CM_JK_CAT ? cat : k->kno == CM_JK_NAME ? name : 0), "\"%.*s\": sfix %u",
			      (int)k->klen, k->key, k->sfix);
}

START_TEST(gpu_members_kno)
{
	static struct gpu_members m;
	static const char *const keys[] = {"name", "cbid"};
	static const unsigned char klens[] = {4, 4};
	static const cm_int vals[] = {7, 8};
	static const struct {
		const char *key;
		unsigned char kno;
	} known[] = {{"ph", CM_JK_PH},     {"name", CM_JK_NAME}, {"cat", CM_JK_CAT}, {"ts", CM_JK_TS},
		     {"dur", CM_JK_DUR},   {"pid", CM_JK_PID},   {"tid", CM_JK_TID}, {"args", CM_JK_ARGS},
		     {"id", CM_JK_ID},     {"s", CM_JK_S},       {"bp", CM_JK_BP},   {"p", CM_JK_OTHER},
		     {"pidx", CM_JK_OTHER}, {"nam", CM_JK_OTHER}, {"", CM_JK_OTHER}, {"argz", CM_JK_OTHER}};
	cm_buf b = {0};
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		ck_assert_uint_eq(cm_jkey_no(known[i].key, strlen(known[i].key)), known[i].kno);
	ck_assert_uint_eq(cm_jkey_no(NULL, 0), CM_JK_OTHER);
	cm_buf_grow(&b, 64);
	gpu_members_init(&m);
	/* node by node, then its flow with the row copied */
	m.lean = 1;
	gpu_members_reset(&m, &b);
	gpu_members_element(&m);
	gpu_members_lit(&m, "ph", 2, "X", 1);
	gpu_members_lit(&m, "name", 4, "k", 1);
	gpu_members_lean_int(&m, "pid", 3, 1);
	gpu_members_lean_int(&m, "tid", 3, 2);
	gpu_members_row(&m);
	gpu_members_lean_time(&m, "ts", 2, 1000);
	gpu_members_lean_time(&m, "dur", 3, 1000);
	gpu_members_lit(&m, "other", 5, "o", 1);
	gpu_members_open(&m, "args", 4, CM_J_OBJ);
	gpu_members_lean_int(&m, "name", 4, 3);
	gpu_members_lit(&m, "cat", 3, "c", 1);
	gpu_members_close(&m);
	gpu_members_element(&m);
	gpu_members_lit(&m, "ph", 2, "s", 1);
	gpu_members_row_copy(&m, &b, 0, 0);
	check_kno(gpu_members_tree(&m, 0));
	check_kno(gpu_members_tree(&m, 1));
	check_sfix(gpu_members_tree(&m, 0), 0, 0); /* (node by node: none says) */
	ck_assert_uint_eq(gpu_members_tree(&m, 0)->len, 8);
	ck_assert_uint_eq(gpu_members_tree(&m, 1)->len, 3);
	/* an X event and its flows at once */
	for (int ph = 0; ph < 4; ph++) { /* (an "f" after an "s", and back: the nodes kept in their places) */
		gpu_members_reset(&m, &b);
		ck_assert(gpu_members_x(&m, "cuda_runtime", 12, "cudaLaunchKernel", 16, 1, 2, 1000, 2000, keys, klens, vals,
					2 - ph % 2));
		ck_assert(!gpu_members_x(&m, "cuda_runtime", 12, "cudaLaunchKernel", 16, 1, 2, 1000, 2000, keys, klens,
					 vals, 2)); /* (one a record) */
		ck_assert(gpu_members_flow(&m, ph % 2 ? 'f' : 's', 9, 3000));
		check_kno(gpu_members_tree(&m, 0));
		check_kno(gpu_members_tree(&m, 1));
		ck_assert_uint_eq(gpu_members_tree(&m, 0)->kids->next->next->next->next->next->next->next->len, 2 - ph % 2);
		ck_assert_uint_eq(gpu_members_tree(&m, 1)->len, ph % 2 ? 8 : 7);
		ck_assert_int_eq(gpu_members_tree(&m, 1)->kids->next->next->iv, 1); /* (the X's pid, copied) */
		/* the strings that stay (sfix): the X's category, a literal, not
		 * its name (the API cache's head); the flow's both, literals */
		check_sfix(gpu_members_tree(&m, 0), 1, 0);
		check_sfix(gpu_members_tree(&m, 1), 1, 1);
	}
	/* a kernel's: its head at once, then member by member, and its flow */
	for (int rec = 0; rec < 2; rec++) {
		gpu_members_reset(&m, &b);
		gpu_members_element(&m);
		ck_assert(gpu_members_head(&m, "kernel", 6, "k0", 2, 7, 8 + rec));
		ck_assert(!gpu_members_head(&m, "kernel", 6, "k0", 2, 7, 8)); /* (one a record) */
		gpu_members_lean_time(&m, "ts", 2, 1000);
		gpu_members_lean_time(&m, "dur", 3, 1000);
		gpu_members_open(&m, "args", 4, CM_J_OBJ);
		gpu_members_lean_int(&m, "device", 6, 0);
		gpu_members_close(&m);
		ck_assert(gpu_members_flow(&m, 'f', 9, 3000));
		check_kno(gpu_members_tree(&m, 0));
		check_kno(gpu_members_tree(&m, 1));
		ck_assert_uint_eq(gpu_members_tree(&m, 0)->len, 8);
		ck_assert_int_eq(gpu_members_tree(&m, 1)->kids->next->next->next->iv, 8 + rec); /* (the head's tid) */
		check_sfix(gpu_members_tree(&m, 0), 1, 1); /* (a literal, the window's name table's) */
	}
	gpu_members_reset(&m, &b); /* (not first: node by node) */
	gpu_members_element(&m);
	gpu_members_lit(&m, "ph", 2, "X", 1);
	ck_assert(!gpu_members_head(&m, "kernel", 6, "k0", 2, 7, 8));
	cm_buf_free(&b);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("gpumembers");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60); /* a loaded machine (make -j distcheck) is slow */
	tcase_add_test(tc, gpu_members_moves);
	tcase_add_test(tc, gpu_members_kno);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
