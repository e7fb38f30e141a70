/* pfchunk.c - the Perfetto transcoder's chunks of text from -j 2, each
 * walked by the worker that encodes it (pfpool.c's pool runs them).
 *
 * From -j 2 no thread walks the whole text (one did, pf7: at 2.4-2.8 GB/s
 * it set the pace of a 2.3 GB output on 16 cores): the writer's thread
 * copies the text into chunks of one span each and queues them
 * (pfstream.c), and the worker of a chunk walks it itself (pfcut.c) and
 * encodes the elements that end in it.  The walk needs where the chunk
 * before ended (inside which element, which string), known only once that
 * chunk is walked; so the worker first guesses where the chunk's first
 * whole element begins (a '{' after "}," outside any string, as the JSON
 * writer separates the elements) and walks from there, then takes the
 * walk handed on by the chunk before (which waits only on that chunk's own
 * walk), walks it up to the guess and checks that it stands before an
 * element just there.  Then the guess's walk is the walk, and is handed
 * on; else (a guess inside a string, text that is not in the traceEvents
 * array) the chunk is walked again from the walk handed on.  The result
 * is the walk at -j 1's, element for element, and so are its refusals (an
 * element too long for the records, cm_pft_elem_refuse: reported by the
 * walk handed on, never by a guess's). */
#include "config.h"
#include "pftrace/pfstream.h"
#include "base/diag.h"

#include <pthread.h>
#include <string.h>

/* An element found by a worker's walk: at AT in its chunk, or in STRAD
 * (one cut by the chunk's start, copied). */
struct elref {
	int64_t off;
	size_t at;
	uint32_t n, strad;
};

/* (pfstream.h) */
void cm_pft_hand_abort(cm_pft *t)
{
	if (!t->hand_on)
		return;
	int i;
	pthread_mutex_lock(&t->hmu);
	t->hand_stop = 1;
	for (i = 0; i < PFT_HAND_CVS; i++)
		pthread_cond_broadcast(&t->hcv[i]);
	pthread_mutex_unlock(&t->hmu);
}

/* A guess at where the first element that begins in the chunk S[0..N)
 * begins: a '{' after a ',' after a '}' (spaces between), as the JSON
 * writer separates the elements; N when there is none. */
static size_t guess_start(const char *s, size_t n)
{
	size_t i = 1;
	while (i < n) {
		const char *p = memchr(s + i, '{', n - i);
		size_t j;
		if (!p)
			break;
		i = (size_t)(p - s);
		j = i;
		while (j > 0 && cm_jscan_ws(s[j - 1]))
			j--;
		if (j > 0 && s[j - 1] == ',') {
			j--;
			while (j > 0 && cm_jscan_ws(s[j - 1]))
				j--;
			if (j > 0 && s[j - 1] == '}')
				return i;
		}
		i++;
	}
	return n;
}

/* A worker's walk's element (pfcut.c's emit): noted where it lies. */
static int par_emit(void *ctx, const char *s, size_t n, int64_t off)
{
	struct elctx *c = ctx;
	struct pfworker *w = c->w;
	struct elref r;
	if (n > w->t->elem_max) /* a guess's walk: not reported (walked again if it held) */
		return c == &w->cguess ? -1 : cm_pft_elem_refuse(w->t, n, off);
	r.off = off;
	r.n = (uint32_t)n;
	if (s >= w->text && s + n <= w->text + w->n) {
		r.at = (size_t)(s - w->text);
		r.strad = 0;
	} else { /* the walk's copy of one cut by the chunk's start */
		r.at = w->strad.len;
		r.strad = 1;
		cm_buf_put(&w->strad, s, n);
	}
	cm_buf_put(c->list, &r, sizeof r);
	return 0;
}

/* Take the walk where chunk SEQ begins into W (W's own given back for it).
 * 0, or -1 when none will come. */
static int hand_take(cm_pft *t, uint64_t seq, struct cm_pfcut *w)
{
	int rc = 0;
	pthread_mutex_lock(&t->hmu);
	while (t->hand_seq1 != seq + 1 && !t->hand_stop)
		pthread_cond_wait(&t->hcv[seq % PFT_HAND_CVS], &t->hmu);
	if (t->hand_stop)
		rc = -1;
	else {
		cm_pfcut_swap(&t->hand, w);
		t->hand_seq1 = 0;
	}
	pthread_mutex_unlock(&t->hmu);
	return rc;
}

/* Hand on W, the walk where chunk SEQ begins (W gets the one taken). */
static void hand_put(cm_pft *t, uint64_t seq, struct cm_pfcut *w)
{
	pthread_mutex_lock(&t->hmu);
	cm_pfcut_swap(&t->hand, w);
	t->hand_seq1 = seq + 1;
	pthread_cond_broadcast(&t->hcv[seq % PFT_HAND_CVS]);
	pthread_mutex_unlock(&t->hmu);
}

