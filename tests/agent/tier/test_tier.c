/* test_tier: the cold tier engine (agent/tier/) under the volume store,
 * with the directory object store and a fake clock: chunks age and go cold
 * (holes punched, objects written, records kept), reads give identical
 * bytes, each retrieval policy's effect on cold bytes for random and
 * sequential reads, writes into and truncates across cold chunks, unlink,
 * bypass mode, and recovery from interrupted moves after a restart. Needs
 * root (open_by_handle_at) and a file system with user xattrs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/tier/tier.h"
#include "agent/vol/vol.h"
#include "tests/agent/tier/tier_harness.h"
#include "tests/lib/aqt.h"

#define MIB (1024u * 1024u)
#define DAY 100
#define FSIZE (4 * MIB + 100)   /* four whole chunks and a hot tail */

static char tmp[64];
static struct tiert_clock clk; /* the fake clock */
static struct vol_store *S;
static struct tier *T;
static struct vol_export_cfg cfg;
static struct tier_vol_cfg tcfg;
static const struct vol_cred root = {0, 0, 0, {0}, 0};

static void tier_up(void)
{
	tiert_tier_up(tmp, DAY, &clk, &tcfg, S, &T);
}

static void setup(void)
{
	tiert_vol_up("/tmp/aqtier-XXXXXX", tmp, sizeof(tmp), &cfg, &tcfg, &S);
	clk.now = (long)time(NULL);
	tier_up();
}

static void teardown(void)
{
	tiert_down(tmp, S, T);
}

static struct vol_obj root_obj(void)
{
	struct vol_export *e = vol_export_by_path(S, "/v0", 3);
	struct vol_obj o;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &o), 0);
	vol_export_unref(e);
	return o;
}

static uint64_t cold(void)
{
	struct tier_stats ts;

	ck_assert_int_eq(tier_stats(T, cfg.fsid, &ts), 0);
	return ts.cold_bytes;
}

static void age_days(int d)
{
	clk.now += d * DAY;
	ck_assert_int_eq(tier_pass(T), 0);
}

static void check_bytes(struct vol_obj *o, uint64_t off, size_t len)
{
	uint8_t *buf = malloc(len);
	size_t got = 0;
	bool eof;

	ck_assert_int_eq(vol_read(o, &root, off, buf, len, &got, &eof), 0);
	ck_assert_uint_eq(got, len);
	for (size_t i = 0; i < len; i++)
		if (buf[i] != tiert_pat(off + i))
			ck_abort_msg("byte %llu differs", (unsigned long long)(off + i));
	free(buf);
}

static long scan_num(const char *field)
{
	char *json = NULL, *p, pat_[64];
	long v = -1;

	ck_assert_int_eq(tier_scan(T, cfg.fsid, &json), 0);
	snprintf(pat_, sizeof(pat_), "\"%s\":", field);
	p = strstr(json, pat_);
	ck_assert_msg(p != NULL, "%s in %s", field, json);
	v = strtol(p + strlen(pat_), NULL, 10);
	free(json);
	return v;
}

static blkcnt_t blocks(const char *name)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", cfg.root, name);
	ck_assert_int_eq(stat(p, &st), 0);
	return st.st_blocks;
}

static void set_policy(enum tier_retrieval r)
{
	tcfg.retrieval = r;
	ck_assert_int_eq(tier_set_volumes(T, &tcfg, 1, NULL), 0);
}

/* Issue 22 follow-up: tier_vol_find (every tier hook, every report
 * entry's tier_stats) searches the volumes sorted by fsid. Given in
 * scrambled order, each is found, and fsids between them are not. */
