#!/bin/sh
# pfparts.sh - a merge's .pftrace whose CPU events, read in parts on the
# copy's threads (cpu/cpucopypar.c), are encoded there, a part a batch,
# and handed to the transcoder as batches, not as text (src/mergepftcpu.c,
# "direct parts").  On a gen_trace pair with an event of 200 KB in the
# middle (too long for a part: the walk takes it, and the parts go on
# after it: two runs of parts, text between and around them), the marks
# set 4 KiB apart (CUPTIMERGE_COPY_STRIDE) so that its 1 MB has parts:
# -v says the parts ran and their batches were inserted; the bytes do not
# depend on -j (1 to 16: the parts run at -j 1 too), the read size, the
# careful reader or the way (CUPTIMERGE_PFT_DIRECT=0, each batch through
# the transcoder's pool); Perfetto's trace processor shows for them what
# it shows for the JSON, and the same as for the parts as text
# (CUPTIMERGE_PFT_PARTS=0), each thread's slices on the same lanes
# (tests/pftrace_check.py --pair), at -j 1 and 16, and with a cut
# (--steps, --range), whose parts decide their events themselves; a CPU
# event that cannot be written, in a part, is refused with one line,
# status 1, its offset in the CPU trace, and no file, at -j 1 to 16.
. "${srcdir:-.}/tests/e2e/common.sh"
. "${srcdir:-.}/tests/e2e/pfcommon.sh"
NOW="--now 1795974776"
[ -x "$shared/tools/gen_trace" ] || skip_all "no $shared/tools/gen_trace"
CUPTIMERGE_COPY_STRIDE=4096
export CUPTIMERGE_COPY_STRIDE

