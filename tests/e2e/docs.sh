#!/bin/sh
# docs.sh - what the README and the manual pages say, checked against what the
# programs do (issue 28 P14): one --version format for the three programs;
# cuptimerge(1) names every other page; no two examples run together; the
# failed-ranks awk of the README and of the sbatch script lists exactly the
# failed ranks (not torchrun's agent, skipped); cuptimerge-batch(1)'s example
# output directory is the one the batch uses, and its TensorBoard recipe
# works; every directory `make install`
# fills is named in the README.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to make the ranks"
BATCH=${CUPTIMERGE_BATCH:-$(dirname "$CUPTIMERGE")/cuptimerge-batch}
CUPTIREC=${CUPTIREC:-./cuptirec}
MAN=$srcdir/man
README=$srcdir/README.md
SBATCH=$srcdir/contrib/slurm/cuptimerge-batch.sbatch
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' config.h)

for prog in "$CUPTIMERGE" "$BATCH" "$CUPTIREC"; do
	name=${prog##*/}
	tcase "$name --version: '$name (cuptimerge) $version' first"
	if [ ! -x "$prog" ]; then
		fail "$prog is not built"
		continue
	fi
	"$prog" --version >"$tmp/v" 2>&1 || fail "exit $?"
	[ "$(head -n 1 "$tmp/v")" = "$name (cuptimerge) $version" ] || fail "first line: $(head -n 1 "$tmp/v")"
done

tcase "cuptimerge(1)'s SEE ALSO names every other manual page"
seealso=$(sed -n '/^\.Sh SEE ALSO/,/^\.Sh /p' "$MAN/cuptimerge.1")
for page in "$MAN"/*.[0-9]; do
	base=${page##*/}
	[ "$base" = cuptimerge.1 ] && continue
	echo "$seealso" | grep -q "^\.Xr ${base%.*} ${base##*.}\b" || fail "no .Xr ${base%.*} ${base##*.}"
done

tcase "no example runs into the next: text after a display starts a paragraph"
for page in "$MAN"/*.[0-9]; do
	awk -v f="${page##*/}" 'prev == ".Ed" && $0 !~ /^\./ { print f ":" NR ": " $0 } { prev = $0 }' "$page"
done >"$tmp/runon"
[ ! -s "$tmp/runon" ] || fail "text right after .Ed: $(cat "$tmp/runon")"

# a job: rank 0 merges, rank 1's trace is cut short, rank 2 has no window,
# torchrun's agent recorded a window without GPU work
J=$tmp/scratch/job
mkdir -p "$J/traces" "$J/windows"
e2e_python - "$FIX/cpu.json" "$FIX/window_source.json" "$J" <<'PY'
import json, sys
import ranks
cpu, win, out = sys.argv[1:4]
for r in range(3):
    pid = 5000 + r
    text = json.dumps(ranks.trace(cpu, r, pid, 3), indent=1)
    open("%s/traces/node0_%d.1759300079000.pt.trace.json" % (out, pid), "w").write(text[:1600] if r == 1 else text)
    if r == 2:
        continue
    json.dump(ranks.window(win, r, pid, "node0"), open("%s/windows/cuptirec_node0_%d.json" % (out, pid), "w"))
json.dump(ranks.agent(win), open(out + "/windows/cuptirec_node0_4999.json", "w"))
PY
touch -d '1 hour ago' "$J"/traces/* "$J"/windows/*

tcase "cuptimerge-batch(1)'s example output directory is the batch's"
# the page's first example, run on this job with the page's own paths
ex=$(grep -m 1 '^\.Dl cuptimerge-batch -j 8 /scratch/job/traces /scratch/job/windows$' "$MAN/cuptimerge-batch.1" || true)
[ -n "$ex" ] || fail "cuptimerge-batch(1) lost its first example"
said=$(grep -B 4 -m 1 '^\.Dl cuptimerge-batch -j 8 /scratch' "$MAN/cuptimerge-batch.1" | sed -n 's/^\.Pa \(\/scratch[^ ]*\) .*/\1/p')
rc=0
"$BATCH" --no-progress -q -j 2 "$J/traces" "$J/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
[ -n "$said" ] && [ -s "$tmp$said/node0_5000.1759300079000.merged.json.gz" ] ||
	fail "the page says the outputs go to '$said'; they went to: $(find "$tmp/scratch" -name '*.merged.json.gz')"

tcase "cuptimerge-batch(1)'s TensorBoard recipe links the outputs under names TensorBoard takes"
# the page's lines, with /scratch moved here and without starting TensorBoard
sed -n '/^Show the merged traces in TensorBoard/,/^\.Ed/p' "$MAN/cuptimerge-batch.1" |
	sed '1,2d; $d; /^tensorboard /d; s|/scratch/|'"$tmp"'/scratch/|g; s/\\e/\\/g' >"$tmp/tb.sh"
[ -s "$tmp/tb.sh" ] || fail "no TensorBoard recipe in cuptimerge-batch(1)"
(cd "$tmp" && sh "$tmp/tb.sh") || fail "the recipe failed: $(cat "$tmp/tb.sh")"
tb=$tmp/tb/merged/node0_5000.1759300079000.pt.trace.json.gz
[ -L "$tb" ] && gzip -dc "$tb" | grep -q '"traceEvents"' || fail "no readable $tb: $(ls "$tmp/tb/merged" 2>&1)"
[ "$(ls "$tmp/tb/merged" | grep -cv '\.pt\.trace\.json\.gz$')" -eq 0 ] || fail "names TensorBoard does not take"

# the failed ranks: the README's and the sbatch script's awk on this joblog
for doc in "$README" "$SBATCH"; do
	tcase "the failed-ranks awk of ${doc##*/} lists the 2 failed ranks, not the agent"
	line=$(grep -m 1 "awk -F '\\\\t'" "$doc" | sed 's/^#* *//')
	[ -n "$line" ] || { fail "no awk line in $doc"; continue; }
	prog=$(printf '%s\n' "$line" | sed "s/^awk -F '\\\\t' '\(.*\)' [^ ]*\$/\1/")
	awk -F '\t' "$prog" "$J/traces/merged/cuptimerge-batch.tsv" | cut -f 1 | sort >"$tmp/failed"
	printf '%s\n' node0_5001.1759300079000 node0_5002.1759300079000 >"$tmp/want"
	cmp -s "$tmp/want" "$tmp/failed" || fail "'$prog' lists: $(tr '\n' ' ' <"$tmp/failed")"
done

tcase "the README names every directory make install fills"
# MAKEFLAGS emptied: under make -j check it names the jobserver's descriptors,
# which the test harness reuses (3 is the log): a make that takes them for its
# jobserver's fails ("read jobs pipe: Bad file descriptor")
if MAKEFLAGS= ${MAKE:-make} install DESTDIR="$tmp/root" prefix=/PREFIX >"$tmp/install.log" 2>&1; then
	(cd "$tmp/root/PREFIX" && find . -type f | sed 's|^\./||; s|/[^/]*$||' | sort -u) >"$tmp/dirs"
	while read -r d; do
		grep -qF "$d/" "$README" || fail "README does not name $d/"
	done <"$tmp/dirs"
else
	fail "make install: $(tail -3 "$tmp/install.log")"
fi

finish
