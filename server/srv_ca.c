/* srv_ca: the cluster CA commands, the TLS set-up of a serve, certificates
 * for joining agents and the client-certificate check of node routes (see
 * srv_ca.h). */
#include "server/srv_ca.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/srv_internal.h"
#include "server/srv_req.h"
#include "tls/tls.h"
#include "util/ut_file.h"
#include "util/ut_hostport.h"
#include "util/ut_log.h"

/* The client certificate is renewed when it has less than this left. */
#define SRV_CLIENT_RENEW_SECS (30L * 86400)

/* The CA lives with the state (srv_cfg_state_dir() filled it). */
static void ca_dir(const struct srv_cfg *cfg, char *out, size_t cap)
{
	snprintf(out, cap, "%s", cfg->state_dir);
}

static int ca_issue(struct srv *srv, const struct srv_ca_args *a)
{
	struct tls_ca *ca = NULL;
	const char *dns[9] = { NULL }, *ip[9] = { NULL };
	struct tls_name n = { .dns = dns, .ip = ip, .server = true, .client = false };
	char dflt_cert[1100], dflt_key[1100], *cert = NULL, *key = NULL;
	const char *out_cert = a->out_cert, *out_key = a->out_key;
	aq_msg msg = { .text = "" };
	int rc;

	if (a->ndns + a->nip == 0) {
		fprintf(stderr, "aquiferd ca issue: give at least one --dns NAME or --ip ADDR\n");
		return 2;
	}
	for (int i = 0; i < a->ndns; i++)
		dns[i] = a->dns[i];
	for (int i = 0; i < a->nip; i++)
		ip[i] = a->ip[i];
	n.cn = a->ndns ? a->dns[0] : a->ip[0];
	snprintf(dflt_cert, sizeof(dflt_cert), "%s/server.crt", srv->ca_dir);
	snprintf(dflt_key, sizeof(dflt_key), "%s/server.key", srv->ca_dir);
	if (!out_cert)
		out_cert = dflt_cert;
	if (!out_key)
		out_key = dflt_key;
	if ((rc = tls_ca_load(srv->ca_dir, &ca, &msg)) == AQ_ENOENT)
		aq_fail(&msg, rc, "no cluster CA in %s; run aquiferd ca init --db %s first", srv->ca_dir, srv->cfg.db_path);
	if (rc == AQ_OK)
		rc = tls_issue_key(ca, &n, a->days, &cert, &key, &msg);
	if (rc == AQ_OK)
		rc = tls_pair_write(out_cert, cert, out_key, key, &msg);
	if (rc == AQ_OK)
		printf("%s\n%s\n", out_cert, out_key);
	else
		fprintf(stderr, "aquiferd ca issue: %s\n", msg.text);
	tls_ca_free(ca);
	free(cert);
	tls_key_free(key);
	return rc == AQ_OK ? 0 : rc == AQ_EINVAL ? 2 : 1;
}

int srv_ca_cmd(struct srv *srv, const char *sub, const struct srv_ca_args *a)
{
	aq_msg msg = { .text = "" };

	ca_dir(&srv->cfg, srv->ca_dir, sizeof(srv->ca_dir));
	if (strcmp(sub, "init") == 0) {
		if (tls_ca_init(srv->ca_dir, &msg) != AQ_OK) {
			fprintf(stderr, "aquiferd ca init: %s\n", msg.text);
			return 1;
		}
		printf("%s/ca.crt\n", srv->ca_dir);
		return 0;
	}
	if (strcmp(sub, "issue") == 0)
		return ca_issue(srv, a);
	fprintf(stderr, "aquiferd ca: expected init or issue, got \"%s\"\n", sub);
	return 2;
}

/* HOST of HOST:PORT, without IPv6 brackets ("" when it is no HOST:PORT:
 * not loopback, and srv_http refuses it when it starts). */
static void listen_host(const char *listen, char *out, size_t cap)
{
	struct ut_hostport hp;

	snprintf(out, cap, "%s", ut_hostport_parse(listen, 0, UT_HP_PORT0, &hp, NULL) == AQ_OK ? hp.host : "");
}

static bool is_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (strcmp(host, "localhost") == 0)
		return true;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* aquiferd's client certificate for pushes: kept while fresh. */
static int client_cert(struct srv *srv, aq_msg *msg)
{
	struct tls_name n = { .cn = TLS_CONTROL_CN, .client = true };
	char crt[1100], key[1100], *cp = NULL, *kp = NULL;
	int rc = AQ_OK;

	snprintf(crt, sizeof(crt), "%s/client.crt", srv->ca_dir);
	snprintf(key, sizeof(key), "%s/client.key", srv->ca_dir);
	if (tls_cert_fresh(srv->ca, crt, SRV_CLIENT_RENEW_SECS))
		return AQ_OK;
	if ((rc = tls_issue_key(srv->ca, &n, TLS_CERT_DAYS, &cp, &kp, msg)) == AQ_OK)
		rc = tls_pair_write(crt, cp, key, kp, msg);
	free(cp);
	tls_key_free(kp);
	return rc;
}

