#!/bin/sh
# gzipinput.sh - a damaged gzip input is reported as damaged gzip, never as
# the invalid JSON its garbage makes, and error offsets in gzip input are
# offsets in the decompressed text, as cuptimerge(1) DIAGNOSTICS says, with
# the compressed byte named in the message (issue 28 P10).  The damaged
# files are made here from the fixtures with Python's zlib: stored (level 0)
# deflate blocks, so a changed text byte leaves a valid deflate stream whose
# CRC no longer matches, as a bit flip on disk does.  To find the damage
# after invalid JSON, the member that text came from is read to its end, and
# nothing after it: what follows may never end.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to make damaged gzip files"
need gzip "to check the damaged files"

W=$FIX/window.json
C=$FIX/cpu.json
TEXT=$(wc -c <"$C")

# gz_stored IN OUT [AT BYTE]: OUT is IN gzip'ed in stored blocks; with AT,
# the text byte at AT is replaced by BYTE after the CRC was computed.
gz_stored() {
	python3 - "$@" <<'EOF'
import sys, zlib
src, out = sys.argv[1], sys.argv[2]
data = open(src, 'rb').read()
c = zlib.compressobj(0, zlib.DEFLATED, 31)
gz = bytearray(c.compress(data) + c.flush())
if len(sys.argv) > 3:
    at, byte = int(sys.argv[3]), sys.argv[4].encode()
    i = gz.find(data[:64])          # the stored text starts here
    assert i > 0 and gz[i + at] != byte[0]
    gz[i + at] = byte[0]
open(out, 'wb').write(gz)
EOF
}

# expect NAME PATTERN CMD...: the case NAME: expect_exit 1 PATTERN CMD
# (common.sh).
expect() {
	tcase "$1"
	shift
	expect_exit 1 "$@"
}

# a "#" between a key and its colon: "invalid char", and a CRC error
gz_stored "$C" "$tmp/crc.gz" 100 "#"
tcase "the damaged file fails gzip -t"
! gzip -t "$tmp/crc.gz" 2>/dev/null || fail "gzip -t accepts the damaged file"
for bs in 1 7 64 4096 1048576; do
	expect "CRC error, not invalid JSON, reading in $bs-byte chunks" \
		"^cuptimerge: $tmp/crc.gz:$TEXT: invalid gzip data at compressed byte [0-9]+: CRC error \(incorrect data check\)\$" \
		env CUPTIMERGE_BUFSIZE=$bs $CUPTIMERGE -w "$W" "$tmp/crc.gz"
done
expect "CRC error read from a pipe" "^cuptimerge: <stdin>:$TEXT: invalid gzip data at compressed byte [0-9]+: CRC error" \
	sh -c 'CUPTIMERGE_BUFSIZE=16 "$1" -w "$2" <"$3"' sh "$CUPTIMERGE" "$W" "$tmp/crc.gz"
gz_stored "$W" "$tmp/wcrc.gz" 1 "#"
expect "a damaged window: CRC error, not invalid JSON" \
	"^cuptimerge: $tmp/wcrc.gz:$(wc -c <"$W"): invalid gzip data at compressed byte [0-9]+: CRC error" \
	env CUPTIMERGE_BUFSIZE=64 $CUPTIMERGE -w "$tmp/wcrc.gz" "$C"
# ...while invalid JSON in a sound gzip stream is still invalid JSON
sed 's/"traceEvents"/"traceEvents" #/' "$C" >"$tmp/bad.json"
gz_stored "$tmp/bad.json" "$tmp/bad.gz"
expect "invalid JSON in a sound gzip stream" "^cuptimerge: $tmp/bad.gz:[0-9]+: invalid JSON" \
	env CUPTIMERGE_BUFSIZE=64 $CUPTIMERGE -w "$W" "$tmp/bad.gz"

# offsets: in the decompressed text, the compressed byte in the message
gzip -c "$C" >"$tmp/c.gz"
head -c 300 "$tmp/c.gz" >"$tmp/ctrunc.gz"
got=$(python3 -c 'import sys, zlib; print(len(zlib.decompressobj(31).decompress(open(sys.argv[1], "rb").read())))' "$tmp/ctrunc.gz")
expect "truncated gzip: the offset of the text read" \
	"^cuptimerge: $tmp/ctrunc.gz:$got: truncated gzip data \(the file ends inside a gzip member, at compressed byte 300\)\$" \
	$CUPTIMERGE -w "$W" "$tmp/ctrunc.gz"
{ cat "$tmp/c.gz"; printf 'junk'; } >"$tmp/cjunk.gz"
expect "trailing garbage: the offset of the text's end" \
	"^cuptimerge: $tmp/cjunk.gz:$TEXT: trailing garbage after the gzip data \(at compressed byte $(wc -c <"$tmp/c.gz")\)\$" \
	$CUPTIMERGE -w "$W" "$tmp/cjunk.gz"

# Reading on after a JSON error only to the end of the member the error lies
# in (cm_input_check_gzip): what follows that member is not read, so an
# endless stream after it (a gzip of `yes`, a pipe whose writer never
# closes) no longer keeps the run going, and trailing garbage or a damaged
# member after it is not blamed for the text's own error.  The timeouts are
# guards, not timed assertions: a run they end has read past the member.
need timeout "to stop a run that reads an endless pipe"
head -c 1000 "$tmp/bad.json" | gzip -c >"$tmp/m1.gz" # the "#" of bad.json is at byte 321
tail -c +1001 "$tmp/bad.json" | gzip -c >"$tmp/m2.gz"
cat "$tmp/m1.gz" "$tmp/m2.gz" >"$tmp/bad2.gz"
gzip -t "$tmp/bad2.gz" || fail "the two members of bad2.gz fail gzip -t"

