/* vol_ra: the name predictor of cross-file read-ahead (vol_ra.h has the
 * rules). Pure string work: no I/O, no allocation; the prefetch that uses it
 * is vol_ra_fetch.c. */
#include "agent/vol/vol_ra.h"

#include <errno.h>
#include <string.h>

static bool ra_is_digit(char c, int base)
{
	return (c >= '0' && c <= '9') ||
	       (base == 16 && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
}

/* Where the counter ends: before the extension when the name has one (a
 * last '.' not at the start, followed by something that is not all decimal
 * digits), else at the end of the name. */
static size_t ra_stem_end(const char *name, size_t len)
{
	const char *dot = strrchr(name, '.');
	size_t k;

	if (!dot || dot == name || dot[1] == '\0')
		return len;
	for (k = 1; dot[k] >= '0' && dot[k] <= '9'; k++)
		;
	return dot[k] == '\0' ? len : (size_t)(dot - name);
}

int vol_ra_next(const char *name, int base, bool upper, char *out, size_t cap)
{
	size_t len = strlen(name), end = ra_stem_end(name, len), start = end, first, i, grow;
	bool up = upper;
	bool carry = true;

	if (len > VOL_RA_NAME_MAX)
		return -ENAMETOOLONG;
	while (start > 0 && ra_is_digit(name[start - 1], base))
		start--;
	if (start == end)
		return -ENOENT;
	/* the case of the run's last letter, if it has one; letters before the
	 * run's first decimal digit are the stem's ("frame0009": 'e'), not the
	 * count's, unless the run has no decimal digit */
	for (first = start; first < end && !(name[first] >= '0' && name[first] <= '9'); first++)
		;
	if (first == end)
		first = start;
	for (i = end; i > first; i--)
		if ((name[i - 1] >= 'a' && name[i - 1] <= 'f') || (name[i - 1] >= 'A' && name[i - 1] <= 'F')) {
			up = name[i - 1] <= 'F';
			break;
		}
	for (i = end; carry && i > start; i--)
		carry = name[i - 1] == (base == 10 ? '9' : 'f') || name[i - 1] == 'F';
	grow = carry ? 1 : 0; /* every digit was the highest: one more digit */
	if (len + grow > VOL_RA_NAME_MAX || len + grow + 1 > cap)
		return -ENAMETOOLONG;
	memcpy(out, name, start);
	if (grow)
		out[start] = '1';
	memcpy(out + start + grow, name + start, len - start + 1);
	carry = true;
	for (i = end + grow; carry && i > start + grow; i--) {
		char *c = &out[i - 1];

		if (*c == '9' && base == 16) {
			*c = up ? 'A' : 'a';
			carry = false;
		} else if (*c == '9' || *c == 'f' || *c == 'F') {
			*c = '0';
		} else {
			*c = (char)(*c + 1);
			if (*c >= 'a' && *c <= 'f' && up)
				*c = (char)(*c - 'a' + 'A');
			else if (*c >= 'A' && *c <= 'F' && !up)
				*c = (char)(*c - 'A' + 'a');
			carry = false;
		}
	}
	return 0;
}

/* The walk in one base: successors one after another, kept when they
 * exist, ended by depth found, VOL_RA_GAP_MAX misses in a row, or a name
 * that cannot be made. */
static size_t ra_walk(const char *name, int base, bool upper, size_t want, vol_ra_exists_fn exists, void *arg,
		      char (*out)[VOL_RA_NAME_MAX + 1])
{
	char cur[VOL_RA_NAME_MAX + 1], next[VOL_RA_NAME_MAX + 1];
	size_t n = 0;
	int misses = 0;

	if (strlen(name) > VOL_RA_NAME_MAX)
		return 0;
	memcpy(cur, name, strlen(name) + 1);
	while (n < want && misses <= VOL_RA_GAP_MAX && vol_ra_next(cur, base, upper, next, sizeof(next)) == 0) {
		if (exists(arg, next)) {
			memcpy(out[n++], next, sizeof(next));
			misses = 0;
		} else {
			misses++;
		}
		memcpy(cur, next, sizeof(cur));
	}
	return n;
}

size_t vol_ra_predict(const char *name, int depth, vol_ra_exists_fn exists, void *arg,
		      char (*out)[VOL_RA_NAME_MAX + 1], size_t max)
{
	size_t want = depth < 0 ? 0 : (size_t)depth < max ? (size_t)depth : max, n;

	if (!want)
		return 0;
	if ((n = ra_walk(name, 10, false, want, exists, arg, out)) > 0)
		return n;
	if ((n = ra_walk(name, 16, false, want, exists, arg, out)) > 0)
		return n;
	return ra_walk(name, 16, true, want, exists, arg, out);
}
