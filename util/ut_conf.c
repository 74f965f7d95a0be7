/* ut_conf: the "key = value" configuration reader (see ut_conf.h). It reads
 * from memory so that the fuzz harness and the unit suite drive exactly what
 * the programs' --config reads; a line is copied into a bounded buffer before
 * it is cut into key and value. */
#include "util/ut_conf.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ut_file.h"

static bool conf_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* s without leading and trailing blanks (and CR/LF), in place. */
static char *conf_trim(char *s)
{
	char *e;

	while (conf_blank(*s))
		s++;
	e = s + strlen(s);
	while (e > s && (conf_blank(e[-1]) || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/* One line (its bytes, without the '\n'): skip, hand to fn, or fail. */
static int conf_line(const char *name, int lineno, const char *p, size_t n, unsigned flags, ut_conf_fn fn,
		     void *arg, aq_msg *msg)
{
	char line[UT_CONF_LINE_MAX + 1], *s, *eq, *key = NULL;
	aq_msg why = { .text = "" };
	int rc;

	if (n > UT_CONF_LINE_MAX)
		return aq_fail(msg, AQ_EINVAL, "%s:%d: line is longer than %d bytes", name, lineno, UT_CONF_LINE_MAX);
	if (memchr(p, '\0', n))
		return aq_fail(msg, AQ_EINVAL, "%s:%d: holds a NUL byte", name, lineno);
	memcpy(line, p, n);
	line[n] = '\0';
	s = conf_trim(line);
	if (*s == '\0' || *s == '#')
		return AQ_OK;
	if ((eq = strchr(s, '=')) != NULL) {
		*eq = '\0';
		key = conf_trim(s);
	}
	if (!eq || *key == '\0')
		return aq_fail(msg, AQ_EINVAL, "%s:%d: expected 'key = value'", name, lineno);
	if (flags & UT_CONF_DASH)
		for (char *c = key; *c; c++)
			if (*c == '_')
				*c = '-';
	if ((rc = fn(arg, key, conf_trim(eq + 1), &why)) != AQ_OK)
		return aq_fail(msg, rc, "%s:%d: %s", name, lineno, why.text[0] ? why.text : aq_err_str(rc));
	return AQ_OK;
}

int ut_conf_parse(const char *name, const char *text, size_t len, unsigned flags, ut_conf_fn fn, void *arg,
		  aq_msg *msg)
{
	size_t off = 0;
	int lineno = 0, rc = AQ_OK;

	while (off < len && rc == AQ_OK) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;

		lineno++;
		rc = conf_line(name, lineno, text + off, n, flags, fn, arg, msg);
		off += n + (nl ? 1 : 0);
	}
	return rc;
}

int ut_conf_load(const char *path, unsigned flags, ut_conf_fn fn, void *arg, aq_msg *msg)
{
	char *text = NULL;
	size_t len = 0;
	aq_msg why = { .text = "" };
	int rc = ut_file_read(path, UT_CONF_FILE_MAX, &text, &len, &why);

	if (rc == AQ_ENOENT)
		return (flags & UT_CONF_MISSING_OK) ? AQ_OK
						     : aq_fail(msg, AQ_EINVAL, "cannot open config file %s: %s", path,
							       strerror(ENOENT));
	if (rc != AQ_OK)
		return aq_fail(msg, rc == AQ_ENOMEM ? rc : AQ_EINVAL, "%s", why.text[0] ? why.text : aq_err_str(rc));
	rc = ut_conf_parse(path, text, len, flags, fn, arg, msg);
	free(text);
	return rc;
}
