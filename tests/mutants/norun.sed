# Mutant "norun", for src/pftrace/pflanes.c: a thread's lanes forget by the
# latest begin of all its slices, never by its run's: a slice more than a
# window behind no longer begins a new run.  A CPU thread's runtime calls,
# which come from the window after the CPU trace's slices of the thread,
# are then forgotten at each rebuild, as before lanes25, and one that
# overlaps a call placed before a rebuild shares its track
# (tests/e2e/pflanes.sh must notice).
s/^\([[:space:]]*if (b > t->latest\) || (uint64_t)t->latest - (uint64_t)b > (uint64_t)l->window)$/\1)/
