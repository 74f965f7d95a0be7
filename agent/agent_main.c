/* agent_main: aquifer-agent's command line, config file and life cycle.
 *   aquifer-agent --server URL --token JOIN_TOKEN --node NAME --location LOC --shelf DIR
 *                 --listen HOST:PORT --nfs-listen HOST:PORT --state-dir DIR
 *                 [--throughput-mibps N] [--write-throughput-mibps N] [--advertise HOST]
 *                 [--ca-file FILE] [--tier-day-seconds N] [--log-level LEVEL] [--config FILE]
 *                 [connection limits of the API and the NFS port: see usage()]
 * Start-up order: credentials and the last applied intent from --state-dir
 * are served at once (the NFS and SMB ports listen only once it is
 * applied); only a node without credentials joins first. */
#include "agent/agent.h"
#include "agent/agent_internal.h"
#include "agent/agent_nvme.h"
#include "agent/snap/snap.h"

#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_math.h"
#include "api/api_schema.h"
#include "tls/tls.h"
#include "agent/vol/vol_grace.h"
#include "agent/vol/vol_lease.h"
#include "agent/vol/vol_ra.h"
#include "util/ut_conf.h"
#include "util/ut_hex.h"
#include "util/ut_log.h"

/* Seed node (AFX 1K): ~35 GB/s read, ~10 GB/s write, in MiB/s. */
#define AGENT_CEILING_MIBPS 33379.0
#define AGENT_WRITE_CEILING_MIBPS 9537.0
/* Descriptors kept for everything but connections: files (the volume store
 * caches 1024), the cold tier, pushes and reports, logs. */
#define AGENT_FD_RESERVE 2048

