/* cli_value: one flag value as typed, checked and turned into its JSON
 * form, by the flag's type (see cli_value.h): one converter per type in a
 * table indexed by enum cli_type. */
#include "cli/cli_value.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli_buf.h"
#include "cli/cli_units.h"
#include "util/ut_file.h"

/* What a value converter knows: the name to blame, and the choices or keys. */
struct conv {
	const char *what;                 /* "--service-level" or "anon-uid" */
	const char *const *choices;
	const struct cli_key *keys;
};

typedef int (*conv_fn)(const struct conv *c, const char *raw, json_t **out, aq_msg *msg);

static int conv_value(enum cli_type t, const struct conv *c, const char *raw, json_t **out,
		      aq_msg *msg);

static json_t *int64_string(int64_t v)
{
	char num[32];

	snprintf(num, sizeof(num), "%lld", (long long)v);
	return json_string(num);
}

int cli_value_bool(const char *raw, bool *v)
{
	static const struct { const char *word; bool v; } words[] = {
		{ "true", true }, { "false", false }, { "yes", true }, { "no", false },
		{ "1", true }, { "0", false }, { "on", true }, { "off", false },
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasecmp(raw, words[i].word) == 0) {
			*v = words[i].v;
			return AQ_OK;
		}
	return AQ_EINVAL;
}

static int conv_str(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	(void)c;
	(void)msg;
	*out = json_string(raw);
	return *out ? AQ_OK : aq_fail(msg, AQ_EINVAL, "%s: not valid UTF-8", c->what);
}

static int conv_bool(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	bool v;

	if (cli_value_bool(raw, &v) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "invalid value for %s: '%s' (expected true or false)",
			       c->what, raw);
	*out = json_boolean(v);
	return AQ_OK;
}

static int conv_boolstr(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	bool v;

	if (cli_value_bool(raw, &v) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "invalid value for %s: '%s' (expected true or false)",
			       c->what, raw);
	*out = json_string(v ? "true" : "false");
	return AQ_OK;
}

static int conv_int(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	int64_t v;
	aq_msg why;

	if (cli_parse_int64(raw, &v, &why) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "invalid value for %s: %s", c->what, why.text);
	*out = json_integer(v);
	return AQ_OK;
}

static int conv_int64(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	int64_t v;
	aq_msg why;

	if (cli_parse_int64(raw, &v, &why) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "invalid value for %s: %s", c->what, why.text);
	*out = int64_string(v);
	return AQ_OK;
}

static int conv_gib(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	int64_t v;
	aq_msg why;

	if (cli_parse_gib(raw, &v, &why) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "invalid value for %s: %s", c->what, why.text);
	*out = int64_string(v);
	return AQ_OK;
}

static int conv_mibps(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	double v;
	aq_msg why;

	if (cli_parse_mibps(raw, &v, &why) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "invalid value for %s: %s", c->what, why.text);
	if (v != (double)(int64_t)v)
		return aq_fail(msg, AQ_EINVAL, "invalid value for %s: '%s' is not a whole number of MiB/s",
			       c->what, raw);
	*out = int64_string((int64_t)v);
	return AQ_OK;
}

static int conv_mibps_num(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	double v;
	aq_msg why;

	if (cli_parse_mibps(raw, &v, &why) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "invalid value for %s: %s", c->what, why.text);
	*out = v == (double)(int64_t)v ? json_integer((json_int_t)v) : json_real(v);
	return AQ_OK;
}

static int conv_seconds(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	int64_t v;
	aq_msg why;

	if (cli_parse_seconds(raw, &v, &why) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "invalid value for %s: %s", c->what, why.text);
	*out = json_integer(v);
	return AQ_OK;
}

