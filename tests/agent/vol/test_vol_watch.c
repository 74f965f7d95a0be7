/* test_vol_watch: the store's change watches (agent/vol/vol_watch.c), what
 * every front end's operations report through them:
 * - create, mkdir, symlink, mknod, link: ADDED (FILE_NAME, DIR_NAME for a
 *   directory); remove, rmdir: REMOVED; a rename in one directory OLD then
 *   NEW, across directories REMOVED there and ADDED here; setattr and
 *   write: MODIFIED; an operation that fails reports nothing;
 * - the mask and the tree flag decide who sees what; names below a tree
 *   watch are "sub/name"; the wake runs once for the first event;
 * - the bounds: VOL_WATCH_QUEUE_MAX events, VOL_WATCH_QUEUE_BYTES of
 *   names (then overflow, reported once), VOL_WATCH_MAX watches (-ENOSPC);
 * - bad arguments: a file (-ENOTDIR), mask 0 (-EINVAL); nothing is added;
 * - the watched directory removed: gone, whatever the mask.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_watch.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

static struct aqt_store ts;
static struct vol_export *e;
static struct vol_obj root;
static const struct vol_cred cred = { 0 };
static int wakes;

static void wake(void *arg)
{
	(void)arg;
	wakes++;
}

static void setup(void)
{
	aqt_store_init(&ts, 1, &(struct aqt_store_spec){ .id_prefix = "w", .fsid = 300, .capacity = 1ull << 30,
							 .clients = "0.0.0.0/0", .key_byte = 3 });
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, ts.n), 0);
	ck_assert_ptr_nonnull(e = vol_export_at(ts.store, 0));
	ck_assert_int_eq(vol_root(e, &root), 0);
	wakes = 0;
}

static void teardown(void)
{
	vol_obj_cleanup(&root);
	vol_export_unref(e);
	aqt_store_cleanup(&ts);
}

static void mkdir_at(struct vol_obj *dir, const char *name, struct vol_obj *out)
{
	ck_assert_int_eq(vol_mkdir(dir, &cred, name, strlen(name), NULL, out), 0);
}

static void create_at(struct vol_obj *dir, const char *name)
{
	struct vol_obj f;

	ck_assert_int_eq(vol_create(dir, &cred, name, strlen(name), true, NULL, NULL, &f), 0);
	vol_obj_cleanup(&f);
}

/* The events of w, as "A:name" lines. */
static void take(struct vol_watch *w, char *out, size_t cap, bool *lost)
{
	struct vol_watch_ev *evs = vol_watch_take(w, lost), *ev;
	size_t n = 0;

	out[0] = '\0';
	for (ev = evs; ev; ev = ev->next)
		n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%d:%s ", (int)ev->action, ev->name);
	vol_watch_ev_free(evs);
}

START_TEST(test_actions)
{
	struct vol_watch *w;
	struct vol_obj a, b, f, s;
	char got[1024];
	bool lost;
	int committed;
	struct vol_sattr sa = { .set_mode = true, .mode = 0600 };

	setup();
	mkdir_at(&root, "a", &a);
	mkdir_at(&root, "b", &b);
	ck_assert_int_eq(vol_watch_add(&a, VOL_WATCH_ALL, false, wake, NULL, &w), 0);
	create_at(&a, "f");
	ck_assert_int_eq(wakes, 1);
	create_at(&a, "g");
	ck_assert_int_eq(wakes, 1); /* once, for the first */
	ck_assert_int_eq(vol_symlink(&a, &cred, "ln", 2, "f", 1, NULL, &s), 0);
	vol_obj_cleanup(&s);
	ck_assert_int_eq(vol_mknod(&a, &cred, "fifo", 4, S_IFIFO, NULL, &s), 0);
	vol_obj_cleanup(&s);
	ck_assert_int_eq(vol_lookup(&a, &cred, "f", 1, &f), 0);
	ck_assert_int_eq(vol_link(&f, &a, "hard", 4, &cred), 0);
	ck_assert_int_eq(vol_setattr(&f, &cred, &sa), 0);
	ck_assert_int_eq(vol_write(&f, &cred, 0, "x", 1, 0, &committed), 0);
	vol_obj_cleanup(&f);
	ck_assert_int_eq(vol_rename(&a, "g", 1, &a, "g2", 2, &cred), 0);
	ck_assert_int_eq(vol_rename(&a, "g2", 2, &b, "g3", 2, &cred), 0);   /* away: REMOVED here */
	ck_assert_int_eq(vol_rename(&b, "g3", 2, &a, "back", 4, &cred), 0); /* back: ADDED here */
	ck_assert_int_eq(vol_remove(&a, &cred, "ln", 2), 0);
	ck_assert_int_eq(vol_remove(&a, &cred, "nothere", 7), -ENOENT);      /* a failure reports nothing */
	take(w, got, sizeof(got), &lost);
	ck_assert(!lost);
	ck_assert_str_eq(got, "1:f 1:g 1:ln 1:fifo 1:hard 3:f 3:f 4:g 5:g2 2:g2 1:back 2:ln ");
	take(w, got, sizeof(got), &lost); /* the queue is empty after a take */
	ck_assert_str_eq(got, "");
	vol_watch_remove(w);
	vol_obj_cleanup(&a);
	vol_obj_cleanup(&b);
	teardown();
}
END_TEST

