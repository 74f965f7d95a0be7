/* tls: keys, CSRs, the cluster CA and peer checks with OpenSSL (see tls.h).
 * The libmicrohttpd and libcurl glue is in tls_net.c. */
#include "tls/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/ut_file.h"

struct tls_ca {
	X509 *cert;
	EVP_PKEY *key;       /* NULL: verify only */
	X509_STORE *store;   /* holds cert, for tls_verify_der */
	char *pem;
};

/* ---- PEM helpers ---- */

/* The OpenSSL error queue's last reason, for messages. */
static const char *ossl_why(void)
{
	static __thread char buf[256];
	unsigned long e = ERR_get_error(), last = e;

	while (e) {
		last = e;
		e = ERR_get_error();
	}
	if (!last)
		return "unknown OpenSSL error";
	ERR_error_string_n(last, buf, sizeof(buf));
	return buf;
}

static char *bio_text(BIO *b)
{
	char *p = NULL, *out;
	long n = BIO_get_mem_data(b, &p);

	if (n < 0 || !(out = malloc((size_t)n + 1)))
		return NULL;
	memcpy(out, p, (size_t)n);
	out[n] = '\0';
	return out;
}

static char *key_pem(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *out = NULL;

	if (b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) == 1)
		out = bio_text(b);
	BIO_free(b);
	return out;
}

static char *cert_pem(X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *out = NULL;

	if (b && PEM_write_bio_X509(b, x) == 1)
		out = bio_text(b);
	BIO_free(b);
	return out;
}

static EVP_PKEY *key_gen(void)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
	EVP_PKEY *k = NULL;

	if (!c || EVP_PKEY_keygen_init(c) != 1 ||
	    EVP_PKEY_CTX_set_ec_paramgen_curve_nid(c, NID_X9_62_prime256v1) != 1 ||
	    EVP_PKEY_keygen(c, &k) != 1)
		k = NULL;
	EVP_PKEY_CTX_free(c);
	return k;
}

static EVP_PKEY *key_parse(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;

	BIO_free(b);
	return k;
}

void tls_key_free(char *key_pem)
{
	if (key_pem)
		explicit_bzero(key_pem, strlen(key_pem));
	free(key_pem);
}

int tls_key_new(char **pem, aq_msg *msg)
{
	EVP_PKEY *k = key_gen();

	*pem = k ? key_pem(k) : NULL;
	EVP_PKEY_free(k);
	return *pem ? AQ_OK : aq_fail(msg, AQ_EINTERNAL, "cannot make a P-256 key: %s", ossl_why());
}

static int name_cn(X509_NAME *nm, const char *cn)
{
	return X509_NAME_add_entry_by_NID(nm, NID_commonName, MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0);
}

int tls_csr_new(const char *key, const char *cn, char **csr, aq_msg *msg)
{
	EVP_PKEY *k = key_parse(key);
	X509_REQ *r = X509_REQ_new();
	BIO *b = BIO_new(BIO_s_mem());
	int rc = AQ_OK;

	*csr = NULL;
	if (!k || !r || !b || X509_REQ_set_version(r, 0) != 1 || name_cn(X509_REQ_get_subject_name(r), cn) != 1 ||
	    X509_REQ_set_pubkey(r, k) != 1 || X509_REQ_sign(r, k, EVP_sha256()) <= 0 ||
	    PEM_write_bio_X509_REQ(b, r) != 1 || !(*csr = bio_text(b)))
		rc = aq_fail(msg, AQ_EINTERNAL, "cannot make a certificate request: %s", ossl_why());
	EVP_PKEY_free(k);
	X509_REQ_free(r);
	BIO_free(b);
	return rc;
}

/* ---- the CA ---- */

static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *e;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	if (!(e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)))
		return 0;
	ok = X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	return ok;
}

