/* api_id: the rule every client-chosen resource ID follows (api_id_check in
 * api_math.h). IDs become parts of resource names and URLs, so the rule is
 * deliberately narrow: ASCII letters, digits and hyphens, first a letter, last
 * a letter or digit, 1..63 characters (an RFC 1035 label, either case).
 */
#include "api/api_math.h"

#include <stdbool.h>
#include <string.h>

#define ID_MAX_LEN 63

static const char id_rule[] =
	"1 to 63 letters, digits or hyphens, starting with a letter and ending with a letter or digit";

/* ASCII only: isalpha() would follow the locale. */
static bool id_is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool id_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int api_id_check(const char *id, const char *what, aq_msg *msg)
{
	size_t len;

	if (!what)
		what = "id";
	if (!id || id[0] == '\0')
		return aq_fail(msg, AQ_EINVAL, "%s is empty; it must be %s", what, id_rule);
	/* Bounded: never scan past one character beyond the limit. */
	len = strnlen(id, ID_MAX_LEN + 1);
	if (len > ID_MAX_LEN)
		return aq_fail(msg, AQ_EINVAL, "%s is longer than %d characters; it must be %s",
			       what, ID_MAX_LEN, id_rule);
	/* Characters first, so the messages below may quote the ID safely. */
	for (size_t i = 0; i < len; i++) {
		char c = id[i];

		if (!id_is_letter(c) && !id_is_digit(c) && c != '-')
			return aq_fail(msg, AQ_EINVAL,
				       "%s has a character other than a letter, digit or hyphen at "
				       "position %zu; it must be %s",
				       what, i + 1, id_rule);
	}
	if (!id_is_letter(id[0]))
		return aq_fail(msg, AQ_EINVAL, "%s \"%s\" does not start with a letter; it must be %s",
			       what, id, id_rule);
	if (id[len - 1] == '-')
		return aq_fail(msg, AQ_EINVAL, "%s \"%s\" ends with a hyphen; it must be %s", what,
			       id, id_rule);
	return AQ_OK;
}