START_TEST(test_mask_and_tree)
{
	struct vol_watch *names, *dirs, *tree, *flat;
	struct vol_obj d, sub;
	char got[512];
	bool lost;

	setup();
	mkdir_at(&root, "d", &d);
	ck_assert_int_eq(vol_watch_add(&root, VOL_WATCH_FILE_NAME, false, wake, NULL, &names), 0);
	ck_assert_int_eq(vol_watch_add(&root, VOL_WATCH_DIR_NAME, false, wake, NULL, &dirs), 0);
	ck_assert_int_eq(vol_watch_add(&root, VOL_WATCH_FILE_NAME, true, wake, NULL, &tree), 0);
	ck_assert_int_eq(vol_watch_add(&d, VOL_WATCH_FILE_NAME, false, wake, NULL, &flat), 0);
	ck_assert_uint_eq(atomic_load(&e->acct->watchers), 4);
	create_at(&root, "top");
	mkdir_at(&d, "sub", &sub);
	create_at(&sub, "deep");
	create_at(&d, "mid");
	take(names, got, sizeof(got), &lost);
	ck_assert_str_eq(got, "1:top ");
	take(dirs, got, sizeof(got), &lost);
	ck_assert_str_eq(got, ""); /* d/sub is below it, and it is not a tree watch */
	take(tree, got, sizeof(got), &lost);
	ck_assert_str_eq(got, "1:top 1:d/sub/deep 1:d/mid ");
	take(flat, got, sizeof(got), &lost);
	ck_assert_str_eq(got, "1:mid ");
	vol_watch_remove(names);
	vol_watch_remove(dirs);
	vol_watch_remove(tree);
	vol_watch_remove(flat);
	ck_assert_uint_eq(atomic_load(&e->acct->watchers), 0);
	ck_assert_uint_eq(ts.store->nwatches, 0);
	vol_obj_cleanup(&sub);
	vol_obj_cleanup(&d);
	teardown();
}
END_TEST