static void usage(FILE *f)
{
	fprintf(f,
		"usage: aquifer-agent --server URL --token JOIN_TOKEN --node NAME --location LOC\n"
		"                     --shelf DIR --listen HOST:PORT --nfs-listen HOST:PORT --state-dir DIR\n"
		"                     [--throughput-mibps N] [--write-throughput-mibps N]\n"
		"                     [--smb-listen HOST[:PORT]] [--service-interface IFACE] [--advertise HOST] [--ca-file FILE] [--tier-day-seconds N]\n"
		"                     [--snapshot-usage-seconds N]\n"
		"                     [--log-level LEVEL] [--config FILE]\n"
		"\n"
		"  --server URL[,URL...]     aquiferd's URL (https://HOST:PORT; http:// only for a loopback aquiferd);\n"
		"                            with replicas, each one's: reports go to one that answers\n"
		"  --token JOIN_TOKEN        a join token (aquifer nodes join-token --location LOC); joins once\n"
		"  --node NAME               this node's name (letters, digits, hyphens)\n"
		"  --location LOC            the location this node serves\n"
		"  --shelf DIR               the shelf every node of the location shares: a folder, or\n"
		"            nvmeof:tcp|rdma:ADDR:PORT:NQN[,fence=pr|lease|none][,lease=SECONDS][,provision=PROG]\n"
		"                            an NVMe-oF subsystem, one namespace and ext4 per volume; fence=lease:\n"
		"                            a disk lease of SECONDS (10) per volume (docs/internals/shelf.md)\n"
		"  --listen HOST:PORT        the agent API (aquiferd pushes desired state here)\n"
		"  --nfs-listen HOST:PORT    the NFSv3/MOUNT/PORTMAP port clients mount\n"
		"  --smb-listen HOST[:PORT]  serve the volumes whose protocols hold SMB here (port 445\n"
		"                            when left out; no SMB server without this option)\n"
		"  --state-dir DIR           credentials and the last applied state\n"
		"  --throughput-mibps N      node ceiling used for placement (default 33379 = 35 GB/s read)\n"
		"  --write-throughput-mibps N  write ceiling, shown by the API (default 9537 = 10 GB/s)\n"
		"  --advertise HOST          address aquiferd and clients use (default: --listen's host)\n"
		"  --service-interface IFACE  hold the service addresses of the volumes served here on\n"
		"                            IFACE (needs --nfs-listen 0.0.0.0:PORT, CAP_NET_ADMIN/RAW)\n"
		"  --ca-file FILE            CA that signed aquiferd's certificate, checked from the first\n"
		"                            contact on (default: the system store; after the join, the\n"
		"                            cluster CA kept in --state-dir/ca.crt)\n"
		"  --tier-day-seconds N      how long a cold-tier \"day\" lasts (default 86400; tests age data)\n"
		"  --snapshot-usage-seconds N  how often each snapshot's usedBytes is measured (default 60)\n"
		"  connections (limits against idle and half-open floods; see agent/README.md):\n"
		"  --max-connections N       API connections at once (default 1024)\n"
		"  --max-connections-per-ip N  API connections from one address (default 32)\n"
		"  --header-timeout-seconds N  silence that closes an API connection before it showed\n"
		"                            aquiferd's credentials (default 10)\n"
		"  --idle-timeout-seconds N  keep-alive idle of an authenticated API connection (default 60)\n"
		"  --nfs-max-connections N   NFS connections at once; at the limit the oldest idle one\n"
		"                            is closed for a new one (default 4096)\n"
		"  --nfs-max-connections-per-ip N  NFS connections from one address (default 64)\n"
		"  --nfs-record-timeout-seconds N  a new connection's first call must arrive whole, and a\n"
		"                            call may not pause longer, within N seconds (default 10)\n"
		"  --nfs-idle-timeout-seconds N  close an NFS connection with nothing outstanding after\n"
		"                            N seconds of silence (default 360)\n"
		"  --nfs4-max-slots N        NFSv4.1 session slots a client may get, 1..1024 (default 180)\n"
		"  --nlm-grace-seconds N     after a restart with NLM locks recorded in --state-dir, only\n"
		"                            reclaims are granted for N seconds, 1..3600 (default 90)\n"
		"  --lease-break-timeout-ms N  how long an SMB oplock/lease break that needs the client's\n"
		"                            acknowledgment is waited for (by the CREATE or NFS write that\n"
		"                            caused it) before it is revoked, 1..3600000 (default 35000)\n"
		"  --test-report-delay-ms N  tests only: hold each full status report N ms before it is\n"
		"                            sent (the renewals go on meanwhile; default 0)\n"
		"  --log-level LEVEL         error, warn, info (default) or debug: the least severe\n"
		"                            record written to stderr\n"
		"  --read-ahead-cache-mib N  cross-file read-ahead: prefetched data not read yet, per\n"
		"                            node (default 1024 MiB)\n"
		"  --read-ahead-volume-mib N  ... and per volume (default 256 MiB)\n"
		"  --read-ahead-workers N    prefetch threads of cross-file read-ahead, 1..32 (default 4)\n"
		"  --config FILE             'key = value' lines with the option names above\n"
		"                            ('_' may stand for '-', e.g. tier_day_seconds = 60)\n");
}

struct agent_opt {
	const char *name;
	size_t off;
	size_t cap;   /* string field size, 0 for MiB/s numbers, AGENT_OPT_UINT for counts */
};

#define AGENT_OPT_UINT ((size_t)-1)
#define AGENT_OPT_LEVEL ((size_t)-2)  /* a ut_log level name */

