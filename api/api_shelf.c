/* api_shelf: the Shelf resource's field table and rules (see api_shelf.h).
 * The NQN and portal-host rules are shared with the agent's --shelf
 * parser, so both sides accept the same shelves. */
#include "api/api_shelf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_resource.h"

static const char *const shelf_backends[] = { "directory", "nvmeof", NULL };
static const char *const shelf_transports[] = { "tcp", "rdma", NULL };
static const char *const shelf_media[] = { "TLC", "QLC", NULL };

/* What the agents of the shelf report of the I/O they issue to it (output
 * only; server/srv_shelfio.h). */
static const struct api_field shelf_io_fields[] = {
	{ "readBytes", API_T_INT64, API_F_OUTPUT, NULL, NULL, 0 },
	{ "writeBytes", API_T_INT64, API_F_OUTPUT, NULL, NULL, 0 },
	{ "readOps", API_T_INT64, API_F_OUTPUT, NULL, NULL, 0 },
	{ "writeOps", API_T_INT64, API_F_OUTPUT, NULL, NULL, 0 },
	{ "readMibps", API_T_DOUBLE, API_F_OUTPUT, NULL, NULL, 0 },
	{ "writeMibps", API_T_DOUBLE, API_F_OUTPUT, NULL, NULL, 0 },
	{ "readLatencyMs", API_T_DOUBLE, API_F_OUTPUT, NULL, NULL, 0 },
	{ "writeLatencyMs", API_T_DOUBLE, API_F_OUTPUT, NULL, NULL, 0 },
	{ "nodes", API_T_STRING_LIST, API_F_OUTPUT, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

const struct api_field api_shelf_fields[] = {
	{ "name", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "createTime", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "updateTime", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "location", API_T_STRING, API_F_REQUIRED | API_F_IMMUTABLE, NULL, NULL, 63 },
	{ "backend", API_T_ENUM, API_F_IMMUTABLE, shelf_backends, NULL, 0 },
	{ "transport", API_T_ENUM, API_F_IMMUTABLE, shelf_transports, NULL, 0 },
	{ "nqn", API_T_STRING, API_F_IMMUTABLE, NULL, NULL, API_SHELF_NQN_LEN },
	{ "addresses", API_T_STRING_LIST, 0, NULL, NULL, API_SHELF_ADDRESSES_MAX },
	{ "capacityGib", API_T_INT64, 0, NULL, NULL, 0 },
	{ "readThroughputMibps", API_T_DOUBLE, 0, NULL, NULL, 0 },
	{ "writeThroughputMibps", API_T_DOUBLE, 0, NULL, NULL, 0 },
	{ "media", API_T_ENUM, 0, shelf_media, NULL, 0 },
	{ "ioStats", API_T_OBJECT, API_F_OUTPUT, NULL, shelf_io_fields, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

/* Nothing that would split the kernel's fabrics option string (',' '=')
 * or a line. */
static bool shelf_text_ok(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '-' || c == '_' || c == ':'))
			return false;
	}
	return n > 0;
}

bool api_shelf_nqn_ok(const char *p, size_t n)
{
	return n > 4 && n <= API_SHELF_NQN_LEN && strncmp(p, "nqn.", 4) == 0 && shelf_text_ok(p, n);
}

bool api_shelf_addr_ok(const char *p, size_t n)
{
	return n <= API_SHELF_ADDR_LEN && shelf_text_ok(p, n);
}

/* "HOST:PORT" or "[IPv6]:PORT": the host by api_shelf_addr_ok, port 1..65535. */
static bool shelf_portal_ok(const char *s)
{
	const char *host = s, *colon;
	size_t n;
	char *end;
	unsigned long port;

	if (*s == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':')
			return false;
		host = s + 1;
		n = (size_t)(rb - host);
		colon = rb + 1;
	} else {
		if (!(colon = strrchr(s, ':')) || memchr(s, ':', (size_t)(colon - s)))
			return false; /* an IPv6 literal goes in brackets */
		n = (size_t)(colon - s);
	}
	if (!api_shelf_addr_ok(host, n) || colon[1] < '0' || colon[1] > '9')
		return false;
	port = strtoul(colon + 1, &end, 10);
	return *end == 0 && port >= 1 && port <= 65535 && end - (colon + 1) <= 5;
}

