/* srv_cfg: defaults, the config file and the key = value setters of
 * aquiferd's configuration (see srv_cfg.h). */
#include "server/srv_cfg.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "util/ut_conf.h"
#include "util/ut_hostport.h"
#include "util/ut_log.h"

void srv_cfg_defaults(struct srv_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->math = api_math_defaults;
	snprintf(cfg->listen, sizeof(cfg->listen), "127.0.0.1:8080");
	cfg->workers = 4;
	cfg->read_workers = 2;
	cfg->push_workers = 8;
	cfg->node_down_ms = 10000;
	cfg->repush_ms = 10000;
	cfg->sweep_ms = 60000;
	cfg->lead_lease_ms = 6000;
	cfg->lead_renew_ms = 2000;
	cfg->metrics_auth = true;
	cfg->node_token_ttl = 30L * 86400;
	cfg->http = (struct tls_listen_limits){ .max_conns = 4096, .per_ip = 128, .header_s = 10, .idle_s = 120 };
	cfg->log_level = UT_LOG_INFO;
}

/* The connection limits (tls.h, struct tls_listen_limits): AQ_ENOENT when
 * key is not one of them. */
static int cfg_limit(struct srv_cfg *cfg, const char *key, const char *val, aq_msg *msg)
{
	static const struct {
		const char *name;
		size_t off;
		long max;
	} keys[] = {
		{ "max-connections", offsetof(struct tls_listen_limits, max_conns), 1000000 },
		{ "max-connections-per-ip", offsetof(struct tls_listen_limits, per_ip), 1000000 },
		{ "header-timeout-seconds", offsetof(struct tls_listen_limits, header_s), 3600 },
		{ "idle-timeout-seconds", offsetof(struct tls_listen_limits, idle_s), 86400 },
	};
	char name[64], *end;
	long n;

	snprintf(name, sizeof(name), "%s", key);
	for (char *c = name; *c; c++) /* max_connections = max-connections */
		if (*c == '_')
			*c = '-';
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strcmp(name, keys[i].name) != 0)
			continue;
		n = strtol(val, &end, 10);
		if (!*val || *end || n < 1 || n > keys[i].max)
			return aq_fail(msg, AQ_EINVAL, "%s must be an integer within 1..%ld, got \"%s\"", keys[i].name,
				       keys[i].max, val);
		*(unsigned *)(void *)((char *)&cfg->http + keys[i].off) = (unsigned)n;
		return AQ_OK;
	}
	return AQ_ENOENT;
}

