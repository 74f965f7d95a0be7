/* Unit tests for tls/tls.c: the cluster CA files, issuing from a key and
 * from a CSR, refusing bad CSRs, and the peer checks (none, foreign,
 * expired, wrong name, garbage). */
#include "tls/tls.h"

#include <check.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/aqt.h"
#include "util/ut_file.h"

static char dir[64], dir2[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/aq-tls-XXXXXX");
	snprintf(dir2, sizeof(dir2), "/tmp/aq-tls2-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_ptr_nonnull(mkdtemp(dir2));
}

static void teardown(void)
{
	char cmd[200];

	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", dir, dir2);
	ck_assert_int_eq(system(cmd), 0);
}

static int file_mode(const char *d, const char *name)
{
	char p[200];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", d, name);
	if (stat(p, &st) != 0)
		return -1;
	return (int)(st.st_mode & 0777);
}

static X509 *pem_x509(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);

	BIO_free(b);
	return x;
}

/* DER of a PEM certificate (malloc'd). */
static unsigned char *pem_der(const char *pem, size_t *len)
{
	X509 *x = pem_x509(pem);
	unsigned char *der = NULL;
	int n;

	ck_assert_ptr_nonnull(x);
	n = i2d_X509(x, &der);
	ck_assert_int_gt(n, 0);
	*len = (size_t)n;
	X509_free(x);
	return der;
}

static struct tls_ca *ca_new(const char *d)
{
	struct tls_ca *ca = NULL;
	aq_msg msg = { .text = "" };

	ck_assert_int_eq(tls_ca_init(d, &msg), AQ_OK);
	ck_assert_int_eq(tls_ca_load(d, &ca, &msg), AQ_OK);
	return ca;
}

START_TEST(test_ca_files)
{
	struct tls_ca *ca = NULL;
	aq_msg msg = { .text = "" };
	mode_t old = umask(0);

	ck_assert_int_eq(tls_ca_load(dir, &ca, &msg), AQ_ENOENT);
	ck_assert_int_eq(tls_ca_init(dir, &msg), AQ_OK);
	umask(old);
	ck_assert_int_eq(file_mode(dir, "ca.crt"), 0600);
	ck_assert_int_eq(file_mode(dir, "ca.key"), 0600);
	ck_assert_int_eq(tls_ca_init(dir, &msg), AQ_EEXIST);
	ck_assert_ptr_nonnull(strstr(msg.text, "already exists"));
	ck_assert_int_eq(tls_ca_load(dir, &ca, &msg), AQ_OK);
	ck_assert_ptr_nonnull(strstr(tls_ca_pem(ca), "BEGIN CERTIFICATE"));
	tls_ca_free(ca);
	tls_ca_free(NULL);
}
END_TEST

START_TEST(test_file_write)
{
	char p[200], *got = NULL;
	size_t len = 0;
	aq_msg msg = { .text = "" };

	snprintf(p, sizeof(p), "%s/f.pem", dir);
	ck_assert_int_eq(ut_file_write(p, "old", 3, &msg), AQ_OK);
	ck_assert_int_eq(ut_file_write(p, "new text", 8, &msg), AQ_OK);
	ck_assert_int_eq(file_mode(dir, "f.pem"), 0600);
	ck_assert_int_eq(ut_file_read(p, 100, &got, &len, &msg), AQ_OK);
	ck_assert_str_eq(got, "new text");
	ck_assert_uint_eq(len, 8);
	free(got);
	ck_assert_int_eq(ut_file_read(p, 4, &got, &len, &msg), AQ_ETOOBIG);
	ck_assert_ptr_null(got);
	snprintf(p, sizeof(p), "%s/missing", dir);
	ck_assert_int_eq(ut_file_read(p, 100, &got, &len, &msg), AQ_ENOENT);
	snprintf(p, sizeof(p), "%s/no/such/dir/f", dir);
	ck_assert_int_eq(ut_file_write(p, "x", 1, &msg), AQ_EIO);
}
END_TEST

