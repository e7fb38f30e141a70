/* input.c - chunked reading of plain or gzip text from a file or a pipe, with rewind.
 *
 * The merge reads each input more than once (see merge.c), so its inputs must
 * be re-readable.  Regular files are simply re-read from offset 0.  A pipe is
 * teed, on the first pass, into an unlinked temporary file; later passes read
 * the copy.  Only inputs opened for several passes are teed: the thread map
 * and the trace of a repair are read once, and copying them would only cost
 * room in $TMPDIR (and fail where it has none).  The copy holds the raw (still compressed) bytes, so a gzip pipe
 * costs only its compressed size on disk, and memory stays at two buffers.
 *
 * Gzip is recognised by the magic bytes 1f 8b, never by the file name.
 * Concatenated members are read one after the other (as gzip -d does); any
 * other bytes after the last member are an error, as is a member cut short.
 * The offset of a gzip error is, like every offset cuptimerge(1) prints, one
 * in the decompressed text (how much of it came out before the fault); the
 * compressed byte, where gzip -t would look, is named in the message.
 * zstd, bzip2, xz and lz4 are recognised by their magic bytes too, and
 * refused with a message that names them. */
#include "config.h"
#include "io/input.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/fdio.h"
#include "base/tmpfile.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct cm_input {
	char *name;
	int fd;            /* what we read now: the file, stdin, or the spool */
	int own_fd;        /* fd must be closed by us */
	int spool_fd;      /* copy of a pipe's bytes, or -1 */
	int teeing;        /* first pass over a pipe: copy what we read to spool_fd */
	int raw_eof;       /* read() returned 0 */
	uint64_t raw_size; /* st_size of a regular file, else 0 */
	struct stat st0;   /* a regular file as it was when opened */
	uint64_t raw_done; /* raw bytes read in this pass */

	size_t bufsize;
	unsigned char *raw; /* raw bytes read from fd */
	size_t raw_cap;
	unsigned char *text; /* inflated text (gzip mode) */

	int sniffed, gzip;
	z_stream zs;
	int zinit;
	int member_ended; /* the last gzip member reached Z_STREAM_END */

	int bom_seen;       /* bytes of a leading UTF-8 byte order mark met this pass (0-3) */
	int bom_done;       /* the text's start has been looked at for one */
	uint64_t next_off;  /* text offset of the next byte to hand out */
	uint64_t chunk_off; /* text offset of the chunk last handed out */
	/* plain mode: raw[pos..len) not yet handed out */
	size_t raw_pos, raw_len;

	int map_ok;             /* a regular file whose plain text may be mapped (map_chunk) */
	int fd_behind;          /* chunks were mapped: fd's position is not raw_done */
	int ra_wanted;          /* cm_input_readahead: on (its slots) */
	int ra_ended;           /* the read-ahead pass handed out its end (0) or error (-1): ra_rc */
	int ra_rc;
	struct readahead *ra;   /* the read-ahead thread of this pass, or NULL */
	uint64_t ra_raw_done;   /* raw_done as of the chunk last handed out */
	double ra_waited;       /* seconds the caller waited for the read-ahead thread */

	unsigned char *last;     /* the buffer of the chunk last handed out (cm_input_hold) */
	pthread_mutex_t hold_mu; /* guards free, nfree and ended (holds are let go on any thread) */
	struct chunkbuf *free;   /* buffers let go, for the next chunks */
	int nfree;
	int ended;               /* this pass handed out its end: a buffer let go is freed */
};

/* Chunk buffers, and holds on them.  The splitter hands its workers runs of
 * elements in the chunks themselves (json/docsplit.c), so a chunk must
 * outlive the next cm_input_next.  Every buffer a chunk is read into (raw,
 * text, the read-ahead slots') carries a count of references: one while
 * the input owns it, one a hold.  Before the input writes into a buffer
 * (own()), it looks whether anyone holds it; if so it lets go of its own
 * reference and takes a fresh buffer, from the buffers let go (a few are
 * kept) or malloc.  The last hold let go returns the buffer to that list.
 * So memory is what is held, which the caller bounds (the pools' slots).
 * The count is atomic: holds are let go on the workers' threads. */
struct chunkbuf {
	cm_input *in;
	struct chunkbuf *next; /* on the free list */
	int refs;
	int mapped;            /* 1: the bytes start a page of their own (buf_new), map_chunk may map a file
				* there; 2: they are a file's pages now (read-only), until ensure_writable */
	int pad[2];            /* the bytes start 32 bytes in: 16-aligned, as malloc's block is */
	unsigned char data[];
};

/* Buffers kept for reuse, at most. */
#define FREE_MAX 8

static struct chunkbuf *buf_of(unsigned char *p) { return (struct chunkbuf *)(p - offsetof(struct chunkbuf, data)); }