static int choice_fail(const struct conv *c, const char *raw, aq_msg *msg)
{
	struct ut_buf b;
	size_t i;
	int rc;

	ut_buf_init(&b, CLI_BUF_MAX);
	for (i = 0; c->choices && c->choices[i]; i++) {
		const char *p;
		if (i)
			ut_buf_adds(&b, ", ");
		for (p = c->choices[i]; *p; p++) {
			char lc = (char)tolower((unsigned char)*p);
			ut_buf_add(&b, &lc, 1);
		}
	}
	rc = aq_fail(msg, AQ_EINVAL, "invalid value for %s: '%s' (choose from %s)", c->what, raw,
		     ut_buf_str(&b));
	ut_buf_cleanup(&b);
	return rc;
}

/* The choice matching raw (any case, '-' for '_'), or NULL. */
static const char *choice_find(const struct conv *c, const char *raw, size_t len)
{
	size_t i, j;

	for (i = 0; c->choices && c->choices[i]; i++) {
		const char *ch = c->choices[i];
		if (strlen(ch) != len)
			continue;
		for (j = 0; j < len; j++) {
			char r = raw[j] == '-' ? '_' : (char)toupper((unsigned char)raw[j]);
			if (r != ch[j])
				break;
		}
		if (j == len)
			return ch;
	}
	return NULL;
}

static int conv_enum(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	const char *ch = choice_find(c, raw, strlen(raw));

	if (ch == NULL)
		return choice_fail(c, raw, msg);
	*out = json_string(ch);
	return AQ_OK;
}

