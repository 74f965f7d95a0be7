/* srv_main: aquiferd's commands.
 *   aquiferd [serve] --listen HOST:PORT --db PATH|postgres://... [--state-dir DIR] [--config FILE]
 *                    [--key-file F] [--workers N] [--read-workers N] [--push-workers N]
 *                    [--tls-cert F --tls-key F] [--insecure-listen]
 *                    [--max-connections N] [--max-connections-per-ip N]
 *                    [--header-timeout-seconds N] [--idle-timeout-seconds N]
 *                    [--log-level error|warn|info|debug]
 *   aquiferd ca init --db PATH
 *   aquiferd ca issue --db PATH --dns NAME --ip ADDR [--out-cert F --out-key F] [--days N]
 *   aquiferd token --db PATH --role admin|editor|viewer|metrics [--project P] [--subject S] [--ttl SEC]
 *   aquiferd token --db PATH --role node --location L [--node N] [--ttl SEC]   (a single-use join token)
 *   aquiferd db migrate --from URL --to URL   (srv_dbmig.h)
 *   aquiferd routes        (the route table, METHOD PATH per line)
 *   aquiferd --version
 * Command-line options override the config file; the config file holds
 * "key = value" lines with the same names (listen, db, key-file, state-dir, workers,
 * tls-cert, tls-key, insecure-listen, public-url, metrics-auth, node-token-ttl,
 * the connection limits, log-level; '_' may stand for '-')
 * and math parameters as "math.<level>.<field>" (see api_math.h). */