/* A certificate body: version 3, random serial, validity, subject CN. */
static X509 *cert_base(EVP_PKEY *pub, const char *cn, long days)
{
	X509 *x = X509_new();
	BIGNUM *bn = BN_new();
	ASN1_INTEGER *serial = NULL;
	bool ok;

	ok = x && bn && X509_set_version(x, 2) == 1 && BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1 &&
	     (serial = BN_to_ASN1_INTEGER(bn, NULL)) && X509_set_serialNumber(x, serial) == 1 &&
	     X509_gmtime_adj(X509_getm_notBefore(x), -300) && X509_gmtime_adj(X509_getm_notAfter(x), days * 86400L) &&
	     X509_set_pubkey(x, pub) == 1 && name_cn(X509_get_subject_name(x), cn) == 1;
	ASN1_INTEGER_free(serial);
	BN_free(bn);
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}

static int ca_from(X509 *cert, EVP_PKEY *key, struct tls_ca **out, aq_msg *msg)
{
	struct tls_ca *ca = calloc(1, sizeof(*ca));

	if (!ca || !(ca->store = X509_STORE_new()) || X509_STORE_add_cert(ca->store, cert) != 1 ||
	    !(ca->pem = cert_pem(cert))) {
		tls_ca_free(ca);
		X509_free(cert);
		EVP_PKEY_free(key);
		return aq_fail(msg, AQ_ENOMEM, "cannot set up the CA: %s", ossl_why());
	}
	ca->cert = cert;
	ca->key = key;
	*out = ca;
	return AQ_OK;
}

static void ca_paths(const char *dir, char *crt, char *key, size_t cap)
{
	snprintf(crt, cap, "%s/ca.crt", dir);
	snprintf(key, cap, "%s/ca.key", dir);
}

int tls_ca_init(const char *dir, aq_msg *msg)
{
	char crt[1100], keyp[1100], *cp = NULL, *kp = NULL;
	EVP_PKEY *k = NULL;
	X509 *x = NULL;
	int rc = AQ_OK;

	ca_paths(dir, crt, keyp, sizeof(crt));
	if (access(crt, F_OK) == 0 || access(keyp, F_OK) == 0)
		return aq_fail(msg, AQ_EEXIST, "a cluster CA already exists in %s (ca.crt, ca.key)", dir);
	if (!(k = key_gen()) || !(x = cert_base(k, "Aquifer cluster CA", TLS_CA_DAYS)) ||
	    X509_set_issuer_name(x, X509_get_subject_name(x)) != 1 ||
	    !add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
	    !add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") ||
	    !add_ext(x, x, NID_subject_key_identifier, "hash") || X509_sign(x, k, EVP_sha256()) <= 0 ||
	    !(cp = cert_pem(x)) || !(kp = key_pem(k))) {
		rc = aq_fail(msg, AQ_EINTERNAL, "cannot make the CA: %s", ossl_why());
		goto out;
	}
	rc = tls_pair_write(crt, cp, keyp, kp, msg);
out:
	EVP_PKEY_free(k);
	X509_free(x);
	free(cp);
	free(kp);
	return rc;
}

static X509 *cert_parse(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;

	BIO_free(b);
	return x;
}

int tls_ca_load(const char *dir, struct tls_ca **ca, aq_msg *msg)
{
	char crt[1100], keyp[1100], *cp = NULL, *kp = NULL;
	X509 *x = NULL;
	EVP_PKEY *k = NULL;
	int rc;

	*ca = NULL;
	ca_paths(dir, crt, keyp, sizeof(crt));
	if ((rc = ut_file_read(crt, TLS_PEM_MAX, &cp, NULL, msg)) != AQ_OK ||
	    (rc = ut_file_read(keyp, TLS_PEM_MAX, &kp, NULL, msg)) != AQ_OK)
		goto out;
	if (!(x = cert_parse(cp)) || !(k = key_parse(kp))) {
		rc = aq_fail(msg, AQ_EINVAL, "%s or %s is not a PEM certificate/key: %s", crt, keyp, ossl_why());
		goto out;
	}
	if (X509_check_private_key(x, k) != 1) {
		rc = aq_fail(msg, AQ_EINVAL, "%s does not belong to %s", keyp, crt);
		goto out;
	}
	rc = ca_from(x, k, ca, msg);
	x = NULL;
	k = NULL;
out:
	X509_free(x);
	EVP_PKEY_free(k);
	free(cp);
	if (kp)
		OPENSSL_cleanse(kp, strlen(kp));
	free(kp);
	return rc;
}

