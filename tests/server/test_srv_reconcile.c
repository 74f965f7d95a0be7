/* Unit tests for the reconciler's bookkeeping over a real database
 * (server/srv_reconcile.c, server/srv_intent.c): what a node's applied
 * generation finishes (creates become READY with their mount options,
 * deletes remove the volume, failures show ERROR and end their operation
 * with the node's reason, later generations wait), and the intent a node
 * is sent. The push itself (libcurl) is the e2e suites'. */
#include "server/srv_visit.h"

#include <check.h>
#include <pthread.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "server/srv_intent.h"
#include "util/ut_clock.h"
#include "tests/lib/aqt.h"
#include "tests/server/srv_test.h"

#define LOC "projects/p/locations/east"

static struct db *db;

/* Volume id placed on nodes/n1 with action, pending generation g and its
 * operation (stored, running). */
static void placed(const char *id, const char *action, int64_t g)
{
	char vn[200], pn[300], op[200];

	snprintf(vn, sizeof(vn), LOC "/volumes/%s", id);
	snprintf(pn, sizeof(pn), "placements/%s", vn);
	snprintf(op, sizeof(op), LOC "/operations/op-%s", id);
	srv_test_put(db, "volume", LOC, vn, json_pack("{s:s,s:s,s:s}", "name", vn, "state", "CREATING", "shareName", id));
	srv_test_put(db, "operation", LOC, op, json_pack("{s:s,s:b,s:{}}", "name", op, "done", 0, "metadata"));
	srv_test_put(db, "placement", "nodes/n1", pn,
	    json_pack("{s:s,s:s,s:f,s:s,s:s,s:s,s:s,s:I}", "volume", vn, "node", "nodes/n1", "mibps", 10.0, "fsid",
		      "00112233445566aa", "dir", "volumes/00112233445566aa", "op", op, "action", action,
		      "pendingGeneration", (json_int_t)g));
}

/* The stored document prefix + id, or NULL. */
static json_t *get(const char *prefix, const char *id)
{
	char name[300];
	json_t *doc = NULL;

	snprintf(name, sizeof(name), "%s%s", prefix, id);
	return db_get(db, name, &doc) == AQ_OK ? doc : NULL;
}

static void setup(void)
{

	db = srv_test_db_open();
	srv_test_put(db, "node", "locations/east", "nodes/n1",
	    json_pack("{s:s,s:s,s:s,s:I,s:{}}", "name", "nodes/n1", "location", "east", "nfsAddress", "10.0.0.5:2049",
		      "generation", (json_int_t)3, "internal"));
	srv_test_put(db, "locsecret", "", "locsecrets/east", json_pack("{s:s}", "handleKey", "ab12"));
	placed("v1", "create", 2);  /* applied: READY */
	placed("v2", "create", 3);  /* a later generation: waits */
	placed("v3", "delete", 2);  /* applied: gone */
	placed("v4", "create", 2);  /* failed by the node */
	placed("v5", "update", 1);  /* failed by the node, update: keeps its placement */
	placed("v6", "create", 0);  /* no generation carries it yet */
}

static void teardown(void)
{
	srv_test_db_close(db);
}

