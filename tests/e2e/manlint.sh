#!/bin/sh
# manlint.sh - every man page is clean under mandoc -T lint -W warning; one
# TAP case per page.
. "${srcdir:-.}/tests/e2e/common.sh"
need mandoc "to lint the man pages"
for page in "$srcdir"/man/*.[0-9]; do
	[ -f "$page" ] || continue
	tcase "mandoc -T lint: ${page##*/}"
	out=$(mandoc -T lint -W warning "$page" 2>&1) || true
	[ -z "$out" ] || fail "$out"
done
tcase "man pages found in $srcdir/man"
[ "$ntests" -gt 0 ] || fail "no man page in $srcdir/man"
finish
