/* api_error: the table behind api_error.h. */
#include "api/api_error.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct err_row {
	int code;
	int http;
	int rpc;
	const char *status;
	const char *text;
	const char *reason; /* google.rpc.ErrorInfo.reason */
};

static const struct err_row err_table[] = {
	{ AQ_OK, 200, 0, "OK", "success", "OK" },
	{ AQ_ENOMEM, 500, 8, "RESOURCE_EXHAUSTED", "out of memory", "OUT_OF_MEMORY" },
	{ AQ_EIO, 500, 13, "INTERNAL", "input/output error", "IO_ERROR" },
	{ AQ_EINVAL, 400, 3, "INVALID_ARGUMENT", "invalid argument", "INVALID_ARGUMENT" },
	{ AQ_ENOENT, 404, 5, "NOT_FOUND", "not found", "RESOURCE_NOT_FOUND" },
	{ AQ_EEXIST, 409, 6, "ALREADY_EXISTS", "already exists", "RESOURCE_ALREADY_EXISTS" },
	{ AQ_EACCES, 403, 7, "PERMISSION_DENIED", "permission denied", "PERMISSION_DENIED" },
	{ AQ_ETOOBIG, 413, 3, "INVALID_ARGUMENT", "request body too large", "REQUEST_TOO_LARGE" },
	{ AQ_EBUSY, 409, 10, "ABORTED", "concurrent change, retry", "CONCURRENT_CHANGE" },
	{ AQ_ETIMEDOUT, 504, 4, "DEADLINE_EXCEEDED", "deadline exceeded", "DEADLINE_EXCEEDED" },
	{ AQ_EUNAUTH, 401, 16, "UNAUTHENTICATED", "request is not authenticated", "ACCESS_TOKEN_INVALID" },
	{ AQ_EPRECOND, 400, 9, "FAILED_PRECONDITION", "failed precondition", "FAILED_PRECONDITION" },
	{ AQ_EEXHAUSTED, 429, 8, "RESOURCE_EXHAUSTED", "resource exhausted", "RESOURCE_EXHAUSTED" },
	{ AQ_EUNIMPL, 501, 12, "UNIMPLEMENTED", "not implemented", "NOT_IMPLEMENTED" },
	{ AQ_EUNAVAIL, 503, 14, "UNAVAILABLE", "service unavailable", "SERVICE_UNAVAILABLE" },
	{ AQ_ECANCELLED, 499, 1, "CANCELLED", "cancelled", "CANCELLED" },
	{ AQ_EINTERNAL, 500, 13, "INTERNAL", "internal error", "INTERNAL_ERROR" },
	{ AQ_EOUTOFRANGE, 400, 11, "OUT_OF_RANGE", "out of range", "OUT_OF_RANGE" },
	/* no google.rpc code has 405; UNIMPLEMENTED is what grpc-gateway and
	 * Google's front ends give a method a path does not have */
	{ AQ_ENOMETHOD, 405, 12, "UNIMPLEMENTED", "method not allowed", "METHOD_NOT_ALLOWED" },
};

static const struct err_row err_internal = { AQ_EINTERNAL, 500, 13, "INTERNAL", "internal error", "INTERNAL_ERROR" };

static const struct err_row *err_find(int code)
{
	for (size_t i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++)
		if (err_table[i].code == code)
			return &err_table[i];
	return &err_internal;
}

int aq_fail(aq_msg *msg, int code, const char *fmt, ...)
{
	va_list ap;

	if (msg) {
		va_start(ap, fmt);
		vsnprintf(msg->text, sizeof(msg->text), fmt, ap);
		va_end(ap);
		msg->field[0] = '\0';
	}
	return code;
}

int aq_fail_field(aq_msg *msg, int code, const char *field, const char *fmt, ...)
{
	va_list ap;

	if (msg) {
		va_start(ap, fmt);
		vsnprintf(msg->text, sizeof(msg->text), fmt, ap);
		va_end(ap);
		snprintf(msg->field, sizeof(msg->field), "%s", field ? field : "");
	}
	return code;
}

static bool msg_field_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '.' || c == '[' || c == ']';
}

void aq_msg_field(const aq_msg *msg, char *out, size_t cap)
{
	const char *t = msg ? msg->text : "";
	size_t n = 0;
	bool marked = false;

	if (msg && msg->field[0]) {
		snprintf(out, cap, "%s", msg->field);
		return;
	}
	if (cap)
		out[0] = '\0';
	if (!(t[0] >= 'a' && t[0] <= 'z'))
		return;
	while (n < sizeof(msg->text) && msg_field_char(t[n])) {
		if ((t[n] >= 'A' && t[n] <= 'Z') || t[n] == '.' || t[n] == '[')
			marked = true;
		n++;
	}
	if (t[n] == ':')
		marked = true;
	else if (t[n] != ' ')
		return;
	if (marked && t[n - 1] != '.')
		snprintf(out, cap, "%.*s", (int)n, t);
}

const char *aq_err_status(int code) { return err_find(code)->status; }
int aq_err_http(int code) { return err_find(code)->http; }
int aq_err_rpc_code(int code) { return err_find(code)->rpc; }
const char *aq_err_str(int code) { return err_find(code)->text; }
const char *aq_err_reason(int code) { return err_find(code)->reason; }