START_TEST(test_applied)
{
	json_t *failed = json_pack("[{s:s,s:s},{s:s,s:s}]", "name", LOC "/volumes/v4", "error", "disk full", "name",
				   LOC "/volumes/v5", "error", "quota");
	json_t *d;

	ck_assert_int_eq(srv_visit_applied(NULL, db, "nodes/n1", 2, failed), AQ_OK);
	json_decref(failed);
	/* v1: READY with its mount options, placement settled, operation done with the volume */
	d = get(LOC "/volumes/", "v1");
	ck_assert_str_eq(json_string_value(json_object_get(d, "state")), "READY");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(d, "mountOptions"), 0),
							   "exportFull")),
			 "10.0.0.5:/v1");
	json_decref(d);
	d = get("placements/" LOC "/volumes/", "v1");
	ck_assert_str_eq(json_string_value(json_object_get(d, "action")), "");
	ck_assert_ptr_null(json_object_get(d, "op"));
	json_decref(d);
	d = get(LOC "/operations/op-", "v1");
	ck_assert(json_is_true(json_object_get(d, "done")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(d, "response"), "name")), LOC "/volumes/v1");
	json_decref(d);
	/* v2 and v6: untouched */
	d = get(LOC "/operations/op-", "v2");
	ck_assert(json_is_false(json_object_get(d, "done")));
	json_decref(d);
	d = get("placements/" LOC "/volumes/", "v2");
	ck_assert_str_eq(json_string_value(json_object_get(d, "action")), "create");
	json_decref(d);
	d = get(LOC "/operations/op-", "v6");
	ck_assert(json_is_false(json_object_get(d, "done")));
	json_decref(d);
	/* v3: volume and placement gone, operation done (Empty) */
	ck_assert_ptr_null(get(LOC "/volumes/", "v3"));
	ck_assert_ptr_null(get("placements/" LOC "/volumes/", "v3"));
	d = get(LOC "/operations/op-", "v3");
	ck_assert(json_is_true(json_object_get(d, "done")));
	ck_assert(strstr(json_string_value(json_object_get(json_object_get(d, "response"), "@type")), "Empty") != NULL);
	json_decref(d);
	/* v4: ERROR with the node's reason, its create given up, operation failed */
	d = get(LOC "/volumes/", "v4");
	ck_assert_str_eq(json_string_value(json_object_get(d, "state")), "ERROR");
	ck_assert(strstr(json_string_value(json_object_get(d, "stateDetails")), "disk full") != NULL);
	json_decref(d);
	ck_assert_ptr_null(get("placements/" LOC "/volumes/", "v4"));
	d = get(LOC "/operations/op-", "v4");
	ck_assert(json_is_true(json_object_get(d, "done")));
	ck_assert(strstr(json_string_value(json_object_get(json_object_get(d, "error"), "message")), "disk full") != NULL);
	json_decref(d);
	/* v5: ERROR, but an update keeps its node */
	d = get("placements/" LOC "/volumes/", "v5");
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(json_string_value(json_object_get(d, "action")), "");
	json_decref(d);
	d = get(LOC "/operations/op-", "v5");
	ck_assert(strstr(json_string_value(json_object_get(json_object_get(d, "error"), "message")), "quota") != NULL);
	json_decref(d);
	/* the next generation finishes v2 */
	ck_assert_int_eq(srv_visit_applied(NULL, db, "nodes/n1", 3, NULL), AQ_OK);
	d = get(LOC "/operations/op-", "v2");
	ck_assert(json_is_true(json_object_get(d, "done")));
	json_decref(d);
}
END_TEST

/* Volume id placed on node (its own stored document, nfs and smb its
 * addresses; smb NULL: none) with protocols (NULL: none given), its create
 * applied in generation 1; its mountOptions as that makes them. */
static json_t *mount_options_of(const char *node, const char *nfs, const char *smb, const char *id,
				json_t *protocols)
{
	char vn[200], pn[300], op[200];
	json_t *n = json_pack("{s:s,s:s,s:s,s:I,s:{}}", "name", node, "location", "east", "nfsAddress", nfs,
			      "generation", (json_int_t)1, "internal");
	json_t *v = json_pack("{s:s,s:s,s:s}", "name", "", "state", "CREATING", "shareName", id), *d, *mo;

	snprintf(vn, sizeof(vn), LOC "/volumes/%s", id);
	snprintf(pn, sizeof(pn), "placements/%s", vn);
	snprintf(op, sizeof(op), LOC "/operations/op-%s", id);
	if (smb)
		json_object_set_new(n, "smbAddress", json_string(smb));
	srv_test_put(db, "node", "locations/east", node, n);
	json_object_set_new(v, "name", json_string(vn));
	if (protocols)
		json_object_set_new(v, "protocols", protocols);
	srv_test_put(db, "volume", LOC, vn, v);
	srv_test_put(db, "operation", LOC, op, json_pack("{s:s,s:b,s:{}}", "name", op, "done", 0, "metadata"));
	srv_test_put(db, "placement", node, pn,
	    json_pack("{s:s,s:s,s:f,s:s,s:s,s:s,s:s,s:I}", "volume", vn, "node", node, "mibps", 10.0, "fsid",
		      "00112233445566bb", "dir", "volumes/00112233445566bb", "op", op, "action", "create",
		      "pendingGeneration", (json_int_t)1));
	ck_assert_int_eq(srv_visit_applied(NULL, db, node, 1, NULL), AQ_OK);
	d = get(LOC "/volumes/", id);
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(json_string_value(json_object_get(d, "state")), "READY");
	mo = json_incref(json_object_get(d, "mountOptions"));
	json_decref(d);
	return mo;
}