"$shared/tools/gen_trace" --seed 5 --ops 3000 --devices 2 --quiet "$tmp/g.cpu" "$tmp/win.json"
# the CPU trace with a long event in the middle (its "args" 200 KB: more
# than a part's 32 strides), written with an event a line; bad.cpu the
# same with a "b" event (no .pftrace form) a quarter of the way in, its
# offset in bad.off
python3 - "$tmp/g.cpu" "$tmp/cpu.json" "$tmp/bad.cpu" "$tmp/bad.off" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
x = [e for e in ev if e.get("ph") == "X"][len(ev) // 3]
long = dict(x, name="long", args={"blob": "z" * 200000})
ev.insert(len(ev) // 2, long)
def write(path, events, mark=None):
    head = json.dumps({k: v for k, v in d.items() if k != "traceEvents"})[:-1]
    text = head + ', "traceEvents": [\n'
    at = None
    for i, e in enumerate(events):
        if i:
            text += ",\n"
        if e is mark:
            at = len(text.encode())
        text += json.dumps(e)
    text += "\n]}\n"
    open(path, "w").write(text)
    return at
write(sys.argv[2], ev)
bad = {"ph": "b", "name": "a", "cat": "c", "id": 1, "pid": 1, "tid": 1, "ts": 1}
ev.insert(len(ev) // 4, bad)
open(sys.argv[4], "w").write("%d\n" % write(sys.argv[3], ev, bad))
EOF
set -- $NOW -w "$tmp/win.json"

# parts ERR: the parts -v's line says the CPU events were copied in
parts() { sed -n 's/.*copy: the CPU trace.s events in \([0-9]*\) parts on .*/\1/p' "$1"; }
# ins ERR: the batches inserted, by ERR's -v line
ins() { sed -n "s/.*; batches inserted: \([0-9]*\), encoded by.*/\1/p" "$1"; }

tcase "the parts encoded: -v says the parts ran (spanning more marks than as text) and their batches went in"
$CUPTIMERGE -q "$@" -o "$tmp/m.json" "$tmp/cpu.json" || fail "JSON: exit $?"
$CUPTIMERGE -v -j 2 "$@" -o "$tmp/v.pftrace" "$tmp/cpu.json" 2>"$tmp/err" || fail "exit $?: $(cat "$tmp/err")"
CUPTIMERGE_PFT_PARTS=0 $CUPTIMERGE -v -j 2 "$@" -o "$tmp/t.pftrace" "$tmp/cpu.json" 2>"$tmp/errt" ||
	fail "as text: exit $?: $(cat "$tmp/errt")"
n=$(parts "$tmp/err")
nt=$(parts "$tmp/errt")
# (encoded, a part spans up to 4 marks: a batch about the text's size)
[ -n "$n" ] && [ -n "$nt" ] && [ "$n" -ge 20 ] && [ "$nt" -gt "$n" ] ||
	fail "parts: ${n:-?} encoded, ${nt:-?} as text: $(grep copy: "$tmp/err")"
i=$(ins "$tmp/err")
it=$(ins "$tmp/errt")
[ -n "$i" ] && [ -n "$it" ] && [ $((i - it)) -ge $((n / 2)) ] ||
	fail "${i:-?} batches inserted, ${it:-?} with the parts as text, for $n parts"
cmp -s "$tmp/v.pftrace" "$tmp/t.pftrace" && fail "the parts as text: the same bytes"

# -v's line by phase: the parts' batches a phase of their own ("the CPU
# trace's parts"), between the text before and the window's inserted
# batches, which are the window's alone: as many as with the parts as
# text, the two the first line's batches inserted; the text between the
# parts' runs and after them (the long event) the text before's, so the
# text after is what it is with the parts as text; the parts as text
# (CUPTIMERGE_PFT_PARTS=0), the three phases alone.  At -j 1 and 2
# straight to the sequential part, and through the pool at -j 3.
# ph ERR NAME: the batches of phase NAME by ERR's line by phase
ph() { sed -n "s/.*perfetto by phase .*[:;] $2: [^;]*; \([0-9]*\) batches[ ,].*/\1/p" "$1"; }
tcase "-v by phase: the CPU trace's parts a phase of their own, the inserted batches the window's alone, -j 1 to 3, through the pool"
for how in 1 2 direct0; do
	j=$how e=
	[ "$how" = direct0 ] && j=3 e=CUPTIMERGE_PFT_DIRECT=0
	# shellcheck disable=SC2086
	env $e $CUPTIMERGE -v -j $j "$@" -o "$tmp/v.pftrace" "$tmp/cpu.json" 2>"$tmp/err" || fail "$how: exit $?"
	# shellcheck disable=SC2086
	env $e CUPTIMERGE_PFT_PARTS=0 $CUPTIMERGE -v -j $j "$@" -o "$tmp/t.pftrace" "$tmp/cpu.json" 2>"$tmp/errt" ||
		fail "$how, as text: exit $?"
	grep -q "perfetto by phase (s from the first text): the text before the inserted batches: [^;]*;.*; the CPU trace's parts: the writer's thread [0-9.]*-[0-9.]*, .*; the inserted batches: .*; the text after: " "$tmp/err" ||
		fail "$how: the line by phase says: $(grep "by phase" "$tmp/err")"
	grep -q "perfetto by phase (s from the first text): the text before the inserted batches: .*; the inserted batches: .*; the text after: " "$tmp/errt" &&
		! grep -q "the CPU trace's parts" "$tmp/errt" || fail "$how, as text: the line by phase says: $(grep "by phase" "$tmp/errt")"
	np=$(ph "$tmp/err" "the CPU trace's parts")
	nw=$(ph "$tmp/err" "the inserted batches")
	nwt=$(ph "$tmp/errt" "the inserted batches")
	na=$(ph "$tmp/err" "the text after")
	nat=$(ph "$tmp/errt" "the text after")
	n=$(parts "$tmp/err")
	i=$(ins "$tmp/err")
	[ -n "$np" ] && [ -n "$n" ] && [ "$np" -gt 0 ] && [ "$np" -le "$n" ] ||
		fail "$how: the parts' phase has ${np:-no} batches for ${n:-?} parts: $(grep "by phase" "$tmp/err")"
	[ -n "$nw" ] && [ -n "$nwt" ] && [ "$nwt" -gt 0 ] && [ "$nw" -eq "$nwt" ] ||
		fail "$how: the inserted phase has ${nw:-no} batches, ${nwt:-no} with the parts as text: $(grep "by phase" "$tmp/err")"
	[ -n "$i" ] && [ $((np + nw)) -eq "$i" ] || fail "$how: $np and $nw batches by phase, ${i:-?} inserted"
	# (the first line says how many of the inserted were the parts'; not as text)
	ip=$(sed -n "s/.*; batches inserted: [0-9]*, .*; of them \([0-9]*\) the CPU trace's parts, encoded on the copy's threads$/\1/p" "$tmp/err")
	[ "$ip" = "$np" ] && ! grep -q "the CPU trace's parts, encoded" "$tmp/errt" ||
		fail "$how: the first line says ${ip:-no} of the batches inserted were the parts', the phase $np: $(grep "perfetto: " "$tmp/err")"
	[ -n "$na" ] && [ "$na" = "$nat" ] ||
		fail "$how: the text after in ${na:-?} batches, ${nat:-?} with the parts as text: $(grep "by phase" "$tmp/err")"
done

tcase "the same bytes at -j 1 to 4 and 16, read sizes 7 and 4096, the careful reader, through the pool"
$CUPTIMERGE -q -j 1 "$@" -o "$tmp/p1.pftrace" "$tmp/cpu.json" || fail "-j 1: exit $?"
cmp -s "$tmp/p1.pftrace" "$tmp/v.pftrace" || fail "-j 1 and -j 2: other bytes"
for how in "-j 3" "-j 4" "-j 16" "--buffer-size 7" "--buffer-size 4096" careful direct0; do
	case $how in
	careful) CUPTIMERGE_CAREFUL=1 $CUPTIMERGE -q -j 3 "$@" -o "$tmp/h.pftrace" "$tmp/cpu.json" || fail "$how: exit $?" ;;
	direct0) CUPTIMERGE_PFT_DIRECT=0 $CUPTIMERGE -q -j 3 "$@" -o "$tmp/h.pftrace" "$tmp/cpu.json" || fail "$how: exit $?" ;;
	# shellcheck disable=SC2086
	*) $CUPTIMERGE -q $how "$@" -o "$tmp/h.pftrace" "$tmp/cpu.json" || fail "$how: exit $?" ;;
	esac
	cmp -s "$tmp/h.pftrace" "$tmp/p1.pftrace" || fail "$how: other bytes than -j 1"