START_TEST(test_issue_key)
{
	struct tls_ca *ca = ca_new(dir);
	const char *dns[] = { "localhost", NULL }, *ip[] = { "127.0.0.1", "::1", NULL };
	struct tls_name n = { .cn = "localhost", .dns = dns, .ip = ip, .server = true };
	char *cert = NULL, *key = NULL;
	unsigned char *der;
	size_t len;
	aq_msg msg = { .text = "" };
	X509 *x;

	ck_assert_int_eq(tls_issue_key(ca, &n, 30, &cert, &key, &msg), AQ_OK);
	ck_assert_int_eq(tls_pair_check(cert, key, "t", &msg), AQ_OK);
	x = pem_x509(cert);
	ck_assert_int_eq(X509_check_host(x, "localhost", 0, 0, NULL), 1);
	ck_assert_int_eq(X509_check_ip_asc(x, "127.0.0.1", 0), 1);
	ck_assert_int_eq(X509_check_ip_asc(x, "::1", 0), 1);
	ck_assert_int_eq(X509_check_host(x, "other", 0, 0, NULL), 0);
	ck_assert_int_eq(X509_check_ca(x), 0);
	X509_free(x);
	der = pem_der(cert, &len);
	ck_assert_int_eq(tls_verify_der(ca, der, len, "localhost", &msg), AQ_OK);
	ck_assert_int_eq(tls_verify_der(ca, der, len, NULL, &msg), AQ_OK);
	ck_assert_int_eq(tls_verify_der(ca, der, len, "n1", &msg), AQ_EUNAUTH);
	ck_assert_str_eq(msg.text, "client certificate is for \"localhost\", not \"n1\"");
	free(der);
	free(cert);
	free(key);
	/* names that would smuggle more into the SAN line, bad validity */
	dns[0] = "a,IP:1.2.3.4";
	ck_assert_int_eq(tls_issue_key(ca, &n, 30, &cert, &key, &msg), AQ_EINVAL);
	ck_assert_ptr_null(cert);
	dns[0] = "localhost";
	ip[0] = "1.2.3";
	ck_assert_int_eq(tls_issue_key(ca, &n, 30, &cert, &key, &msg), AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg.text, "not an IPv4 or IPv6"));
	ip[0] = "127.0.0.1";
	ck_assert_int_eq(tls_issue_key(ca, &n, 0, &cert, &key, &msg), AQ_EINVAL);
	tls_ca_free(ca);
}
END_TEST

START_TEST(test_issue_csr)
{
	struct tls_ca *ca = ca_new(dir);
	const char *dns[] = { "n1", NULL }, *ip[] = { "10.0.0.7", NULL };
	struct tls_name n = { .cn = "n1", .dns = dns, .ip = ip, .server = true, .client = true };
	char *key = NULL, *csr = NULL, *cert = NULL, *bad;
	aq_msg msg = { .text = "" };
	size_t len;
	X509 *x;

	ck_assert_int_eq(tls_key_new(&key, &msg), AQ_OK);
	/* the CSR asks for another name: the CA decides the names */
	ck_assert_int_eq(tls_csr_new(key, "evil", &csr, &msg), AQ_OK);
	ck_assert_int_eq(tls_issue_csr(ca, csr, strlen(csr), &n, 30, &cert, &msg), AQ_OK);
	ck_assert_int_eq(tls_pair_check(cert, key, "t", &msg), AQ_OK);
	x = pem_x509(cert);
	ck_assert_int_eq(X509_check_host(x, "n1", 0, 0, NULL), 1);
	ck_assert_int_eq(X509_check_host(x, "evil", 0, 0, NULL), 0);
	ck_assert_int_eq(X509_check_ip_asc(x, "10.0.0.7", 0), 1);
	X509_free(x);
	free(cert);
	cert = NULL;
	/* a signature that does not hold */
	bad = strdup(csr);
	len = strlen(bad);
	bad[len / 2] = bad[len / 2] == 'A' ? 'B' : 'A';
	ck_assert_int_ne(tls_issue_csr(ca, bad, len, &n, 30, &cert, &msg), AQ_OK);
	ck_assert_ptr_null(cert);
	free(bad);
	/* garbage, empty, too large */
	ck_assert_int_eq(tls_issue_csr(ca, "hello", 5, &n, 30, &cert, &msg), AQ_EINVAL);
	ck_assert_str_eq(msg.text, "csr is not a PEM certificate request");
	ck_assert_int_eq(tls_issue_csr(ca, "", 0, &n, 30, &cert, &msg), AQ_EINVAL);
	bad = calloc(1, TLS_CSR_MAX + 2);
	memset(bad, 'A', TLS_CSR_MAX + 1);
	ck_assert_int_eq(tls_issue_csr(ca, bad, TLS_CSR_MAX + 1, &n, 30, &cert, &msg), AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg.text, "8192"));
	free(bad);
	ck_assert_ptr_null(cert);
	free(key);
	free(csr);
	tls_ca_free(ca);
}
END_TEST