/* want == got, or fail showing both. */
static void json_same(json_t *want, json_t *got)
{
	char *w = json_dumps(want, JSON_SORT_KEYS | JSON_INDENT(1)), *g = json_dumps(got, JSON_SORT_KEYS | JSON_INDENT(1));

	if (!json_equal(want, got))
		ck_abort_msg("mountOptions differ:\nwant %s\ngot %s", w, g);
	free(w);
	free(g);
	json_decref(want);
	json_decref(got);
}

/* One expected mountOptions entry (url NULL: no libnfsUrl). */
static json_t *entry(const char *exp, const char *full, const char *proto, const char *instr, const char *ip,
		     json_int_t port, const char *url)
{
	json_t *e = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "export", exp, "exportFull", full, "protocol", proto,
			      "instructions", instr, "ipAddress", ip, "port", port);

	if (url)
		json_object_set_new(e, "libnfsUrl", json_string(url));
	return e;
}

#define NFS_INSTALL "# Install the NFS client: sudo apt-get install -y nfs-common (Debian, Ubuntu)" \
	" or sudo yum install -y nfs-utils (Red Hat, SUSE)\n"
#define NFS3_MOUNT NFS_INSTALL "# Create a directory to mount the volume on, then mount it:\n"
#define NFS4_MOUNT NFS_INSTALL "# Create a directory to mount the volume on, then mount it (add nconnect=N for " \
	"more connections):\n"
#define SMB_MOUNT "# Install the SMB client: sudo apt-get install -y cifs-utils smbclient (Debian, Ubuntu)\n" \
	"# USER is one of the project's smbUsers. Mount the share, or browse it with smbclient:\n"

/* The mount instructions a READY volume shows, whole, for each protocol:
 * NFSv3 (also when no protocols are given) with its libnfs URL, NFSv4.1,
 * SMB on the node's SMB port, a wildcard SMB host taking the NFS host, an
 * IPv6 host in brackets. */
START_TEST(test_mount_options)
{
	json_same(json_pack("[o,o,o]",
		entry("/sh", "10.0.0.7:/sh", "NFSV3", NFS3_MOUNT "sudo mkdir -p /mnt/sh\n"
		      "sudo mount -t nfs -o rw,hard,vers=3,tcp,port=2050,mountport=2050,nolock 10.0.0.7:/sh /mnt/sh",
		      "10.0.0.7", 2050, "nfs://10.0.0.7/sh?version=3&nfsport=2050&mountport=2050"),
		entry("/sh", "10.0.0.7:/sh", "NFSV4", NFS4_MOUNT "sudo mkdir -p /mnt/sh\n"
		      "sudo mount -t nfs -o rw,hard,vers=4.1,tcp,port=2050 10.0.0.7:/sh /mnt/sh", "10.0.0.7", 2050, NULL),
		entry("\\\\10.0.0.7\\sh", "//10.0.0.7/sh", "SMB", SMB_MOUNT "sudo mkdir -p /mnt/sh\n"
		      "sudo mount -t cifs //10.0.0.7/sh /mnt/sh -o vers=3.1.1,username=USER,port=4450\n"
		      "smbclient //10.0.0.7/sh -U USER -p 4450", "10.0.0.7", 4450, NULL)),
		mount_options_of("nodes/n2", "10.0.0.7:2050", "0.0.0.0:4450", "sh",
				 json_pack("[s,s,s]", "NFSV3", "NFSV4", "SMB")));
	/* no protocols: NFSv3; an IPv6 host keeps its brackets, port 2049 by default */
	json_same(json_pack("[o]",
		entry("/s6", "[::1]:/s6", "NFSV3", NFS3_MOUNT "sudo mkdir -p /mnt/s6\n"
		      "sudo mount -t nfs -o rw,hard,vers=3,tcp,port=2049,mountport=2049,nolock [::1]:/s6 /mnt/s6",
		      "[::1]", 2049, "nfs://[::1]/s6?version=3&nfsport=2049&mountport=2049")),
		mount_options_of("nodes/n3", "[::1]", NULL, "s6", NULL));
	/* NFSv4.1 alone with SMB at its own host on the default port; no NFSv3 */
	json_same(json_pack("[o,o]",
		entry("/s4", "10.0.0.8:/s4", "NFSV4", NFS4_MOUNT "sudo mkdir -p /mnt/s4\n"
		      "sudo mount -t nfs -o rw,hard,vers=4.1,tcp,port=2049 10.0.0.8:/s4 /mnt/s4", "10.0.0.8", 2049, NULL),
		entry("\\\\10.0.0.9\\s4", "//10.0.0.9/s4", "SMB", SMB_MOUNT "sudo mkdir -p /mnt/s4\n"
		      "sudo mount -t cifs //10.0.0.9/s4 /mnt/s4 -o vers=3.1.1,username=USER,port=445\n"
		      "smbclient //10.0.0.9/s4 -U USER -p 445", "10.0.0.9", 445, NULL)),
		mount_options_of("nodes/n4", "10.0.0.8:2049", "10.0.0.9", "s4", json_pack("[s,s]", "SMB", "NFSV4")));
}
END_TEST

