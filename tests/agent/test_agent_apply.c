/* test_agent_apply: the agent's intent apply, check then proceed
 * (agent/agent_apply.c), without a shelf: the check half on its own
 * (agent_apply_check: decode, duplicates, contested share names, no side
 * effects), then agent_apply over a stand-in shelf, a real volume store and
 * cold tier in a temporary folder (the volumes that pass are served, the
 * others listed with their reason, a stale generation changes nothing), and
 * a status report built while an apply is under way (it does not wait for
 * the apply, and tells the state applied before). NTFS roots made before
 * session 41 (0770, no stored descriptor) become 0777 at attach, once; a
 * root with a descriptor, another mode, or a UNIX volume's stays.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_internal.h"
#include "api/api_intent.h"
#include "tests/lib/aqt.h"

#define VOL_A "0123456789abcdef"
#define VOL_B "00000000000000b2"
#define VOL_C "00000000000000c3"

/* An intent volume entry as aquiferd sends it (fuzz/run.sh's seed). */
static json_t *volume(const char *name, const char *fsid, const char *share)
{
	char dir[64];
	json_t *v;

	snprintf(dir, sizeof(dir), "volumes/%s", fsid);
	v = json_pack("{s:s,s:s,s:s,s:s,s:I,s:s,s:[{s:s,s:s,s:s,s:i,s:b,s:b}]}", "name", name, "fsid", fsid,
		      "shareName", share, "dir", dir, "capacityBytes", (json_int_t)1073741824, "unixPermissions",
		      "0770", "exportRules", "allowedClients", "127.0.0.1", "accessType", "READ_WRITE", "squashMode",
		      "NO_ROOT_SQUASH", "anonUid", 65534, "nfsv3", 1, "nfsv4", 0);
	ck_assert_ptr_nonnull(v);
	return v;
}

static const char *served_fsid; /* the one volume the stand-in node serves */

static bool served_one(void *arg, const char *fsid)
{
	(void)arg;
	return served_fsid && strcmp(fsid, served_fsid) == 0;
}

/* Run the check over vols; returns failed (caller decrefs). */
static json_t *check(json_t *vols, bool *ok)
{
	struct api_intent_volume iv[8];
	json_t *failed = json_array();

	ck_assert_uint_le(json_array_size(vols), 8);
	agent_apply_check(vols, served_one, NULL, iv, NULL, ok, failed);
	return failed;
}

static const char *failed_name(const json_t *failed, size_t i)
{
	return json_string_value(json_object_get(json_array_get(failed, i), "name"));
}

static const char *failed_error(const json_t *failed, size_t i)
{
	return json_string_value(json_object_get(json_array_get(failed, i), "error"));
}

START_TEST(test_check_each_entry)
{
	json_t *bad = volume("projects/p/locations/l/volumes/bad", VOL_B, "has space");
	json_t *vols = json_pack("[o,o,o]", volume("projects/p/locations/l/volumes/a", VOL_A, "a"), bad,
				 volume("projects/p/locations/l/volumes/c", VOL_C, "c"));
	bool ok[3];
	json_t *failed;

	served_fsid = NULL;
	failed = check(vols, ok);
	ck_assert(ok[0] && !ok[1] && ok[2]);
	ck_assert_uint_eq(json_array_size(failed), 1);
	ck_assert_str_eq(failed_name(failed, 0), "projects/p/locations/l/volumes/bad");
	ck_assert_ptr_nonnull(strstr(failed_error(failed, 0), "shareName"));
	json_decref(failed);
	/* a field beyond the contract's limits refuses that volume only */
	json_object_set_new(json_array_get(vols, 1), "shareName", json_string("b"));
	json_object_set_new(json_array_get(vols, 1), "capacityBytes", json_integer(-1));
	failed = check(vols, ok);
	ck_assert(ok[0] && !ok[1] && ok[2]);
	ck_assert_uint_eq(json_array_size(failed), 1);
	json_decref(failed);
	json_decref(vols);
}
END_TEST