/* (pfstream.h) */
int cm_pft_chunk_work(struct pfworker *w, const cm_buf *in, cm_buf *out)
{
	cm_pft *t = w->t;
	struct chunk_head head;
	uint64_t seq;
	size_t g, i, nel;
	int64_t base;
	int guessed = 0, rc;
	double c0 = cm_thread_cpu_s(), h0;
	const struct elref *r;
	struct cm_pfelem *el;
	memcpy(&head, in->p, sizeof head);
	seq = head.seq;
	w->text = in->p + sizeof head;
	w->n = in->len - sizeof head;
	base = head.base;
	w->lguess.len = w->lwalk.len = w->strad.len = 0;
	/* the guess (not for the first chunk: the document's start) */
	g = head.walk ? guess_start(w->text, w->n) : w->n;
	if (g < w->n) {
		struct cm_pfcut *c = &w->guess;
		c->st = S_ELEM;
		c->first = 0;
		c->failed = 0;
		c->quiet = 1;
		c->offset = base + (int64_t)g;
		memset(&c->sc, 0, sizeof c->sc);
		c->key.len = c->elem.len = 0;
		c->in_events = c->checked_key = 1;
		c->label = t->label;
		c->emit = par_emit;
		c->ctx = &w->cguess;
		guessed = cm_pfcut_scan(c, w->text + g, w->n - g) == 0;
	}
	/* the walk handed on from the chunk before */
	h0 = cm_now_s();
	if (__atomic_load_n(&t->dropping, __ATOMIC_ACQUIRE) || hand_take(t, head.walk, &w->walk) < 0) {
		cm_pft_hand_abort(t);
		return -2; /* no message: the run's failure was reported */
	}
	h0 = cm_now_s() - h0;
	w->hand_wait += h0;
	w->hand_wait_ph[head.ph] += h0;
	w->walk.emit = par_emit;
	w->walk.ctx = &w->cwalk;
	w->walk.quiet = 0;
	if (w->walk.failed) { /* (reported by the chunk that failed) */
		hand_put(t, head.walk + 1, &w->walk);
		cm_pft_hand_abort(t);
		return -2;
	}
	if (guessed) {
		rc = cm_pfcut_scan(&w->walk, w->text, g);
		if (!rc && w->walk.st == S_ELEM) { /* the guess held: its walk goes on */
			w->guess.quiet = 0;
			cm_pfcut_swap(&w->guess, &w->walk);
			cm_buf_put(&w->lwalk, w->lguess.p, w->lguess.len);
			w->held++;
		} else if (!rc) {
			rc = cm_pfcut_scan(&w->walk, w->text + g, w->n - g);
			w->missed++;
		}
	} else {
		rc = cm_pfcut_scan(&w->walk, w->text, w->n);
	}
	hand_put(t, head.walk + 1, &w->walk);
	w->cut_cpu += cm_thread_cpu_s() - c0;
	if (rc < 0) { /* reported */
		cm_pft_hand_abort(t);
		return -1;
	}
	/* the elements that end in the chunk */
	nel = w->lwalk.len / sizeof *r;
	r = (const struct elref *)(const void *)w->lwalk.p;
	w->ev->elems.len = 0;
	cm_buf_grow(&w->ev->elems, nel * sizeof *el + 1);
	el = (struct cm_pfelem *)(void *)w->ev->elems.p;
	for (i = 0; i < nel; i++) {
		el[i].s = (r[i].strad ? w->strad.p : w->text) + r[i].at;
		el[i].n = r[i].n;
		el[i].off = r[i].off;
	}
	w->ev->elems.len = nel * sizeof *el;
	if (cm_pfbatch_encode_elems(w->ev, seq, el, nel, out) < 0) {
		cm_pft_hand_abort(t);
		return -1;
	}
	return 0;
}

/* (pfstream.h) */
void cm_pft_worker_init(struct pfworker *w, cm_pft *t)
{
	w->t = t;
	w->ev = cm_pfev_new(NULL, t->label);
	w->ev->dropping = &t->dropping;
	w->ev->lq = t->lq;
	cm_pfcut_init(&w->guess, t->label);
	cm_pfcut_init(&w->walk, t->label);
	w->cguess.w = w->cwalk.w = w;
	w->cguess.list = &w->lguess;
	w->cwalk.list = &w->lwalk;
}

/* (pfstream.h) */
void cm_pft_worker_free(struct pfworker *w)
{
	cm_pfev_free(w->ev);
	cm_pfcut_free(&w->guess);
	cm_pfcut_free(&w->walk);
	cm_buf_free(&w->lguess);
	cm_buf_free(&w->lwalk);
	cm_buf_free(&w->strad);
}
