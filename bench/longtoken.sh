#!/bin/bash
# bench/longtoken.sh -- time against the length of one huge token (finding F15).
#
# Usage: bench/longtoken.sh [--cuptimerge PATH] [--window] [SIZE_MB...]   (default: 4 8 15; an element may be at most 16 MiB)
#
# Makes a one-event CPU trace whose "name" is SIZE_MB megabytes long, merges the
# example window into it (to /dev/null) and prints user seconds, wall seconds and
# peak RSS (/usr/bin/time) for each size, then the ratio of user time for the
# largest to the smallest size next to the ratio of their sizes: about equal when
# the cost is linear in the token's length, the square of it when quadratic.
# With --window the long name is a kernel's, in a one-event window merged into
# the example CPU trace (issue 27 F29: the copies of the name at the peak).
# Prints figures only; never asserts a timing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
CM="$top/src/cuptimerge"
if [ "${1:-}" = --cuptimerge ]; then CM=$2; shift 2; fi
in_window=0
if [ "${1:-}" = --window ]; then in_window=1; shift; fi
[ $# -gt 0 ] || set -- 4 8 15
work=$(mktemp -d "${TMPDIR:-/tmp}/cuptimerge-longtoken.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '%8s %10s %10s %12s\n' "name MB" "user s" "wall s" "peak RSS MB"
first_mb= first_user= last_mb= last_user=
for mb in "$@"; do
	python3 - "$work/cpu.json" "$mb" "$work/window.json" <<'PY'
import sys
name = "a" * (int(sys.argv[2]) * 1000000)
with open(sys.argv[1], "w") as f:
    f.write('{"baseTimeNanoseconds":1759300074000000000,"traceEvents":[{"ph":"X","cat":"cpu_op",'
            '"name":"' + name + '","pid":4242,"tid":4242,"ts":5000010,"dur":1,"args":{"External id":2}}]}')
with open(sys.argv[3], "w") as f:
    f.write('{"events":[{"kind":"kernel","device_id":0,"stream_id":7,"context_id":1,"start_ns":1759300079000050000,'
            '"end_ns":1759300079000060000,"correlation_id":101,"name":"' + name + '"}]}')
PY
	if [ $in_window = 1 ]; then
		win=$work/window.json cpu=$top/examples/cpu.json
	else
		win=$top/examples/window.json cpu=$work/cpu.json
	fi
	/usr/bin/time -f "%U %e %M" -o "$work/time" "$CM" -q -w "$win" "$cpu" >/dev/null
	read -r user wall rss <"$work/time"
	printf '%8s %10s %10s %12.1f\n' "$mb" "$user" "$wall" "$(echo "$rss / 1024" | bc -l)"
	[ -n "$first_mb" ] || { first_mb=$mb; first_user=$user; }
	last_mb=$mb last_user=$user
done
echo "size ratio $(echo "$last_mb / $first_mb" | bc -l | xargs printf '%.1f'), user-time ratio" \
	"$(echo "$last_user / ($first_user + 0.001)" | bc -l | xargs printf '%.1f')"
