/* srv_ca: aquiferd's side of TLS (tls/tls.h does the cryptography).
 *
 * The cluster CA is ca.crt + ca.key in the state folder (the folder of
 * --db). `aquiferd ca init` creates it, `aquiferd ca issue` issues a server
 * certificate from it; a serve with --tls-cert/--tls-key creates it when
 * missing, and (re)issues aquiferd's client certificate (client.crt +
 * client.key, CN TLS_CONTROL_CN) when missing, foreign or within 30 days of
 * expiry. Without TLS aquiferd serves plain HTTP on loopback only.
 */
#ifndef AQ_SRV_CA_H
#define AQ_SRV_CA_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "api/api_error.h"

struct srv;
struct srv_req;

/* aquiferd ca init | issue: options already parsed into srv->cfg and a. */
struct srv_ca_args {
	const char *dns[8];
	const char *ip[8];
	int ndns, nip;
	const char *out_cert, *out_key;
	long days;
};
int srv_ca_cmd(struct srv *srv, const char *sub, const struct srv_ca_args *a);

/* Before serving: the --listen policy (plain HTTP only on loopback unless
 * --insecure-listen), and with TLS the server pair, the CA and the client
 * certificate loaded into srv. Prints what it serves. */
int srv_ca_setup(struct srv *srv, aq_msg *msg);
void srv_ca_cleanup(struct srv *srv);
/* Whether aquiferd serves HTTPS. */
bool srv_ca_tls(const struct srv *srv);

/* Join: with TLS the join body must carry "csr" (PEM); *extra gets
 * {certificate, caCertificate} for the answer (NULL without TLS). The
 * certificate names the node (CN, DNS SAN) and its address' host (IP SAN,
 * or DNS SAN for a name). */
int srv_ca_join(struct srv_req *req, const char *node, const char *address, json_t **extra);
/* Routes with SRV_F_NODECERT, under TLS: the client certificate req->peer
 * holds must be from the cluster CA and name the token's node. Logs why a
 * node is refused. */
int srv_ca_check_node(struct srv_req *req);
/* Pushes to an agent at an https:// address: verify it against the
 * cluster CA and its node name, present aquiferd's client certificate. */
void srv_ca_curl(const struct srv *srv, void *curl, const char *node_id);

#endif