static size_t page_size(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	return pg > 0 ? (size_t)pg : 4096;
}

/* A new buffer of raw_cap bytes.  For an input that may be mapped, its
 * bytes are a mapping of their own that starts a page, the header at the
 * end of the page before, so that map_chunk can put a file's pages there
 * (and buf_of still finds the header); else a malloc'd block. */
static struct chunkbuf *buf_new(cm_input *in)
{
	struct chunkbuf *b;
	if (in->map_ok) {
		size_t pg = page_size();
		char *base = mmap(NULL, pg + in->raw_cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (base != MAP_FAILED) {
			b = (struct chunkbuf *)(void *)(base + pg - offsetof(struct chunkbuf, data));
			b->mapped = 1;
			b->in = in;
			return b;
		}
	}
	b = cm_xmalloc(sizeof *b + in->raw_cap);
	b->mapped = 0;
	b->in = in;
	return b;
}

/* Free a buffer buf_new made. */
static void buf_free(struct chunkbuf *b)
{
	size_t pg;
	if (!b)
		return;
	if (!b->mapped) {
		free(b);
		return;
	}
	pg = page_size();
	munmap(b->data - pg, pg + b->in->raw_cap);
}

/* A buffer of raw_cap bytes the input owns: one let go, or a new one. */
static unsigned char *buf_get(cm_input *in)
{
	struct chunkbuf *b;
	pthread_mutex_lock(&in->hold_mu);
	if ((b = in->free) != NULL) {
		in->free = b->next;
		in->nfree--;
	}
	pthread_mutex_unlock(&in->hold_mu);
	if (!b)
		b = buf_new(in);
	b->refs = 1;
	return b->data;
}

/* One reference to B gone; the last one gives it back: kept for the next
 * chunks while the pass goes on, else freed. */
static void buf_unref(struct chunkbuf *b)
{
	cm_input *in = b->in;
	if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	pthread_mutex_lock(&in->hold_mu);
	if (!in->ended && in->nfree < FREE_MAX) {
		b->next = in->free;
		in->free = b;
		in->nfree++;
		b = NULL;
	}
	pthread_mutex_unlock(&in->hold_mu);
	buf_free(b);
}

/* Before the input writes into its buffer *P: when a hold keeps the chunk
 * it last held, the input lets go of it and writes into another. */
static void own(cm_input *in, unsigned char **p)
{
	struct chunkbuf *b = buf_of(*p);
	if (__atomic_load_n(&b->refs, __ATOMIC_ACQUIRE) == 1)
		return;
	buf_unref(b);
	*p = buf_get(in);
}

/* The pass handed out its end (or an error): buffers let go from now on
 * are freed, and those kept are. */
static void pass_ended(cm_input *in)
{
	struct chunkbuf *b;
	pthread_mutex_lock(&in->hold_mu);
	in->ended = 1;
	b = in->free;
	in->free = NULL;
	in->nfree = 0;
	pthread_mutex_unlock(&in->hold_mu);
	while (b) {
		struct chunkbuf *next = b->next;
		buf_free(b);
		b = next;
	}
}

void *cm_input_hold(cm_input *in)
{
	struct chunkbuf *b = buf_of(in->last);
	__atomic_add_fetch(&b->refs, 1, __ATOMIC_ACQ_REL);
	return b;
}

void cm_input_release(void *hold)
{
	if (hold)
		buf_unref(hold);
}

/* Read-ahead.  The thread that cuts an input into events is the one the
 * whole read waits on (merge.c), and a good part of its time went to
 * read(2) itself: the kernel's copy of each chunk out of the page cache
 * (and, for gzip, inflate).  With read-ahead a thread of the input's own
 * runs fill() below and hands each chunk over in a ring of slots: the
 * chunk's buffer is swapped for the slot's spare one, so nothing is copied
 * twice, and the chunks are exactly those the plain reader would hand out.
 * It reads only regular files (a pipe's first pass stays on the caller's
 * thread: a read-ahead thread blocked on a silent pipe could not be joined
 * when the caller stops early).  Its errors are deferred (diag.h) and
 * reported by the caller when it reaches the chunk that failed, never
 * before, and dropped if the caller stops first. */
#define RA_SLOTS 8

/* Slots in use (cm_input_readahead's): the chunks read ahead are one less
 * (the caller holds one), or the testing aid CUPTIMERGE_READAHEAD_SLOTS's
 * (2 to RA_SLOTS). */
static int ra_slots(const cm_input *in)
{
	const char *e = getenv("CUPTIMERGE_READAHEAD_SLOTS");
	int n = e ? atoi(e) : 0;
	if (n >= 2 && n <= RA_SLOTS)
		return n;
	return in->ra_wanted < 2 ? 2 : in->ra_wanted > RA_SLOTS ? RA_SLOTS : in->ra_wanted;
}

struct ra_slot {
	unsigned char *buf; /* raw_cap bytes */
	size_t len;
	uint64_t off, raw_done;
	int rc;             /* as fill(): 1 a chunk, 0 the end, -1 an error (in diag) */
};

struct readahead {
	cm_input *in;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t filled, freed;
	struct ra_slot slot[RA_SLOTS];
	int n;              /* the slots in use (ra_slots) */
	/* slot[tail % N] .. slot[head - 1 % N] are filled and not yet handed
	 * out; slot[(tail - 1) % N] is the one the caller holds */
	uint64_t head, tail;
	int stop;           /* the caller wants the thread to end */
	int ended;          /* the last slot filled holds rc 0 or -1 */
	cm_diag_slot diag;
};

const char *cm_input_name(const cm_input *in) { return in->name; }
int cm_input_is_gzip(const cm_input *in) { return in->gzip; }
int cm_input_is_file(const cm_input *in) { return S_ISREG(in->st0.st_mode) && in->own_fd; }
uint64_t cm_input_offset(const cm_input *in) { return in->chunk_off; }
uint64_t cm_input_raw_done(const cm_input *in) { return in->ra_raw_done; }
uint64_t cm_input_raw_size(const cm_input *in) { return in->raw_size; }
double cm_input_waited(const cm_input *in) { return in->ra_waited; }

/* Mapped reading.  A regular file's plain text was read(2) into the
 * chunk buffers: the kernel's copy out of the page cache was a tenth of a
 * merge's CPU (8.6% on the 200 MB pair at -j 2, perf), paid twice for the
 * CPU trace, which is read twice.  Instead, after the first chunk (read as
 * ever: it tells plain text from gzip), each chunk's file pages are mapped
 * where its buffer's bytes lie (mmap MAP_FIXED over the buffer's own
 * mapping, populated at once, on the read-ahead thread when there is one),
 * so that everything else - holds, the buffers let go and reused, the
 * read-ahead ring - stays as it was, and memory too: a buffer holds at
 * most its chunk's pages, as it held its bytes.  The mapping is private
 * and writable, so a byte written to a chunk (a byte order mark moved off
 * the first) never reaches the file.  Only chunks of whole pages at page
 * offsets (reads of 64 KiB or more, a multiple of the page size), and
 * only up to the size the file had when opened: the end is read(2) as
 * before, which finds a file that grew; each mapping is followed by the
 * check that the file is unchanged, so an edit is reported as before.  A
 * file cut short after that check, while its pages are mapped, would make
 * a read of them a SIGBUS: that is reported as such a change and ends the
 * run (sigbus_exit).
 *
 * Measured, it pays on few CPUs only, so the merge asks for it with 3 jobs
 * or fewer (cm_input_map_default; CUPTIMERGE_MMAP, a benchmarking aid,
 * overrides): on the 16-core machine under taskset -c 0,1 the 1 GB pair
 * took 5.46-5.71 s mapped against 6.04-6.08 read, 10.4-10.9 CPU seconds
 * against 11.8; at -j 16 it took 1.95-2.00 s against 1.35-1.38, the
 * window's workers busy 7.2 s against 4.3-4.6 (bench/dev-readers.sh): each
 * buffer mapped anew must be unmapped from every CPU that ran a worker
 * that read it.  On this project's shared 2-core machine bench/cut-bench
 * on the 1.5 GB window took about as much CPU either way (perf samples,
 * three rounds: 3478 mapped, 3398 read). */
#define MAP_MIN (64u << 10)

static int map_default;

void cm_input_map_default(int on) { map_default = on; }

static int map_wanted(const cm_input *in)
{
	const char *e = getenv("CUPTIMERGE_MMAP");
	if (e && *e ? !strcmp(e, "0") : !map_default)
		return 0;
	return in->bufsize >= MAP_MIN && in->bufsize % page_size() == 0;
}

/* SIGBUS: a mapped input file was cut short under us (see above). */
static void sigbus_exit(int sig)
{
	static const char msg[] = "cuptimerge: an input file was cut short while it was being read "
				  "(it changed during the run)\n";
	(void)sig;
	if (write(2, msg, sizeof msg - 1) < 0) {
		/* nothing more to be done */
	}
	_exit(CM_EXIT_IO);
}

static pthread_once_t sigbus_once = PTHREAD_ONCE_INIT;
static void sigbus_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = sigbus_exit;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

/* Open PATH; REWINDABLE: tee a pipe so it can be read again. */
static cm_input *open_input(const char *path, size_t bufsize, int rewindable)
{
	cm_input *in = calloc(1, sizeof *in);
	struct stat st;
	if (!in) {
		cm_error(CM_EXIT_IO, NULL, -1, "out of memory");
		return NULL;
	}
	in->spool_fd = -1;
	in->bufsize = bufsize ? bufsize : 1;
	/* room for at least the two magic bytes, whatever the chunk size */
	in->raw_cap = in->bufsize < 16 ? 16 : in->bufsize;
	pthread_mutex_init(&in->hold_mu, NULL);
	in->raw = buf_get(in);
	in->text = buf_get(in); /* raw_cap: read-ahead swaps it with raw-sized buffers */
	if (!strcmp(path, "-")) {
		in->name = strdup("<stdin>");
		in->fd = 0;
	} else {
		in->name = strdup(path);
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
		in->own_fd = 1;
	}
	if (!in->raw || !in->text || !in->name) {
		cm_error(CM_EXIT_IO, NULL, -1, "out of memory");
		cm_input_close(in);
		return NULL;
	}
	if (in->fd < 0) {
		cm_error(CM_EXIT_IO, path, -1, "cannot open: %s", strerror(errno));
		cm_input_close(in);
		return NULL;
	}
	if (fstat(in->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		cm_error(CM_EXIT_IO, in->name, -1, "is a directory");
		cm_input_close(in);
		return NULL;
	}
	if (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode) && lseek(in->fd, 0, SEEK_CUR) == 0) {
		in->raw_size = (uint64_t)st.st_size;
		in->st0 = st;
		if (map_wanted(in)) { /* buffers that can take a file's pages */
			in->map_ok = 1;
			buf_free(buf_of(in->raw));
			buf_free(buf_of(in->text));
			in->raw = buf_get(in);
			in->text = buf_get(in);
		}
	} else
		in->teeing = rewindable; /* not re-readable: copy it during the first pass */
	return in;
}

cm_input *cm_input_open(const char *path, size_t bufsize) { return open_input(path, bufsize, 0); }

cm_input *cm_input_open_rewindable(const char *path, size_t bufsize)
{
	return open_input(path, bufsize, 1);
}

/* At the end of each pass over a regular file: is it still the file it was
 * when opened?  Passes that read different texts would merge halves of two
 * traces, so a change (size, inode, change time: a same-length edit in place
 * moves the change time, and a writer cannot set it back) fails the run.
 * Returns 0, or -1 after reporting. */
static int check_unchanged(cm_input *in)
{
	struct stat st;
	if (!S_ISREG(in->st0.st_mode))
		return 0; /* a pipe: we read our own spool */
	if (fstat(in->fd, &st) < 0)
		return cm_fail(CM_EXIT_IO, in->name, -1, "cannot stat: %s", strerror(errno));
	if (st.st_size != in->st0.st_size || st.st_ino != in->st0.st_ino || st.st_dev != in->st0.st_dev ||
	    st.st_ctim.tv_sec != in->st0.st_ctim.tv_sec || st.st_ctim.tv_nsec != in->st0.st_ctim.tv_nsec ||
	    st.st_mtim.tv_sec != in->st0.st_mtim.tv_sec || st.st_mtim.tv_nsec != in->st0.st_mtim.tv_nsec)
		return cm_fail(CM_EXIT_IO, in->name, -1,
			 "the file changed while it was being read (it is read more than once); nothing was written");
	return 0;
}

/* Make the spool file for a pipe.  Returns 0, or -1 after reporting. */
static int spool_create(cm_input *in)
{
	in->spool_fd = cm_temp_fd("spool");
	return in->spool_fd < 0 ? -1 : 0;
}

/* in->raw's bytes writable again when they are a file's pages (map_chunk),
 * and the file position where read(2) goes on.  0, or -1 after reporting. */
static int ensure_writable(cm_input *in)
{
	struct chunkbuf *b = buf_of(in->raw);
	if (b->mapped == 2) {
		if (mmap(in->raw, in->raw_cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    MAP_FAILED)
			return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory (mmap: %s)", strerror(errno));
		b->mapped = 1;
	}
	if (in->fd_behind) {
		if (lseek(in->fd, (off_t)in->raw_done, SEEK_SET) < 0)
			return cm_fail(CM_EXIT_IO, in->name, -1, "cannot seek: %s", strerror(errno));
		in->fd_behind = 0;
	}
	return 0;
}

/* Read up to `want` raw bytes into in->raw + at, teeing to the spool on a
 * pipe's first pass.  Returns the count (0 at end), or -1 after reporting. */
static ssize_t raw_read(cm_input *in, size_t at, size_t want)
{
	ssize_t n;
	if (in->raw_eof)
		return 0;
	if (ensure_writable(in) < 0)
		return -1;
	do
		n = read(in->fd, in->raw + at, want);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return cm_fail(CM_EXIT_IO, in->name, -1, "read error: %s", strerror(errno));
	if (n == 0) {
		in->raw_eof = 1;
		return in->teeing || check_unchanged(in) == 0 ? 0 : -1;
	}
	in->raw_done += (uint64_t)n;
	if (in->teeing) {
		int err;
		if (in->spool_fd < 0 && spool_create(in) < 0)
			return -1;
		if ((err = cm_write_all(in->spool_fd, in->raw + at, (size_t)n)) != 0)
			return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write the spool file for %s: %s", in->name,
				       strerror(err));
	}
	return n;
}

/* Compressed formats we do not read, by their magic bytes (from their file
 * format specifications), so that they are named rather than reported as
 * invalid JSON: no JSON text starts with any of these bytes. */
static const struct {
	const char *magic;
	size_t len;
	const char *name; /* also the command that decompresses it */
} foreign[] = {
	{"\x28\xb5\x2f\xfd", 4, "zstd"},
	{"BZh", 3, "bzip2"},
	{"\xfd\x37\x7a\x58\x5a\x00", 6, "xz"},
	{"\x04\x22\x4d\x18", 4, "lz4"},
};
/* The longest magic above: sniff() reads at least this much when it can. */
#define SNIFF_BYTES 6

/* Look at the first bytes to decide between plain text and gzip, and to
 * refuse the compressed formats above. */
static int sniff(cm_input *in)
{
	ssize_t n;
	own(in, &in->raw); /* its first bytes are the first chunk of plain text */
	n = raw_read(in, 0, in->bufsize);
	if (n < 0)
		return -1;
	in->raw_len = (size_t)n;
	while (in->raw_len < SNIFF_BYTES && !in->raw_eof) { /* tiny chunks: fetch a few more bytes */
		n = raw_read(in, in->raw_len, SNIFF_BYTES - in->raw_len);
		if (n < 0)
			return -1;
		in->raw_len += (size_t)n;
	}
	in->raw_pos = 0;
	in->sniffed = 1;
	for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++)
		if (in->raw_len >= foreign[i].len && !memcmp(in->raw, foreign[i].magic, foreign[i].len))
			return cm_fail(CM_EXIT_DATA, in->name, -1,
					"%s-compressed input is not supported; decompress it first (%s -dc)",
					foreign[i].name, foreign[i].name);
	in->gzip = in->raw_len >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b;
	if (in->gzip) {
		if (!in->zinit) {
			memset(&in->zs, 0, sizeof in->zs);
			if (inflateInit2(&in->zs, 15 + 16) != Z_OK)
				return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory");
			in->zinit = 1;
		} else {
			inflateReset(&in->zs);
		}
		in->zs.next_in = in->raw;
		in->zs.avail_in = (uInt)in->raw_len;
		in->member_ended = 0;
	}
	return 0;
}