START_TEST(test_check_duplicates)
{
	json_t *vols = json_pack("[o,o,o]", volume("projects/p/locations/l/volumes/a", VOL_A, "a"),
				 volume("projects/p/locations/l/volumes/a", VOL_B, "b"),
				 volume("projects/p/locations/l/volumes/c", VOL_A, "c"));
	bool ok[3];
	json_t *failed;

	served_fsid = NULL;
	failed = check(vols, ok);
	ck_assert(ok[0] && !ok[1] && !ok[2]); /* same name; same fsid */
	ck_assert_uint_eq(json_array_size(failed), 2);
	ck_assert_ptr_nonnull(strstr(failed_error(failed, 0), "twice"));
	ck_assert_ptr_nonnull(strstr(failed_error(failed, 1), "twice"));
	json_decref(failed);
	json_decref(vols);
}
END_TEST

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The check of the first n of vols, timed (s). */
static double check_timed(json_t *vols, size_t n, struct api_intent_volume *iv, bool *ok, json_t **failed)
{
	json_t *part = json_array();
	double t;

	for (size_t i = 0; i < n; i++)
		json_array_append(part, json_array_get(vols, i));
	*failed = json_array();
	t = now_s();
	agent_apply_check(part, served_one, NULL, iv, NULL, ok, *failed);
	t = now_s() - t;
	json_decref(part);
	return t;
}

/* Issue 22 follow-up: 30,000 volumes, duplicates far apart (a name, an
 * fsid spelt in upper case, a contested share name the later volume wins
 * as the one served) are found as among three, in time linear in the
 * volumes (a pass over the earlier volumes per volume was 450 million
 * comparisons). */
START_TEST(test_check_scale)
{
	enum { N = 30000 };
	struct api_intent_volume *iv = calloc(N, sizeof(*iv));
	bool *ok = calloc(N, sizeof(*ok));
	json_t *vols = json_array(), *failed;
	char name[96], fsid[17], share[32];
	double quarter, whole;

	ck_assert(iv && ok && vols);
	for (unsigned i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "projects/p/locations/l/volumes/v%05u", i == 29000 ? 5 : i);
		snprintf(fsid, sizeof(fsid), i == 29500 ? "%016X" : "%016x", i == 29500 ? 0xabc0000u + 10 : 0xabc0000u + i);
		snprintf(share, sizeof(share), "s%05u", i == 29900 ? 20 : i);
		json_array_append_new(vols, volume(name, fsid, share));
	}
	served_fsid = "000000000abc74cc"; /* 0xabc0000 + 29900: served, keeps "s00020" */
	quarter = check_timed(vols, N / 4, iv, ok, &failed);
	ck_assert_uint_eq(json_array_size(failed), 0);
	json_decref(failed);
	whole = check_timed(vols, N, iv, ok, &failed);
	printf("agent_apply_check: %d volumes %.3f s, %d volumes %.3f s\n", N / 4, quarter, N, whole);
	fflush(stdout);
	ck_assert_uint_eq(json_array_size(failed), 3);
	for (unsigned i = 0; i < N; i++)
		ck_assert_msg(ok[i] == (i != 29000 && i != 29500 && i != 20), "volume %u: ok %d", i, ok[i]);
	ck_assert_str_eq(failed_name(failed, 2), "projects/p/locations/l/volumes/v00020");
	ck_assert_ptr_nonnull(strstr(failed_error(failed, 2), "shareName"));
	ck_assert_ptr_nonnull(strstr(failed_error(failed, 0), "twice"));
	ck_assert_ptr_nonnull(strstr(failed_error(failed, 1), "twice"));
	ck_assert_msg(whole < 8 * quarter + 0.5, "the check of %d volumes took %.3f s, of %d %.3f s: not linear", N, whole,
		      N / 4, quarter);
	served_fsid = NULL;
	json_decref(failed);
	json_decref(vols);
	free(iv);
	free(ok);
}
END_TEST

