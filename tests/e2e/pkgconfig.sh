#!/bin/sh
# pkgconfig.sh - the C API of libcuptirec links as libcuptirec(3) says
# (issue 28 P12): `make install` into a scratch DESTDIR, then a program is
# compiled with the build's compiler and flags and, for the library, with
# `pkg-config --cflags --libs cuptirec` alone, and run with no
# LD_LIBRARY_PATH: it must find the installed library (its constructor names
# the file it was loaded from in CUDA_INJECTION64_PATH) and call the API.
# The collector is built only where configure found CUPTI; elsewhere (CI has
# no CUDA) the script skips.
. "${srcdir:-.}/tests/e2e/common.sh"

[ -f .libs/libcuptirec.so ] ||
	skip_all "the collector is not built (configure found no CUPTI; see its summary)"
need pkg-config "to read the installed cuptirec.pc"

tcase "make install DESTDIR=... installs cuptirec.pc"
root=$tmp/root
# MAKEFLAGS emptied: under make -j check it names the jobserver's descriptors,
# which the test harness reuses (3 is the log; docs.sh says more)
MAKEFLAGS= ${MAKE:-make} install DESTDIR="$root" >"$tmp/install.log" 2>&1 || fail "make install: $(tail -5 "$tmp/install.log")"
pc=$(find "$root" -name cuptirec.pc)
[ -n "$pc" ] || { fail "no cuptirec.pc under $root"; finish; }
# the installed paths, under DESTDIR: --define-variable moves the .pc's prefix
# there, and every path of it with it (libdir and includedir are relative to it)
prefix=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=prefix cuptirec)
PC="env PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix=$root$prefix"
lib=$($PC --variable=pkglibdir cuptirec)/libcuptirec.so
[ -f "$lib" ] || fail "pkglibdir from the .pc holds no libcuptirec.so ($lib)"
[ "$($PC --modversion cuptirec)" = "$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' config.h)" ] ||
	fail "--modversion is not the package's version"

tcase "a program built with pkg-config's flags finds and calls the installed library"
cat >"$tmp/app.c" <<'EOF'
#include <cuptirec.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	printf("loaded %s\nrecording %d\n", inj ? inj : "(unset)", cuptirec_recording());
	return 0;
}
EOF
# the build's compiler and flags: under --enable-sanitizers the program must
# bring the sanitizer runtime the library expects
mk() { sed -n "s/^$1 = //p" Makefile; }
# shellcheck disable=SC2046 # the flags are words
$(mk CC) $(mk CFLAGS) -o "$tmp/app" "$tmp/app.c" $($PC --cflags --libs cuptirec) $(mk LDFLAGS) 2>"$tmp/cc.log" ||
	fail "cc app.c \$(pkg-config --cflags --libs cuptirec): $(head -5 "$tmp/cc.log")"
if [ -x "$tmp/app" ]; then
	env -u LD_LIBRARY_PATH -u CUDA_INJECTION64_PATH CUPTIREC_AUTOSTART=0 CUPTIREC_QUIET=1 \
		"$tmp/app" >"$tmp/app.out" 2>"$tmp/app.err" || fail "app: exit $? ($(head -3 "$tmp/app.err"))"
	[ "$(sed -n 's/^loaded //p' "$tmp/app.out")" -ef "$lib" ] ||
		fail "the program loaded $(sed -n 's/^loaded //p' "$tmp/app.out"), not $lib"
	grep -qx "recording 0" "$tmp/app.out" || fail "cuptirec_recording: $(cat "$tmp/app.out")"
fi

finish
