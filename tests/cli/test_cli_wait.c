/* Unit tests for cli/cli_run.c against a scripted fake aquiferd (libmicrohttpd
 * on a loopback port): paging through nextPageToken, waiting on an operation
 * through a 404 grace period, an operation that ends in error, a non-JSON
 * error answer, and what goes on the wire (token, updateMask, body). */
#include "cli/cli.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/aqt.h"

#define W(s) ((char *)(uintptr_t)(s))
#define BASE "/v1/projects/p/locations/l"

/* What the fake server saw, and how it answers. */
struct fake {
	int op1_polls;                /* GETs of operation op1 so far */
	char auth[256];               /* last Authorization header */
	char mask[256];               /* last updateMask */
	char validate[16];            /* last validateOnly */
	char body[1024];              /* last request body */
	char method[16];
	int deletes;                  /* DELETEs of pool x */
};

struct upload {
	char buf[1024];
	size_t len;
};

static struct fake fake;
static struct MHD_Daemon *daemon_;
static char endpoint[64];
static char *out_text, *err_text;

static const char *pool_x = "{\"name\":\"projects/p/locations/l/storagePools/x\",\"state\":\"READY\","
			    "\"capacityGib\":\"2048\",\"serviceLevel\":\"PREMIUM\"}";

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *body,
			     const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result json(struct MHD_Connection *c, unsigned code, const char *body)
{
	return reply(c, code, body, "application/json");
}

static void copy_arg(struct MHD_Connection *c, enum MHD_ValueKind kind, const char *key, char *dst,
		     size_t size)
{
	const char *v = MHD_lookup_connection_value(c, kind, key);

	snprintf(dst, size, "%s", v ? v : "");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *data_size, void **con_cls)
{
	struct upload *up = *con_cls;
	const char *tok;

	(void)cls;
	(void)version;
	if (up == NULL) {
		if ((up = calloc(1, sizeof(*up))) == NULL)
			return MHD_NO;
		*con_cls = up;
		return MHD_YES;
	}
	if (*data_size) {
		size_t n = *data_size < sizeof(up->buf) - 1 - up->len ? *data_size
								      : sizeof(up->buf) - 1 - up->len;
		memcpy(up->buf + up->len, data, n);
		up->len += n;
		*data_size = 0;
		return MHD_YES;
	}
	snprintf(fake.body, sizeof(fake.body), "%s", up->buf);
	snprintf(fake.method, sizeof(fake.method), "%s", method);
	copy_arg(c, MHD_HEADER_KIND, "Authorization", fake.auth, sizeof(fake.auth));
	copy_arg(c, MHD_GET_ARGUMENT_KIND, "updateMask", fake.mask, sizeof(fake.mask));
	copy_arg(c, MHD_GET_ARGUMENT_KIND, "validateOnly", fake.validate, sizeof(fake.validate));

	if (strcmp(url, BASE "/storagePools") == 0 && strcmp(method, "GET") == 0) {
		tok = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pageToken");
		if (tok == NULL)
			return json(c, 200, "{\"storagePools\":[{\"name\":\"" BASE "/storagePools/a\"},"
					    "{\"name\":\"" BASE "/storagePools/b\"}],\"nextPageToken\":\"t 2\"}");
		if (strcmp(tok, "t 2") == 0)
			return json(c, 200, "{\"storagePools\":[{\"name\":\"" BASE "/storagePools/c\"}],"
					    "\"nextPageToken\":\"\"}");
		return json(c, 400, "{\"error\":{\"code\":400,\"message\":\"bad token\","
				    "\"status\":\"INVALID_ARGUMENT\"}}");
	}
	if (strcmp(url, BASE "/storagePools") == 0 && strcmp(method, "POST") == 0) {
		const char *id = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "storagePoolId");
		if (id && strcmp(id, "x") == 0)
			return json(c, 200, "{\"name\":\"projects/p/locations/l/operations/op1\",\"done\":false}");
		return json(c, 200, "{\"name\":\"projects/p/locations/l/operations/op2\",\"done\":false}");
	}
	if (strcmp(url, BASE "/operations/op1") == 0) {
		/* Not readable at first: the client must keep polling. */
		if (++fake.op1_polls <= 2)
			return json(c, 404, "{\"error\":{\"code\":404,\"message\":\"no op\","
					    "\"status\":\"NOT_FOUND\"}}");
		return json(c, 200, "{\"name\":\"projects/p/locations/l/operations/op1\",\"done\":true,"
				    "\"response\":{\"@type\":\"t\",\"state\":\"CREATING\"}}");
	}
	if (strcmp(url, BASE "/operations/op2") == 0)
		return json(c, 200, "{\"name\":\"projects/p/locations/l/operations/op2\",\"done\":true,"
				    "\"error\":{\"code\":9,\"message\":\"pool is busy\"}}");
	if (strcmp(url, BASE "/storagePools/x") == 0 && strcmp(method, "GET") == 0)
		return json(c, 200, pool_x);
	if (strcmp(url, BASE "/storagePools/x") == 0 && strcmp(method, "PATCH") == 0)
		return json(c, 200, "{\"name\":\"projects/p/locations/l/operations/op3\",\"done\":true,"
				    "\"response\":{\"capacityGib\":\"4096\"}}");
	if (strcmp(url, BASE "/storagePools/x") == 0 && strcmp(method, "DELETE") == 0) {
		fake.deletes++;
		return json(c, 200, "{\"name\":\"projects/p/locations/l/operations/op4\",\"done\":true,"
				    "\"response\":{}}");
	}
	if (strcmp(url, BASE "/volumes/m1/metrics") == 0)
		return json(c, 200, "{\"name\":\"" BASE "/volumes/m1\",\"windowSeconds\":3600,\"stepSeconds\":10,"
				    "\"points\":[{\"time\":\"2026-12-01T12:00:10Z\",\"readBytes\":\"10485760\","
				    "\"writeBytes\":\"0\",\"latencyP99Ms\":1.234,\"throughputLimitMibps\":128,"
				    "\"usedBytes\":\"1610612736\"},{\"time\":\"2026-12-01T12:00:20Z\","
				    "\"readBytes\":\"0\",\"writeBytes\":\"5242880\",\"latencyP99Ms\":null,"
				    "\"throughputLimitMibps\":128.5,\"usedBytes\":\"512\"}]}");
	if (strcmp(url, BASE "/volumes/m0/metrics") == 0)
		return json(c, 200, "{\"name\":\"" BASE "/volumes/m0\",\"windowSeconds\":90,\"stepSeconds\":10,"
				    "\"points\":[]}");
	if (strcmp(url, BASE "/storagePools/html") == 0)
		return reply(c, 502, "<html>Bad Gateway</html>", "text/html");
	return json(c, 404, "{\"error\":{\"code\":404,\"message\":\"no route\",\"status\":\"NOT_FOUND\"}}");
}