START_TEST(test_check_contested_share)
{
	json_t *vols = json_pack("[o,o]", volume("projects/p/locations/l/volumes/a", VOL_A, "s"),
				 volume("projects/p/locations/l/volumes/b", VOL_B, "s"));
	bool ok[2];
	json_t *failed;

	/* none served: the later entry loses */
	served_fsid = NULL;
	failed = check(vols, ok);
	ck_assert(ok[0] && !ok[1]);
	ck_assert_str_eq(failed_name(failed, 0), "projects/p/locations/l/volumes/b");
	ck_assert_ptr_nonnull(strstr(failed_error(failed, 0), "already exported"));
	json_decref(failed);
	/* the one already served keeps its path */
	served_fsid = VOL_B;
	failed = check(vols, ok);
	ck_assert(!ok[0] && ok[1]);
	ck_assert_uint_eq(json_array_size(failed), 1);
	ck_assert_str_eq(failed_name(failed, 0), "projects/p/locations/l/volumes/a");
	json_decref(failed);
	json_decref(vols);
}
END_TEST

/* ---- agent_apply over a stand-in shelf ---- */

static char tmp[64];
static int attaches;

static int fake_attach(struct agent_shelf *s, const char *dir, unsigned mode, uint64_t bytes, char *root, size_t cap)
{
	char top[128];

	(void)s, (void)bytes;
	attaches++;
	snprintf(top, sizeof(top), "%s/volumes", tmp);
	mkdir(top, 0700);
	snprintf(root, cap, "%s/%s", tmp, dir);
	return mkdir(root, mode) == 0 || errno == EEXIST ? 0 : -errno;
}

static int fake_release(struct agent_shelf *s, const char *dir)
{
	(void)s, (void)dir;
	return 0;
}

static const struct agent_shelf_ops fake_shelf = {
	.name = "fake",
	.attach = fake_attach,
	.release = fake_release,
	.destroy = fake_release,
};

/* The longest a JSON value of a report entry can be written (compact):
 * integers 20 characters ("-9223372036854775808"), reals 24 (%.17g with
 * sign and exponent), strings at their contract's limit (name, shareName:
 * api_intent.h; tierDetails: tier_stats' 512-byte text; anything else as
 * long as 64 bytes), arrays and objects as their members. */
static size_t worst_len(const char *key, json_t *v)
{
	const char *k;
	json_t *m;
	size_t n = 0, i;

	if (json_is_integer(v))
		return 20;
	if (json_is_real(v))
		return 24;
	if (json_is_string(v)) {
		size_t cap = !strcmp(key, "name") ? API_INTENT_NAME_LEN
			     : !strcmp(key, "shareName") ? API_INTENT_SHARE_LEN
			     : !strcmp(key, "tierDetails") || !strcmp(key, "shelfDetails") ? 511 : 64;

		ck_assert_uint_le(json_string_length(v), cap);
		return cap + 2;
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, m)
			n += worst_len(key, m) + 1;
		return n + 2;
	}
	if (json_is_object(v)) {
		json_object_foreach(v, k, m)
			n += strlen(k) + 3 + worst_len(k, m) + 1;
		return n + 2;
	}
	return 5; /* true, false, null */
}

/* A served volume's entry in the status report, every field at its
 * longest and a shelfDetails note added, fits API_NODE_VOLUME_REPORT_MAX,
 * from which API_NODE_VOLUMES_MAX is derived (api_intent.h). */
