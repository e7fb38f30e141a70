#!/bin/sh
# manlint.sh - every man page is clean under mandoc -T lint -W warning.
set -eu
srcdir=${srcdir:-.}
command -v mandoc >/dev/null 2>&1 || { echo "SKIP: no mandoc"; exit 77; }
rc=0
for page in "$srcdir"/man/*.[0-9]; do
	out=$(mandoc -T lint -W warning "$page" 2>&1) || true
	if [ -n "$out" ]; then
		echo "$out"
		rc=1
	fi
done
exit $rc