START_TEST(test_find_many)
{
	enum { N = 40 };
	static struct tier_vol_cfg many[N];
	struct tier_stats ts;

	for (unsigned i = 0; i < N; i++) {
		many[i] = tcfg;
		many[i].fsid = i == 7 ? tcfg.fsid : ((uint64_t)i * 0x9e3779b97f4a7c15ull) >> 1;
		snprintf(many[i].state_dir, sizeof(many[i].state_dir), "%s/tierstate-%u", tmp, i);
	}
	ck_assert_int_eq(tier_set_volumes(T, many, N, NULL), 0);
	for (unsigned i = 0; i < N; i++) {
		ck_assert_msg(tier_stats(T, many[i].fsid, &ts) == 0, "volume %u (fsid %llx) not found", i,
			      (unsigned long long)many[i].fsid);
		ck_assert_msg(tier_stats(T, many[i].fsid + 1, &ts) != 0, "fsid %llx found",
			      (unsigned long long)many[i].fsid + 1);
	}
	ck_assert_int_eq(tier_set_volumes(T, &tcfg, 1, NULL), 0);
	ck_assert_int_eq(tier_stats(T, tcfg.fsid, &ts), 0);
	ck_assert_int_ne(tier_stats(T, many[3].fsid, &ts), 0);
}
END_TEST

START_TEST(test_ages_and_goes_cold)
{
	struct vol_obj o = tiert_make_file(S, "f", FSIZE), small = tiert_make_file(S, "small", 1000);
	int fd = -1;
	size_t n;
	bool eof, owned;

	ck_assert_int_eq(tier_pass(T), 0);
	ck_assert_uint_eq(cold(), 0); /* fresh data stays hot */
	age_days(1);
	ck_assert_uint_eq(cold(), 0); /* one day < coolingThresholdDays */
	ck_assert_int_gt(blocks("f"), 4 * MIB / 512);
	age_days(2);
	ck_assert_uint_eq(cold(), 4 * MIB); /* four whole chunks; the tail stays */
	ck_assert_int_lt(blocks("f"), MIB / 512); /* holes punched */
	ck_assert_int_eq(scan_num("objects"), 4);
	ck_assert_int_eq(scan_num("records"), 4);
	ck_assert_int_eq(scan_num("orphansCount"), 0);
	ck_assert_int_eq(scan_num("missingCount"), 0);
	/* sendfile path: cold ranges go through the buffer path */
	ck_assert_int_eq(vol_read_fd(&o, &root, MIB, 4096, &fd, &n, &eof, &owned), VOL_ECOLD);
	ck_assert_int_eq(vol_read_fd(&o, &root, 4 * MIB, 100, &fd, &n, &eof, &owned), 0);
	ck_assert_uint_eq(n, 100);
	if (owned)
		close(fd);
	set_policy(TIER_RET_NEVER);
	check_bytes(&o, 0, FSIZE);
	check_bytes(&o, MIB - 10, 20); /* across a chunk boundary */
	ck_assert_uint_eq(cold(), 4 * MIB);
	age_days(5);
	ck_assert_uint_eq(cold(), 4 * MIB); /* the small file never goes */
	vol_obj_cleanup(&o);
	vol_obj_cleanup(&small);
}
END_TEST

START_TEST(test_policies)
{
	struct vol_obj o = tiert_make_file(S, "f", FSIZE);
	struct tier_stats ts;

	age_days(3);
	ck_assert_uint_eq(cold(), 4 * MIB);
	/* DEFAULT: a random read brings its chunk back, a stream does not */
	check_bytes(&o, 2 * MIB + 12345, 4096);
	ck_assert_uint_eq(cold(), 3 * MIB);
	ck_assert_int_gt(blocks("f"), MIB / 512);
	check_bytes(&o, 0, FSIZE);
	ck_assert_uint_eq(cold(), 3 * MIB);
	ck_assert_int_eq(tier_stats(T, cfg.fsid, &ts), 0);
	ck_assert_uint_ge(ts.cold_read_bytes, 3 * MIB);
	/* NEVER: neither brings anything back */
	set_policy(TIER_RET_NEVER);
	check_bytes(&o, 3 * MIB + 777, 4096);
	check_bytes(&o, 0, FSIZE);
	ck_assert_uint_eq(cold(), 3 * MIB);
	/* ON_READ: every read does */
	set_policy(TIER_RET_ON_READ);
	check_bytes(&o, 3 * MIB + 777, 4096);
	ck_assert_uint_eq(cold(), 2 * MIB);
	check_bytes(&o, 0, FSIZE);
	ck_assert_uint_eq(cold(), 0);
	tier_drain(T);
	ck_assert_int_eq(scan_num("objects"), 0); /* rehydrated objects are deleted */
	ck_assert_int_eq(scan_num("orphansCount"), 0);
	vol_obj_cleanup(&o);
}
END_TEST

