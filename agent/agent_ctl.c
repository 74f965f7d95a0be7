/* agent_ctl: the agent's calls to aquiferd (libcurl): join once, then a
 * status report every report_ms. The reporter runs on its own thread and
 * keeps trying while aquiferd is away; the data path never waits for it.
 * A renewer thread sends a renewal (a report without the volumes) while
 * the full report is late, so liveness never waits for a report whose
 * size grows with the node's volumes (api_intent.h).
 *
 * A join starts a new incarnation of the node: aquiferd's generations start
 * over, so the intent.json of an earlier one (same name, deleted since) is
 * removed before the credentials are written; its generation would outrank
 * every push. The node token has a bounded lifetime: a report's answer
 * carries its successor once half of it has passed, which is kept in
 * credentials.json (atomically) before it is used. */
#include "agent/agent_internal.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api_intent.h"
#include "api/api_schema.h"
#include "tls/tls.h"
#include "util/ut_buf.h"
#include "util/ut_hostport.h"
#include "util/ut_clock.h"
#include "util/ut_log.h"

/* The largest answer of aquiferd the agent reads (join, report). */
#define CTL_REPLY_MAX (1u << 20)

int agent_ctl_servers(struct agent_cfg *cfg, aq_msg *msg)
{
	const char *p = cfg->server;

	cfg->nservers = 0;
	while (*p) {
		size_t n = strcspn(p, ","), skip = strspn(p, " \t");
		char *u;

		if (skip >= n)
			return aq_fail(msg, AQ_EINVAL, "--server: an empty URL in \"%s\"", cfg->server);
		if (cfg->nservers == AGENT_MAX_SERVERS)
			return aq_fail(msg, AQ_EINVAL, "--server: at most %d URLs", AGENT_MAX_SERVERS);
		if (n - skip >= sizeof(cfg->servers[0]))
			return aq_fail(msg, AQ_EINVAL, "--server: a URL longer than %zu bytes", sizeof(cfg->servers[0]) - 1);
		u = cfg->servers[cfg->nservers];
		snprintf(u, sizeof(cfg->servers[0]), "%.*s", (int)(n - skip), p + skip);
		for (size_t l = strlen(u); l > 0 && (u[l - 1] == ' ' || u[l - 1] == '\t' || u[l - 1] == '/'); l--)
			u[l - 1] = '\0';
		if (strncmp(u, "https://", 8) != 0 && strncmp(u, "http://", 7) != 0)
			return aq_fail(msg, AQ_EINVAL, "--server: \"%s\" is not an http:// or https:// URL", u);
		if ((strncmp(u, "https://", 8) == 0) != (strncmp(cfg->servers[0], "https://", 8) == 0))
			return aq_fail(msg, AQ_EINVAL, "--server: every URL takes the same scheme (\"%s\", \"%s\")",
				       cfg->servers[0], u);
		cfg->nservers++;
		p += n;
		if (*p == ',' && !*++p)
			return aq_fail(msg, AQ_EINVAL, "--server: an empty URL in \"%s\"", cfg->server);
	}
	return cfg->nservers ? AQ_OK : aq_fail(msg, AQ_EINVAL, "--server names no URL");
}

/* POST body to one aquiferd URL + path with a bearer token; *reply gets the
 * parsed answer (any status). Returns the HTTP status or a negative code.
 * reuse: the caller's handle (reset here; its open connections and TLS
 * sessions stay, so a report every 2 s does not pay a handshake each
 * time), or NULL for a one-off handle. */
