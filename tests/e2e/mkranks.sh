# mkranks.sh - sourced by batchpair.sh and batchrun.sh (after common.sh):
# the ranks of a job, made from the fixtures.

# mkranks DIR N NAME [HOST] [SHIFT_S]: N ranks, pids 5000.., the traces in
# DIR/traces named by the Python format NAME (r: rank, pid, host), windows
# DIR/windows/w{r}.json recording HOST (default gpu-node7), rank and pid;
# the windows' spans SHIFT_S seconds later than the traces (default 0)
mkranks() {
	mkdir -p "$1/traces" "$1/windows"
	e2e_python - "$FIX/cpu.json" "$FIX/window_source.json" "$1" "$2" "$3" "${4:-gpu-node7}" "${5:-0}" <<'PY'
import json, sys
import ranks
cpu, win, out, n, name, host, shift = sys.argv[1:8]
n, shift = int(n), int(shift) * 10**9
for r in range(n):
    pid = 5000 + r
    json.dump(ranks.trace(cpu, r, pid, n), open("%s/traces/%s" % (out, name.format(r=r, pid=pid, host=host)), "w"))
    json.dump(ranks.window(win, r, pid, host, shift), open("%s/windows/w%d.json" % (out, r), "w"))
PY
}