static void report_entry_bound(struct agent *a)
{
	json_t *doc = agent_status_doc(a, true), *e = json_array_get(json_object_get(doc, "volumes"), 0);
	size_t worst;
	char *sent;

	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(json_string_value(json_object_get(e, "state")), "LIVE");
	json_object_set_new(e, "shelfDetails", json_string("the shelf could not grow it"));
	worst = worst_len("", e);
	sent = json_dumps(e, JSON_COMPACT);
	printf("a volume's status entry: %zu bytes as sent, %zu at worst (API_NODE_VOLUME_REPORT_MAX %u); "
	       "%u volumes: %llu bytes of API_INTENT_BODY_MAX %u\n",
	       strlen(sent), worst, API_NODE_VOLUME_REPORT_MAX, API_NODE_VOLUMES_MAX,
	       (unsigned long long)worst * API_NODE_VOLUMES_MAX, API_INTENT_BODY_MAX);
	fflush(stdout);
	ck_assert_uint_le(worst, API_NODE_VOLUME_REPORT_MAX);
	ck_assert_uint_le((unsigned long long)API_NODE_VOLUME_REPORT_MAX * API_NODE_VOLUMES_MAX * 2, API_INTENT_BODY_MAX);
	free(sent);
	json_decref(doc);
}

/* An agent of the stand-in shelf in a new folder tmp (its state below it),
 * store and tier made, as each apply test needs it. */
static void apply_up(struct agent *a)
{
	static struct tier_cfg tc = { .day_seconds = 86400 };
	uint8_t key[VOL_KEY_LEN];

	snprintf(tmp, sizeof(tmp), "/tmp/aq-apply-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	memset(a, 0, sizeof(*a));
	memset(key, 7, sizeof(key));
	snprintf(a->cfg.node, sizeof(a->cfg.node), "n1");
	snprintf(a->cfg.shelf, sizeof(a->cfg.shelf), "%s", tmp);
	snprintf(a->cfg.state_dir, sizeof(a->cfg.state_dir), "%s/state", tmp);
	snprintf(a->cfg.location, sizeof(a->cfg.location), "east");
	ck_assert_int_eq(mkdir(a->cfg.state_dir, 0700), 0);
	a->shelf.ops = &fake_shelf;
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&a->apply_lock, NULL);
	pthread_mutex_init(&a->snap_mu, NULL);
	ck_assert_int_eq(vol_store_new(key, &a->store), 0);
	snprintf(tc.location, sizeof(tc.location), "east");
	ck_assert_int_eq(tier_new(&tc, &a->tier), 0);
	vol_store_set_tier(a->store, tier_ops(), a->tier);
}

