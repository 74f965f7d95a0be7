/* srv_push: PUT /v1/intent to one node's agent (see srv_push.h), over
 * libcurl with the node's push secret; under TLS the agent's certificate
 * must come from the cluster CA and name the node. Runs on the
 * reconciler's thread only, never on the socket thread. */
#include "server/srv_push.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_schema.h"
#include "server/srv_ca.h"
#include "tls/tls.h"

static size_t curl_sink(char *p, size_t sz, size_t n, void *arg)
{
	json_t **acc = arg;
	const char *old = json_string_value(*acc);
	size_t ol = old ? strlen(old) : 0, add = sz * n;
	char *buf;

	if (ol + add > 65536)
		return 0;
	buf = malloc(ol + add + 1);
	if (!buf)
		return 0;
	memcpy(buf, old ? old : "", ol);
	memcpy(buf + ol, p, add);
	buf[ol + add] = '\0';
	json_decref(*acc);
	*acc = json_string(buf);
	free(buf);
	return add;
}

int srv_push_intent(const struct srv *srv, const json_t *node, const json_t *intent, int64_t *applied,
		json_t **failed, char *err, size_t errcap)
{
	const char *secret = api_json_str(json_object_get(node, "internal"), "pushSecret", "");
	char url[600], authz[200], cerr[CURL_ERROR_SIZE] = "";
	const char *nn = api_json_str(node, "name", ""), *id = strchr(nn, '/') ? strchr(nn, '/') + 1 : nn;
	char *body = json_dumps(intent, JSON_COMPACT);
	struct curl_slist *h = NULL;
	json_t *acc = NULL, *reply = NULL;
	CURL *c = curl_easy_init();
	long code = 0;
	CURLcode cc;
	int rc = AQ_EUNAVAIL;

	if (!c || !body)
		goto out;
	snprintf(url, sizeof(url), "%s/v1/intent", api_json_str(node, "address", ""));
	snprintf(authz, sizeof(authz), "Authorization: Bearer %s", secret);
	h = curl_slist_append(h, authz);
	h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, curl_sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &acc);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
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
	reply = acc ? json_loads(json_string_value(acc), 0, NULL) : NULL;
	if (code != 200 || !reply) {
		snprintf(err, errcap, "push to %s: HTTP %ld %s", url, code, acc ? json_string_value(acc) : "");
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
	json_decref(acc);
	json_decref(reply);
	return rc;
}

