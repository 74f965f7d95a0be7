/* Unit tests for agent/agent_backup.c: backup jobs run against a vault in
 * a temporary shelf (the directory store at <shelf>/.backups/<uid>): a
 * first backup READY with its byte counts, no plaintext of a known file in
 * the store, an incremental one uploading little, a re-run of a finished id
 * READY (idempotent), a missing prevId run as a full backup, a wrong key
 * ERROR naming the cause (never the key), a delete DELETED and the store
 * down (-EAGAIN, still UPLOADING). */
#include "agent/agent_backup.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/aqt.h"

#define KEY "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define MARK "AQUIFER-PLAINTEXT-MARK-0123456789"

static char shelf[256], src[300];

static void write_file(const char *name, const char *fill, size_t size)
{
	char path[600], *buf = malloc(size);
	size_t fl = strlen(fill);
	int fd;

	ck_assert_ptr_nonnull(buf);
	for (size_t i = 0; i < size; i++)
		buf[i] = fill[i % fl];
	snprintf(path, sizeof(path), "%s/%s", src, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, size), (ssize_t)size);
	close(fd);
	free(buf);
}

static void setup(void)
{
	snprintf(shelf, sizeof(shelf), "/tmp/aq-agent-bkp.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(shelf));
	snprintf(src, sizeof(src), "%s/src", shelf);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	write_file("a.txt", MARK, 3 << 20);
	write_file("b.bin", "0123456789abcdefghij", 1 << 20);
}

static void teardown(void)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", shelf);
	ck_assert_int_eq(system(cmd), 0);
}

static struct api_intent_backup job(const char *id, const char *prev)
{
	struct api_intent_backup b = { .op = API_INTENT_BKP_BACKUP };

	snprintf(b.id, sizeof(b.id), "%s", id);
	snprintf(b.name, sizeof(b.name), "projects/p/locations/l/backupVaults/v/backups/%s", id);
	snprintf(b.key_hex, sizeof(b.key_hex), KEY);
	snprintf(b.store_path, sizeof(b.store_path), ".backups/aaaaaaaaaaaaaaaa");
	snprintf(b.volume, sizeof(b.volume), "projects/p/locations/l/volumes/v1");
	snprintf(b.prev_id, sizeof(b.prev_id), "%s", prev ? prev : "");
	return b;
}

/* Whether any object under dir holds needle. */
static bool store_holds(const char *dir, const char *needle)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "grep -rqF '%s' '%s'", needle, dir);
	return system(cmd) == 0;
}

