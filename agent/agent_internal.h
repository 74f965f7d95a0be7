/* agent_internal: what the pieces of aquifer-agent share. */
#ifndef AQ_AGENT_INTERNAL_H
#define AQ_AGENT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "agent/agent_shelf.h"
#include "agent/agent_svc.h"
#include "agent/nfs/nfs_srv.h"
#include "agent/nfs4/nfs4.h"
#include "agent/nfs/nlm.h"
#include "agent/snap/snap.h"
#include "agent/smb/smb_srv.h"
#include "agent/tier/tier.h"
#include "agent/vol/vol.h"
#include "api/api_error.h"
#include "tls/tls.h"
#include "util/ut_log.h"

/* aquiferd replicas --server may name */
#define AGENT_MAX_SERVERS 8

struct agent_cfg {
	char server[2048];       /* --server: aquiferd's base URLs, comma-separated (replicas) */
	char servers[AGENT_MAX_SERVERS][512]; /* the same, split and checked (agent_ctl_servers) */
	unsigned nservers;
	char join_token[4200];
	char node[64];
	char location[64];
	char shelf[1024];
	char listen[128];        /* agent API HOST:PORT */
	char nfs_listen[128];    /* NFS HOST:PORT */
	char smb_listen[128];    /* SMB HOST[:PORT] (port 445 by default); empty: no SMB server */
	char service_iface[16];  /* --service-interface: where service addresses go (agent_svc.h); "" none */
	char advertise[128];     /* host clients and aquiferd use (default: listen's host) */
	char state_dir[1024];
	char ca_file[1024];      /* verifies aquiferd's certificate (agent_tls.c) */
	double ceiling_mibps;
	double write_ceiling_mibps;
	int report_ms;
	unsigned test_report_delay_ms; /* --test-report-delay-ms: hold each full report (tests of the renewer) */
	int nfs_workers;
	unsigned tier_day_seconds;  /* length of a tiering "day" (default 86400) */
	unsigned snap_usage_s;      /* how often snapshots' usedBytes are measured (agent_snap.c) */
	struct tls_listen_limits api_limits;  /* the agent API's connections (agent_http.c) */
	struct nfs_srv_limits nfs_limits;     /* the NFS port's connections (nfs_srv.h) */
	unsigned nfs4_max_slots;              /* NFSv4.1 fore-channel slots per session at most (nfs4.h) */
	unsigned nlm_grace_s;                 /* NLM grace period after a restart (nlm.h) */
	unsigned lease_break_ms;              /* acknowledged oplock/lease break timeout (vol_lease.h) */
	enum ut_log_level log_level;          /* --log-level / log-level (default info) */
	unsigned ra_node_mib, ra_volume_mib;  /* read-ahead cache caps (agent/vol/vol_ra.h) */
	unsigned ra_workers;                  /* its prefetch threads, 1..VOL_RA_WORKERS_MAX */
};

struct agent {
	struct agent_cfg cfg;
	struct agent_shelf shelf;
	struct vol_store *store; /* the volume store; the front ends borrow it */
	struct nfs_srv *nfs;      /* the NFSv3 front end over store (and NFSv4.1's port) */
	struct nfs4_srv *nfs4;    /* NFSv4.1 state, served on nfs's port */
	struct nlm_srv *nlm;      /* NLM v4 + NSM for NFSv3 clients, served on nfs's port */
	struct smb_srv *smb;      /* the SMB front end over store (NULL without --smb-listen) */
	struct tier *tier;       /* the cold tier engine (issue 11) */
	struct obj_cfg cold;     /* the cold store in use (kind 0: none yet) */
	struct agent_http *http; /* the API's server (agent_http.c) */
	pthread_t reporter;       /* the full status report (agent_ctl.c) */
	pthread_t renewer;        /* a renewal while that one is late (agent_ctl.c) */
	pthread_mutex_t report_mu; /* one renewal of the node token on disk at a time */
	unsigned server_at;      /* the servers[] entry that answered last (agent_ctl.c) */
	bool stopping;
	/* One apply at a time, taken before lock. An apply holds lock only to
	 * read the applied state and to publish the new one, never across its
	 * pass over the volumes (seconds with thousands of them; an NVMe-oF
	 * attach may wait out another owner's lease timeout), so the status
	 * reports go on meanwhile and aquiferd does not take the node for
	 * DOWN (issue 22). intent, applied and cold change only under it. */
	pthread_mutex_t apply_lock;
	pthread_mutex_t lock;    /* guards everything below */
	char node_token[4200];
	char push_secret[80];
	char handle_key[80];     /* hex */
	json_t *intent;          /* the last applied intent (owned) */
	json_t *failed;          /* [{name, error}] of its volumes this node could not serve */
	json_t *shelf_notes;     /* {volume name: why its shelf storage is smaller than its capacity} (a->lock) */
	struct agent_svc svc;    /* the service addresses held (agent_svc.h) */
	int64_t svc_gen;         /* the generation whose volumes svc wants (set before applied) */
	int64_t applied;         /* its generation */
	int64_t reports_ok;
	int64_t report_ok_ms;    /* when the newest report answered 200 was sent (monotonic) */
	char last_error[512];
	/* TLS (agent_tls.c): set once at start or join, before the API serves */
	struct tls_ca *ca;       /* the cluster CA */
	char *tls_cert_pem, *tls_key_pem;
	/* snapshots (agent_snap.c) */
	enum snap_mech snap_mech; /* what new volumes of the shelf get */
	pthread_t snap_thread;   /* measures usedBytes */
	pthread_mutex_t snap_mu; /* guards the four below */
	pthread_cond_t snap_cv;
	bool snap_stop, snap_kick;
	struct agent_snap_used *snap_used;
	size_t nsnap_used;
	/* backups (agent_bkjob.c): the worker running the intent's jobs */
	struct agent_bkpq *bkpq;
};