int tls_ca_from_pem(const char *pem, struct tls_ca **ca, aq_msg *msg)
{
	X509 *x = cert_parse(pem);

	*ca = NULL;
	if (!x)
		return aq_fail(msg, AQ_EINVAL, "not a PEM certificate: %s", ossl_why());
	return ca_from(x, NULL, ca, msg);
}

void tls_ca_free(struct tls_ca *ca)
{
	if (!ca)
		return;
	X509_free(ca->cert);
	EVP_PKEY_free(ca->key);
	X509_STORE_free(ca->store);
	free(ca->pem);
	free(ca);
}

const char *tls_ca_pem(const struct tls_ca *ca)
{
	return ca->pem;
}

/* "DNS:a,IP:b,..." from n, every name checked so that nothing an input
 * holds can add another extension field. */
static int san_text(const struct tls_name *n, char *out, size_t cap, aq_msg *msg)
{
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0; n->dns && n->dns[i]; i++) {
		const char *d = n->dns[i];

		if (!*d || strlen(d) > 253 || strspn(d, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.*") != strlen(d))
			return aq_fail(msg, AQ_EINVAL, "\"%s\" is not a DNS name", d);
		len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "%sDNS:%s", len ? "," : "", d);
	}
	for (int i = 0; n->ip && n->ip[i]; i++) {
		unsigned char buf[16];
		const char *ip = n->ip[i];

		if (inet_pton(AF_INET, ip, buf) != 1 && inet_pton(AF_INET6, ip, buf) != 1)
			return aq_fail(msg, AQ_EINVAL, "\"%s\" is not an IPv4 or IPv6 address", ip);
		len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "%sIP:%s", len ? "," : "", ip);
	}
	if (len >= cap)
		return aq_fail(msg, AQ_EINVAL, "too many names for one certificate");
	return AQ_OK;
}

/* Sign a leaf certificate for pub with the CA. */
static int issue(const struct tls_ca *ca, EVP_PKEY *pub, const struct tls_name *n, long days, char **out,
		 aq_msg *msg)
{
	char san[2048], eku[64];
	X509 *x = NULL;
	int rc;

	*out = NULL;
	if (!ca->key)
		return aq_fail(msg, AQ_EPRECOND, "this CA has no key to issue with");
	if (!n->cn || !*n->cn || strlen(n->cn) > 64)
		return aq_fail(msg, AQ_EINVAL, "a certificate needs a common name of 1..64 characters");
	if (days < 1 || days > TLS_CA_DAYS)
		return aq_fail(msg, AQ_EINVAL, "validity must be 1..%d days", TLS_CA_DAYS);
	if ((rc = san_text(n, san, sizeof(san), msg)) != AQ_OK)
		return rc;
	snprintf(eku, sizeof(eku), "%s%s%s", n->server ? "serverAuth" : "", n->server && n->client ? "," : "",
		 n->client ? "clientAuth" : "");
	if (!(x = cert_base(pub, n->cn, days)) || X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) != 1 ||
	    !add_ext(x, ca->cert, NID_basic_constraints, "critical,CA:FALSE") ||
	    !add_ext(x, ca->cert, NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
	    (eku[0] && !add_ext(x, ca->cert, NID_ext_key_usage, eku)) ||
	    (san[0] && !add_ext(x, ca->cert, NID_subject_alt_name, san)) ||
	    !add_ext(x, ca->cert, NID_subject_key_identifier, "hash") ||
	    !add_ext(x, ca->cert, NID_authority_key_identifier, "keyid:always") ||
	    X509_sign(x, ca->key, EVP_sha256()) <= 0 || !(*out = cert_pem(x)))
		rc = aq_fail(msg, AQ_EINTERNAL, "cannot issue the certificate: %s", ossl_why());
	X509_free(x);
	return rc;
}

