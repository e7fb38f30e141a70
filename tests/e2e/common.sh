# common.sh - sourced by every end-to-end test: strict shell, a scratch
# directory removed on exit, the binary under test, the fixtures, and TAP
# output for automake's tap-driver.sh.
#
# A script is a list of cases.  `tcase NAME` starts one; `fail MESSAGE` marks
# it failed (MESSAGE goes out as a "# " diagnostic) and the script goes on; the
# case is reported as "ok N - NAME" or "not ok N - NAME" when the next one
# starts or at `finish`, which prints the plan "1..N" and exits 1 when a case
# failed.  The plan comes last, so a script that dies half-way (set -e) has
# none, and tap-driver.sh reports that as an error.  Keep every state change in
# the script's own shell: the body of `cmd | while ...` runs in a subshell and
# would lose it (F2); read a file on a spare descriptor instead.
set -eu
LC_ALL=C
export LC_ALL
srcdir=${srcdir:-.}
CUPTIMERGE=${CUPTIMERGE:-./src/cuptimerge}
FIX=$srcdir/tests/fixtures
JSONCMP="python3 $srcdir/tests/jsoncmp.py"
# e2e_python ARGS...: python3 with tests/e2e/ on its path, for the scripts'
# Python that imports ranks.py; no bytecode written (distcheck's source tree
# is read-only, and an in-tree run would leave it behind)
e2e_python() {
	PYTHONPATH="$srcdir/tests/e2e" PYTHONDONTWRITEBYTECODE=1 python3 "$@"
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuptimerge-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ntests=0
failures=0
case_name=
case_failed=0

# diag TEXT...: TEXT as TAP diagnostics, "# " before each line.
diag() {
	printf '%s\n' "$*" | sed 's/^/# /'
}

# ok NAME / not_ok NAME: report the next case.
ok() {
	ntests=$((ntests + 1))
	echo "ok $ntests - $*"
}
not_ok() {
	ntests=$((ntests + 1))
	failures=$((failures + 1))
	echo "not ok $ntests - $*"
}

# skip NAME WHY: the next case did not run (reports the open case first).
skip() {
	case_end
	ntests=$((ntests + 1))
	echo "ok $ntests - $1 # SKIP $2"
}

# skip_all WHY: the whole script cannot run here (a tool is missing).  Under
# tap-driver.sh this is the plan "1..0 # SKIP"; exit 77 would be an error there.
skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

# need COMMAND WHY: skip the whole script when COMMAND is missing.
need() {
	command -v "$1" >/dev/null 2>&1 || skip_all "$1 is needed $2"
}

# case_end: report the open case, if any.
case_end() {
	if [ -n "$case_name" ]; then
		if [ "$case_failed" -eq 0 ]; then
			ok "$case_name"
		else
			not_ok "$case_name"
		fi
	fi
	case_name=
	case_failed=0
}

# tcase NAME: start the next case (reporting the one before).
tcase() {
	case_end
	case_name=$*
}

# fail MESSAGE: the open case fails (or, outside a case, one more failed case).
fail() {
	diag "FAIL: $*"
	if [ -n "$case_name" ]; then
		case_failed=1
	else
		not_ok "$*"
	fi
}

# capture CMD...: run CMD with its stdout in $tmp/out and its stderr in
# $tmp/err; its exit status in $got (set -e does not stop the script).
capture() {
	set +e
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	set -e
}

# expect_exit STATUS PATTERN CMD...: CMD exits STATUS and says so in one line
# on stderr matching PATTERN (a grep -E expression, or a fixed string after
# "="), or in two where STATUS is 2 (a usage error's "Try ... --help" line);
# an empty PATTERN wants stderr empty.  Failures go to the open case.
expect_exit() {
	ee_want=$1 ee_pat=$2
	shift 2
	capture "$@"
	[ "$got" -eq "$ee_want" ] || fail "$*: exit $got, wanted $ee_want ($(head -c 300 "$tmp/err"))"
	ee_lines=$(wc -l <"$tmp/err")
	case $ee_pat in
	'') [ ! -s "$tmp/err" ] || fail "$*: a message: $(cat "$tmp/err")" ;;
	=*) grep -qF -- "${ee_pat#=}" "$tmp/err" || fail "$*: message '$(cat "$tmp/err")' lacks '${ee_pat#=}'" ;;
	*) grep -Eq -- "$ee_pat" "$tmp/err" || fail "$*: message '$(cat "$tmp/err")' does not match '$ee_pat'" ;;
	esac
	[ "$ee_lines" -le 1 ] || { [ "$ee_want" -eq 2 ] && [ "$ee_lines" -eq 2 ]; } ||
		fail "$*: stderr is not one line: $(cat "$tmp/err")"
}

# sample WORD...: the WORDs of a loop that sweeps a parameter (read sizes,
# say), one a line: all of them by default; where CUPTIMERGE_TEST_SAMPLE
# is a number N of 2 or more, the first, the last and every Nth between.
# .ci/run sets it for the suites that run the same code again (distcheck's
# check of the tarball, the sanitizer build's), after the first make
# check ran every word; each case still runs, on fewer values.
sample() {
	sa_n=${CUPTIMERGE_TEST_SAMPLE:-1}
	case $sa_n in '' | *[!0-9]*) sa_n=1 ;; esac
	sa_i=0
	for sa_w in "$@"; do
		sa_i=$((sa_i + 1))
		if [ "$sa_n" -le 1 ] || [ $sa_i -eq 1 ] || [ $sa_i -eq $# ] || [ $((sa_i % sa_n)) -eq 0 ]; then
			echo "$sa_w"
		fi
	done
}

