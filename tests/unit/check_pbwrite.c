/* check_pbwrite.c - the protobuf writer's wire format (pftrace/pbwrite.h):
 * varints and their sizes, tags, fixed64s, doubles, bytes, and nested
 * messages (a length that outgrows its byte moves the body).  Bytes
 * against the encoding by hand; the transcoder's higher pieces have their
 * own programs (check_pfnumbers, check_pfelement, check_pfstrtab,
 * check_pflaneq, check_pfstream). */
#include "config.h"
#include "check_common.h"
#include "pftrace/pbwrite.h"

START_TEST(varints)
{
	static const struct {
		uint64_t v;
		size_t n;
		unsigned char bytes[10];
	} cases[] = {
		{0, 1, {0x00}},
		{1, 1, {0x01}},
		{127, 1, {0x7f}},
		{128, 2, {0x80, 0x01}},
		{300, 2, {0xac, 0x02}},
		{16383, 2, {0xff, 0x7f}},
		{16384, 3, {0x80, 0x80, 0x01}},
		{UINT64_C(1) << 63, 10, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
		{UINT64_MAX, 10, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		cm_buf b = {0};
		cm_pb_varint(&b, cases[i].v);
		ck_bytes(&b, cases[i].bytes, cases[i].n);
		ck_assert_uint_eq(cm_pb_varint_size(cases[i].v), cases[i].n);
		cm_buf_free(&b);
	}
}
END_TEST

/* cm_pb_varint_size (from the top bit's place) is the length
 * cm_pb_varint_at writes, and 7 bits a byte, at every power of 2 and
 * beside it. */
START_TEST(varint_sizes)
{
	for (int k = 0; k < 64; k++)
		for (int d = -1; d <= 1; d++) {
			uint64_t v = (UINT64_C(1) << k) + (uint64_t)(int64_t)d, x = v;
			unsigned char p[10];
			size_t n = 1;
			while (x >= 0x80)
				x >>= 7, n++;
			ck_assert_uint_eq(cm_pb_varint_size(v), n);
			ck_assert_uint_eq(cm_pb_varint_at(p, v), n);
		}
	ck_assert_uint_eq(cm_pb_varint_size(0), 1);
	ck_assert_uint_eq(cm_pb_varint_size(UINT64_MAX), 10);
}
END_TEST

/* Fields: the key is (field << 3 | wire type); an int64 below 0 is its
 * two's complement in ten bytes; a double is its bits, little-endian. */
START_TEST(fields)
{
	cm_buf b = {0};
	static const unsigned char want[] = {
		0x08, 0x96, 0x01,                               /* 1: varint 150 */
		0x80, 0x01, 0x05,                               /* 16: varint 5 (a 2-byte key) */
		0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* 4: int64 -1 */
		0x29, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f,             /* 5: double 1.0 */
		0x31, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* 6: fixed64 */
		0x12, 0x03, 'a', 'b', 'c',                      /* 2: bytes "abc" */
		0x1a, 0x00,                                     /* 3: empty bytes */
	};
	cm_pb_uint(&b, 1, 150);
	cm_pb_uint(&b, 16, 5);
	cm_pb_int(&b, 4, -1);
	cm_pb_double(&b, 5, 1.0);
	cm_pb_fixed64(&b, 6, UINT64_C(0x0102030405060708));
	cm_pb_bytes(&b, 2, "abc", 3);
	cm_pb_bytes(&b, 3, "", 0);
	ck_bytes(&b, want, sizeof want);
	cm_buf_free(&b);
}
END_TEST

/* A nested message of N bytes of body, inside another: the lengths are
 * those of the bodies, each in its shortest varint, the body intact. */
START_TEST(nested)
{
	size_t n = (size_t)_i;
	cm_buf b = {0};
	size_t outer, inner, i, pos = 0;
	uint64_t len;
	cm_buf_putc(&b, 0x55); /* something before */
	outer = cm_pb_open(&b, 1);
	cm_pb_uint(&b, 2, 1);
	inner = cm_pb_open(&b, 3);
	for (i = 0; i < n; i++)
		cm_buf_putc(&b, (char)(i * 7));
	cm_pb_close(&b, inner);
	cm_pb_close(&b, outer);
	/* read it back */
	ck_assert_uint_eq((unsigned char)b.p[pos++], 0x55);
	ck_assert_uint_eq((unsigned char)b.p[pos++], 0x0a); /* field 1, length-delimited */
	for (len = 0, i = 0;; i += 7) {
		unsigned char c = (unsigned char)b.p[pos++];
		len |= (uint64_t)(c & 0x7f) << i;
		if (c < 0x80)
			break;
	}
	ck_assert_uint_eq(len, b.len - pos);
	ck_assert_uint_eq(cm_pb_varint_size(len), pos - 2);
	ck_assert_uint_eq((unsigned char)b.p[pos++], 0x10);
	ck_assert_uint_eq((unsigned char)b.p[pos++], 0x01);
	ck_assert_uint_eq((unsigned char)b.p[pos++], 0x1a);
	{
		size_t start = pos;
		for (len = 0, i = 0;; i += 7) {
			unsigned char c = (unsigned char)b.p[pos++];
			len |= (uint64_t)(c & 0x7f) << i;
			if (c < 0x80)
				break;
		}
		ck_assert_uint_eq(len, n);
		ck_assert_uint_eq(pos - start, cm_pb_varint_size(n));
	}
	ck_assert_uint_eq(b.len - pos, n);
	for (i = 0; i < n; i++)
		ck_assert_uint_eq((unsigned char)b.p[pos + i], (unsigned char)(i * 7));
	cm_buf_free(&b);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pbwrite");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, varints);
	tcase_add_test(tc, varint_sizes);
	tcase_add_test(tc, fields);
	tcase_add_loop_test(tc, nested, 0, 300);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
