#!/bin/sh
# gzipinput.sh - a damaged gzip input is reported as damaged gzip, never as
# the invalid JSON its garbage makes, and error offsets in gzip input are
# offsets in the decompressed text, as cuptimerge(1) DIAGNOSTICS says, with
# the compressed byte named in the message (issue 28 P10).  The damaged
# files are made here from the fixtures with Python's zlib: stored (level 0)
# deflate blocks, so a changed text byte leaves a valid deflate stream whose
# CRC no longer matches, as a bit flip on disk does.
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

finish
