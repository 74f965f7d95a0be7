/* Unit tests for cli/cli_format.c: --format parsing, field paths, each
 * printer, and the client-side filter and sort. */
#include "cli/cli_format.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static const char *vol_json =
	"{\"name\":\"projects/p/locations/l/volumes/v1\",\"capacityGib\":\"500\","
	"\"serviceLevel\":\"PREMIUM\",\"throughputMibps\":31.25,\"largeCapacity\":false,"
	"\"protocols\":[\"NFSV3\",\"NFSV4\"],\"labels\":{},"
	"\"mountOptions\":[{\"export\":\"/v1\",\"exportFull\":\"10.0.0.1:/v1\",\"protocol\":\"NFSV3\"}],"
	"\"exportPolicy\":{\"rules\":[{\"allowedClients\":\"10.0.0.0/8\",\"anonUid\":\"65534\"}]},"
	"\"description\":\"it's: #1\"}";

static json_t *load(const char *text)
{
	json_error_t err;
	json_t *j = json_loads(text, 0, &err);

	ck_assert_msg(j != NULL, "bad test JSON: %s", err.text);
	return j;
}

/* Print doc with spec into a string (caller frees). */
static char *render(const char *spec, const char *columns, const json_t *doc, bool is_list)
{
	struct cli_fmt f;
	aq_msg msg = { { 0 } };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(out);
	ck_assert_msg(cli_fmt_parse(&f, spec, CLI_FMT_YAML, columns, &msg) == AQ_OK, "%s: %s", spec,
		      msg.text);
	cli_fmt_print(out, &f, doc, is_list);
	fclose(out);
	return buf;
}