#define S(f) offsetof(struct agent_cfg, f), sizeof(((struct agent_cfg *)0)->f)
static const struct agent_opt agent_opts[] = {
	{ "server", S(server) }, { "token", S(join_token) }, { "node", S(node) },
	{ "location", S(location) }, { "shelf", S(shelf) }, { "listen", S(listen) },
	{ "nfs-listen", S(nfs_listen) }, { "smb-listen", S(smb_listen) }, { "service-interface", S(service_iface) }, { "advertise", S(advertise) }, { "state-dir", S(state_dir) },
	{ "ca-file", S(ca_file) },
	{ "throughput-mibps", offsetof(struct agent_cfg, ceiling_mibps), 0 },
	{ "write-throughput-mibps", offsetof(struct agent_cfg, write_ceiling_mibps), 0 },
	{ "tier-day-seconds", offsetof(struct agent_cfg, tier_day_seconds), AGENT_OPT_UINT },
	{ "snapshot-usage-seconds", offsetof(struct agent_cfg, snap_usage_s), AGENT_OPT_UINT },
	{ "max-connections", offsetof(struct agent_cfg, api_limits.max_conns), AGENT_OPT_UINT },
	{ "max-connections-per-ip", offsetof(struct agent_cfg, api_limits.per_ip), AGENT_OPT_UINT },
	{ "header-timeout-seconds", offsetof(struct agent_cfg, api_limits.header_s), AGENT_OPT_UINT },
	{ "idle-timeout-seconds", offsetof(struct agent_cfg, api_limits.idle_s), AGENT_OPT_UINT },
	{ "nfs-max-connections", offsetof(struct agent_cfg, nfs_limits.max_conns), AGENT_OPT_UINT },
	{ "nfs-max-connections-per-ip", offsetof(struct agent_cfg, nfs_limits.per_ip), AGENT_OPT_UINT },
	{ "nfs-record-timeout-seconds", offsetof(struct agent_cfg, nfs_limits.record_s), AGENT_OPT_UINT },
	{ "nfs-idle-timeout-seconds", offsetof(struct agent_cfg, nfs_limits.idle_s), AGENT_OPT_UINT },
	{ "nfs4-max-slots", offsetof(struct agent_cfg, nfs4_max_slots), AGENT_OPT_UINT },
	{ "nlm-grace-seconds", offsetof(struct agent_cfg, nlm_grace_s), AGENT_OPT_UINT },
	{ "lease-break-timeout-ms", offsetof(struct agent_cfg, lease_break_ms), AGENT_OPT_UINT },
	{ "test-report-delay-ms", offsetof(struct agent_cfg, test_report_delay_ms), AGENT_OPT_UINT },
	{ "log-level", offsetof(struct agent_cfg, log_level), AGENT_OPT_LEVEL },
	{ "read-ahead-cache-mib", offsetof(struct agent_cfg, ra_node_mib), AGENT_OPT_UINT },
	{ "read-ahead-volume-mib", offsetof(struct agent_cfg, ra_volume_mib), AGENT_OPT_UINT },
	{ "read-ahead-workers", offsetof(struct agent_cfg, ra_workers), AGENT_OPT_UINT },
};
#undef S

static int cfg_set(struct agent_cfg *cfg, const char *key, const char *val, aq_msg *msg)
{
	for (size_t i = 0; i < sizeof(agent_opts) / sizeof(agent_opts[0]); i++) {
		const struct agent_opt *o = &agent_opts[i];
		char *end;

		if (strcmp(o->name, key) != 0)
			continue;
		if (o->cap == AGENT_OPT_LEVEL)
			return ut_log_level_parse(val, (enum ut_log_level *)(void *)((char *)cfg + o->off), msg);
		if (o->cap == AGENT_OPT_UINT) {
			unsigned long u;

			errno = 0;
			u = strtoul(val, &end, 10);
			if (!*val || *end || errno || *val == '-' || u == 0 || u > 100000000ul)
				return aq_fail(msg, AQ_EINVAL, "%s must be a whole number from 1 to 100000000, got \"%s\"", key, val);
			if (o->off == offsetof(struct agent_cfg, nfs4_max_slots) && u > NFS4_SLOTS_MAX)
				return aq_fail(msg, AQ_EINVAL, "%s must be from 1 to %u, got \"%s\"", key, NFS4_SLOTS_MAX, val);
			if (o->off == offsetof(struct agent_cfg, nlm_grace_s) && u > 3600)
				return aq_fail(msg, AQ_EINVAL, "%s must be from 1 to 3600, got \"%s\"", key, val);
			if (o->off == offsetof(struct agent_cfg, lease_break_ms) && u > 3600000)
				return aq_fail(msg, AQ_EINVAL, "%s must be from 1 to 3600000, got \"%s\"", key, val);
			if (o->off == offsetof(struct agent_cfg, ra_workers) && u > VOL_RA_WORKERS_MAX)
				return aq_fail(msg, AQ_EINVAL, "%s must be from 1 to %u, got \"%s\"", key, VOL_RA_WORKERS_MAX, val);
			*(unsigned *)(void *)((char *)cfg + o->off) = (unsigned)u;
		} else if (o->cap) {
			if (strlen(val) >= o->cap)
				return aq_fail(msg, AQ_EINVAL, "%s is longer than %zu bytes", key, o->cap - 1);
			snprintf((char *)cfg + o->off, o->cap, "%s", val);
		} else {
			double d = strtod(val, &end);

			if (!*val || *end || d <= 0 || d > 1e9)
				return aq_fail(msg, AQ_EINVAL, "%s must be a positive number of MiB/s, got \"%s\"", key, val);
			*(double *)(void *)((char *)cfg + o->off) = d;
		}
		return AQ_OK;
	}
	return aq_fail(msg, AQ_EINVAL, "unknown key \"%s\"", key);
}