static void done_cb(void *cls, struct MHD_Connection *c, void **con_cls,
		    enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	free(*con_cls);
	*con_cls = NULL;
}

static void setup(void)
{
	const union MHD_DaemonInfo *info;
	struct sockaddr_in sa;

	memset(&fake, 0, sizeof(fake));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = 0;
	daemon_ = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, handler, NULL,
				   MHD_OPTION_NOTIFY_COMPLETED, done_cb, NULL,
				   MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_END);
	ck_assert_ptr_nonnull(daemon_);
	info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
	ck_assert_ptr_nonnull(info);
	snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%u", (unsigned)info->port);
	setenv("AQUIFER_ENDPOINT", endpoint, 1);
	setenv("AQUIFER_TOKEN", "tok-1", 1);
	setenv("AQUIFER_PROJECT", "p", 1);
	setenv("AQUIFER_LOCATION", "l", 1);
	setenv("XDG_CONFIG_HOME", "/nonexistent-aquifer-test", 1);
}

static void teardown(void)
{
	MHD_stop_daemon(daemon_);
	free(out_text);
	free(err_text);
	out_text = err_text = NULL;
}

/* Run aquifer with argv from ap; a terminal on stdin typing answer when
 * answer is not NULL, else stdin not a terminal. */
static int run_ap(const char *answer, const char *first, va_list ap)
{
	char *argv[32];
	size_t olen = 0, elen = 0;
	FILE *out, *err, *in;
	int argc = 0, rc;
	const char *w = first;

	free(out_text);
	free(err_text);
	argv[argc++] = W("aquifer");
	while (w && argc < 31) {
		argv[argc++] = W(w);
		w = va_arg(ap, const char *);
	}
	argv[argc] = NULL;
	in = fmemopen(W(answer ? answer : ""), answer ? strlen(answer) + 1 : 1, "r");
	ck_assert_ptr_nonnull(in);
	out = open_memstream(&out_text, &olen);
	err = open_memstream(&err_text, &elen);
	rc = cli_run_in(argc, argv, in, answer != NULL, out, err);
	fclose(in);
	fclose(out);
	fclose(err);
	return rc;
}

