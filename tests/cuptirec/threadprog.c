/* threadprog.c - test helper for the thread recorder: runs threads and prints each one's ids.
 *
 * Usage: threadprog MODE, MODE one of
 *   exit          main returns after the workers are done (one left running)
 *   pthread_exit  main calls pthread_exit; the last thread ends the process
 *   _exit         main calls _exit (atexit handlers do not run)
 * Every thread prints one line "T ROLE TID PTHREAD NAME" (NAME "-" when the
 * thread did not set one) on stdout; "R ROLE" says the thread is still
 * running when the process exits.  Roles: main, w0..w3 (w0 and w2 set a
 * name), r9 (started after w0..w3 were joined, often on a recycled
 * pthread_t), pexit (ends with pthread_exit), sleeper (still running at
 * exit, in modes exit and _exit), late (the last thread, mode pthread_exit).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
/* The sleeper's lines printed: main waits for it, not for a time (a sleep
 * of 50 ms was not always enough on a loaded machine). */
static pthread_cond_t said_cv = PTHREAD_COND_INITIALIZER;
static int sleeper_said;

/* Print the calling thread's line for ROLE; NAME is set first when given. */
static void say(const char *role, const char *name)
{
	if (name)
		pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&out_mu);
	printf("T %s %ld %llu %s\n", role, (long)syscall(SYS_gettid),
	       (unsigned long long)(uintptr_t)pthread_self(), name ? name : "-");
	fflush(stdout);
	pthread_mutex_unlock(&out_mu);
}

static void *worker(void *arg)
{
	const char *role = arg;
	int i = role[1] - '0';
	char name[16];

	snprintf(name, sizeof name, "tp_worker_%d", i);
	say(role, i % 2 == 0 ? name : NULL);
	return NULL;
}

static void *pexit_thread(void *arg)
{
	(void)arg;
	say("pexit", "tp_pexit");
	pthread_exit(NULL);
}

static void *sleeper(void *arg)
{
	(void)arg;
	say("sleeper", "tp_sleeper");
	pthread_mutex_lock(&out_mu);
	puts("R sleeper");
	fflush(stdout);
	sleeper_said = 1;
	pthread_cond_signal(&said_cv);
	pthread_mutex_unlock(&out_mu);
	for (;;)
		pause();
	return NULL;
}

static void *late(void *arg)
{
	(void)arg;
	usleep(100000);   /* outlive main's pthread_exit */
	say("late", NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	static char roles[4][3] = { "w0", "w1", "w2", "w3" };
	const char *mode = argc > 1 ? argv[1] : "exit";
	pthread_t t[4], u;
	int i;

	say("main", NULL);
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, roles[i]);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	pthread_create(&u, NULL, worker, "r9");
	pthread_join(u, NULL);
	pthread_create(&u, NULL, pexit_thread, NULL);
	pthread_join(u, NULL);
	if (!strcmp(mode, "pthread_exit")) {
		pthread_create(&u, NULL, late, NULL);
		pthread_exit(NULL);
	}
	pthread_create(&u, NULL, sleeper, NULL);
	pthread_detach(u);
	pthread_mutex_lock(&out_mu); /* let the sleeper print */
	while (!sleeper_said)
		pthread_cond_wait(&said_cv, &out_mu);
	pthread_mutex_unlock(&out_mu);
	if (!strcmp(mode, "_exit"))
		_exit(0);
	return 0;
}
