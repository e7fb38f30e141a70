/* outfile.h - where an output's bytes land: standard output, or the file
 * that -o names, opened by what it is (a temporary file that takes the name
 * only when complete, or a device or FIFO written through) and, at the end,
 * named or dropped, with --sync durably.  output.c writes the bytes. */
#ifndef CM_OUTFILE_H
#define CM_OUTFILE_H

#include <sys/stat.h>
#include "io/writeback.h"

/* What the descriptor is (outfile.c's essay says why each). */
enum cm_outfile_kind {
	CM_OUTFILE_NONE,    /* not open (an -o that failed to open): nothing to close */
	CM_OUTFILE_STDOUT,  /* file descriptor 1 */
	CM_OUTFILE_DIRECT,  /* -o a device or FIFO: written through */
	CM_OUTFILE_HELD,    /* -o a descriptor this process holds (/dev/stdout, /dev/fd/N):
			     * written through a duplicate of it, as standard output is */
	CM_OUTFILE_UNNAMED, /* -o a file: an O_TMPFILE inode, linked to target at the end
			     * (through /proc/self/fd, or by its descriptor: flink) */
	CM_OUTFILE_NAMED,   /* -o a file: the named temporary tmp_path, renamed at the end */
};

/* One destination.  The writer reads fd, kind, shown and wb; the rest is
 * outfile.c's. */
typedef struct cm_outfile {
	int fd;         /* where to write(2), or -1 */
	enum cm_outfile_kind kind;
	const char *shown; /* its name for messages: the -o name, or "<stdout>" */
	cm_wback wb;    /* UNNAMED, NAMED with --sync: the write-back behind the writer
			 * (cm_wback_wrote after each write); else it follows nothing */
	int sync;       /* --sync: fsync before the name, the directory after */
	char *path;     /* the -o name as given, or NULL */
	char *target;   /* UNNAMED, NAMED: PATH with its symlinks followed */
	char *tmp_path; /* NAMED: the temporary name while writing */
	int flink;      /* UNNAMED: named by linkat(fd, "", AT_EMPTY_PATH), not /proc */
	int replaces;   /* UNNAMED, NAMED: target is a regular file, old_st its status */
	struct stat old_st;
} cm_outfile;

/* The regular file ST (its device and inode) is an input of the run,
 * named WHAT in messages ("the CPU trace", a string that outlives the
 * run): no -o or --split file opened after this call may replace it (the
 * open fails, status 2, one line).  Up to 4 such files; later ones are
 * not kept. */
void cm_outfile_protect(const struct stat *st, const char *what);

/* Open F for PATH (NULL or "-": standard output; a name of a descriptor
 * this process holds, such as /dev/stdout: that descriptor) by the rules of
 * cm_output_open (output.h), durable when SYNC.  0, or -1 after reporting;
 * either way F is then closed with cm_outfile_close. */
int cm_outfile_open(cm_outfile *f, const char *path, int sync);

/* Finish F, whose bytes are all written: with OK, end the write-back (its
 * error reported as a write error), (with --sync) fsync, close (checked)
 * and give the temporary file its name (with --sync, then fsync its
 * directory); without OK, or on any failure, close and drop the temporary
 * file, PATH untouched.  Frees what F holds (not F).  0; 1 when closing
 * standard output found its reader gone (EPIPE, not reported); -1 after
 * reporting an error. */
int cm_outfile_close(cm_outfile *f, int ok);

#endif