# cached CMD ARGS...: run CMD ARGS, a check that is a pure function of its
# words and of the files they name (Perfetto's trace processor through
# tp.mjs or tests/pftrace_check.py, which take seconds a run), with its
# stdout and status.  Where CUPTIMERGE_TEST_CACHE names a folder, a run
# that exits 0 leaves its stdout there, under the sha256 of the words, of
# the contents of every word that is a file, and of the tools' own files
# ($TPJS, the engine in $TP_DIR, node's and python3's versions); a later
# call with the same key prints what was kept instead of running.  In a
# file's contents the scratch folder's name, $tmp, counts as one word
# (@tmp@): an output names itself ("traceName"), and mktemp names the
# folder anew in each run, always as long.  .ci/run sets it so
# that the sanitizer builds' suites, whose outputs are byte for byte the
# first make check's, do not run the same check on the same bytes again;
# other bytes (a bug of one build only) are another key, and the check
# runs.  Only a pass is kept: a failure runs again every time.  Unset (as
# `make check` leaves it), every check runs.
cached() {
	if [ -z "${CUPTIMERGE_TEST_CACHE-}" ]; then
		"$@"
		return
	fi
	if [ -z "${cached_tools-}" ]; then
		cached_tools=$(
			for ca_f in "${TPJS-}" "${TP_DIR-}/trace_processor.wasm"; do
				[ -f "$ca_f" ] && sha256sum <"$ca_f"
			done
			node --version 2>/dev/null
			python3 --version 2>&1
		) || :
		cached_tools=$(printf '%s\n' "$cached_tools" | sha256sum | cut -c1-64)
	fi
	ca_key=$(
		{
			echo "$cached_tools"
			for ca_a in "$@"; do
				if [ -f "$ca_a" ]; then
					echo "file $(sed "s|$tmp|@tmp@|g" "$ca_a" | sha256sum | cut -c1-64)"
				else
					echo "word $ca_a"
				fi
			done
		} | sha256sum | cut -c1-64
	)
	ca_kept=$CUPTIMERGE_TEST_CACHE/$ca_key
	if [ -f "$ca_kept" ]; then
		cat "$ca_kept"
		return 0
	fi
	ca_rc=0
	"$@" >"$tmp/cached.out" || ca_rc=$?
	if [ $ca_rc -eq 0 ] && mkdir -p "$CUPTIMERGE_TEST_CACHE" &&
		cp "$tmp/cached.out" "$ca_kept.$$"; then
		mv -f "$ca_kept.$$" "$ca_kept" # whole or not at all: suites run at once
	fi
	cat "$tmp/cached.out"
	return $ca_rc
}

# golden_read_sizes WHAT ENV PATTERN...: each case of cases.txt (one
# tcase "NAME: WHAT" each) merged with -v at read sizes 1, 2, 3, 7, 31 and
# the default (the default alone for a CPU trace of 20000 bytes or more),
# under the environment ENV (VAR=VALUE words, or ''); each run exits 0,
# writes the case's expected trace (jsoncmp) and says every PATTERN (a
# fixed string) on stderr, which is how the engine's readers tell which of
# them ran.  Then a case that fails when cases.txt had no case.
golden_read_sizes() {
	gr_what=$1 gr_env=$2
	shift 2
	gr_rows=0
	while read -r name cpu win exp opts <&3; do
		case $name in '' | '#'*) continue ;; esac
		gr_rows=$((gr_rows + 1))
		tcase "$name: $gr_what"
		if [ "$(wc -c <"$FIX/$cpu")" -ge 20000 ]; then
			gr_sizes=default
		else
			gr_sizes="1 2 3 7 31 default"
		fi
		for bs in $gr_sizes; do
			gr_bs="--buffer-size $bs"
			[ "$bs" = default ] && gr_bs=
			rc=0
			# shellcheck disable=SC2086 # gr_env, gr_bs and opts are word lists
			env $gr_env $CUPTIMERGE $gr_bs -v $opts -w "$FIX/$win" "$FIX/$cpu" >"$tmp/out.json" \
				2>"$tmp/err" || rc=$?
			if [ $rc -ne 0 ]; then
				fail "$name: read size $bs: exit $rc: $(cat "$tmp/err")"
				continue
			fi
			for gr_pat in "$@"; do
				grep -qF -- "$gr_pat" "$tmp/err" ||
					fail "$name: read size $bs: no '$gr_pat' in -v's lines: $(grep '^cuptimerge: ' "$tmp/err")"
			done
			$JSONCMP "$FIX/$exp" "$tmp/out.json" || fail "$name: read size $bs: differs from $exp"
		done
	done 3<"$FIX/cases.txt"
	tcase "cases.txt was read"
	[ $gr_rows -gt 0 ] || fail "no cases read from $FIX/cases.txt"
}

# finish: report the last case, print the plan, exit 1 when a case failed (so
# that a script run by hand, or by mutants.sh, fails too).
finish() {
	case_end
	echo "1..$ntests"
	if [ "$failures" -ne 0 ]; then
		diag "$failures of $ntests failed"
		exit 1
	fi
	exit 0
}
