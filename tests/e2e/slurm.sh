#!/bin/sh
# slurm.sh - contrib/slurm/cuptimerge-batch.sbatch on a real Slurm (issue 9).
# The test starts its own one-node cluster, without systemd, in its scratch
# directory: munged with a key it makes, slurmctld and slurmd with a
# slurm.conf it writes (free ports, no cgroups, root as SlurmUser), and stops
# them on exit.  64 generated ranks, three of them broken on purpose (a
# truncated window, a window of another run, a truncated trace), go through
# an array of 8 tasks with `sbatch --wait`.  Checked: every good rank's output
# is byte for byte a direct cuptimerge merge; the failures are in the joblogs,
# the tasks' summaries and sbatch's exit status; after the inputs are fixed,
# the same submission merges the three failed ranks and leaves the other
# outputs untouched; an array of another size that does not start at 0 skips
# every rank.  Skipped where Slurm or munge is not installed, or not as root
# (slurmd runs jobs as their users).
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to make the ranks"
need gzip "to read the outputs"
need timeout "to bound every wait"
BATCH=${CUPTIMERGE_BATCH:-$(dirname "$CUPTIMERGE")/cuptimerge-batch}
[ -x "$BATCH" ] || skip_all "no $BATCH"
SCRIPT=$srcdir/contrib/slurm/cuptimerge-batch.sbatch
[ -r "$SCRIPT" ] || skip_all "no $SCRIPT"

# The daemons live in sbin, which a user's PATH may lack.
PATH=$PATH:/usr/sbin:/sbin
export PATH
for tool in slurmctld slurmd munged sbatch sinfo squeue scancel; do
	command -v $tool >/dev/null 2>&1 ||
		skip_all "$tool is not installed (Debian: apt-get install slurm-wlm munge)"
done
[ "$(id -u)" -eq 0 ] || skip_all "slurmd has to run as root to start jobs"

# Nothing of a Slurm job this test may itself run in reaches our cluster.
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done

S=$tmp/slurm
mkdir -p "$S/munge" "$S/state" "$S/spool" "$S/log"
chmod 755 "$tmp" "$S" "$S/munge" # munged wants its socket's directory searchable
SLURM_CONF=$S/slurm.conf
export SLURM_CONF
host=$(uname -n | cut -d. -f1) # what slurmd takes for its NodeName
cpus=$(nproc)
# what slurmd will find, less a margin (more than it finds drains the node)
mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)