START_TEST(test_backup_incremental_delete)
{
	struct agent_backup_opts o = { .src = src };
	struct api_intent_backup j1 = job("1111111111111111", NULL), j2 = job("2222222222222222", "1111111111111111");
	struct api_intent_backup_state st;
	char store[400];
	uint64_t first;

	ck_assert_int_eq(agent_backup_run(shelf, &j1, &o, &st), AQ_OK);
	ck_assert_int_eq(st.state, API_INTENT_BKP_READY);
	ck_assert_str_eq(st.id, "1111111111111111");
	ck_assert_uint_eq(st.logical_bytes, 4u << 20);
	ck_assert_uint_ge(st.uploaded_bytes, 4u << 20);
	ck_assert_uint_eq(st.bytes_done, st.bytes_total);
	first = st.uploaded_bytes;
	snprintf(store, sizeof(store), "%s/.backups/aaaaaaaaaaaaaaaa", shelf);
	ck_assert_msg(!store_holds(store, MARK), "the store holds plaintext");
	ck_assert(store_holds(src, MARK)); /* the needle is real */

	/* change one 1 MiB chunk of b.bin: the next backup uploads about that */
	write_file("b.bin", "ZYXWVUTSRQPONMLKJIHG", 1 << 20);
	ck_assert_int_eq(agent_backup_run(shelf, &j2, &o, &st), AQ_OK);
	ck_assert_int_eq(st.state, API_INTENT_BKP_READY);
	ck_assert_uint_lt(st.uploaded_bytes, first / 3);
	ck_assert_uint_ge(st.uploaded_bytes, 1u << 20);

	/* a re-run of a finished id (a node that died before reporting) */
	ck_assert_int_eq(agent_backup_run(shelf, &j2, &o, &st), AQ_OK);
	ck_assert_int_eq(st.state, API_INTENT_BKP_READY);
	ck_assert_uint_eq(st.logical_bytes, 4u << 20);
	ck_assert_uint_eq(st.uploaded_bytes, 0);

	/* delete the first: DELETED, the second still there (its re-run READY) */
	j1.op = API_INTENT_BKP_DELETE;
	ck_assert_int_eq(agent_backup_run(shelf, &j1, &o, &st), AQ_OK);
	ck_assert_int_eq(st.state, API_INTENT_BKP_DELETED);
	ck_assert_int_eq(agent_backup_run(shelf, &j1, &o, &st), AQ_OK); /* gone already is fine */
	ck_assert_int_eq(agent_backup_run(shelf, &j2, &o, &st), AQ_OK);
	ck_assert_int_eq(st.state, API_INTENT_BKP_READY);

	/* prevId no longer in the vault: a full backup that dedups */
	{
		struct api_intent_backup j3 = job("3333333333333333", "1111111111111111");

		ck_assert_int_eq(agent_backup_run(shelf, &j3, &o, &st), AQ_OK);
		ck_assert_int_eq(st.state, API_INTENT_BKP_READY);
		ck_assert_uint_lt(st.uploaded_bytes, 1u << 20);
	}
}
END_TEST

START_TEST(test_errors)
{
	struct agent_backup_opts o = { .src = src };
	struct api_intent_backup j = job("1111111111111111", NULL);
	struct api_intent_backup_state st;
	char store[400];

	ck_assert_int_eq(agent_backup_run(shelf, &j, &o, &st), AQ_OK);
	/* another key on the same store */
	j = job("4444444444444444", NULL);
	memcpy(j.key_hex, "ff", 2);
	ck_assert_int_eq(agent_backup_run(shelf, &j, &o, &st), -EKEYREJECTED);
	ck_assert_int_eq(st.state, API_INTENT_BKP_ERROR);
	ck_assert_msg(strstr(st.detail, "opening the vault") != NULL, "%s", st.detail);
	ck_assert(strstr(st.detail, "ff112233") == NULL);
	/* no source */
	j = job("5555555555555555", NULL);
	o.src = NULL;
	ck_assert_int_eq(agent_backup_run(shelf, &j, &o, &st), -EINVAL);
	ck_assert_int_eq(st.state, API_INTENT_BKP_ERROR);
	/* a source that does not exist */
	o.src = "/nonexistent/aq-src";
	ck_assert_int_lt(agent_backup_run(shelf, &j, &o, &st), 0);
	ck_assert_int_eq(st.state, API_INTENT_BKP_ERROR);
	ck_assert(st.detail[0] != '\0');
	/* the store's folder cannot be made: an error naming it */
	snprintf(store, sizeof(store), "%s/.backups/bbbbbbbbbbbbbbbb", shelf);
	ck_assert_int_eq(close(open(store, O_WRONLY | O_CREAT, 0600)), 0); /* a file where the folder goes */
	j = job("6666666666666666", NULL);
	snprintf(j.store_path, sizeof(j.store_path), ".backups/bbbbbbbbbbbbbbbb");
	o.src = src;
	ck_assert_int_lt(agent_backup_run(shelf, &j, &o, &st), 0);
	ck_assert_int_ne(st.state, API_INTENT_BKP_READY);
}
END_TEST

static Suite *agent_backup_suite(void)
{
	Suite *s = suite_create("agent_backup");
	TCase *tc = tcase_create("agent_backup");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_backup_incremental_delete);
	tcase_add_test(tc, test_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(agent_backup_suite());
}
