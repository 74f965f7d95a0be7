/* api_error: the one error enum of Aquifer and its table.
 *
 * Every function that can fail returns an int: AQ_OK (0) or a negative code from
 * this enum. Codes that mean what an errno means reuse it (AQ_ENOMEM = -ENOMEM);
 * project codes live below -1000. One table maps each code to the google.rpc
 * status name and HTTP status; only the server's boundary (srv_) uses the HTTP
 * side. db_, api_ and agent_ code never know about HTTP.
 *
 * A failing check explains itself in an aq_msg, a caller-owned buffer:
 *     return aq_fail(msg, AQ_EINVAL, "capacityGib must be at least %d", min);
 */
#ifndef AQ_API_ERROR_H
#define AQ_API_ERROR_H

#include <errno.h>
#include <stddef.h>

enum aq_err {
	AQ_OK = 0,
	AQ_ENOMEM = -ENOMEM,
	AQ_EIO = -EIO,
	AQ_EINVAL = -EINVAL,           /* INVALID_ARGUMENT */
	AQ_ENOENT = -ENOENT,           /* NOT_FOUND */
	AQ_EEXIST = -EEXIST,           /* ALREADY_EXISTS */
	AQ_EACCES = -EACCES,           /* PERMISSION_DENIED */
	AQ_ETOOBIG = -E2BIG,           /* body too large: 413 */
	AQ_EBUSY = -EBUSY,             /* ABORTED: concurrent change, retry */
	AQ_ETIMEDOUT = -ETIMEDOUT,     /* DEADLINE_EXCEEDED */
	AQ_EUNAUTH = -1001,            /* UNAUTHENTICATED */
	AQ_EPRECOND = -1002,           /* FAILED_PRECONDITION */
	AQ_EEXHAUSTED = -1003,         /* RESOURCE_EXHAUSTED */
	AQ_EUNIMPL = -1004,            /* UNIMPLEMENTED */
	AQ_EUNAVAIL = -1005,           /* UNAVAILABLE */
	AQ_ECANCELLED = -1006,         /* CANCELLED */
	AQ_EINTERNAL = -1007,          /* INTERNAL */
	AQ_EOUTOFRANGE = -1008,        /* OUT_OF_RANGE */
	AQ_ENOMETHOD = -1009,          /* 405: route exists, method does not */
};

/* A human-readable explanation that travels with an error code, and the
 * request field it is about when one is (google.rpc.BadRequest). */
typedef struct aq_msg {
	char text[512];
	char field[128];   /* "storagePool.capacityGib", or "" */
} aq_msg;

/* Fill msg (may be NULL) with a printf-formatted text and return code;
 * the field is cleared. */
int aq_fail(aq_msg *msg, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* aq_fail naming the request field the failure is about. */
int aq_fail_field(aq_msg *msg, int code, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The field an INVALID_ARGUMENT message is about: msg->field when set, else
 * the field path the message starts with ("capacityGib must be ...",
 * "protocols: ..."): a lowercase identifier followed by ':' or holding a
 * capital or a dot. "" when it names none. */
void aq_msg_field(const aq_msg *msg, char *out, size_t cap);

/* google.rpc status name ("NOT_FOUND"), HTTP status (404), numeric google.rpc
 * code (5) and a default message for code. Unknown codes map to INTERNAL. */
const char *aq_err_status(int code);
int aq_err_http(int code);
int aq_err_rpc_code(int code);
const char *aq_err_str(int code);
/* google.rpc.ErrorInfo.domain: the service whose API Aquifer serves. */
#define AQ_ERR_DOMAIN "netapp.googleapis.com"

/* google.rpc.ErrorInfo.reason for code: UPPER_SNAKE_CASE ("RESOURCE_NOT_FOUND"). */
const char *aq_err_reason(int code);

#endif
