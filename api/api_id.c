/* api_id: the rules every client-chosen resource ID and label follows
 * (api_id_check, api_label_check in api_math.h). IDs become parts of resource
 * names and URLs: GCNV's rule, ^[a-z]([-a-z0-9]*[a-z0-9])?$ (an RFC 1035
 * label, lowercase only). Labels follow Google Cloud's rule: keys and values
 * of lowercase letters, digits, '_' and '-' (and international characters),
 * at most 63 characters; a key starts with a lowercase letter or an
 * international character and is never empty.
 */
#include "api/api_math.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define ID_MAX_LEN 63

static const char id_rule[] =
	"1 to 63 lowercase letters, digits or hyphens, starting with a letter and ending with a letter or digit";

/* ASCII only: isalpha() would follow the locale. */
static bool id_is_letter(char c)
{
	return c >= 'a' && c <= 'z';
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
				       "%s has a character other than a lowercase letter, digit or hyphen at "
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

#define LABEL_MAX_CHARS 63

/* A byte of a UTF-8 sequence past ASCII: an international character. */
static bool label_is_intl(unsigned char c)
{
	return c >= 0x80;
}

static bool label_char_ok(unsigned char c)
{
	return id_is_letter((char)c) || id_is_digit((char)c) || c == '_' || c == '-' || label_is_intl(c);
}

/* Characters (not bytes) of s, and whether every one is allowed; bounded
 * by the 63-character limit plus one. */
static bool label_part_ok(const char *s, size_t *nchars)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p && n <= LABEL_MAX_CHARS; p++) {
		if (!label_char_ok(*p))
			return false;
		if ((*p & 0xC0) != 0x80) /* not a UTF-8 continuation byte */
			n++;
	}
	*nchars = n;
	return true;
}

int api_label_check(const char *key, const char *value, const char *where, aq_msg *msg)
{
	size_t nk = 0, nv = 0;

	if (!key || !*key)
		return aq_fail(msg, AQ_EINVAL, "%s: a label key must not be empty", where);
	if (!label_part_ok(key, &nk) || nk > LABEL_MAX_CHARS ||
	    !(id_is_letter(key[0]) || label_is_intl((unsigned char)key[0])))
		return aq_fail(msg, AQ_EINVAL,
			       "%s: label key \"%.64s\" must be 1 to 63 lowercase letters, digits, '_' or '-', starting with a lowercase letter",
			       where, key);
	if (!value || !label_part_ok(value, &nv) || nv > LABEL_MAX_CHARS)
		return aq_fail(msg, AQ_EINVAL,
			       "%s: the value of label \"%.64s\" must be at most 63 lowercase letters, digits, '_' or '-'",
			       where, key);
	return AQ_OK;
}

void api_name_location(const char *name, char *out, size_t cap)
{
	const char *l = strstr(name, "/locations/");

	snprintf(out, cap, "%.*s", l ? (int)strcspn(l + 11, "/") : 0, l ? l + 11 : "");
}
