/* api_error: the table behind api_error.h. */
#include "api/api_error.h"

#include <stdarg.h>
#include <stdio.h>

struct err_row {
	int code;
	int http;
	int rpc;
	const char *status;
	const char *text;
};

static const struct err_row err_table[] = {
	{ AQ_OK, 200, 0, "OK", "success" },
	{ AQ_ENOMEM, 500, 8, "RESOURCE_EXHAUSTED", "out of memory" },
	{ AQ_EIO, 500, 13, "INTERNAL", "input/output error" },
	{ AQ_EINVAL, 400, 3, "INVALID_ARGUMENT", "invalid argument" },
	{ AQ_ENOENT, 404, 5, "NOT_FOUND", "not found" },
	{ AQ_EEXIST, 409, 6, "ALREADY_EXISTS", "already exists" },
	{ AQ_EACCES, 403, 7, "PERMISSION_DENIED", "permission denied" },
	{ AQ_ETOOBIG, 413, 3, "INVALID_ARGUMENT", "request body too large" },
	{ AQ_EBUSY, 409, 10, "ABORTED", "concurrent change, retry" },
	{ AQ_ETIMEDOUT, 504, 4, "DEADLINE_EXCEEDED", "deadline exceeded" },
	{ AQ_EUNAUTH, 401, 16, "UNAUTHENTICATED", "request is not authenticated" },
	{ AQ_EPRECOND, 400, 9, "FAILED_PRECONDITION", "failed precondition" },
	{ AQ_EEXHAUSTED, 429, 8, "RESOURCE_EXHAUSTED", "resource exhausted" },
	{ AQ_EUNIMPL, 501, 12, "UNIMPLEMENTED", "not implemented" },
	{ AQ_EUNAVAIL, 503, 14, "UNAVAILABLE", "service unavailable" },
	{ AQ_ECANCELLED, 499, 1, "CANCELLED", "cancelled" },
	{ AQ_EINTERNAL, 500, 13, "INTERNAL", "internal error" },
	{ AQ_EOUTOFRANGE, 400, 11, "OUT_OF_RANGE", "out of range" },
	/* no google.rpc code has 405; UNIMPLEMENTED is what grpc-gateway and
	 * Google's front ends give a method a path does not have */
	{ AQ_ENOMETHOD, 405, 12, "UNIMPLEMENTED", "method not allowed" },
};

static const struct err_row err_internal = { AQ_EINTERNAL, 500, 13, "INTERNAL", "internal error" };

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
	}
	return code;
}

const char *aq_err_status(int code) { return err_find(code)->status; }
int aq_err_http(int code) { return err_find(code)->http; }
int aq_err_rpc_code(int code) { return err_find(code)->rpc; }
const char *aq_err_str(int code) { return err_find(code)->text; }