/* One NFS READ of cold data as the server runs it: vol_read_fd finds the
 * range cold (VOL_ECOLD), then the cold pool reads it into a buffer. That is
 * one access for the stream detector: two short reads that merely abut are
 * random reads under DEFAULT, each bringing its chunk back. Counting the
 * check as an access too made the second one look like the third read of a
 * stream, served from the store with its chunk left cold. */
static void nfs_read(struct vol_obj *o, uint64_t off, size_t len)
{
	int fd = -1;
	size_t n;
	bool eof, owned;

	ck_assert_int_eq(vol_read_fd(o, &root, off, len, &fd, &n, &eof, &owned), VOL_ECOLD);
	check_bytes(o, off, len);
}

START_TEST(test_nfs_read_counts_once)
{
	struct vol_obj o = tiert_make_file(S, "f", FSIZE);

	age_days(3);
	ck_assert_uint_eq(cold(), 4 * MIB);
	nfs_read(&o, 2 * MIB - 4096, 4096); /* end of chunk 1 */
	ck_assert_uint_eq(cold(), 3 * MIB);
	nfs_read(&o, 2 * MIB, 4096);        /* start of chunk 2 */
	ck_assert_uint_eq(cold(), 2 * MIB);
	vol_obj_cleanup(&o);
}
END_TEST

START_TEST(test_write_truncate_unlink)
{
	struct vol_obj o = tiert_make_file(S, "f", FSIZE), g = tiert_make_file(S, "g", 2 * MIB), r;
	struct vol_sattr sa = {.set_size = true, .size = MIB + MIB / 2};
	const char msg[] = "written into a cold chunk";
	char back[sizeof(msg)];
	size_t got;
	bool eof;
	int committed;

	set_policy(TIER_RET_NEVER);
	age_days(3);
	ck_assert_uint_eq(cold(), 6 * MIB);
	/* a write into a cold chunk brings it back first */
	ck_assert_int_eq(vol_write(&o, &root, MIB + 5, msg, sizeof(msg), 2, &committed), 0);
	ck_assert_uint_eq(cold(), 5 * MIB);
	ck_assert_int_eq(vol_read(&o, &root, MIB + 5, back, sizeof(back), &got, &eof), 0);
	ck_assert_str_eq(back, msg);
	check_bytes(&o, MIB, 5);
	check_bytes(&o, MIB + 5 + sizeof(msg), MIB - 5 - sizeof(msg));
	check_bytes(&o, 0, MIB);
	/* truncate: chunks past the end go, the cut chunk comes back whole */
	age_days(3);
	ck_assert_uint_eq(cold(), 6 * MIB);
	ck_assert_int_eq(vol_setattr(&o, &root, &sa), 0);
	ck_assert_uint_eq(cold(), 3 * MIB); /* f keeps chunk 0, g its two */
	check_bytes(&o, 0, MIB + 5);
	ck_assert_int_eq(vol_read(&o, &root, MIB, back, 4, &got, &eof), 0);
	tier_drain(T);
	ck_assert_int_eq(scan_num("objects"), 3);
	ck_assert_int_eq(scan_num("orphansCount"), 0);
	/* unlink of the last link deletes its objects */
	r = root_obj();
	ck_assert_int_eq(vol_remove(&r, &root, "g", 1), 0);
	ck_assert_uint_eq(cold(), MIB);
	tier_drain(T);
	ck_assert_int_eq(scan_num("objects"), 1);
	ck_assert_int_eq(scan_num("records"), 1);
	ck_assert_int_eq(scan_num("orphansCount"), 0);
	vol_obj_cleanup(&r);
	vol_obj_cleanup(&o);
	vol_obj_cleanup(&g);
}
END_TEST

