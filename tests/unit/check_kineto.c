/* check_kineto.c - Kineto's launch args, bandwidth and number formats (gpu/kineto.c).
 *
 * The expected values of the launch table are those a real Kineto wrote:
 * every distinct kernel configuration of ../shared/corpus/threads_full.json
 * (torch 2.11, an H200), copied from the trace's text.  The others are
 * worked out by hand in the comments. */
#include "config.h"
#include "check_common.h"
#include "gpu/kineto.h"

#include <limits.h>
#include <math.h>

/* The H200 of the corpus, as its "deviceProperties" lists it. */
static const char h200[] =
	"[{\"id\": 0, \"name\": \"NVIDIA H200\", \"totalGlobalMem\": 150109880320, \"computeMajor\": 9, "
	"\"computeMinor\": 0, \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048, "
	"\"regsPerBlock\": 65536, \"warpSize\": 32, \"sharedMemPerBlock\": 49152, \"numSms\": 132, "
	"\"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, \"sharedMemPerMultiprocessor\": 233472}]";

static cm_arena *arena;
static cm_kin_devices devs;

static void setup(void)
{
	arena = cm_arena_new();
	ck_assert_int_eq(cm_kin_devices_read(&devs, cm_jval_parse_py(arena, h200, strlen(h200))), 1);
}
static void teardown(void)
{
	cm_kin_devices_free(&devs);
	cm_arena_free(arena);
}

/* TEXT of cm_kin_write_float(F) (static buffer). */
static const char *ftext(float f)
{
	static char out[80];
	cm_buf b = {0};
	cm_kin_write_float(&b, f);
	snprintf(out, sizeof out, "%.*s", (int)b.len, b.p);
	cm_buf_free(&b);
	return out;
}

/* grid, block, registers, shared memory -> Kineto's blocks per SM, warps per
 * SM, est. achieved occupancy % (threads_full.json) */
static const struct {
	int32_t grid[3], block[3];
	int regs, smem;
	const char *blocks, *warps;
	int occ;
} corpus[] = {
	{{256, 1, 1}, {256, 1, 1}, 44, 0, "1.939394", "15.515152", 24},
	{{8, 8, 4}, {64, 1, 1}, 80, 6528, "1.939394", "3.878788", 6},
	{{8, 8, 1}, {64, 1, 1}, 72, 4608, "0.484848", "0.969697", 2},
	{{64, 1, 1}, {128, 1, 1}, 28, 0, "0.484848", "1.939394", 3},
	{{64, 1, 1}, {128, 1, 1}, 16, 0, "0.484848", "1.939394", 3},
	{{1024, 1, 1}, {256, 1, 1}, 44, 0, "7.757576", "62.060608", 63},
	{{8, 8, 4}, {128, 1, 1}, 121, 12672, "1.939394", "7.757576", 12},
	{{8, 8, 2}, {128, 1, 1}, 72, 8704, "0.969697", "3.878788", 6},
	{{256, 1, 1}, {128, 1, 1}, 16, 0, "1.939394", "7.757576", 12},
	{{64, 1, 1}, {256, 1, 1}, 44, 0, "0.484848", "3.878788", 6},
	{{4, 4, 1}, {64, 1, 1}, 80, 6528, "0.121212", "0.242424", 0},
	{{16, 1, 1}, {128, 1, 1}, 28, 0, "0.121212", "0.484848", 1},
	{{16, 1, 1}, {128, 1, 1}, 32, 0, "0.121212", "0.484848", 1},
};