/* The intent: the node, its location's handle key, a delete entry per
 * delete placement (with its fsid and folder), no entry for a volume whose
 * document is gone. */
START_TEST(test_intent)
{
	json_t *node = get("nodes/", "n1"), *intent = NULL, *bad = NULL, *dels;
	struct api_math_params math = api_math_defaults;

	ck_assert_int_eq(srv_intent_build(&math, db, node, &intent, &bad, NULL), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(intent, "node")), "nodes/n1");
	ck_assert_str_eq(json_string_value(json_object_get(intent, "location")), "east");
	ck_assert_str_eq(json_string_value(json_object_get(intent, "handleKey")), "ab12");
	dels = json_object_get(intent, "deletes");
	ck_assert_uint_eq(json_array_size(dels), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(dels, 0), "name")), LOC "/volumes/v3");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(dels, 0), "fsid")), "00112233445566aa");
	/* every other placement is a volume entry or a reason in bad */
	ck_assert_uint_eq(json_array_size(json_object_get(intent, "volumes")) + json_array_size(bad), 5);
	json_decref(intent);
	json_decref(bad);
	/* a placement whose volume went away is left out */
	ck_assert_int_eq(db_delete(db, LOC "/volumes/v1"), AQ_OK);
	ck_assert_int_eq(srv_intent_build(&math, db, node, &intent, &bad, NULL), AQ_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(intent, "volumes")) + json_array_size(bad), 4);
	json_decref(intent);
	json_decref(bad);
	json_decref(node);
}
END_TEST

/* Does intent carry a volume entry named vn? */
static bool carries(const json_t *intent, const char *vn)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(intent, "volumes"), i, v)
		if (strcmp(json_string_value(json_object_get(v, "name")), vn) == 0)
			return true;
	return false;
}

/* A volume create committing between the build without the write lock and
 * the generation's transaction (issue 20: a clone came up READY and empty):
 * its placement takes no generation whose intent lacks it; it waits, the
 * reconciler is told to build again (more), and the next generation
 * carries it. A placement that changed after the build (a cancelled
 * create) is left alone too. The transaction rebuilds nothing. */
START_TEST(test_generation_race)
{
	json_t *node = get("nodes/", "n1"), *pl;
	struct api_math_params math = api_math_defaults;
	struct srv_visit_intent ri = { .intent = NULL };
	int64_t gen = 0;
	bool more = false;

	ck_assert_int_eq(srv_visit_intent_build(&math, db, node, &ri), AQ_OK);
	ck_assert(!carries(ri.intent, LOC "/volumes/v7"));
	placed("v7", "create", 0); /* commits after the build */
	ck_assert_int_eq(srv_visit_generation(&math, db, NULL, node, &ri, &gen, &more), AQ_OK);
	ck_assert_int_eq(gen, 4); /* the first intent since the node's generation 3 */
	pl = get("placements/" LOC "/volumes/", "v7");
	ck_assert_int_eq(json_integer_value(json_object_get(pl, "pendingGeneration")), 0);
	ck_assert(!carries(ri.intent, LOC "/volumes/v7"));
	json_decref(pl);
	/* the next build carries it, and then it takes that generation */
	ck_assert_int_eq(srv_visit_intent_build(&math, db, node, &ri), AQ_OK);
	ck_assert(carries(ri.intent, LOC "/volumes/v7"));
	ck_assert(json_object_get(ri.pending, "placements/" LOC "/volumes/v7"));
	ck_assert_int_eq(srv_visit_generation(&math, db, NULL, node, &ri, &gen, &more), AQ_OK);
	ck_assert_int_eq(gen, 5);
	ck_assert(!more);
	pl = get("placements/" LOC "/volumes/", "v7");
	ck_assert_int_eq(json_integer_value(json_object_get(pl, "pendingGeneration")), 5);
	json_decref(pl);
	pl = get("nodes/", "n1");
	ck_assert_int_eq(json_integer_value(json_object_get(pl, "generation")), 5);
	json_decref(pl);
	/* nothing changed since: the same generation */
	ck_assert_int_eq(srv_visit_intent_build(&math, db, node, &ri), AQ_OK);
	ck_assert_int_eq(srv_visit_generation(&math, db, NULL, node, &ri, &gen, &more), AQ_OK);
	ck_assert_int_eq(gen, 5);
	ck_assert(carries(ri.intent, LOC "/volumes/v7"));
	/* built while v8 was a create; cancelled (op and action changed) before
	 * the transaction: it takes no generation, more says build again */
	placed("v8", "create", 0);
	ck_assert_int_eq(srv_visit_intent_build(&math, db, node, &ri), AQ_OK);
	pl = get("placements/" LOC "/volumes/", "v8");
	json_object_set_new(pl, "op", json_string(""));
	json_object_set_new(pl, "action", json_string("delete"));
	ck_assert_int_eq(db_put(db, "placement", "nodes/n1", "placements/" LOC "/volumes/v8", pl, false), AQ_OK);
	json_decref(pl);
	ck_assert_int_eq(srv_visit_generation(&math, db, NULL, node, &ri, &gen, &more), AQ_OK);
	ck_assert(more);
	pl = get("placements/" LOC "/volumes/", "v8");
	ck_assert_int_eq(json_integer_value(json_object_get(pl, "pendingGeneration")), 0);
	json_decref(pl);
	srv_visit_intent_cleanup(&ri);
	json_decref(node);
}
END_TEST

