#!/bin/bash
# bench/dev-pf7.sh -- one run on the 16-core machine (the lead's device run):
# the 1 GB pair merged to JSON and to .pftrace, both to standard output
# (no fsync, as -o will be), then plain -o and gzip, with -v, so that the
# transcoder's -v line shows whether its sequential part (the pool's sink,
# the lanes' queue of pflaneq.c, the passer) still paces the output on 16
# cores.  Binaries: carry/bench/cuptimerge (built from this branch),
# carry/bench/lib, carry/bench/time; the pair in $CPU and $WIN.  Prints
# figures only; about 50 s.
set -u
CM=carry/bench/cuptimerge
TIME=carry/bench/time
export LD_LIBRARY_PATH=$PWD/carry/bench/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
out=${TMPDIR:-/tmp}/dev-pf7.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
echo "$(nproc) CPUs; $(ls -l "$CPU" "$WIN" | awk '{print $5, $9}' | tr '\n' ' ')"
show() { # the -v lines that matter, the time, the size of FILE
	grep -E "time:|perfetto:|CPU after" "$out/err" | sed 's/^cuptimerge: //'
	grep -vE "time:|perfetto:|threads:|cut:|merged|CPU after" "$out/err" | head -3
	cat "$out/time"
	[ -f "$1" ] && echo "size $(stat -c %s "$1")"
	rm -f "$out"/o.*
}
stdout() { # stdout LABEL FILE ARGS...: one merge to standard output
	label=$1 f=$2
	shift 2
	echo "== $label: cuptimerge -v $* > $(basename "$f")"
	"$TIME" -f "%e s wall %U user %S sys %M KB" -o "$out/time" "$CM" -v "$@" -w "$WIN" "$CPU" >"$f" 2>"$out/err"
	show "$f"
}
tofile() { # tofile LABEL FILE ARGS...: one merge to -o FILE
	label=$1 f=$2
	shift 2
	echo "== $label: cuptimerge -v $* -o $(basename "$f")"
	"$TIME" -f "%e s wall %U user %S sys %M KB" -o "$out/time" "$CM" -v "$@" -w "$WIN" -o "$f" "$CPU" 2>"$out/err"
	show "$f"
}
for round in 1 2; do
	stdout "json $round" "$out/o.json"
	stdout "pftrace $round" "$out/o.pftrace" --format=perfetto
done
stdout "pftrace -j 8" "$out/o.pftrace" --format=perfetto -j 8
tofile "json -o" "$out/o.json"
tofile "pftrace -o" "$out/o.pftrace"
tofile "json.gz" "$out/o.json.gz"
tofile "pftrace.gz" "$out/o.pftrace.gz"
# the batch size (CUPTIMERGE_PFT_BATCH, default 1 MiB): fewer batches, fewer
# strings defined again, more memory in flight
for kb in 2048 4096; do
	CUPTIMERGE_PFT_BATCH=$((kb * 1024)) stdout "pftrace, $kb KiB batches" "$out/o.pftrace" --format=perfetto
done
