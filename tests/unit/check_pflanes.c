/* check_pflanes.c - the tracks of the .pftrace's events that take no lane
 * of pflanes.c: "B" and "E" on a track of their own under their thread's,
 * and the flows in them (pftrack.c's cm_pf_event_uuid); and the test for a
 * lone UTF-16 surrogate in a string the transcoder writes (pfevent.h). */
#include "config.h"
#include "check_common.h"
#include "pftrace/pftrack.h"
#include "base/buf.h"

/* The WTF-8 form of a lone surrogate (ED A0..BF xx) is found anywhere in a
 * string; the UTF-8 of U+D7FF (ED 9F BF), of a character beyond the BMP
 * and an ED at the end are not it. */
START_TEST(lone_surrogate)
{
	static const struct {
		const char *s;
		int lone;
	} cases[] = {
		{"", 0},
		{"plain", 0},
		{"a\xED\x9F\xBF", 0},              /* U+D7FF */
		{"\xF0\x9F\x98\x80", 0},           /* U+1F600, a pair's character */
		{"\xED\xA0\x80", 1},               /* \ud800 */
		{"x\xED\xBF\xBFy", 1},             /* \udfff */
		{"\xED\x80\x80\xED\xB0\x80", 1},   /* U+D000, then \udc00 */
		{"ab\xED", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		ck_assert_int_eq(cm_pf_lone_surrogate(cases[i].s, strlen(cases[i].s)), cases[i].lone);
}
END_TEST

/* cm_pf_event_uuid for PH at TS, the last "X" before it (thread XT, from XB
 * to XE) being the one before the batch. */
static uint64_t ev(cm_pfev *e, struct track *t, int ph, int64_t ts, uint64_t xt, int64_t xb, int64_t xe)
{
	e->last_thread = xt, e->last_b = xb, e->last_e = xe;
	return cm_pf_event_uuid(e, t, ph, ts, NULL);
}

/* cm_pf_event_uuid along a thread's events in the order of the file. */
START_TEST(event_tracks)
{
	cm_buf out = {0};
	cm_pfev *e = cm_pfev_new(&out, "t");
	struct track t;
	uint64_t be;
	memset(&t, 0, sizeof t);
	t.uuid = 10;
	/* no "B" yet: the thread's own track, nothing described */
	ck_assert_uint_eq(ev(e, &t, 'i', 1, 0, 0, 0), 10);
	ck_assert_uint_eq(ev(e, &t, 's', 1, 0, 0, 0), 10);
	ck_assert_uint_eq(out.len, 0);
	/* an "E" with none open: on the "B"/"E" track (described), dropped there */
	be = ev(e, &t, 'E', 2, 0, 0, 0);
	ck_assert_uint_ne(be, 10);
	ck_assert_uint_gt(out.len, 0);
	ck_assert_uint_eq(ev(e, &t, 's', 3, 0, 0, 0), 10);
	/* a "B" open: flows go on its track but in an "X" of the thread begun
	 * in it (bound to that one's lane by pfseg.c) */
	ck_assert_uint_eq(ev(e, &t, 'B', 100, 0, 0, 0), be);
	ck_assert_uint_eq(ev(e, &t, 's', 150, 0, 0, 0), be);
	ck_assert_uint_eq(ev(e, &t, 't', 150, 10, 120, 200), 10);
	ck_assert_uint_eq(ev(e, &t, 'f', 150, 10, 100, 200), 10); /* begun with it: the "X" inside */
	ck_assert_uint_eq(ev(e, &t, 's', 150, 10, 50, 200), be);  /* begun before: the "B" inside */
	ck_assert_uint_eq(ev(e, &t, 's', 250, 10, 120, 200), be); /* after the "X" */
	ck_assert_uint_eq(ev(e, &t, 's', 150, 11, 120, 200), be); /* another thread's "X" */
	ck_assert_uint_eq(ev(e, &t, 'i', 150, 0, 0, 0), 10);      /* an instant: the thread's */
	/* a "B" in it, ended, then the outer one ended: the thread's again */
	ck_assert_uint_eq(ev(e, &t, 'B', 160, 0, 0, 0), be);
	ck_assert_uint_eq(ev(e, &t, 's', 170, 10, 120, 200), be); /* the inner "B" begun after the "X" */
	ck_assert_uint_eq(ev(e, &t, 'E', 180, 0, 0, 0), be);
	ck_assert_uint_eq(ev(e, &t, 'E', 300, 0, 0, 0), be);
	ck_assert_uint_eq(ev(e, &t, 's', 310, 0, 0, 0), 10);
	ck_assert_uint_eq(ev(e, &t, 'E', 320, 0, 0, 0), be);
	ck_assert_uint_eq(ev(e, &t, 's', 330, 0, 0, 0), 10);
	/* many open: the list grows */
	for (int i = 0; i < 1000; i++)
		ck_assert_uint_eq(ev(e, &t, 'B', 400 + i, 0, 0, 0), be);
	ck_assert_uint_eq(ev(e, &t, 's', 2000, 10, 1398, 3000), be);
	ck_assert_uint_eq(ev(e, &t, 's', 2000, 10, 1399, 3000), 10);
	/* the last "X" the batch's own (X), not the one before the batch */
	{
		const struct lastx x = {10, 1399, 3000};
		e->last_thread = 10, e->last_b = 0, e->last_e = 5000;
		ck_assert_uint_eq(cm_pf_event_uuid(e, &t, 's', 2000, &x), 10);
		ck_assert_uint_eq(cm_pf_event_uuid(e, &t, 's', 4000, &x), be);
		ck_assert_uint_eq(cm_pf_event_uuid(e, &t, 's', 4000, NULL), be); /* (begun before the "B") */
	}
	free(t.be_open);
	cm_pfev_free(e);
	cm_buf_free(&out);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pflanes");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, lone_surrogate);
	tcase_add_test(tc, event_tracks);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