START_TEST(corpus_kernels)
{
	cm_kin_launch k;
	const cm_kin_props *p = cm_kin_devices_find(&devs, 0);
	ck_assert_ptr_nonnull(p);
	memset(&k, 0, sizeof k);
	memcpy(k.grid, corpus[_i].grid, sizeof k.grid);
	memcpy(k.block, corpus[_i].block, sizeof k.block);
	k.regs = (uint16_t)corpus[_i].regs;
	k.static_smem = corpus[_i].smem;
	ck_assert_str_eq(ftext(cm_kin_blocks_per_sm(&k, p->occ.numSms)), corpus[_i].blocks);
	ck_assert_str_eq(ftext(cm_kin_warps_per_sm(&k, p->occ.numSms)), corpus[_i].warps);
	ck_assert_int_eq(cm_kin_occupancy_pct(cm_kin_occupancy(&k, p)), corpus[_i].occ);
	/* the shared memory counts the same whether static or dynamic */
	k.static_smem = 0;
	k.dynamic_smem = corpus[_i].smem;
	ck_assert_int_eq(cm_kin_occupancy_pct(cm_kin_occupancy(&k, p)), corpus[_i].occ);
}
END_TEST

/* std::to_string of a float is "%f" of its double: 6 decimals, not the
 * shortest text (0.12121212f, the float of 16/132, is "0.121212") */
START_TEST(float_format)
{
	ck_assert_str_eq(ftext(16.0f / 132.0f), "0.121212");
	ck_assert_str_eq(ftext(0.5f), "0.500000");
	ck_assert_str_eq(ftext(-1.0f), "-1.000000");
	ck_assert_str_eq(ftext(1e10f), "10000000000.000000");
	ck_assert_str_eq(ftext(1.0f / 3.0e7f), "0.000000");
	ck_assert_str_eq(ftext(INFINITY), "\"inf\"");
	ck_assert_str_eq(ftext(-INFINITY), "\"inf\""); /* std::isinf: either sign */
	ck_assert_str_eq(ftext(NAN), "\"nan\"");
}
END_TEST

/* No properties for the device: Kineto's smCount is 0, so blocks and warps
 * per SM are 256 / 0.0f = inf, and kernelOccupancy is -1: (int)(0.5 - 100.0)
 * = (int)-99.5 = -99. */
START_TEST(no_properties)
{
	cm_kin_launch k = {{256, 1, 1}, {256, 1, 1}, 44, 0, 0};
	ck_assert_str_eq(ftext(cm_kin_blocks_per_sm(&k, 0)), "\"inf\"");
	ck_assert_str_eq(ftext(cm_kin_warps_per_sm(&k, 0)), "\"inf\"");
	ck_assert_int_eq(cm_kin_occupancy_pct(cm_kin_occupancy(&k, NULL)), -99);
	ck_assert_ptr_null(cm_kin_devices_find(&devs, 1));
}
END_TEST

/* CUPTI's int32 fields multiply as int32: 65536 * 65536 * 1 wraps to 0,
 * so 0 blocks per SM ("0.000000"), and 0 threads a block is a calculator
 * error: occupancy -1, -99 %. */
START_TEST(int32_products)
{
	cm_kin_launch k = {{65536, 65536, 1}, {0, 1, 1}, 32, 0, 0};
	const cm_kin_props *p = cm_kin_devices_find(&devs, 0);
	ck_assert_str_eq(ftext(cm_kin_blocks_per_sm(&k, 132)), "0.000000");
	ck_assert_int_eq(cm_kin_occupancy_pct(cm_kin_occupancy(&k, p)), -99);
}
END_TEST

/* (int)(0.5 + occ * 100.0) in doubles; out of int range as x86 converts */
START_TEST(occupancy_percent)
{
	ck_assert_int_eq(cm_kin_occupancy_pct(0.2424242f), 24);
	ck_assert_int_eq(cm_kin_occupancy_pct(0.625f), 63);    /* 62.5 + 0.5 */
	ck_assert_int_eq(cm_kin_occupancy_pct(0.004999f), 0);  /* 0.4999 + 0.5 */
	ck_assert_int_eq(cm_kin_occupancy_pct(-1.0f), -99);
	ck_assert_int_eq(cm_kin_occupancy_pct(1e30f), INT_MIN);
	ck_assert_int_eq(cm_kin_occupancy_pct(NAN), INT_MIN);
}
END_TEST

/* TEXT of cm_kin_write_bandwidth (static buffer). */
static const char *btext(cm_int bytes, cm_int start, cm_int end)
{
	static char out[80];
	cm_buf b = {0};
	cm_kin_write_bandwidth(&b, bytes, start, end);
	snprintf(out, sizeof out, "%.*s", (int)b.len, b.p);
	cm_buf_free(&b);
	return out;
}