# stop_daemons: end the daemons this test started, by their pids, the
# jobs first; wait for them (SIGKILL after 10 s).
pids=
stop_daemons() {
	if [ -n "$pids" ]; then
		timeout 10 scancel -u root >/dev/null 2>&1 || :
		# shellcheck disable=SC2086 # a list of pids
		kill $pids 2>/dev/null || :
		n=0
		# shellcheck disable=SC2086
		while kill -0 $pids 2>/dev/null && [ $n -lt 100 ]; do
			sleep 0.1
			n=$((n + 1))
		done
		# shellcheck disable=SC2086
		kill -9 $pids 2>/dev/null || :
		pids=
	fi
}
trap 'stop_daemons; rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# dump_logs: the daemons' logs and the tasks' output, as TAP diagnostics.
dump_logs() {
	for f in "$S"/log/*.log "$S"/log/*.out "$tmp"/job/slurm-*.out; do
		[ -f "$f" ] || continue
		diag "=== ${f#"$tmp"/} (last 40 lines) ==="
		diag "$(tail -n 40 "$f")"
	done
}

# broken WHY: the cluster did not come up; the logs say why.
broken() {
	fail "$*"
	dump_logs
	stop_daemons
	finish
}

# Two free TCP ports on the loopback, for slurmctld and slurmd: never the
# defaults, which a real Slurm or another run of this test may hold.
set -- $(python3 -c 'import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
ctld_port=$1 slurmd_port=$2

cat >"$SLURM_CONF" <<EOF
ClusterName=cmtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge/munge.socket
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

tcase "a one-node Slurm starts: munged, slurmctld, slurmd; the node is idle"
if command -v mungekey >/dev/null 2>&1; then
	mungekey --create --keyfile="$S/munge/munge.key" >"$S/log/mungekey.out" 2>&1 || broken "mungekey failed"
else
	dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 2>/dev/null
fi
chmod 600 "$S/munge/munge.key"
# the foreground modes (-F, -D) keep each daemon's pid in $! for the trap
munged -F --force --socket="$S/munge/munge.socket" --key-file="$S/munge/munge.key" \
	--pid-file="$S/munge/munged.pid" --seed-file="$S/munge/munged.seed" \
	>"$S/log/munged.log" 2>&1 </dev/null &
pids=$!
n=0
while [ ! -S "$S/munge/munge.socket" ]; do
	n=$((n + 1))
	[ $n -le 100 ] || broken "munged made no socket in 10 s"
	sleep 0.1
done
slurmctld -D -f "$SLURM_CONF" >"$S/log/slurmctld.out" 2>&1 </dev/null &
pids="$pids $!"
slurmd -D -f "$SLURM_CONF" >"$S/log/slurmd.out" 2>&1 </dev/null &
pids="$pids $!"
n=0
until [ "$(timeout 10 sinfo -h -n "$host" -o %T 2>/dev/null)" = idle ]; do
	n=$((n + 1))
	[ $n -le 60 ] || broken "the node is not idle after 60 s: $(timeout 10 sinfo -N 2>&1)"
	# shellcheck disable=SC2086
	kill -0 $pids 2>/dev/null || broken "a daemon died"
	sleep 1
done

# 64 ranks: rank r on host node(r/8), pid 5000 + r%8, its trace named as torch
# names it in traces/, its window w{r}.json in windows/; and torchrun's agent
# window (no GPU work, no trace).  Inputs an hour old, so that an output is
# always newer.
J=$tmp/job
mkdir -p "$J/traces" "$J/windows" "$J/good"
e2e_python - "$FIX/cpu.json" "$FIX/window_source.json" "$J" <<'PY'
import json, sys
import ranks
cpu, win, out = sys.argv[1:4]
for r in range(64):
    host, pid = "node%d" % (r // 8), 5000 + r % 8
    json.dump(ranks.trace(cpu, r, pid, 64),
              open("%s/traces/%s_%d.1759300079000.pt.trace.json" % (out, host, pid), "w"), indent=1)
    json.dump(ranks.window(win, r, pid, host), open("%s/windows/w%d.json" % (out, r), "w"), indent=1)
json.dump(ranks.agent(win), open(out + "/windows/agent.json", "w"))
PY
key() { # key R: rank R's key
	echo "node$(($1 / 8))_$((5000 + $1 % 8)).1759300079000"
}
trace() { # trace R: rank R's trace
	echo "$J/traces/$(key "$1").pt.trace.json"
}
out() { # out R: rank R's output
	echo "$J/merged/$(key "$1").merged.json.gz"
}
# the planted failures: rank 5's window truncated (no window: a warning, and
# a trace without window), rank 17's window from a run an hour earlier (a
# window that fits no trace, and a trace without window), rank 42's trace
# truncated (its merge fails); the good inputs kept aside
cp "$J/windows/w5.json" "$J/windows/w17.json" "$(trace 42)" "$J/good/"
head -c 3000 "$J/good/w5.json" >"$J/windows/w5.json"
python3 -c 'import json, sys
w = json.load(open(sys.argv[1]))
w["source"]["start_ns"] -= 3600 * 10**9
w["source"]["end_ns"] -= 3600 * 10**9
json.dump(w, open(sys.argv[2], "w"))' "$J/good/w17.json" "$J/windows/w17.json"
head -c 1600 "$J/good/$(key 42).pt.trace.json" >"$(trace 42)"
touch -d '1 hour ago' "$J"/traces/* "$J"/windows/*
bad="5 17 42"
is_bad() {
	case " $bad " in *" $1 "*) return 0 ;; esac
	return 1
}

# submit ARRAY: the script as an array over the ranks, one CPU (one merge at
# a time) per task, waited for; sbatch's status in $rc, its output in
# $tmp/sbatch.out, the job id in $job.  Old task outputs are removed.
submit() {
	rm -f "$J"/slurm-*.out
	rc=0
	CUPTIMERGE_BATCH=$BATCH timeout 300 sbatch --wait --array="$1" -c 1 --mem-per-cpu=64M --time=10 \
		--chdir="$J" --output="$J/slurm-%A_%a.out" \
		"$SCRIPT" "$J/merged" "$J/traces" "$J/windows" >"$tmp/sbatch.out" 2>&1 || rc=$?
	[ $rc -ne 124 ] || diag "sbatch --wait timed out: $(timeout 10 squeue 2>&1)"
	job=$(sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' "$tmp/sbatch.out")
}

# logs: this job's joblogs; logline KEY: KEY's line in them
logs() {
	ls "$J/merged/joblog.${job}_"*.tsv
}
logline() {
	logcat | grep "^$1	"
}
logcat() {
	cat "$J/merged/joblog.${job}_"*.tsv
}

# summed FIELD: the sum of FIELD ("merged", "skipped", "failed") over the tasks' summaries
summed() {
	cat "$J"/slurm-*.out | sed -n "s/^cuptimerge-batch: \([0-9]*\) merged, \([0-9]*\) skipped, \([0-9]*\) failed.*/\1 \2 \3/p" |
		awk -v f="$1" '{ s += $(f == "merged" ? 1 : f == "skipped" ? 2 : 3); n++ } END { print n "/" s }'
}

