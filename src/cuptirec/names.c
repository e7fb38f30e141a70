/* names.c - Kineto's names for copies and sets (libkineto/src/cupti_strings.cpp
 * and CuptiActivity.h), so analyses that group copies by name see the same
 * groups in a merged trace as in a stock torch.profiler one. */
#include "names.h"

#include <stdio.h>

const char *crec_memcpy_kind_name(uint32_t kind)
{
	switch (kind) {
	case CREC_MEMCPY_KIND_HTOD: return "HtoD";
	case CREC_MEMCPY_KIND_DTOH: return "DtoH";
	case CREC_MEMCPY_KIND_HTOA: return "HtoA";
	case CREC_MEMCPY_KIND_ATOH: return "AtoH";
	case CREC_MEMCPY_KIND_ATOA: return "AtoA";
	case CREC_MEMCPY_KIND_ATOD: return "AtoD";
	case CREC_MEMCPY_KIND_DTOA: return "DtoA";
	case CREC_MEMCPY_KIND_DTOD: return "DtoD";
	case CREC_MEMCPY_KIND_HTOH: return "HtoH";
	case CREC_MEMCPY_KIND_PTOP: return "PtoP";
	default: return "<unknown>";   /* Kineto's default, UNKNOWN included */
	}
}

const char *crec_memory_kind_name(uint32_t kind)
{
	switch (kind) {
	case CREC_MEMORY_KIND_UNKNOWN: return "Unknown";
	case CREC_MEMORY_KIND_PAGEABLE: return "Pageable";
	case CREC_MEMORY_KIND_PINNED: return "Pinned";
	case CREC_MEMORY_KIND_DEVICE: return "Device";
	case CREC_MEMORY_KIND_ARRAY: return "Array";
	case CREC_MEMORY_KIND_MANAGED: return "Managed";
	case CREC_MEMORY_KIND_DEVICE_STATIC: return "Device Static";
	case CREC_MEMORY_KIND_MANAGED_STATIC: return "Managed Static";
	case CREC_MEMORY_KIND_FORCE_INT: return "Force Int";
	default: return "Unrecognized";
	}
}

/* snprintf's length, clamped to what OUT holds. */
static size_t crec_clamp(int n, size_t outsz)
{
	if (n < 0 || outsz == 0)
		return 0;
	return (size_t)n < outsz ? (size_t)n : outsz - 1;
}

size_t crec_memcpy_name(char *out, size_t outsz, uint32_t kind, uint32_t src, uint32_t dst)
{
	return crec_clamp(snprintf(out, outsz, "Memcpy %s (%s -> %s)", crec_memcpy_kind_name(kind),
				   crec_memory_kind_name(src), crec_memory_kind_name(dst)),
			  outsz);
}

size_t crec_memset_name(char *out, size_t outsz, uint32_t memory_kind)
{
	return crec_clamp(snprintf(out, outsz, "Memset (%s)", crec_memory_kind_name(memory_kind)), outsz);
}
