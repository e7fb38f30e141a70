/* outname.h - the names and attributes of the file that -o writes: a
 * symbolic link followed, the temporary name, replaceability, the old file's
 * owner and mode, and the linkat(2) that names an unnamed file. */
#ifndef CM_OUTNAME_H
#define CM_OUTNAME_H

#include <sys/stat.h>

/* PATH with the symbolic links of its last component followed, as open(2)
 * follows them; malloc'd, or NULL with errno set (ELOOP after 40 links). */
char *cm_out_follow_links(const char *path);

/* A malloc'd "DIR/.BASE.cuptimerge-XXXXXX" for TARGET, BASE cut to fit in
 * NAME_MAX; NULL when memory ran out. */
char *cm_out_temp_name(const char *target);

/* Replace the trailing XXXXXX of NAME with letters that differ from call to
 * call and from process to process. */
void cm_out_fill_x(char *name);

/* The directory part of TARGET ("." when none, "/" for the root), malloc'd;
 * NULL when memory ran out. */
char *cm_out_dir_of(const char *target);

/* 0 when rename(2) may replace the regular file TARGET of status OLD; -1
 * after reporting (status 3, the file named SHOWN) when a sticky directory
 * forbids it (another user's file). */
int cm_out_check_replaceable(const char *target, const struct stat *old, const char *shown);

/* Give FD the owner, group and permission bits of the file of status O that
 * it will replace, where permitted (a group not kept loses its bits). */
void cm_out_keep_attrs(int fd, const struct stat *o);

/* 1 when cm_out_link(FD, 1, ...) can name the unnamed file FD in DIR (no
 * /proc needed), found without making a name; 0 otherwise. */
int cm_out_can_flink(int fd, const char *dir);

/* linkat(2) the unnamed file FD to NAME: by the descriptor itself when
 * FLINK, else through /proc/self/fd.  0, or -1 with errno set (EEXIST when
 * NAME exists: linkat never replaces). */
int cm_out_link(int fd, int flink, const char *name);

#endif
