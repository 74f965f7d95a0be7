/* fuzz_csr: libFuzzer harness over the bytes a peer hands tls/tls.c: the
 * CSR of a join body (tls_issue_csr) and the certificate a TLS client
 * presents (tls_verify_der). Neither may crash, and arbitrary bytes must
 * never verify as a certificate of the cluster CA (that would be a forgery). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tls/tls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tls_ca *ca;
	const char *dns[] = { "n1", NULL }, *ip[] = { "127.0.0.1", NULL };
	struct tls_name n = { .cn = "n1", .dns = dns, .ip = ip, .server = true, .client = true };
	char *cert = NULL;
	aq_msg msg;

	if (!ca) {
		char dir[] = "/tmp/aq-fuzz-csr-XXXXXX";

		if (!mkdtemp(dir) || tls_ca_init(dir, &msg) != AQ_OK || tls_ca_load(dir, &ca, &msg) != AQ_OK)
			abort();
	}
	/* the CSR text as a join body's string holds it: any bytes, any length */
	tls_issue_csr(ca, (const char *)data, size, &n, 30, &cert, &msg);
	free(cert);
	if (tls_verify_der(ca, data, size, NULL, &msg) == AQ_OK)
		abort(); /* a certificate of the cluster CA out of thin air */
	return 0;
}