done
$CUPTIMERGE -q -j 16 "$@" -o "$tmp/p16.pftrace" "$tmp/cpu.json" || fail "-j 16: exit $?"
CUPTIMERGE_PFT_PARTS=0 $CUPTIMERGE -q -j 16 "$@" -o "$tmp/t16.pftrace" "$tmp/cpu.json" || fail "as text, -j 16: exit $?"
protoc --decode=perfetto.protos.Trace -I"$(dirname "$proto")" "$proto" <"$tmp/p1.pftrace" >/dev/null \
	2>"$tmp/protoc.err" || fail "protoc: $(head -3 "$tmp/protoc.err")"

# pair NAME JSON A B: Perfetto shows the same for A (the parts encoded)
# and B (as text), each thread's slices on the same lanes
pair() {
	if [ $have_tp -eq 0 ]; then
		skip "$1: Perfetto shows the same as for the parts as text" "no node or trace-processor engine in $TP_DIR"
		return
	fi
	tcase "$1: Perfetto shows the same as for the parts as text, the same lanes"
	cached python3 "$srcdir/tests/pftrace_check.py" --pair "$2" "$3" "$4" >"$tmp/check" 2>&1 ||
		fail "$1: $(head -12 "$tmp/check")"
}
same "the parts encoded, -j 1" "$tmp/m.json" "$tmp/p1.pftrace"
pair "-j 1" "$tmp/m.json" "$tmp/p1.pftrace" "$tmp/t.pftrace"
pair "-j 16" "$tmp/m.json" "$tmp/p16.pftrace" "$tmp/t16.pftrace"

# a cut: its parts decide their events (cm_cpucut_part_keep)
lo=$(python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
print(min(e["ts"] for e in ev if e.get("ph") == "X" and e.get("cat") != "Trace") + 20000)' "$tmp/g.cpu")
hi=$(python3 -c 'import sys; print(float(sys.argv[1]) + 60000)' "$lo")
for cut in "--range=$lo,$hi" "--steps=3-5"; do
	name=${cut%%=*}
	tcase "$name: the same bytes at -j 1 and 16, the parts ran"
	$CUPTIMERGE -q $cut "$@" -o "$tmp/c.json" "$tmp/cpu.json" || fail "$name: JSON: exit $?"
	$CUPTIMERGE -v -j 1 $cut "$@" -o "$tmp/c1.pftrace" "$tmp/cpu.json" 2>"$tmp/err" || fail "$name: exit $?"
	$CUPTIMERGE -q -j 16 $cut "$@" -o "$tmp/c16.pftrace" "$tmp/cpu.json" || fail "$name, -j 16: exit $?"
	CUPTIMERGE_PFT_PARTS=0 $CUPTIMERGE -q -j 3 $cut "$@" -o "$tmp/ct.pftrace" "$tmp/cpu.json" ||
		fail "$name, as text: exit $?"
	cmp -s "$tmp/c1.pftrace" "$tmp/c16.pftrace" || fail "$name: -j 1 and -j 16: other bytes"
	n=$(parts "$tmp/err")
	[ -n "$n" ] && [ "$n" -gt 0 ] || fail "$name: -v says: $(grep copy: "$tmp/err")"
	same "$name" "$tmp/c.json" "$tmp/c1.pftrace"
	pair "$name" "$tmp/c.json" "$tmp/c1.pftrace" "$tmp/ct.pftrace"
done

# The refusal: one line, status 1, the event's offset in the CPU trace,
# no file, at -j 1 to 16 (a few runs: the threads' timing varies)
off=$(cat "$tmp/bad.off")
tcase "a CPU event that cannot be written, in a part: one line, status 1, CPUFILE:OFFSET, no file, -j 1 to 16"
for j in 1 2 3 16; do
	for i in 1 2 3; do
		rm -f "$tmp/bad.pftrace"
		rc=0
		timeout 300 $CUPTIMERGE -q -j $j "$@" -o "$tmp/bad.pftrace" "$tmp/bad.cpu" 2>"$tmp/err" || rc=$?
		if [ $rc -ne 1 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] ||
			! grep -q "^cuptimerge: $tmp/bad.cpu:$off: a \"b\" event cannot be written as Perfetto protobuf" "$tmp/err"; then
			fail "-j $j, run $i: exit $rc: $(cat "$tmp/err") (the event at $off)"
			break 2
		fi
		[ ! -e "$tmp/bad.pftrace" ] || fail "-j $j, run $i: the file appeared"
	done
done
finish