/* The text offset reached by the inflate call in progress: the chunk's start
 * plus what this call has put out so far (never handed out on an error). */
static int64_t gz_text_off(const cm_input *in)
{
	return (int64_t)(in->next_off + (in->bufsize - in->zs.avail_out));
}

/* zlib's words for a damaged stream, with gzip -t's word in front where
 * zlib's is obscure: "incorrect data check" is the CRC-32 of the text. */
static const char *gz_why(const cm_input *in)
{
	const char *m = in->zs.msg ? in->zs.msg : "inflate failed";
	if (!strcmp(m, "incorrect data check"))
		return "CRC error (incorrect data check)";
	if (!strcmp(m, "incorrect length check"))
		return "length error (incorrect length check)";
	return m;
}

/* Inflate the next chunk.  Returns 1, 0 at the end, -1 after reporting. */
static int next_gzip(cm_input *in, const char **data, size_t *len)
{
	for (;;) {
		int rc;
		if (in->zs.avail_in == 0 && !in->raw_eof) {
			ssize_t n = raw_read(in, 0, in->bufsize);
			if (n < 0)
				return -1;
			in->zs.next_in = in->raw;
			in->zs.avail_in = (uInt)n;
		}
		if (in->member_ended) {
			/* between members: another member, the end, or junk */
			if (in->zs.avail_in == 0 && in->raw_eof)
				return 0;
			if (in->zs.avail_in == 1 && !in->raw_eof) {
				/* need two bytes to see the magic */
				in->raw[0] = in->zs.next_in[0];
				ssize_t n = raw_read(in, 1, 1);
				if (n < 0)
					return -1;
				in->zs.next_in = in->raw;
				in->zs.avail_in = 1 + (uInt)n;
			}
			if (in->zs.avail_in >= 2 && in->zs.next_in[0] == 0x1f && in->zs.next_in[1] == 0x8b) {
				inflateReset(&in->zs);
				in->member_ended = 0;
			} else {
				return cm_fail(CM_EXIT_DATA, in->name, (int64_t)in->next_off,
						"trailing garbage after the gzip data (at compressed byte %llu)",
						(unsigned long long)(in->raw_done - in->zs.avail_in));
			}
		}
		own(in, &in->text);
		in->zs.next_out = in->text;
		in->zs.avail_out = (uInt)in->bufsize;
		rc = inflate(&in->zs, Z_NO_FLUSH);
		if (rc == Z_STREAM_END)
			in->member_ended = 1;
		else if (rc == Z_BUF_ERROR && in->zs.avail_in == 0 && in->raw_eof)
			return cm_fail(CM_EXIT_DATA, in->name, gz_text_off(in),
					"truncated gzip data (the file ends inside a gzip member, at compressed byte %llu)",
					(unsigned long long)in->raw_done);
		else if (rc != Z_OK && rc != Z_BUF_ERROR)
			return cm_fail(CM_EXIT_DATA, in->name, gz_text_off(in),
					"invalid gzip data at compressed byte %llu: %s",
					(unsigned long long)(in->raw_done - in->zs.avail_in), gz_why(in));
		*len = in->bufsize - in->zs.avail_out;
		if (*len) {
			*data = (const char *)in->text;
			return 1;
		}
		if (!in->member_ended && in->zs.avail_in == 0 && in->raw_eof)
			return cm_fail(CM_EXIT_DATA, in->name, gz_text_off(in),
					"truncated gzip data (the file ends inside a gzip member, at compressed byte %llu)",
					(unsigned long long)in->raw_done);
	}
}

