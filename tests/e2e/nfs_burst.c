/* nfs_burst: small files over NFSv3 (libnfs) as fast as one connection
 * makes them, for tests/e2e/test_kill9_nfs.sh and bench/nfs/mail.sh
 * (issue 25). Modes:
 *
 *   nfs_burst make URL DIR MAX   create DIR (it may exist), then for i = 0..MAX-1
 *                                create DIR/f<i>, write its bytes (UNSTABLE),
 *                                COMMIT (nfs_fsync) and close; print "f<i>"
 *                                on stdout, flushed, only once the COMMIT was
 *                                answered OK. Stops at the first error (the
 *                                server went away) or at MAX; exit 0.
 *   nfs_burst mail URL DIR MAX   the same, each file made in DIR/tmp and
 *                                renamed into DIR/new once committed (maildir
 *                                delivery); "f<i>" once the RENAME was answered.
 *   nfs_burst attrs URL DIR MAX  the same as make, then after the close what
 *                                cp -p and tar extraction send: SETATTR of
 *                                the times, then of the mode (0640);
 *                                "f<i>" once the last SETATTR was answered.
 *   nfs_burst check URL DIR      read names from stdin and check that each
 *                                file exists with exactly its bytes; prints
 *                                one line per bad file, "checked N bad M",
 *                                exit 1 when any is bad.
 *
 * File f<i> holds burst_size(i) bytes (1 to 12,001: one page, a few, one
 * byte), byte k = (i * 131 + k * 7) & 0xff, so a file with another file's
 * bytes, a short file or a hole all count as bad. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <nfsc/libnfs.h>

#define BURST_MAX_SIZE 12001u

static size_t burst_size(unsigned long i)
{
	static const size_t sizes[] = {4096, 1, 12001, 4097, 100};

	return sizes[i % (sizeof(sizes) / sizeof(sizes[0]))];
}

static void burst_fill(uint8_t *b, unsigned long i, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		b[k] = (uint8_t)((i * 131 + k * 7) & 0xff);
}

/* After file path was made: SETATTR of the times (a fixed past time, as an
 * archive's), then of the mode. */
static int burst_attrs(struct nfs_context *nfs, const char *path)
{
	struct timeval tv[2] = {{1700000000, 0}, {1700000000, 0}};

	if (nfs_utimes(nfs, path, tv) != 0)
		return -1;
	return nfs_chmod(nfs, path, 0640);
}

static int burst_make(struct nfs_context *nfs, const char *dir, unsigned long max, bool attrs)
{
	static uint8_t buf[BURST_MAX_SIZE];
	char path[512];
	unsigned long i;

	nfs_mkdir(nfs, dir); /* may exist from an earlier run */
	for (i = 0; i < max; i++) {
		struct nfsfh *fh = NULL;
		size_t n = burst_size(i);

		snprintf(path, sizeof(path), "%s/f%lu", dir, i);
		burst_fill(buf, i, n);
		if (nfs_creat(nfs, path, 0644, &fh) != 0)
			break;
		if (nfs_write(nfs, fh, n, buf) != (int)n || nfs_fsync(nfs, fh) != 0) {
			nfs_close(nfs, fh);
			break;
		}
		nfs_close(nfs, fh);
		if (attrs && burst_attrs(nfs, path) != 0)
			break;
		printf("f%lu\n", i);
		fflush(stdout);
	}
	fprintf(stderr, "nfs_burst: %lu files acknowledged (%s)\n", i, nfs_get_error(nfs));
	return 0;
}

/* mail mode (bench/nfs/REPORT.md, fifth pass): each file is made in
 * DIR/tmp and, once committed, renamed into DIR/new, as maildir delivery
 * does; prints "f<i>" once the RENAME was answered. */
