/* check_optnum.c - the command lines' numbers (base/optnum.c) and UTF-8
 * (base/utf8.c): the grammar a user types, each edge strtod and strtol
 * would have taken (a blank, '+', hex, inf, nan, a bare '.', a cut
 * exponent), and the replacement of stray bytes. */
#include "check_common.h"
#include "base/optnum.h"
#include "base/utf8.h"

START_TEST(test_decimal)
{
	static const struct {
		const char *s;
		double v;
	} good[] = {{"0", 0}, {"5", 5}, {"-5", -5}, {"1.", 1}, {".5", .5}, {"-.5", -.5}, {"1.5e9", 1.5e9},
		    {"1E3", 1e3}, {"2e-3", 2e-3}, {"2e+3", 2e3}, {"007", 7}};
	static const char *const bad[] = {"", " 5", "5 ", "+5", "-", ".", "-.", "e5", "1e", "1e+", "1e-", "0x10",
					  "0x1p3", "inf", "-inf", "nan", "1e400", "1,5", "5s", "--5", "1..2"};
	double v;
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		ck_assert_msg(cm_optnum_decimal(good[i].s, &v) == 0, "refused '%s'", good[i].s);
		ck_assert_msg(v == good[i].v, "'%s' read as %g", good[i].s, v);
	}
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		ck_assert_msg(cm_optnum_decimal(bad[i], &v) < 0, "took '%s'", bad[i]);
}
END_TEST

START_TEST(test_count_steps_range)
{
	unsigned long long a, b;
	double lo, hi;
	ck_assert_int_eq(cm_optnum_count("4", 4096), 4);
	ck_assert_int_eq(cm_optnum_count("4096", 4096), 4096);
	ck_assert_int_eq(cm_optnum_count("4097", 4096), -1);
	ck_assert_int_eq(cm_optnum_count(" 4", 4096), -1);
	ck_assert_int_eq(cm_optnum_count("+4", 4096), -1);
	ck_assert_int_eq(cm_optnum_count("", 4096), -1);
	/* 19 digits: strtol clamps to LONG_MAX, which a MAX of LONG_MAX takes */
	ck_assert_int_eq(cm_optnum_count("9999999999999999999", 0x7fffffffffffffffL), -1);
	ck_assert_int_eq(cm_optnum_steps("3", &a, &b), 0);
	ck_assert(a == 3 && b == 3);
	ck_assert_int_eq(cm_optnum_steps("2-5", &a, &b), 0);
	ck_assert(a == 2 && b == 5);
	ck_assert_int_eq(cm_optnum_steps("5-2", &a, &b), -1);
	ck_assert_int_eq(cm_optnum_steps("2-", &a, &b), -1);
	ck_assert_int_eq(cm_optnum_steps("+2", &a, &b), -1);
	ck_assert_int_eq(cm_optnum_range("-1e3,2.5", &lo, &hi), 0);
	ck_assert(lo == -1e3 && hi == 2.5);
	ck_assert_int_eq(cm_optnum_range(" 1,2", &lo, &hi), -1);
	ck_assert_int_eq(cm_optnum_range("1, 2", &lo, &hi), -1);
	ck_assert_int_eq(cm_optnum_range("2,1", &lo, &hi), -1);
	ck_assert_int_eq(cm_optnum_range("1,1", &lo, &hi), -1);
	ck_assert_int_eq(cm_optnum_range("1,", &lo, &hi), -1);
	ck_assert_int_eq(cm_optnum_range("1,2,3", &lo, &hi), -1);
}
END_TEST

START_TEST(test_utf8)
{
	char *c;
	ck_assert(cm_utf8_ok("plain"));
	ck_assert(cm_utf8_ok("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
	ck_assert(!cm_utf8_ok("x\xffy"));
	ck_assert(!cm_utf8_ok("\xc0\xaf"));         /* overlong '/' */
	ck_assert(!cm_utf8_ok("\xed\xa0\x80"));     /* a surrogate */
	ck_assert(!cm_utf8_ok("\xf4\x90\x80\x80")); /* past U+10FFFF */
	ck_assert(!cm_utf8_ok("\xe2\x82"));         /* cut short */
	c = cm_utf8_clean("r\xffx\xe2\x82");
	ck_assert_str_eq(c, "r\xef\xbf\xbdx\xef\xbf\xbd\xef\xbf\xbd");
	free(c);
	c = cm_utf8_clean("caf\xc3\xa9");
	ck_assert_str_eq(c, "caf\xc3\xa9");
	free(c);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("optnum");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_decimal);
	tcase_add_test(tc, test_count_steps_range);
	tcase_add_test(tc, test_utf8);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
