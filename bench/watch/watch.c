/* bench/watch: what the store's change hook (agent/vol/vol_watch.h) costs
 * a volume's operations: N creates + removes, and N 4 KiB writes, on a
 * volume over a temporary folder, (a) with no watch on the volume, (b)
 * with a watch whose mask wants none of it (the path is read and matched,
 * nothing queued), (c) with a watch that wants everything on the root
 * (queued, then dropped as the queue overflows, as a client that never
 * reads would). Prints ns per operation; figures go to bench/watch/REPORT.md.
 * Usage: aq-bench-watch [N] (default 20000).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/vol/vol.h"
#include "agent/vol/vol_watch.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void nop_wake(void *arg)
{
	(void)arg;
}

static int run(struct vol_export *e, const char *label, unsigned n)
{
	static const struct vol_cred root = { 0 };
	struct vol_obj dir, f;
	char nm[32], buf[4096] = { 0 };
	uint64_t t0, t1, t2;
	int committed, rc;

	if ((rc = vol_root(e, &dir)) != 0)
		return rc;
	t0 = now_ns();
	for (unsigned i = 0; i < n; i++) {
		snprintf(nm, sizeof(nm), "f%u", i);
		if ((rc = vol_create(&dir, &root, nm, strlen(nm), true, NULL, NULL, &f)) != 0)
			return rc;
		vol_obj_cleanup(&f);
		if ((rc = vol_remove(&dir, &root, nm, strlen(nm))) != 0)
			return rc;
	}
	t1 = now_ns();
	if ((rc = vol_create(&dir, &root, "data", 4, false, NULL, NULL, &f)) != 0)
		return rc;
	for (unsigned i = 0; i < n; i++)
		if ((rc = vol_write(&f, &root, (uint64_t)(i % 256) * sizeof(buf), buf, sizeof(buf), 0, &committed)) != 0)
			return rc;
	t2 = now_ns();
	printf("%-34s create+remove %8.0f ns/op   write 4 KiB %6.0f ns/op\n", label, (double)(t1 - t0) / n,
	       (double)(t2 - t1) / n);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&dir);
	return 0;
}

int main(int argc, char **argv)
{
	static const uint8_t key[VOL_KEY_LEN] = { 9 };
	static struct vol_export_cfg cfg;
	char tmpl[] = "/tmp/aq-bench-watch.XXXXXX", cmd[128];
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20000;
	struct vol_store *s = NULL;
	struct vol_export *e = NULL;
	struct vol_watch *w = NULL;
	struct vol_obj dir = { .fd = -1 }, sub = { .fd = -1 };
	int rc = 1;

	if (!n || !mkdtemp(tmpl) || vol_store_new(key, &s) != 0)
		return 1;
	snprintf(cfg.id, sizeof(cfg.id), "bench");
	cfg.fsid = 7;
	snprintf(cfg.path, sizeof(cfg.path), "/bench");
	snprintf(cfg.root, sizeof(cfg.root), "%s", tmpl);
	cfg.capacity = 1ull << 40;
	cfg.nrules = 1;
	snprintf(cfg.rules[0].clients, sizeof(cfg.rules[0].clients), "0.0.0.0/0");
	cfg.rules[0].access = VOL_ACCESS_RW;
	if (vol_store_set(s, &cfg, 1) != 0 || !(e = vol_export_at(s, 0)) || vol_root(e, &dir) != 0)
		goto out;
	if (vol_mkdir(&dir, &(struct vol_cred){ 0 }, "elsewhere", 9, NULL, &sub) != 0)
		goto out;
	if (run(e, "(a) no watch", n) != 0)
		goto out;
	if (vol_watch_add(&sub, VOL_WATCH_SECURITY, false, nop_wake, NULL, &w) != 0 || run(e, "(b) a watch wanting none of it", n) != 0)
		goto out;
	vol_watch_remove(w);
	if (vol_watch_add(&dir, VOL_WATCH_ALL, true, nop_wake, NULL, &w) != 0 || run(e, "(c) a watch wanting all (overflows)", n) != 0)
		goto out;
	rc = 0;
out:
	vol_watch_remove(w);
	vol_obj_cleanup(&sub);
	vol_obj_cleanup(&dir);
	vol_export_unref(e);
	vol_store_free(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