static int run(const char *first, ...)
{
	va_list ap;
	int rc;

	va_start(ap, first);
	rc = run_ap(NULL, first, ap);
	va_end(ap);
	return rc;
}

/* run with a terminal on stdin that types answer */
static int run_tty(const char *answer, const char *first, ...)
{
	va_list ap;
	int rc;

	va_start(ap, first);
	rc = run_ap(answer, first, ap);
	va_end(ap);
	return rc;
}

START_TEST(test_paging)
{
	ck_assert_int_eq(run("storage-pools", "list", "--format=value(name.basename())", NULL),
			 CLI_EXIT_OK);
	ck_assert_str_eq(out_text, "a\nb\nc\n");
	ck_assert_str_eq(fake.auth, "Bearer tok-1");
	ck_assert_int_eq(run("storage-pools", "list", "--format=value(name.basename())", "--limit=2",
			     NULL), CLI_EXIT_OK);
	ck_assert_str_eq(out_text, "a\nb\n");
}
END_TEST

START_TEST(test_wait_through_404)
{
	ck_assert_int_eq(run("storage-pools", "create", "x", "--capacity=2TiB",
			     "--service-level=premium", "--format=value(capacityGib,state)", NULL),
			 CLI_EXIT_OK);
	ck_assert_int_eq(fake.op1_polls, 3);
	ck_assert_str_eq(err_text, "Creating storage pool x...done.\n");
	/* The resource as the server has it after the operation. */
	ck_assert_str_eq(out_text, "2048\tREADY\n");
}
END_TEST

START_TEST(test_op_error)
{
	ck_assert_int_eq(run("storage-pools", "create", "y", "--capacity=2TiB",
			     "--service-level=premium", NULL), CLI_EXIT_API);
	ck_assert_str_eq(err_text, "Creating storage pool y...failed.\n"
				   "ERROR: (aquifer.storage-pools.create) FAILED_PRECONDITION: pool is busy\n");
	ck_assert_str_eq(out_text, "");
}
END_TEST

START_TEST(test_async_and_wire)
{
	ck_assert_int_eq(run("storage-pools", "create", "x", "--capacity=2TiB",
			     "--service-level=premium", "--async", "--format=value(name,done)", NULL),
			 CLI_EXIT_OK);
	ck_assert_str_eq(out_text, "projects/p/locations/l/operations/op1\tfalse\n");
	ck_assert_int_eq(fake.op1_polls, 0);
	/* the CLI supplies GCNV's network resource name (issue 17) */
	ck_assert_str_eq(fake.body, "{\"capacityGib\":\"2048\",\"serviceLevel\":\"PREMIUM\","
				    "\"network\":\"projects/p/global/networks/default\"}");
	ck_assert_int_eq(run("storage-pools", "update", "x", "--description=d", "--capacity=4TiB",
			     "--dry-run", "--format=value(capacityGib)", NULL), CLI_EXIT_OK);
	ck_assert_str_eq(fake.method, "PATCH");
	ck_assert_str_eq(fake.mask, "capacityGib,description");
	ck_assert_str_eq(fake.validate, "true");
	ck_assert_str_eq(out_text, "4096\n");
	ck_assert_str_eq(err_text, "");
}
END_TEST

START_TEST(test_non_json_error)
{
	ck_assert_int_eq(run("storage-pools", "describe", "html", NULL), CLI_EXIT_API);
	ck_assert_msg(strstr(err_text, "HTTP 502") != NULL, "%s", err_text);
	ck_assert_int_eq(run("storage-pools", "describe", "nope", NULL), CLI_EXIT_API);
	ck_assert_msg(strstr(err_text, "NOT_FOUND: no route") != NULL, "%s", err_text);
}
END_TEST