/* One setting of the --config file (ut_conf: FILE:LINE: before the message). */
static int cfg_file_set(void *cfg, const char *key, const char *val, aq_msg *msg)
{
	return cfg_set(cfg, key, val, msg);
}

static int parse_args(struct agent_cfg *cfg, int argc, char **argv, aq_msg *msg)
{
	static struct option lopts[sizeof(agent_opts) / sizeof(agent_opts[0]) + 4];
	size_t n = sizeof(agent_opts) / sizeof(agent_opts[0]);
	int c, idx;

	for (int i = 1; i < argc - 1; i++) /* the config file first: flags override it */
		if (strcmp(argv[i], "--config") == 0) {
			int rc = ut_conf_load(argv[i + 1], UT_CONF_DASH, cfg_file_set, cfg, msg);

			if (rc != AQ_OK)
				return rc;
		}
	for (size_t i = 0; i < n; i++)
		lopts[i] = (struct option){ agent_opts[i].name, required_argument, NULL, 0 };
	lopts[n] = (struct option){ "config", required_argument, NULL, 0 };
	lopts[n + 1] = (struct option){ "help", no_argument, NULL, 'h' };
	lopts[n + 2] = (struct option){ "version", no_argument, NULL, 'V' };
	while ((c = getopt_long(argc, argv, "", lopts, &idx)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == 'V') {
			printf("aquifer-agent %s\n", AQ_VERSION);
			exit(0);
		}
		if (c != 0)
			return aq_fail(msg, AQ_EINVAL, "unknown option (see --help)");
		if ((size_t)idx < n) {
			aq_msg why = { .text = "" };

			if (cfg_set(cfg, lopts[idx].name, optarg, &why) != AQ_OK)
				return aq_fail(msg, AQ_EINVAL, "--%s", why.text);
		}
	}
	if (optind < argc)
		return aq_fail(msg, AQ_EINVAL, "unexpected argument \"%s\"", argv[optind]);
	if (!cfg->server[0] || !cfg->node[0] || !cfg->location[0] || !cfg->shelf[0] || !cfg->listen[0] ||
	    !cfg->nfs_listen[0] || !cfg->state_dir[0])
		return aq_fail(msg, AQ_EINVAL, "--server, --node, --location, --shelf, --listen, --nfs-listen and --state-dir are required");
	if (api_id_check(cfg->node, "--node", msg) != AQ_OK || api_id_check(cfg->location, "--location", msg) != AQ_OK)
		return AQ_EINVAL;
	if (agent_nvme_is_spec(cfg->shelf)) { /* refused before anything is made */
		struct agent_nvme_spec spec;

		if (agent_nvme_spec_parse(cfg->shelf, &spec, msg) != AQ_OK)
			return AQ_EINVAL;
	}
	return agent_ctl_servers(cfg, msg);
}

/* Raise RLIMIT_NOFILE and lower the connection limits to what it allows
 * with AGENT_FD_RESERVE kept; returns the descriptors the API must leave to
 * the rest (the reserve and the NFS connections). */
