/* optnum.h - the numbers of the command lines, parsed one way in
 * cuptimerge, cuptimerge-batch and cuptirec: what a user types is digits,
 * an optional '-' where a number may be negative, a '.' and an exponent;
 * never a leading blank or '+', a hex float, "inf" or "nan", all of which
 * strtol and strtod take in silence (-j ' 4' and --now ' 5' were accepted
 * by one program and refused by another). */
#ifndef CM_OPTNUM_H
#define CM_OPTNUM_H

/* S, all of it, as a count: decimal digits only, 0 to MAX.  The value, or
 * -1 when S is no such count. */
long cm_optnum_count(const char *s, long max);

/* The decimal number at the start of S: "-"? digits ("." digits?)?, or
 * "." digits, then an optional exponent ("e", a sign, digits); finite.
 * Returns the end of the number, with its value in *V, or NULL when S does
 * not start with one. */
const char *cm_optnum_decimal_at(const char *s, double *v);

/* S, all of it, as cm_optnum_decimal_at's number.  0, or -1. */
int cm_optnum_decimal(const char *s, double *v);

/* --steps: "A" or "A-B", decimal step numbers of at most 18 digits, with
 * A <= B.  0, or -1. */
int cm_optnum_steps(const char *s, unsigned long long *a, unsigned long long *b);

/* --range: "START,END", two such decimal numbers with START < END.  0,
 * or -1. */
int cm_optnum_range(const char *s, double *lo, double *hi);

#endif