/* Deletes ask on a terminal (gcloud's "Do you want to continue (Y/n)?"), not
 * with --quiet/-q, and not when stdin is not a terminal (the default: yes). */
START_TEST(test_delete_confirm)
{
	static const char prompt[] = "You are about to delete storage pool [x].\n\n"
				     "Do you want to continue (Y/n)?  ";

	ck_assert_int_eq(run_tty("n\n", "storage-pools", "delete", "x", NULL), CLI_EXIT_FAIL);
	ck_assert_int_eq(fake.deletes, 0);
	ck_assert_msg(strncmp(err_text, prompt, strlen(prompt)) == 0, "%s", err_text);
	ck_assert_msg(strstr(err_text, "Aborted by user.") != NULL, "%s", err_text);
	ck_assert_int_eq(run_tty("maybe\nNO\n", "storage-pools", "delete", "x", NULL), CLI_EXIT_FAIL);
	ck_assert_msg(strstr(err_text, "Please enter 'y' or 'n'") != NULL, "%s", err_text);
	ck_assert_int_eq(fake.deletes, 0);
	ck_assert_int_eq(run_tty("y\n", "storage-pools", "delete", "x", NULL), CLI_EXIT_OK);
	ck_assert_int_eq(fake.deletes, 1);
	ck_assert_msg(strstr(err_text, "Deleting storage pool x...done.") != NULL, "%s", err_text);
	ck_assert_int_eq(run_tty("\n", "storage-pools", "delete", "x", NULL), CLI_EXIT_OK);
	ck_assert_int_eq(fake.deletes, 2);
	ck_assert_int_eq(run_tty("n\n", "storage-pools", "delete", "x", "--quiet", NULL), CLI_EXIT_OK);
	ck_assert_int_eq(fake.deletes, 3);
	ck_assert_int_eq(run_tty("n\n", "-q", "storage-pools", "delete", "x", NULL), CLI_EXIT_OK);
	ck_assert_int_eq(fake.deletes, 4);
	ck_assert_str_eq(err_text, "Deleting storage pool x...done.\n");
	ck_assert_int_eq(run("storage-pools", "delete", "x", NULL), CLI_EXIT_OK);
	ck_assert_int_eq(fake.deletes, 5);
	ck_assert_str_eq(err_text, "Deleting storage pool x...done.\n");
	/* --quiet is for deletes only: elsewhere it would do nothing */
	ck_assert_int_eq(run("storage-pools", "describe", "x", "--quiet", NULL), CLI_EXIT_USAGE);
}
END_TEST

/* volumes metrics: a readable table by default (MiB/s per 10 s step, two
 * decimals, p99 "-" without operations, used bytes in binary units); the
 * answer itself with --format. */
START_TEST(test_metrics_table)
{
	setenv("TZ", "UTC", 1);
	ck_assert_int_eq(run("volumes", "metrics", "m1", NULL), CLI_EXIT_OK);
	/* 10485760 B in 10 s = 1.00 MiB/s; 5242880 B = 0.50; 1610612736 B = 1.50 GiB */
	ck_assert_str_eq(out_text,
				   "TIME      READ_MIB/S  WRITE_MIB/S  LIMIT_MIB/S  P99_MS  USED\n"
				   "12:00:10  1.00        0.00         128.00       1.23    1.50 GiB\n"
				   "12:00:20  0.00        0.50         128.50       -       512 B\n");
	ck_assert_int_eq(run("volumes", "metrics", "m1", "--format=value(points[0].readBytes)", NULL),
			 CLI_EXIT_OK);
	ck_assert_str_eq(out_text, "10485760\n");
	ck_assert_int_eq(run("volumes", "metrics", "m0", NULL), CLI_EXIT_OK);
	ck_assert_str_eq(out_text, "");
	ck_assert_str_eq(err_text, "No points in the last 90 s.\n");
	unsetenv("TZ");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_wait");
	TCase *tc = tcase_create("cli_wait");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_paging);
	tcase_add_test(tc, test_wait_through_404);
	tcase_add_test(tc, test_op_error);
	tcase_add_test(tc, test_async_and_wire);
	tcase_add_test(tc, test_non_json_error);
	tcase_add_test(tc, test_delete_confirm);
	tcase_add_test(tc, test_metrics_table);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
