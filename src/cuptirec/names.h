/* names.h - Kineto's names for copies and sets, without CUPTI's headers. */
#ifndef CREC_NAMES_H
#define CREC_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* The numbers are CUPTI's enum values (CUpti_ActivityMemcpyKind,
 * CUpti_ActivityMemoryKind), fixed by its ABI; encode.c checks them against
 * CUPTI's headers at compile time.  They are spelled out here so that the names
 * can be tested where CUPTI is not installed. */
enum {
	CREC_MEMCPY_KIND_UNKNOWN = 0, CREC_MEMCPY_KIND_HTOD = 1, CREC_MEMCPY_KIND_DTOH = 2,
	CREC_MEMCPY_KIND_HTOA = 3, CREC_MEMCPY_KIND_ATOH = 4, CREC_MEMCPY_KIND_ATOA = 5,
	CREC_MEMCPY_KIND_ATOD = 6, CREC_MEMCPY_KIND_DTOA = 7, CREC_MEMCPY_KIND_DTOD = 8,
	CREC_MEMCPY_KIND_HTOH = 9, CREC_MEMCPY_KIND_PTOP = 10,
};
enum {
	CREC_MEMORY_KIND_UNKNOWN = 0, CREC_MEMORY_KIND_PAGEABLE = 1, CREC_MEMORY_KIND_PINNED = 2,
	CREC_MEMORY_KIND_DEVICE = 3, CREC_MEMORY_KIND_ARRAY = 4, CREC_MEMORY_KIND_MANAGED = 5,
	CREC_MEMORY_KIND_DEVICE_STATIC = 6, CREC_MEMORY_KIND_MANAGED_STATIC = 7,
	CREC_MEMORY_KIND_FORCE_INT = 0x7fffffff,
};

/* Kineto's memcpyKindString: "HtoD", "DtoH", ..., "<unknown>" for any other
 * value (CUPTI's UNKNOWN included).  A static string. */
const char *crec_memcpy_kind_name(uint32_t kind);

/* Kineto's memoryKindString: "Unknown", "Pageable", "Pinned", "Device",
 * "Array", "Managed", "Device Static", "Managed Static", "Force Int",
 * "Unrecognized" for any other value.  A static string. */
const char *crec_memory_kind_name(uint32_t kind);

/* The name Kineto gives a copy, "Memcpy KIND (SRC -> DST)", e.g.
 * "Memcpy DtoH (Device -> Pageable)", written NUL-terminated into OUT (OUTSZ
 * bytes; CREC_NAME_MAX always suffices).  Returns its length. */
size_t crec_memcpy_name(char *out, size_t outsz, uint32_t kind, uint32_t src, uint32_t dst);

/* The name Kineto gives a set, "Memset (KIND)", e.g. "Memset (Device)", as
 * crec_memcpy_name writes it. */
size_t crec_memset_name(char *out, size_t outsz, uint32_t memory_kind);

/* Room for the longest name either function writes, with its NUL. */
#define CREC_NAME_MAX 64

#endif