/* apply_up undone, its folder removed. */
static void apply_down(struct agent *a)
{
	char cmd[128];

	vol_store_free(a->store);
	tier_free(a->tier);
	json_decref(a->intent);
	json_decref(a->failed);
	json_decref(a->shelf_notes);
	pthread_mutex_destroy(&a->lock);
	pthread_mutex_destroy(&a->apply_lock);
	pthread_mutex_destroy(&a->snap_mu);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_apply_check_then_proceed)
{
	static struct agent a; /* large: not on the stack */
	struct vol_stats st;
	aq_msg msg = { .text = "" };
	char cmd[128];
	json_t *intent;

	apply_up(&a);

	intent = json_pack("{s:I,s:[o,o,o]}", "generation", (json_int_t)3, "volumes",
			   volume("projects/p/locations/l/volumes/a", VOL_A, "a"),
			   volume("projects/p/locations/l/volumes/b", VOL_B, "a"),
			   volume("projects/p/locations/l/volumes/c", VOL_C, "bad share"));
	attaches = 0;
	ck_assert_int_eq(agent_apply(&a, intent, &msg), AQ_OK);
	json_decref(intent);
	/* only the volume that passed the check was attached and exported */
	ck_assert_int_eq(attaches, 1);
	ck_assert_int_eq(vol_store_stats(a.store, VOL_A, &st), 0);
	ck_assert_int_eq(vol_store_stats(a.store, VOL_B, &st), -ENOENT);
	ck_assert_int_eq(vol_store_stats(a.store, VOL_C, &st), -ENOENT);
	ck_assert_uint_eq(json_array_size(a.failed), 2);
	ck_assert_int_eq((int)a.applied, 3);
	snprintf(cmd, sizeof(cmd), "%s/intent.json", a.cfg.state_dir);
	ck_assert_int_eq(access(cmd, F_OK), 0);

	/* a stale generation changes nothing */
	intent = json_pack("{s:I,s:[]}", "generation", (json_int_t)2, "volumes");
	ck_assert_int_eq(agent_apply(&a, intent, &msg), AQ_OK);
	json_decref(intent);
	ck_assert_int_eq(vol_store_stats(a.store, VOL_A, &st), 0);
	ck_assert_int_eq((int)a.applied, 3);
	report_entry_bound(&a);
	/* a malformed intent is refused whole */
	intent = json_pack("{s:I}", "generation", (json_int_t)4);
	ck_assert_int_eq(agent_apply(&a, intent, &msg), AQ_EINVAL);
	json_decref(intent);
	ck_assert_int_eq(vol_store_stats(a.store, VOL_A, &st), 0);
	/* one volume more than a node serves: refused whole, nothing changes */
	intent = json_pack("{s:I,s:[]}", "generation", (json_int_t)5, "volumes");
	for (unsigned i = 0; i <= API_NODE_VOLUMES_MAX; i++) {
		char name[96], fsid[17], share[32];

		snprintf(name, sizeof(name), "projects/p/locations/l/volumes/v%u", i);
		snprintf(fsid, sizeof(fsid), "%016x", 0x100000u + i);
		snprintf(share, sizeof(share), "s%u", i);
		json_array_append_new(json_object_get(intent, "volumes"), volume(name, fsid, share));
	}
	attaches = 0;
	ck_assert_int_eq(agent_apply(&a, intent, &msg), AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg.text, "API_NODE_VOLUMES_MAX"));
	ck_assert_int_eq(attaches, 0);
	ck_assert_int_eq((int)a.applied, 3);
	ck_assert_int_eq(vol_store_stats(a.store, VOL_A, &st), 0);
	/* at the limit it is taken */
	json_array_remove(json_object_get(intent, "volumes"), 0);
	{
		double t = now_s();

		ck_assert_int_eq(agent_apply(&a, intent, &msg), AQ_OK);
		printf("agent_apply of %u volumes (a stand-in shelf): %.3f s\n", API_NODE_VOLUMES_MAX, now_s() - t);
		t = now_s();
		json_decref(agent_status_doc(&a, true));
		printf("their status report: %.3f s\n", now_s() - t);
		fflush(stdout);
	}
	ck_assert_int_eq((int)a.applied, 5);
	ck_assert_int_eq(attaches, (int)API_NODE_VOLUMES_MAX);
	json_decref(intent);

	apply_down(&a);
}
END_TEST

/* ---- a status report while an apply is in progress (issue 22) ---- */

/* The gated shelf's attach: says it entered, then waits to be let go, so
 * the test holds an apply in the middle of its pass over the volumes. */
static sem_t gate_entered, gate_go;

static int gated_attach(struct agent_shelf *s, const char *dir, unsigned mode, uint64_t bytes, char *root, size_t cap)
{
	sem_post(&gate_entered);
	sem_wait(&gate_go);
	return fake_attach(s, dir, mode, bytes, root, cap);
}

static const struct agent_shelf_ops gated_shelf = {
	.name = "gated",
	.attach = gated_attach,
	.release = fake_release,
	.destroy = fake_release,
};

struct bg_apply {
	struct agent *a;
	json_t *intent;
	int rc;
};

static void *bg_apply(void *arg)
{
	struct bg_apply *b = arg;
	aq_msg msg = { .text = "" };

	b->rc = agent_apply(b->a, b->intent, &msg);
	return NULL;
}

struct bg_status {
	struct agent *a;
	json_t *doc;
	sem_t done;
};

static void *bg_status(void *arg)
{
	struct bg_status *b = arg;

	b->doc = agent_status_doc(b->a, true);
	sem_post(&b->done);
	return NULL;
}

/* The reporter builds its report while a long apply runs (a node with
 * 11,000 volumes applies for seconds and was taken for DOWN when its
 * reports waited for that): the report comes at once and tells the state
 * applied before, whole; the apply then publishes its own. */