static int conv_enum_list(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	json_t *arr = json_array();
	const char *p = raw;
	int rc = AQ_OK;

	if (*raw == '\0') {
		rc = aq_fail(msg, AQ_EINVAL, "invalid value for %s: empty list", c->what);
		goto out;
	}
	for (;;) {
		size_t len = strcspn(p, ",");
		const char *ch = choice_find(c, p, len);
		if (ch == NULL) {
			char item[128];
			snprintf(item, sizeof(item), "%.*s", (int)(len < 100 ? len : 100), p);
			rc = choice_fail(c, item, msg);
			goto out;
		}
		json_array_append_new(arr, json_string(ch));
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	*out = arr;
	arr = NULL;
out:
	json_decref(arr);
	return rc;
}

/* Split "k=v,k2=v2" into pairs and call add for each. An item without '='
 * continues the previous value, so allowed-clients=10.0.0.0/8,10.1.0.0/16
 * keeps both networks. */
static int split_pairs(const struct conv *c, const char *raw, json_t *obj,
		       int (*add)(const struct conv *c, json_t *obj, const char *key,
				  const char *val, aq_msg *msg),
		       aq_msg *msg)
{
	struct ut_buf key, val;
	const char *p = raw;
	int rc = AQ_OK, have = 0;

	ut_buf_init(&key, CLI_BUF_MAX);
	ut_buf_init(&val, CLI_BUF_MAX);
	if (*raw == '\0') {
		rc = aq_fail(msg, AQ_EINVAL, "invalid value for %s: expected KEY=VALUE,...", c->what);
		goto out;
	}
	for (;;) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		if (eq) {
			if (have && (rc = add(c, obj, ut_buf_str(&key), ut_buf_str(&val), msg)) != AQ_OK)
				goto out;
			ut_buf_reset(&key);
			ut_buf_reset(&val);
			ut_buf_add(&key, p, (size_t)(eq - p));
			ut_buf_add(&val, eq + 1, len - (size_t)(eq - p) - 1);
			have = 1;
		} else if (have) {
			ut_buf_adds(&val, ",");
			ut_buf_add(&val, p, len);
		} else {
			rc = aq_fail(msg, AQ_EINVAL, "invalid value for %s: '%.*s' is not KEY=VALUE",
				     c->what, (int)(len < 100 ? len : 100), p);
			goto out;
		}
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	if (key.err || val.err) {
		rc = AQ_ENOMEM;
		goto out;
	}
	rc = add(c, obj, ut_buf_str(&key), ut_buf_str(&val), msg);
out:
	ut_buf_cleanup(&key);
	ut_buf_cleanup(&val);
	return rc;
}

static int add_label(const struct conv *c, json_t *obj, const char *key, const char *val,
		     aq_msg *msg)
{
	if (*key == '\0')
		return aq_fail(msg, AQ_EINVAL, "invalid value for %s: empty label key", c->what);
	json_object_set_new(obj, key, json_string(val));
	return AQ_OK;
}

static int add_dict_key(const struct conv *c, json_t *obj, const char *key, const char *val,
			aq_msg *msg)
{
	const struct cli_key *k;
	struct conv kc;
	json_t *v = NULL;
	int rc;

	for (k = c->keys; k && k->name; k++)
		if (strcmp(k->name, key) == 0)
			break;
	if (k == NULL || k->name == NULL) {
		struct ut_buf b;
		ut_buf_init(&b, CLI_BUF_MAX);
		for (k = c->keys; k && k->name; k++) {
			ut_buf_adds(&b, k == c->keys ? "" : ", ");
			ut_buf_adds(&b, k->name);
		}
		rc = aq_fail(msg, AQ_EINVAL, "invalid value for %s: unknown key '%s' (known: %s)",
			     c->what, key, ut_buf_str(&b));
		ut_buf_cleanup(&b);
		return rc;
	}
	kc.what = k->name;
	kc.choices = k->choices;
	kc.keys = NULL;
	if ((rc = conv_value(k->type, &kc, val, &v, msg)) != AQ_OK)
		return rc;
	json_object_set_new(obj, k->field, v);
	return AQ_OK;
}

static int conv_pairs(const struct conv *c, const char *raw, json_t **out, aq_msg *msg,
		      int (*add)(const struct conv *, json_t *, const char *, const char *, aq_msg *))
{
	json_t *obj = json_object();
	int rc;

	if ((rc = split_pairs(c, raw, obj, add, msg)) != AQ_OK) {
		json_decref(obj);
		return rc;
	}
	*out = obj;
	return AQ_OK;
}

static int conv_labels(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	return conv_pairs(c, raw, out, msg, add_label);
}

static int conv_dict(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	return conv_pairs(c, raw, out, msg, add_dict_key);
}

/* --flag=V[,k=v...]: the first key's value leads, unnamed. */
static int conv_lead_dict(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	size_t len = strcspn(raw, ",");
	struct conv rest = { .what = c->what, .keys = c->keys ? c->keys + 1 : NULL }, lead = { .what = c->what };
	json_t *v = NULL;
	char *first;
	int rc;

	if (!c->keys || !c->keys->name || len == 0 || memchr(raw, '=', len))
		return aq_fail(msg, AQ_EINVAL, "invalid value for %s: '%s' (expected %s first, then KEY=VALUE,...)",
			       c->what, raw, c->keys && c->keys->name ? c->keys->name : "a value");
	if (!(first = strndup(raw, len)))
		return aq_fail(msg, AQ_ENOMEM, "out of memory");
	lead.choices = c->keys->choices;
	rc = conv_value(c->keys->type, &lead, first, &v, msg);
	free(first);
	if (rc != AQ_OK)
		return rc;
	rc = raw[len] ? conv_pairs(&rest, raw + len + 1, out, msg, add_dict_key) : (*out = json_object(), AQ_OK);
	if (rc == AQ_OK)
		json_object_set_new(*out, c->keys->field, v);
	else
		json_decref(v);
	return rc;
}

/* gcloud's --network=name=NET[,psa-range=R]: an object {"network": NET,
 * "psaRange": R} that cli_args_request() merges into the body's root. */
static int conv_network(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	const char *net;
	int rc;

	if (strchr(raw, '=') == NULL)
		return aq_fail(msg, AQ_EINVAL, "invalid value for %s: '%s' (expected name=NETWORK[,psa-range=RANGE])",
			       c->what, raw);
	if ((rc = conv_dict(c, raw, out, msg)) != AQ_OK)
		return rc;
	net = json_string_value(json_object_get(*out, "network"));
	if (net == NULL || *net == '\0') {
		json_decref(*out);
		*out = NULL;
		return aq_fail(msg, AQ_EINVAL, "invalid value for %s: name=NETWORK is required", c->what);
	}
	return AQ_OK;
}

/* raw split at sep into a JSON array of strings, none empty. */
static int conv_split(const struct conv *c, const char *raw, const char *sep, const char *what, json_t **out,
		      aq_msg *msg)
{
	json_t *arr = json_array();

	for (const char *p = raw;; p += strcspn(p, sep) + 1) {
		size_t len = strcspn(p, sep);
		if (len == 0) {
			json_decref(arr);
			return aq_fail(msg, AQ_EINVAL, "invalid value for %s: an empty %s in '%s'", c->what, what, raw);
		}
		json_array_append_new(arr, json_stringn(p, len));
		if (p[len] == '\0')
			break;
	}
	*out = arr;
	return AQ_OK;
}

/* "k,k2" -> ["k","k2"]: label keys */
static int conv_keys(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	return conv_split(c, raw, ",", "key", out, msg);
}

/* "a;b" -> ["a","b"] inside a dict (',' separates the dict's keys) */
static int conv_str_list(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	return conv_split(c, raw, ";", "item", out, msg);
}

/* The text of file raw, at most 4 KiB, without one trailing "\n" or
 * "\r\n" (what `echo secret > f` leaves). Never quoted in a message. */
static int conv_file(const struct conv *c, const char *raw, json_t **out, aq_msg *msg)
{
	char *data = NULL;
	size_t len = 0;
	int rc;

	if ((rc = ut_file_read(raw, 4096, &data, &len, msg)) != AQ_OK)
		return aq_fail(msg, rc, "%s: %s", c->what, msg->text);
	if (len && data[len - 1] == '\n')
		len--;
	if (len && data[len - 1] == '\r')
		len--;
	*out = json_stringn(data, len);
	explicit_bzero(data, len); /* a memset before free may be optimised away */
	free(data);
	if (!*out)
		return aq_fail(msg, AQ_EINVAL, "%s: the file must hold UTF-8 text without NUL", c->what);
	return AQ_OK;
}

/* Indexed by enum cli_type. */
static const conv_fn conv_fns[] = {
	[CLI_T_STR] = conv_str,
	[CLI_T_BOOL] = conv_bool,
	[CLI_T_BOOLSTR] = conv_boolstr,
	[CLI_T_INT] = conv_int,
	[CLI_T_INT64] = conv_int64,
	[CLI_T_GIB] = conv_gib,
	[CLI_T_MIBPS] = conv_mibps,
	[CLI_T_MIBPS_NUM] = conv_mibps_num,
	[CLI_T_SECONDS] = conv_seconds,
	[CLI_T_ENUM] = conv_enum,
	[CLI_T_ENUM_LIST] = conv_enum_list,
	[CLI_T_LABELS] = conv_labels,
	[CLI_T_DICT] = conv_dict,
	[CLI_T_NETWORK] = conv_network,
	[CLI_T_KEYS] = conv_keys,
	[CLI_T_FILE] = conv_file,
	[CLI_T_LEAD_DICT] = conv_lead_dict,
	[CLI_T_STR_LIST] = conv_str_list,
};

static int conv_value(enum cli_type t, const struct conv *c, const char *raw, json_t **out,
		      aq_msg *msg)
{
	if ((size_t)t >= sizeof(conv_fns) / sizeof(conv_fns[0]) || conv_fns[t] == NULL)
		return aq_fail(msg, AQ_EINVAL, "%s: unsupported flag type", c->what);
	return conv_fns[t](c, raw, out, msg);
}

int cli_value_json(const struct cli_flag *f, const char *raw, json_t **out, aq_msg *msg)
{
	char what[80];
	struct conv c;

	snprintf(what, sizeof(what), "--%s", f->name);
	c.what = what;
	c.choices = f->choices;
	c.keys = f->keys;
	return conv_value(f->type, &c, raw, out, msg);
}
