/* nfs_live: helpers for tests that run against a live nfs_serve: make a
 * scratch tree, start the server (fork/exec, its PID only), wait for its port,
 * stop it. */
#ifndef AQ_TESTS_NFS_LIVE_H
#define AQ_TESTS_NFS_LIVE_H

#include <stdio.h>
#include <sys/types.h>

struct nfs_live {
	char dir[256];     /* scratch root, removed by nfs_live_stop */
	pid_t pid;
	int port;
};

/* Start tests/agent/nfs/nfs_serve (found next to argv0) with the given NULL
 * terminated list of "--export" specs; "%D" in a spec is replaced by dir.
 * An entry starting with "--" is one of nfs_serve's flags instead, passed
 * with the entry after it as its value (e.g. "--nfs4-lease-s", "4"). */
int nfs_live_start(struct nfs_live *l, const char *argv0, const char *const *exports);
void nfs_live_stop(struct nfs_live *l);

/* The live tests' check, which does not stop the test: when c is false,
 * count it in the int lvalue failures and print the line, the condition and
 * the printf-style message after it to stderr. A test names it CHECK:
 * #define CHECK(c, ...) NFS_LIVE_CHECK(failures, c, __VA_ARGS__) */
#define NFS_LIVE_CHECK(failures, c, ...)                                \
	do {                                                            \
		if (!(c)) {                                             \
			(failures)++;                                   \
			fprintf(stderr, "FAIL line %d: %s: ", __LINE__, #c); \
			fprintf(stderr, __VA_ARGS__);                   \
			fputc('\n', stderr);                            \
		}                                                       \
	} while (0)

#endif
