/* agent_tls: the agent's certificate and its checks (tls/tls.h does the
 * cryptography).
 *
 * Trust is bootstrapped at join: the agent reaches an https:// --server
 * verifying it against --ca-file (or the system store when none is given),
 * so the join token only ever travels to the real aquiferd. It makes its
 * key locally and sends a CSR with the join; aquiferd answers a certificate
 * from the cluster CA (CN and DNS SAN the node name, IP SAN its address)
 * and the CA certificate. The three land in --state-dir as agent.key,
 * agent.crt and ca.crt (0600, atomic). From then on the agent serves its
 * API over HTTPS with that certificate, accepts /v1/intent and /v1/status
 * only from a client certificate of the cluster CA with CN TLS_CONTROL_CN
 * (besides the push secret), and presents its certificate on status reports.
 */
#include "agent/agent_internal.h"

#include <curl/curl.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_schema.h"
#include "tls/tls.h"
#include "util/ut_file.h"

static void state_path(const struct agent *a, const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "%s/%s", a->cfg.state_dir, name);
}

bool agent_tls_server(const struct agent *a)
{
	return strncmp(a->cfg.nservers ? a->cfg.servers[0] : a->cfg.server, "https://", 8) == 0;
}

int agent_tls_load(struct agent *a, aq_msg *msg)
{
	char crt[1200], key[1200], ca[1200], *ca_pem = NULL;
	int rc;

	state_path(a, "agent.crt", crt, sizeof(crt));
	state_path(a, "agent.key", key, sizeof(key));
	state_path(a, "ca.crt", ca, sizeof(ca));
	rc = ut_file_read(crt, TLS_PEM_MAX, &a->tls_cert_pem, NULL, msg);
	if (rc == AQ_ENOENT)
		return AQ_OK; /* joined a plain-HTTP aquiferd */
	if (rc != AQ_OK || (rc = ut_file_read(key, TLS_PEM_MAX, &a->tls_key_pem, NULL, msg)) != AQ_OK ||
	    (rc = ut_file_read(ca, TLS_PEM_MAX, &ca_pem, NULL, msg)) != AQ_OK)
		goto out;
	if ((rc = tls_pair_check(a->tls_cert_pem, a->tls_key_pem, crt, msg)) == AQ_EINVAL &&
	    strstr(msg->text, "expired"))
		UT_WARN("agent_tls", NULL, "%s; aquiferd will refuse this node until it joins again", msg->text);
	else if (rc != AQ_OK)
		goto out;
	rc = tls_ca_from_pem(ca_pem, &a->ca, msg);
out:
	free(ca_pem);
	return rc;
}

void agent_tls_cleanup(struct agent *a)
{
	tls_ca_free(a->ca);
	a->ca = NULL;
	free(a->tls_cert_pem);
	tls_key_free(a->tls_key_pem);
	a->tls_cert_pem = a->tls_key_pem = NULL;
}

int agent_tls_csr(struct agent *a, char **key_pem, char **csr_pem, aq_msg *msg)
{
	int rc;

	*csr_pem = NULL;
	if ((rc = tls_key_new(key_pem, msg)) != AQ_OK)
		return rc;
	if ((rc = tls_csr_new(*key_pem, a->cfg.node, csr_pem, msg)) != AQ_OK) {
		tls_key_free(*key_pem);
		*key_pem = NULL;
	}
	return rc;
}

int agent_tls_store(struct agent *a, const char *key_pem, const json_t *reply, aq_msg *msg)
{
	const char *cert = api_json_str(reply, "certificate", NULL), *ca = api_json_str(reply, "caCertificate", NULL);
	char crt[1200], key[1200], cap[1200];
	int rc;

	if (!cert || !ca)
		return aq_fail(msg, AQ_EIO, "aquiferd answered the join without a certificate");
	if ((rc = tls_pair_check(cert, key_pem, "the certificate aquiferd issued", msg)) != AQ_OK)
		return rc;
	state_path(a, "agent.crt", crt, sizeof(crt));
	state_path(a, "agent.key", key, sizeof(key));
	state_path(a, "ca.crt", cap, sizeof(cap));
	if ((rc = ut_file_write(cap, ca, strlen(ca), msg)) != AQ_OK ||
	    (rc = tls_pair_write(crt, cert, key, key_pem, msg)) != AQ_OK)
		return rc;
	agent_tls_cleanup(a);
	return agent_tls_load(a, msg);
}

void agent_tls_curl(const struct agent *a, void *curl)
{
	char crt[1200], key[1200], ca[1200];
	const char *verify = a->cfg.ca_file[0] ? a->cfg.ca_file : NULL;

	if (!agent_tls_server(a))
		return;
	state_path(a, "agent.crt", crt, sizeof(crt));
	state_path(a, "agent.key", key, sizeof(key));
	state_path(a, "ca.crt", ca, sizeof(ca));
	/* after the join the cluster CA also verifies aquiferd unless
	 * --ca-file names another one */
	if (!verify && a->ca)
		verify = ca;
	tls_curl_setup(curl, verify, a->tls_cert_pem ? crt : NULL, a->tls_cert_pem ? key : NULL, NULL);
}

int agent_tls_curl_fail(const struct agent *a, int cc, const char *detail, const char *url, aq_msg *msg)
{
	return tls_curl_fail(cc, detail, url,
			     a->cfg.ca_file[0] ? "is --ca-file the CA that signed aquiferd's certificate?"
					       : "pass --ca-file with the CA that signed aquiferd's certificate",
			     msg);
}

bool agent_tls_peer_ok(struct agent *a, struct MHD_Connection *conn, const char *url, const char *req)
{
	unsigned char *der = NULL;
	size_t len = 0;
	aq_msg msg = { .text = "" };
	int rc;

	if (!a->tls_cert_pem)
		return true;
	if (tls_mhd_peer_der(conn, &der, &len) == AQ_ENOMEM)
		return false;
	rc = tls_verify_der(a->ca, der, len, TLS_CONTROL_CN, &msg);
	free(der);
	if (rc != AQ_OK)
		UT_WARN("agent_tls", req, "%s refused: %s", url, msg.text);
	return rc == AQ_OK;
}
