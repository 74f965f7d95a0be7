/* cli_http: JSON over HTTP with libcurl (see cli_http.h). */
#include "cli/cli_http.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_buf.h"

void cli_http_init(struct cli_http *h, const char *endpoint, const char *token,
		   const char *ca_file)
{
	h->endpoint = endpoint;
	h->token = token;
	h->ca_file = ca_file;
	h->insecure = false;
	h->timeout_s = 60;
	h->curl = NULL;
	h->at = 0;
}

void cli_http_cleanup(struct cli_http *h)
{
	if (h->curl)
		curl_easy_cleanup(h->curl);
	h->curl = NULL;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct ut_buf *b = userdata;
	size_t n = size * nmemb;

	ut_buf_add(b, ptr, n);
	return b->err ? 0 : n;
}

/* Entry k of h->endpoint (its URLs comma-separated) into *base, without
 * trailing slashes; the number of entries. */
static unsigned endpoint_entry(const struct cli_http *h, unsigned k, const char **base, size_t *len)
{
	const char *s = h->endpoint;
	unsigned n = 0;

	for (;;) {
		size_t l = strcspn(s, ",");

		if (n == k) {
			*base = s;
			*len = l;
			while (*len > 0 && s[*len - 1] == '/')
				(*len)--;
		}
		n++;
		if (!s[l])
			return n;
		s += l + 1;
	}
}

int cli_http_call(struct cli_http *h, const char *method, const char *path, const json_t *body,
		  long *status, json_t **resp, aq_msg *msg)
{
	struct curl_slist *hdrs = NULL;
	struct ut_buf url, auth, got;
	char errbuf[CURL_ERROR_SIZE] = "";
	char *payload = NULL;
	const char *base = h->endpoint;
	json_error_t jerr;
	CURLcode cc = CURLE_OK;
	int rc = AQ_OK;
	size_t elen = strlen(h->endpoint);
	unsigned n = endpoint_entry(h, 0, &base, &elen), k = h->at % n;

	ut_buf_init(&url, CLI_BUF_MAX);
	ut_buf_init(&auth, CLI_BUF_MAX);
	ut_buf_init(&got, CLI_BUF_MAX);
	*resp = NULL;
	if (h->curl == NULL && (h->curl = curl_easy_init()) == NULL) {
		rc = aq_fail(msg, AQ_ENOMEM, "cannot start libcurl");
		goto out;
	}
	hdrs = curl_slist_append(hdrs, "Accept: application/json");
	if (body) {
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
		if ((payload = json_dumps(body, JSON_COMPACT)) == NULL) {
			rc = AQ_ENOMEM;
			goto out;
		}
	}
	if (h->token && *h->token) {
		ut_buf_addf(&auth, "Authorization: Bearer %s", h->token);
		hdrs = curl_slist_append(hdrs, ut_buf_str(&auth));
	}
	if (auth.err || hdrs == NULL) {
		rc = AQ_ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < n; i++, k = (k + 1) % n) {
		endpoint_entry(h, k, &base, &elen);
		ut_buf_reset(&url);
		ut_buf_reset(&got);
		errbuf[0] = '\0';
		ut_buf_add(&url, base, elen);
		ut_buf_adds(&url, path);
		if (url.err) {
			rc = AQ_ENOMEM;
			goto out;
		}
		curl_easy_reset(h->curl);
		curl_easy_setopt(h->curl, CURLOPT_URL, ut_buf_str(&url));
		curl_easy_setopt(h->curl, CURLOPT_CUSTOMREQUEST, method);
		curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &got);
		curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, errbuf);
		curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(h->curl, CURLOPT_TIMEOUT, h->timeout_s > 0 ? h->timeout_s : 60L);
		curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT, 10L);
		curl_easy_setopt(h->curl, CURLOPT_USERAGENT, "aquifer-cli/" AQ_VERSION);
		curl_easy_setopt(h->curl, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
		if (h->ca_file && *h->ca_file)
			curl_easy_setopt(h->curl, CURLOPT_CAINFO, h->ca_file);
		if (h->insecure) {
			curl_easy_setopt(h->curl, CURLOPT_SSL_VERIFYPEER, 0L);
			curl_easy_setopt(h->curl, CURLOPT_SSL_VERIFYHOST, 0L);
		}
		if (payload) {
			curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, payload);
			curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(payload));
		} else if (strcmp(method, "POST") == 0) {
			curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, "");
			curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE, 0L);
		}
		cc = curl_easy_perform(h->curl);
		/* nothing was sent: the next replica may take it */
		if (cc != CURLE_COULDNT_CONNECT && cc != CURLE_COULDNT_RESOLVE_HOST)
			break;
	}
	if (cc != CURLE_OK) {
		if (got.err)
			rc = aq_fail(msg, AQ_ETOOBIG, "answer from %.*s too large", (int)elen, base);
		else if (cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE)
			rc = aq_fail(msg, AQ_EUNAVAIL,
				     "cannot verify the TLS certificate of %.*s: %s. Pass --ca-file FILE (or `aquifer config set "
				     "ca_file FILE`, or AQUIFER_CA_FILE) with the CA that signed it; --insecure skips the check",
				     (int)elen, base, *errbuf ? errbuf : curl_easy_strerror(cc));
		else
			rc = aq_fail(msg, AQ_EUNAVAIL, "cannot reach %s: %s", n > 1 ? h->endpoint : base,
				     *errbuf ? errbuf : curl_easy_strerror(cc));
		goto out;
	}
	h->at = k;
	curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, status);
	if (got.len > 0) {
		*resp = json_loadb(got.p, got.len, JSON_DECODE_ANY, &jerr);
		if (*resp == NULL)
			aq_fail(msg, AQ_EINVAL, "%.200s", ut_buf_str(&got));
	}
out:
	curl_slist_free_all(hdrs);
	free(payload);
	ut_buf_cleanup(&url);
	ut_buf_cleanup(&auth);
	ut_buf_cleanup(&got);
	return rc;
}
