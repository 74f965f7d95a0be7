/* tls_listen: what aquiferd's and the agent's HTTP listeners (libmicrohttpd)
 * share against unauthenticated exhaustion: descriptors enough for their
 * connection limits, the per-IP limit and the short timeout of connections
 * that have not shown credentials, and a log that a flood cannot turn into
 * a disk filler. See tls.h. */
#include "tls/tls.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "util/ut_log.h"

/* Beyond this many descriptors nothing here needs more (and a huge soft
 * limit makes some libraries' close-all loops slow). */
#define TLS_LISTEN_NOFILE_MAX (1ul << 20)
/* libmicrohttpd says the same thing once per refused connection under a
 * flood: each message (by format) at most once a minute, then a count. */
#define TLS_LISTEN_LOG_SECS 60
#define TLS_LISTEN_LOG_KINDS 16

unsigned long tls_listen_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1024;
	if (rl.rlim_cur < rl.rlim_max && rl.rlim_cur < TLS_LISTEN_NOFILE_MAX) {
		struct rlimit want = rl;

		want.rlim_cur = rl.rlim_max < TLS_LISTEN_NOFILE_MAX ? rl.rlim_max : TLS_LISTEN_NOFILE_MAX;
		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			rl = want;
	}
	return rl.rlim_cur == RLIM_INFINITY ? TLS_LISTEN_NOFILE_MAX : (unsigned long)rl.rlim_cur;
}

/* The log sink's state: one slot per message kind. */
static struct {
	pthread_mutex_t mu;
	struct {
		const char *fm;
		time_t since;
		unsigned long quiet;   /* said again since, not printed */
	} kind[TLS_LISTEN_LOG_KINDS];
} tls_log = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void tls_listen_log(void *cls, const char *fm, va_list ap)
{
	const char *prog = cls;
	time_t now = time(NULL);
	unsigned long quiet = 0;
	bool say = true;
	size_t i;

	pthread_mutex_lock(&tls_log.mu);
	for (i = 0; i < TLS_LISTEN_LOG_KINDS && tls_log.kind[i].fm && tls_log.kind[i].fm != fm; i++)
		;
	if (i == TLS_LISTEN_LOG_KINDS) {
		i = 0; /* more kinds than slots: they share the first */
	} else if (!tls_log.kind[i].fm) {
		tls_log.kind[i].fm = fm;
		tls_log.kind[i].since = now;
		goto out;
	}
	if (now - tls_log.kind[i].since < TLS_LISTEN_LOG_SECS) {
		tls_log.kind[i].quiet++;
		say = false;
	} else {
		quiet = tls_log.kind[i].quiet;
		tls_log.kind[i].quiet = 0;
		tls_log.kind[i].since = now;
	}
out:
	pthread_mutex_unlock(&tls_log.mu);
	if (!say)
		return;
	if (quiet)
		UT_WARN("tls_listen", NULL, "%s: (%lu more messages of the next kind in the last %d s)", prog, quiet,
			TLS_LISTEN_LOG_SECS);
	if (ut_log_enabled(UT_LOG_WARN)) {
		char text[UT_LOG_LINE_MAX];
		size_t n;

		vsnprintf(text, sizeof(text), fm, ap);
		n = strlen(text);
		while (n > 0 && text[n - 1] == '\n') /* libmicrohttpd ends its messages with one */
			text[--n] = '\0';
		ut_log_write(UT_LOG_WARN, "tls_listen", NULL, "%s: %s", prog, text);
	}
}

void tls_listen_mhd_options(const struct tls_listen_limits *l, bool tls, unsigned reserve, const char *prog,
			    struct MHD_OptionItem *opts)
{
	unsigned long nofile = tls_listen_nofile();
	unsigned max = l->max_conns;
	size_t n = 0;

	/* every connection is one descriptor; the rest of the process keeps
	 * reserve (databases, pushes, logs) */
	if (nofile < (unsigned long)reserve + 16)
		max = 16;
	else if ((unsigned long)max > nofile - reserve)
		max = (unsigned)(nofile - reserve);
	if (max < l->max_conns)
		UT_WARN("tls_listen", NULL, "%s: RLIMIT_NOFILE is %lu: at most %u HTTP connections (not %u)", prog, nofile,
			max, l->max_conns);
	/* the logger first: libmicrohttpd logs with the option that follows */
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)tls_listen_log,
					     (void *)(uintptr_t)prog };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, (intptr_t)max, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)l->per_ip, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)l->header_s, NULL };
	if (tls)
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
						     (void *)(uintptr_t)TLS_MHD_PRIORITIES };
	opts[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
}

bool tls_listen_body(struct MHD_Connection *conn, unsigned long long *len)
{
	const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	*len = cl ? strtoull(cl, NULL, 10) : 0;
	return *len > 0 || MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

void tls_listen_trusted(struct MHD_Connection *conn, const struct tls_listen_limits *l)
{
	MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)l->idle_s);
}
