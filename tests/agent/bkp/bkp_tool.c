/* bkp_tool: agent/bkp/ from the shell, for e2e tests and bench/backup.
 *
 *   bkp_tool backup  STORE KEY ID SRC [PREV] [CHUNK]   one line of counts
 *   bkp_tool restore STORE KEY ID DST [PATH...]        whole, or paths into DST
 *   bkp_tool delete  STORE KEY ID
 *   bkp_tool gc      STORE KEY
 *   bkp_tool list    STORE KEY
 *   bkp_tool info    STORE KEY ID
 *   bkp_tool mfhex   STORE KEY ID       the decrypted manifest in hex (fuzz seed)
 *   bkp_tool gen DIR CHUNK              the test tree of test_bkp
 *   bkp_tool ls DIR                     its listing (type, mode, owner, times, sha256)
 *   bkp_tool rawput STORE N [KIB] / rawget STORE N [KIB]   the store's own PUT/GET
 *                                   rate: N objects of KIB KiB (default 1024)
 *
 * STORE is a folder, or s3:http://HOST:PORT/BUCKET with AQ_BKP_S3_ACCESS_KEY
 * and AQ_BKP_S3_SECRET_KEY. KEY is 64 hex digits. AQ_BKP_PARALLEL sets the
 * puts (backup) or files (restore) in flight. Exit 0 on success, 1 with
 * the engine's message on stderr otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/bkp/bkp.h"
#include "agent/bkp/bkp_internal.h"
#include "tests/agent/bkp/bkp_tree.h"
#include "util/ut_clock.h"
#include "util/ut_hex.h"

static int store_cfg(const char *s, struct obj_cfg *c)
{
	memset(c, 0, sizeof *c);
	if (strncmp(s, "s3:", 3) == 0) {
		const char *b = strrchr(s + 3, '/');
		if (!b || b - (s + 3) >= (ptrdiff_t)sizeof c->endpoint)
			return -EINVAL;
		c->kind = OBJ_S3;
		snprintf(c->endpoint, sizeof c->endpoint, "%.*s", (int)(b - (s + 3)), s + 3);
		snprintf(c->bucket, sizeof c->bucket, "%s", b + 1);
		snprintf(c->access_key, sizeof c->access_key, "%s", getenv("AQ_BKP_S3_ACCESS_KEY") ? getenv("AQ_BKP_S3_ACCESS_KEY") : "");
		snprintf(c->secret_key, sizeof c->secret_key, "%s", getenv("AQ_BKP_S3_SECRET_KEY") ? getenv("AQ_BKP_S3_SECRET_KEY") : "");
		c->timeout_ms = 10000;
		return 0;
	}
	c->kind = OBJ_DIRECTORY;
	snprintf(c->path, sizeof c->path, "%s", s);
	return 0;
}

static void stats_line(const char *what, const struct bkp_stats *st, double secs)
{
	printf("%s files=%" PRIu64 " dirs=%" PRIu64 " symlinks=%" PRIu64 " hardlinks=%" PRIu64 " logical=%" PRIu64
	       " read=%" PRIu64 " uploaded=%" PRIu64 " unchanged=%" PRIu64 " chunks=%" PRIu64 " new=%" PRIu64
	       " zero=%" PRIu64 " manifest=%" PRIu64 " secs=%.3f\n",
	       what, st->files, st->dirs, st->symlinks, st->hardlinks, st->logical_bytes, st->bytes_read,
	       st->bytes_uploaded, st->files_unchanged, st->chunks, st->chunks_new, st->chunks_zero, st->manifest_bytes,
	       secs);
}

static int list_cb(void *arg, const char *id)
{
	(void)arg;
	printf("%s\n", id);
	return 0;
}

/* The store's own rate: n objects of kib KiB put, then got. */
static int raw(const char *store, int n, size_t kib, bool get)
{
	struct obj_cfg c;
	struct obj_store *s = NULL;
	size_t sz = kib << 10;
	uint8_t *buf = malloc(sz);
	uint64_t t0;
	int rc;

	bt_fill(buf, sz, 9);
	if ((rc = store_cfg(store, &c)) != 0 || (rc = obj_open(&c, &s)) != 0 || (rc = obj_ensure_bucket(s)) != 0)
		goto out;
	t0 = ut_clock_mono_ns();
	for (int i = 0; i < n && rc == 0; i++) {
		char key[64];
		size_t got = 0;

		snprintf(key, sizeof key, "raw/%03d/%06d", i % 256, i);
		rc = get ? obj_get(s, key, 0, buf, sz, &got) : obj_put(s, key, buf, sz);
	}
	printf("raw%s n=%d kib=%zu secs=%.3f\n", get ? "get" : "put", n, kib, (double)(ut_clock_mono_ns() - t0) / 1e9);
out:
	obj_close(s);
	free(buf);
	return rc;
}

