#!/bin/bash
# bench/dev-cond26.sh -- two ways the serial threads of a run sleep behind the workers, on 16 CPUs:
# (1) glibc's pthread_cond_signal may wait until the waiters it woke before have run (main since
# 2026-12-06 18:40 signals through cm_cond, base/cond.h, a futex; CUPTIMERGE_COND=pthread is the
# way before); (2) glibc's heap grows each arena by mprotect(2) as its top is used up, each call
# taking the process's mmap lock for writing, so every thread's page faults wait (2 CPUs, strace -f
# -c, the 200M pair's .pftrace.gz: 1,057 mprotect calls at 297 us; with a 32 MiB top pad 154):
# GLIBC_TUNABLES' top pad 32 MiB and trim threshold 256 MiB.  Four rounds taking turns of each
# output by main, with CUPTIMERGE_COND=pthread, and with the top pad; the gzip outputs also by
# $CM_OLD (28457ce: no semaphore, no cm_cond).  Then -v of the .pftrace.gz both ways.  The pair in
# $CPU and $WIN; GNU time as $T.
set -u
NEW=${CM:-carry/bench/cuptimerge}
OLD=${CM_OLD:-carry/bench/cuptimerge-28457ce}
T=${T:-/usr/bin/time}
CM=$NEW
TUN=GLIBC_TUNABLES=glibc.malloc.top_pad=33554432:glibc.malloc.trim_threshold=268435456
. "$(dirname "$0")/devrow.sh" dev-cond26
for round in 1 2 3 4; do
	for o in o.json o.pftrace o.json.gz o.pftrace.gz; do
		CM=$NEW one "-o $o ($round)" "" $o
		CM=$NEW one "  pthread_cond_t ($round)" "" $o CUPTIMERGE_COND=pthread
		CM=$NEW one "  top pad 32 MiB ($round)" "" $o $TUN
		case $o in *.gz) CM=$OLD one "  28457ce ($round)" "" $o ;; esac
	done
done
CM=$NEW one "-v -o out.pftrace.gz" -v o.pftrace.gz
CM=$NEW one "-v -o out.pftrace.gz, pthread_cond_t" -v o.pftrace.gz CUPTIMERGE_COND=pthread
