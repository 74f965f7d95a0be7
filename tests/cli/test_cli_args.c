/* Unit tests for cli/cli_args.c: parsing a command line against the command
 * table, and the request (body, updateMask, query) built from it. */
#include "cli/cli_args.h"

#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/aqt.h"

#define MAXARGV 32

/* Parse a NULL-terminated list of words (argv[0] is added). */
static int parse(struct cli_args *a, aq_msg *msg, ...)
{
	static char *argv[MAXARGV];
	va_list ap;
	int argc = 0;
	char *w;

	argv[argc++] = (char *)(uintptr_t)"aquifer";
	va_start(ap, msg);
	while ((w = va_arg(ap, char *)) != NULL && argc < MAXARGV - 1)
		argv[argc++] = w;
	va_end(ap);
	argv[argc] = NULL;
	return cli_args_parse(a, argc, argv, msg);
}

#define W(s) ((char *)(uintptr_t)(s))

/* Build the request and return the body as compact sorted JSON (caller frees). */
static char *request(const struct cli_args *a, char *mask, size_t msize, char *query, size_t qsize)
{
	struct ut_buf m, q;
	json_t *body = NULL;
	aq_msg msg = { .text = { 0 } };
	char *text;

	ut_buf_init(&m, CLI_BUF_MAX);
	ut_buf_init(&q, CLI_BUF_MAX);
	ck_assert_msg(cli_args_request(a, &body, &m, &q, &msg) == AQ_OK, "%s", msg.text);
	snprintf(mask, msize, "%s", ut_buf_str(&m));
	snprintf(query, qsize, "%s", ut_buf_str(&q));
	text = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(body);
	ut_buf_cleanup(&m);
	ut_buf_cleanup(&q);
	return text;
}

START_TEST(test_pool_create)
{
	struct cli_args a;
	aq_msg msg = { .text = { 0 } };
	char mask[256], query[256], *body;

	ck_assert_int_eq(parse(&a, &msg, W("storage-pools"), W("create"), W("p1"),
			       W("--capacity=2TiB"), W("--service-level=premium"),
			       W("--format=json"), W("--labels"), W("env=prod,team=db"),
			       W("--allow-auto-tiering"), W("--total-throughput=1GiB/s"), NULL),
			 AQ_OK);
	ck_assert_str_eq(a.cmd->group, "storage-pools");
	ck_assert_str_eq(a.cmd->verb, "create");
	ck_assert_int_eq(a.npos, 1);
	ck_assert_str_eq(a.pos[0], "p1");
	ck_assert_str_eq(cli_args_get(&a, "format"), "json");
	body = request(&a, mask, sizeof(mask), query, sizeof(query));
	ck_assert_str_eq(body, "{\"allowAutoTiering\":true,\"capacityGib\":\"2048\","
			       "\"labels\":{\"env\":\"prod\",\"team\":\"db\"},"
			       "\"serviceLevel\":\"PREMIUM\",\"totalThroughputMibps\":\"1024\"}");
	ck_assert_str_eq(query, "");
	free(body);
}
END_TEST

START_TEST(test_flags_anywhere)
{
	struct cli_args a;
	aq_msg msg = { .text = { 0 } };

	ck_assert_int_eq(parse(&a, &msg, W("--project"), W("p9"), W("--location=l9"),
			       W("storage-pools"), W("--format"), W("json"), W("describe"),
			       W("p1"), NULL), AQ_OK);
	ck_assert_str_eq(a.cmd->verb, "describe");
	ck_assert_str_eq(cli_args_get(&a, "project"), "p9");
	ck_assert_str_eq(cli_args_get(&a, "location"), "l9");
	ck_assert_str_eq(a.pos[0], "p1");
}
END_TEST

