/* cbid.h - names of CUPTI runtime and driver API callback ids, and the
 * reference merge's rules about which API records it keeps and links. */
#ifndef CM_CBID_H
#define CM_CBID_H

#include <stddef.h>
#include <stdint.h>

struct cm_cbid_name {
	int64_t cbid;
	const char *name;
};

/* The tables (sorted by cbid), from cbid_table.c. */
extern const struct cm_cbid_name cm_cbid_runtime[];
extern const size_t cm_cbid_runtime_count;
extern const struct cm_cbid_name cm_cbid_driver[];
extern const size_t cm_cbid_driver_count;
extern const char cm_cbid_table_source[];

/* The name of a runtime (DRIVER 0) or driver (DRIVER 1) cbid, or NULL when
 * the table does not have it (the caller writes "cbid_<n>"). */
const char *cm_cbid_name(int driver, int64_t cbid);

/* The record is kept: runtime APIs except a small noisy blocklist; driver
 * APIs only from a short allowlist. */
int cm_cbid_is_registered(int driver, const char *name);

/* The record starts an ac2g flow to its GPU activity. */
int cm_cbid_requires_flow(int driver, const char *name);

#endif
