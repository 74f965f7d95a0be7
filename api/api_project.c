/* api_project: the Project and Location resources (Aquifer's own: projects are
 * real resources here; locations are cluster-wide and created by an admin).
 * A location may name its cold store (issue 11): an S3-API bucket or a
 * directory the agents reach; without one the agents use a directory on the
 * shelf. The S3 secret is input only: aquiferd keeps it apart from the
 * location document and never returns it. */
#include "api/api_resource.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

const struct api_field api_project_fields[] = {
	{ "name", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "projectId", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "displayName", API_T_STRING, 0, NULL, NULL, 200 },
	{ "labels", API_T_LABELS, 0, NULL, NULL, 0 },
	{ "state", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "createTime", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

/* Lengths fit the agent's struct obj_cfg (agent/obj/obj.h). */
static const struct api_field loc_s3_fields[] = {
	{ "endpoint", API_T_STRING, 0, NULL, NULL, 511 },
	{ "bucket", API_T_STRING, 0, NULL, NULL, 63 },
	{ "region", API_T_STRING, 0, NULL, NULL, 63 },
	{ "accessKeyId", API_T_STRING, 0, NULL, NULL, 255 },
	{ "secretAccessKey", API_T_STRING, API_F_INPUT, NULL, NULL, 255 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

static const struct api_field loc_dir_fields[] = {
	{ "path", API_T_STRING, 0, NULL, NULL, 4095 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

/* Service addresses (api_svcaddr.h): set on create only, so an address
 * a client mounts never moves out of its range. */
static const struct api_field loc_svc_fields[] = {
	{ "range", API_T_STRING, API_F_REQUIRED, NULL, NULL, 18 },
	{ "prefixLength", API_T_INT32, 0, NULL, NULL, 0 },
	{ "port", API_T_INT32, 0, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

static const struct api_field loc_cold_fields[] = {
	{ "s3", API_T_OBJECT, 0, NULL, loc_s3_fields, 0 },
	{ "directory", API_T_OBJECT, 0, NULL, loc_dir_fields, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

const struct api_field api_location_fields[] = {
	{ "name", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "locationId", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "displayName", API_T_STRING, 0, NULL, NULL, 200 },
	{ "labels", API_T_LABELS, 0, NULL, NULL, 0 },
	{ "metadata", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "createTime", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "coldStore", API_T_OBJECT, 0, NULL, loc_cold_fields, 0 },
	{ "serviceAddresses", API_T_OBJECT, API_F_IMMUTABLE, NULL, loc_svc_fields, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

/* http(s)://host[:port][/path], no credentials, query, fragment or blanks. */
static int cold_endpoint_check(const char *ep, aq_msg *msg)
{
	const char *host = NULL, *end;
	size_t hn;

	if (strncmp(ep, "http://", 7) == 0)
		host = ep + 7;
	else if (strncmp(ep, "https://", 8) == 0)
		host = ep + 8;
	if (!host)
		return aq_fail(msg, AQ_EINVAL, "coldStore.s3.endpoint \"%.64s\" must be an http:// or https:// URL, e.g. http://127.0.0.1:9000", ep);
	for (const char *c = ep; *c; c++)
		if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f || strchr("?#@\\\"'<>{}|^`", *c))
			return aq_fail(msg, AQ_EINVAL, "coldStore.s3.endpoint \"%.64s\" may not contain blanks, credentials, a query or a fragment", ep);
	hn = strcspn(host, "/:");
	if (hn == 0)
		return aq_fail(msg, AQ_EINVAL, "coldStore.s3.endpoint \"%.64s\" names no host", ep);
	end = host + hn;
	if (*end == ':') {
		size_t pn = strspn(end + 1, "0123456789");
		long port = 0;

		if (pn == 0 || pn > 5 || (end[1 + pn] && end[1 + pn] != '/'))
			return aq_fail(msg, AQ_EINVAL, "coldStore.s3.endpoint \"%.64s\" has a bad port", ep);
		for (size_t i = 0; i < pn; i++)
			port = port * 10 + (end[1 + i] - '0');
		if (port < 1 || port > 65535)
			return aq_fail(msg, AQ_EINVAL, "coldStore.s3.endpoint \"%.64s\": port must be 1-65535", ep);
	}
	return AQ_OK;
}

/* S3 bucket naming rules: 3-63 of [a-z0-9.-], starting and ending with a
 * letter or digit, no "..", not an IPv4 address. */
static int cold_bucket_check(const char *b, aq_msg *msg)
{
	size_t n = strlen(b);
	unsigned a, c, d, e;
	char tail;

	if (n < 3 || n > 63 || strspn(b, "abcdefghijklmnopqrstuvwxyz0123456789.-") != n ||
	    !strchr("abcdefghijklmnopqrstuvwxyz0123456789", b[0]) ||
	    !strchr("abcdefghijklmnopqrstuvwxyz0123456789", b[n - 1]) || strstr(b, "..") ||
	    sscanf(b, "%u.%u.%u.%u%c", &a, &c, &d, &e, &tail) == 4)
		return aq_fail(msg, AQ_EINVAL, "coldStore.s3.bucket \"%.64s\" is not a valid bucket name: 3-63 lower-case letters, digits, '.' and '-', starting and ending with a letter or digit, not an IP address", b);
	return AQ_OK;
}

static int cold_path_check(const char *p, aq_msg *msg)
{
	if (p[0] != '/')
		return aq_fail(msg, AQ_EINVAL, "coldStore.directory.path \"%.64s\" must be an absolute path", p);
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < ' ' || *c == 0x7f)
			return aq_fail(msg, AQ_EINVAL, "coldStore.directory.path may not contain control characters");
	for (const char *s = p; (s = strstr(s, "/..")); s += 3)
		if (s[3] == '/' || s[3] == '\0')
			return aq_fail(msg, AQ_EINVAL, "coldStore.directory.path \"%.64s\" may not contain \"..\"", p);
	return AQ_OK;
}

static const char *const cold_s3_required[] = { "endpoint", "bucket", "accessKeyId", "secretAccessKey", NULL };

int api_cold_store_check(json_t *cs, aq_msg *msg)
{
	json_t *s3 = json_object_get(cs, "s3"), *dir = json_object_get(cs, "directory");
	int rc;

	if (!cs)
		return AQ_OK;
	if ((s3 != NULL) == (dir != NULL))
		return aq_fail(msg, AQ_EINVAL, "coldStore must hold exactly one of s3 {endpoint, bucket, region, accessKeyId, secretAccessKey} or directory {path}");
	if (dir) {
		const char *p = api_json_str(dir, "path", NULL);

		if (!p)
			return aq_fail(msg, AQ_EINVAL, "coldStore.directory.path is required");
		return cold_path_check(p, msg);
	}
	for (const char *const *f = cold_s3_required; *f; f++)
		if (!*api_json_str(s3, *f, ""))
			return aq_fail(msg, AQ_EINVAL, "coldStore.s3.%s is required", *f);
	if ((rc = cold_endpoint_check(api_json_str(s3, "endpoint", ""), msg)) != AQ_OK ||
	    (rc = cold_bucket_check(api_json_str(s3, "bucket", ""), msg)) != AQ_OK)
		return rc;
	for (const char *k = api_json_str(s3, "accessKeyId", ""); *k; k++)
		if ((unsigned char)*k <= ' ' || (unsigned char)*k >= 0x7f)
			return aq_fail(msg, AQ_EINVAL, "coldStore.s3.accessKeyId must be printable ASCII without blanks");
	for (const char *k = api_json_str(s3, "secretAccessKey", ""); *k; k++)
		if ((unsigned char)*k <= ' ' || (unsigned char)*k >= 0x7f)
			return aq_fail(msg, AQ_EINVAL, "coldStore.s3.secretAccessKey must be printable ASCII without blanks");
	if (!*api_json_str(s3, "region", ""))
		json_object_set_new(s3, "region", json_string("us-east-1"));
	for (const char *r = api_json_str(s3, "region", ""); *r; r++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", *r))
			return aq_fail(msg, AQ_EINVAL, "coldStore.s3.region may contain only letters, digits, '-' and '_'");
	return AQ_OK;
}

bool api_cold_store_same(const json_t *a, const json_t *b)
{
	const json_t *as3 = json_object_get(a, "s3"), *bs3 = json_object_get(b, "s3");
	const json_t *ad = json_object_get(a, "directory"), *bd = json_object_get(b, "directory");

	if (!a || !b)
		return !a && !b;
	if (as3 && bs3)
		return strcmp(api_json_str(as3, "endpoint", ""), api_json_str(bs3, "endpoint", "")) == 0 &&
		       strcmp(api_json_str(as3, "bucket", ""), api_json_str(bs3, "bucket", "")) == 0;
	if (ad && bd)
		return strcmp(api_json_str(ad, "path", ""), api_json_str(bd, "path", "")) == 0;
	return false;
}

bool api_cold_store_same_key(const json_t *a, const json_t *b)
{
	const json_t *as3 = json_object_get(a, "s3"), *bs3 = json_object_get(b, "s3");

	return as3 && bs3 && api_cold_store_same(a, b) &&
	       strcmp(api_json_str(as3, "accessKeyId", ""), api_json_str(bs3, "accessKeyId", "")) == 0;
}
