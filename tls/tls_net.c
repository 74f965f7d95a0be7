/* tls_net: the TLS glue of libmicrohttpd (GnuTLS: the peer's certificate)
 * and libcurl (OpenSSL: trust, client certificate, the peer's name), and the
 * one JSON call set-up aquiferd and the agent share; see tls.h. */
#include "tls/tls.h"

#include <curl/curl.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "util/ut_buf.h"

int tls_mhd_peer_der(struct MHD_Connection *conn, unsigned char **der, size_t *len)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	const gnutls_datum_t *list;
	unsigned n = 0;

	*der = NULL;
	*len = 0;
	if (!ci || !ci->tls_session)
		return AQ_ENOENT;
	list = gnutls_certificate_get_peers((gnutls_session_t)ci->tls_session, &n);
	if (!list || n == 0 || list[0].size == 0)
		return AQ_ENOENT;
	/* larger than any certificate we issue: keep a marker byte so that the
	 * check says "too large" rather than "none presented" */
	*len = list[0].size > TLS_DER_MAX ? TLS_DER_MAX + 1 : list[0].size;
	if (!(*der = malloc(*len)))
		return AQ_ENOMEM;
	memcpy(*der, list[0].data, *len);
	return AQ_OK;
}

/* The peer must also carry name among its DNS SANs: OpenSSL checks it while
 * it verifies the chain, before a byte of the request is sent. */
static CURLcode name_ctx(CURL *curl, void *ssl_ctx, void *name)
{
	(void)curl;
	if (X509_VERIFY_PARAM_set1_host(SSL_CTX_get0_param(ssl_ctx), name, 0) != 1)
		return CURLE_SSL_CERTPROBLEM;
	return CURLE_OK;
}

void tls_curl_setup(void *curl, const char *ca_file, const char *cert_file, const char *key_file,
		    const char *name)
{
	CURL *c = curl;

	curl_easy_setopt(c, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (ca_file && *ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, ca_file);
	if (cert_file && key_file) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, cert_file);
		curl_easy_setopt(c, CURLOPT_SSLKEY, key_file);
	}
	if (name) {
		curl_easy_setopt(c, CURLOPT_SSL_CTX_FUNCTION, name_ctx);
		curl_easy_setopt(c, CURLOPT_SSL_CTX_DATA, (void *)(uintptr_t)name);
	}
}

static size_t tls_curl_sink(char *p, size_t sz, size_t n, void *arg)
{
	return ut_buf_add(arg, p, sz * n) == AQ_OK ? sz * n : 0;
}

void tls_curl_json(void *curl, const char *method, const char *url, const char *token, const char *body,
		   struct ut_buf *reply, char *cerr, struct curl_slist **headers)
{
	char authz[4300];
	CURL *c = curl;
	struct curl_slist *h;

	snprintf(authz, sizeof(authz), "Authorization: Bearer %s", token);
	h = curl_slist_append(NULL, authz);
	if (h && !curl_slist_append(h, "Content-Type: application/json")) {
		curl_slist_free_all(h);
		h = NULL;
	}
	*headers = h;
	curl_easy_setopt(c, CURLOPT_URL, url);
	if (method)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, tls_curl_sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, reply);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
}

int tls_curl_fail(int cc, const char *detail, const char *url, const char *hint, aq_msg *msg)
{
	const char *why = detail && *detail ? detail : curl_easy_strerror((CURLcode)cc);

	switch ((CURLcode)cc) {
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
		return aq_fail(msg, AQ_EACCES, "%s: the server's certificate cannot be verified (%s)%s%s", url,
			       why, hint ? "; " : "", hint ? hint : "");
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CONNECT_ERROR:
		return aq_fail(msg, AQ_EUNAVAIL, "%s: TLS handshake failed (%s)%s%s", url, why,
			       hint ? "; " : "", hint ? hint : "");
	default:
		return aq_fail(msg, AQ_EUNAVAIL, "%s: %s", url, why);
	}
}