START_TEST(test_parse_specs)
{
	struct cli_fmt f;
	aq_msg msg = { { 0 } };

	ck_assert_int_eq(cli_fmt_parse(&f, "json", CLI_FMT_YAML, NULL, &msg), AQ_OK);
	ck_assert_int_eq(f.kind, CLI_FMT_JSON);
	ck_assert_int_eq(cli_fmt_parse(&f, "YAML", CLI_FMT_YAML, NULL, &msg), AQ_OK);
	ck_assert_int_eq(f.kind, CLI_FMT_YAML);
	ck_assert_int_eq(cli_fmt_parse(&f, NULL, CLI_FMT_TABLE, "name,state", &msg), AQ_OK);
	ck_assert_int_eq(f.kind, CLI_FMT_TABLE);
	ck_assert_int_eq(f.nfields, 2);
	ck_assert_int_eq(cli_fmt_parse(&f, NULL, CLI_FMT_TABLE, NULL, &msg), AQ_OK);
	ck_assert_int_eq(f.kind, CLI_FMT_YAML);
	ck_assert_int_eq(cli_fmt_parse(&f, "value(name.basename(),capacityGib:CAP, state)",
				       CLI_FMT_YAML, NULL, &msg), AQ_OK);
	ck_assert_int_eq(f.kind, CLI_FMT_VALUE);
	ck_assert_int_eq(f.nfields, 3);
	ck_assert_str_eq(f.fields[0].path, "name");
	ck_assert_int_eq(f.fields[0].xform, CLI_XF_BASENAME);
	ck_assert_str_eq(f.fields[1].label, "CAP");
	ck_assert_str_eq(f.fields[2].path, "state");
	ck_assert_int_eq(cli_fmt_parse(&f, "table(mountOptions[0].exportFull)", CLI_FMT_YAML, NULL,
				       &msg), AQ_OK);
	ck_assert_str_eq(f.fields[0].label, "EXPORT_FULL");

	ck_assert_int_eq(cli_fmt_parse(&f, "xml", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "xml") != NULL, "%s", msg.text);
	ck_assert_int_eq(cli_fmt_parse(&f, "value", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_fmt_parse(&f, "value()", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_fmt_parse(&f, "value(name", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_fmt_parse(&f, "json(name)", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_fmt_parse(&f, "value(a,,b)", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_fmt_parse(&f, "table", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
}
END_TEST

START_TEST(test_paths)
{
	json_t *v = load(vol_json);
	char text[256];

	ck_assert_str_eq(json_string_value(cli_json_path(v, "capacityGib")), "500");
	ck_assert_str_eq(json_string_value(cli_json_path(v, "mountOptions[0].exportFull")),
			 "10.0.0.1:/v1");
	ck_assert_str_eq(json_string_value(cli_json_path(v, "exportPolicy.rules[0].anonUid")), "65534");
	ck_assert_ptr_null(cli_json_path(v, "mountOptions[1].exportFull"));
	ck_assert_ptr_null(cli_json_path(v, "nope.deeper"));
	ck_assert_ptr_null(cli_json_path(v, "capacityGib[0]"));
	ck_assert_ptr_null(cli_json_path(v, "mountOptions[x]"));
	cli_json_text(cli_json_path(v, "protocols"), text, sizeof(text));
	ck_assert_str_eq(text, "NFSV3;NFSV4");
	cli_json_text(cli_json_path(v, "throughputMibps"), text, sizeof(text));
	ck_assert_str_eq(text, "31.25");
	cli_json_text(cli_json_path(v, "largeCapacity"), text, sizeof(text));
	ck_assert_str_eq(text, "false");
	cli_json_text(cli_json_path(v, "absent"), text, sizeof(text));
	ck_assert_str_eq(text, "");
	json_decref(v);
}
END_TEST

START_TEST(test_value)
{
	json_t *v = load(vol_json);
	char *out = render("value(serviceLevel)", NULL, v, false);

	ck_assert_str_eq(out, "PREMIUM\n");
	free(out);
	out = render("value(name.basename(),mountOptions[0].exportFull,capacityGib)", NULL, v, false);
	ck_assert_str_eq(out, "v1\t10.0.0.1:/v1\t500\n");
	free(out);
	out = render("value(name.location(),description.location(),description.basename())", NULL, v,
		     false);
	ck_assert_str_eq(out, "l\t\tit's: #1\n");
	free(out);
	json_decref(v);
}
END_TEST

START_TEST(test_json)
{
	json_t *v = load(vol_json), *back;
	char *out = render("json", NULL, v, false);

	back = load(out);
	ck_assert(json_equal(v, back));
	ck_assert_msg(strstr(out, "\"capacityGib\": \"500\"") != NULL, "%s", out);
	json_decref(back);
	free(out);
	json_decref(v);
}
END_TEST

START_TEST(test_yaml)
{
	json_t *v = load(vol_json);
	char *out = render("yaml", NULL, v, false);

	ck_assert_msg(strstr(out, "name: projects/p/locations/l/volumes/v1\n") != NULL, "%s", out);
	/* int64 strings stay strings in YAML */
	ck_assert_msg(strstr(out, "capacityGib: '500'\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "throughputMibps: 31.25\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "largeCapacity: false\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "protocols:\n- NFSV3\n- NFSV4\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "labels: {}\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "mountOptions:\n- export: /v1\n  exportFull: '10.0.0.1:/v1'\n"
				  "  protocol: NFSV3\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "exportPolicy:\n  rules:\n  - allowedClients: '10.0.0.0/8'\n"
				  "    anonUid: '65534'\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "description: 'it''s: #1'\n") != NULL, "%s", out);
	free(out);
	json_decref(v);
}
END_TEST

static const char *list_json =
	"[{\"name\":\"projects/p/locations/l/storagePools/b\",\"serviceLevel\":\"PREMIUM\",\"capacityGib\":\"10240\",\"state\":\"READY\"},"
	" {\"name\":\"projects/p/locations/l/storagePools/a\",\"serviceLevel\":\"STANDARD\",\"capacityGib\":\"2048\",\"state\":\"READY\"},"
	" {\"name\":\"projects/p/locations/l/storagePools/c\",\"serviceLevel\":\"PREMIUM\",\"capacityGib\":\"4096\",\"state\":\"CREATING\"}]";

START_TEST(test_table)
{
	json_t *l = load(list_json);
	char *out = render("table(name.basename():NAME,serviceLevel,capacityGib)", NULL, l, true);

	ck_assert_str_eq(out, "NAME  SERVICE_LEVEL  CAPACITY_GIB\n"
			      "b     PREMIUM        10240\n"
			      "a     STANDARD       2048\n"
			      "c     PREMIUM        4096\n");
	free(out);
	out = render("value(name.basename())", NULL, l, true);
	ck_assert_str_eq(out, "b\na\nc\n");
	free(out);
	out = render("yaml", NULL, l, true);
	ck_assert_msg(strstr(out, "state: READY\n---\nname:") != NULL, "%s", out);
	free(out);
	json_decref(l);
}
END_TEST

static char *names(const json_t *arr)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *out = open_memstream(&buf, &len);
	char text[64];

	for (i = 0; i < json_array_size(arr); i++) {
		cli_json_text(cli_json_path(json_array_get(arr, i), "name"), text, sizeof(text));
		fprintf(out, "%s ", strrchr(text, '/') + 1);
	}
	fclose(out);
	return buf;
}

static void filter_is(const json_t *l, const char *filter, const char *want)
{
	json_t *got = NULL;
	aq_msg msg = { { 0 } };
	char *n;

	ck_assert_msg(cli_list_filter(l, filter, &got, &msg) == AQ_OK, "%s: %s", filter, msg.text);
	n = names(got);
	ck_assert_msg(strcmp(n, want) == 0, "filter %s: got '%s', want '%s'", filter, n, want);
	free(n);
	json_decref(got);
}

START_TEST(test_filter)
{
	json_t *l = load(list_json), *got = NULL;
	aq_msg msg = { { 0 } };

	filter_is(l, "serviceLevel=PREMIUM", "b c ");
	filter_is(l, "serviceLevel=premium", "b c ");
	filter_is(l, "serviceLevel!=PREMIUM", "a ");
	filter_is(l, "serviceLevel=PREMIUM AND state=READY", "b ");
	filter_is(l, "serviceLevel=PREMIUM state=READY", "b ");
	filter_is(l, "name=a", "a ");
	filter_is(l, "name=projects/p/locations/l/storagePools/c", "c ");
	filter_is(l, "state:creat", "c ");
	filter_is(l, "serviceLevel=\"STANDARD\"", "a ");
	filter_is(l, "", "b a c ");
	ck_assert_int_eq(cli_list_filter(l, "justaword", &got, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_list_filter(l, "=x", &got, &msg), AQ_EINVAL);
	ck_assert_ptr_null(got);
	json_decref(l);
}
END_TEST

START_TEST(test_sort)
{
	json_t *l = load(list_json);
	aq_msg msg = { { 0 } };
	char *n;

	ck_assert_int_eq(cli_list_sort(l, "name", &msg), AQ_OK);
	n = names(l);
	ck_assert_str_eq(n, "a b c ");
	free(n);
	ck_assert_int_eq(cli_list_sort(l, "~name", &msg), AQ_OK);
	n = names(l);
	ck_assert_str_eq(n, "c b a ");
	free(n);
	/* Numeric strings sort as numbers: 2048 < 4096 < 10240. */
	ck_assert_int_eq(cli_list_sort(l, "capacityGib", &msg), AQ_OK);
	n = names(l);
	ck_assert_str_eq(n, "a c b ");
	free(n);
	/* Stable, two keys. */
	ck_assert_int_eq(cli_list_sort(l, "serviceLevel,~capacityGib", &msg), AQ_OK);
	n = names(l);
	ck_assert_str_eq(n, "b c a ");
	free(n);
	ck_assert_int_eq(cli_list_sort(l, "~", &msg), AQ_EINVAL);
	json_decref(l);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_format");
	TCase *tc = tcase_create("cli_format");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_parse_specs);
	tcase_add_test(tc, test_paths);
	tcase_add_test(tc, test_value);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_yaml);
	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_filter);
	tcase_add_test(tc, test_sort);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
