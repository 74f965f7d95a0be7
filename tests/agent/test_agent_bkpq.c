/* Unit tests for agent/agent_bkpq.c: the backup worker runs offered jobs
 * off the caller's thread, once each while the intent keeps offering them;
 * -EAGAIN retries with backoff and ends READY when the cause clears, or
 * ERROR naming the attempts after the bound; jobs the intent drops are
 * forgotten; a delete is a job of its own. */
#include "agent/agent_bkpq.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/aqt.h"

#define KEY "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static char shelf[256], src[300];
static int calls, done_calls, flaky_left;

static int source_fn(void *arg, const struct api_intent_backup *job, char *out, size_t cap, bool *strict,
		     aq_msg *msg)
{
	(void)arg;
	__atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
	*strict = false;
	if (strstr(job->name, "/down"))
		return aq_fail(msg, -EAGAIN, "the snapshot is busy");
	if (strstr(job->name, "/flaky") && __atomic_sub_fetch(&flaky_left, 1, __ATOMIC_SEQ_CST) >= 0)
		return -EAGAIN;
	snprintf(out, cap, "%s", src);
	return 0;
}

static void done_fn(void *arg, const struct api_intent_backup *job)
{
	(void)arg;
	(void)job;
	__atomic_add_fetch(&done_calls, 1, __ATOMIC_SEQ_CST);
}

static struct api_intent_backup job(const char *id, const char *name)
{
	struct api_intent_backup b = { .op = API_INTENT_BKP_BACKUP };

	snprintf(b.id, sizeof(b.id), "%s", id);
	snprintf(b.name, sizeof(b.name), "projects/p/locations/l/backupVaults/v/backups/%s", name);
	snprintf(b.key_hex, sizeof(b.key_hex), KEY);
	snprintf(b.store_path, sizeof(b.store_path), ".backups/aaaaaaaaaaaaaaaa");
	snprintf(b.volume, sizeof(b.volume), "projects/p/locations/l/volumes/v1");
	return b;
}

/* The report of id ("" state when absent). */
static const char *state_of(struct agent_bkpq *q, const char *id, char *detail, size_t cap)
{
	static char state[16];
	json_t *r = agent_bkpq_report(q), *e;
	size_t i;

	state[0] = '\0';
	json_array_foreach(r, i, e) {
		if (strcmp(json_string_value(json_object_get(e, "id")), id) == 0) {
			snprintf(state, sizeof(state), "%s", json_string_value(json_object_get(e, "state")));
			if (detail)
				snprintf(detail, cap, "%s", json_string_value(json_object_get(e, "stateDetails")));
		}
	}
	json_decref(r);
	return state;
}

static void wait_state(struct agent_bkpq *q, const char *id, const char *want)
{
	for (int i = 0; i < 6000 && strcmp(state_of(q, id, NULL, 0), want) != 0; i++)
		usleep(10000);
	ck_assert_str_eq(state_of(q, id, NULL, 0), want);
}

static void setup(void)
{
	char path[400];
	FILE *f;

	snprintf(shelf, sizeof(shelf), "/tmp/aq-agent-bkpq.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(shelf));
	snprintf(src, sizeof(src), "%s/src", shelf);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	snprintf(path, sizeof(path), "%s/f.txt", src);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 100000; i++)
		fprintf(f, "line %d\n", i);
	fclose(f);
	calls = done_calls = 0;
	flaky_left = 2;
}

static void teardown(void)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", shelf);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_worker)
{
	struct agent_bkpq_cfg cfg = { .shelf = shelf, .retry_ms = 5, .max_tries = 4, .source_fn = source_fn,
				      .done_fn = done_fn };
	struct api_intent_backup jobs[3] = { job("1111111111111111", "b1"), job("2222222222222222", "flaky"),
					     job("3333333333333333", "down") };
	struct agent_bkpq *q = NULL;
	char detail[300];
	int before;

	ck_assert_int_eq(agent_bkpq_new(&cfg, &q), AQ_OK);
	ck_assert_int_eq(agent_bkpq_offer(q, jobs, 3), AQ_OK);
	wait_state(q, "1111111111111111", "READY");
	wait_state(q, "2222222222222222", "READY");
	wait_state(q, "3333333333333333", "ERROR");
	state_of(q, "3333333333333333", detail, sizeof(detail));
	ck_assert_msg(strstr(detail, "gave up after 4 attempts") && strstr(detail, "the snapshot is busy"), "%s", detail);
	ck_assert_int_eq(done_calls, 2); /* after each run that had a source */

	/* offered again: nothing runs again */
	before = calls;
	ck_assert_int_eq(agent_bkpq_offer(q, jobs, 3), AQ_OK);
	usleep(100000);
	ck_assert_int_eq(calls, before);
	ck_assert_str_eq(state_of(q, "1111111111111111", NULL, 0), "READY");

	/* the intent drops two: forgotten */
	ck_assert_int_eq(agent_bkpq_offer(q, jobs, 1), AQ_OK);
	ck_assert_str_eq(state_of(q, "2222222222222222", NULL, 0), "");
	ck_assert_str_eq(state_of(q, "1111111111111111", NULL, 0), "READY");

	/* the delete of b1 is a job of its own */
	jobs[0].op = API_INTENT_BKP_DELETE;
	ck_assert_int_eq(agent_bkpq_offer(q, jobs, 1), AQ_OK);
	wait_state(q, "1111111111111111", "DELETED");
	ck_assert_int_eq(agent_bkpq_offer(q, jobs, API_INTENT_MAX_BACKUPS + 1), AQ_EINVAL);
	agent_bkpq_free(q);
	agent_bkpq_free(NULL);
}
END_TEST

static Suite *bkpq_suite(void)
{
	Suite *s = suite_create("agent_bkpq");
	TCase *tc = tcase_create("agent_bkpq");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_worker);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(bkpq_suite());
}