#include "server/srv.h"

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_ca.h"
#include "server/srv_cfg.h"
#include "server/srv_dbmig.h"
#include "util/ut_clock.h"
#include "server/srv_http.h"
#include "server/srv_internal.h"
#include "server/srv_lead.h"
#include "server/srv_node.h"
#include "server/srv_reconcile.h"
#include "server/srv_snapsched.h"
#include "server/srv_routes.h"
#include "server/srv_series.h"
#include "server/srv_shelfio.h"
#include "tls/tls.h"
#include "util/ut_log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: aquiferd [serve] --listen HOST:PORT --db PATH [--config FILE] [--key-file FILE] [--workers N]\n"
		"                        [--tls-cert FILE --tls-key FILE] [--insecure-listen] [--public-url URL]\n"
		"                        [--metrics-auth[=true|false]] [--node-token-ttl SECONDS]\n"
		"                        [--max-connections N] [--max-connections-per-ip N]\n"
		"                        [--header-timeout-seconds N] [--idle-timeout-seconds N]\n"
		"                        [--log-level error|warn|info|debug]\n"
		"       aquiferd token --db PATH --role admin|editor|viewer|metrics [--project P]\n"
		"                      [--subject NAME] [--ttl SECONDS] [--key-file FILE]\n"
		"       aquiferd token --db PATH --role node --location LOC [--node NAME] [--ttl SECONDS]\n"
		"       aquiferd ca init --db PATH\n"
		"       aquiferd ca issue --db PATH [--dns NAME]... [--ip ADDR]... [--out-cert FILE --out-key FILE] [--days N]\n"
		"       aquiferd db migrate --from sqlite:PATH --to postgres://...   (stop aquiferd first)\n"
		"       aquiferd routes\n"
		"       aquiferd --version | --help\n"
		"\n"
		"serve      run the control plane (the default command)\n"
		"token      print a signed bearer token on stdout's last line (--role node: a\n"
		"           single-use join token for --location, and only for --node when given;\n"
		"           --role metrics: reads GET /metrics and nothing else)\n"
		"ca init    create the cluster CA (ca.crt, ca.key) in --state-dir\n"
		"ca issue   issue a server certificate from the cluster CA (default server.crt,\n"
		"           server.key in --state-dir; files mode 0600)\n"
		"routes     print the HTTP route table, one 'METHOD PATH' per line\n"
		"\n"
		"  --listen HOST:PORT   address to serve HTTP on (default 127.0.0.1:8080)\n"
		"  --db PATH|URL        SQLite database file (created if missing; also sqlite:PATH) or a\n"
		"                       PostgreSQL database postgres://[USER@]HOST[:PORT]/DB[?...] (no\n"
		"                       password in it: libpq reads PGPASSFILE, ~/.pgpass or PGPASSWORD)\n"
		"  --state-dir DIR      folder of aquiferd.key and the cluster CA (default: the SQLite\n"
		"                       file's folder; required with a PostgreSQL --db)\n"
		"  --config FILE        config file: 'key = value' lines (listen, db, key-file, state-dir, workers,\n"
		"                       math.<level>.<field>, e.g. math.premium.mibps_per_tib = 64)\n"
		"  --key-file FILE      token signing key (default: aquiferd.key in --state-dir)\n"
		"  --workers N          request worker threads (default 4)\n"
		"  --read-workers N     worker threads for GETs only, so reads never queue behind\n"
		"                       writes (default 2; 0: GETs share --workers)\n"
		"  --push-workers N     the reconciler's pushers: nodes built and pushed to at once, so a\n"
		"                       slow or dead node holds no other up (default 8, 1..64)\n"
		"  --node-down-seconds N  a node silent this long is DOWN and its volumes move (default 10)\n"
		"  --tls-cert FILE      serve HTTPS with this PEM certificate (chain) ...\n"
		"  --tls-key FILE       ... and its PEM key; agents then join over TLS with the cluster CA\n"
		"                       (created in --state-dir when missing)\n"
		"  --insecure-listen    allow plain HTTP on a non-loopback --listen (tokens in clear)\n"
		"  --public-url URL     how storage nodes reach aquiferd, used in join tokens' installCommand\n"
		"                       (default: the scheme served and --listen; the host name for 0.0.0.0)\n"
		"  --metrics-auth[=BOOL]  GET /metrics needs a metrics or cluster-admin token (default true;\n"
		"                       false serves it to anyone, with every project's volume names)\n"
		"  --node-token-ttl N   lifetime of a node token in seconds (default 2592000 = 30 days); agents\n"
		"                       get a fresh one with a status report once half of it has passed\n"
		"  --max-connections N  HTTP connections at once (default 4096; fewer if RLIMIT_NOFILE is lower)\n"
		"  --max-connections-per-ip N  HTTP connections from one client address (default 128)\n"
		"  --header-timeout-seconds N  silence that closes a connection before it showed a valid\n"
		"                       token: TLS handshake, request head, idle (default 10)\n"
		"  --idle-timeout-seconds N  keep-alive idle after a request with a valid token (default 120)\n"
		"  --leader-lease-seconds N  several aquiferd on one database: the leader lease lasts N s\n"
		"                       (default 6); only its holder reconciles, tracks node liveness and\n"
		"                       runs the snapshot scheduler\n"
		"  --leader-renew-seconds N  the lease is taken or renewed every N s (default 2)\n"
		"  --reconcile-sweep-seconds N  the reconciler rebuilds the intents of the nodes a change\n"
		"                       marked dirty; every N s (default 60) it rebuilds every node's\n"
		"                       as a safety net\n"
		"  --log-level LEVEL    error, warn, info (default) or debug: what the log on stderr keeps\n"
		"                       (one line per record: time, level, source, req=ID, message)\n"
		"  --dns NAME, --ip ADDR  (ca issue) names of the certificate, each repeatable\n"
		"  --out-cert FILE, --out-key FILE  (ca issue) where to write it\n"
		"  --days N             (ca issue) validity in days (default 397)\n");
}

enum { OPT_LISTEN = 1, OPT_DB, OPT_CONFIG, OPT_KEY, OPT_WORKERS, OPT_ROLE, OPT_PROJECT,
       OPT_SUBJECT, OPT_TTL, OPT_LOCATION, OPT_HELP, OPT_VERSION, OPT_NODE_DOWN,
       OPT_TLS_CERT, OPT_TLS_KEY, OPT_INSECURE_LISTEN, OPT_DNS, OPT_IP, OPT_OUT_CERT, OPT_OUT_KEY,
       OPT_DAYS, OPT_PUBLIC_URL, OPT_METRICS_AUTH, OPT_NODE_TOKEN_TTL, OPT_NODE, OPT_LIMIT,
       OPT_LOG_LEVEL, OPT_STATE_DIR, OPT_READ_WORKERS, OPT_PUSH_WORKERS };