static unsigned fit_limits(struct agent_cfg *cfg)
{
	unsigned long nofile = tls_listen_nofile();
	unsigned long room = nofile > AGENT_FD_RESERVE + 64 ? nofile - AGENT_FD_RESERVE : 64;
	unsigned long want = (unsigned long)cfg->nfs_limits.max_conns + cfg->api_limits.max_conns;

	if (want > room) {
		unsigned nfs = (unsigned)(room * cfg->nfs_limits.max_conns / want);
		unsigned api = (unsigned)(room - nfs);

		UT_WARN("agent_main", NULL, "RLIMIT_NOFILE is %lu: at most %u NFS and %u API connections (not %u and %u)",
			nofile, nfs ? nfs : 1, api ? api : 1, cfg->nfs_limits.max_conns, cfg->api_limits.max_conns);
		cfg->nfs_limits.max_conns = nfs ? nfs : 1;
		cfg->api_limits.max_conns = api ? api : 1;
	}
	return AGENT_FD_RESERVE + cfg->nfs_limits.max_conns;
}

/* The SMB opens the node may hold: what RLIMIT_NOFILE leaves past the
 * reserve and every connection (NFS, API, SMB), SMB_SRV_OPEN_FDS
 * descriptors an open, at least 64. */
static unsigned smb_opens_fit(const struct agent_cfg *cfg)
{
	unsigned long nofile = tls_listen_nofile();
	unsigned long others = (unsigned long)AGENT_FD_RESERVE + cfg->nfs_limits.max_conns + cfg->api_limits.max_conns +
			       SMB_SRV_MAX_CONNS;
	unsigned long n = nofile > others ? (nofile - others) / SMB_SRV_OPEN_FDS : 0;

	if (n < 64)
		n = 64;
	if (n > UINT32_MAX / 2)
		n = UINT32_MAX / 2;
	UT_INFO("agent_main", NULL, "RLIMIT_NOFILE is %lu: at most %lu SMB opens on the node, 4096 a session", nofile, n);
	return (unsigned)n;
}

static int hex_key(const char *hex, uint8_t key[VOL_KEY_LEN])
{
	if (strlen(hex) != VOL_KEY_LEN * 2)
		return AQ_EINVAL;
	return ut_hex_decode(hex, VOL_KEY_LEN * 2, key, VOL_KEY_LEN, NULL);
}

/* Credentials from the state folder, or a join (retried while aquiferd is
 * unreachable; a refused token is final). */
static int agent_credentials(struct agent *a, aq_msg *msg)
{
	json_t *creds = NULL;
	int rc = agent_state_read(a->cfg.state_dir, "credentials.json", &creds, msg);

	if (rc == AQ_OK) {
		if (strcmp(api_json_str(creds, "node", ""), a->cfg.node) != 0 ||
		    strcmp(api_json_str(creds, "location", ""), a->cfg.location) != 0) {
			rc = aq_fail(msg, AQ_EINVAL, "%s/credentials.json belongs to node %s in %s, not %s in %s",
				     a->cfg.state_dir, api_json_str(creds, "node", "?"), api_json_str(creds, "location", "?"),
				     a->cfg.node, a->cfg.location);
		} else {
			snprintf(a->node_token, sizeof(a->node_token), "%s", api_json_str(creds, "nodeToken", ""));
			snprintf(a->push_secret, sizeof(a->push_secret), "%s", api_json_str(creds, "pushSecret", ""));
			snprintf(a->handle_key, sizeof(a->handle_key), "%s", api_json_str(creds, "handleKey", ""));
		}
		json_decref(creds);
		return rc;
	}
	if (rc != AQ_ENOENT)
		return rc;
	if (!a->cfg.join_token[0])
		return aq_fail(msg, AQ_EINVAL, "no credentials in %s and no --token to join with", a->cfg.state_dir);
	for (int attempt = 0;; attempt++) {
		rc = agent_join(a, msg);
		if (rc == AQ_OK || rc == AQ_EUNAUTH || rc == AQ_EINVAL || rc == AQ_EACCES)
			return rc; /* refused token, bad input, aquiferd not trusted: final */
		if (rc == AQ_EIO && strstr(msg->text, "HTTP 4"))
			return rc;
		if (attempt % 10 == 0)
			UT_WARN("agent_main", NULL, "cannot join yet (%s); retrying", msg->text);
		sleep(1);
	}
}

