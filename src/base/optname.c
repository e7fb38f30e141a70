/* optname.c - name the option getopt_long refused, as the user typed it. */
#include "optname.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Why not argv[optind - 1], as the programs used to print: a short option
 * refused inside a cluster ("-p2") leaves optind on that cluster, so
 * argv[optind - 1] is whatever came before it: the program's name, or "-q".
 * A long option always moves optind past itself; glibc then sets optopt to 0
 * for an unknown or ambiguous name and to the option's val otherwise, while a
 * refused short option sets optopt to its letter.  So the element before
 * optind is the culprit exactly when it is a long option and optopt is 0 or
 * that option's val.  A short option refused right after a long one shares
 * the long one's val only where that val is a letter missing from OPTSTRING
 * (cuptirec's --buffers is 'B', and "--buffers=4 -B" would name --buffers);
 * every other long option's val is a letter of OPTSTRING or >= 256. */
const char *cm_optname(int c, char *const argv[], const struct option *longopts, char *buf, size_t bufsz)
{
	const char *prev = optind > 1 ? argv[optind - 1] : NULL;
	const struct option *o, *hit = NULL;
	size_t n, matches = 0;

	if (prev && prev[0] == '-' && prev[1] == '-' && prev[2]) {
		n = strcspn(prev + 2, "=");
		for (o = longopts; o && o->name; o++) {
			if (strncmp(o->name, prev + 2, n))
				continue;
			if (strlen(o->name) == n) { /* an exact name wins over prefixes */
				hit = o;
				matches = 1;
				break;
			}
			hit = o;
			matches++;
		}
		if (optopt == 0 || (matches == 1 && hit->val == optopt)) {
			snprintf(buf, bufsz, "--%.*s", (int)n, prev + 2);
			if (optopt == 0)
				return matches > 1 ? "ambiguous option" : "unrecognized option";
			return c == ':' ? "option needs an argument" : "option takes no argument";
		}
	}
	if (optopt > 0 && optopt < 256 && isprint(optopt))
		snprintf(buf, bufsz, "-%c", optopt);
	else if (optopt > 0 && optopt < 256)
		snprintf(buf, bufsz, "-\\x%02x", (unsigned)optopt);
	else /* not expected from glibc; the element as typed is the best guess */
		snprintf(buf, bufsz, "%s", prev ? prev : "?");
	return c == ':' ? "option needs an argument" : "unrecognized option";
}

/* optname.h */
int cm_name_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* optname.h */
const char *cm_named_format(const char *out)
{
	if (cm_name_ends_with(out, ".pftrace") || cm_name_ends_with(out, ".pftrace.gz"))
		return "perfetto";
	if (cm_name_ends_with(out, ".json") || cm_name_ends_with(out, ".json.gz"))
		return "json";
	return NULL;
}
