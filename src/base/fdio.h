/* fdio.h - all of a buffer to or from a file descriptor: the loops that
 * retry EINTR and short transfers, which each writer and reader of the
 * engine had a copy of; whether an output's directory takes files, and
 * whether its name is one of this process's descriptors.  Nothing is reported here: each caller words its
 * own message (and a broken pipe may be no error to it at all). */
#ifndef CM_FDIO_H
#define CM_FDIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* write(2) all N bytes at P to FD, retrying EINTR and short writes.  A
 * descriptor that is non-blocking (O_NONBLOCK on an open file description
 * shared with whoever set it: a parent, another program on the same pipe)
 * is waited on with poll(2) when it has no room (EAGAIN), for as long as a
 * blocking one would wait: its reader is slow, not gone, and each write
 * it failed lost bytes of the output.
 * Returns 0, or the errno of the write that failed (EPIPE included: the
 * caller decides whether a closed reader is an error); a write that takes
 * no byte of a non-empty buffer, which POSIX allows only of odd devices,
 * counts as EIO rather than looping forever.  A failure leaves an unknown
 * prefix of P written. */
int cm_write_all(int fd, const void *p, size_t n);

/* pread(2) N bytes at offset OFF of FD into P, retrying EINTR and short
 * reads.  Returns how many were read: N, or fewer when the file ends first
 * (0 at or past its end); or -1 with errno set by the read that failed. */
ssize_t cm_pread_all(int fd, void *p, size_t n, uint64_t off);

/* 0 when files can be made in the directory DIR (it is one, and this
 * process may write and search it), else the errno saying why not
 * (ENOTDIR for something that is no directory): the check an output
 * written long after its command line is read makes up front. */
int cm_dir_writable(const char *dir);

/* The descriptor that PATH names through this process's own /proc/PID/fd
 * (/dev/stdout, /dev/fd/N, /proc/self/fd/N, or a symbolic link that leads
 * to one, link by link), or -1 when it names none (or cannot be followed:
 * a missing directory, links past 40).  Opening such a path reopens what
 * the descriptor holds, not a file of that name: with the descriptor
 * closed there is nothing to open, and a writer that made a temporary file
 * beside it and renamed it over the name replaced /dev/stdout itself (as
 * root).  Callers ask it of an output's name. */
int cm_path_names_fd(const char *path);

#endif
