/* aq-bare-mhd: the baseline for bench/api. A bare libmicrohttpd server that
 * answers every request with one fixed JSON body, in the same threading mode
 * as aquiferd (one internal epoll thread, see server/srv_http.c), so the
 * benchmark's ratio aquiferd/bare measures what aquiferd adds on top of MHD:
 * routing, auth, the worker hand-off, SQLite and JSON.
 *
 *   aq-bare-mhd --listen 127.0.0.1:PORT [--body FILE]
 *               [--tls-cert FILE --tls-key FILE [--tls-trust FILE]]
 *
 * Without --body it serves a built-in ~600-byte volume document. With
 * --tls-cert/--tls-key it serves HTTPS as aquiferd does (GnuTLS in MHD;
 * --tls-trust asks clients for certificates, as aquiferd does with its
 * cluster CA). It runs until SIGINT or SIGTERM.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "bench/tier/tb_addr.h"

#define BARE_BODY_MAX (64 * 1024)

static const char bare_default_body[] =
	"{\"name\":\"projects/bench/locations/loc1/volumes/vol1\",\"state\":\"CREATING\","
	"\"createTime\":\"2025-01-01T00:00:00.000000000Z\",\"shareName\":\"vol1\","
	"\"storagePool\":\"projects/bench/locations/loc1/storagePools/pool1\","
	"\"network\":\"default\",\"serviceLevel\":\"PREMIUM\",\"capacityGib\":\"1500\","
	"\"exportPolicy\":{\"rules\":[{\"allowedClients\":\"10.0.0.0/8\",\"accessType\":\"READ_WRITE\","
	"\"nfsv3\":true,\"hasRootAccess\":\"true\"}]},\"protocols\":[\"NFSV3\"],"
	"\"unixPermissions\":\"0770\",\"labels\":{\"env\":\"bench\"},"
	"\"description\":\"benchmark volume\",\"snapshotDirectory\":true,"
	"\"securityStyle\":\"UNIX\",\"encryptionType\":\"SERVICE_MANAGED\","
	"\"throughputMibps\":93.75,\"usedGib\":\"0\",\"hasReplication\":false,"
	"\"largeCapacity\":false,\"multipleEndpoints\":false,\"restrictedActions\":[]}";

struct bare {
	char body[BARE_BODY_MAX];
	size_t body_len;
	struct MHD_Response *resp;
	char *cert, *key, *trust;   /* PEM, for HTTPS */
};

/* A whole PEM file, NUL-terminated (malloc'd), or NULL with a message. */
static char *bare_read_pem(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = f ? calloc(1, BARE_BODY_MAX) : NULL;
	size_t n = buf ? fread(buf, 1, BARE_BODY_MAX - 1, f) : 0;

	if (!buf || n == 0 || n == BARE_BODY_MAX - 1) {
		fprintf(stderr, "aq-bare-mhd: %s: unreadable, empty or too large\n", path);
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	return buf;
}

static enum MHD_Result bare_on_request(void *cls, struct MHD_Connection *conn, const char *url,
				       const char *method, const char *version,
				       const char *upload_data, size_t *upload_data_size,
				       void **con_cls)
{
	struct bare *b = cls;

	(void)url;
	(void)method;
	(void)version;
	(void)upload_data;
	/* First call for a request: headers only. Answer on the second, as a
	 * handler that looked at the request would. */
	if (!*con_cls) {
		*con_cls = b;
		return MHD_YES;
	}
	*upload_data_size = 0;
	return MHD_queue_response(conn, MHD_HTTP_OK, b->resp);
}

static int bare_load_body(struct bare *b, const char *path)
{
	FILE *f = fopen(path, "rb");
	int rc = 0;

	if (!f) {
		fprintf(stderr, "aq-bare-mhd: %s: %s\n", path, strerror(errno));
		return -1;
	}
	b->body_len = fread(b->body, 1, sizeof(b->body), f);
	if (ferror(f) || b->body_len == sizeof(b->body) || b->body_len == 0) {
		fprintf(stderr, "aq-bare-mhd: %s: empty, unreadable or over %d bytes\n", path,
			BARE_BODY_MAX - 1);
		rc = -1;
	}
	fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "body", required_argument, NULL, 'b' },
		{ "tls-cert", required_argument, NULL, 'c' },
		{ "tls-key", required_argument, NULL, 'k' },
		{ "tls-trust", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	static struct bare b;
	struct sockaddr_in sa;
	struct MHD_Daemon *d = NULL;
	const char *listen = "127.0.0.1:8081", *body = NULL;
	sigset_t set;
	int c, sig, rc = EXIT_FAILURE;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'l')
			listen = optarg;
		else if (c == 'b')
			body = optarg;
		else if (c == 'c' || c == 'k' || c == 't') {
			char **slot = c == 'c' ? &b.cert : c == 'k' ? &b.key : &b.trust;

			free(*slot);
			if (!(*slot = bare_read_pem(optarg)))
				goto out;
		} else
			goto usage;
	}
	if (tb_parse_addr(listen, &sa) != 0 || !b.cert != !b.key)
		goto usage;
	if (body) {
		if (bare_load_body(&b, body) != 0)
			goto out;
	} else {
		b.body_len = sizeof(bare_default_body) - 1;
		memcpy(b.body, bare_default_body, b.body_len);
	}
	b.resp = MHD_create_response_from_buffer(b.body_len, b.body, MHD_RESPMEM_PERSISTENT);
	if (!b.resp)
		goto out;
	MHD_add_response_header(b.resp, "Content-Type", "application/json");

	/* Block the signals before MHD starts its thread so only sigwait sees them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/* aquiferd's mode: one internal epoll thread (server/srv_http.c). */
	{
		struct MHD_OptionItem tls[] = {
			{ MHD_OPTION_HTTPS_MEM_KEY, 0, b.key },
			{ MHD_OPTION_HTTPS_MEM_CERT, 0, b.cert },
			{ b.trust ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, b.trust },
			{ MHD_OPTION_END, 0, NULL },
		};

		d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | (b.cert ? MHD_USE_TLS : 0), 0,
				     NULL, NULL, bare_on_request, &b, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned)4096,
				     MHD_OPTION_ARRAY, b.cert ? tls : &tls[3], MHD_OPTION_END);
	}
	if (!d) {
		fprintf(stderr, "aq-bare-mhd: cannot listen on %s\n", listen);
		goto out;
	}
	printf("aq-bare-mhd: listening on %s, body %zu bytes\n", listen, b.body_len);
	fflush(stdout);
	sigwait(&set, &sig);
	rc = EXIT_SUCCESS;
out:
	if (d)
		MHD_stop_daemon(d);
	if (b.resp)
		MHD_destroy_response(b.resp);
	free(b.cert);
	free(b.key);
	free(b.trust);
	return rc;
usage:
	fprintf(stderr, "usage: aq-bare-mhd --listen 127.0.0.1:PORT [--body FILE] [--tls-cert FILE --tls-key FILE [--tls-trust FILE]]\n");
	return EXIT_FAILURE;
}
