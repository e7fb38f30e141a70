/* check_pfnumbers.c - numbers' text to the values the transcoder writes:
 * microseconds to exact nanoseconds (pfintern.h's cm_pf_us_to_ns, its fast
 * paths against strtod's double on random decimals) and the values
 * pfparse.c keeps as it parses a number (has_iv) against the readers of
 * its text.  Apart from the writer's bytes: these are the conversions a
 * wrong digit in a time would come from. */
#include "config.h"
#include "check_common.h"
#include "pftrace/pfintern.h"
#include "pftrace/pfevent.h"
#include "base/pyval.h"

/* Microseconds as text to nanoseconds: the text's double times 1000,
 * exactly, to the nearest, a half to even. */
START_TEST(us_to_ns)
{
	static const struct {
		const char *s;
		int rc;
		int64_t ns;
	} cases[] = {
		{"0", 0, 0},
		{"1", 0, 1000},
		{"-2", 0, -2000},
		{"0.001", 0, 1},
		{"0.0004", 0, 0},
		{"0.0006", 0, 1},
		{"755.9649999999999", 0, 755965},  /* a float-rounded duration: the ns meant */
		{"5117762398366.4795", 0, 5117762398366479}, /* its double is ...4794921875 */
		{"5117762354211.8125", 0, 5117762354211812}, /* exactly a half: to even */
		{"5117762354211.8135", 0, 5117762354211813}, /* its double is ...8134765625 */
		{"1e3", 0, 1000000},
		{"0.0625", 0, 62},                 /* 62.5 ns exactly (1/16 us): to even */
		{"0.1875", 0, 188},                /* 187.5 ns exactly: to even */
		{"2.5e-3", 0, 3},                  /* its double is above 2.5 ns */
		{"9223372036854774", 0, INT64_C(9223372036854774000)},
		{"9223372036854776", -1, 0},       /* beyond int64 ns */
		{"1e400", -1, 0},
		{"NaN", -1, 0},
		{"Infinity", -1, 0},
		{"", -1, 0},
		{"12x", -1, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int64_t ns = 42;
		int rc = cm_pf_us_to_ns(cases[i].s, strlen(cases[i].s), &ns);
		ck_assert_msg(rc == cases[i].rc, "%s: rc %d", cases[i].s, rc);
		if (!rc)
			ck_assert_msg(ns == cases[i].ns, "%s: %lld, not %lld", cases[i].s, (long long)ns,
				      (long long)cases[i].ns);
	}
}
END_TEST

/* IP random integer digits at S + N (no leading zero unless IP is 1; a
 * third of the long ones start near 2^43 us: 8796093022208), drawn from
 * the xorshift state *RNG; returns the new length. */
static size_t put_int_digits(char *s, size_t n, int ip, uint64_t *rng)
{
	uint64_t r = *rng;
	if ((r >> 24) % 3 == 0 && ip >= 13) {
		memcpy(s + n, "879609302220", 12);
		n += 12;
		ip -= 12;
	}
	for (int k = 0; k < ip; k++) {
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		s[n++] = (char)('0' + (k || ip == 1 ? r % 10 : 1 + r % 9));
	}
	*rng = r;
	return n;
}

/* cm_pf_us_to_ns reads plain decimals itself (fast paths: the digits as
 * nanoseconds below 2^43 us, Clinger's division, a 128-bit division); it
 * must give what strtod's double gives, for random decimals of every
 * length and place of the point, near the paths' limits too. */
START_TEST(us_to_ns_decimals)
{
	uint64_t rng = 0x243F6A8885A308D3u;
	char s[64];
	for (int i = 0; i < 300000; i++) {
		size_t n = 0;
		int ip, fp, dot;
		int64_t a = 1, b = 2;
		int ra, rb;
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		ip = (int)(rng % 21);
		fp = (int)((rng >> 8) % 22);
		dot = (rng >> 16) % 8 != 0;
		if ((rng >> 20) % 4 == 0)
			s[n++] = '-';
		n = put_int_digits(s, n, ip, &rng);
		if (dot) {
			s[n++] = '.';
			for (int k = 0; k < fp; k++) {
				rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
				/* runs of 9s and 0s and halves, where rounding turns */
				s[n++] = (char)((rng >> 40) % 4 == 0 ? '9' : (rng >> 40) % 4 == 1 ? '0' : '0' + rng % 10);
			}
		}
		s[n] = 0;
		ra = cm_pf_us_to_ns(s, n, &a);
		rb = cm_pf_us_to_ns_strtod(s, n, &b);
		ck_assert_msg(ra == rb, "%s: rc %d, strtod's %d", s, ra, rb);
		if (!ra && a != b)
			ck_abort_msg("%s: %lld, strtod's %lld", s, (long long)a, (long long)b);
	}
}
END_TEST

/* A number's value kept as it is parsed (pfparse.c, has_iv) is what its
 * text's readers make of it: an integer's small_int / cm_py_int_of_number
 * value, a time's cm_pf_us_to_ns; for random numbers of every shape. */
START_TEST(number_values)
{
	uint64_t rng = 0x13198A2E03707344u;
	cm_pfev *w = cm_pfev_new(NULL, "<test>");
	char s[80];
	int ints = 0, nss = 0;
	for (int i = 0; i < 200000; i++) {
		size_t n = 0;
		int ip, fp, shape;
		const cm_jval *v;
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		ip = 1 + (int)(rng % 21);
		fp = (int)((rng >> 8) % 6);
		shape = (int)((rng >> 16) % 4); /* 0: an integer, 1: a decimal, 2: with an exponent, 3: 0.x */
		n += (size_t)snprintf(s, sizeof s, "{\"v\":");
		if ((rng >> 20) % 3 == 0)
			s[n++] = '-';
		if (shape == 3) {
			s[n++] = '0';
		} else {
			n = put_int_digits(s, n, ip, &rng);
		}
		if (shape != 0) {
			s[n++] = '.';
			for (int k = 0; k < fp + 1; k++) {
				rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
				s[n++] = (char)('0' + rng % 10);
			}
		}
		if (shape == 2)
			n += (size_t)snprintf(s + n, sizeof s - n, "e%d", (int)(rng % 5));
		s[n++] = '}';
		s[n] = 0;
		v = cm_pf_parse(w, s, n);
		ck_assert_msg(v && v->kids && v->kids->type == CM_J_NUM, "%s", s);
		v = v->kids;
		if (v->has_iv == CM_PF_IV_INT) {
			cm_int x;
			ints++;
			ck_assert_msg(!cm_py_int_of_number(v->s, v->len, &x) && x == v->iv, "%s: %lld", s, (long long)v->iv);
		} else if (v->has_iv == CM_PF_IV_NS) {
			int64_t ns;
			nss++;
			ck_assert_msg(!cm_pf_us_to_ns(v->s, v->len, &ns) && ns == v->iv, "%s: %lld ns", s, (long long)v->iv);
		} else {
			ck_assert_int_eq(v->has_iv, 0);
		}
	}
	ck_assert(ints > 10000 && nss > 10000);
	cm_pfev_free(w);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pfnumbers");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, us_to_ns);
	tcase_add_test(tc, us_to_ns_decimals);
	tcase_add_test(tc, number_values);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
