/* cli_http: one JSON request to aquiferd over libcurl.
 *
 * cli_http_call() sends METHOD endpoint+path (path carries its query string)
 * with "Authorization: Bearer TOKEN" (when a token is set) and body as JSON
 * (when not NULL). Any HTTP answer is AQ_OK: *status gets the HTTP status
 * and *resp the parsed JSON (new reference; NULL if the body was empty or
 * not JSON, in which case the start of the raw body is in msg). A request
 * that never got an answer (connection refused, DNS, timeout, TLS) returns
 * AQ_EUNAVAIL with curl's reason in msg (for a certificate that does not
 * verify, naming --ca-file). Answers are capped at 64 MiB. An https://
 * endpoint is verified against ca_file (or the system store) unless
 * insecure is set.
 *
 * endpoint may list several aquiferd replicas, comma-separated: a request
 * goes to the one that answered last and, while one cannot be connected to
 * (refused, unresolvable: nothing was sent), to the next. A request that
 * was sent and got no answer (timeout) is not sent again: it may have
 * taken effect.
 */
#ifndef AQ_CLI_HTTP_H
#define AQ_CLI_HTTP_H

#include <jansson.h>
#include <stdbool.h>

#include "api/api_error.h"

struct cli_http {
	const char *endpoint;   /* "http://127.0.0.1:8080", no trailing path; or URLs comma-separated */
	const char *token;      /* may be NULL */
	const char *ca_file;    /* may be NULL: the system store */
	bool insecure;          /* do not verify the server (--insecure) */
	long timeout_s;         /* whole request; 0 = 60 s */
	void *curl;             /* CURL handle, reused; created on first call */
	unsigned at;            /* the endpoint entry that answered last */
};

void cli_http_init(struct cli_http *h, const char *endpoint, const char *token,
		   const char *ca_file);
void cli_http_cleanup(struct cli_http *h);

int cli_http_call(struct cli_http *h, const char *method, const char *path, const json_t *body,
		  long *status, json_t **resp, aq_msg *msg);

#endif
