/* srv_cfg: aquiferd's configuration. Defaults, the config file ("key =
 * value" lines, '#' comments) and the command-line flags all go through
 * srv_cfg_set, so a key means the same wherever it is given and is checked
 * once. Keys: listen, db, key-file, state-dir, workers, read-workers, node-down-seconds, tls-cert,
 * tls-key, insecure-listen, public-url, metrics-auth, node-token-ttl, the
 * connection limits (max-connections, max-connections-per-ip,
 * header-timeout-seconds, idle-timeout-seconds; '_' may stand for '-'),
 * snapshot-schedule-period (srv_snapsched.h), backup-schedule-period
 * (srv_bkpsched.h), leader-lease-seconds and
 * leader-renew-seconds (srv_lead.h) and
 * math.<level>.<field> (api_math.h). Pure: no I/O but srv_cfg_load's read. */
#ifndef AQ_SRV_CFG_H
#define AQ_SRV_CFG_H

#include <stdbool.h>
#include <stddef.h>

#include "api/api_error.h"
#include "api/api_math.h"
#include "tls/tls.h"
#include "util/ut_log.h"

/* The most pushers --push-workers may ask for (srv_pusher.h). */
#define SRV_CFG_PUSH_WORKERS_MAX 64

struct srv_cfg {
	char listen[128];
	char db_path[1024];
	char key_file[1024];
	/* --state-dir: the folder of aquiferd.key and the cluster CA (default:
	 * the SQLite file's folder; required with a PostgreSQL --db) */
	char state_dir[1024];
	int workers;
	/* read-workers: threads serving GETs only (srv_http.h; 0: GETs
	 * share --workers), default 2 */
	int read_workers;
	int push_workers;          /* the reconciler's pushers, nodes visited at once (srv_pusher.h), 1..SRV_CFG_PUSH_WORKERS_MAX */
	int node_down_ms;          /* a node silent this long is DOWN (default 10 s) */
	int repush_ms;             /* re-push unchanged state this often (default 10 s) */
	/* reconcile-sweep-seconds: every node's intent is rebuilt this often,
	 * marked dirty or not, a safety net under the dirty marks (default 60 s) */
	int sweep_ms;
	char tls_cert[1024];       /* --tls-cert: PEM, serve HTTPS (srv_ca.h) */
	char tls_key[1024];        /* --tls-key */
	bool insecure_listen;      /* plain HTTP on a non-loopback --listen */
	char public_url[512];      /* --public-url: how nodes reach aquiferd ("" until serve derives it) */
	bool metrics_auth;         /* --metrics-auth: GET /metrics needs a metrics or cluster-admin token */
	long node_token_ttl;       /* --node-token-ttl: lifetime of a node token, seconds */
	struct tls_listen_limits http; /* connection limits and timeouts (srv_http.c) */
	enum ut_log_level log_level; /* --log-level: what the log keeps (default info) */
	/* snapshot-schedule-period: seconds an hour lasts on the snapshot
	 * scheduler's clock (a test clock; 0, the default: real time) */
	int snapshot_schedule_period;
	/* backup-schedule-period: seconds a day lasts on the backup scheduler's
	 * clock (a test clock; 0, the default: real time) */
	int backup_schedule_period;
	/* leader-lease-seconds / leader-renew-seconds (srv_lead.h): the leader
	 * lease lasts this long and is renewed this often (default 6 s / 2 s) */
	int lead_lease_ms;
	int lead_renew_ms;
	struct api_math_params math;
};

/* The defaults (listen 127.0.0.1:8080, 4 workers, ...). */
void srv_cfg_defaults(struct srv_cfg *cfg);
/* Set key to val. AQ_EINVAL with a message naming the key and the range
 * for a bad value or an unknown key. */
int srv_cfg_set(struct srv_cfg *cfg, const char *key, const char *val, aq_msg *msg);
/* What no single key can check: leader-renew-seconds below
 * leader-lease-seconds (AQ_EINVAL naming both). serve calls it first, so
 * a refused start creates nothing. */
int srv_cfg_check(const struct srv_cfg *cfg, aq_msg *msg);
/* Apply every line of the config file at path ("FILE:LINE: why" on error). */
int srv_cfg_load(struct srv_cfg *cfg, const char *path, aq_msg *msg);

/* Fill state_dir when it was not given: the folder of the SQLite file db
 * names. A PostgreSQL db has no local folder: AQ_EINVAL asking for
 * state-dir. */
int srv_cfg_state_dir(struct srv_cfg *cfg, aq_msg *msg);

/* --public-url: an http(s) URL with a host and only URL characters. */
int srv_cfg_public_url_check(const char *url, aq_msg *msg);
/* The public URL when none is configured: the scheme aquiferd serves and
 * --listen, with hostname for a wildcard address (0.0.0.0, [::]). */
void srv_cfg_public_url_default(const char *listen, bool tls, const char *hostname, char *out, size_t cap);

#endif