START_TEST(test_volume_create)
{
	struct cli_args a;
	aq_msg msg = { .text = { 0 } };
	char mask[256], query[256], *body;

	ck_assert_int_eq(parse(&a, &msg, W("volumes"), W("create"), W("v1"),
			       W("--storage-pool=p1"), W("--capacity=500GiB"),
			       W("--protocols=nfsv3,NFSV4"), W("--share-name=v1"),
			       W("--export-policy=allowed-clients=10.0.0.0/8,10.1.0.0/16,"
				 "access-type=read_write,nfsv3=true,squash-mode=ROOT_SQUASH,"
				 "anon-uid=65534,has-root-access=true"),
			       W("--export-policy=allowed-clients=192.168.0.0/16,access-type=READ_ONLY"),
			       W("--tiering-policy=tier-action=ENABLED,cooling-threshold-days=31"),
			       W("--throughput-mibps=93.75"), W("--large-capacity=false"), NULL),
			 AQ_OK);
	body = request(&a, mask, sizeof(mask), query, sizeof(query));
	ck_assert_str_eq(body,
		"{\"capacityGib\":\"500\",\"exportPolicy\":{\"rules\":["
		"{\"accessType\":\"READ_WRITE\",\"allowedClients\":\"10.0.0.0/8,10.1.0.0/16\","
		"\"anonUid\":\"65534\",\"hasRootAccess\":\"true\",\"nfsv3\":true,"
		"\"squashMode\":\"ROOT_SQUASH\"},"
		"{\"accessType\":\"READ_ONLY\",\"allowedClients\":\"192.168.0.0/16\"}]},"
		"\"largeCapacity\":false,\"protocols\":[\"NFSV3\",\"NFSV4\"],\"shareName\":\"v1\","
		"\"storagePool\":\"p1\",\"throughputMibps\":93.75,"
		"\"tieringPolicy\":{\"coolingThresholdDays\":31,\"tierAction\":\"ENABLED\"}}");
	free(body);
}
END_TEST

START_TEST(test_update_mask)
{
	struct cli_args a;
	aq_msg msg = { .text = { 0 } };
	char mask[256], query[256], *body;

	ck_assert_int_eq(parse(&a, &msg, W("storage-pools"), W("update"), W("p1"),
			       W("--description=big"), W("--capacity=3TiB"), NULL), AQ_OK);
	body = request(&a, mask, sizeof(mask), query, sizeof(query));
	/* Table order, exactly the flags given. */
	ck_assert_str_eq(mask, "capacityGib,description");
	ck_assert_str_eq(body, "{\"capacityGib\":\"3072\",\"description\":\"big\"}");
	free(body);

	ck_assert_int_eq(parse(&a, &msg, W("volumes"), W("update"), W("v1"),
			       W("--export-policy=allowed-clients=10.0.0.0/8"),
			       W("--tiering-policy=tier-action=PAUSED"), NULL), AQ_OK);
	body = request(&a, mask, sizeof(mask), query, sizeof(query));
	ck_assert_str_eq(mask, "exportPolicy,tieringPolicy");
	free(body);

	/* Update needs no required flag. */
	ck_assert_int_eq(parse(&a, &msg, W("volumes"), W("update"), W("v1"), NULL), AQ_OK);
	body = request(&a, mask, sizeof(mask), query, sizeof(query));
	ck_assert_str_eq(mask, "");
	free(body);
	/* --network=name=N,psa-range=R lands at the body's root (gcloud's spelling) */
	ck_assert_int_eq(parse(&a, &msg, W("storage-pools"), W("create"), W("p1"), W("--capacity=2TiB"),
			       W("--service-level=premium"), W("--network=name=vpc1,psa-range=10.0.0.0/16"),
			       NULL), AQ_OK);
	body = request(&a, mask, sizeof(mask), query, sizeof(query));
	ck_assert_str_eq(body, "{\"capacityGib\":\"2048\",\"network\":\"vpc1\",\"psaRange\":\"10.0.0.0/16\","
			       "\"serviceLevel\":\"PREMIUM\"}");
	free(body);
	/* the label flags of an update are not sent as typed (cli_labels.c computes them) */
	ck_assert_int_eq(parse(&a, &msg, W("volumes"), W("update"), W("v1"), W("--update-labels=a=1"),
			       W("--description=d"), NULL), AQ_OK);
	body = request(&a, mask, sizeof(mask), query, sizeof(query));
	ck_assert_str_eq(mask, "description");
	ck_assert_str_eq(body, "{\"description\":\"d\"}");
	free(body);
}
END_TEST

