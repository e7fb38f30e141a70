/* check_kineto.c - the collector's Kineto names and device properties
 * (no CUPTI, no CUDA, no GPU: these run in CI).
 *
 * Every expectation is written by hand: the names from libkineto's
 * cupti_strings.cpp (memcpyKindString, memoryKindString) and CuptiActivity.h
 * ("Memcpy {} ({} -> {})", "Memset ({})"), the attribute numbers from CUDA
 * 13.0's cuda.h, the H200's values from the deviceProperties of a stock
 * torch.profiler trace (../shared/corpus/threads_full.json). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

/* the unit tests' harness: CHECK_MAIN, the per-test directory */
#include "../unit/check_common.h"

#include "cuptirec/devprops.h"
#include "cuptirec/jbuf.h"
#include "cuptirec/names.h"

/* ---- names ------------------------------------------------------------------ */

static const struct {
	uint32_t kind;
	const char *name;
} memcpy_kinds[] = {
	{ 0, "<unknown>" },   /* CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN: Kineto's default */
	{ 1, "HtoD" }, { 2, "DtoH" }, { 3, "HtoA" }, { 4, "AtoH" }, { 5, "AtoA" },
	{ 6, "AtoD" }, { 7, "DtoA" }, { 8, "DtoD" }, { 9, "HtoH" }, { 10, "PtoP" },
	{ 11, "<unknown>" }, { 0x7fffffff, "<unknown>" },
};

START_TEST(test_memcpy_kind_names)
{
	ck_assert_str_eq(crec_memcpy_kind_name(memcpy_kinds[_i].kind), memcpy_kinds[_i].name);
}
END_TEST

static const struct {
	uint32_t kind;
	const char *name;
} memory_kinds[] = {
	{ 0, "Unknown" }, { 1, "Pageable" }, { 2, "Pinned" }, { 3, "Device" }, { 4, "Array" },
	{ 5, "Managed" }, { 6, "Device Static" }, { 7, "Managed Static" },
	{ 0x7fffffff, "Force Int" },   /* CUPTI_ACTIVITY_MEMORY_KIND_FORCE_INT */
	{ 8, "Unrecognized" }, { 255, "Unrecognized" },
};

START_TEST(test_memory_kind_names)
{
	ck_assert_str_eq(crec_memory_kind_name(memory_kinds[_i].kind), memory_kinds[_i].name);
}
END_TEST

START_TEST(test_copy_and_set_names)
{
	char b[CREC_NAME_MAX];
	size_t n;

	/* the three names of the stock trace in the corpus */
	n = crec_memcpy_name(b, sizeof b, 2, 3, 1);
	ck_assert_str_eq(b, "Memcpy DtoH (Device -> Pageable)");
	ck_assert_uint_eq(n, strlen("Memcpy DtoH (Device -> Pageable)"));
	crec_memcpy_name(b, sizeof b, 1, 2, 3);
	ck_assert_str_eq(b, "Memcpy HtoD (Pinned -> Device)");
	crec_memcpy_name(b, sizeof b, 8, 3, 3);
	ck_assert_str_eq(b, "Memcpy DtoD (Device -> Device)");
	crec_memcpy_name(b, sizeof b, 10, 5, 6);
	ck_assert_str_eq(b, "Memcpy PtoP (Managed -> Device Static)");
	/* the longest name fits */
	n = crec_memcpy_name(b, sizeof b, 0, 7, 7);
	ck_assert_str_eq(b, "Memcpy <unknown> (Managed Static -> Managed Static)");
	ck_assert_uint_eq(n, 51);
	n = crec_memcpy_name(b, sizeof b, 2, 1, 0x7fffffff);
	ck_assert_str_eq(b, "Memcpy DtoH (Pageable -> Force Int)");

	n = crec_memset_name(b, sizeof b, 3);
	ck_assert_str_eq(b, "Memset (Device)");
	ck_assert_uint_eq(n, 15);
	crec_memset_name(b, sizeof b, 5);
	ck_assert_str_eq(b, "Memset (Managed)");
	crec_memset_name(b, sizeof b, 0);
	ck_assert_str_eq(b, "Memset (Unknown)");
	crec_memset_name(b, sizeof b, 9);
	ck_assert_str_eq(b, "Memset (Unrecognized)");

	/* a short buffer gets a cut, terminated name and its length */
	n = crec_memset_name(b, 7, 3);
	ck_assert_str_eq(b, "Memset");
	ck_assert_uint_eq(n, 6);
}
END_TEST