/* The next chunk of plain text into in->raw (owned): the file's pages
 * mapped there when it can be (see "Mapped reading"), else read.  As
 * raw_read. */
static ssize_t map_chunk(cm_input *in)
{
	struct chunkbuf *b = buf_of(in->raw);
	uint64_t off = in->raw_done;
	size_t len;
	if (!in->map_ok || in->teeing || !b->mapped || in->raw_eof || off % page_size() != 0 ||
	    off >= in->raw_size)
		return raw_read(in, 0, in->bufsize);
	len = in->raw_size - off < in->bufsize ? (size_t)(in->raw_size - off) : in->bufsize;
	pthread_once(&sigbus_once, sigbus_install);
	/* read-only: populating a writable private mapping would copy every page */
	if (mmap(in->raw, len, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, in->fd, (off_t)off) == MAP_FAILED)
		return cm_fail(CM_EXIT_IO, in->name, -1, "cannot map: %s", strerror(errno));
	b->mapped = 2;
	in->fd_behind = 1;
	if (check_unchanged(in) < 0)
		return -1;
	in->raw_done += len;
	return (ssize_t)len;
}

/* The next chunk of text, from the start of in->text (gzip) or in->raw. */
static int fill_text(cm_input *in, const char **data, size_t *len)
{
	if (!in->sniffed && sniff(in) < 0)
		return -1;
	if (in->gzip)
		return next_gzip(in, data, len);
	if (in->raw_pos == in->raw_len) {
		ssize_t n;
		own(in, &in->raw);
		n = map_chunk(in);
		if (n < 0)
			return -1;
		in->raw_pos = 0;
		in->raw_len = (size_t)n;
	}
	if (in->raw_pos == in->raw_len)
		return 0;
	*data = (const char *)in->raw + in->raw_pos;
	*len = in->raw_len - in->raw_pos;
	in->raw_pos = in->raw_len;
	return 1;
}