START_TEST(test_delete_query)
{
	struct cli_args a;
	aq_msg msg = { .text = { 0 } };
	char mask[256], query[256], *body;

	ck_assert_int_eq(parse(&a, &msg, W("volumes"), W("delete"), W("v1"), W("--force"), NULL),
			 AQ_OK);
	body = request(&a, mask, sizeof(mask), query, sizeof(query));
	ck_assert_str_eq(query, "&force=true");
	ck_assert_str_eq(body, "{}");
	free(body);
	ck_assert_int_eq(parse(&a, &msg, W("volumes"), W("delete"), W("v1"), W("--no-force"), NULL),
			 AQ_OK);
	body = request(&a, mask, sizeof(mask), query, sizeof(query));
	ck_assert_str_eq(query, "&force=false");
	free(body);
	ck_assert_int_eq(parse(&a, &msg, W("nodes"), W("join-token"), W("--location=l1"),
			       W("--ttl=2h"), NULL), AQ_OK);
	body = request(&a, mask, sizeof(mask), query, sizeof(query));
	ck_assert_str_eq(query, "&ttl=7200");
	free(body);
}
END_TEST

/* Each bad command line is refused with a message containing want. */
static void refused(const char *want, ...)
{
	static char *argv[MAXARGV];
	struct cli_args a;
	aq_msg msg = { .text = { 0 } };
	va_list ap;
	int argc = 0;
	char *w;

	argv[argc++] = W("aquifer");
	va_start(ap, want);
	while ((w = va_arg(ap, char *)) != NULL && argc < MAXARGV - 1)
		argv[argc++] = w;
	va_end(ap);
	ck_assert_msg(cli_args_parse(&a, argc, argv, &msg) == AQ_EINVAL, "accepted (want %s)", want);
	ck_assert_msg(strstr(msg.text, want) != NULL, "message '%s' lacks '%s'", msg.text, want);
}

START_TEST(test_usage_errors)
{
	refused("unknown command group", W("buckets"), W("list"), NULL);
	refused("unknown command", W("volumes"), W("explode"), NULL);
	refused("missing command", W("volumes"), NULL);
	refused("unrecognized flag: --bogus", W("volumes"), W("list"), W("--bogus"), NULL);
	refused("unrecognized flag", W("volumes"), W("list"), W("-x"), NULL);
	refused("unexpected argument", W("volumes"), W("list"), W("extra"), NULL);
	refused("missing argument", W("volumes"), W("describe"), NULL);
	refused("missing required flag: --service-level", W("storage-pools"), W("create"), W("p1"),
		W("--capacity=2TiB"), NULL);
	refused("choose from standard, premium, extreme, flex", W("storage-pools"), W("create"),
		W("p1"), W("--capacity=2TiB"), W("--service-level=gold"), NULL);
	refused("--capacity", W("storage-pools"), W("create"), W("p1"), W("--capacity=2XiB"),
		W("--service-level=premium"), NULL);
	refused("needs a value", W("storage-pools"), W("create"), W("p1"), W("--capacity"), NULL);
	refused("expected true or false", W("storage-pools"), W("create"), W("p1"),
		W("--capacity=2TiB"), W("--service-level=premium"), W("--allow-auto-tiering=maybe"),
		NULL);
	refused("unknown key 'colour'", W("volumes"), W("update"), W("v1"),
		W("--export-policy=colour=blue"), NULL);
	refused("not KEY=VALUE", W("volumes"), W("create"), W("v1"), W("--labels=oops"), NULL);
	refused("not KEY=VALUE", W("volumes"), W("update"), W("v1"), W("--update-labels=oops"), NULL);
	refused("empty key", W("volumes"), W("update"), W("v1"), W("--remove-labels=a,,b"), NULL);
	/* issue 17: update offers only what can be updated; labels go by gcloud's three flags */
	refused("unrecognized flag: --labels", W("volumes"), W("update"), W("v1"), W("--labels=a=b"), NULL);
	refused("unrecognized flag: --service-level", W("storage-pools"), W("update"), W("p1"),
		W("--service-level=flex"), NULL);
	refused("unrecognized flag: --network", W("storage-pools"), W("update"), W("p1"),
		W("--network=name=n"), NULL);
	/* --network as gcloud's: name=NETWORK[,psa-range=RANGE] */
	refused("expected name=NETWORK", W("storage-pools"), W("create"), W("p1"), W("--capacity=2TiB"),
		W("--service-level=premium"), W("--network=vpc1"), NULL);
	refused("name=NETWORK is required", W("storage-pools"), W("create"), W("p1"), W("--capacity=2TiB"),
		W("--service-level=premium"), W("--network=psa-range=10.0.0.0/16"), NULL);
	refused("unknown key 'colour'", W("storage-pools"), W("create"), W("p1"), W("--capacity=2TiB"),
		W("--service-level=premium"), W("--network=name=n,colour=red"), NULL);
	refused("choose from", W("volumes"), W("create"), W("v1"), W("--protocols=nfsv3,ftp"), NULL);
	refused("choose from", W("volumes"), W("update"), W("v1"),
		W("--export-policy=access-type=sometimes"), NULL);
	refused("--limit", W("volumes"), W("list"), W("--limit=ten"), NULL);
	refused("unrecognized flag: --async", W("volumes"), W("list"), W("--async"), NULL);
	refused("unrecognized flag: --force", W("storage-pools"), W("delete"), W("p1"), W("--force"),
		NULL);
}
END_TEST

