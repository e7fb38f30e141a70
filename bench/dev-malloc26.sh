#!/bin/bash
# bench/dev-malloc26.sh -- glibc's heap growth on 16 CPUs: every arena grows by mprotect(2) as its
# top is used up (and shrinks when it is freed), each call taking the process's mmap lock for
# writing, so that every thread's page faults wait (on 2 CPUs, strace -f -c of the 200M pair's
# .pftrace.gz: 1,057 mprotect calls, 297 us each; with a 32 MiB top pad 154).  Four rounds taking
# turns of each output as it is and with GLIBC_TUNABLES' top pad (32 MiB) and trim threshold
# (256 MiB); the .pftrace.gz and .json.gz also by $CM_OLD (28457ce: the deflate workers signalled
# by a condition variable under their lock).  The pair in $CPU and $WIN; GNU time as $T.
set -u
NEW=${CM:-carry/bench/cuptimerge}
OLD=${CM_OLD:-carry/bench/cuptimerge-28457ce}
T=${T:-/usr/bin/time}
CM=$NEW
TUN=GLIBC_TUNABLES=glibc.malloc.top_pad=33554432:glibc.malloc.trim_threshold=268435456
. "$(dirname "$0")/devrow.sh" dev-malloc26
for round in 1 2 3 4; do
	for o in o.json o.pftrace o.json.gz o.pftrace.gz; do
		CM=$NEW one "-o $o ($round)" "" $o
		CM=$NEW one "  top pad 32 MiB ($round)" "" $o $TUN
		case $o in *.gz) CM=$OLD one "  28457ce ($round)" "" $o ;; esac
	done
done