/* The next chunk, as cm_input_next hands it out (without the offsets), the
 * data at the start of in->text (gzip) or in->raw (plain text).  A UTF-8
 * byte order mark (EF BB BF) at the start of the text is skipped, its bytes
 * counted in the offsets (issue 27 F27): RFC 8259 lets a parser ignore
 * one, Python's json.loads of bytes does (the reference reads the window
 * so), and nothing else can start a JSON text with EF.  Only the
 * first chunk or chunks (tiny reads) can hold it. */
static int fill(cm_input *in, const char **data, size_t *len)
{
	static const unsigned char bom[3] = {0xef, 0xbb, 0xbf};
	for (;;) {
		int rc = fill_text(in, data, len);
		size_t k = 0;
		if (in->bom_done || rc < 0)
			return rc;
		if (rc == 0) {
			if (in->bom_seen)
				return cm_fail(CM_EXIT_DATA, in->name, in->bom_seen,
						"truncated JSON: the text ends inside a UTF-8 byte order mark");
			return 0;
		}
		while (k < *len && in->bom_seen < 3 && (unsigned char)(*data)[k] == bom[in->bom_seen]) {
			k++;
			in->bom_seen++;
		}
		if (k < *len && in->bom_seen < 3) {
			if (in->bom_seen) /* EF or EF BB, then something else */
				return cm_fail(CM_EXIT_DATA, in->name, in->bom_seen,
						"invalid JSON: a UTF-8 byte order mark cut short (EF BB BF begins one)");
			in->bom_done = 1; /* none */
			return 1;
		}
		in->bom_done = in->bom_seen == 3;
		in->next_off += k;
		if (k < *len) {
			/* the rest of the chunk to the start of its buffer, where
			 * the read-ahead thread takes it from */
			memmove((char *)*data, *data + k, *len - k);
			*len -= k;
			return 1;
		}
	}
}

