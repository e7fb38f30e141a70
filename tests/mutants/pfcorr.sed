# Mutant "pfcorr", for src/gpu/gpurender.c: a value only the .pftrace gets
# is wrong.  The members tree (gpu/gpumembers.h) that the render hands the
# .pftrace's encoder with each CUDA runtime/driver row keeps a "correlation"
# one too high, while the row's JSON text keeps the right one: the JSON
# output is the real program's, byte for byte; the .pftrace's debug
# annotation is not, but for CUPTIMERGE_PFT_REPARSE=1 (each element parsed
# from its text: the real bytes again).  Every script that checks the
# .pftrace's values must notice.
s/^\([[:space:]]*gpu_members_int(m, "correlation", 11, b, at, \)corr);$/\1corr + 1);/
