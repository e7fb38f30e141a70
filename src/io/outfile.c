/* outfile.c - the destination of an output (outfile.h): standard output,
 * or -o FILE opened by what FILE is, and named or dropped at the end.
 *
 * What -o FILE does depends on what FILE is, as a Unix user expects of a
 * tool that writes a file (cuptimerge(1), FILES):
 *   - a name of a descriptor this process holds (/dev/stdout, /dev/stderr,
 *     /dev/fd/N, /proc/self/fd/N, or a symbolic link that leads to one):
 *     written through that descriptor (a duplicate of it), as standard
 *     output is, whatever it holds.  The shell opened it: `>> log` appends
 *     (O_APPEND belongs to the open file, which the duplicate shares),
 *     `> log` has truncated it once, a pipe stays a pipe.  Opening the
 *     name made a new open file of what the descriptor held, a regular
 *     file then went the way below, and `-o /dev/stdout >> log` replaced
 *     log with the trace: its earlier lines were lost;
 *   - absent or a regular file: the output is written to a temporary file in
 *     FILE's directory and only a complete one takes FILE's name (rename(2)
 *     is atomic), so a failed or interrupted run never leaves half a trace
 *     and never clobbers the old one;
 *   - a symbolic link: followed; the file it names is replaced as above, in
 *     that file's directory, and the link stays;
 *   - a character or block device, a FIFO, anything else that is not a
 *     directory: opened and written through, as `> FILE` would; replacing
 *     it would turn /dev/null into a regular file;
 *   - a directory: an error, found when the output is opened, which the
 *     engine does before it reads any input; so is a name of a standard
 *     descriptor that was closed at the start (/dev/stdout after >&-).
 * The temporary file has no name while it is written: Linux's O_TMPFILE
 * makes an unnamed inode in the directory, and linkat(2) through
 * /proc/self/fd gives it FILE's name at the end (or a temporary name, then
 * rename(2), when FILE exists: linkat cannot replace); without /proc, linkat
 * by the descriptor itself (AT_EMPTY_PATH), where the kernel allows it.
 * Whatever kills the run, even SIGKILL, the kernel then frees the inode and
 * nothing is left.  Where O_TMPFILE is not supported (older kernels, some
 * file systems) or the file could not be named either way, it is made with
 * a name, .FILE.cuptimerge-XXXXXX, which SIGINT, SIGTERM, SIGHUP and exit()
 * remove; only SIGKILL or a crash can leave it (README and cuptimerge(1)
 * say so).
 *
 * Atomic is not durable: by default the finished file is named without
 * fsync(2), as gzip, zstd, cp and sort -o leave theirs, so a power cut soon
 * after the run may lose a file that a crash of the run never could.
 * Durability is --sync's (cm_output_set_sync, gzip's --synchronous): the
 * file's write-back started as it is written (writeback.c), fsync before
 * it is named, and fsync of its directory after, so that the name too
 * survives a power cut.  Paying for it on every run cost the 2.3 GB output
 * of the 1 GB pair a second on the 16-core machine, whose disk takes less
 * than the merge makes (issue 30).  Without it, the file is closed (a
 * checked close: where close(2) reports a delayed write error, NFS and some
 * FUSE file systems, it comes before the name) and named; nothing of
 * writeback.c runs. */
#include "config.h"
#include "io/outfile.h"
#include "io/outname.h"
#include "base/tmpfile.h"
#include "base/fdio.h"
#include "base/diag.h"
#include "base/exitcode.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The one temporary name an -o run can have in FILE's directory
 * (CM_OUTFILE_NAMED), for the signal handler and exit() to remove: one -o
 * output per process.
 * The name is written only while doomed_set is 0, so the handler never
 * reads half of it. */
static char doomed_path[PATH_MAX];
static volatile sig_atomic_t doomed_set;

/* The signals that end a run from outside and that we clean up after. */
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP};

/* atexit: remove the temporary name (exit(3) when memory ran out). */
static void remove_doomed(void)
{
	if (doomed_set)
		unlink(doomed_path);
	doomed_set = 0;
}

/* SIGINT, SIGTERM, SIGHUP: remove the temporary name, then die of the
 * signal (SA_RESETHAND restored the default; the signal is blocked while
 * this runs, so the raise takes effect on return), so the parent sees it. */