/* ---- device properties -------------------------------------------------------- */

/* A fake driver with two devices.  Device 0 answers with the H200's values,
 * device 1 with 1000 + the attribute's number, so a key paired with the wrong
 * attribute shows.  Only the attribute numbers of cuda.h that the collector
 * should ask for are answered; any other is CUDA_ERROR_INVALID_VALUE (1). */
static int fail_attribute = -1;   /* an attribute number to fail, or -1 */
static int fail_name, fail_mem;

static int fake_device_get(int *dev, int ordinal)
{
	if (ordinal < 0 || ordinal > 1)
		return 101;   /* CUDA_ERROR_INVALID_DEVICE */
	*dev = 70 + ordinal;   /* a handle is not the ordinal */
	return 0;
}

static int fake_get_attribute(int *v, int attribute, int dev)
{
	int h200;

	if ((dev != 70 && dev != 71) || attribute == fail_attribute)
		return 1;
	switch (attribute) {
	case 1: h200 = 1024; break;     /* MAX_THREADS_PER_BLOCK */
	case 8: h200 = 49152; break;    /* MAX_SHARED_MEMORY_PER_BLOCK */
	case 10: h200 = 32; break;      /* WARP_SIZE */
	case 12: h200 = 65536; break;   /* MAX_REGISTERS_PER_BLOCK */
	case 16: h200 = 132; break;     /* MULTIPROCESSOR_COUNT */
	case 39: h200 = 2048; break;    /* MAX_THREADS_PER_MULTIPROCESSOR */
	case 75: h200 = 9; break;       /* COMPUTE_CAPABILITY_MAJOR */
	case 76: h200 = 0; break;       /* COMPUTE_CAPABILITY_MINOR */
	case 81: h200 = 233472; break;  /* MAX_SHARED_MEMORY_PER_MULTIPROCESSOR */
	case 82: h200 = 65536; break;   /* MAX_REGISTERS_PER_MULTIPROCESSOR */
	case 97: h200 = 232448; break;  /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
	case 106: h200 = 32; break;     /* MAX_BLOCKS_PER_MULTIPROCESSOR */
	case 111: h200 = 1024; break;   /* RESERVED_SHARED_MEMORY_PER_BLOCK */
	default: return 1;
	}
	*v = dev == 70 ? h200 : 1000 + attribute;
	return 0;
}

static int fake_get_name(char *name, int len, int dev)
{
	if (fail_name)
		return 1;
	snprintf(name, (size_t)len, "%s", dev == 70 ? "NVIDIA H200" : "Fake \"GPU\" 1");
	return 0;
}

static int fake_total_mem(size_t *bytes, int dev)
{
	if (fail_mem)
		return 1;
	*bytes = dev == 70 ? 150109880320ull : 5000000000ull;
	return 0;
}

static const crec_cudrv fake_drv = { fake_device_get, fake_get_attribute, fake_get_name, fake_total_mem };

static const char *jtext(crec_jbuf *b)
{
	crec_jbuf_put(b, "", 1);
	b->len--;
	return b->p;
}

START_TEST(test_devprops_h200)
{
	crec_devprops p;
	const crec_devprops *list[1] = { &p };
	crec_jbuf b = { 0 };

	ck_assert_int_eq(crec_devprops_read(&fake_drv, 0, &p), 0);
	crec_devprops_json(&b, list, 1);
	/* Kineto's keys and order, then the two it does not write */
	ck_assert_str_eq(jtext(&b),
			 "[{\"id\": 0, \"name\": \"NVIDIA H200\", \"totalGlobalMem\": 150109880320, "
			 "\"computeMajor\": 9, \"computeMinor\": 0, \"maxThreadsPerBlock\": 1024, "
			 "\"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": 65536, \"warpSize\": 32, "
			 "\"sharedMemPerBlock\": 49152, \"numSms\": 132, \"regsPerMultiprocessor\": 65536, "
			 "\"sharedMemPerBlockOptin\": 232448, \"sharedMemPerMultiprocessor\": 233472, "
			 "\"reservedSharedMemPerBlock\": 1024, \"maxBlocksPerMultiProcessor\": 32}]");
	crec_jbuf_free(&b);
}
END_TEST