int srv_ca_setup(struct srv *srv, aq_msg *msg)
{
	struct srv_cfg *cfg = &srv->cfg;
	char host[128];
	int rc;

	ca_dir(cfg, srv->ca_dir, sizeof(srv->ca_dir));
	listen_host(cfg->listen, host, sizeof(host));
	if (!cfg->tls_cert[0] != !cfg->tls_key[0])
		return aq_fail(msg, AQ_EINVAL, "--tls-cert and --tls-key go together");
	if (!cfg->tls_cert[0]) {
		if (!is_loopback(host) && !cfg->insecure_listen)
			return aq_fail(msg, AQ_EINVAL,
				       "refusing plain HTTP on %s: bearer tokens would cross the network in clear. "
				       "Serve HTTPS with --tls-cert FILE --tls-key FILE (aquiferd ca init; aquiferd ca issue), "
				       "or pass --insecure-listen to accept the risk",
				       cfg->listen);
		UT_INFO("srv_ca", NULL, "no --tls-cert/--tls-key: serving plain HTTP%s",
			is_loopback(host) ? " on loopback only" : " on a non-loopback address (--insecure-listen)");
		return AQ_OK;
	}
	if ((rc = ut_file_read(cfg->tls_cert, TLS_PEM_MAX, &srv->tls_cert_pem, NULL, msg)) != AQ_OK ||
	    (rc = ut_file_read(cfg->tls_key, TLS_PEM_MAX, &srv->tls_key_pem, NULL, msg)) != AQ_OK ||
	    (rc = tls_pair_check(srv->tls_cert_pem, srv->tls_key_pem, "--tls-cert/--tls-key", msg)) != AQ_OK)
		return rc;
	rc = tls_ca_load(srv->ca_dir, &srv->ca, msg);
	if (rc == AQ_ENOENT) {
		if ((rc = tls_ca_init(srv->ca_dir, msg)) != AQ_OK)
			return rc;
		UT_INFO("srv_ca", NULL, "created the cluster CA %s/ca.crt", srv->ca_dir);
		rc = tls_ca_load(srv->ca_dir, &srv->ca, msg);
	}
	if (rc != AQ_OK || (rc = client_cert(srv, msg)) != AQ_OK)
		return rc;
	return AQ_OK;
}

void srv_ca_cleanup(struct srv *srv)
{
	tls_ca_free(srv->ca);
	srv->ca = NULL;
	free(srv->tls_cert_pem);
	tls_key_free(srv->tls_key_pem);
	srv->tls_cert_pem = srv->tls_key_pem = NULL;
}

bool srv_ca_tls(const struct srv *srv)
{
	return srv->tls_cert_pem != NULL;
}

/* HOST of an "https://HOST:PORT" address, without brackets. */
static int address_host(const char *address, char *out, size_t cap)
{
	const char *h = strstr(address, "://");
	char hostport[UT_HOSTPORT_TEXT_MAX];
	struct ut_hostport hp;

	if (!h)
		return AQ_EINVAL;
	h += 3;
	if (strcspn(h, "/") >= sizeof(hostport))
		return AQ_EINVAL;
	snprintf(hostport, sizeof(hostport), "%.*s", (int)strcspn(h, "/"), h);
	if (ut_hostport_parse(hostport, 443, 0, &hp, NULL) != AQ_OK || strlen(hp.host) >= cap)
		return AQ_EINVAL;
	snprintf(out, cap, "%s", hp.host);
	return AQ_OK;
}

int srv_ca_join(struct srv_req *req, const char *node, const char *address, json_t **extra)
{
	const json_t *csr = json_object_get(req->body, "csr");
	char host[256], *cert = NULL;
	unsigned char buf[16];
	const char *dns[3] = { node, NULL, NULL }, *ip[2] = { NULL, NULL };
	struct tls_name n = { .cn = node, .dns = dns, .ip = ip, .server = true, .client = true };
	int rc;

	*extra = NULL;
	if (!srv_ca_tls(req->srv))
		return csr ? aq_fail(&req->msg, AQ_EPRECOND, "this aquiferd serves plain HTTP and issues no certificates; join without a csr")
			   : AQ_OK;
	if (!json_is_string(csr))
		return aq_fail(&req->msg, AQ_EINVAL,
			       "this aquiferd serves TLS: the join needs csr, a PEM certificate request for the agent's key "
			       "(an aquifer-agent joining an https:// server sends it)");
	if (strncmp(address, "https://", 8) != 0)
		return aq_fail(&req->msg, AQ_EINVAL, "this aquiferd serves TLS: address must be the agent's https:// URL");
	if (address_host(address, host, sizeof(host)) != AQ_OK)
		return aq_fail(&req->msg, AQ_EINVAL, "address \"%s\" names no host", address);
	if (inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1)
		ip[0] = host;
	else if (strcmp(host, node) != 0)
		dns[1] = host;
	rc = tls_issue_csr(req->srv->ca, json_string_value(csr), json_string_length(csr), &n, TLS_CERT_DAYS, &cert,
			   &req->msg);
	if (rc != AQ_OK)
		return rc;
	*extra = json_pack("{s:s,s:s}", "certificate", cert, "caCertificate", tls_ca_pem(req->srv->ca));
	free(cert);
	return *extra ? AQ_OK : AQ_ENOMEM;
}

int srv_ca_check_node(struct srv_req *req)
{
	int rc;

	if (!srv_ca_tls(req->srv))
		return AQ_OK;
	rc = tls_verify_der(req->srv->ca, req->peer, req->peer_len, req->auth.subject, &req->msg);
	if (rc != AQ_OK)
		UT_WARN("srv_ca", req->id, "%s %s from node %s refused: %s", req->method, req->url, req->auth.subject,
			req->msg.text);
	return rc;
}

void srv_ca_curl(const struct srv *srv, void *curl, const char *node_id)
{
	char ca[1100], crt[1100], key[1100];

	if (!srv->ca)
		return;
	snprintf(ca, sizeof(ca), "%s/ca.crt", srv->ca_dir);
	snprintf(crt, sizeof(crt), "%s/client.crt", srv->ca_dir);
	snprintf(key, sizeof(key), "%s/client.key", srv->ca_dir);
	/* libcurl copies the strings it is given; node_id stays the caller's */
	tls_curl_setup(curl, ca, crt, key, node_id);
}
