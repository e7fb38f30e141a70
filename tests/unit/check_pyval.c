/* check_pyval.c - Python number semantics and the number writers. */
#include "config.h"
#include "check_common.h"
#include "json/jwrite.h"
#include "base/pyval.h"

#include <math.h>

static const char *fmt_int(cm_int v)
{
	static char buf[64];
	cm_int_format(v, buf);
	return buf;
}

START_TEST(int_of_str)
{
	cm_int v;
	ck_assert_int_eq(cm_py_int_of_str(" 12 ", 4, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "12");
	ck_assert_int_eq(cm_py_int_of_str("1_000", 5, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "1000");
	ck_assert_int_eq(cm_py_int_of_str("-0", 2, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "0");
	ck_assert_int_eq(cm_py_int_of_str("+7", 2, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "7");
	ck_assert_int_eq(cm_py_int_of_str("_1", 2, &v), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_int_of_str("1__0", 4, &v), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_int_of_str("1_", 2, &v), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_int_of_str("12.0", 4, &v), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_int_of_str("x", 1, &v), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_int_of_str("", 0, &v), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_int_of_str("-", 1, &v), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_int_of_str("170141183460469231731687303715884105727", 39, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "170141183460469231731687303715884105727");
	ck_assert_int_eq(cm_py_int_of_str("170141183460469231731687303715884105728", 39, &v), CM_PY_OVERFLOW);
	ck_assert_int_eq(cm_py_int_of_str("-170141183460469231731687303715884105728", 40, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "-170141183460469231731687303715884105728");
}
END_TEST

START_TEST(int_of_number)
{
	cm_int v;
	ck_assert_int_eq(cm_py_int_of_number("18446744073709551615", 20, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "18446744073709551615");
	ck_assert_int_eq(cm_py_int_of_number("12.9", 4, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "12");
	ck_assert_int_eq(cm_py_int_of_number("-12.9", 5, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "-12");
	ck_assert_int_eq(cm_py_int_of_number("1e3", 3, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "1000");
	ck_assert_int_eq(cm_py_int_of_number("1e30", 4, &v), CM_PY_OK);
	/* int(1e30) is the double's exact value, not 10**30 */
	ck_assert_str_eq(fmt_int(v), "1000000000000000019884624838656");
	ck_assert_int_eq(cm_py_int_of_number("1e999", 5, &v), CM_PY_OVERFLOW);
	ck_assert_int_eq(cm_py_int_of_number("-0", 2, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "0");
	ck_assert(cm_json_number_is_int("-12", 3));
	ck_assert(!cm_json_number_is_int("1E2", 3));
}
END_TEST

START_TEST(float_of_str)
{
	double d;
	ck_assert_int_eq(cm_py_float_of_str(" 1.5 ", 5, &d), CM_PY_OK);
	ck_assert(d == 1.5);
	ck_assert_int_eq(cm_py_float_of_str("1_0.2_5", 7, &d), CM_PY_OK);
	ck_assert(d == 10.25);
	ck_assert_int_eq(cm_py_float_of_str("-Infinity", 9, &d), CM_PY_OK);
	ck_assert(isinf(d) && d < 0);
	ck_assert_int_eq(cm_py_float_of_str("nan", 3, &d), CM_PY_OK);
	ck_assert(isnan(d));
	ck_assert_int_eq(cm_py_float_of_str(".5", 2, &d), CM_PY_OK);
	ck_assert(d == 0.5);
	ck_assert_int_eq(cm_py_float_of_str("5.", 2, &d), CM_PY_OK);
	ck_assert_int_eq(cm_py_float_of_str("1e", 2, &d), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_float_of_str(".", 1, &d), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_float_of_str("0x10", 4, &d), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_float_of_str("", 0, &d), CM_PY_VALUE);
	/* float(int) of a huge integer literal raises OverflowError */
	ck_assert_int_eq(cm_py_float_of_number("1" "0000000000000000000000000000000000000000000000000000000000"
					       "0000000000000000000000000000000000000000000000000000000000"
					       "0000000000000000000000000000000000000000000000000000000000"
					       "0000000000000000000000000000000000000000000000000000000000"
					       "0000000000000000000000000000000000000000000000000000000000"
					       "00000000000000000000000000000000000000000000000000000000000",
					       350, &d),
			 CM_PY_OVERFLOW);
	ck_assert_int_eq(cm_py_float_of_number("1e999", 5, &d), CM_PY_OK);
	ck_assert(isinf(d));
}
END_TEST

/* Table of repr() results, checked against Python 3.11. */
static const struct {
	double d;
	const char *repr;
} reprs[] = {
	{1e16, "1e+16"},
	{1e15, "1000000000000000.0"},
	{0.0001, "0.0001"},
	{0.00001, "1e-05"},
	{5.0, "5.0"},
	{-0.0, "-0.0"},
	{0.1 + 0.2, "0.30000000000000004"},
	{755.9649999999999, "755.9649999999999"},
	{14935.81640625, "14935.81640625"},
	{5117755921679.665, "5117755921679.665"},
	{1.5e-7, "1.5e-07"},
	{123456789012345678.0, "1.2345678901234568e+17"},
	{-2.5, "-2.5"},
};

START_TEST(float_repr)
{
	char buf[40];
	cm_py_float_repr(reprs[_i].d, buf);
	ck_assert_str_eq(buf, reprs[_i].repr);
}
END_TEST

START_TEST(us_of_ns)
{
	static const long long ns[] = {7000010000LL, 5, 1234, 0, 999, 1000, 9007199254740991LL,
				       2117755923936272LL, -5, 9007199254740993LL};
	for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
		cm_buf b = {0};
		double d = cm_jw_us_of_ns(&b, ns[i]), back;
		cm_buf_putc(&b, 0);
		back = strtod(b.p, NULL);
		/* the text reads back as the double the reference computes */
		ck_assert_msg(back == cm_us_of_ns(ns[i]) && d == back, "ns %lld -> %s", ns[i], b.p);
		ck_assert(back == (ns[i] < 0 ? 0.0 : (double)ns[i] / 1000.0));
		cm_buf_free(&b);
	}
}
END_TEST

START_TEST(min_max_nan)
{
	ck_assert(cm_py_min(INFINITY, NAN) == INFINITY);
	ck_assert(cm_py_max(0.0, NAN) == 0.0);
	ck_assert(cm_py_min(3.0, 2.0) == 2.0);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pyval");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, int_of_str);
	tcase_add_test(tc, int_of_number);
	tcase_add_test(tc, float_of_str);
	tcase_add_loop_test(tc, float_repr, 0, sizeof reprs / sizeof *reprs);
	tcase_add_test(tc, us_of_ns);
	tcase_add_test(tc, min_max_nan);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