START_TEST(test_help_and_routes)
{
	struct cli_args a;
	aq_msg msg = { .text = { 0 } };

	ck_assert_int_eq(parse(&a, &msg, W("volumes"), W("create"), W("--help"), NULL), AQ_OK);
	ck_assert(a.help);
	ck_assert_ptr_nonnull(a.cmd);
	ck_assert_int_eq(parse(&a, &msg, W("volumes"), W("-h"), NULL), AQ_OK);
	ck_assert(a.help);
	ck_assert_ptr_null(a.cmd);
	ck_assert_int_eq(parse(&a, &msg, W("--help"), NULL), AQ_OK);
	ck_assert(a.help);
	ck_assert_int_eq(parse(&a, &msg, W("__routes"), NULL), AQ_OK);
	ck_assert(a.routes);
	/* Local commands: positionals and their own flags. */
	ck_assert_int_eq(parse(&a, &msg, W("config"), W("set"), W("project"), W("p1"), NULL), AQ_OK);
	ck_assert_int_eq(a.npos, 2);
	ck_assert_int_eq(parse(&a, &msg, W("auth"), W("login"), W("--token=abc"), NULL), AQ_OK);
	ck_assert_str_eq(cli_args_get(&a, "token"), "abc");
	ck_assert_int_eq(parse(&a, &msg, W("auth"), W("login"), NULL), AQ_EINVAL);
}
END_TEST

/* --read-ahead=MODE[,depth-files=N] (issue 23): the mode leads unnamed,
 * any case; updateMask readAhead; bad input refused naming the flag. */
START_TEST(test_read_ahead)
{
	struct cli_args a;
	aq_msg msg = { .text = { 0 } };
	char mask[256], query[256], *body;

	ck_assert_int_eq(parse(&a, &msg, W("volumes"), W("update"), W("v1"),
			       W("--read-ahead=cross_file_sequential,depth-files=8"), NULL), AQ_OK);
	body = request(&a, mask, sizeof(mask), query, sizeof(query));
	ck_assert_str_eq(mask, "readAhead");
	ck_assert_str_eq(body, "{\"readAhead\":{\"depthFiles\":8,\"mode\":\"CROSS_FILE_SEQUENTIAL\"}}");
	free(body);
	ck_assert_int_eq(parse(&a, &msg, W("volumes"), W("update"), W("v1"), W("--read-ahead=AGGRESSIVE"), NULL),
			 AQ_OK);
	body = request(&a, mask, sizeof(mask), query, sizeof(query));
	ck_assert_str_eq(body, "{\"readAhead\":{\"mode\":\"AGGRESSIVE\"}}");
	free(body);
	ck_assert_int_eq(parse(&a, &msg, W("volumes"), W("update"), W("v1"), W("--read-ahead=SIDEWAYS"), NULL),
			 AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg.text, "--read-ahead"));
	ck_assert_int_eq(parse(&a, &msg, W("volumes"), W("update"), W("v1"), W("--read-ahead=depth-files=4"), NULL),
			 AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg.text, "mode first"));
	ck_assert_int_eq(parse(&a, &msg, W("volumes"), W("update"), W("v1"),
			       W("--read-ahead=CROSS_FILE_SEQUENTIAL,depth=4"), NULL), AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg.text, "unknown key 'depth'"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_args");
	TCase *tc = tcase_create("cli_args");

	tcase_add_test(tc, test_pool_create);
	tcase_add_test(tc, test_flags_anywhere);
	tcase_add_test(tc, test_volume_create);
	tcase_add_test(tc, test_update_mask);
	tcase_add_test(tc, test_delete_query);
	tcase_add_test(tc, test_usage_errors);
	tcase_add_test(tc, test_help_and_routes);
	tcase_add_test(tc, test_read_ahead);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
