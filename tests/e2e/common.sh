# common.sh - sourced by every end-to-end test: strict shell, a scratch
# directory removed on exit, the binary under test and the fixtures.
set -eu
LC_ALL=C
export LC_ALL
srcdir=${srcdir:-.}
CUPTIMERGE=${CUPTIMERGE:-./src/cuptimerge}
FIX=$srcdir/tests/fixtures
JSONCMP="python3 $srcdir/tests/jsoncmp.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuptimerge-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0

# fail MESSAGE: note a failure and go on (the script exits 1 at the end).
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# finish: the exit status of the test script.
finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures failure(s)" >&2
		exit 1
	fi
	exit 0
}

command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed to compare JSON"; exit 77; }
