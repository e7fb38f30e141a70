# Mutant "kcorr", for src/gpu/gpurender.c: a value wrong in both the text
# and the members.  The "correlation" argument of every kernel, memcpy and
# memset row is one too high, written by gpu_arg_int, which notes the same
# value among the members the .pftrace's encoder takes: the JSON and the
# .pftrace agree with each other (pfmembers.sh and pftmerge.sh, which compare
# the program with itself, let it through) and both are wrong.  The golden
# files must notice: golden.sh's JSON, pfgolden.sh's .pftrace.
s/^\([[:space:]]*gpu_arg_int(A, "correlation", \)v\[CM_RG_CORR\]);$/\1v[CM_RG_CORR] + 1);/
