#!/bin/bash
# bench/dev-writers21.sh -- the .pftrace's packets written by several threads, the passer only
# passing the bytes on (branch pfpass21, issue 25): on 16 CPUs the one passer thread wrote the
# window's packets in 0.19-0.25 s and passed a .pftrace.gz's bytes on in 0.23 s more of a 0.45 s
# phase while the sequential part waited for it (bench/dev-gz21.sh).  Three rounds taking
# turns: the JSON, and $CM_EXP's .pftrace with CUPTIMERGE_PFT_WRITERS 0 (the passer writes, as
# main), 1, 2 (its default) and 4; the same for gzip.  Then -v of the .pftrace and .pftrace.gz
# with 2 writers.  Binaries $CM (main) and $CM_EXP; the 1 GB pair in $CPU and $WIN.
set -u
CM=${CM:-carry/bench/cuptimerge}
CM_EXP=${CM_EXP:-carry/bench/cuptimerge-exp}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-writers21
main=$CM
for round in 1 2 3; do
	CM=$main
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace, main ($round)" "" o.pftrace
	CM=$CM_EXP
	for w in 0 1 2 4; do
		one "  $w writers ($round)" "" o.pftrace CUPTIMERGE_PFT_WRITERS=$w
	done
	CM=$main
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz, main ($round)" "" o.pftrace.gz
	CM=$CM_EXP
	for w in 0 2 4; do
		one "  $w writers ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_WRITERS=$w
	done
done
CM=$CM_EXP
one "-o out.pftrace, 2 writers (-v)" -v o.pftrace
one "-o out.pftrace.gz, 2 writers (-v)" -v o.pftrace.gz