START_TEST(test_bounds)
{
	struct vol_watch *w, *ws[64];
	char nm[300], got[64];
	bool lost;
	unsigned i;

	setup();
	ck_assert_int_eq(vol_watch_add(&root, VOL_WATCH_FILE_NAME, false, wake, NULL, &w), 0);
	for (i = 0; i < VOL_WATCH_QUEUE_MAX; i++) {
		snprintf(nm, sizeof(nm), "n%u", i);
		create_at(&root, nm);
	}
	take(w, got, sizeof(got), &lost); /* exactly the bound: all kept */
	ck_assert(!lost);
	for (i = 0; i <= VOL_WATCH_QUEUE_MAX; i++) {
		snprintf(nm, sizeof(nm), "m%u", i);
		create_at(&root, nm);
	}
	ck_assert_ptr_null(vol_watch_take(w, &lost)); /* one past it: all dropped, reported once */
	ck_assert(lost);
	ck_assert_ptr_null(vol_watch_take(w, &lost));
	ck_assert(!lost);
	vol_watch_remove(w);
	/* bytes: a tree watch sees "p/q/name" (750 bytes here), so
	 * VOL_WATCH_QUEUE_BYTES is passed long before the count */
	{
		struct vol_obj p, q;

		ck_assert_int_eq(vol_watch_add(&root, VOL_WATCH_FILE_NAME, true, wake, NULL, &w), 0);
		memset(nm, 'p', 248);
		nm[248] = '\0';
		mkdir_at(&root, nm, &p);
		memset(nm, 'q', 248);
		mkdir_at(&p, nm, &q);
		memset(nm, 'z', 250);
		nm[250] = '\0';
		for (i = 0; i < VOL_WATCH_QUEUE_BYTES / 750 + 1; i++) {
			nm[0] = (char)('a' + i % 26);
			nm[1] = (char)('a' + i / 26 % 26);
			create_at(&q, nm);
		}
		ck_assert_uint_lt(VOL_WATCH_QUEUE_BYTES / 750 + 1, VOL_WATCH_QUEUE_MAX);
		ck_assert_ptr_null(vol_watch_take(w, &lost));
		ck_assert(lost);
		vol_watch_remove(w);
		vol_obj_cleanup(&q);
		vol_obj_cleanup(&p);
	}
	/* the count of watches per store */
	ts.store->nwatches = VOL_WATCH_MAX - 2;
	ck_assert_int_eq(vol_watch_add(&root, VOL_WATCH_ALL, false, wake, NULL, &ws[0]), 0);
	ck_assert_int_eq(vol_watch_add(&root, VOL_WATCH_ALL, false, wake, NULL, &ws[1]), 0);
	ck_assert_int_eq(vol_watch_add(&root, VOL_WATCH_ALL, false, wake, NULL, &ws[2]), -ENOSPC);
	vol_watch_remove(ws[0]);
	vol_watch_remove(ws[1]);
	ck_assert_uint_eq(ts.store->nwatches, VOL_WATCH_MAX - 2);
	ts.store->nwatches = 0;
	ck_assert_uint_eq(atomic_load(&e->acct->watchers), 0);
	teardown();
}
END_TEST

START_TEST(test_refused_and_gone)
{
	struct vol_watch *w = NULL, *parent;
	struct vol_obj d, f;
	char got[64];
	bool lost;

	setup();
	create_at(&root, "file");
	ck_assert_int_eq(vol_lookup(&root, &cred, "file", 4, &f), 0);
	ck_assert_int_eq(vol_watch_add(&f, VOL_WATCH_ALL, false, wake, NULL, &w), -ENOTDIR);
	ck_assert_int_eq(vol_watch_add(&root, 0x200 /* STREAM_NAME only */, false, wake, NULL, &w), -EINVAL);
	ck_assert_ptr_null(w);
	ck_assert_uint_eq(ts.store->nwatches, 0);
	vol_obj_cleanup(&f);
	mkdir_at(&root, "d", &d);
	ck_assert_int_eq(vol_watch_add(&d, VOL_WATCH_LAST_WRITE, false, wake, NULL, &w), 0);
	ck_assert_int_eq(vol_watch_add(&root, VOL_WATCH_DIR_NAME, false, wake, NULL, &parent), 0);
	ck_assert(!vol_watch_gone(w));
	ck_assert_int_eq(vol_rmdir(&root, &cred, "d", 1), 0);
	ck_assert(vol_watch_gone(w));       /* whatever its mask */
	ck_assert(!vol_watch_gone(parent)); /* the parent just sees a removal */
	take(parent, got, sizeof(got), &lost);
	ck_assert_str_eq(got, "2:d ");
	vol_watch_remove(w);
	vol_watch_remove(parent);
	vol_obj_cleanup(&d);
	teardown();
}
END_TEST

static Suite *vol_watch_suite(void)
{
	Suite *s = suite_create("vol_watch");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120); /* directory fsyncs on a loaded machine */
	tcase_add_test(tc, test_actions);
	tcase_add_test(tc, test_mask_and_tree);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_refused_and_gone);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(vol_watch_suite());
}