START_TEST(test_vol_parent)
{
	char out[200];

	ck_assert_int_eq(srv_intent_vol_parent(LOC "/volumes/v1", out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, LOC);
	ck_assert_int_eq(srv_intent_vol_parent(LOC "/storagePools/p", out, sizeof(out)), AQ_EINVAL);
}
END_TEST

/* Nodes g0..g7 each report generation 1 applied (a create waited for it),
 * from eight threads at once while another writer holds the writer mutex:
 * one commit (db_group_run) makes all eight volumes READY and ends their
 * operations, where each report used to be its own transaction. */
#define GROUP_NODES 8
struct applied_thread {
	pthread_t th;
	struct db *db;
	char node[32];
	int rc;
};

static void *applied_run(void *arg)
{
	struct applied_thread *a = arg;

	a->rc = srv_visit_applied(NULL, a->db, a->node, 1, NULL);
	return NULL;
}

START_TEST(test_applied_grouped)
{
	struct applied_thread a[GROUP_NODES];
	struct db_sync_stats c0, c1;
	struct srv_visit_batch_stats st;
	aq_msg msg = { .text = "" };

	for (int i = 0; i < GROUP_NODES; i++) {
		char nn[32], vn[200], pn[300], op[200], share[16];

		snprintf(nn, sizeof(nn), "nodes/g%d", i);
		snprintf(vn, sizeof(vn), LOC "/volumes/g%d", i);
		snprintf(pn, sizeof(pn), "placements/%s", vn);
		snprintf(op, sizeof(op), LOC "/operations/op-g%d", i);
		snprintf(share, sizeof(share), "g%d", i);
		srv_test_put(db, "node", "locations/east", nn,
		    json_pack("{s:s,s:s,s:s,s:I,s:{}}", "name", nn, "location", "east", "nfsAddress", "10.0.0.5:2049",
			      "generation", (json_int_t)1, "internal"));
		srv_test_put(db, "volume", LOC, vn, json_pack("{s:s,s:s,s:s}", "name", vn, "state", "CREATING", "shareName", share));
		srv_test_put(db, "operation", LOC, op, json_pack("{s:s,s:b,s:{}}", "name", op, "done", 0, "metadata"));
		srv_test_put(db, "placement", nn, pn,
		    json_pack("{s:s,s:s,s:f,s:s,s:s,s:s,s:s,s:I}", "volume", vn, "node", nn, "mibps", 10.0, "fsid",
			      "00112233445566aa", "dir", "volumes/00112233445566aa", "op", op, "action", "create",
			      "pendingGeneration", (json_int_t)1));
		a[i] = (struct applied_thread){ .rc = AQ_EIO };
		snprintf(a[i].node, sizeof(a[i].node), "%s", nn);
		ck_assert_msg(db_open(srv_test_db_path(), &a[i].db, &msg) == AQ_OK, "%s", msg.text);
	}
	db_group_limits(0, 60 * 1000000000ull); /* no cut by the clock under load */
	ck_assert_int_eq(db_begin(db), AQ_OK); /* another writer holds the lock */
	for (int i = 0; i < GROUP_NODES; i++)
		ck_assert_int_eq(pthread_create(&a[i].th, NULL, applied_run, &a[i]), 0);
	for (int i = 0; i < 2000; i++) { /* up to 20 s, within the test's timeout */
		srv_visit_batch_stats(&st);
		if (st.queued >= GROUP_NODES)
			break;
		usleep(10000);
	}
	srv_visit_batch_stats(&st);
	ck_assert_msg(st.queued == GROUP_NODES, "%llu of %d reports queued for a batch", (unsigned long long)st.queued, GROUP_NODES);
	db_sync_stats(&c0);
	db_rollback(db);
	for (int i = 0; i < GROUP_NODES; i++) {
		pthread_join(a[i].th, NULL);
		ck_assert_msg(a[i].rc == AQ_OK, "%s: %s", a[i].node, aq_err_str(a[i].rc));
		db_close(a[i].db);
	}
	db_sync_stats(&c1);
	ck_assert_msg(c1.commits - c0.commits == 1, "%d applied reports cost %llu commits, not 1", GROUP_NODES,
		      (unsigned long long)(c1.commits - c0.commits));
	for (int i = 0; i < GROUP_NODES; i++) {
		char id[16];
		json_t *d;

		snprintf(id, sizeof(id), "g%d", i);
		ck_assert_ptr_nonnull(d = get(LOC "/volumes/", id));
		ck_assert_str_eq(json_string_value(json_object_get(d, "state")), "READY");
		json_decref(d);
		snprintf(id, sizeof(id), "op-g%d", i);
		ck_assert_ptr_nonnull(d = get(LOC "/operations/", id));
		ck_assert(json_is_true(json_object_get(d, "done")));
		json_decref(d);
	}
}
END_TEST

/* Node nn (generation gen) holding volume id, its create pending
 * generation pg. */
static void batch_vol(const char *nn, const char *id, int64_t pg)
{
	char vn[200], pn[300], op[200];

	snprintf(vn, sizeof(vn), LOC "/volumes/%s", id);
	snprintf(pn, sizeof(pn), "placements/%s", vn);
	snprintf(op, sizeof(op), LOC "/operations/op-%s", id);
	srv_test_put(db, "volume", LOC, vn, json_pack("{s:s,s:s,s:s}", "name", vn, "state", "CREATING", "shareName", id));
	srv_test_put(db, "operation", LOC, op, json_pack("{s:s,s:b,s:{}}", "name", op, "done", 0, "metadata"));
	srv_test_put(db, "placement", nn, pn,
	    json_pack("{s:s,s:s,s:f,s:s,s:s,s:s,s:s,s:I}", "volume", vn, "node", nn, "mibps", 10.0, "fsid",
		      "00112233445566cc", "dir", "volumes/00112233445566cc", "op", op, "action", "create",
		      "pendingGeneration", (json_int_t)pg));
}

static void batch_node(const char *nn, int64_t gen, const char *id, int64_t pg)
{
	srv_test_put(db, "node", "locations/east", nn,
	    json_pack("{s:s,s:s,s:s,s:I,s:{}}", "name", nn, "location", "east", "nfsAddress", "10.0.0.5:2049",
		      "generation", (json_int_t)gen, "internal"));
	batch_vol(nn, id, pg);
}

/* One visit's write on its own thread and connection: applied (g, failed)
 * or, with ri, a generation under fence. */
struct batch_thread {
	pthread_t th;
	struct db *db;
	const char *node;
	int64_t g;
	json_t *failed;
	struct srv_visit_intent *ri;
	const struct db_fence *fence;
	int64_t gen;
	int rc;
};

static void *batch_run(void *arg)
{
	struct batch_thread *a = arg;
	struct api_math_params math = api_math_defaults;
	json_t *n = json_pack("{s:s}", "name", a->node);

	if (a->ri)
		a->rc = srv_visit_generation(&math, a->db, a->fence, n, a->ri, &a->gen, NULL);
	else
		a->rc = srv_visit_applied(NULL, a->db, a->node, a->g, a->failed);
	json_decref(n);
	return NULL;
}

static const char *state_of(const char *id)
{
	static char st[32];
	json_t *d = get(LOC "/volumes/", id);

	snprintf(st, sizeof(st), "%s", d ? json_string_value(json_object_get(d, "state")) : "(gone)");
	json_decref(d);
	return st;
}

static int64_t int_of(const char *prefix, const char *id, const char *field)
{
	json_t *d = get(prefix, id);
	int64_t v = d ? json_integer_value(json_object_get(d, field)) : -1;

	json_decref(d);
	return v;
}

/* Visits' writes queued together (in this order) while another writer holds the lock run
 * as one batch (one transaction): each takes exactly what its own
 * request says. n1 applied 2 with v4 failed; b0 applied 1 (its create
 * READY); b1 applied 1: c1a's create READY, c1's waits for 2 (stays CREATING); b2
 * pushed nothing (its push failed: no request) and stays CREATING; b3 and
 * b5 take a generation for their pending creates under the leader's fence
 * (checked once); b4's carries the leader's lease and holder but an epoch
 * it no longer holds (fenced), checked again: the batch fails, each request runs alone, and
 * only b4's is refused (its node and placement untouched), the others'
 * writes all kept. */
#define BATCH_REQS 7
static void batch_case(bool fenced, bool tight)
{
	struct api_math_params math = api_math_defaults;
	struct srv_visit_intent ri3 = { .intent = NULL }, ri4 = { .intent = NULL }, ri5 = { .intent = NULL };
	struct db_lease held;
	struct db_fence good = { .lease = "leases/leader", .holder = "me" }, bad;
	json_t *failed = json_pack("[{s:s,s:s}]", "name", LOC "/volumes/v4", "error", "disk full"), *n;
	struct batch_thread a[BATCH_REQS] = {
		{ .node = "nodes/n1", .g = 2, .failed = failed },
		{ .node = "nodes/b0", .g = 1 },
		{ .node = "nodes/b1", .g = 1 },
		{ .node = "nodes/b3", .ri = &ri3, .fence = &good },
		{ .node = "nodes/b4", .ri = &ri4, .fence = fenced ? &bad : &good },
		{ .node = "nodes/b5", .ri = &ri5, .fence = &good },
		{ .node = "nodes/b0", .g = 1 }, /* twice: its status report and its push's answer */
	};
	struct srv_visit_batch_stats s0, s1;
	aq_msg msg = { .text = "" };

	ck_assert_int_eq(db_lease_take(db, "leases/leader", "me", "", ut_clock_real_ms(), 600000, &held), AQ_OK);
	good.epoch = held.epoch;
	bad = good;
	bad.epoch = held.epoch + 1; /* the same holder's epoch no longer held (another replica's is) */
	batch_node("nodes/b0", 1, "c0", 1);
	batch_node("nodes/b1", 2, "c1", 2);
	batch_vol("nodes/b1", "c1a", 1);
	batch_node("nodes/b2", 1, "c2", 1);
	batch_node("nodes/b3", 1, "c3", 0);
	batch_node("nodes/b4", 1, "c4", 0);
	batch_node("nodes/b5", 1, "c5", 0);
	ck_assert_ptr_nonnull(n = get("nodes/", "b3"));
	ck_assert_int_eq(srv_visit_intent_build(&math, db, n, &ri3), AQ_OK);
	json_decref(n);
	ck_assert_ptr_nonnull(n = get("nodes/", "b4"));
	ck_assert_int_eq(srv_visit_intent_build(&math, db, n, &ri4), AQ_OK);
	json_decref(n);
	ck_assert_ptr_nonnull(n = get("nodes/", "b5"));
	ck_assert_int_eq(srv_visit_intent_build(&math, db, n, &ri5), AQ_OK);
	json_decref(n);
	srv_visit_batch_stats(&s0);
	/* no cut by the clock under load; tight: a batch out of time at once */
	db_group_limits(0, tight ? 1 : 60 * 1000000000ull);
	for (int i = 0; i < BATCH_REQS; i++) {
		a[i].rc = AQ_EIO;
		ck_assert_msg(db_open(srv_test_db_path(), &a[i].db, &msg) == AQ_OK, "%s", msg.text);
	}
	ck_assert_int_eq(db_begin(db), AQ_OK); /* another writer holds the lock */
	for (int i = 0; i < BATCH_REQS; i++) {
		ck_assert_int_eq(pthread_create(&a[i].th, NULL, batch_run, &a[i]), 0);
		for (int t = 0; t < 2000; t++) { /* queued in this order (up to 20 s) */
			srv_visit_batch_stats(&s1);
			if (s1.queued >= (uint64_t)i + 1)
				break;
			usleep(10000);
		}
	}
	srv_visit_batch_stats(&s1);
	ck_assert_msg(s1.queued == BATCH_REQS, "%llu of %d queued", (unsigned long long)s1.queued, BATCH_REQS);
	db_rollback(db);
	for (int i = 0; i < BATCH_REQS; i++) {
		pthread_join(a[i].th, NULL);
		db_close(a[i].db);
		if (fenced && i == 4)
			ck_assert_msg(a[i].rc != AQ_OK, "a write under a fence nobody holds was kept");
		else
			ck_assert_msg(a[i].rc == AQ_OK, "%s: %s", a[i].node, aq_err_str(a[i].rc));
	}
	srv_visit_batch_stats(&s1);
	if (tight) { /* each batch ran one request and gave the rest back, in order */
		ck_assert_msg(s1.batches - s0.batches == BATCH_REQS && s1.requests - s0.requests == BATCH_REQS &&
				      s1.given_back - s0.given_back == BATCH_REQS * (BATCH_REQS - 1) / 2,
			      "%llu batches of %llu requests, %llu given back", (unsigned long long)(s1.batches - s0.batches),
			      (unsigned long long)(s1.requests - s0.requests),
			      (unsigned long long)(s1.given_back - s0.given_back));
		ck_assert_uint_eq(s1.queued, 0);
	} else {
		ck_assert_msg(s1.batches - s0.batches == 1 && s1.requests - s0.requests == BATCH_REQS,
			      "%llu batches of %llu requests", (unsigned long long)(s1.batches - s0.batches),
			      (unsigned long long)(s1.requests - s0.requests));
	}
	ck_assert_int_eq(s1.alone - s0.alone, fenced && !tight ? BATCH_REQS : 0);
	/* applied: exactly what each node acknowledged */
	ck_assert_str_eq(state_of("v1"), "READY");
	ck_assert_str_eq(state_of("v2"), "CREATING"); /* n1's generation 3 */
	ck_assert_str_eq(state_of("v3"), "(gone)");
	ck_assert_str_eq(state_of("v4"), "ERROR");
	ck_assert_str_eq(state_of("c0"), "READY");
	n = get(LOC "/operations/", "op-c0"); /* json_is_true evaluates its argument twice */
	ck_assert(json_is_true(json_object_get(n, "done")));
	json_decref(n);
	ck_assert_str_eq(state_of("c1"), "CREATING");
	ck_assert_str_eq(state_of("c1a"), "READY");
	ck_assert_str_eq(state_of("c2"), "CREATING");
	/* generations: b3 and b5 up by one, their creates pending on it */
	ck_assert_int_eq(a[3].gen, 2);
	ck_assert_int_eq(int_of("nodes/", "b3", "generation"), 2);
	ck_assert_int_eq(int_of("placements/" LOC "/volumes/", "c3", "pendingGeneration"), 2);
	ck_assert_int_eq(a[5].gen, 2);
	ck_assert_int_eq(int_of("nodes/", "b5", "generation"), 2);
	ck_assert_int_eq(int_of("placements/" LOC "/volumes/", "c5", "pendingGeneration"), 2);
	/* b4: refused under the fence, or taken like the others */
	ck_assert_int_eq(int_of("nodes/", "b4", "generation"), fenced ? 1 : 2);
	ck_assert_int_eq(int_of("placements/" LOC "/volumes/", "c4", "pendingGeneration"), fenced ? 0 : 2);
	srv_visit_intent_cleanup(&ri3);
	srv_visit_intent_cleanup(&ri4);
	srv_visit_intent_cleanup(&ri5);
	json_decref(failed);
}

START_TEST(test_batch)
{
	batch_case(false, false);
}
END_TEST

START_TEST(test_batch_fenced)
{
	batch_case(true, false);
}
END_TEST

/* A batch out of time gives the requests it has not run back to the front
 * of the queue: with a budget of 1 ns each batch runs one, the next batch the
 * next, and every request ends exactly as in one batch. */
START_TEST(test_batch_budget)
{
	batch_case(false, true);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("srv_reconcile");
	TCase *tc = tcase_create("srv_reconcile");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_applied);
	tcase_add_test(tc, test_applied_grouped);
	tcase_add_test(tc, test_batch);
	tcase_add_test(tc, test_batch_fenced);
	tcase_add_test(tc, test_batch_budget);
	tcase_add_test(tc, test_intent);
	tcase_add_test(tc, test_generation_race);
	tcase_add_test(tc, test_vol_parent);
	tcase_add_test(tc, test_mount_options);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