/* agent_state.c: files in --state-dir, written atomically (temp, fsync,
 * rename, fsync of the folder), so a kill -9 leaves the old or the new file. */
int agent_state_write(const char *dir, const char *name, const json_t *doc, aq_msg *msg);
/* AQ_ENOENT when the file does not exist. */
int agent_state_read(const char *dir, const char *name, json_t **doc, aq_msg *msg);
/* Remove a file of --state-dir (gone already is fine), durably. */
int agent_state_remove(const char *dir, const char *name, aq_msg *msg);

/* agent_apply.c: apply an intent to the shelf, the tier and the volume
 * store (check the whole intent, then proceed). */
int agent_apply(struct agent *a, json_t *intent, aq_msg *msg);
/* The check half, without side effects (no shelf, store or tier needed):
 * decode each entry of vols against the intent contract (api_intent.h, its
 * snapshot fields into ss[i] when ss is not NULL) and
 * keep names, fsids and share names unique. served(arg, fsid) says whether
 * this node serves fsid now: of two volumes claiming one share name, the one
 * served keeps it. iv and ok hold json_array_size(vols) entries; ok[i] says
 * whether volume i may proceed; each one refused is appended to failed as
 * {"name", "error"}. */
struct api_intent_volume;
typedef bool (*agent_served_fn)(void *arg, const char *fsid);
struct api_intent_snapset;
void agent_apply_check(const json_t *vols, agent_served_fn served, void *arg, struct api_intent_volume *iv,
		       struct api_intent_snapset *ss, bool *ok, json_t *failed);

/* An NTFS volume's root made before its descriptor decided access has the
 * mode every volume root had, AGENT_NTFS_ROOT_OLD_MODE (unixPermissions'
 * default, API_INTENT_UNIX_PERMS), which refuses users the root's default
 * descriptor grants (smb_acl_root_default: Everyone full access). At
 * attach such a root, without a stored descriptor (VOL_SD_ATTR), is made
 * 0777 as new NTFS roots are; a root with a stored descriptor or another
 * mode (an admin's) is left alone. Decided once per root: the decision is
 * marked (AGENT_NTFS_ROOT_XA) and a marked root is never looked at again.
 * 1: made 0777, 0: left alone, or -errno (nothing changed). */
#define AGENT_NTFS_ROOT_OLD_MODE 0770u
#define AGENT_NTFS_ROOT_XA "trusted.aquifer.ntfsroot"
int agent_ntfs_root_settle(const char *root);

/* agent_snap.c: a volume entry's snapshot fields (api_intent.h), applied
 * with agent/snap/. prepare: a clone's folder from its source snapshot,
 * before the volume is attached. dir: the folder /.snapshot serves (made
 * if missing; "" when neither snapshotDirectory nor SMB's
 * SHOW_PREVIOUS_VERSIONS wants it; *hidden when only the latter does: no
 * .snapshot by name). apply: revert, deletes,
 * creates on the attached root, after the tier knows the volume; true when
 * the live tree was replaced (its used bytes must be counted again). status: "snapshots", "revertSeq" and
 * "snapshotBytes" (and "snapshotCount", for /metrics) of the volume with folder dir into doc. */
int agent_snap_prepare(struct agent *a, const struct api_intent_volume *v, const struct api_intent_snapset *ss,
		       aq_msg *msg);
void agent_snap_dir(struct agent *a, const struct api_intent_volume *v, const struct api_intent_snapset *ss,
		    char *out, size_t cap, bool *hidden);
