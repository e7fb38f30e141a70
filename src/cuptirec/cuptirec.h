/* cuptirec.h - the C API of libcuptirec, the CUPTI trace-window collector. */
#ifndef CUPTIREC_H
#define CUPTIREC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @file cuptirec.h
 * Control of libcuptirec from inside an application.  Compile and link
 * with `pkg-config --cflags --libs cuptirec` (the library is installed in
 * lib/cuptimerge/, which the linker does not search), or load the library
 * with LD_PRELOAD and look the functions up with dlsym.  Every function is thread-safe, initialises the collector on
 * first use, never aborts and never changes CUDA's state visible to the
 * application; they return -1 (or 0 for an id) when the collector is disabled.
 */

/**
 * Start recording a trace window into PATH (NULL: the CUPTIREC_OUTPUT pattern,
 * default "cuptirec_%p.json").  %p in PATH is replaced by the process id and
 * %n by the window's number.  A window already being recorded is ended first.
 * @return 0 on success, -1 when the file cannot be created or the collector
 *         is disabled.
 */
int cuptirec_begin_window(const char *path);

/**
 * Stop recording: disable the activities, flush CUPTI's buffers, write the
 * window's maps and close the file.
 * @return 0 on success, -1 when no window was being recorded or writing failed.
 */
int cuptirec_end_window(void);

/** @return 1 while a window is being recorded, else 0. */
int cuptirec_recording(void);

/**
 * Open a user annotation named NAME on the calling thread: GPU work issued by
 * this thread until the matching cuptirec_pop_annotation() is linked to a new
 * external id of kind CUSTOM1, and the window's "user_annotations" maps that
 * id to NAME.  Annotations nest.
 * @return the external id (> 0), or 0 when the collector is disabled.
 */
uint64_t cuptirec_push_annotation(const char *name);

/**
 * Close the innermost annotation the calling thread opened.
 * @return 0, or -1 when the thread has no open annotation.
 */
int cuptirec_pop_annotation(void);

/**
 * Link GPU work issued by the calling thread to the application's own id ID
 * (external correlation of kind CUSTOM0) until cuptirec_pop_external_id().
 * @return 0, or -1 when the collector is disabled or CUPTI refused.
 */
int cuptirec_push_external_id(uint64_t id);

/**
 * Undo the innermost cuptirec_push_external_id() of the calling thread.
 * @param id if not NULL, receives the id that was popped.
 * @return 0, or -1 when there was none.
 */
int cuptirec_pop_external_id(uint64_t *id);

#ifdef __cplusplus
}
#endif

#endif