/* fence=lease lost a volume's lease (the watcher thread): the store lets go
 * of its descriptors on that file system, now shut down, so the device can
 * be mounted afresh once the lease is back. */
static void main_fenced(void *ctx, const char *mp)
{
	struct agent *a = ctx;
	struct stat st;

	if (a->store && stat(mp, &st) == 0)
		vol_store_forget_dev(a->store, st.st_dev);
}

int agent_main(int argc, char **argv)
{
	static struct agent a;
	uint8_t key[VOL_KEY_LEN];
	json_t *intent = NULL;
	aq_msg msg = { .text = "" };
	sigset_t set;
	int sig, rc;
	unsigned reserve;

	a.cfg.ceiling_mibps = AGENT_CEILING_MIBPS;
	a.cfg.write_ceiling_mibps = AGENT_WRITE_CEILING_MIBPS;
	a.cfg.report_ms = 2000;
	a.cfg.nfs_workers = 8;
	a.cfg.tier_day_seconds = 86400;
	a.cfg.snap_usage_s = 60;
	a.cfg.nlm_grace_s = NLM_GRACE_DEFAULT_S;
	a.cfg.lease_break_ms = VOL_LEASE_TIMEOUT_MS;
	a.cfg.ra_node_mib = (unsigned)(VOL_RA_NODE_BYTES >> 20);
	a.cfg.ra_volume_mib = (unsigned)(VOL_RA_VOLUME_BYTES >> 20);
	a.cfg.ra_workers = VOL_RA_WORKERS;
	a.cfg.api_limits = (struct tls_listen_limits){ .max_conns = 1024, .per_ip = 32, .header_s = 10, .idle_s = 60 };
	a.cfg.nfs_limits = (struct nfs_srv_limits)NFS_SRV_LIMITS_DEFAULT;
	a.cfg.log_level = UT_LOG_INFO;
	pthread_mutex_init(&a.lock, NULL);
	pthread_mutex_init(&a.apply_lock, NULL);
	pthread_mutex_init(&a.report_mu, NULL);
	pthread_mutex_init(&a.snap_mu, NULL);
	pthread_cond_init(&a.snap_cv, NULL);
	if (parse_args(&a.cfg, argc, argv, &msg) != AQ_OK) {
		UT_ERROR("agent_main", NULL, "%s", msg.text);
		return 2;
	}
	ut_log_set_level(a.cfg.log_level); /* before any thread starts */
	/* service addresses (agent_svc.h): checked before the node joins */
	if (agent_svc_init(&a.svc, a.cfg.service_iface, a.cfg.nfs_listen, a.cfg.smb_listen, 0, &msg) != AQ_OK) {
		UT_ERROR("agent_main", NULL, "%s", msg.text);
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (mkdir(a.cfg.state_dir, 0700) != 0 && errno != EEXIST) {
		UT_ERROR("agent_main", NULL, "cannot create %s: %s", a.cfg.state_dir, strerror(errno));
		return 1;
	}
	if (agent_nvme_is_spec(a.cfg.shelf)) {
		/* NVMe-oF: volumes are mounted under <state-dir>/shelf, which
		 * stands for the shelf folder from here on (agent_shelf.h) */
		char base[1100];

		snprintf(base, sizeof(base), "%s/shelf", a.cfg.state_dir);
		a.shelf.fenced = main_fenced;
		a.shelf.fenced_ctx = &a;
		if (agent_shelf_nvme_init(&a.shelf, a.cfg.shelf, base, a.cfg.node, &msg) != AQ_OK) {
			UT_ERROR("agent_main", NULL, "%s", msg.text);
			return 1;
		}
		UT_INFO("agent_main", NULL, "shelf %s: volumes mounted under %s", a.cfg.shelf, a.shelf.path);
		snprintf(a.cfg.shelf, sizeof(a.cfg.shelf), "%s", a.shelf.path);
	} else if ((rc = agent_shelf_dir_init(&a.shelf, a.cfg.shelf)) != 0) {
		UT_ERROR("agent_main", NULL, "shelf %s: %s", a.cfg.shelf, strerror(-rc));
		return 1;
	}
	/* snapshots: what a crash left half made goes before anything is served */
	if (snap_shelf_init(a.cfg.shelf, &a.snap_mech, &msg) != AQ_OK) {
		UT_ERROR("agent_main", NULL, "shelf %s: %s", a.cfg.shelf, msg.text);
		return 1;
	}
	UT_INFO("agent_main", NULL, "shelf %s: snapshots by %s", a.cfg.shelf, snap_mech_name(a.snap_mech));
	if (agent_tls_load(&a, &msg) != AQ_OK || agent_credentials(&a, &msg) != AQ_OK) {
		UT_ERROR("agent_main", NULL, "%s", msg.text);
		return 1;
	}
	if (hex_key(a.handle_key, key) != AQ_OK) {
		UT_ERROR("agent_main", NULL, "credentials hold no valid handle key");
		return 1;
	}
	reserve = fit_limits(&a.cfg);
	/* The agent owns the store; each protocol front end is handed it. */
	if ((rc = vol_store_new(key, &a.store)) != 0) {
		UT_ERROR("agent_main", NULL, "volume store: %s", strerror(-rc));
		return 1;
	}
	vol_store_set_grace(a.store, a.cfg.nlm_grace_s); /* NLM and NFSv4.1 alike, after a restart or a takeover */
	vol_store_set_read_ahead(a.store, (uint64_t)a.cfg.ra_node_mib << 20, (uint64_t)a.cfg.ra_volume_mib << 20);
	(void)vol_store_set_read_ahead_workers(a.store, a.cfg.ra_workers); /* 1..32: checked with the options */
	(void)vol_lease_set_timeout(a.store, a.cfg.lease_break_ms);        /* 1..3600000: likewise */
	if ((rc = nfs_srv_new(a.cfg.nfs_listen, a.store, (unsigned)a.cfg.nfs_workers, &a.nfs)) != 0 ||
	    (rc = nfs_srv_set_limits(a.nfs, &a.cfg.nfs_limits)) != 0 ||
	    (rc = nfs4_srv_new(&(struct nfs4_cfg){ .max_slots = a.cfg.nfs4_max_slots }, &a.nfs4)) != 0 ||
	    (rc = nfs_srv_add_prog(a.nfs, &nfs4_prog, a.nfs4)) != 0 ||
	    (rc = nlm_srv_new(&(struct nlm_cfg){ .state_dir = a.cfg.state_dir, .grace_s = a.cfg.nlm_grace_s }, a.store,
			      &a.nlm)) != 0 ||
	    (rc = nfs_srv_add_prog(a.nfs, &nlm_prog, a.nlm)) != 0 || (rc = nfs_srv_add_prog(a.nfs, &nsm_prog, a.nlm)) != 0) {
		UT_ERROR("agent_main", NULL, "NFS server on %s: %s", a.cfg.nfs_listen, strerror(-rc));
		return 1;
	}
	if (a.cfg.smb_listen[0] && (rc = smb_srv_new(a.cfg.smb_listen, a.store, &a.smb)) != 0) {
		UT_ERROR("agent_main", NULL, "SMB server on %s: %s", a.cfg.smb_listen, strerror(-rc));
		return 1;
	}
	if (a.smb)
		smb_srv_set_open_limits(a.smb, 0, smb_opens_fit(&a.cfg));
	{
		struct tier_cfg tc = { .day_seconds = a.cfg.tier_day_seconds };

		snprintf(tc.location, sizeof(tc.location), "%s", a.cfg.location);
		if ((rc = tier_new(&tc, &a.tier)) != 0) {
			UT_ERROR("agent_main", NULL, "cold tier: %s", strerror(-rc));
			return 1;
		}
		vol_store_set_tier(a.store, tier_ops(), a.tier);
	}
	a.svc.nfs_port = nfs_srv_port(a.nfs); /* a service address wanting another port fails */
	/* the backup worker takes the jobs of the first apply */
	if (agent_bkjob_start(&a) != AQ_OK) {
		UT_ERROR("agent_main", NULL, "cannot start the backup worker");
		return 1;
	}
	/* serve the last applied state at once */
	rc = agent_state_read(a.cfg.state_dir, "intent.json", &intent, &msg);
	if (rc == AQ_OK) {
		if (agent_apply(&a, intent, &msg) != AQ_OK)
			UT_WARN("agent_main", NULL, "last applied state: %s", msg.text);
		else
			UT_INFO("agent_main", NULL, "serving generation %lld (%zu volumes) from %s",
				(long long)a.applied, json_array_size(json_object_get(intent, "volumes")), a.cfg.state_dir);
		json_decref(intent);
	} else if (rc != AQ_ENOENT) {
		UT_ERROR("agent_main", NULL, "%s", msg.text);
	}
	/* Listen only now: a client that reconnects to a restarted agent finds
	 * its volumes attached (and in grace), never an empty pseudo-root or
	 * stale handles. Until then its connection waits in the kernel. */
	if ((rc = nfs_srv_start(a.nfs)) != 0) {
		UT_ERROR("agent_main", NULL, "NFS server on %s: %s", a.cfg.nfs_listen, strerror(-rc));
		return 1;
	}
	if (a.smb && (rc = smb_srv_start(a.smb)) != 0) {
		UT_ERROR("agent_main", NULL, "SMB server on %s: %s", a.cfg.smb_listen, strerror(-rc));
		return 1;
	}
	a.svc.nfs_port = nfs_srv_port(a.nfs); /* bound now (--nfs-listen with port 0) */
	pthread_mutex_lock(&a.lock);
	a.svc.live = true; /* from now on pushes claim service addresses */
	pthread_mutex_unlock(&a.lock);
	if (tier_start(a.tier) != 0) {
		UT_ERROR("agent_main", NULL, "cannot start the cold tier thread");
		return 1;
	}
	if (agent_http_start(&a, reserve, &msg) != AQ_OK) {
		UT_ERROR("agent_main", NULL, "%s", msg.text);
		return 1;
	}
	if (agent_snap_usage_start(&a) != AQ_OK) {
		UT_ERROR("agent_main", NULL, "cannot start the snapshot usage thread");
		return 1;
	}
	if (agent_svc_fence_start(&a.svc, &a.lock) != AQ_OK) {
		UT_ERROR("agent_main", NULL, "cannot start the service-address fence thread");
		return 1;
	}
	if (agent_reporter_start(&a) != AQ_OK) {
		UT_ERROR("agent_main", NULL, "cannot start the reporter");
		return 1;
	}
	UT_INFO("agent_main", NULL, "aquifer-agent %s: node %s in %s, API %s, NFS port %u, shelf %s", AQ_VERSION,
		a.cfg.node, a.cfg.location, a.cfg.listen, nfs_srv_port(a.nfs), a.cfg.shelf);
	sigwait(&set, &sig);
	UT_INFO("agent_main", NULL, "signal %d, stopping", sig);
	agent_shelf_quit(&a.shelf); /* an apply waiting for a lease lets go of apply_lock */
	agent_svc_fence_stop(&a.svc);
	pthread_mutex_lock(&a.lock);
	agent_svc_release_all(&a.svc); /* first: another node may take them at once */
	pthread_mutex_unlock(&a.lock);
	agent_reporter_stop(&a);
	agent_http_stop(&a);
	agent_snap_usage_stop(&a);
	agent_bkjob_stop(&a);
	smb_srv_free(a.smb);
	nfs_srv_free(a.nfs);
	nfs4_srv_free(a.nfs4);
	nlm_srv_free(a.nlm);     /* after the server that calls it */
	vol_store_free(a.store); /* after its front ends, before the tier it calls */
	tier_free(a.tier);
	json_decref(a.intent);
	json_decref(a.failed);
	json_decref(a.shelf_notes);
	agent_tls_cleanup(&a);
	agent_shelf_cleanup(&a.shelf);
	return 0;
}
