/* nfs_live: start and stop nfs_serve for live tests; see nfs_live.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tests/agent/nfs/nfs_live.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void expand(char *out, size_t cap, const char *spec, const char *dir)
{
	const char *d = strstr(spec, "%D");

	if (d)
		snprintf(out, cap, "%.*s%s%s", (int)(d - spec), spec, dir, d + 2);
	else
		snprintf(out, cap, "%s", spec);
}

int nfs_live_start(struct nfs_live *l, const char *argv0, const char *const *exports)
{
	char exe[512], portfile[300], specs[16][1024];
	const char *args[64];
	const char *slash = strrchr(argv0, '/');
	size_t n = 0, i;
	int tries;

	memset(l, 0, sizeof(*l));
	snprintf(l->dir, sizeof(l->dir), "/tmp/aqnfs-test-XXXXXX");
	if (!mkdtemp(l->dir))
		return -errno;
	snprintf(exe, sizeof(exe), "%.*snfs_serve", slash ? (int)(slash - argv0 + 1) : 0, argv0);
	snprintf(portfile, sizeof(portfile), "%s/port", l->dir);
	args[n++] = exe;
	args[n++] = "--listen";
	args[n++] = "127.0.0.1:0";
	args[n++] = "--key";
	args[n++] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
	args[n++] = "--port-file";
	args[n++] = portfile;
	for (i = 0; exports[i] && i < 16; i++) {
		char d[1024], *eq, *comma;

		if (!strncmp(exports[i], "--", 2)) { /* a flag of nfs_serve, with its value next */
			args[n++] = exports[i];
			if (exports[i + 1])
				args[n++] = exports[++i];
			continue;
		}
		expand(specs[i], sizeof(specs[i]), exports[i], l->dir);
		snprintf(d, sizeof(d), "%s", specs[i]);
		if ((eq = strchr(d, '=')) != NULL) {
			if ((comma = strchr(eq, ',')) != NULL)
				*comma = '\0';
			mkdir(eq + 1, 0777);
			chmod(eq + 1, 0777);
		}
		args[n++] = "--export";
		args[n++] = specs[i];
	}
	args[n] = NULL;
	l->pid = fork();
	if (l->pid < 0)
		return -errno;
	if (l->pid == 0) {
		/* Never outlive the test, even if it crashes. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		execv(exe, (char *const *)(uintptr_t)args);
		_exit(127);
	}
	for (tries = 0; tries < 200; tries++) {
		FILE *f = fopen(portfile, "r");
		struct timespec ts = {0, 20 * 1000 * 1000};

		if (f) {
			int ok = fscanf(f, "%d", &l->port) == 1;

			fclose(f);
			if (ok && l->port > 0)
				return 0;
		}
		if (waitpid(l->pid, NULL, WNOHANG) == l->pid) {
			l->pid = 0;
			return -ECHILD;
		}
		nanosleep(&ts, NULL);
	}
	return -ETIMEDOUT;
}

void nfs_live_stop(struct nfs_live *l)
{
	char cmd[400];

	if (l->pid > 0) {
		kill(l->pid, SIGTERM);
		waitpid(l->pid, NULL, 0);
		l->pid = 0;
	}
	if (l->dir[0] && !getenv("AQ_KEEP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", l->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", l->dir);
	}
}