# guarded NAME PATTERN CMD...: as expect, CMD under a timeout of 20 s, which
# would mean it read on past the member.
guarded() {
	gd_name=$1 gd_pat=$2
	shift 2
	tcase "$gd_name"
	expect_exit 1 "$gd_pat" timeout 20 "$@"
	[ "$got" -ne 124 ] || fail "$gd_name: still reading after 20 s"
}

json_err="^cuptimerge: <stdin>:[0-9]+: invalid JSON: invalid char in json text\$"
crc_err="^cuptimerge: <stdin>:$TEXT: invalid gzip data at compressed byte [0-9]+: CRC error \(incorrect data check\)\$"
for bs in 7 default; do
	bsopt="--buffer-size $bs"
	[ $bs = default ] && bsopt=
	# an endless gzip member after the one with the error
	guarded "a JSON error in member 1, then an endless gzip member on a pipe: the JSON error (read size $bs)" \
		"$json_err" sh -c '{ cat "$1"; yes | gzip -1; } 2>/dev/null | "$2" $3 -w "$4" -' \
		sh "$tmp/bad2.gz" "$CUPTIMERGE" "$bsopt" "$W"
	# a damaged member is still reported as damage, whatever follows it
	guarded "a damaged member 1, then an endless gzip member on a pipe: the CRC error (read size $bs)" \
		"$crc_err" sh -c '{ cat "$1"; yes | gzip -1; } 2>/dev/null | "$2" $3 -w "$4" -' \
		sh "$tmp/crc.gz" "$CUPTIMERGE" "$bsopt" "$W"
	# a writer that never closes the pipe: a read past the member would wait
	# for it forever
	for f in bad2 crc; do
		rm -f "$tmp/fifo"
		mkfifo "$tmp/fifo"
		sh -c 'cat "$1" && exec sleep 1000' sh "$tmp/$f.gz" >"$tmp/fifo" &
		writer=$!
		pat=$json_err
		[ $f = crc ] && pat=$crc_err
		# shellcheck disable=SC2086 # bsopt is a word list
		guarded "$f.gz from a pipe its writer keeps open: no read past the member (read size $bs)" \
			"$pat" $CUPTIMERGE $bsopt -w "$W" - <"$tmp/fifo"
		kill "$writer" 2>/dev/null || :
		wait "$writer" 2>/dev/null || :
	done
done

# The same from a regular file, read ahead on threads of the inputs' own (as
# golden.sh does) or not, with rings of 2 and 8 chunks: the thread reads on
# past the member into what follows and meets its errors; those are not the
# member's.  bad2j.gz: JSON error in member 1, trailing garbage after member
# 2; bad1j.gz: right after member 1 (the thread's error comes next in its
# ring); bad2c.gz: member 2 damaged.  crc2.gz: a damaged member 1, then bad2j.
{ cat "$tmp/bad2.gz"; printf 'junk'; } >"$tmp/bad2j.gz"
{ cat "$tmp/m1.gz"; printf 'junk'; } >"$tmp/bad1j.gz"
gz_stored "$C" "$tmp/c2crc.gz" 100 "#"
cat "$tmp/m1.gz" "$tmp/c2crc.gz" >"$tmp/bad2c.gz"
cat "$tmp/crc.gz" "$tmp/bad2j.gz" >"$tmp/crc2.gz"
for ra in 0 1; do
	for slots in 2 8; do
		[ $ra = 0 ] && [ $slots = 8 ] && continue
		for bs in 1 7 31 4096; do
			how="read size $bs, read-ahead $ra, $slots slots"
			for f in bad2j bad1j bad2c; do
				expect "$f.gz: the JSON error of member 1, not what follows it ($how)" \
					"^cuptimerge: $tmp/$f.gz:[0-9]+: invalid JSON: invalid char in json text\$" \
					env CUPTIMERGE_READAHEAD=$ra CUPTIMERGE_READAHEAD_SLOTS=$slots \
					$CUPTIMERGE --buffer-size $bs -w "$W" "$tmp/$f.gz"
			done
			expect "crc2.gz: the CRC error of member 1 ($how)" \
				"^cuptimerge: $tmp/crc2.gz:$TEXT: invalid gzip data at compressed byte [0-9]+: CRC error" \
				env CUPTIMERGE_READAHEAD=$ra CUPTIMERGE_READAHEAD_SLOTS=$slots \
				$CUPTIMERGE --buffer-size $bs -w "$W" "$tmp/crc2.gz"
		done
	done
done

# ...and the thread's chunks taken only to the member's end: after member 1,
# a member of 100 MB of zeros read a byte a chunk would take minutes.
head -c 100000000 /dev/zero | gzip -1 >"$tmp/zeros.gz"
cat "$tmp/m1.gz" "$tmp/zeros.gz" >"$tmp/bad1z.gz"
guarded "a JSON error in member 1, then 100 MB more: the chunks read ahead are not all taken" \
	"^cuptimerge: $tmp/bad1z.gz:[0-9]+: invalid JSON: invalid char in json text\$" \
	env CUPTIMERGE_READAHEAD=1 $CUPTIMERGE --buffer-size 1 -w "$W" "$tmp/bad1z.gz"

finish
