/* tls: the cluster CA and the TLS plumbing shared by aquiferd and the agent.
 *
 * Keys are ECDSA P-256, certificates X.509 v3 signed with SHA-256 (OpenSSL).
 * The cluster CA lives as ca.crt + ca.key in aquiferd's state folder; it
 * issues the server certificate (aquiferd ca issue), aquiferd's own client
 * certificate (CN TLS_CONTROL_CN) and each agent's certificate from the CSR
 * the agent sends with its join (CN and DNS SAN = node name).
 *
 * Every file written here is private (mode 0600) and atomic: a temporary
 * file, fsync, rename, fsync of the folder, so a kill -9 leaves the old or
 * the new file, never half of one.
 *
 * Peer checks (tls_verify_der) take the DER certificate a TLS peer presented
 * (tls_mhd_peer_der reads it from a libmicrohttpd/GnuTLS connection) and say
 * in msg why one is refused: none presented, expired, not yet valid, not
 * issued by the cluster CA, or issued to another name.
 *
 * Functions return AQ_OK or a negative AQ_E* code with msg saying why;
 * strings they return in char ** are malloc'd and the caller frees them.
 */
#ifndef AQ_TLS_H
#define AQ_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include "api/api_error.h"

/* The common name of aquiferd's client certificate. It holds a ':' so that
 * no node name (letters, digits, hyphens) can ever be issued it. */
#define TLS_CONTROL_CN "aquiferd:control-plane"
/* A CSR in a join body: larger is refused before it is parsed. */
#define TLS_CSR_MAX 8192
/* A PEM file we read (certificate, key, CA bundle). */
#define TLS_PEM_MAX (256 * 1024)
/* The largest DER certificate a peer may present that we look at. */
#define TLS_DER_MAX 16384

#define TLS_CA_DAYS 3650
#define TLS_CERT_DAYS 397

/* A certificate authority: its certificate, and its key when it may issue. */
struct tls_ca;

/* Who a certificate is for: the subject CN, and SANs (NULL-terminated). */
struct tls_name {
	const char *cn;
	const char *const *dns;
	const char *const *ip;   /* IPv4 or IPv6 literals */
	bool server, client;     /* extended key usages */
};

/* A fresh P-256 private key (PKCS#8 PEM). */
int tls_key_new(char **key_pem, aq_msg *msg);
/* Wipe (explicit_bzero: a memset before free may be optimised away) and
 * free a private key PEM; NULL is fine. */
void tls_key_free(char *key_pem);
/* A CSR for key_pem with subject CN cn (PEM). */
int tls_csr_new(const char *key_pem, const char *cn, char **csr_pem, aq_msg *msg);

/* Create DIR/ca.crt and DIR/ca.key; AQ_EEXIST if a CA is already there. */
int tls_ca_init(const char *dir, aq_msg *msg);
/* Load DIR/ca.crt and DIR/ca.key (AQ_ENOENT if there is no CA). */
int tls_ca_load(const char *dir, struct tls_ca **ca, aq_msg *msg);
/* A CA that only verifies: cert_pem is its certificate. */
int tls_ca_from_pem(const char *cert_pem, struct tls_ca **ca, aq_msg *msg);
void tls_ca_free(struct tls_ca *ca);
/* The CA certificate as PEM (borrowed). */
const char *tls_ca_pem(const struct tls_ca *ca);

/* Issue a new key and a certificate for n, valid days days from now. */
int tls_issue_key(const struct tls_ca *ca, const struct tls_name *n, long days, char **cert_pem,
		  char **key_pem, aq_msg *msg);
/* Issue a certificate for the public key of a CSR (csr_len bytes of PEM,
 * at most TLS_CSR_MAX). The CSR's own signature must hold and its key be
 * P-256 or RSA >= 2048 bits; its subject is ignored, n decides the names. */
int tls_issue_csr(const struct tls_ca *ca, const char *csr_pem, size_t csr_len,
		  const struct tls_name *n, long days, char **cert_pem, aq_msg *msg);
/* Write cert_pem and key_pem to the two files (key first). */
int tls_pair_write(const char *cert_path, const char *cert_pem, const char *key_path,
		   const char *key_pem, aq_msg *msg);
/* The first certificate of cert_pem and key_pem parse and belong together,
 * and the certificate is within its validity (what names it in msg). */
int tls_pair_check(const char *cert_pem, const char *key_pem, const char *what, aq_msg *msg);
/* Whether the PEM certificate in path is valid for at least secs more
 * seconds and was issued by ca. */