/* The read-ahead thread: fill a free slot, hand it over, until the end, an
 * error or the caller's stop. */
static void *ra_main(void *arg)
{
	struct readahead *ra = arg;
	cm_input *in = ra->in;
	cm_progress_thread_off();
	cm_diag_defer(&ra->diag);
	pthread_mutex_lock(&ra->mu);
	while (!ra->stop && !ra->ended) {
		struct ra_slot *s;
		const char *data = NULL;
		size_t len = 0;
		unsigned char **owner, *t;
		if (ra->head - ra->tail >= (uint64_t)ra->n - 1) { /* the ring is full */
			pthread_cond_wait(&ra->freed, &ra->mu);
			continue;
		}
		s = &ra->slot[ra->head % (uint64_t)ra->n];
		pthread_mutex_unlock(&ra->mu);
		s->rc = fill(in, &data, &len);
		if (s->rc == 1) {
			/* the chunk's buffer goes with the slot; the input reads
			 * on into the slot's spare */
			owner = in->gzip ? &in->text : &in->raw;
			t = *owner;
			*owner = s->buf;
			s->buf = t;
			s->len = len;
			s->off = in->next_off; /* the thread's own while it runs */
			in->next_off += len;
			(void)data; /* == t: fill's data starts its buffer */
		}
		s->raw_done = in->raw_done;
		pthread_mutex_lock(&ra->mu);
		ra->head++;
		ra->ended = s->rc != 1;
		pthread_cond_signal(&ra->filled);
	}
	pthread_mutex_unlock(&ra->mu);
	return NULL;
}