static int burst_mail(struct nfs_context *nfs, const char *dir, unsigned long max)
{
	static uint8_t buf[BURST_MAX_SIZE];
	char tmp[512], to[512];
	unsigned long i;

	snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
	snprintf(to, sizeof(to), "%s/new", dir);
	nfs_mkdir(nfs, dir);
	nfs_mkdir(nfs, tmp);
	nfs_mkdir(nfs, to);
	for (i = 0; i < max; i++) {
		struct nfsfh *fh = NULL;
		size_t n = burst_size(i);

		snprintf(tmp, sizeof(tmp), "%s/tmp/f%lu", dir, i);
		snprintf(to, sizeof(to), "%s/new/f%lu", dir, i);
		burst_fill(buf, i, n);
		if (nfs_creat(nfs, tmp, 0644, &fh) != 0)
			break;
		if (nfs_write(nfs, fh, n, buf) != (int)n || nfs_fsync(nfs, fh) != 0) {
			nfs_close(nfs, fh);
			break;
		}
		nfs_close(nfs, fh);
		if (nfs_rename(nfs, tmp, to) != 0)
			break;
		printf("f%lu\n", i);
		fflush(stdout);
	}
	fprintf(stderr, "nfs_burst: %lu files delivered (%s)\n", i, nfs_get_error(nfs));
	return 0;
}

static int burst_check(struct nfs_context *nfs, const char *dir)
{
	static uint8_t want[BURST_MAX_SIZE], got[BURST_MAX_SIZE + 1];
	char line[64], path[512];
	unsigned long checked = 0, bad = 0;

	while (fgets(line, sizeof(line), stdin)) {
		char *end = NULL;
		unsigned long i;
		struct nfsfh *fh = NULL;
		size_t n;
		int r = -1;

		if (line[0] != 'f')
			continue;
		i = strtoul(line + 1, &end, 10);
		if (end == line + 1)
			continue;
		n = burst_size(i);
		burst_fill(want, i, n);
		snprintf(path, sizeof(path), "%s/f%lu", dir, i);
		checked++;
		if (nfs_open(nfs, path, O_RDONLY, &fh) == 0) {
			r = nfs_pread(nfs, fh, 0, BURST_MAX_SIZE + 1, got);
			nfs_close(nfs, fh);
		}
		if (r != (int)n || memcmp(got, want, n) != 0) {
			printf("bad f%lu: read %d of %zu bytes%s\n", i, r, n, r == (int)n ? " (other bytes)" : "");
			bad++;
		}
	}
	printf("checked %lu bad %lu\n", checked, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct nfs_context *nfs;
	struct nfs_url *url;
	int rc;

	if (argc < 4 ||
	    (strcmp(argv[1], "make") && strcmp(argv[1], "mail") && strcmp(argv[1], "attrs") && strcmp(argv[1], "check")) ||
	    (strcmp(argv[1], "check") && argc < 5)) {
		fprintf(stderr, "usage: nfs_burst make|mail|attrs URL DIR MAX | nfs_burst check URL DIR <names\n");
		return 2;
	}
	if (!(nfs = nfs_init_context()))
		return 2;
	/* a server killed mid-call is an error here, not a reconnect that
	 * waits for it to come back: the burst ends where the server died */
	nfs_set_autoreconnect(nfs, 0);
	nfs_set_timeout(nfs, 10000);
	if (!(url = nfs_parse_url_dir(nfs, argv[2])) || nfs_mount(nfs, url->server, url->path) != 0) {
		fprintf(stderr, "nfs_burst: mount %s: %s\n", argv[2], nfs_get_error(nfs));
		if (url)
			nfs_destroy_url(url);
		nfs_destroy_context(nfs);
		return 2;
	}
	if (!strcmp(argv[1], "make") || !strcmp(argv[1], "attrs"))
		rc = burst_make(nfs, argv[3], strtoul(argv[4], NULL, 10), !strcmp(argv[1], "attrs"));
	else if (!strcmp(argv[1], "mail"))
		rc = burst_mail(nfs, argv[3], strtoul(argv[4], NULL, 10));
	else
		rc = burst_check(nfs, argv[3]);
	nfs_destroy_url(url);
	nfs_destroy_context(nfs);
	return rc;
}