int main(int argc, char **argv)
{
	struct obj_cfg c;
	struct bkp_vault *v = NULL;
	uint8_t key[BKP_KEY_LEN];
	aq_msg m = { .text = "" };
	const char *cmd = argc > 1 ? argv[1] : "";
	uint64_t t0 = ut_clock_mono_ns();
	int rc = -EINVAL;

	if (strcmp(cmd, "gen") == 0 && argc == 4) {
		printf("%" PRIu64 "\n", bt_gen(argv[2], (uint32_t)strtoul(argv[3], NULL, 10)));
		return 0;
	}
	if (strcmp(cmd, "ls") == 0 && argc == 3) {
		char *l = bt_list(argv[2]);
		if (!l)
			return 1;
		fputs(l, stdout);
		free(l);
		return 0;
	}
	if ((strcmp(cmd, "rawput") == 0 || strcmp(cmd, "rawget") == 0) && (argc == 4 || argc == 5))
		return raw(argv[2], (int)strtol(argv[3], NULL, 10), argc == 5 ? strtoul(argv[4], NULL, 10) : 1024, cmd[3] == 'g') == 0 ? 0 : 1;
	if (argc < 4 || strlen(argv[3]) != 2 * BKP_KEY_LEN ||
	    ut_hex_decode(argv[3], 2 * BKP_KEY_LEN, key, sizeof key, NULL) != 0 || store_cfg(argv[2], &c) != 0) {
		fprintf(stderr, "usage: see the head of tests/agent/bkp/bkp_tool.c\n");
		return 2;
	}
	if ((rc = bkp_vault_open(&c, key, &v, &m)) != 0)
		goto out;
	if (strcmp(cmd, "backup") == 0 && argc >= 6) {
		struct bkp_opts o = { .prev_id = argc > 6 && argv[6][0] ? argv[6] : NULL, .source = argv[5] };
		struct bkp_stats st;

		o.chunk_size = argc > 7 ? (uint32_t)strtoul(argv[7], NULL, 10) : 0;
		o.parallel = getenv("AQ_BKP_PARALLEL") ? (unsigned)strtoul(getenv("AQ_BKP_PARALLEL"), NULL, 10) : 0;
		if ((rc = bkp_backup(v, argv[4], argv[5], &o, &st, &m)) == 0)
			stats_line("backup", &st, (double)(ut_clock_mono_ns() - t0) / 1e9);
	} else if (strcmp(cmd, "restore") == 0 && argc >= 6) {
		struct bkp_stats st;
		struct bkp_restore_opts ro = { .parallel = getenv("AQ_BKP_PARALLEL") ?
				(unsigned)strtoul(getenv("AQ_BKP_PARALLEL"), NULL, 10) : 0 };

		rc = bkp_restore(v, argv[4], argv[5], argc > 6 ? (const char *const *)argv + 6 : NULL,
				 argc > 6 ? (size_t)(argc - 6) : 0, &ro, &st, &m);
		if (rc == 0)
			stats_line("restore", &st, (double)(ut_clock_mono_ns() - t0) / 1e9);
	} else if (strcmp(cmd, "delete") == 0 && argc == 5) {
		rc = bkp_delete(v, argv[4], &m);
	} else if (strcmp(cmd, "gc") == 0 && argc == 4) {
		struct bkp_gc_stats g;

		if ((rc = bkp_gc(v, 0, &g, &m)) == 0)
			printf("gc manifests=%" PRIu64 " kept=%" PRIu64 " swept=%" PRIu64 " bytes_kept=%" PRIu64
			       " bytes_swept=%" PRIu64 "\n",
			       g.manifests, g.chunks_kept, g.chunks_swept, g.bytes_kept, g.bytes_swept);
	} else if (strcmp(cmd, "list") == 0 && argc == 4) {
		rc = bkp_list(v, list_cb, NULL, &m);
	} else if (strcmp(cmd, "info") == 0 && argc == 5) {
		struct bkp_info info;

		if ((rc = bkp_info(v, argv[4], &info, &m)) == 0)
			stats_line("info", &info.stats, 0);
	} else if (strcmp(cmd, "mfhex") == 0 && argc == 5) {
		struct bkp_mf mf;
		uint8_t *b = NULL;
		size_t len = 0;

		bkp_mf_init(&mf);
		if ((rc = bkp_mf_load(v, argv[4], &mf, &m)) == 0 && (rc = bkp_mf_encode(&mf, &b, &len)) == 0) {
			for (size_t i = 0; i < len; i++)
				printf("%02x", b[i]);
			printf("\n");
		}
		free(b);
		bkp_mf_cleanup(&mf);
	} else {
		fprintf(stderr, "usage: see the head of tests/agent/bkp/bkp_tool.c\n");
		rc = -EINVAL;
	}
out:
	if (rc != 0)
		fprintf(stderr, "bkp_tool %s: %s (%d)\n", cmd, m.text[0] ? m.text : strerror(-rc), rc);
	bkp_vault_close(v);
	return rc == 0 ? 0 : 1;
}