int tls_issue_key(const struct tls_ca *ca, const struct tls_name *n, long days, char **cert, char **key,
		  aq_msg *msg)
{
	EVP_PKEY *k = key_gen();
	int rc;

	*cert = *key = NULL;
	if (!k)
		return aq_fail(msg, AQ_EINTERNAL, "cannot make a P-256 key: %s", ossl_why());
	if ((rc = issue(ca, k, n, days, cert, msg)) == AQ_OK && !(*key = key_pem(k))) {
		free(*cert);
		*cert = NULL;
		rc = AQ_ENOMEM;
	}
	EVP_PKEY_free(k);
	return rc;
}

/* A key fit for a peer: P-256, or RSA of 2048 bits or more. */
static bool key_fit(EVP_PKEY *k)
{
	if (EVP_PKEY_base_id(k) == EVP_PKEY_RSA)
		return EVP_PKEY_bits(k) >= 2048;
	if (EVP_PKEY_base_id(k) == EVP_PKEY_EC) {
		char group[64] = "";
		size_t gl = 0;

		return EVP_PKEY_get_group_name(k, group, sizeof(group), &gl) == 1 &&
		       (strcmp(group, "prime256v1") == 0 || strcmp(group, "P-256") == 0);
	}
	return false;
}

int tls_issue_csr(const struct tls_ca *ca, const char *csr, size_t len, const struct tls_name *n, long days,
		  char **cert, aq_msg *msg)
{
	BIO *b = NULL;
	X509_REQ *r = NULL;
	EVP_PKEY *pub = NULL;
	int rc;

	*cert = NULL;
	if (len == 0 || len > TLS_CSR_MAX)
		return aq_fail(msg, AQ_EINVAL, "csr must be a PEM certificate request of 1..%d bytes", TLS_CSR_MAX);
	if (!(b = BIO_new_mem_buf(csr, (int)len)) || !(r = PEM_read_bio_X509_REQ(b, NULL, NULL, NULL))) {
		ERR_clear_error();
		rc = aq_fail(msg, AQ_EINVAL, "csr is not a PEM certificate request");
		goto out;
	}
	if (!(pub = X509_REQ_get_pubkey(r)) || X509_REQ_verify(r, pub) != 1) {
		ERR_clear_error();
		rc = aq_fail(msg, AQ_EINVAL, "csr signature does not verify");
		goto out;
	}
	if (!key_fit(pub)) {
		rc = aq_fail(msg, AQ_EINVAL, "csr key must be ECDSA P-256 or RSA of at least 2048 bits");
		goto out;
	}
	rc = issue(ca, pub, n, days, cert, msg);
out:
	EVP_PKEY_free(pub);
	X509_REQ_free(r);
	BIO_free(b);
	return rc;
}

int tls_pair_write(const char *cert_path, const char *cert, const char *key_path, const char *key, aq_msg *msg)
{
	int rc = ut_file_write(key_path, key, strlen(key), msg);

	return rc == AQ_OK ? ut_file_write(cert_path, cert, strlen(cert), msg) : rc;
}

