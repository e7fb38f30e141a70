#!/bin/sh
# mutate.sh SOURCE SEDSCRIPT OUTPUT - write OUTPUT: SOURCE with the one-line
# mutation SEDSCRIPT makes.  Fails when the script changes no line or more than
# one, so a mutation that no longer applies to the source (the line was edited)
# stops the build instead of quietly building an unmutated program.
set -eu
src=$1 script=$2 out=$3
sed -f "$script" "$src" >"$out.tmp"
changed=$(diff "$src" "$out.tmp" | grep -c '^>' || true)
if [ "$changed" -ne 1 ]; then
	echo "$0: $script changes $changed lines of $src, not 1: update the mutation" >&2
	rm -f "$out.tmp"
	exit 1
fi
mv "$out.tmp" "$out"