/* Start the read-ahead thread for this pass, when wanted, the pass has not
 * begun and the input is a regular file.  Without a thread the caller reads
 * as before. */
static void ra_start(cm_input *in)
{
	struct readahead *ra;
	struct stat st;
	if (!in->ra_wanted || in->teeing || in->next_off || fstat(in->fd, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	ra = cm_xcalloc(1, sizeof *ra);
	ra->in = in;
	ra->n = ra_slots(in);
	for (int i = 0; i < ra->n; i++)
		ra->slot[i].buf = buf_get(in);
	pthread_mutex_init(&ra->mu, NULL);
	pthread_cond_init(&ra->filled, NULL);
	pthread_cond_init(&ra->freed, NULL);
	if (pthread_create(&ra->th, NULL, ra_main, ra) != 0) {
		in->ra_wanted = 0; /* no thread to be had: read on this one */
		for (int i = 0; i < ra->n; i++)
			buf_unref(buf_of(ra->slot[i].buf));
		free(ra);
		return;
	}
	in->ra = ra;
}

/* Stop and join the read-ahead thread; an error it met that the caller never
 * reached is dropped (the caller stopped before it). */
static void ra_stop(cm_input *in)
{
	struct readahead *ra = in->ra;
	if (!ra)
		return;
	pthread_mutex_lock(&ra->mu);
	ra->stop = 1;
	pthread_cond_signal(&ra->freed);
	pthread_mutex_unlock(&ra->mu);
	pthread_join(ra->th, NULL);
	cm_diag_drop(&ra->diag);
	pthread_mutex_destroy(&ra->mu);
	pthread_cond_destroy(&ra->filled);
	pthread_cond_destroy(&ra->freed);
	for (int i = 0; i < ra->n; i++) /* a slot's chunk may be held */
		buf_unref(buf_of(ra->slot[i].buf));
	free(ra);
	in->ra = NULL;
}

/* cm_input_next from the read-ahead thread's ring. */
static int ra_next(cm_input *in, const char **data, size_t *len)
{
	struct readahead *ra = in->ra;
	struct ra_slot *s;
	pthread_mutex_lock(&ra->mu);
	if (ra->tail == ra->head) {
		double t = cm_now_s();
		while (ra->tail == ra->head)
			pthread_cond_wait(&ra->filled, &ra->mu);
		in->ra_waited += cm_now_s() - t;
	}
	s = &ra->slot[ra->tail % (uint64_t)ra->n];
	if (s->rc == 1) {
		ra->tail++;
		pthread_cond_signal(&ra->freed);
	}
	pthread_mutex_unlock(&ra->mu);
	in->ra_raw_done = s->raw_done;
	if (s->rc <= 0) {
		/* the thread has ended: its error is this call's; its ring goes
		 * now, not when the input is rewound or closed (the window is
		 * held open to the end of the run) */
		in->ra_ended = 1;
		in->ra_rc = s->rc;
		if (s->rc < 0)
			cm_diag_settle(&ra->diag);
		pass_ended(in);
		ra_stop(in);
		return in->ra_rc;
	}
	in->chunk_off = s->off;
	*data = (const char *)s->buf;
	*len = s->len;
	in->last = s->buf;
	return 1;
}

void cm_input_readahead(cm_input *in, int on) { in->ra_wanted = on; }

int cm_input_next(cm_input *in, const char **data, size_t *len)
{
	int rc;
	if (in->ra_ended) /* asked again after the end or an error: the same answer */
		return in->ra_rc;
	if (!in->ra)
		ra_start(in);
	if (in->ra)
		return ra_next(in, data, len);
	rc = fill(in, data, len);
	in->chunk_off = in->next_off; /* after fill: a byte order mark skipped */
	if (rc == 1) {
		in->next_off += *len;
		in->last = in->gzip ? in->text : in->raw; /* *data starts it */
	} else {
		pass_ended(in);
	}
	in->ra_raw_done = in->raw_done;
	return rc;
}

/* Why read on after a JSON error: a damaged member inflates to garbage that
 * the JSON reader meets before inflate reaches the member's CRC, so the
 * garbage would be reported ("invalid char") and the damage never.  Costs a
 * read of the rest of the file, on the error path only. */
int cm_input_check_gzip(cm_input *in)
{
	const char *d;
	size_t n;
	int rc;
	if (!in->sniffed || !in->gzip || in->ra_ended)
		return in->ra_ended && in->ra_rc < 0 ? -1 : 0;
	while ((rc = cm_input_next(in, &d, &n)) == 1)
		;
	return rc;
}

int cm_input_can_pread(const cm_input *in)
{
	struct stat st;
	return in->sniffed && !in->gzip && !in->teeing && in->bom_done && fstat(in->fd, &st) == 0 &&
	       S_ISREG(st.st_mode);
}

int cm_input_pread(cm_input *in, void *buf, size_t n, uint64_t off)
{
	/* a plain text's offsets are the file's (a byte order mark counted: fill) */
	ssize_t got = cm_pread_all(in->fd, buf, n, off);
	if (got < 0)
		return cm_fail(CM_EXIT_IO, in->name, -1, "read error: %s", strerror(errno));
	if ((size_t)got < n)
		return cm_fail(CM_EXIT_IO, in->name, -1,
			       "the file changed while it was being read (it is read more than once); "
			       "nothing was written");
	return 0;
}

uint64_t cm_input_text_size(const cm_input *in)
{
	struct stat st;
	return fstat(in->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

int cm_input_pass_check(cm_input *in) { return check_unchanged(in); }

int cm_input_rewind(cm_input *in)
{
	ra_stop(in);
	if (in->teeing) {
		/* drain what the first pass did not read, so the copy is whole */
		while (!in->raw_eof)
			if (raw_read(in, 0, in->bufsize) < 0)
				return -1;
		in->teeing = 0;
		if (in->spool_fd < 0 && spool_create(in) < 0) /* empty input */
			return -1;
		if (in->own_fd)
			close(in->fd);
		in->fd = in->spool_fd;
		in->own_fd = 1;
		in->spool_fd = -1;
		in->raw_size = in->raw_done;
	}
	if (lseek(in->fd, 0, SEEK_SET) != 0)
		return cm_fail(CM_EXIT_IO, in->name, -1, "cannot rewind: %s", strerror(errno));
	in->raw_eof = 0;
	in->raw_done = 0;
	in->raw_pos = in->raw_len = 0;
	in->sniffed = 0;
	in->bom_seen = in->bom_done = 0;
	in->next_off = in->chunk_off = 0;
	in->ra_raw_done = 0;
	in->ra_ended = 0;
	in->ended = 0;
	return 0;
}

void cm_input_close(cm_input *in)
{
	if (!in)
		return;
	ra_stop(in);
	if (in->own_fd && in->fd >= 0)
		close(in->fd);
	if (in->spool_fd >= 0)
		close(in->spool_fd);
	if (in->zinit)
		inflateEnd(&in->zs);
	pass_ended(in);
	if (in->raw)
		buf_unref(buf_of(in->raw));
	if (in->text)
		buf_unref(buf_of(in->text));
	pthread_mutex_destroy(&in->hold_mu);
	free(in->name);
	free(in);
}
