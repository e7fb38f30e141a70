# Mutant "shortread", for src/io/inputraw.c (inputraw_read): a byte is lost
# only when reading in small chunks.  With a read size under 32 bytes
# (--buffer-size, CUPTIMERGE_BUFSIZE), the read that starts within
# [64, 64 + size) of a pass drops its last byte (never its only one, which
# would look like the end of the file).  Plain or gzip, file or pipe: the
# text that reaches the parser lacks one byte.  Every script that merges with
# tiny reads must notice.
s/^\([[:space:]]*\)\(in->raw_done += (uint64_t)n;\)$/\1n -= want < 32 \&\& n > 1 \&\& in->raw_done >= 64 \&\& in->raw_done < 64 + want; \2/
