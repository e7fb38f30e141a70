# bench/devcommon.sh -- sourced by the bench/dev-*.sh scripts, which run on the 16-core GPU
# machine from the repo root: its binaries are in carry/bench (cuptimerge, lib, time: see
# bench/gpu-machine.sh), the 1 GB pair in $CPU and $WIN.  Sets C (that folder) and T (GNU time).
C=carry/bench
export LD_LIBRARY_PATH=$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
T=$C/time
[ -x /usr/bin/time ] && T=/usr/bin/time
: "${CPU:?the CPU trace}" "${WIN:?the window}"

# vrun LINES LABEL COMMAND...: COMMAND -v -w $WIN -o /dev/null $CPU under GNU time; prints
# LABEL, the -v lines named by LINES (an ERE alternation: "time|cut") and wall, user, sys, RSS.
vrun() {
	local lines=$1 label=$2
	shift 2
	echo "== $label"
	"$T" -f "%e s wall %U user %S sys %M KB" "$@" -v -w "$WIN" -o /dev/null "$CPU" 2>&1 |
		grep -E "^cuptimerge: ($lines):|wall"
}