# joblog_keys: every key of this job's joblogs, a line each, sorted
joblog_keys() {
	logcat | cut -f1 | grep -v '^key$' | sort
}

# what the plan holds, with the wrong-run window as a rank of its own
all_keys() {
	r=0
	while [ $r -lt 64 ]; do
		key $r
		r=$((r + 1))
	done
	echo agent
	[ -z "${1-}" ] || echo "$1"
}

tcase "first submission, --array=0-7: 8 tasks, sbatch exits 4, 61 merged, 4 failed"
submit 0-7
[ $rc -eq 4 ] || fail "sbatch --wait: exit $rc, wanted 4: $(cat "$tmp/sbatch.out")"
ls "$J"/slurm-*_[0-7].out >/dev/null 2>&1 || fail "no task output"
[ "$(ls "$J"/slurm-*.out | wc -l)" -eq 8 ] || fail "$(ls "$J"/slurm-*.out | wc -l) task outputs, wanted 8"
[ "$(summed merged)" = 8/61 ] || fail "merged (tasks/sum): $(summed merged)"
[ "$(summed failed)" = 8/4 ] || fail "failed (tasks/sum): $(summed failed)"
for t in 0 1 2 3 4 5 6 7; do
	grep -q "shard $t/8, 1 at a time, joblog $J/merged/joblog.${job}_$t.tsv" "$J"/slurm-*_$t.out ||
		fail "task $t: $(cat "$J"/slurm-*_$t.out)"
done

tcase "the failures: each in one task's failed list and its joblog, no outputs"
cat "$J"/slurm-*.out | sed -n 's/^cuptimerge-batch: failed: //p' | tr ' ' '\n' | sort >"$tmp/failed"
printf '%s\n' "$(key 5)" "$(key 17)" "$(key 42)" w17 | sort | cmp -s - "$tmp/failed" ||
	fail "failed keys: $(tr '\n' ' ' <"$tmp/failed")"
# a truncated window is paired with its trace, and the rank fails naming the damage
logline "$(key 5)" | grep -q "	$J/windows/w5.json	$(out 5)	-	0.000	0	its window is damaged: truncated JSON: the text ends inside the document at byte 3000 " ||
	fail "rank 5 (truncated window): $(logline "$(key 5)")"
logline "$(key 17)" | grep -q "	-	[^	]*	-	0.000	0	no window for this trace" ||
	fail "rank 17 (no window): $(logline "$(key 17)")"
logline w17 | grep -q "^w17	-	$J/windows/w17.json	-	-	0.000	0	no trace for this window" ||
	fail "the wrong-run window: $(logline w17)"
logline "$(key 42)" | grep -q "	1	[0-9.]*	[0-9]*	cuptimerge: $(trace 42)" ||
	fail "rank 42 (truncated trace): $(logline "$(key 42)")"
logline agent | grep -q "no GPU work" || fail "the agent's window is not 'no GPU work'"
for r in $bad; do
	[ ! -e "$(out $r)" ] || fail "failed rank $r has an output"
done

tcase "the joblogs: one per task, every rank in exactly one"
[ "$(logs | wc -l)" -eq 8 ] || fail "joblogs of job $job: $(ls "$J"/merged)"
all_keys w17 | sort | cmp -s - "$(joblog_keys >"$tmp/keys" && echo "$tmp/keys")" ||
	fail "the joblogs' keys are not the plan's, once each: $(joblog_keys | uniq -d | tr '\n' ' ')"