static int shelf_check_ceiling(json_t *doc, const char *field, double dflt, aq_msg *msg)
{
	json_t *v = json_object_get(doc, field);
	double x = v ? json_number_value(v) : dflt;

	if (!(x > 0) || !isfinite(x) || x > API_SHELF_MIBPS_MAX)
		return aq_fail(msg, AQ_EINVAL, "%s must be above 0 and at most %d MiB/s", field, API_SHELF_MIBPS_MAX);
	if (!v && json_object_set_new(doc, field, json_real(x)) != 0)
		return AQ_ENOMEM;
	return AQ_OK;
}

static int shelf_check_nvmeof(const json_t *doc, aq_msg *msg)
{
	const json_t *addrs = json_object_get(doc, "addresses"), *a;
	const char *nqn = api_json_str(doc, "nqn", NULL);
	size_t i, j;

	if (!json_object_get(doc, "transport"))
		return aq_fail(msg, AQ_EINVAL, "transport is required for backend nvmeof (tcp or rdma)");
	if (!nqn)
		return aq_fail(msg, AQ_EINVAL, "nqn is required for backend nvmeof");
	if (!api_shelf_nqn_ok(nqn, strlen(nqn)))
		return aq_fail(msg, AQ_EINVAL, "nqn must start with nqn. and be at most %d characters of [A-Za-z0-9.:_-]",
			       API_SHELF_NQN_LEN);
	if (json_array_size(addrs) == 0)
		return aq_fail(msg, AQ_EINVAL, "addresses is required for backend nvmeof (HOST:PORT of each portal)");
	json_array_foreach(addrs, i, a) {
		const char *s = json_string_value(a);

		if (strlen(s) > API_SHELF_ADDR_ITEM_LEN || !shelf_portal_ok(s))
			return aq_fail(msg, AQ_EINVAL, "addresses[%zu] must be HOST:PORT or [IPv6]:PORT (host at most %d characters of [A-Za-z0-9.:_-], port 1-65535)",
				       i, API_SHELF_ADDR_LEN);
		for (j = 0; j < i; j++)
			if (strcmp(s, json_string_value(json_array_get(addrs, j))) == 0)
				return aq_fail(msg, AQ_EINVAL, "addresses[%zu] repeats addresses[%zu]", i, j);
	}
	return AQ_OK;
}

int api_shelf_check(const struct api_math_params *p, json_t *doc, aq_msg *msg)
{
	static const char *const nvme_only[] = { "transport", "nqn", "addresses" };
	const char *backend = api_json_str(doc, "backend", "directory"), *media = api_json_str(doc, "media", "TLC");
	json_t *cap = json_object_get(doc, "capacityGib");
	int rc;

	(void)p;
	/* defaults only where absent: backend and media point into doc */
	if ((!json_object_get(doc, "backend") && json_object_set_new(doc, "backend", json_string(backend)) != 0) ||
	    (!json_object_get(doc, "media") && json_object_set_new(doc, "media", json_string(media)) != 0))
		return AQ_ENOMEM;
	if (strcmp(backend, "nvmeof") == 0) {
		if ((rc = shelf_check_nvmeof(doc, msg)) != AQ_OK)
			return rc;
	} else {
		for (size_t i = 0; i < sizeof(nvme_only) / sizeof(nvme_only[0]); i++)
			if (json_object_get(doc, nvme_only[i]))
				return aq_fail(msg, AQ_EINVAL, "%s is for backend nvmeof only (this shelf is a directory)",
					       nvme_only[i]);
	}
	if (cap) {
		int64_t g = api_json_int64(doc, "capacityGib", 0);

		if (g < 1 || g > API_SHELF_CAPACITY_GIB_MAX)
			return aq_fail(msg, AQ_EINVAL, "capacityGib must be 1-%d", API_SHELF_CAPACITY_GIB_MAX);
	}
	if ((rc = shelf_check_ceiling(doc, "readThroughputMibps", API_SHELF_READ_MIBPS, msg)) != AQ_OK)
		return rc;
	return shelf_check_ceiling(doc, "writeThroughputMibps",
				   strcmp(media, "QLC") == 0 ? API_SHELF_WRITE_MIBPS / 2 : API_SHELF_WRITE_MIBPS, msg);
}
