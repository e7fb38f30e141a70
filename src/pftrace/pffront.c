/* pffront.c - the Perfetto transcoder's front thread: with more than one
 * thread, the JSON text is walked (pfstream.c's cm_pft_scan) on a thread
 * of its own, and the writer's thread (the JSON output's one thread: the
 * merge's, the copy's) only copies the text into chunks for it, which
 * costs a quarter of the walk.  With one, the walk is the writer's. */
#include "config.h"
#include "pftrace/pfstream.h"
#include "base/diag.h"

#include <string.h>

/* ---- the front thread ---- */

/* The front thread: the chunks read in order, until the end. */
static void *front_main(void *arg)
{
	cm_pft *t = arg;
	cm_diag_defer(&t->slot); /* its error is settled by the writer's thread */
	pthread_mutex_lock(&t->mu);
	for (;;) {
		cm_buf *b;
		int rc = 0;
		double w = cm_now_s();
		while (!t->qn && !t->q_end)
			pthread_cond_wait(&t->cv_take, &t->mu);
		t->f_wait += cm_now_s() - w;
		if (!t->qn)
			break;
		b = &t->q[t->qhead];
		pthread_mutex_unlock(&t->mu);
		if (!t->front_failed && !__atomic_load_n(&t->dropping, __ATOMIC_ACQUIRE)) {
			double c0 = cm_thread_cpu_s();
			rc = cm_pft_scan(t, b->p, b->len);
			t->f_scan += cm_thread_cpu_s() - c0;
		}
		pthread_mutex_lock(&t->mu);
		b->len = 0;
		t->qhead = (t->qhead + 1) % PFT_QUEUE;
		t->qn--;
		if (rc < 0)
			t->front_failed = 1; /* the chunks after it are dropped */
		pthread_cond_signal(&t->cv_put);
	}
	pthread_mutex_unlock(&t->mu);
	t->f_cpu = cm_thread_cpu_s();
	return NULL;
}

/* Stop the front thread once it has read what is queued; its error
 * settled (printed if it is the run's first).  0, or -1 when it failed. */
int cm_pft_front_stop(cm_pft *t)
{
	int failed;
	pthread_mutex_lock(&t->mu);
	t->q_end = 1;
	pthread_cond_signal(&t->cv_take);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->front, NULL);
	t->front_on = 0;
	failed = t->front_failed;
	cm_diag_settle(&t->slot);
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cv_put);
	pthread_cond_destroy(&t->cv_take);
	return failed ? -1 : 0;
}

/* Queue the chunk filled (t->fill) for the front thread.  0, or -1 when
 * the front thread has failed (stopped, its error reported). */
int cm_pft_front_push(cm_pft *t)
{
	int failed;
	double w = cm_now_s();
	pthread_mutex_lock(&t->mu);
	while (t->qn == PFT_QUEUE && !t->front_failed)
		pthread_cond_wait(&t->cv_put, &t->mu);
	t->w_wait += cm_now_s() - w;
	failed = t->front_failed;
	if (!failed) {
		cm_buf *slot = &t->q[(t->qhead + t->qn) % PFT_QUEUE], tmp = *slot;
		*slot = t->fill; /* the slot's buffer, read, is filled next */
		t->fill = tmp;
		t->qn++;
		pthread_cond_signal(&t->cv_take);
	}
	pthread_mutex_unlock(&t->mu);
	t->fill.len = 0;
	if (failed) {
		cm_pft_front_stop(t);
		t->wfailed = 1;
		return -1;
	}
	return 0;
}

/* Start the front thread; 0, or -1 when it cannot be (the text is then
 * read on the writer's thread). */
static int front_start(cm_pft *t)
{
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv_put, NULL);
	pthread_cond_init(&t->cv_take, NULL);
	if (pthread_create(&t->front, NULL, front_main, t)) {
		pthread_mutex_destroy(&t->mu);
		pthread_cond_destroy(&t->cv_put);
		pthread_cond_destroy(&t->cv_take);
		return -1;
	}
	t->front_on = 1;
	return 0;
}

static int write_text(cm_pft *t, const char *s, size_t n);

int cm_pft_write(cm_pft *t, const void *data, size_t n)
{
	double t0 = cm_now_s();
	int rc;
	if (!t->t_first)
		t->t_first = t0;
	rc = write_text(t, data, n);
	t->w_time += cm_now_s() - t0;
	return rc < 0 ? cm_pft_quiesce(t) : rc;
}

/* cm_pft_write's work. */
static int write_text(cm_pft *t, const char *s, size_t n)
{
	if (t->wfailed)
		return -1;
	/* one thread, or none to be had: the walk is the writer's */
	if (!t->front_on && (t->threads < 2 || t->q_end || front_start(t) < 0)) {
		t->q_end = 1; /* (no front thread from now on) */
		if (cm_pft_scan(t, s, n) < 0)
			return t->wfailed = 1, -1;
		return 0;
	}
	while (n) {
		size_t k;
		if (t->fill.cap < t->chunk)
			cm_buf_grow(&t->fill, t->chunk - t->fill.len);
		k = t->chunk - t->fill.len < n ? t->chunk - t->fill.len : n;
		memcpy(t->fill.p + t->fill.len, s, k);
		t->fill.len += k;
		s += k;
		n -= k;
		if (t->fill.len == t->chunk && cm_pft_front_push(t) < 0)
			return -1;
	}
	return 0;
}