bool tls_cert_fresh(const struct tls_ca *ca, const char *path, long secs);

/* Check a peer certificate (DER, der_len bytes, NULL = none presented):
 * issued by ca, within its validity, and with subject CN cn (when cn is not
 * NULL). AQ_EUNAUTH with the reason in msg otherwise. */
int tls_verify_der(const struct tls_ca *ca, const unsigned char *der, size_t der_len,
		   const char *cn, aq_msg *msg);

/* The certificate the peer of a libmicrohttpd TLS connection presented, as
 * DER in *der (malloc'd; NULL when none or the connection is not TLS). */
struct MHD_Connection;
int tls_mhd_peer_der(struct MHD_Connection *conn, unsigned char **der, size_t *len);

/* GnuTLS priorities of both HTTPS servers (libmicrohttpd): TLS 1.2 and 1.3
 * only; TLS 1.0/1.1 (and SSL 3) handshakes are refused. */
#define TLS_MHD_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/* libcurl for a TLS peer: TLS 1.2 at least, verify it against ca_file (NULL:
 * the system store), require name (when not NULL) among its DNS SANs besides
 * the URL's host, and present cert_file/key_file (when not NULL). */
void tls_curl_setup(void *curl, const char *ca_file, const char *cert_file, const char *key_file,
		    const char *name);
/* One JSON call between aquiferd and an agent, set up on curl (a fresh or a
 * reset handle): method (NULL: POST) to url with "Authorization: Bearer
 * token" and the JSON text body, 5 s in all and 1 s to connect, no signals;
 * the answer is appended to reply (its cap bounds what is read: past it the
 * transfer fails), libcurl's error text goes to cerr[CURL_ERROR_SIZE]. The
 * caller adds its TLS options, runs curl_easy_perform, then frees *headers
 * (set here, NULL when out of memory) with curl_slist_free_all. */
struct curl_slist;
struct ut_buf;
void tls_curl_json(void *curl, const char *method, const char *url, const char *token, const char *body,
		   struct ut_buf *reply, char *cerr, struct curl_slist **headers);
/* Explain a failed libcurl call (curl code cc, detail its error buffer or
 * NULL) in msg; TLS verification failures add hint (the remedy, or NULL).
 * AQ_EACCES when the peer's certificate does not verify (retrying will not
 * help), else AQ_EUNAVAIL. */
int tls_curl_fail(int cc, const char *detail, const char *url, const char *hint, aq_msg *msg);

/* ---- Listener limits of both HTTP servers (tls_listen.c) ----
 * Against unauthenticated exhaustion (aquiferd and the agent API; the NFS
 * server has its own, nfs_srv.h): at most max_conns connections at once and
 * per_ip from one address (more are closed at accept); header_s seconds of
 * silence close a connection that has not shown credentials yet, whether it
 * is still in its TLS handshake, in the head of its first request or idle
 * after a request without a token; a connection whose request carried valid
 * credentials may then idle idle_s seconds between keep-alive requests. The
 * servers check credentials when the head has arrived and answer at once
 * when they fail, so no body is read before them. */
struct tls_listen_limits {
	unsigned max_conns;
	unsigned per_ip;
	unsigned header_s;
	unsigned idle_s;
};

/* Option items tls_listen_mhd_options fills, MHD_OPTION_END included. */
#define TLS_LISTEN_MHD_OPTS 6

/* Raise the soft RLIMIT_NOFILE to the hard limit (as far as allowed);
 * returns the soft limit in force afterwards. */
unsigned long tls_listen_nofile(void);
/* libmicrohttpd options for l into opts[TLS_LISTEN_MHD_OPTS]: connection
 * limit (no more than the descriptors the process may open, less reserve
 * for everything else it opens), per-IP limit, header_s as the connection
 * timeout, a log that says each kind of refusal once a minute (prog names
 * the program), and with tls the priorities above. Pass them first
 * (MHD_OPTION_ARRAY before any other option), as the log must be. */
struct MHD_OptionItem;
void tls_listen_mhd_options(const struct tls_listen_limits *l, bool tls, unsigned reserve, const char *prog,
			    struct MHD_OptionItem *opts);
/* The head of conn's request announces a body: true with its Content-Length
 * in *len (0 when chunked, whose length comes with the chunks). */
bool tls_listen_body(struct MHD_Connection *conn, unsigned long long *len);
/* The request on conn carried valid credentials: the connection may now
 * idle l->idle_s seconds. */
void tls_listen_trusted(struct MHD_Connection *conn, const struct tls_listen_limits *l);

#endif
