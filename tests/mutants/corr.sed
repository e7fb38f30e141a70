# Mutant "corr", for src/gpu/gpurender.c: a value in the merged output is wrong.
# The "correlation" argument of every CUDA runtime/driver row is one too high
# (its flow event keeps the right id).  Every script that compares a merge with
# the reference must notice.
s/^\([[:space:]]*cm_jw_int(b, \)corr);$/\1corr + 1);/