int srv_cfg_set(struct srv_cfg *cfg, const char *key, const char *val, aq_msg *msg)
{
	char *end;
	long n;
	int rc;

	if (strcmp(key, "listen") == 0)
		snprintf(cfg->listen, sizeof(cfg->listen), "%s", val);
	else if (strcmp(key, "log-level") == 0 || strcmp(key, "log_level") == 0)
		return ut_log_level_parse(val, &cfg->log_level, msg);
	else if (strcmp(key, "db") == 0)
		snprintf(cfg->db_path, sizeof(cfg->db_path), "%s", val);
	else if (strcmp(key, "key-file") == 0 || strcmp(key, "key_file") == 0)
		snprintf(cfg->key_file, sizeof(cfg->key_file), "%s", val);
	else if (strcmp(key, "state-dir") == 0 || strcmp(key, "state_dir") == 0) {
		if (!*val || strlen(val) >= sizeof(cfg->state_dir))
			return aq_fail(msg, AQ_EINVAL, "state-dir must be a folder name of 1 to %zu bytes", sizeof(cfg->state_dir) - 1);
		snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%s", val);
	}
	else if (strcmp(key, "tls-cert") == 0 || strcmp(key, "tls_cert") == 0)
		snprintf(cfg->tls_cert, sizeof(cfg->tls_cert), "%s", val);
	else if (strcmp(key, "tls-key") == 0 || strcmp(key, "tls_key") == 0)
		snprintf(cfg->tls_key, sizeof(cfg->tls_key), "%s", val);
	else if (strcmp(key, "insecure-listen") == 0 || strcmp(key, "insecure_listen") == 0) {
		if (strcmp(val, "true") != 0 && strcmp(val, "false") != 0)
			return aq_fail(msg, AQ_EINVAL, "insecure-listen must be true or false, got \"%s\"", val);
		cfg->insecure_listen = strcmp(val, "true") == 0;
	} else if (strcmp(key, "public-url") == 0 || strcmp(key, "public_url") == 0) {
		if (strlen(val) >= sizeof(cfg->public_url))
			return aq_fail(msg, AQ_EINVAL, "public-url is longer than %zu bytes", sizeof(cfg->public_url) - 1);
		if (srv_cfg_public_url_check(val, msg) != AQ_OK)
			return AQ_EINVAL;
		snprintf(cfg->public_url, sizeof(cfg->public_url), "%s", val);
	} else if (strcmp(key, "metrics-auth") == 0 || strcmp(key, "metrics_auth") == 0) {
		if (strcmp(val, "true") != 0 && strcmp(val, "false") != 0)
			return aq_fail(msg, AQ_EINVAL, "metrics-auth must be true or false, got \"%s\"", val);
		cfg->metrics_auth = strcmp(val, "true") == 0;
	} else if (strcmp(key, "node-token-ttl") == 0 || strcmp(key, "node_token_ttl") == 0) {
		n = strtol(val, &end, 10);
		if (!*val || *end || n < 10 || n > 366L * 86400)
			return aq_fail(msg, AQ_EINVAL, "node-token-ttl must be a number of seconds within 10..%ld, got \"%s\"",
				       366L * 86400, val);
		cfg->node_token_ttl = n;
	} else if (strcmp(key, "node-down-seconds") == 0 || strcmp(key, "node_down_seconds") == 0) {
		n = strtol(val, &end, 10);
		if (!*val || *end || n < 1 || n > 3600)
			return aq_fail(msg, AQ_EINVAL, "node-down-seconds must be an integer within 1..3600, got \"%s\"", val);
		cfg->node_down_ms = (int)n * 1000;
	} else if (strcmp(key, "reconcile-sweep-seconds") == 0 || strcmp(key, "reconcile_sweep_seconds") == 0) {
		n = strtol(val, &end, 10);
		if (!*val || *end || n < 1 || n > 3600)
			return aq_fail(msg, AQ_EINVAL, "reconcile-sweep-seconds must be an integer within 1..3600, got \"%s\"",
				       val);
		cfg->sweep_ms = (int)n * 1000;
	} else if (strcmp(key, "snapshot-schedule-period") == 0 || strcmp(key, "snapshot_schedule_period") == 0) {
		n = strtol(val, &end, 10);
		if (!*val || *end || n < 0 || n > 3600)
			return aq_fail(msg, AQ_EINVAL, "snapshot-schedule-period must be seconds within 0..3600 (0: real time), got \"%s\"", val);
		cfg->snapshot_schedule_period = (int)n;
	} else if (strcmp(key, "backup-schedule-period") == 0 || strcmp(key, "backup_schedule_period") == 0) {
		n = strtol(val, &end, 10);
		if (!*val || *end || n < 0 || n > 86400)
			return aq_fail(msg, AQ_EINVAL, "backup-schedule-period must be seconds within 0..86400 (0: real time), got \"%s\"", val);
		cfg->backup_schedule_period = (int)n;
	} else if (strcmp(key, "leader-lease-seconds") == 0 || strcmp(key, "leader_lease_seconds") == 0) {
		n = strtol(val, &end, 10);
		if (!*val || *end || n < 2 || n > 600)
			return aq_fail(msg, AQ_EINVAL, "leader-lease-seconds must be an integer within 2..600, got \"%s\"", val);
		cfg->lead_lease_ms = (int)n * 1000;
	} else if (strcmp(key, "leader-renew-seconds") == 0 || strcmp(key, "leader_renew_seconds") == 0) {
		n = strtol(val, &end, 10);
		if (!*val || *end || n < 1 || n > 300)
			return aq_fail(msg, AQ_EINVAL, "leader-renew-seconds must be an integer within 1..300, got \"%s\"", val);
		cfg->lead_renew_ms = (int)n * 1000;
	} else if (strcmp(key, "workers") == 0) {
		n = strtol(val, &end, 10);
		if (!*val || *end || n < 1 || n > 256)
			return aq_fail(msg, AQ_EINVAL, "workers must be an integer within 1..256, got \"%s\"", val);
		cfg->workers = (int)n;
	} else if (strcmp(key, "read-workers") == 0 || strcmp(key, "read_workers") == 0) {
		n = strtol(val, &end, 10);
		if (!*val || *end || n < 0 || n > 256)
			return aq_fail(msg, AQ_EINVAL, "read-workers must be an integer within 0..256, got \"%s\"", val);
		cfg->read_workers = (int)n;
	} else if (strcmp(key, "push-workers") == 0 || strcmp(key, "push_workers") == 0) {
		n = strtol(val, &end, 10);
		if (!*val || *end || n < 1 || n > SRV_CFG_PUSH_WORKERS_MAX)
			return aq_fail(msg, AQ_EINVAL, "push-workers must be an integer within 1..%d, got \"%s\"",
				       SRV_CFG_PUSH_WORKERS_MAX, val);
		cfg->push_workers = (int)n;
	} else if ((rc = cfg_limit(cfg, key, val, msg)) != AQ_ENOENT) {
		return rc;
	} else if (strncmp(key, "math.", 5) == 0)
		return api_math_set(&cfg->math, key + 5, val, msg);
	else
		return aq_fail(msg, AQ_EINVAL, "unknown key \"%s\"", key);
	return AQ_OK;
}

