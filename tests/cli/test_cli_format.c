/* Unit tests for cli/cli_format.c: --format parsing, field paths, each
 * printer, and the client-side filter and sort. */
#include "cli/cli_filter.h"
#include "cli/cli_format.h"
#include "api/api_resource.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/lib/aqt.h"

static const char *vol_json =
	"{\"name\":\"projects/p/locations/l/volumes/v1\",\"capacityGib\":\"500\","
	"\"serviceLevel\":\"PREMIUM\",\"throughputMibps\":31.25,\"largeCapacity\":false,"
	"\"protocols\":[\"NFSV3\",\"NFSV4\"],\"labels\":{},"
	"\"mountOptions\":[{\"export\":\"/v1\",\"exportFull\":\"10.0.0.1:/v1\",\"protocol\":\"NFSV3\"}],"
	"\"exportPolicy\":{\"rules\":[{\"allowedClients\":\"10.0.0.0/8\",\"anonUid\":\"65534\"}]},"
	"\"description\":\"it's: #1\"}";

static const struct api_field *api_volume_fields_for_test(void)
{
	return api_volume_fields;
}

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
	aq_msg msg = { .text = { 0 } };
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
	aq_msg msg = { .text = { 0 } };

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
	/* json(...) is a projection now (issue 17) */
	ck_assert_int_eq(cli_fmt_parse(&f, "json(name)", CLI_FMT_YAML, NULL, &msg), AQ_OK);
	ck_assert_int_eq(f.kind, CLI_FMT_JSON);
	ck_assert_int_eq(f.nfields, 1);
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
	aq_msg msg = { .text = { 0 } };
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
	aq_msg msg = { .text = { 0 } };

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
	aq_msg msg = { .text = { 0 } };
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