START_TEST(test_devprops_attribute_numbers)
{
	crec_devprops p0, p1;
	const crec_devprops *list[2] = { &p0, &p1 };
	crec_jbuf b = { 0 };
	yajl_val v, d;
	char err[128];
	static const struct {
		const char *key;
		long long want;
	} keys[] = {
		{ "id", 1 }, { "totalGlobalMem", 5000000000ll },
		{ "computeMajor", 1075 }, { "computeMinor", 1076 }, { "maxThreadsPerBlock", 1001 },
		{ "maxThreadsPerMultiprocessor", 1039 }, { "regsPerBlock", 1012 }, { "warpSize", 1010 },
		{ "sharedMemPerBlock", 1008 }, { "numSms", 1016 }, { "regsPerMultiprocessor", 1082 },
		{ "sharedMemPerBlockOptin", 1097 }, { "sharedMemPerMultiprocessor", 1081 },
		{ "reservedSharedMemPerBlock", 1111 }, { "maxBlocksPerMultiProcessor", 1106 },
	};
	size_t i;

	ck_assert_int_eq(crec_devprops_read(&fake_drv, 0, &p0), 0);
	ck_assert_int_eq(crec_devprops_read(&fake_drv, 1, &p1), 0);
	crec_devprops_json(&b, list, 2);
	v = yajl_tree_parse(jtext(&b), err, sizeof err);
	ck_assert_msg(v != NULL, "%s: %s", err, b.p);
	ck_assert(YAJL_IS_ARRAY(v));
	ck_assert_uint_eq(YAJL_GET_ARRAY(v)->len, 2);
	ck_assert_int_eq(YAJL_GET_INTEGER(YAJL_GET_OBJECT(YAJL_GET_ARRAY(v)->values[0])->values[0]), 0);
	d = YAJL_GET_ARRAY(v)->values[1];
	ck_assert(YAJL_IS_OBJECT(d));
	ck_assert_uint_eq(YAJL_GET_OBJECT(d)->len, 16);
	ck_assert_str_eq(YAJL_GET_OBJECT(d)->keys[1], "name");
	ck_assert_str_eq(YAJL_GET_STRING(YAJL_GET_OBJECT(d)->values[1]), "Fake \"GPU\" 1");
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *path[] = { keys[i].key, NULL };
		yajl_val x = yajl_tree_get(d, path, yajl_t_number);
		ck_assert_msg(x != NULL, "no %s", keys[i].key);
		ck_assert_msg(YAJL_GET_INTEGER(x) == keys[i].want, "%s is %lld, want %lld", keys[i].key,
			      (long long)YAJL_GET_INTEGER(x), keys[i].want);
	}
	yajl_tree_free(v);
	crec_jbuf_free(&b);
}
END_TEST

START_TEST(test_devprops_failures)
{
	crec_devprops p;
	crec_jbuf b = { 0 };

	/* no such device */
	ck_assert_int_eq(crec_devprops_read(&fake_drv, 2, &p), -1);
	ck_assert_int_eq(crec_devprops_read(&fake_drv, 0x80000000u, &p), -1);
	/* any one query failing loses the device, as in Kineto */
	fail_attribute = 111;
	ck_assert_int_eq(crec_devprops_read(&fake_drv, 0, &p), -1);
	fail_attribute = 75;
	ck_assert_int_eq(crec_devprops_read(&fake_drv, 0, &p), -1);
	fail_attribute = -1;
	fail_name = 1;
	ck_assert_int_eq(crec_devprops_read(&fake_drv, 0, &p), -1);
	fail_name = 0;
	fail_mem = 1;
	ck_assert_int_eq(crec_devprops_read(&fake_drv, 0, &p), -1);
	fail_mem = 0;
	ck_assert_int_eq(crec_devprops_read(&fake_drv, 0, &p), 0);
	/* no devices: an empty array */
	crec_devprops_json(&b, NULL, 0);
	ck_assert_str_eq(jtext(&b), "[]");
	crec_jbuf_free(&b);
}
END_TEST

static Suite *kineto_suite(void)
{
	Suite *s = suite_create("cuptirec_kineto");
	TCase *tc = tcase_create("names");

	tcase_add_loop_test(tc, test_memcpy_kind_names, 0, (int)(sizeof memcpy_kinds / sizeof memcpy_kinds[0]));
	tcase_add_loop_test(tc, test_memory_kind_names, 0, (int)(sizeof memory_kinds / sizeof memory_kinds[0]));
	tcase_add_test(tc, test_copy_and_set_names);
	suite_add_tcase(s, tc);
	tc = tcase_create("devprops");
	tcase_add_test(tc, test_devprops_h200);
	tcase_add_test(tc, test_devprops_attribute_numbers);
	tcase_add_test(tc, test_devprops_failures);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(kineto_suite)
