# Mutant "nogone", for src/pftrace/pflanes.c: the lanes never ask the table
# of the slices kept for their ties (pflanetie.c), as before lanes27.  A
# runtime call that begins at the nanosecond of a shorter CPU operator of
# its thread, which the CPU trace placed long before, goes on the
# operator's track and is closed by the operator's end; so does a GPU span
# tied with a kernel of its stream (tests/e2e/pflanes.sh must notice).
s/^\([[:space:]]*if (lane == t->nlanes\) || !l->ntie || b >= t->gone || \(!cm_pflanes_tied(l, thread, b, e, lane))\)$/\1 || 1 || \2/