START_TEST(test_bypass)
{
	struct vol_obj o;

	tcfg.bypass = true;
	ck_assert_int_eq(tier_set_volumes(T, &tcfg, 1, NULL), 0);
	o = tiert_make_file(S, "f", 2 * MIB + 10);
	tier_drain(T); /* the thread's work, without waiting a day */
	ck_assert_uint_eq(cold(), 2 * MIB);
	set_policy(TIER_RET_NEVER);
	check_bytes(&o, 0, 2 * MIB + 10);
	vol_obj_cleanup(&o);
}
END_TEST

/* A writer rewriting chunks with numbered versions while passes run;
 * stop is set when it is done. */
struct racer {
	struct vol_obj *o;
	int last[4];
	atomic_bool stop;
};

static void fill_ver(uint8_t *b, int ver)
{
	for (size_t i = 0; i < MIB; i++)
		b[i] = (uint8_t)(ver * 31 + (int)(i >> 9));
}

static void *race_writer(void *arg)
{
	struct racer *r = arg;
	uint8_t *b = malloc(MIB);
	int committed;

	for (int it = 1; it <= 400; it++) {
		int c = it % 4;

		fill_ver(b, it);
		if (vol_write(r->o, &root, (uint64_t)c * MIB + (uint64_t)(it % 3) * 1000, b, MIB / 2, 0, &committed) != 0)
			break;
		/* the rest of the chunk: write the whole chunk in two halves */
		if (vol_write(r->o, &root, (uint64_t)c * MIB, b, MIB, 0, &committed) != 0)
			break;
		r->last[c] = it;
		usleep(200);
	}
	free(b);
	atomic_store(&r->stop, true);
	return NULL;
}

START_TEST(test_write_races_pass)
{
	struct vol_obj o = tiert_make_file(S, "f", 4 * MIB);
	struct racer r = {.o = &o};
	uint8_t *want = malloc(MIB), *got = malloc(MIB);
	pthread_t th;
	uint64_t most = 0;

	set_policy(TIER_RET_NEVER);
	ck_assert_int_eq(pthread_create(&th, NULL, race_writer, &r), 0);
	/* Passes until the writer is done and three more: its last write of
	 * each chunk races passes too. */
	for (int after = 0; after < 3; after += atomic_load(&r.stop)) {
		clk.now += 3 * DAY;
		ck_assert_int_eq(tier_pass(T), 0);
		if (cold() > most)
			most = cold();
	}
	pthread_join(th, NULL);
	ck_assert_msg(most > 0, "no pass moved anything while the writer ran");
	for (int c = 0; c < 4; c++) {
		size_t n = 0;
		bool eof;

		fill_ver(want, r.last[c]);
		ck_assert_int_eq(vol_read(&o, &root, (uint64_t)c * MIB, got, MIB, &n, &eof), 0);
		ck_assert_uint_eq(n, MIB);
		ck_assert_msg(memcmp(want, got, MIB) == 0, "chunk %d lost write %d", c, r.last[c]);
	}
	/* and after everything went cold once more */
	clk.now += 3 * DAY;
	ck_assert_int_eq(tier_pass(T), 0);
	ck_assert_uint_eq(cold(), 4 * MIB);
	for (int c = 0; c < 4; c++) {
		size_t n = 0;
		bool eof;

		fill_ver(want, r.last[c]);
		ck_assert_int_eq(vol_read(&o, &root, (uint64_t)c * MIB, got, MIB, &n, &eof), 0);
		ck_assert_msg(memcmp(want, got, MIB) == 0, "cold chunk %d lost write %d", c, r.last[c]);
	}
	ck_assert_int_eq(scan_num("orphansCount"), 0);
	free(want);
	free(got);
	vol_obj_cleanup(&o);
}
END_TEST