/* Issue 17: gcloud's formats, transforms and their errors. */
START_TEST(test_gcloud_specs)
{
	struct cli_fmt f;
	aq_msg msg = { .text = { 0 } };

	ck_assert_int_eq(cli_fmt_parse(&f, "table(name.basename():label=POOL, state)", CLI_FMT_YAML,
				       NULL, &msg), AQ_OK);
	ck_assert_str_eq(f.fields[0].label, "POOL");
	ck_assert(f.fields[0].labelled);
	ck_assert_str_eq(f.fields[1].label, "STATE");
	ck_assert_int_eq(cli_fmt_parse(&f, "csv(name,capacityGib)", CLI_FMT_YAML, NULL, &msg), AQ_OK);
	ck_assert_int_eq(f.kind, CLI_FMT_CSV);
	ck_assert_int_eq(cli_fmt_parse(&f, "flattened", CLI_FMT_YAML, NULL, &msg), AQ_OK);
	ck_assert_int_eq(f.kind, CLI_FMT_FLATTENED);
	ck_assert_int_eq(cli_fmt_parse(&f, "yaml(name,labels)", CLI_FMT_YAML, NULL, &msg), AQ_OK);
	ck_assert_int_eq(f.nfields, 2);
	/* a comma inside a transform's argument is not a field separator */
	ck_assert_int_eq(cli_fmt_parse(&f, "value(createTime.date('%d, %b'),name)", CLI_FMT_YAML, NULL,
				       &msg), AQ_OK);
	ck_assert_int_eq(f.nfields, 2);
	ck_assert_int_eq(f.fields[0].xform, CLI_XF_DATE);
	ck_assert_str_eq(f.fields[0].arg, "%d, %b");
	ck_assert_int_eq(cli_fmt_parse(&f, "table[no-heading](name)", CLI_FMT_YAML, NULL, &msg), AQ_OK);
	ck_assert(f.no_heading);
	/* errors, never an empty column */
	ck_assert_int_eq(cli_fmt_parse(&f, "value(name.nosuch())", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "unknown transform 'nosuch()'") != NULL, "%s", msg.text);
	ck_assert_int_eq(cli_fmt_parse(&f, "value(name.basename(x))", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_fmt_parse(&f, "table(name:sort=1)", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "unknown --format attribute 'sort'") != NULL, "%s", msg.text);
	ck_assert_int_eq(cli_fmt_parse(&f, "table(name:label=)", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
	ck_assert_str_eq(msg.text, "invalid --format label 'label='");
	ck_assert_int_eq(cli_fmt_parse(&f, "json[no-heading]", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_fmt_parse(&f, "csv", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_fmt_parse(&f, "value(a..b)", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_fmt_parse(&f, "value(a[x])", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_fmt_parse(&f, "jsonx", CLI_FMT_YAML, NULL, &msg), AQ_EINVAL);
}
END_TEST

/* Unknown fields: against the resource's table, or the answer without one. */
START_TEST(test_unknown_fields)
{
	struct cli_fmt f;
	aq_msg msg = { .text = { 0 } };
	json_t *l = load(list_json);

	ck_assert(cli_schema_has(api_volume_fields_for_test(), "capacityGib"));
	ck_assert(cli_schema_has(api_volume_fields_for_test(), "mountOptions[0].exportFull"));
	ck_assert(cli_schema_has(api_volume_fields_for_test(), "exportPolicy.rules[1].anonUid"));
	ck_assert(cli_schema_has(api_volume_fields_for_test(), "labels.env"));
	ck_assert(cli_schema_has(api_volume_fields_for_test(), "mountOptions"));
	ck_assert(!cli_schema_has(api_volume_fields_for_test(), "capacity"));
	ck_assert(!cli_schema_has(api_volume_fields_for_test(), "capacityGib[0]"));
	ck_assert(!cli_schema_has(api_volume_fields_for_test(), "mountOptions.exportFull"));
	ck_assert(!cli_schema_has(api_volume_fields_for_test(), "exportPolicy.rules[0].nope"));
	ck_assert(!cli_schema_has(api_volume_fields_for_test(), "labels.env.x"));
	ck_assert(cli_schema_has(cli_operation_fields, "metadata.verb"));
	ck_assert(cli_schema_has(cli_operation_fields, "error.message"));
	ck_assert(!cli_schema_has(cli_operation_fields, "error.nope"));

	ck_assert_int_eq(cli_fmt_parse(&f, "value(name,capacty)", CLI_FMT_YAML, NULL, &msg), AQ_OK);
	ck_assert_int_eq(cli_fmt_check(&f, api_volume_fields_for_test(), NULL, false, &msg), AQ_EINVAL);
	ck_assert_str_eq(msg.text, "unknown field 'capacty' in --format");
	/* no table: the answer decides; an empty list cannot tell */
	ck_assert_int_eq(cli_fmt_check(&f, NULL, l, true, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_fmt_parse(&f, "value(name,state)", CLI_FMT_YAML, NULL, &msg), AQ_OK);
	ck_assert_int_eq(cli_fmt_check(&f, NULL, l, true, &msg), AQ_OK);
	/* the command's own columns are not checked */
	ck_assert_int_eq(cli_fmt_parse(&f, NULL, CLI_FMT_TABLE, "name,nothere", &msg), AQ_OK);
	ck_assert_int_eq(cli_fmt_check(&f, NULL, l, true, &msg), AQ_OK);
	json_decref(l);
}
END_TEST

START_TEST(test_csv_flattened_projection)
{
	json_t *l = load(list_json), *v = load(vol_json), *back;
	char *out = render("csv(name.basename(),capacityGib:label=CAP)", NULL, l, true);

	ck_assert_str_eq(out, "name,CAP\nb,10240\na,2048\nc,4096\n");
	free(out);
	out = render("csv[no-heading](description,protocols)", NULL, v, false);
	ck_assert_str_eq(out, "it's: #1,NFSV3;NFSV4\n");
	free(out);
	json_object_set_new(v, "description", json_string("a, \"b\""));
	out = render("csv(description)", NULL, v, false);
	ck_assert_str_eq(out, "description\n\"a, \"\"b\"\"\"\n");
	free(out);
	out = render("flattened(name,capacityGib,mountOptions,labels)", NULL, v, false);
	/* values start one blank after the longest "key:" */
	ck_assert_str_eq(out,
			      "name:                       projects/p/locations/l/volumes/v1\n"
			      "capacityGib:                500\n"
			      "mountOptions[0].export:     /v1\n"
			      "mountOptions[0].exportFull: 10.0.0.1:/v1\n"
			      "mountOptions[0].protocol:   NFSV3\n"
			      "labels:                     {}\n");
	free(out);
	out = render("json(name.basename(),exportPolicy.rules[0].anonUid)", NULL, v, false);
	back = load(out);
	ck_assert_str_eq(json_string_value(json_object_get(back, "name")), "v1");
	ck_assert_str_eq(json_string_value(cli_json_path(back, "exportPolicy.rules[0].anonUid")), "65534");
	ck_assert_int_eq(json_object_size(back), 2);
	json_decref(back);
	free(out);
	out = render("yaml(name.basename(),state)", NULL, l, true);
	ck_assert_str_eq(out, "name: b\nstate: READY\n---\nname: a\nstate: READY\n---\nname: c\nstate: CREATING\n");
	free(out);
	out = render("table[no-heading](name.basename(),state)", NULL, l, true);
	ck_assert_str_eq(out, "b  READY\na  READY\nc  CREATING\n");
	free(out);
	json_decref(v);
	json_decref(l);
}
END_TEST

START_TEST(test_date)
{
	json_t *v = load("{\"createTime\":\"2026-12-01T12:57:38.477924064Z\",\"t2\":\"2026-12-01T14:00:00+02:00\","
			 "\"bad\":\"yesterday\"}");
	char *out;

	setenv("TZ", "UTC", 1);
	tzset();
	out = render("value(createTime.date(),createTime.date('%Y-%m-%d'),t2.date(format=%H:%M),bad.date())",
		     NULL, v, false);
	ck_assert_str_eq(out, "2026-12-01T12:57:38\t2026-12-01\t12:00\tyesterday\n");
	free(out);
	setenv("TZ", "Asia/Tokyo", 1);
	tzset();
	out = render("value(createTime.date('%H:%M'))", NULL, v, false);
	ck_assert_str_eq(out, "21:57\n");
	free(out);
	unsetenv("TZ");
	json_decref(v);
}
END_TEST

/* gcloud filter operators */
START_TEST(test_filter_gcloud)
{
	json_t *l = load(list_json), *got = NULL;
	aq_msg msg = { .text = { 0 } };

	filter_is(l, "capacityGib>4096", "b ");
	filter_is(l, "capacityGib>=4096", "b c ");
	filter_is(l, "capacityGib<4096", "a ");
	filter_is(l, "capacityGib <= 4096", "a c ");
	filter_is(l, "serviceLevel:stand OR state:creat", "a c ");
	filter_is(l, "NOT serviceLevel=PREMIUM", "a ");
	filter_is(l, "-serviceLevel=PREMIUM", "a ");
	filter_is(l, "NOT (name=a OR name=b)", "c ");
	filter_is(l, "(name=a OR name=b) AND capacityGib>3000", "b ");
	filter_is(l, "(name=a OR name=c) capacityGib<3000", "a ");
	filter_is(l, "state:*", "b a c ");
	filter_is(l, "nothere:*", "");
	filter_is(l, "name.basename()=c", "c ");
	filter_is(l, "state:'creat'", "c ");
	ck_assert_int_eq(cli_list_filter(l, "name:a OR name:b AND state=READY", &got, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "parenthesis") != NULL, "%s", msg.text);
	ck_assert_int_eq(cli_list_filter(l, "(name:a", &got, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_list_filter(l, "name:a)", &got, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_list_filter(l, "name:", &got, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_list_filter(l, "name.nosuch()=x", &got, &msg), AQ_EINVAL);
	ck_assert_int_eq(cli_list_filter(l, "name:'open", &got, &msg), AQ_EINVAL);
	ck_assert_ptr_null(got);
	json_decref(l);
}
END_TEST

/* --sort-by a column sorts by what the column shows */
START_TEST(test_sort_column)
{
	json_t *l = load("[{\"name\":\"projects/p/locations/z/volumes/a\"},"
			 "{\"name\":\"projects/p/locations/a/volumes/c\"},"
			 "{\"name\":\"projects/p/locations/m/volumes/b\"}]");
	struct cli_fmt f;
	struct cli_sort s;
	aq_msg msg = { .text = { 0 } };
	char *n;

	ck_assert_int_eq(cli_fmt_parse(&f, NULL, CLI_FMT_TABLE, "name.basename():NAME,name.location():LOCATION",
				       &msg), AQ_OK);
	ck_assert_int_eq(cli_sort_parse(&s, "name", &msg), AQ_OK);
	cli_sort_bind(&s, f.fields, f.nfields);
	cli_sort_apply(&s, l);
	n = names(l);
	ck_assert_str_eq(n, "a b c ");
	free(n);
	ck_assert_int_eq(cli_sort_parse(&s, "~LOCATION", &msg), AQ_OK);
	cli_sort_bind(&s, f.fields, f.nfields);
	ck_assert(s.keys[0].column);
	cli_sort_apply(&s, l);
	n = names(l);
	ck_assert_str_eq(n, "a b c ");
	free(n);
	/* not a column: the raw field (full names: location a first) */
	ck_assert_int_eq(cli_list_sort(l, "name", &msg), AQ_OK);
	n = names(l);
	ck_assert_str_eq(n, "c b a ");
	free(n);
	ck_assert_int_eq(cli_sort_parse(&s, "capacty", &msg), AQ_OK);
	ck_assert_int_eq(cli_sort_check(&s, api_volume_fields_for_test(), NULL, false, &msg), AQ_EINVAL);
	json_decref(l);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_format");
	TCase *tc = tcase_create("cli_format");

	tcase_add_test(tc, test_parse_specs);
	tcase_add_test(tc, test_paths);
	tcase_add_test(tc, test_value);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_yaml);
	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_filter);
	tcase_add_test(tc, test_sort);
	tcase_add_test(tc, test_gcloud_specs);
	tcase_add_test(tc, test_unknown_fields);
	tcase_add_test(tc, test_csv_flattened_projection);
	tcase_add_test(tc, test_date);
	tcase_add_test(tc, test_filter_gcloud);
	tcase_add_test(tc, test_sort_column);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
