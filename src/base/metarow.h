/* metarow.h - the kinds of metadata rows a Chrome trace names: the keys of
 * the set the CPU scan keeps of them (cm_cpuplan.meta: (kind, pid, tid)),
 * which the GPU stage reads to leave out a row the CPU trace already names.
 * In base/, below both stages, which stand side by side. */
#ifndef CM_METAROW_H
#define CM_METAROW_H

/* The kinds of metadata events in cm_cpuplan.meta. */
enum { CM_META_PROCESS_NAME = 1, CM_META_PROCESS_LABELS, CM_META_PROCESS_SORT, CM_META_THREAD_NAME,
       CM_META_THREAD_SORT };

#endif