[ "$(logcat | awk -F '\t' '$5 == "0"' | wc -l)" -eq 61 ] || fail "not 61 lines of exit 0"

tcase "every good rank: byte for byte a direct cuptimerge merge, valid JSON"
mkdir "$tmp/direct"
r=0
while [ $r -lt 64 ]; do
	if ! is_bad $r; then
		t=$(trace $r)
		"$CUPTIMERGE" -q --trace-name "${t##*/}" -w "$J/windows/w$r.json" -o "$tmp/direct/$r.json.gz" "$t" ||
			fail "direct merge of rank $r: exit $?"
		cmp -s "$tmp/direct/$r.json.gz" "$(out $r)" || fail "rank $r differs from the direct merge"
	fi
	r=$((r + 1))
done
python3 -c 'import gzip, json, sys
for f in sys.argv[1:]:
    d = json.load(gzip.open(f))
    assert d["traceEvents"] and any(e.get("cat") == "kernel" for e in d["traceEvents"]), f
' "$J"/merged/*.merged.json.gz || fail "an output is not a merged trace"
[ "$(ls "$J"/merged/*.merged.json.gz | wc -l)" -eq 61 ] || fail "$(ls "$J"/merged/*.merged.json.gz | wc -l) outputs"

# what the good outputs are now: inode, size, mtime to the nanosecond
stamps() {
	for f in "$J"/merged/*.merged.json.gz; do
		stat -c '%n %i %s %y' "$f"
	done
}
stamps >"$tmp/stamps.1"

tcase "the failures fixed, the same submission again: sbatch exits 0, the 3 ranks merged, 61 skipped"
cp "$J/good/w5.json" "$J/good/w17.json" "$J/windows/"
cp "$J/good/$(key 42).pt.trace.json" "$J/traces/"
submit 0-7
[ $rc -eq 0 ] || fail "sbatch --wait: exit $rc: $(cat "$tmp/sbatch.out")"
[ "$(summed merged)" = 8/3 ] || fail "merged (tasks/sum): $(summed merged)"
[ "$(summed skipped)" = 8/61 ] || fail "skipped (tasks/sum): $(summed skipped)"
[ "$(summed failed)" = 8/0 ] || fail "failed (tasks/sum): $(summed failed)"
all_keys | sort | cmp -s - "$(joblog_keys >"$tmp/keys" && echo "$tmp/keys")" ||
	fail "the joblogs' keys are not the plan's, once each"

tcase "only the failed ranks were redone: the 61 good outputs untouched, the joblogs say skipped"
stamps | grep -v -e "$(key 5)" -e "$(key 17)" -e "$(key 42)" | cmp -s "$tmp/stamps.1" - ||
	fail "good outputs changed: $(stamps | grep -v -e "$(key 5)" -e "$(key 17)" -e "$(key 42)" | diff "$tmp/stamps.1" - | head -5)"
[ "$(logcat | grep -c '	0	0.000	0	up to date, skipped$')" -eq 61 ] ||
	fail "not 61 'up to date, skipped' lines"
for r in $bad; do
	logline "$(key $r)" | grep -q "	0	[0-9.]*	[1-9][0-9]*	-\$" ||
		fail "rank $r: $(logline "$(key $r)")"
	t=$(trace $r)
	"$CUPTIMERGE" -q --trace-name "${t##*/}" -w "$J/windows/w$r.json" -o "$tmp/direct/$r.json.gz" "$t"
	cmp -s "$tmp/direct/$r.json.gz" "$(out $r)" || fail "rank $r differs from the direct merge"
done
stamps >"$tmp/stamps.2"

tcase "another array, --array=3-6 (4 tasks, not from 0): every rank skipped, nothing touched"
submit 3-6
[ $rc -eq 0 ] || fail "sbatch --wait: exit $rc: $(cat "$tmp/sbatch.out")"
for t in 3 4 5 6; do
	grep -q "shard $((t - 3))/4, " "$J"/slurm-*_$t.out || fail "task $t: $(cat "$J"/slurm-*_$t.out)"
done
[ "$(summed merged)" = 4/0 ] || fail "merged (tasks/sum): $(summed merged)"
[ "$(summed skipped)" = 4/64 ] || fail "skipped (tasks/sum): $(summed skipped)"
stamps | cmp -s "$tmp/stamps.2" - || fail "outputs changed"

case_end
[ "$failures" -eq 0 ] || dump_logs
stop_daemons
finish