static long ctl_post_one(const struct agent *a, CURL *reuse, const char *base, const char *path, const char *token,
			 const char *text, long timeout_ms, json_t **reply, aq_msg *msg)
{
	char url[800], cerr[CURL_ERROR_SIZE] = "";
	struct ut_buf buf;
	struct curl_slist *h = NULL;
	CURL *c = reuse ? reuse : curl_easy_init();
	long code = AQ_EUNAVAIL;
	CURLcode cc;

	ut_buf_init(&buf, CTL_REPLY_MAX);
	*reply = NULL;
	if (reuse)
		curl_easy_reset(reuse);
	if (!c)
		goto out;
	snprintf(url, sizeof(url), "%s%s", base, path);
	tls_curl_json(c, NULL, url, token, text, &buf, cerr, &h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	agent_tls_curl(a, c);
	cc = curl_easy_perform(c);
	if (cc != CURLE_OK) {
		code = agent_tls_curl_fail(a, (int)cc, cerr, url, msg);
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	*reply = ut_buf_len(&buf) ? json_loads(ut_buf_str(&buf), 0, NULL) : NULL;
	if (code != 200)
		aq_fail(msg, AQ_EIO, "%s: HTTP %ld: %s", url, code,
			api_json_str(json_object_get(*reply, "error"), "message", ut_buf_str(&buf)));
out:
	curl_slist_free_all(h);
	if (c && c != reuse)
		curl_easy_cleanup(c);
	ut_buf_cleanup(&buf);
	return code;
}

/* POST body to aquiferd: to the replica that answered last, and while one
 * cannot be reached or answers 5xx, to the next of --server's URLs (every
 * replica serves the agent routes; a 4xx is an answer and final). */
static long ctl_post(struct agent *a, CURL *reuse, const char *path, const char *token, const json_t *body,
		     long timeout_ms, json_t **reply, aq_msg *msg)
{
	char *text = json_dumps(body, JSON_COMPACT);
	unsigned n = a->cfg.nservers ? a->cfg.nservers : 1, at = __atomic_load_n(&a->server_at, __ATOMIC_RELAXED);
	long code = AQ_ENOMEM;

	*reply = NULL;
	for (unsigned i = 0; text && i < n; i++) {
		unsigned k = (at + i) % n;

		json_decref(*reply);
		code = ctl_post_one(a, reuse, a->cfg.nservers ? a->cfg.servers[k] : a->cfg.server, path, token, text,
				    timeout_ms, reply, msg);
		if (code >= 0 && code < 500) {
			if (k != at)
				UT_INFO("agent_ctl", NULL, "aquiferd at %s answers (%u of %u URLs)", a->cfg.servers[k],
					k + 1, n);
			__atomic_store_n(&a->server_at, k, __ATOMIC_RELAXED);
			break;
		}
	}
	free(text);
	return code;
}

/* The host clients and aquiferd reach: --advertise, or --listen's host. */
static void host_of(const struct ut_hostport *listen, const char *advertise, char *out, size_t cap)
{
	if (advertise[0])
		snprintf(out, cap, "%s", advertise);
	else
		snprintf(out, cap, listen->v6 ? "[%s]" : "%s", listen->host);
}

void agent_smb_address(const struct agent *a, char *out, size_t cap)
{
	struct ut_hostport hp;
	char host[300];
	unsigned port;

	out[0] = '\0';
	if (!a->cfg.smb_listen[0] ||
	    ut_hostport_parse(a->cfg.smb_listen, SMB_SRV_PORT, UT_HP_PORT0, &hp, NULL) != AQ_OK)
		return;
	/* the bound port once serving (--smb-listen HOST:0 lets the kernel pick) */
	port = a->smb && smb_srv_port(a->smb) ? smb_srv_port(a->smb) : hp.port;
	if (!port)
		return;
	host_of(&hp, a->cfg.advertise, host, sizeof(host));
	snprintf(out, cap, "%s:%u", host, port);
}

int agent_join(struct agent *a, aq_msg *msg)
{
	char host[300], addr[400], nfs[400], smb[400];
	struct ut_hostport api, nfs_hp;
	json_t *body, *reply = NULL, *creds = NULL;
	char *key = NULL, *csr = NULL;
	long code;
	int rc = AQ_OK;

	if ((rc = ut_hostport_parse(a->cfg.listen, 0, UT_HP_PORT0, &api, msg)) != AQ_OK ||
	    (rc = ut_hostport_parse(a->cfg.nfs_listen, 2049, UT_HP_PORT0, &nfs_hp, msg)) != AQ_OK)
		return rc;
	host_of(&api, a->cfg.advertise, host, sizeof(host));
	/* an https:// aquiferd signs our key: we serve HTTPS too */
	snprintf(addr, sizeof(addr), "%s://%s:%u", agent_tls_server(a) ? "https" : "http", host, (unsigned)api.port);
	if (agent_tls_server(a) && (rc = agent_tls_csr(a, &key, &csr, msg)) != AQ_OK)
		return rc;
	snprintf(nfs, sizeof(nfs), "%s:%u", host,
		 a->nfs && nfs_srv_port(a->nfs) ? nfs_srv_port(a->nfs) : (unsigned)nfs_hp.port);
	body = json_pack("{s:s,s:s,s:s,s:s,s:f,s:f,s:s}", "node", a->cfg.node, "location", a->cfg.location,
			 "address", addr, "nfsAddress", nfs, "throughputCeilingMibps", a->cfg.ceiling_mibps,
			 "writeThroughputCeilingMibps", a->cfg.write_ceiling_mibps, "agentVersion", AQ_VERSION);
	agent_smb_address(a, smb, sizeof(smb));
	if (!body || (csr && json_object_set_new(body, "csr", json_string(csr)) != 0) ||
	    (*smb && json_object_set_new(body, API_INTENT_SMB_ADDRESS, json_string(smb)) != 0)) {
		rc = AQ_ENOMEM;
		goto out;
	}
	code = ctl_post(a, NULL, "/v1/agent/join", a->cfg.join_token, body, API_AGENT_CALL_MS, &reply, msg);
	if (code != 200) {
		rc = code < 0 ? (int)code : code == 401 || code == 403 ? AQ_EUNAUTH : AQ_EIO;
		goto out;
	}
	creds = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "node", a->cfg.node, "location", a->cfg.location,
			  "nodeToken", api_json_str(reply, "nodeToken", ""), "nodeTokenExpireTime",
			  api_json_str(reply, "nodeTokenExpireTime", ""), "pushSecret",
			  api_json_str(reply, "pushSecret", ""), "handleKey", api_json_str(reply, "handleKey", ""));
	if (!creds || !*api_json_str(creds, "pushSecret", "") || strlen(api_json_str(creds, "handleKey", "")) != 64) {
		rc = aq_fail(msg, AQ_EIO, "join answer lacks credentials");
		goto out;
	}
	/* the old intent, then the certificate: credentials.json is what says
	 * "joined", and a joined node serves only what this incarnation pushes */
	if ((rc = agent_state_remove(a->cfg.state_dir, "intent.json", msg)) != AQ_OK ||
	    (key && (rc = agent_tls_store(a, key, reply, msg)) != AQ_OK) ||
	    (rc = agent_state_write(a->cfg.state_dir, "credentials.json", creds, msg)) != AQ_OK)
		goto out;
	pthread_mutex_lock(&a->lock);
	json_decref(a->intent);
	a->intent = NULL;
	a->applied = 0;
	a->svc_gen = 0;
	snprintf(a->node_token, sizeof(a->node_token), "%s", api_json_str(creds, "nodeToken", ""));
	snprintf(a->push_secret, sizeof(a->push_secret), "%s", api_json_str(creds, "pushSecret", ""));
	snprintf(a->handle_key, sizeof(a->handle_key), "%s", api_json_str(creds, "handleKey", ""));
	pthread_mutex_unlock(&a->lock);
out:
	json_decref(body);
	json_decref(reply);
	json_decref(creds);
	free(csr);
	tls_key_free(key);
	return rc;
}

/* A report's answer renewed the node token: keep it, then use it. */
static void renew_token(struct agent *a, const json_t *reply)
{
	const char *tok = api_json_str(reply, "nodeToken", "");
	json_t *creds = NULL;
	aq_msg msg = { .text = "" };

	if (!*tok || strlen(tok) >= sizeof(a->node_token))
		return;
	/* the reporter and the renewer both may be answered a new token */
	pthread_mutex_lock(&a->report_mu);
	if (agent_state_read(a->cfg.state_dir, "credentials.json", &creds, &msg) != AQ_OK ||
	    json_object_set_new(creds, "nodeToken", json_string(tok)) != 0 ||
	    json_object_set_new(creds, "nodeTokenExpireTime", json_string(api_json_str(reply, "nodeTokenExpireTime", ""))) != 0 ||
	    agent_state_write(a->cfg.state_dir, "credentials.json", creds, &msg) != AQ_OK) {
		UT_ERROR("agent_ctl", NULL, "cannot keep the renewed node token (%s); keeping the old one", msg.text);
		pthread_mutex_unlock(&a->report_mu);
		json_decref(creds);
		return;
	}
	json_decref(creds);
	pthread_mutex_lock(&a->lock);
	snprintf(a->node_token, sizeof(a->node_token), "%s", tok);
	pthread_mutex_unlock(&a->lock);
	pthread_mutex_unlock(&a->report_mu);
	UT_INFO("agent_ctl", NULL, "node token renewed (valid until %s)", api_json_str(reply, "nodeTokenExpireTime", "?"));
}

/* One status report (st, a full one or a renewal) and what its answer
 * renews: the node token, the service addresses' lease (from the newest
 * report answered only: an older one answered late must not shorten it),
 * and report_ok_ms, the renewer's clock. Returns the HTTP status or a
 * negative code; msg says why when not 200. */
static long ctl_report(struct agent *a, CURL *conn, const json_t *st, long timeout_ms, const char *req, aq_msg *msg)
{
	int64_t sent = (int64_t)ut_clock_mono_ms(); /* the lease counts from here (agent_svc.h) */
	json_t *reply = NULL;
	char token[4200];
	long code;

	pthread_mutex_lock(&a->lock);
	snprintf(token, sizeof(token), "%s", a->node_token);
	agent_svc_announce(&a->svc, sent);
	pthread_mutex_unlock(&a->lock);
	code = st ? ctl_post(a, conn, "/v1/agent/status", token, st, timeout_ms, &reply, msg) : AQ_ENOMEM;
	UT_DEBUG("agent_ctl", req, "status report: %ld", code);
	if (code == 200) {
		renew_token(a, reply);
		pthread_mutex_lock(&a->lock);
		a->reports_ok++;
		if (sent >= a->report_ok_ms) {
			a->report_ok_ms = sent;
			/* svc_gen, not applied: an apply in progress wants its
			 * addresses before it publishes its generation */
			agent_svc_renew(&a->svc, sent, api_json_int64(reply, "serviceAddressLeaseMs", 0),
					api_json_int64(reply, "generation", -1) == a->svc_gen, req);
		}
		pthread_mutex_unlock(&a->lock);
	}
	json_decref(reply);
	return code;
}

/* Sleep ms in steps that notice a stop. */
static void ctl_nap(struct agent *a, int ms)
{
	for (int slept = 0; slept < ms && !__atomic_load_n(&a->stopping, __ATOMIC_RELAXED); slept += 50)
		usleep(50 * 1000);
}

static int ctl_every_ms(struct agent *a)
{
	int wait;

	pthread_mutex_lock(&a->lock);
	wait = agent_svc_report_ms(&a->svc, a->cfg.report_ms);
	pthread_mutex_unlock(&a->lock);
	return wait;
}

/* The full report: every volume the node serves, with its figures, so its
 * timeout grows with them (api_agent_call_ms). */
static void *reporter(void *arg)
{
	struct agent *a = arg;
	CURL *conn = curl_easy_init(); /* kept: one connection for every report */
	bool was_ok = true;
	unsigned long long reports = 0;

	while (!__atomic_load_n(&a->stopping, __ATOMIC_RELAXED)) {
		json_t *st = agent_status_doc(a, true);
		aq_msg msg = { .text = "" };
		char req[32];
		long code;

		snprintf(req, sizeof(req), "report-%llu", ++reports);
		if (a->cfg.test_report_delay_ms)
			ctl_nap(a, (int)a->cfg.test_report_delay_ms);
		code = ctl_report(a, conn, st, api_agent_call_ms(json_array_size(json_object_get(st, "volumes"))), req,
				  &msg);
		if (code == 200) {
			if (!was_ok)
				UT_INFO("agent_ctl", req, "reaching aquiferd again");
			was_ok = true;
		} else if (was_ok) {
			UT_WARN("agent_ctl", req, "status report failed (%s); serving the last applied state and retrying",
				msg.text);
			was_ok = false;
		}
		json_decref(st);
		ctl_nap(a, ctl_every_ms(a));
	}
	if (conn)
		curl_easy_cleanup(conn);
	return NULL;
}

/* The renewal: while the full report is late (its node serves many
 * volumes, aquiferd is slow to read them), a report without them keeps the
 * node alive, its applied generation and failed volumes known and its
 * service addresses' lease renewed (issue 22: a node with 11,000 volumes
 * went DOWN while its reports were under way). Silent when the reporter
 * answers in time; its failures are the reporter's to tell. */
static void *renewer(void *arg)
{
	struct agent *a = arg;
	CURL *conn = curl_easy_init();
	unsigned long long renewals = 0;
	int64_t tried = 0;

	while (!__atomic_load_n(&a->stopping, __ATOMIC_RELAXED)) {
		int64_t now = (int64_t)ut_clock_mono_ms(), ok;
		int every = ctl_every_ms(a);

		pthread_mutex_lock(&a->lock);
		ok = a->report_ok_ms;
		pthread_mutex_unlock(&a->lock);
		if ((double)(now - ok) >= API_AGENT_RENEW_LATE * every && now - tried >= every) {
			json_t *st = agent_status_doc(a, false);
			aq_msg msg = { .text = "" };
			char req[32];

			tried = now;
			snprintf(req, sizeof(req), "renewal-%llu", ++renewals);
			if (ctl_report(a, conn, st, API_AGENT_CALL_MS, req, &msg) != 200)
				UT_DEBUG("agent_ctl", req, "renewal failed: %s", msg.text);
			json_decref(st);
		}
		ctl_nap(a, 100);
	}
	if (conn)
		curl_easy_cleanup(conn);
	return NULL;
}

int agent_reporter_start(struct agent *a)
{
	/* the join (or the start) counts as the last word: the renewer starts
	 * once the first report is late */
	pthread_mutex_lock(&a->lock);
	a->report_ok_ms = (int64_t)ut_clock_mono_ms();
	pthread_mutex_unlock(&a->lock);
	if (pthread_create(&a->reporter, NULL, reporter, a) != 0)
		return AQ_EINTERNAL;
	if (pthread_create(&a->renewer, NULL, renewer, a) != 0) {
		__atomic_store_n(&a->stopping, true, __ATOMIC_RELAXED);
		pthread_join(a->reporter, NULL);
		return AQ_EINTERNAL;
	}
	return AQ_OK;
}

void agent_reporter_stop(struct agent *a)
{
	__atomic_store_n(&a->stopping, true, __ATOMIC_RELAXED);
	pthread_join(a->reporter, NULL);
	pthread_join(a->renewer, NULL);
}