START_TEST(test_weak_key_csr)
{
	struct tls_ca *ca = ca_new(dir);
	struct tls_name n = { .cn = "n1" };
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)1024);
	BIO *b = BIO_new(BIO_s_mem());
	char *pem = NULL, *csr = NULL, *cert = NULL, *p;
	long len;
	aq_msg msg = { .text = "" };

	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL), 1);
	len = BIO_get_mem_data(b, &p);
	pem = strndup(p, (size_t)len);
	ck_assert_int_eq(tls_csr_new(pem, "n1", &csr, &msg), AQ_OK);
	ck_assert_int_eq(tls_issue_csr(ca, csr, strlen(csr), &n, 30, &cert, &msg), AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg.text, "P-256 or RSA of at least 2048"));
	ck_assert_ptr_null(cert);
	free(pem);
	free(csr);
	BIO_free(b);
	EVP_PKEY_free(k);
	tls_ca_free(ca);
}
END_TEST

/* A certificate for cn signed with the CA in d, valid from..to seconds
 * from now (DER). */
static unsigned char *signed_by(const char *d, const char *cn, long from, long to, size_t *len)
{
	char p[200], *pem = NULL;
	aq_msg msg;
	X509 *cax, *x = X509_new();
	EVP_PKEY *cak, *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	BIO *b;
	unsigned char *der = NULL;
	int n;

	snprintf(p, sizeof(p), "%s/ca.crt", d);
	ck_assert_int_eq(ut_file_read(p, TLS_PEM_MAX, &pem, NULL, &msg), AQ_OK);
	cax = pem_x509(pem);
	free(pem);
	snprintf(p, sizeof(p), "%s/ca.key", d);
	ck_assert_int_eq(ut_file_read(p, TLS_PEM_MAX, &pem, NULL, &msg), AQ_OK);
	b = BIO_new_mem_buf(pem, -1);
	cak = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
	BIO_free(b);
	free(pem);
	ck_assert_ptr_nonnull(cax);
	ck_assert_ptr_nonnull(cak);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
	X509_gmtime_adj(X509_getm_notBefore(x), from);
	X509_gmtime_adj(X509_getm_notAfter(x), to);
	X509_set_pubkey(x, k);
	X509_NAME_add_entry_by_NID(X509_get_subject_name(x), NID_commonName, MBSTRING_UTF8,
				   (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(cax));
	ck_assert_int_gt(X509_sign(x, cak, EVP_sha256()), 0);
	n = i2d_X509(x, &der);
	ck_assert_int_gt(n, 0);
	*len = (size_t)n;
	X509_free(x);
	X509_free(cax);
	EVP_PKEY_free(cak);
	EVP_PKEY_free(k);
	return der;
}

START_TEST(test_verify_refusals)
{
	struct tls_ca *ca = ca_new(dir), *other = ca_new(dir2);
	unsigned char *der, junk[64];
	size_t len;
	aq_msg msg = { .text = "" };

	ck_assert_int_eq(tls_verify_der(ca, NULL, 0, "n1", &msg), AQ_EUNAUTH);
	ck_assert_ptr_nonnull(strstr(msg.text, "none was presented"));
	memset(junk, 0x30, sizeof(junk));
	ck_assert_int_eq(tls_verify_der(ca, junk, sizeof(junk), "n1", &msg), AQ_EUNAUTH);
	ck_assert_str_eq(msg.text, "client certificate does not parse");
	ck_assert_int_eq(tls_verify_der(ca, junk, TLS_DER_MAX + 1, "n1", &msg), AQ_EUNAUTH);
	ck_assert_ptr_nonnull(strstr(msg.text, "larger than"));

	der = signed_by(dir, "n1", -60, 3600, &len);
	ck_assert_int_eq(tls_verify_der(ca, der, len, "n1", &msg), AQ_OK);
	/* trailing bytes after the certificate */
	ck_assert_int_eq(tls_verify_der(ca, der, len - 1, "n1", &msg), AQ_EUNAUTH);
	ck_assert_int_eq(tls_verify_der(other, der, len, "n1", &msg), AQ_EUNAUTH);
	ck_assert_ptr_nonnull(strstr(msg.text, "not issued by the cluster CA"));
	free(der);

	der = signed_by(dir, "n1", -7200, -3600, &len);
	ck_assert_int_eq(tls_verify_der(ca, der, len, "n1", &msg), AQ_EUNAUTH);
	ck_assert_str_eq(msg.text, "client certificate has expired");
	free(der);
	der = signed_by(dir, "n1", 3600, 7200, &len);
	ck_assert_int_eq(tls_verify_der(ca, der, len, "n1", &msg), AQ_EUNAUTH);
	ck_assert_str_eq(msg.text, "client certificate is not valid yet");
	free(der);
	tls_ca_free(ca);
	tls_ca_free(other);
}
END_TEST

START_TEST(test_fresh_and_pem_ca)
{
	struct tls_ca *ca = ca_new(dir), *other = ca_new(dir2), *vonly = NULL;
	struct tls_name n = { .cn = TLS_CONTROL_CN, .client = true };
	char crt[200], key[200], *cert = NULL, *k = NULL;
	unsigned char *der;
	size_t len;
	aq_msg msg = { .text = "" };

	snprintf(crt, sizeof(crt), "%s/client.crt", dir);
	snprintf(key, sizeof(key), "%s/client.key", dir);
	ck_assert(!tls_cert_fresh(ca, crt, 0));
	ck_assert_int_eq(tls_issue_key(ca, &n, 10, &cert, &k, &msg), AQ_OK);
	ck_assert_int_eq(tls_pair_write(crt, cert, key, k, &msg), AQ_OK);
	ck_assert_int_eq(file_mode(dir, "client.key"), 0600);
	ck_assert(tls_cert_fresh(ca, crt, 86400));
	ck_assert(!tls_cert_fresh(ca, crt, 30L * 86400));
	ck_assert(!tls_cert_fresh(other, crt, 0));
	/* a verify-only CA from the PEM text checks the same way, and cannot issue */
	ck_assert_int_eq(tls_ca_from_pem(tls_ca_pem(ca), &vonly, &msg), AQ_OK);
	der = pem_der(cert, &len);
	ck_assert_int_eq(tls_verify_der(vonly, der, len, TLS_CONTROL_CN, &msg), AQ_OK);
	free(der);
	free(cert);
	free(k);
	ck_assert_int_eq(tls_issue_key(vonly, &n, 10, &cert, &k, &msg), AQ_EPRECOND);
	tls_ca_free(vonly);
	ck_assert_int_eq(tls_ca_from_pem("nope", &vonly, &msg), AQ_EINVAL);
	ck_assert_int_eq(tls_pair_check(tls_ca_pem(ca), "nope", "x", &msg), AQ_EINVAL);
	tls_ca_free(ca);
	tls_ca_free(other);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tls");
	TCase *tc = tcase_create("tls");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_ca_files);
	tcase_add_test(tc, test_file_write);
	tcase_add_test(tc, test_issue_key);
	tcase_add_test(tc, test_issue_csr);
	tcase_add_test(tc, test_weak_key_csr);
	tcase_add_test(tc, test_verify_refusals);
	tcase_add_test(tc, test_fresh_and_pem_ca);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