int tls_pair_check(const char *cert, const char *key, const char *what, aq_msg *msg)
{
	X509 *x = cert_parse(cert);
	EVP_PKEY *k = key_parse(key);
	int rc = AQ_OK;

	if (!x || !k)
		rc = aq_fail(msg, AQ_EINVAL, "%s: not a PEM %s", what, !x ? "certificate" : "private key");
	else if (X509_check_private_key(x, k) != 1)
		rc = aq_fail(msg, AQ_EINVAL, "%s: the key does not belong to the certificate", what);
	else if (X509_cmp_current_time(X509_get0_notAfter(x)) < 0)
		rc = aq_fail(msg, AQ_EINVAL, "%s: the certificate has expired", what);
	else if (X509_cmp_current_time(X509_get0_notBefore(x)) > 0)
		rc = aq_fail(msg, AQ_EINVAL, "%s: the certificate is not valid yet", what);
	ERR_clear_error();
	X509_free(x);
	EVP_PKEY_free(k);
	return rc;
}

/* ---- checks ---- */

static int verify_x509(const struct tls_ca *ca, X509 *x, const char *cn, aq_msg *msg)
{
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	char got[256] = "";
	int rc = AQ_OK, e;

	if (!ctx || X509_STORE_CTX_init(ctx, ca->store, x, NULL) != 1) {
		rc = aq_fail(msg, AQ_ENOMEM, "cannot verify: %s", ossl_why());
		goto out;
	}
	if (X509_verify_cert(ctx) != 1) {
		e = X509_STORE_CTX_get_error(ctx);
		if (e == X509_V_ERR_CERT_HAS_EXPIRED)
			rc = aq_fail(msg, AQ_EUNAUTH, "client certificate has expired");
		else if (e == X509_V_ERR_CERT_NOT_YET_VALID)
			rc = aq_fail(msg, AQ_EUNAUTH, "client certificate is not valid yet");
		else if (e == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY || e == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT ||
			 e == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT || e == X509_V_ERR_CERT_SIGNATURE_FAILURE ||
			 e == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN)
			rc = aq_fail(msg, AQ_EUNAUTH, "client certificate was not issued by the cluster CA (%s)",
				     X509_verify_cert_error_string(e));
		else
			rc = aq_fail(msg, AQ_EUNAUTH, "client certificate refused: %s", X509_verify_cert_error_string(e));
		goto out;
	}
	if (cn) {
		if (X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, got, sizeof(got)) < 0)
			got[0] = '\0';
		if (strcmp(got, cn) != 0)
			rc = aq_fail(msg, AQ_EUNAUTH, "client certificate is for \"%s\", not \"%s\"", got, cn);
	}
out:
	X509_STORE_CTX_free(ctx);
	ERR_clear_error();
	return rc;
}

int tls_verify_der(const struct tls_ca *ca, const unsigned char *der, size_t len, const char *cn, aq_msg *msg)
{
	const unsigned char *p = der;
	X509 *x;
	int rc;

	if (!der || len == 0)
		return aq_fail(msg, AQ_EUNAUTH, "a client certificate issued by the cluster CA is required; none was presented");
	if (len > TLS_DER_MAX)
		return aq_fail(msg, AQ_EUNAUTH, "client certificate is larger than %d bytes", TLS_DER_MAX);
	x = d2i_X509(NULL, &p, (long)len);
	if (!x || p != der + len) {
		X509_free(x);
		ERR_clear_error();
		return aq_fail(msg, AQ_EUNAUTH, "client certificate does not parse");
	}
	rc = verify_x509(ca, x, cn, msg);
	X509_free(x);
	return rc;
}

bool tls_cert_fresh(const struct tls_ca *ca, const char *path, long secs)
{
	char *pem = NULL;
	X509 *x = NULL;
	bool ok = false;
	aq_msg msg;

	if (ut_file_read(path, TLS_PEM_MAX, &pem, NULL, &msg) != AQ_OK || !(x = cert_parse(pem)))
		goto out;
	ok = X509_cmp_time(X509_get0_notAfter(x), &(time_t){ time(NULL) + secs }) > 0 &&
	     verify_x509(ca, x, NULL, &msg) == AQ_OK;
out:
	ERR_clear_error();
	X509_free(x);
	free(pem);
	return ok;
}
