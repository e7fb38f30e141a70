/* utf8.h - well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF), the rule the JSON reader applies: for the names
 * the programs write into JSON (traceName) from a command line. */
#ifndef CM_UTF8_H
#define CM_UTF8_H

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at S (1 to 4 bytes; 1 for
 * ASCII), or 0 when S starts with none (or with the NUL). */
size_t cm_utf8_seq(const char *s);

/* 1 when the string S is well-formed UTF-8, else 0. */
int cm_utf8_ok(const char *s);

/* S with each byte that starts no well-formed sequence replaced by U+FFFD,
 * the replacement character (as Python's errors="replace" does a byte at a
 * time); malloc'd, NULL when out of memory. */
char *cm_utf8_clean(const char *s);

#endif
