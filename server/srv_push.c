/* srv_push: PUT /v1/intent to one node's agent (see srv_push.h), over
 * libcurl with the node's push secret; under TLS the agent's certificate
 * must come from the cluster CA and name the node. Runs on the
 * reconciler's pushers only (srv_pusher.h), never on the socket thread. */
#include "server/srv_push.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_intent.h"
#include "api/api_schema.h"
#include "server/srv_ca.h"
#include "tls/tls.h"
#include "util/ut_buf.h"

/* The largest answer of an agent to a push read. */
#define SRV_PUSH_REPLY_MAX 65536u

int srv_push_intent(const struct srv *srv, const json_t *node, const json_t *intent, int64_t *applied,
		json_t **failed, char *err, size_t errcap)
{
	const char *secret = api_json_str(json_object_get(node, "internal"), "pushSecret", "");
	char url[600], cerr[CURL_ERROR_SIZE] = "";
	const char *nn = api_json_str(node, "name", ""), *id = strchr(nn, '/') ? strchr(nn, '/') + 1 : nn;
	char *body = json_dumps(intent, JSON_COMPACT);
	struct curl_slist *h = NULL;
	json_t *reply = NULL;
	struct ut_buf acc;
	CURL *c = curl_easy_init();
	long code = 0;
	CURLcode cc;
	int rc = AQ_EUNAVAIL;

	ut_buf_init(&acc, SRV_PUSH_REPLY_MAX);
	if (!c || !body)
		goto out;
	snprintf(url, sizeof(url), "%s/v1/intent", api_json_str(node, "address", ""));
	tls_curl_json(c, "PUT", url, secret, body, &acc, cerr, &h);
	/* the agent answers once it applied every volume: that takes longer
	 * with more of them (api_intent.h) */
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, api_agent_call_ms(json_array_size(json_object_get(intent, "volumes"))));
	if (strncmp(url, "https://", 8) == 0)
		srv_ca_curl(srv, c, id); /* the agent's certificate: cluster CA, node name */
	cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (cc != CURLE_OK) {
		aq_msg m = { .text = "" };

		tls_curl_fail((int)cc, cerr, url, "the agent's certificate must come from the cluster CA and name the node", &m);
		snprintf(err, errcap, "push to node %s refused or failed: %s", id, m.text);
		goto out;
	}
	reply = ut_buf_len(&acc) ? json_loads(ut_buf_str(&acc), 0, NULL) : NULL;
	if (code != 200 || !reply) {
		snprintf(err, errcap, "push to %s: HTTP %ld %s", url, code, ut_buf_str(&acc));
		rc = AQ_EIO;
		goto out;
	}
	*applied = api_json_int64(reply, "appliedGeneration", 0);
	*failed = json_incref(json_object_get(reply, "failed"));
	rc = AQ_OK;
out:
	curl_slist_free_all(h);
	if (c)
		curl_easy_cleanup(c);
	free(body);
	ut_buf_cleanup(&acc);
	json_decref(reply);
	return rc;
}

