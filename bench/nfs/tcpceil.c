/* tcpceil: this machine's loopback TCP ceiling, the bound on any NFS figure
 * bench/nfs measures: one stream of MiB mebibytes (default 4096) in 1 MiB
 * writes from a child process to its parent over 127.0.0.1, timed from the
 * first byte received to the last. Prints "tcp MiB/s".
 *
 *   tcpceil [MiB]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1u << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	long mib = argc > 1 ? strtol(argv[1], NULL, 10) : 4096;
	static char buf[CHUNK];
	double t0 = 0;
	long long got = 0;
	int ls, c;
	ssize_t k;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&a, &alen)) {
		perror("tcpceil: listen");
		return 1;
	}
	if (fork() == 0) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		long i;

		if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)))
			_exit(1);
		for (i = 0; i < mib; i++) {
			size_t off = 0;

			while (off < CHUNK) {
				k = write(s, buf + off, CHUNK - off);
				if (k <= 0)
					_exit(1);
				off += (size_t)k;
			}
		}
		_exit(0);
	}
	c = accept(ls, NULL, NULL);
	if (c < 0) {
		perror("tcpceil: accept");
		return 1;
	}
	while ((k = read(c, buf, CHUNK)) > 0) {
		if (!got)
			t0 = now();
		got += k;
	}
	wait(NULL);
	if (got != (long long)mib * CHUNK) {
		fprintf(stderr, "tcpceil: %lld of %lld bytes\n", got, (long long)mib * CHUNK);
		return 1;
	}
	printf("tcp %.1f MiB/s\n", (double)got / 1048576.0 / (now() - t0));
	return 0;
}