static void db_run(const char *sql)
{
	char p[256];
	sqlite3 *db;

	snprintf(p, sizeof(p), "%s/tier.db", tcfg.state_dir);
	ck_assert_int_eq(sqlite3_open(p, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void put_object(const char *key)
{
	char p[1024];
	FILE *f;

	snprintf(p, sizeof(p), "mkdir -p %s/cold/%s && rmdir %s/cold/%s", tmp, key, tmp, key);
	ck_assert_int_eq(system(p), 0);
	snprintf(p, sizeof(p), "%s/cold/%s", tmp, key);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs("leftover", f);
	fclose(f);
}

START_TEST(test_restart_and_recovery)
{
	struct vol_obj o = tiert_make_file(S, "f", FSIZE);
	char key[128];

	age_days(3);
	ck_assert_uint_eq(cold(), 4 * MIB);
	vol_obj_cleanup(&o);
	/* A crash mid-upload and mid-rehydration: objects with pending rows. */
	vol_store_set_tier(S, NULL, NULL);
	tier_free(T);
	snprintf(key, sizeof(key), "loc1/0000000000000abc/00000000000000ff/0-0000000000000001");
	put_object(key);
	db_run("INSERT INTO pending(key, why) VALUES('loc1/0000000000000abc/00000000000000ff/0-0000000000000001', 'upload')");
	{
		char *json = NULL;
		struct tier_cfg tc = {.location = "loc1", .day_seconds = DAY, .now = tiert_clock_now, .now_arg = &clk};

		/* Before recovery the scan sees the orphan. */
		ck_assert_int_eq(tier_new(&tc, &T), 0);
		ck_assert_int_eq(tier_set_volumes(T, &tcfg, 1, NULL), 0); /* no store yet: nothing deleted */
		struct obj_cfg oc = {.kind = OBJ_DIRECTORY};

		snprintf(oc.path, sizeof(oc.path), "%s/cold", tmp);
		ck_assert_int_eq(tier_set_store(T, &oc), 0);
		ck_assert_int_eq(tier_scan(T, cfg.fsid, &json), 0);
		ck_assert_ptr_nonnull(strstr(json, "\"orphansCount\":1"));
		free(json);
		tier_free(T);
	}
	/* Restart: recovery deletes it; the cold data is still read back. */
	tier_up();
	ck_assert_uint_eq(cold(), 4 * MIB);
	ck_assert_int_eq(scan_num("orphansCount"), 0);
	ck_assert_int_eq(scan_num("missingCount"), 0);
	ck_assert_int_eq(scan_num("pending"), 0);
	ck_assert_int_eq(scan_num("objects"), 4);
	{
		struct vol_obj r = root_obj(), f;

		ck_assert_int_eq(vol_lookup(&r, &root, "f", 1, &f), 0);
		set_policy(TIER_RET_NEVER);
		check_bytes(&f, 0, FSIZE);
		set_policy(TIER_RET_ON_READ);
		check_bytes(&f, 0, FSIZE);
		ck_assert_uint_eq(cold(), 0);
		vol_obj_cleanup(&f);
		vol_obj_cleanup(&r);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tier");
	TCase *tc = tcase_create("tier");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_ages_and_goes_cold);
	tcase_add_test(tc, test_find_many);
	tcase_add_test(tc, test_policies);
	tcase_add_test(tc, test_nfs_read_counts_once);
	tcase_add_test(tc, test_write_truncate_unlink);
	tcase_add_test(tc, test_bypass);
	tcase_add_loop_test(tc, test_write_races_pass, 0, 6);
	tcase_add_test(tc, test_restart_and_recovery);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