static void on_fatal_signal(int sig)
{
	int saved = errno;
	if (doomed_set)
		unlink(doomed_path); /* async-signal-safe */
	doomed_set = 0;
	raise(sig);
	errno = saved;
}

/* Block (BLOCK 1) or restore the fatal signals on this thread around a step
 * that must not be cut in two (a name made and recorded, link and rename). */
static void hold_signals(int block, sigset_t *saved)
{
	sigset_t set;
	size_t i;
	if (!block) {
		pthread_sigmask(SIG_SETMASK, saved, NULL);
		return;
	}
	sigemptyset(&set);
	for (i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
		sigaddset(&set, fatal_signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, saved);
}

/* Install the clean-up, once: the handlers (not over a signal the caller
 * ignores, as nohup does: that one stays ignored) and the atexit hook. */
static void install_cleanup(void)
{
	static int done;
	struct sigaction sa, old;
	size_t i;
	if (done)
		return;
	done = 1;
	atexit(remove_doomed);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fatal_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
		sigaddset(&sa.sa_mask, fatal_signals[i]);
	for (i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
		if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(fatal_signals[i], &sa, NULL);
}

/* Report that no temporary file could be made in DIR, the directory of
 * F's target (ERR: the errno of the attempt), and return -1.  Where the
 * directory is the trouble (missing, not one, not writable: a mistyped -o
 * path, the common case), it is named with what is wrong with it: "cannot
 * create a temporary file beside it" sent the user looking for a temporary
 * file.  Else (a full disk, a quota) the attempt's own error. */
static int temp_failed(cm_outfile *f, const char *dir, int err)
{
	int why = cm_dir_writable(dir);
	if (why)
		return cm_fail(CM_EXIT_IO, f->shown, -1, "cannot write in %s: %s",
			       strcmp(dir, ".") ? dir : "the working directory", strerror(why));
	return cm_fail(CM_EXIT_IO, f->shown, -1, "cannot create a temporary file beside it: %s", strerror(err));
}

/* Open the file -o writes while the run lasts: unnamed in TARGET's
 * directory, else under cm_out_temp_name(TARGET).  0, or -1 after reporting. */
static int open_temp(cm_outfile *f)
{
	char *dir = cm_out_dir_of(f->target);
	sigset_t saved;
	mode_t mask;
	int fd, err;
	if (!dir)
		return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory");
	fd = cm_temp_unnamed(dir, 0);
	if (fd >= 0) {
		char proc[64];
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
		/* linkat will name it through /proc; without /proc (a chroot, a
		 * sandbox), by its descriptor where the kernel lets us (F26) */
		if (access(proc, F_OK) == 0 || (f->flink = cm_out_can_flink(fd, dir))) {
			free(dir);
			f->fd = fd;
			f->kind = CM_OUTFILE_UNNAMED;
			cm_wback_init(&f->wb, f->sync ? fd : -1);
			if (f->replaces)
				cm_out_keep_attrs(fd, &f->old_st);
			return 0;
		}
		close(fd); /* it could never be named; make a named one */
	}
	if (fd == -1) {
		temp_failed(f, dir, errno);
		free(dir);
		return -1;
	}
	if (!(f->tmp_path = cm_out_temp_name(f->target))) {
		free(dir);
		return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory");
	}
	install_cleanup();
	/* made and recorded in one step: a signal between would leave it */
	hold_signals(1, &saved);
	fd = mkstemp(f->tmp_path);
	err = errno;
	if (fd >= 0 && strlen(f->tmp_path) < sizeof doomed_path) {
		strcpy(doomed_path, f->tmp_path);
		doomed_set = 1;
	}
	hold_signals(0, &saved);
	if (fd < 0) {
		temp_failed(f, dir, err);
		free(dir);
		free(f->tmp_path);
		f->tmp_path = NULL;
		return -1;
	}
	free(dir);
	f->fd = fd;
	f->kind = CM_OUTFILE_NAMED;
	cm_wback_init(&f->wb, f->sync ? fd : -1);
	/* mkstemp makes 0600; give the file the old file's mode, or the one a
	 * plain create would */
	if (f->replaces) {
		cm_out_keep_attrs(fd, &f->old_st);
		return 0;
	}
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	return 0;
}

/* Open PATH, which exists and is neither a regular file nor a directory, to
 * write through it.  1 when opened, 0 when it turned out to be a regular
 * file after all (replaced meanwhile: the caller goes the atomic way), -1
 * after reporting. */
static int open_direct(cm_outfile *f)
{
	struct stat st;
	/* blocks on a FIFO until it has a reader, as `> FIFO` does */
	int fd = open(f->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return cm_fail(CM_EXIT_IO, f->shown, -1, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	f->fd = fd;
	f->kind = CM_OUTFILE_DIRECT;
	return 1;
}

/* Open F on FD, the descriptor this process holds that -o names
 * (cm_path_names_fd), to write through a duplicate of it (the essay at the
 * top says why not by its name).  The duplicate, not FD: closing it at the
 * end, checked, leaves FD to whatever else uses it (/dev/stderr's is the
 * messages').  0, or -1 after reporting, before any input is read, a
 * descriptor that cannot take the output: not open (nothing the shell
 * gave: /dev/fd/7 without 7>...), or open only for reading (/dev/stdin
 * of `< FILE`), where every write would fail after the whole merge. */
static int open_held(cm_outfile *f, int fd)
{
	char what[32];
	int fl = fcntl(fd, F_GETFL);
	if (fd <= 2)
		snprintf(what, sizeof what, "standard %s", fd == 0 ? "input" : fd == 1 ? "output" : "error");
	else
		snprintf(what, sizeof what, "descriptor %d", fd);
	if (fl < 0)
		return cm_fail(CM_EXIT_IO, f->shown, -1, "cannot write to it: %s is not open", what);
#ifdef O_PATH
	if (fl & O_PATH)
		fl = O_RDONLY; /* a place, not an open file: nothing can be written */
#endif
	if ((fl & O_ACCMODE) == O_RDONLY)
		return cm_fail(CM_EXIT_IO, f->shown, -1, "cannot write to it: %s is open only for reading", what);
	if ((f->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
		return cm_fail(CM_EXIT_IO, f->shown, -1, "cannot write to it: %s", strerror(errno));
	f->kind = CM_OUTFILE_HELD;
	return 0;
}

/* The run's inputs no output may replace (cm_outfile_protect): set by
 * main.c before any output is opened, read only after. */
static struct input_file {
	dev_t dev;
	ino_t ino;
	const char *what;
} inputs[4];
static int ninputs;

void cm_outfile_protect(const struct stat *st, const char *what)
{
	if (ninputs < 4 && S_ISREG(st->st_mode))
		inputs[ninputs++] = (struct input_file){st->st_dev, st->st_ino, what};
}

/* Open -o PATH for F by the rules at the top.  0, or -1 after reporting. */
static int open_path(cm_outfile *f, const char *path)
{
	struct stat st;
	int rc;
	if (!(f->path = strdup(path)))
		return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory");
	f->shown = f->path;
	if (!*path) /* main.c refuses it; say so rather than make "./.cuptimerge-" */
		return cm_fail(CM_EXIT_IO, NULL, -1, "the output file name is empty");
	/* /dev/stdout (or a link to it) reopens what descriptor 1 holds: with
	 * standard output closed, the stand-in /dev/null (diag.c), where the
	 * trace went, status 0; refused as writing to the closed descriptor
	 * is (status 3), before any input is read */
	if ((rc = cm_path_names_fd(path)) >= 0 && cm_diag_stdfd_closed(rc))
		return cm_fail(CM_EXIT_IO, f->shown, -1, "cannot write to it: standard %s is closed",
			       rc == 0 ? "input" : rc == 1 ? "output" : "error");
	if (rc >= 0)
		return open_held(f, rc);
	/* a name too long to be made was found only when the finished output
	 * was to take it, after the whole merge: found now (stat says so) */
	if (stat(path, &st) < 0 && errno == ENAMETOOLONG)
		return cm_fail(CM_EXIT_IO, f->shown, -1, "cannot create it: %s", strerror(errno));
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return cm_fail(CM_EXIT_IO, f->shown, -1, "is a directory");
		if ((rc = open_direct(f)) != 0)
			return rc < 0 ? -1 : 0;
	}
	if (!(f->target = cm_out_follow_links(path)))
		return cm_fail(CM_EXIT_IO, f->shown, -1, "cannot follow the symbolic link: %s", strerror(errno));
	/* the file that will be replaced, if any: its owner and mode are kept */
	f->replaces = lstat(f->target, &f->old_st) == 0 && S_ISREG(f->old_st.st_mode);
	/* a --split file whose name is an input's (main.c refuses -o so
	 * before anything is read): the rename at the end replaced it */
	for (int i = 0; f->replaces && i < ninputs; i++)
		if (inputs[i].dev == f->old_st.st_dev && inputs[i].ino == f->old_st.st_ino)
			return cm_fail(CM_EXIT_USAGE, f->shown, -1, "is %s, which the output would replace: write to "
				       "another file", inputs[i].what);
	if (f->replaces && cm_out_check_replaceable(f->target, &f->old_st, f->shown) < 0)
		return -1;
	return open_temp(f);
}

/* Give the finished unnamed file (CM_OUTFILE_UNNAMED) the name f->target:
 * linkat(2) through /proc/self/fd makes the name when there is none; when
 * there is one, linkat cannot replace it, so the file gets a fresh
 * temporary name that rename(2) then moves over it atomically.  The fatal
 * signals wait meanwhile, so that name cannot be left behind by them.
 * 0, or -1 after reporting. */
static int publish_unnamed(cm_outfile *f)
{
	char *tmp;
	sigset_t saved;
	int tries, linked = 0, rc = -1;
	if (cm_out_link(f->fd, f->flink, f->target) == 0)
		return 0;
	if (errno != EEXIST)
		return cm_fail(CM_EXIT_IO, f->shown, -1, "cannot give the finished file its name: %s",
				strerror(errno));
	if (!(tmp = cm_out_temp_name(f->target)))
		return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory");
	hold_signals(1, &saved);
	for (tries = 0; tries < 100 && !linked; tries++) { /* a clash is a 1 in 62^6 chance */
		cm_out_fill_x(tmp);
		if (cm_out_link(f->fd, f->flink, tmp) == 0)
			linked = 1;
		else if (errno != EEXIST)
			break;
	}
	if (!linked) {
		cm_error(CM_EXIT_IO, f->shown, -1, "cannot give the finished file a temporary name: %s",
			 strerror(errno));
	} else if (rename(tmp, f->target) < 0) {
		cm_error(CM_EXIT_IO, f->shown, -1, "cannot rename %s to it: %s", tmp, strerror(errno));
		unlink(tmp);
	} else {
		rc = 0;
	}
	hold_signals(0, &saved);
	free(tmp);
	return rc;
}

/* With --sync, after the name: fsync the directory of f->target, so
 * that the name survives a power cut as the data does (link and rename
 * change only the directory, which the file's fsync does not write).
 * EINVAL: a file system that cannot sync a directory; EROFS: nothing to
 * sync.  0, or -1 after reporting (the file has its name and is complete;
 * only its durability failed). */
static int sync_dir(cm_outfile *f)
{
	char *dir = cm_out_dir_of(f->target);
	int fd, rc = 0;
	if (!dir)
		return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (fsync(fd) < 0 && errno != EINVAL && errno != EROFS)) {
		cm_error(CM_EXIT_IO, f->shown, -1, "cannot sync its directory %s: %s", dir, strerror(errno));
		rc = -1;
	}
	if (fd >= 0)
		close(fd);
	free(dir);
	return rc;
}

/* With --sync: fsync F's descriptor (standard output, or a descriptor
 * held, only when it is a regular file or a block device: a pipe or a
 * terminal keeps nothing).
 * EINVAL: a FIFO or a device without a cache; EROFS: nothing to sync.
 * 0, or -1 after reporting. */
static int sync_fd(cm_outfile *f)
{
	struct stat st;
	if (!f->sync)
		return 0;
	if ((f->kind == CM_OUTFILE_STDOUT || f->kind == CM_OUTFILE_HELD) &&
	    (fstat(f->fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))))
		return 0;
	if (fsync(f->fd) < 0 && errno != EINVAL && errno != EROFS)
		return cm_fail(CM_EXIT_IO, f->shown, -1, "write error: %s", strerror(errno));
	return 0;
}

/* Close the finished unnamed file (CM_OUTFILE_UNNAMED) and name it: the
 * close is checked before the name (a delayed write error that close(2) reports
 * must not leave a named file), so it is named by a second descriptor,
 * which no longer has anything to report.  0, or -1 after reporting (the
 * inode then goes with its last descriptor). */
static int close_unnamed(cm_outfile *f)
{
	int fd = dup(f->fd), rc = 0;
	if (fd < 0)
		cm_error(CM_EXIT_IO, f->shown, -1, "cannot give the finished file its name: %s", strerror(errno));
	if (close(f->fd) < 0 && fd >= 0) {
		cm_error(CM_EXIT_IO, f->shown, -1, "write error: %s", strerror(errno));
		close(fd);
		fd = -1;
	}
	f->fd = fd;
	if (fd < 0)
		return -1;
	if (publish_unnamed(f) < 0)
		rc = -1;
	close(fd); /* its data was checked by the first close */
	return rc;
}

int cm_outfile_open(cm_outfile *f, const char *path, int sync)
{
	memset(f, 0, sizeof *f);
	f->fd = -1;
	f->sync = sync;
	cm_wback_init(&f->wb, -1);
	if (!path || !strcmp(path, "-")) {
		f->fd = 1;
		f->kind = CM_OUTFILE_STDOUT;
		f->shown = "<stdout>";
		return 0;
	}
	return open_path(f, path);
}

/* Close standard output, or the duplicate of a descriptor held, checked:
 * a late EIO/ENOSPC shows up at close (jq checks it too).  0, 1 when the
 * reader went away (EPIPE: not reported), -1 after reporting. */
static int close_stdout(cm_outfile *f)
{
	if (close(f->fd) == 0 || errno == EINTR)
		return 0;
	if (errno == EPIPE)
		return 1;
	return cm_fail(CM_EXIT_IO, f->shown, -1, "write error: %s", strerror(errno));
}

/* Close the named temporary file (CM_OUTFILE_NAMED), checked, and with OK
 * rename it to f->target; without OK, or when either fails, remove it.
 * The fatal signals wait meanwhile, and the signal handler's copy of the
 * name is forgotten.  0 when renamed; -1 without OK or after reporting a
 * failure. */
static int close_named(cm_outfile *f, int ok)
{
	sigset_t saved;
	if (close(f->fd) < 0 && ok) {
		cm_error(CM_EXIT_IO, f->shown, -1, "write error: %s", strerror(errno));
		ok = 0;
	}
	hold_signals(1, &saved);
	if (ok && rename(f->tmp_path, f->target) < 0) {
		cm_error(CM_EXIT_IO, f->shown, -1, "cannot rename %s to it: %s", f->tmp_path, strerror(errno));
		ok = 0;
	}
	if (!ok)
		unlink(f->tmp_path);
	doomed_set = 0;
	hold_signals(0, &saved);
	return ok ? 0 : -1;
}

int cm_outfile_close(cm_outfile *f, int ok)
{
	int err, gone = 0;
	if ((err = cm_wback_end(&f->wb)) != 0 && ok) {
		cm_error(CM_EXIT_IO, f->shown, -1, "write error: %s", strerror(err));
		ok = 0;
	}
	switch (f->kind) {
	case CM_OUTFILE_NONE:
		break;
	case CM_OUTFILE_STDOUT:
	case CM_OUTFILE_HELD:
		if (ok && sync_fd(f) < 0)
			ok = 0;
		if (ok && (gone = close_stdout(f)) != 0)
			ok = 0;
		else if (!ok && f->kind == CM_OUTFILE_HELD)
			close(f->fd); /* the duplicate (standard output's 1 is left to exit) */
		break;
	case CM_OUTFILE_DIRECT:
	case CM_OUTFILE_UNNAMED:
	case CM_OUTFILE_NAMED:
		if (ok && sync_fd(f) < 0)
			ok = 0;
		if (f->kind == CM_OUTFILE_NAMED) {
			if (close_named(f, ok) < 0)
				ok = 0;
		} else if (ok && f->kind == CM_OUTFILE_UNNAMED) {
			/* checked close, then the name (close_unnamed) */
			if (close_unnamed(f) < 0)
				ok = 0;
		} else if (close(f->fd) < 0 && ok) { /* an unnamed inode goes with it */
			cm_error(CM_EXIT_IO, f->shown, -1, "write error: %s", strerror(errno));
			ok = 0;
		}
		if (ok && f->sync && f->kind != CM_OUTFILE_DIRECT && sync_dir(f) < 0)
			ok = 0;
		break;
	}
	free(f->path);
	free(f->target);
	free(f->tmp_path);
	f->path = f->target = f->tmp_path = NULL;
	f->shown = NULL;
	f->fd = -1;
	f->kind = CM_OUTFILE_NONE;
	return ok ? 0 : gone == 1 ? 1 : -1;
}