int srv_cfg_check(const struct srv_cfg *cfg, aq_msg *msg)
{
	if (cfg->lead_renew_ms >= cfg->lead_lease_ms)
		return aq_fail(msg, AQ_EINVAL, "leader-renew-seconds (%d) must be less than leader-lease-seconds (%d)",
			       cfg->lead_renew_ms / 1000, cfg->lead_lease_ms / 1000);
	return AQ_OK;
}

static int cfg_line(void *arg, const char *key, const char *value, aq_msg *msg)
{
	return srv_cfg_set(arg, key, value, msg) == AQ_OK ? AQ_OK : AQ_EINVAL;
}

/* The file format is util/ut_conf's (flags 0: aquiferd's math.* keys hold
 * '_'); a refusal reads "FILE:LINE: reason". */
int srv_cfg_state_dir(struct srv_cfg *cfg, aq_msg *msg)
{
	const char *file = db_file_path(cfg->db_path), *slash;

	if (cfg->state_dir[0])
		return AQ_OK;
	if (!file)
		return aq_fail(msg, AQ_EINVAL, "a PostgreSQL --db has no local folder: give --state-dir DIR"
			       " (the folder of aquiferd.key and the cluster CA; the same files on every replica)");
	slash = strrchr(file, '/');
	if (slash == file)
		snprintf(cfg->state_dir, sizeof(cfg->state_dir), "/");
	else if (slash)
		snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%.*s", (int)(slash - file), file);
	else
		snprintf(cfg->state_dir, sizeof(cfg->state_dir), ".");
	return AQ_OK;
}

int srv_cfg_load(struct srv_cfg *cfg, const char *path, aq_msg *msg)
{
	return ut_conf_load(path, 0, cfg_line, cfg, msg);
}

/* ---- the public URL (pure) ---- */

int srv_cfg_public_url_check(const char *url, aq_msg *msg)
{
	const char *host = strncmp(url, "https://", 8) == 0 ? url + 8 : strncmp(url, "http://", 7) == 0 ? url + 7 : NULL;

	if (!host)
		return aq_fail(msg, AQ_EINVAL, "public-url must start with https:// or http://, got \"%s\"", url);
	if (!*host || *host == '/')
		return aq_fail(msg, AQ_EINVAL, "public-url \"%s\" names no host", url);
	for (const char *p = url; *p; p++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%", *p))
			return aq_fail(msg, AQ_EINVAL, "public-url may hold only URL characters (RFC 3986), got \"%s\"", url);
	return AQ_OK;
}

void srv_cfg_public_url_default(const char *listen, bool tls, const char *hostname, char *out, size_t cap)
{
	struct ut_hostport hp;
	bool wild = ut_hostport_parse(listen, 0, UT_HP_PORT0, &hp, NULL) == AQ_OK &&
		    (strcmp(hp.host, hp.v6 ? "::" : "0.0.0.0") == 0);

	if (wild)
		snprintf(out, cap, "%s://%s:%u", tls ? "https" : "http", hostname, (unsigned)hp.port);
	else
		snprintf(out, cap, "%s://%s", tls ? "https" : "http", listen);
}
