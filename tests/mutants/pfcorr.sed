# Mutant "pfcorr", for src/gpu/gpurender.c: a value only the .pftrace gets
# is wrong.  The members tree (gpu/gpumembers.h) that the render hands the
# .pftrace's encoder with each CUDA runtime/driver row keeps a "correlation"
# one too high where it keeps the value alone (the lean mode, the default:
# gpu_members_x's values), while the row's JSON text keeps the right one: the JSON
# output is the real program's, byte for byte; the .pftrace's debug
# annotation is not, but for CUPTIMERGE_PFT_REPARSE=1 (each element parsed
# from its text: the real bytes again).  Every script that checks the
# .pftrace's values must notice.
s/^\([[:space:]]*cm_int vals\[3\] = {r->v\[CM_RA_CBID\], \)corr, /\1corr + 1, /