/* bytes / ns = GB/s in doubles; the corpus's copies of 262144 bytes took
 * 7648 and 6368 ns, and Kineto wrote 34.27615062761506 and
 * 41.165829145728644 (fmt's shortest text, which Python's repr matches) */
START_TEST(bandwidth)
{
	ck_assert_str_eq(btext(262144, 1000, 1000 + 7648), "34.27615062761506");
	ck_assert_str_eq(btext(262144, 5, 5 + 6368), "41.165829145728644");
	ck_assert_str_eq(btext(1000, 7, 7), "\"N/A\"");
	ck_assert_str_eq(btext(1, 0, 4), "0.25");
}
END_TEST

START_TEST(sync_names)
{
	ck_assert_str_eq(cm_kin_sync_name(1), "Event Sync");
	ck_assert_str_eq(cm_kin_sync_name(2), "Stream Wait Event");
	ck_assert_str_eq(cm_kin_sync_name(3), "Stream Sync");
	ck_assert_str_eq(cm_kin_sync_name(4), "Context Sync");
	ck_assert_str_eq(cm_kin_sync_name(0), "Unknown Sync");
	ck_assert_str_eq(cm_kin_sync_name(5), "Unknown Sync");
	ck_assert_str_eq(cm_kin_sync_name(((cm_int)1 << 32) + 3), "Stream Sync"); /* a uint32 field */
}
END_TEST

/* A device's "id" (else its place), every property by int(), and the
 * reserved shared memory Kineto does not write: 1024 from 8.0 on. */
START_TEST(device_table)
{
	const char *t = "[{\"computeMajor\": 7, \"numSms\": \"80\"}, {\"id\": 5, \"computeMajor\": 8, \"numSms\": 108.9},"
			" {\"id\": 6, \"computeMajor\": 9, \"reservedSharedMemPerBlock\": 0}, 7]";
	cm_kin_devices d = {0};
	const cm_kin_props *p;
	ck_assert_int_eq(cm_kin_devices_read(&d, cm_jval_parse_py(arena, t, strlen(t))), 1);
	ck_assert_uint_eq(d.n, 4);
	ck_assert_ptr_nonnull(p = cm_kin_devices_find(&d, 0));
	ck_assert_int_eq(p->occ.numSms, 80);
	ck_assert_uint_eq(p->occ.reservedSharedMemPerBlock, 0);
	ck_assert_ptr_nonnull(p = cm_kin_devices_find(&d, 5));
	ck_assert_int_eq(p->occ.numSms, 108);
	ck_assert_uint_eq(p->occ.reservedSharedMemPerBlock, 1024);
	ck_assert_ptr_nonnull(p = cm_kin_devices_find(&d, 6));
	ck_assert_uint_eq(p->occ.reservedSharedMemPerBlock, 0);
	ck_assert_ptr_nonnull(p = cm_kin_devices_find(&d, 3)); /* not an object: all 0 */
	ck_assert_int_eq(p->occ.numSms, 0);
	ck_assert_ptr_null(cm_kin_devices_find(&d, 1));
	/* not a non-empty array: no devices */
	ck_assert_int_eq(cm_kin_devices_read(&d, cm_jval_parse_py(arena, "[]", 2)), 0);
	ck_assert_uint_eq(d.n, 0);
	ck_assert_int_eq(cm_kin_devices_read(&d, cm_jval_parse_py(arena, "{}", 2)), 0);
	ck_assert_int_eq(cm_kin_devices_read(&d, NULL), 0);
	cm_kin_devices_free(&d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("kineto");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, corpus_kernels, 0, (int)(sizeof corpus / sizeof corpus[0]));
	tcase_add_test(tc, float_format);
	tcase_add_test(tc, no_properties);
	tcase_add_test(tc, int32_products);
	tcase_add_test(tc, occupancy_percent);
	tcase_add_test(tc, bandwidth);
	tcase_add_test(tc, sync_names);
	tcase_add_test(tc, device_table);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
