#!/bin/sh
# tmpfull.sh - a $TMPDIR that fills up while the id tables are made gives one
# line and exit status 3, and leaves the old -o file as it was (issue 27
# F17: the tables, mapped shared, were sparse files, and a write to a page
# that found no space left was a SIGBUS, exit 135, without a word).  Needs a
# small tmpfs of its own: mounted in a private mount namespace (unshare -m
# as root, unshare -rm for a user with user namespaces); skipped where
# neither is allowed.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to write the inputs"
need unshare "to mount a small tmpfs in a namespace of its own"

# in_tmpfs SIZE CMD...: run CMD with TMPDIR on a fresh tmpfs of SIZE.
if unshare -m sh -c 'mount -t tmpfs -o size=1m tmpfs "$1"' sh "$tmp" 2>/dev/null; then
	ns="unshare -m"
elif unshare -rm sh -c 'mount -t tmpfs -o size=1m tmpfs "$1"' sh "$tmp" 2>/dev/null; then
	ns="unshare -rm"
else
	skip_all "cannot mount a tmpfs here (not root, and no user namespaces)"
fi
mkdir "$tmp/t"
in_tmpfs() {
	size=$1
	shift
	# shellcheck disable=SC2086 # ns is a word list
	$ns sh -c 'mount -t tmpfs -o "size=$1" tmpfs "$2" && shift 2 && TMPDIR=$0/t exec "$@"' \
		"$tmp" "$size" "$tmp/t" "$@"
}

# a pair whose id tables (arrays over ids 15 apart, 48 MB) are large next to
# its records, so that the tables are what fills the file system
python3 - "$tmp/cpu.json" "$tmp/win.json" <<'EOF'
import sys
n, s, base = 100000, 15, 1759300074000000000
with open(sys.argv[1], "w") as f:
    f.write('{"schemaVersion":1,"baseTimeNanoseconds":%d,"traceEvents":[' % base)
    f.write(",".join('{"ph":"X","cat":"cpu_op","name":"op","pid":42,"tid":%d,"ts":%d,"dur":1,"args":{"External id":%d}}'
                     % (1 + i % 7, 1000 + i, (i + 1) * s) for i in range(n)))
    f.write("]}")
with open(sys.argv[2], "w") as f:
    f.write('{"events":[')
    parts = []
    for i in range(n):
        c, t = (i + 1) * s, base + (1000 + i) * 1000
        parts.append('{"kind":"external_correlation","external_kind":3,"external_id":%d,"correlation_id":%d}' % (c, c))
        parts.append('{"kind":"cuda_runtime","cbid":211,"start_ns":%d,"end_ns":%d,"process_id":42,"thread_id":5,"correlation_id":%d}'
                     % (t, t + 5, c))
    f.write(",".join(parts))
    f.write("]}")
EOF

# sizes that hold the records and some of the tables (16 MB made the
# SIGBUS), and one that holds everything
for size in 12m 16m 24m; do
	tcase "TMPDIR on a ${size} tmpfs, tables 48 MB: exit 3, one line, the old output kept"
	echo OLD >"$tmp/out.json"
	set +e
	in_tmpfs $size $CUPTIMERGE -q --memory=1M -w "$tmp/win.json" -o "$tmp/out.json" "$tmp/cpu.json" 2>"$tmp/err"
	rc=$?
	set -e
	[ $rc -eq 3 ] || fail "exit $rc, wanted 3 ($(head -c 300 "$tmp/err"))"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "stderr is not one line: $(cat "$tmp/err")"
	grep -q "No space left on device" "$tmp/err" || fail "message: $(cat "$tmp/err")"
	[ "$(cat "$tmp/out.json")" = OLD ] || fail "the old output was changed"
done

tcase "TMPDIR on a 96m tmpfs: the same pair merges"
in_tmpfs 96m $CUPTIMERGE -q --memory=1M -w "$tmp/win.json" -o "$tmp/out.json" "$tmp/cpu.json" 2>"$tmp/err" ||
	fail "exit $?: $(cat "$tmp/err")"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/out.json" || fail "the output is not JSON"

finish