static const struct option opts[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "db", required_argument, NULL, OPT_DB },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "key-file", required_argument, NULL, OPT_KEY },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "read-workers", required_argument, NULL, OPT_READ_WORKERS },
	{ "push-workers", required_argument, NULL, OPT_PUSH_WORKERS },
	{ "node-down-seconds", required_argument, NULL, OPT_NODE_DOWN },
	{ "role", required_argument, NULL, OPT_ROLE },
	{ "project", required_argument, NULL, OPT_PROJECT },
	{ "subject", required_argument, NULL, OPT_SUBJECT },
	{ "ttl", required_argument, NULL, OPT_TTL },
	{ "location", required_argument, NULL, OPT_LOCATION },
	{ "tls-cert", required_argument, NULL, OPT_TLS_CERT },
	{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
	{ "insecure-listen", no_argument, NULL, OPT_INSECURE_LISTEN },
	{ "dns", required_argument, NULL, OPT_DNS },
	{ "ip", required_argument, NULL, OPT_IP },
	{ "out-cert", required_argument, NULL, OPT_OUT_CERT },
	{ "out-key", required_argument, NULL, OPT_OUT_KEY },
	{ "days", required_argument, NULL, OPT_DAYS },
	{ "public-url", required_argument, NULL, OPT_PUBLIC_URL },
	{ "metrics-auth", optional_argument, NULL, OPT_METRICS_AUTH },
	{ "node-token-ttl", required_argument, NULL, OPT_NODE_TOKEN_TTL },
	{ "node", required_argument, NULL, OPT_NODE },
	{ "max-connections", required_argument, NULL, OPT_LIMIT },
	{ "max-connections-per-ip", required_argument, NULL, OPT_LIMIT },
	{ "header-timeout-seconds", required_argument, NULL, OPT_LIMIT },
	{ "idle-timeout-seconds", required_argument, NULL, OPT_LIMIT },
	{ "leader-lease-seconds", required_argument, NULL, OPT_LIMIT },
	{ "leader-renew-seconds", required_argument, NULL, OPT_LIMIT },
	{ "reconcile-sweep-seconds", required_argument, NULL, OPT_LIMIT },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

struct srv_args {
	const char *cmd;
	struct srv_auth who;
	long ttl;
	const char *sub;           /* ca init | issue */
	struct srv_ca_args ca;
};

static int serve(struct srv *srv)
{
	aq_msg msg = { .text = "" };
	char keypath[1100];
	struct db *db = NULL;
	sigset_t set;
	int sig, rc;
	int64_t started_ms;

	/* the listen policy and the TLS files first: a refused start creates nothing */
	if (srv_cfg_check(&srv->cfg, &msg) != AQ_OK || srv_ca_setup(srv, &msg) != AQ_OK || (rc = db_open(srv->cfg.db_path, &db, &msg)) != AQ_OK) {
		UT_ERROR("srv_main", NULL, "%s", msg.text);
		return 1;
	}
	db_close(db);
	/* PostgreSQL: the document cache serves GETs once its listener hears
	 * every other replica's commits */
	if (db_watch_start(srv->cfg.db_path, &msg) != AQ_OK) {
		UT_ERROR("srv_main", NULL, "%s", msg.text);
		return 1;
	}
	srv_auth_key_path(srv->cfg.key_file, srv->cfg.state_dir, keypath, sizeof(keypath));
	if (srv_auth_key_load(keypath, srv->key, &msg) != AQ_OK) {
		UT_ERROR("srv_main", NULL, "%s", msg.text);
		return 1;
	}
	if (!srv->cfg.public_url[0]) {
		char host[256] = "localhost";

		gethostname(host, sizeof(host) - 1);
		srv_cfg_public_url_default(srv->cfg.listen, srv_ca_tls(srv), host, srv->cfg.public_url, sizeof(srv->cfg.public_url));
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	srv->start_ns = ut_clock_mono_ns();
	started_ms = ut_clock_real_ms();
	if (srv_node_live_init(srv, started_ms) != AQ_OK || srv_series_new(started_ms, &srv->series) != AQ_OK ||
	    srv_shelfio_new(&srv->shelfio) != AQ_OK) {
		UT_ERROR("srv_main", NULL, "out of memory");
		return 1;
	}
	/* the lease first: the reconciler and the scheduler ask it before they work */
	if (srv_lead_start(srv, &msg) != AQ_OK || srv_reconcile_start(srv, &msg) != AQ_OK ||
	    srv_snapsched_start(srv, &msg) != AQ_OK || srv_http_start(srv, &msg) != AQ_OK) {
		UT_ERROR("srv_main", NULL, "%s", msg.text);
		return 1;
	}
	UT_INFO("srv_main", NULL, "aquiferd %s: serving %s://%s (db %s, %d workers, %d read workers), public URL %s, /metrics %s, log level %s",
		AQ_VERSION,
		srv_ca_tls(srv) ? "https" : "http", srv->cfg.listen, srv->cfg.db_path, srv_http_workers(srv), srv_http_read_workers(srv),
		srv->cfg.public_url, srv->cfg.metrics_auth ? "needs a token" : "open to anyone",
		ut_log_level_name(ut_log_get_level()));
	sigwait(&set, &sig);
	UT_INFO("srv_main", NULL, "signal %d, stopping: requests running finish, new writes are refused (503)", sig);
	/* a clean stop: the requests and group transactions running finish
	 * and are answered as they committed; what waits (queued writes,
	 * queued group bodies, the failover's next batch) is refused and
	 * changed nothing */
	__atomic_store_n(&srv->stopping, true, __ATOMIC_RELAXED);
	db_group_close();
	srv_http_stop(srv);
	srv_snapsched_stop(srv);
	srv_reconcile_stop(srv);
	srv_lead_stop(srv); /* last: until then the others may still ask it */
	db_watch_stop();
	srv_series_free(srv->series);
	srv->series = NULL;
	srv_shelfio_free(srv->shelfio);
	srv->shelfio = NULL;
	srv_node_live_free(srv);
	srv_ca_cleanup(srv);
	return 0;
}

static int token(struct srv *srv, struct srv_args *a)
{
	aq_msg msg = { .text = "" };
	char keypath[1100], *tok = NULL;
	struct db *db = NULL;

	if (a->who.role == SRV_ROLE_NONE) {
		fprintf(stderr, "aquiferd token: --role admin|editor|viewer|node|metrics is required\n");
		return 2;
	}
	if ((a->who.role == SRV_ROLE_EDITOR || a->who.role == SRV_ROLE_VIEWER) && !a->who.project[0]) {
		fprintf(stderr, "aquiferd token: --role %s needs --project\n", srv_auth_role_name(a->who.role));
		return 2;
	}
	if ((a->who.role == SRV_ROLE_NODE || a->who.role == SRV_ROLE_METRICS) && a->who.project[0]) {
		fprintf(stderr, "aquiferd token: %s tokens are cluster-wide; drop --project\n", srv_auth_role_name(a->who.role));
		return 2;
	}
	if (a->who.role == SRV_ROLE_NODE && !a->who.location[0]) {
		fprintf(stderr, "aquiferd token: --role node makes a join token, which needs --location LOC (and --node NAME to name the node)\n");
		return 2;
	}
	if (a->who.role != SRV_ROLE_NODE && (a->who.location[0] || a->who.node[0])) {
		fprintf(stderr, "aquiferd token: --location and --node are for join tokens (--role node)\n");
		return 2;
	}
	if (a->who.role == SRV_ROLE_NODE) { /* a join token: single-use, see srv_join.c */
		snprintf(a->who.subject, sizeof(a->who.subject), "join");
		snprintf(a->who.use, sizeof(a->who.use), "%s", SRV_USE_JOIN);
	}
	if (a->ttl <= 0) {
		fprintf(stderr, "aquiferd token: --ttl must be a positive number of seconds\n");
		return 2;
	}
	/* The key lives with the state: open the db first so a wrong --db fails here. */
	if (db_open(srv->cfg.db_path, &db, &msg) != AQ_OK) {
		fprintf(stderr, "aquiferd token: %s\n", msg.text);
		return 1;
	}
	db_close(db);
	srv_auth_key_path(srv->cfg.key_file, srv->cfg.state_dir, keypath, sizeof(keypath));
	if (srv_auth_key_load(keypath, srv->key, &msg) != AQ_OK ||
	    srv_auth_token_make(srv->key, &a->who, a->ttl, &tok, &msg) != AQ_OK) {
		fprintf(stderr, "aquiferd token: %s\n", msg.text);
		return 1;
	}
	printf("%s\n", tok);
	free(tok);
	return 0;
}

int srv_main(int argc, char **argv)
{
	static struct srv srv;
	struct srv_args a = { .cmd = "serve", .ttl = 86400, .ca = { .days = TLS_CERT_DAYS } };
	aq_msg msg = { .text = "" };
	const char *config = NULL;
	int c, li, argi = 1;
	char *end;

	srv_cfg_defaults(&srv.cfg);
	if (argc > 1 && strcmp(argv[1], "db") == 0)
		return srv_dbmig_main(argc - 1, argv + 1);
	if (argc > 1 && argv[1][0] != '-') {
		a.cmd = argv[1];
		argi = 2;
	}
	if (strcmp(a.cmd, "ca") == 0) {
		if (argc < 3 || argv[2][0] == '-') {
			fprintf(stderr, "aquiferd ca: expected init or issue\n");
			return 2;
		}
		a.sub = argv[2];
		argi = 3;
	}
	/* config first, so that flags override it */
	for (int i = argi; i < argc - 1; i++)
		if (strcmp(argv[i], "--config") == 0)
			config = argv[i + 1];
	if (config && srv_cfg_load(&srv.cfg, config, &msg) != AQ_OK) {
		fprintf(stderr, "aquiferd: %s\n", msg.text);
		return 1;
	}
	optind = argi;
	while ((c = getopt_long(argc, argv, "", opts, &li)) != -1) {
		switch (c) {
		case OPT_LISTEN: snprintf(srv.cfg.listen, sizeof(srv.cfg.listen), "%s", optarg); break;
		case OPT_DB: snprintf(srv.cfg.db_path, sizeof(srv.cfg.db_path), "%s", optarg); break;
		case OPT_CONFIG: break;
		case OPT_KEY: snprintf(srv.cfg.key_file, sizeof(srv.cfg.key_file), "%s", optarg); break;
		case OPT_STATE_DIR:
			if (srv_cfg_set(&srv.cfg, "state-dir", optarg, &msg) != AQ_OK) {
				fprintf(stderr, "aquiferd: --state-dir: %s\n", msg.text);
				return 2;
			}
			break;
		case OPT_WORKERS:
			if (srv_cfg_set(&srv.cfg, "workers", optarg, &msg) != AQ_OK) {
				fprintf(stderr, "aquiferd: --workers: %s\n", msg.text);
				return 2;
			}
			break;
		case OPT_READ_WORKERS:
			if (srv_cfg_set(&srv.cfg, "read-workers", optarg, &msg) != AQ_OK) {
				fprintf(stderr, "aquiferd: --read-workers: %s\n", msg.text);
				return 2;
			}
			break;
		case OPT_PUSH_WORKERS:
			if (srv_cfg_set(&srv.cfg, "push-workers", optarg, &msg) != AQ_OK) {
				fprintf(stderr, "aquiferd: --push-workers: %s\n", msg.text);
				return 2;
			}
			break;
		case OPT_NODE_DOWN:
			if (srv_cfg_set(&srv.cfg, "node-down-seconds", optarg, &msg) != AQ_OK) {
				fprintf(stderr, "aquiferd: --node-down-seconds: %s\n", msg.text);
				return 2;
			}
			break;
		case OPT_ROLE:
			if ((a.who.role = srv_auth_role_parse(optarg)) == SRV_ROLE_NONE) {
				fprintf(stderr, "aquiferd: --role must be admin, editor, viewer, node or metrics\n");
				return 2;
			}
			break;
		case OPT_PROJECT:
			if (api_id_check(optarg, "--project", &msg) != AQ_OK) {
				fprintf(stderr, "aquiferd: %s\n", msg.text);
				return 2;
			}
			snprintf(a.who.project, sizeof(a.who.project), "%s", optarg);
			break;
		case OPT_SUBJECT: snprintf(a.who.subject, sizeof(a.who.subject), "%s", optarg); break;
		case OPT_LOCATION: snprintf(a.who.location, sizeof(a.who.location), "%s", optarg); break;
		case OPT_TTL:
			a.ttl = strtol(optarg, &end, 10);
			if (!*optarg || *end)
				a.ttl = -1;
			break;
		case OPT_TLS_CERT: snprintf(srv.cfg.tls_cert, sizeof(srv.cfg.tls_cert), "%s", optarg); break;
		case OPT_TLS_KEY: snprintf(srv.cfg.tls_key, sizeof(srv.cfg.tls_key), "%s", optarg); break;
		case OPT_INSECURE_LISTEN: srv.cfg.insecure_listen = true; break;
		case OPT_PUBLIC_URL:
		case OPT_METRICS_AUTH:
		case OPT_NODE_TOKEN_TTL: {
			const char *key = c == OPT_PUBLIC_URL ? "public-url" : c == OPT_METRICS_AUTH ? "metrics-auth" : "node-token-ttl";

			if (srv_cfg_set(&srv.cfg, key, optarg ? optarg : "true", &msg) != AQ_OK) {
				fprintf(stderr, "aquiferd: --%s: %s\n", key, msg.text);
				return 2;
			}
			break;
		}
		case OPT_NODE:
			if (api_id_check(optarg, "--node", &msg) != AQ_OK) {
				fprintf(stderr, "aquiferd: %s\n", msg.text);
				return 2;
			}
			snprintf(a.who.node, sizeof(a.who.node), "%s", optarg);
			break;
		case OPT_DNS:
		case OPT_IP:
			if ((c == OPT_DNS ? a.ca.ndns : a.ca.nip) == 8) {
				fprintf(stderr, "aquiferd: at most 8 --dns and 8 --ip\n");
				return 2;
			}
			if (c == OPT_DNS)
				a.ca.dns[a.ca.ndns++] = optarg;
			else
				a.ca.ip[a.ca.nip++] = optarg;
			break;
		case OPT_OUT_CERT: a.ca.out_cert = optarg; break;
		case OPT_OUT_KEY: a.ca.out_key = optarg; break;
		case OPT_DAYS:
			a.ca.days = strtol(optarg, &end, 10);
			if (!*optarg || *end || a.ca.days < 1 || a.ca.days > 3650) {
				fprintf(stderr, "aquiferd: --days must be an integer within 1..3650\n");
				return 2;
			}
			break;
		case OPT_LIMIT:
			if (srv_cfg_set(&srv.cfg, opts[li].name, optarg, &msg) != AQ_OK) {
				fprintf(stderr, "aquiferd: --%s\n", msg.text);
				return 2;
			}
			break;
		case OPT_LOG_LEVEL:
			if (srv_cfg_set(&srv.cfg, "log-level", optarg, &msg) != AQ_OK) {
				fprintf(stderr, "aquiferd: --log-level: %s\n", msg.text);
				return 2;
			}
			break;
		case OPT_HELP: usage(stdout); return 0;
		case OPT_VERSION: printf("aquiferd %s\n", AQ_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "aquiferd: unexpected argument \"%s\"\n", argv[optind]);
		return 2;
	}
	if (strcmp(a.cmd, "routes") == 0) {
		for (int i = 0; i < srv_nroutes; i++)
			printf("%s %s\n", srv_routes[i].method, srv_routes[i].path);
		return 0;
	}
	if (!srv.cfg.db_path[0]) {
		fprintf(stderr, "aquiferd: --db PATH is required\n");
		return 2;
	}
	if (srv_cfg_state_dir(&srv.cfg, &msg) != AQ_OK) {
		fprintf(stderr, "aquiferd: %s\n", msg.text);
		return 2;
	}
	if (!a.who.subject[0])
		snprintf(a.who.subject, sizeof(a.who.subject), "%s", a.who.role == SRV_ROLE_METRICS ? "metrics" : "cli");
	ut_log_set_level(srv.cfg.log_level); /* before any thread starts */
	if (strcmp(a.cmd, "serve") == 0)
		return serve(&srv);
	if (strcmp(a.cmd, "token") == 0)
		return token(&srv, &a);
	if (strcmp(a.cmd, "ca") == 0)
		return srv_ca_cmd(&srv, a.sub, &a.ca);
	fprintf(stderr, "aquiferd: unknown command \"%s\"\n", a.cmd);
	usage(stderr);
	return 2;
}