bool agent_snap_apply(struct agent *a, const struct api_intent_volume *v, const struct api_intent_snapset *ss,
		      const char *root, const char *req);
/* The revert seq the volume's tree is at (vol_export_cfg.tree_seq). */
uint64_t agent_snap_tree_seq(struct agent *a, const struct api_intent_volume *v);
/* A deleted volume's snapshots go with it. */
void agent_snap_destroy(struct agent *a, const char *dir);
int agent_snap_status(struct agent *a, const char *dir, json_t *doc);
/* The usedBytes thread: measure now (after snapshots changed), start, stop. */
void agent_snap_kick(struct agent *a);
int agent_snap_usage_start(struct agent *a);
void agent_snap_usage_stop(struct agent *a);

/* agent_bkjob.c: the intent's "backups" (api_intent_backup.h) run by the
 * backup worker; start before the first apply, stop after the reporter. */
struct api_intent_backup;
int agent_bkjob_start(struct agent *a);
void agent_bkjob_stop(struct agent *a);
/* Decode the intent's "backups" (absent: none) into a new array (*out, free
 * it); a job that does not decode is left out and logged; AQ_EINVAL only
 * when "backups" is not an array of at most API_INTENT_MAX_BACKUPS. */
int agent_bkjob_check(const json_t *jobs, struct api_intent_backup **out, size_t *n, aq_msg *msg);
/* The jobs of the intent just applied (called with a->lock held is fine). */
void agent_bkjob_offer(struct agent *a, const struct api_intent_backup *jobs, size_t n, const char *req);
/* Adds "backups": the worker's reports, when it knows any jobs. */
void agent_bkjob_status(struct agent *a, json_t *doc);

/* agent_http.c: the agent's own API (PUT /v1/intent, GET /v1/status,
 * /healthz, /metrics). reserve: descriptors the rest of the process keeps
 * (cfg.api_limits.max_conns is lowered to fit RLIMIT_NOFILE without them).
 * The push secret must be set before: the API compares with its copy. */
int agent_http_start(struct agent *a, unsigned reserve, aq_msg *msg);
void agent_http_stop(struct agent *a);
/* The status report; volumes false: a renewal, without "volumes" and
 * "shelf" (api_intent.h), O(1) to build whatever the node serves. */
json_t *agent_status_doc(struct agent *a, bool volumes);

/* agent_tls.c: the agent's certificate (see its header comment). */
struct tls_ca;
struct MHD_Connection;
/* aquiferd is reached over https://. */
bool agent_tls_server(const struct agent *a);
/* agent.crt, agent.key and ca.crt from --state-dir, when there. */
int agent_tls_load(struct agent *a, aq_msg *msg);
void agent_tls_cleanup(struct agent *a);
/* A fresh key and a CSR for it naming the node (both PEM, caller frees). */
int agent_tls_csr(struct agent *a, char **key_pem, char **csr_pem, aq_msg *msg);
/* Keep key_pem and the join reply's certificate and caCertificate. */
int agent_tls_store(struct agent *a, const char *key_pem, const json_t *reply, aq_msg *msg);
/* libcurl towards aquiferd: verify it, present the agent's certificate. */
void agent_tls_curl(const struct agent *a, void *curl);
/* A failed call to aquiferd, explained (with the --ca-file remedy). */
int agent_tls_curl_fail(const struct agent *a, int cc, const char *detail, const char *url, aq_msg *msg);
/* Under TLS: the peer presented aquiferd's client certificate (req: the
 * request id its refusal is logged with). */
bool agent_tls_peer_ok(struct agent *a, struct MHD_Connection *conn, const char *url, const char *req);

/* agent_ctl.c: talking to aquiferd (libcurl). */
/* Split and check --server (1 to AGENT_MAX_SERVERS comma-separated http://
 * or https:// URLs, one scheme) into cfg->servers. */
int agent_ctl_servers(struct agent_cfg *cfg, aq_msg *msg);
int agent_join(struct agent *a, aq_msg *msg);
/* "HOST:PORT" of the SMB server as clients reach it (--advertise or
 * --smb-listen's host; the bound port once it serves), "" without
 * --smb-listen: the smbAddress of the join and of every report
 * (api_intent.h). */
void agent_smb_address(const struct agent *a, char *out, size_t cap);
/* The reporter (a full report every report_ms) and the renewer (a
 * renewal whenever the last answered report is API_AGENT_RENEW_LATE
 * intervals old): two threads, so liveness never waits for a report whose
 * size grows with the node's volumes. */
int agent_reporter_start(struct agent *a);
void agent_reporter_stop(struct agent *a);

#endif
