/* exitcode.h - the exit statuses of cuptimerge and cuptimerge-batch, defined once.
 * Mirrored in the EXIT STATUS sections of man/cuptimerge.1 and
 * man/cuptimerge-batch.1; keep them in step. */
#ifndef CM_EXITCODE_H
#define CM_EXITCODE_H

enum cm_exit {
	CM_EXIT_OK = 0,    /* merged trace written (also: reader closed the pipe early) */
	CM_EXIT_DATA = 1,  /* bad input data: not JSON, truncated, wrong shape, missing field */
	CM_EXIT_USAGE = 2, /* bad command line */
	CM_EXIT_IO = 3,    /* cannot open, read, write or rename a file; out of memory */
	CM_EXIT_RANKS = 4, /* cuptimerge-batch only: a rank failed or could not be paired
			      (the merges' own statuses are in the joblog) */
	CM_EXIT_BUSY = 5,  /* cuptimerge-batch only: another run holds the joblog's lock;
			      nothing was run, the joblog untouched */
};

#endif