START_TEST(test_status_during_apply)
{
	static struct agent a;
	aq_msg msg = { .text = "" };
	struct bg_apply ap = { .a = &a };
	struct bg_status bs = { .a = &a };
	pthread_t apt, stt;
	struct timespec until;
	json_t *intent;
	int waited;

	apply_up(&a);
	intent = json_pack("{s:I,s:[o]}", "generation", (json_int_t)3, "volumes",
			   volume("projects/p/locations/l/volumes/a", VOL_A, "a"));
	ck_assert_int_eq(agent_apply(&a, intent, &msg), AQ_OK);
	json_decref(intent);

	/* generation 4 adds b; its apply stops inside b's attach */
	ck_assert_int_eq(sem_init(&gate_entered, 0, 0), 0);
	ck_assert_int_eq(sem_init(&gate_go, 0, 0), 0);
	ck_assert_int_eq(sem_init(&bs.done, 0, 0), 0);
	a.shelf.ops = &gated_shelf;
	ap.intent = json_pack("{s:I,s:[o,o]}", "generation", (json_int_t)4, "volumes",
			      volume("projects/p/locations/l/volumes/a", VOL_A, "a"),
			      volume("projects/p/locations/l/volumes/b", VOL_B, "b"));
	ck_assert_int_eq(pthread_create(&apt, NULL, bg_apply, &ap), 0);
	ck_assert_int_eq(sem_wait(&gate_entered), 0); /* a's attach: the apply is under way */
	ck_assert_int_eq(pthread_create(&stt, NULL, bg_status, &bs), 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	waited = sem_timedwait(&bs.done, &until);
	/* let the apply go on either way, so that both threads end */
	for (int i = 0; i < 4; i++)
		sem_post(&gate_go);
	ck_assert_int_eq(pthread_join(apt, NULL), 0);
	ck_assert_int_eq(pthread_join(stt, NULL), 0);
	ck_assert_msg(waited == 0, "the status report waited for the apply in progress (more than 5 s)");
	/* the report of the state applied before: generation 3, volume a only */
	ck_assert_ptr_nonnull(bs.doc);
	ck_assert_int_eq((int)json_integer_value(json_object_get(bs.doc, "appliedGeneration")), 3);
	ck_assert_uint_eq(json_array_size(json_object_get(bs.doc, "volumes")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(bs.doc, "volumes"), 0), "name")),
			 "projects/p/locations/l/volumes/a");
	json_decref(bs.doc);
	/* and once the apply is done, its own */
	ck_assert_int_eq(ap.rc, AQ_OK);
	bs.doc = agent_status_doc(&a, true);
	ck_assert_int_eq((int)json_integer_value(json_object_get(bs.doc, "appliedGeneration")), 4);
	ck_assert_uint_eq(json_array_size(json_object_get(bs.doc, "volumes")), 2);
	json_decref(bs.doc);
	json_decref(ap.intent);

	sem_destroy(&gate_entered);
	sem_destroy(&gate_go);
	sem_destroy(&bs.done);
	apply_down(&a);
}
END_TEST

/* ---- NTFS roots made before the root default (session 41) ---- */

static unsigned mode_of(const char *p)
{
	struct stat st;

	ck_assert_int_eq(stat(p, &st), 0);
	return st.st_mode & 07777;
}

/* A root folder under tmp with mode (exact), a stored descriptor if sd. */
static void root_make(char *p, size_t cap, const char *name, unsigned mode, bool sd)
{
	snprintf(p, cap, "%s/%s", tmp, name);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	ck_assert_int_eq(chmod(p, mode), 0);
	if (sd)
		ck_assert_int_eq(setxattr(p, VOL_SD_ATTR, "\1\0\4\x80", 4, 0), 0);
}

