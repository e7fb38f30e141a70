#!/bin/bash
# bench/dev-gz21.sh -- the .pftrace.gz's gzip cost on 16 CPUs (issue 25): on 2026-12-06 07:33's
# instance the .pftrace.gz took 1.32-1.34 s against the .pftrace's 1.19-1.21 and the .json.gz's
# 1.10-1.14, and in its -v the passer took 0.19 s to pass the text phase's bytes on with 0.06 s
# of its CPU (0.02 s plain); fewer deflate threads (4, 2) or the transcoder's workers at nice 5
# did not help.  Three rounds taking turns: the JSON and .pftrace plain and gzip, and both gzip
# outputs with the blocks deflated and written by a crew of their own (CUPTIMERGE_GZIP_CREW=1:
# the passer only copies and hands over), and with pgzip fed on a thread of its own
# (CUPTIMERGE_GZIP_FEED=1: the passer only copies into that thread's buffers).  Then -v of the .pftrace.gz both ways and the
# .pftrace: the passer's context switches in its sink calls (waits, CPU taken).
# The two knobs are bench/exp/gzip-crew-feed.diff's (not landed): build it with
# EXP=bench/exp/gzip-crew-feed.diff bench/mkcarry.sh and run with CM=carry/bench/cuptimerge-exp;
# main's binary ignores them.  Binary $CM; the 1 GB pair in $CPU and $WIN.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-gz21
for round in 1 2 3; do
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace ($round)" "" o.pftrace
	one "-o out.json.gz ($round)" "" o.json.gz
	one "  fed on a thread ($round)" "" o.json.gz CUPTIMERGE_GZIP_FEED=1
	one "-o out.pftrace.gz ($round)" "" o.pftrace.gz
	one "  own crew ($round)" "" o.pftrace.gz CUPTIMERGE_GZIP_CREW=1
	one "  fed on a thread ($round)" "" o.pftrace.gz CUPTIMERGE_GZIP_FEED=1
done
one "-o out.pftrace (-v)" -v o.pftrace
one "-o out.pftrace.gz (-v)" -v o.pftrace.gz
one "-o out.pftrace.gz, own crew (-v)" -v o.pftrace.gz CUPTIMERGE_GZIP_CREW=1
one "-o out.pftrace.gz, fed on a thread (-v)" -v o.pftrace.gz CUPTIMERGE_GZIP_FEED=1
