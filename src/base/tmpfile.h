/* tmpfile.h - temporary files that leave nothing behind: unnamed
 * (O_TMPFILE) where the kernel and the file system allow it, else unlinked
 * at once.  For input spools (inputraw.c), output spools and -o (outfile.c) and
 * the scratch tables of the passes (cpuscan.c, gpuscan.c). */
#ifndef CM_TMPFILE_H
#define CM_TMPFILE_H

#include <stdio.h>

/* A new temporary file in $TMPDIR (default /tmp), without a name
 * (O_TMPFILE), or where that is not supported named after TAG and
 * unlinked at once, so nothing is left behind whatever happens; its
 * descriptor, or -1 after reporting. */
int cm_temp_fd(const char *tag);

/* The same as a stdio stream opened for writing and reading back, or NULL. */
FILE *cm_temp_file(const char *tag);

/* An unnamed file (O_TMPFILE) in directory DIR, open for writing (and
 * reading with RDWR), mode 0666 less the umask.  Returns its descriptor; -1
 * with errno set (nothing reported); -2 when the kernel or the file system
 * cannot make one (or the test aid CUPTIMERGE_NO_TMPFILE is set): then the
 * caller makes a named one instead. */
int cm_temp_unnamed(const char *dir, int rdwr);

#endif