START_TEST(test_ntfs_root_settle)
{
	char old[128], sd[128], admin[128], cmd[160];

	if (geteuid() != 0) {
		fprintf(stderr, "# SKIP test_ntfs_root_settle: trusted.* attributes need root\n");
		return;
	}
	snprintf(tmp, sizeof(tmp), "/tmp/aq-ntfsroot-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	root_make(old, sizeof(old), "old", 0770, false);
	root_make(sd, sizeof(sd), "sd", 0770, true);
	root_make(admin, sizeof(admin), "admin", 0750, false);
	ck_assert_int_eq(agent_ntfs_root_settle(old), 1);
	ck_assert_uint_eq(mode_of(old), 0777);
	ck_assert_int_eq(agent_ntfs_root_settle(sd), 0);
	ck_assert_uint_eq(mode_of(sd), 0770);
	ck_assert_int_eq(agent_ntfs_root_settle(admin), 0);
	ck_assert_uint_eq(mode_of(admin), 0750);
	/* once: a root set back to 0770 afterwards (an admin's choice now) stays */
	ck_assert_int_eq(chmod(old, 0770), 0);
	ck_assert_int_eq(agent_ntfs_root_settle(old), 0);
	ck_assert_uint_eq(mode_of(old), 0770);
	/* the descriptor and the mode of the others were decided too */
	ck_assert_int_eq(removexattr(sd, VOL_SD_ATTR), 0);
	ck_assert_int_eq(agent_ntfs_root_settle(sd), 0);
	ck_assert_uint_eq(mode_of(sd), 0770);
	/* a folder that is not there: an error, nothing made */
	snprintf(cmd, sizeof(cmd), "%s/none", tmp);
	ck_assert_int_eq(agent_ntfs_root_settle(cmd), -ENOENT);
	ck_assert_int_eq(access(cmd, F_OK), -1);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Through agent_apply: the existing roots of an NTFS volume (0770, no
 * descriptor: made 0777) and of a UNIX one (0770: its unixPermissions,
 * left alone) on the stand-in shelf. */
START_TEST(test_apply_ntfs_root)
{
	static struct agent a; /* large: not on the stack */
	aq_msg msg = { .text = "" };
	char p[160];
	json_t *intent, *ntfs;

	if (geteuid() != 0) {
		fprintf(stderr, "# SKIP test_apply_ntfs_root: trusted.* attributes need root\n");
		return;
	}
	apply_up(&a);
	snprintf(p, sizeof(p), "%s/volumes", tmp);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/volumes/%s", tmp, VOL_A);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	ck_assert_int_eq(chmod(p, 0770), 0);
	snprintf(p, sizeof(p), "%s/volumes/%s", tmp, VOL_B);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	ck_assert_int_eq(chmod(p, 0770), 0);
	ntfs = volume("projects/p/locations/l/volumes/a", VOL_A, "a");
	json_object_set_new(ntfs, "securityStyle", json_string("NTFS"));
	json_object_set_new(ntfs, "protocols", json_pack("[s]", "SMB"));
	intent = json_pack("{s:I,s:[o,o]}", "generation", (json_int_t)3, "volumes", ntfs,
			   volume("projects/p/locations/l/volumes/b", VOL_B, "b"));
	ck_assert_int_eq(agent_apply(&a, intent, &msg), AQ_OK);
	json_decref(intent);
	ck_assert_uint_eq(json_array_size(a.failed), 0);
	snprintf(p, sizeof(p), "%s/volumes/%s", tmp, VOL_A);
	ck_assert_uint_eq(mode_of(p), 0777);
	snprintf(p, sizeof(p), "%s/volumes/%s", tmp, VOL_B);
	ck_assert_uint_eq(mode_of(p), 0770);

	apply_down(&a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agent_apply");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_check_each_entry);
	tcase_add_test(tc, test_check_duplicates);
	tcase_add_test(tc, test_check_contested_share);
	tcase_add_test(tc, test_check_scale);
	tcase_add_test(tc, test_apply_check_then_proceed);
	tcase_add_test(tc, test_status_during_apply);
	tcase_add_test(tc, test_ntfs_root_settle);
	tcase_add_test(tc, test_apply_ntfs_root);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
