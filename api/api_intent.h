/* api_intent: the contract between aquiferd and its agents, in one place.
 *
 * The intent is a node's desired state (PUT /v1/intent on the agent): every
 * volume it serves, with export rules, QoS and tiering, plus the volumes
 * whose data it deletes. The reconciler encodes each volume from its API
 * document (api_intent_volume_from_api, then api_intent_volume_encode); the
 * agent decodes and checks it (api_intent_volume_decode) before it touches
 * anything. Both sides, and the API validation of a volume, go through the
 * same functions and the limits below, so a volume the API accepts always
 * fits the intent, the agent and the volume store (agent/vol/vol.h takes its
 * array sizes from here): a limit exists once.
 *
 * Limits follow GCNV where it publishes one (20 export rules per volume;
 * shareName 1-63 characters). allowedClients is bounded by entries and bytes
 * so that the volume store holds every rule in fixed arrays that it copies
 * on every apply (a node rebuilds its whole export set per intent, so each
 * byte here is paid per volume per push); GCNV's 4,096 characters per rule
 * is wider, and a longer list is refused at the API with a message naming
 * the limit (20 rules give a volume 640 entries).
 *
 * All functions are pure. Decoders never trust their input: every string is
 * bounded, every enum checked, and the message names the field.
 */
#ifndef AQ_API_INTENT_H
#define AQ_API_INTENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"
#include "api/api_math.h"

#define API_INTENT_MAX_RULES 20         /* export rules per volume (GCNV: 20) */
#define API_INTENT_MAX_CLIENTS 32       /* addresses or CIDRs in one rule's allowedClients */
#define API_INTENT_CLIENTS_LEN 640      /* bytes of one allowedClients (32 x "255.255.255.255/32, ") */
#define API_INTENT_SHARE_LEN 63         /* shareName bytes: letters, digits, '-', '_' */
#define API_INTENT_NAME_LEN 255         /* a volume's resource name */
#define API_INTENT_DIR_LEN 255          /* a volume's folder on the shelf */
#define API_INTENT_POOL_LEN 255         /* qos.sharedPool: a pool's resource name */
#define API_INTENT_MAX_MIBPS 1e9        /* QoS figures above this are refused */

/* Defaults an API document may leave out. */
#define API_INTENT_ANON_UID 65534       /* anonUid of squashed users */
#define API_INTENT_UNIX_PERMS "0770"    /* a new volume root's mode (GCNV's default) */

enum api_intent_access { API_INTENT_READ_NONE = 0, API_INTENT_READ_ONLY = 1, API_INTENT_READ_WRITE = 2 };
enum api_intent_squash { API_INTENT_NO_ROOT_SQUASH = 0, API_INTENT_ROOT_SQUASH = 1, API_INTENT_ALL_SQUASH = 2 };
enum api_intent_tier { API_INTENT_TIER_OFF = 0, API_INTENT_TIER_ENABLED = 1, API_INTENT_TIER_PAUSED = 2 };
enum api_intent_retrieval { API_INTENT_RET_DEFAULT = 0, API_INTENT_RET_ON_READ = 1, API_INTENT_RET_NEVER = 2 };

/* A volume's "protocols" (absent: NFSV3 only), as a set of bits. */
enum api_intent_proto { API_INTENT_NFSV3 = 1 << 0, API_INTENT_NFSV4 = 1 << 1, API_INTENT_SMB = 1 << 2 };
/* "smbSettings", as a set of bits (GCNV's SMBSettings names, in this order). */
enum api_intent_smb_setting {
	API_INTENT_SMB_ENCRYPT_DATA = 1 << 0,
	API_INTENT_SMB_BROWSABLE = 1 << 1,
	API_INTENT_SMB_CHANGE_NOTIFY = 1 << 2,
	API_INTENT_SMB_NON_BROWSABLE = 1 << 3,
	API_INTENT_SMB_OPLOCKS = 1 << 4,
	API_INTENT_SMB_SHOW_SNAPSHOT = 1 << 5,
	API_INTENT_SMB_SHOW_PREVIOUS_VERSIONS = 1 << 6,
	API_INTENT_SMB_ACCESS_BASED_ENUMERATION = 1 << 7,
	API_INTENT_SMB_CONTINUOUSLY_AVAILABLE = 1 << 8,
};
enum api_intent_security { API_INTENT_SEC_UNIX = 0, API_INTENT_SEC_NTFS = 1 };

/* One IPv4 network of an allowedClients list: addr & mask == addr. */
struct api_intent_net {
	uint32_t addr, mask;
};

struct api_intent_rule {
	char clients[API_INTENT_CLIENTS_LEN + 1]; /* "10.0.0.0/8,192.168.1.5" */
	enum api_intent_access access;
	enum api_intent_squash squash;
	uint32_t anon_uid;
	bool nfsv3, nfsv4;                        /* the protocols the rule applies to */
};

struct api_intent_qos {
	double mibps;                             /* 0 = unlimited */
	int64_t iops;
	char shared_pool[API_INTENT_POOL_LEN + 1];/* FLEX: the pool whose budget the volumes share */
	double shared_mibps;
	int64_t shared_iops;
};

struct api_intent_tiering {
	enum api_intent_tier action;              /* OFF: no tieringPolicy */
	int cooling_days;
	bool bypass;                              /* hotTierBypassModeEnabled */
	enum api_intent_retrieval retrieval;
};

/* Read-ahead (issue 23; Aquifer's volume field "readAhead": {"mode",
 * "depthFiles"}). NONE: the kernel's own read-ahead only; AGGRESSIVE: a
 * larger in-file read-ahead; CROSS_FILE_SEQUENTIAL: a file read from its
 * start makes the node prefetch the next depthFiles files of its folder
 * whose names continue its numeric suffix (frame000123.dpx ->
 * frame000124.dpx, agent/vol/vol_ra.h). depthFiles is 1..API_READ_AHEAD_MAX_DEPTH,
 * given only with CROSS_FILE_SEQUENTIAL (default API_READ_AHEAD_DEPTH). */
#define API_READ_AHEAD_MAX_DEPTH 16
#define API_READ_AHEAD_DEPTH 4
enum api_intent_ra_mode { API_INTENT_RA_NONE = 0, API_INTENT_RA_AGGRESSIVE = 1, API_INTENT_RA_CROSS_FILE = 2 };

struct api_intent_read_ahead {
	enum api_intent_ra_mode mode;
	int depth_files;                          /* 0 unless CROSS_FILE_SEQUENTIAL */
};

struct api_intent_volume {
	char name[API_INTENT_NAME_LEN + 1];
	char fsid[17];                            /* 16 hex digits */
	char share[API_INTENT_SHARE_LEN + 1];
	char dir[API_INTENT_DIR_LEN + 1];
	uint64_t capacity_bytes;
	char unix_permissions[5];                 /* 3 or 4 octal digits */
	size_t nrules;
	struct api_intent_rule rules[API_INTENT_MAX_RULES];
	struct api_intent_qos qos;
	struct api_intent_tiering tiering;
	unsigned protocols;                       /* enum api_intent_proto bits; never 0 */
	unsigned smb_settings;                    /* enum api_intent_smb_setting bits */
	enum api_intent_security security;        /* securityStyle (default UNIX) */
	struct api_intent_read_ahead read_ahead;  /* readAhead (absent: NONE) */
};

struct api_intent_delete {
	char name[API_INTENT_NAME_LEN + 1];
	char fsid[17];
	char dir[API_INTENT_DIR_LEN + 1];
};

/* Parse an allowedClients list ("a.b.c.d[/len]", comma-separated, spaces
 * around items allowed) into nets (may be NULL: check only), at most
 * API_INTENT_MAX_CLIENTS entries of at most API_INTENT_CLIENTS_LEN bytes in
 * all. where names the field in the message. AQ_EINVAL on anything else. */
int api_intent_clients_parse(const char *list, const char *where, struct api_intent_net *nets, size_t *n,
			     aq_msg *msg);

/* shareName rules: 1-API_INTENT_SHARE_LEN of letters, digits, '-', '_'. */
int api_intent_share_check(const char *share, aq_msg *msg);

/* One export rule of an API volume (SimpleExportPolicyRule, normalised by
 * api_schema_check) as the intent carries it, with the API's defaults:
 * accessType READ_WRITE; squashMode from hasRootAccess ("false" ->
 * ROOT_SQUASH) when absent; anonUid API_INTENT_ANON_UID; nfsv3 and nfsv4
 * true unless given false. i numbers the rule in messages
 * ("exportPolicy.rules[i].allowedClients ..."). */
int api_intent_rule_from_api(const json_t *rule, size_t i, struct api_intent_rule *out, aq_msg *msg);

/* A volume's intent entry from its API document (normalised, checked) and
 * its placement's fsid and dir. pool (may be NULL) is the volume's pool: a
 * FLEX pool adds its shared budget to the QoS (p gives the math). */
int api_intent_volume_from_api(const json_t *vol, const json_t *pool, const struct api_math_params *p,
			       const char *fsid, const char *dir, struct api_intent_volume *out, aq_msg *msg);

/* A volume's readAhead object (ra, normalised by api_schema_check; NULL:
 * absent, fine): mode required, depthFiles only with CROSS_FILE_SEQUENTIAL
 * and 1..API_READ_AHEAD_MAX_DEPTH; fills in depthFiles API_READ_AHEAD_DEPTH
 * when CROSS_FILE_SEQUENTIAL leaves it out. AQ_EINVAL naming the field. */
int api_intent_read_ahead_check(json_t *ra, aq_msg *msg);

/* The JSON of an intent entry (new reference; NULL on ENOMEM), and back.
 * decode checks every field and limit; fields a former version did not send
 * (nfsv3, nfsv4, unixPermissions, qos, tieringPolicy, readAhead) take their
 * defaults.
 * The message starts with the volume's name when it has one. */
json_t *api_intent_volume_encode(const struct api_intent_volume *v);
int api_intent_volume_decode(const json_t *in, struct api_intent_volume *out, aq_msg *msg);

json_t *api_intent_delete_encode(const struct api_intent_delete *d);
int api_intent_delete_decode(const json_t *in, struct api_intent_delete *out, aq_msg *msg);

/* ---- snapshots (the volume entry's snapshot fields) ----
 *
 * A volume entry may carry (all optional; absent = none / false):
 *   "snapshotDirectory": true              serve /.snapshot/<id>/ at the export root
 *   "snapshots": [{"id", "uid"}, ...]      snapshots that must exist: the agent
 *                                           creates each one it does not have
 *   "snapshotDeletes": [{"id", "uid"}, ...] snapshots that must go: the agent
 *                                           deletes them. Never by omission: a
 *                                           snapshot missing from both lists is
 *                                           kept (and reported), as volumes are.
 *   "revert": {"id", "uid", "seq"}         make the live volume this snapshot's
 *                                           content, once per seq (the agent keeps
 *                                           the last seq it applied durably)
 *   "cloneSource": {"dir", "id", "uid"}    a clone: when the volume's folder does
 *                                           not exist yet, it starts as the
 *                                           snapshot uid of the volume in dir
 *   "restoreSource": a restore job (api_intent_backup.h, "op": "restore"):
 *                                           when the volume's folder does not
 *                                           exist yet, it starts as that backup's
 *                                           content (a volume created from a
 *                                           backup, sent while it is RESTORING)
 * id is the snapshot's id (the last part of its resource name, api_id_check's
 * rule): its name under /.snapshot/. uid is 16 hex digits the control plane
 * draws when it creates the snapshot, so a snapshot deleted and created again
 * under the same id is a different snapshot.
 *
 * The agent reports each snapshot it holds in the volume's status entry:
 *   "snapshots": [{"id", "uid", "state": "READY"|"ERROR", "stateDetails",
 *                  "createUnix": seconds, "usedBytes": bytes}],
 *   "revertSeq": the last revert seq applied, "snapshotBytes": sum of usedBytes
 * (api_intent_snap_state_encode / _decode).
 */
#define API_INTENT_MAX_SNAPSHOTS 255    /* per volume (GCNV: 255) */
#define API_INTENT_SNAP_ID_LEN 63       /* api_id_check's limit */
#define API_INTENT_SNAP_DETAIL_LEN 255  /* stateDetails bytes */

struct api_intent_snap {
	char id[API_INTENT_SNAP_ID_LEN + 1];
	char uid[17];                             /* 16 hex digits */
};

struct api_intent_snapset {
	bool directory;                           /* snapshotDirectory */
	size_t nsnaps, ndeletes;
	struct api_intent_snap snaps[API_INTENT_MAX_SNAPSHOTS];
	struct api_intent_snap deletes[API_INTENT_MAX_SNAPSHOTS];
	uint64_t revert_seq;                      /* 0: no revert */
	struct api_intent_snap revert;
	bool clone;                               /* cloneSource given */
	char clone_dir[API_INTENT_DIR_LEN + 1];
	struct api_intent_snap clone_snap;
	bool restore;                             /* restoreSource given: */
	char restore_id[17];                      /* the backup's vault-side id */
	char restore_name[API_INTENT_NAME_LEN + 1];
	char restore_key[65];                     /* the vault key, 64 hex digits */
	char restore_store[API_INTENT_DIR_LEN + 1]; /* the vault's store, relative to the shelf */
};

/* One snapshot as the agent reports it. */
struct api_intent_snap_state {
	struct api_intent_snap snap;
	bool ready;                               /* state READY, else ERROR */
	char detail[API_INTENT_SNAP_DETAIL_LEN + 1];
	int64_t create_unix;
	uint64_t used_bytes;
};

/* Add the snapshot fields of set to a volume entry e (from
 * api_intent_volume_encode); AQ_ENOMEM. */
int api_intent_snapset_encode(const struct api_intent_snapset *set, json_t *e);
/* Read them from a volume entry: every id, uid, dir and seq checked, at most
 * API_INTENT_MAX_SNAPSHOTS in each list, no id twice in one list, no uid
 * both wanted and deleted. The message names the volume and the field. */
int api_intent_snapset_decode(const json_t *e, struct api_intent_snapset *out, aq_msg *msg);

json_t *api_intent_snap_state_encode(const struct api_intent_snap_state *st);
int api_intent_snap_state_decode(const json_t *in, struct api_intent_snap_state *out, aq_msg *msg);

/* ---- SMB users (the intent's top-level "smbUsers") ----
 *
 * The users an SMB session may authenticate as, per project: every user of
 * the projects whose volumes the node serves, pushed over TLS with the
 * intent: [{"project", "name", "ntHash", "uid", "gid"}]. ntHash is the NT
 * hash (MD4 of the UTF-16LE password), 32 hex digits: the password itself is
 * never stored or sent. A session of a user of project P reaches only the
 * shares of P's volumes (the project part of the volume's name); uid and gid
 * are the owner NFS sees for what the user creates. Names compare
 * case-insensitively (ASCII), as Windows compares account names.
 */
#define API_INTENT_MAX_SMB_USERS 1024   /* per intent */
/* The largest body either side of the control-plane/agent exchange takes:
 * an intent pushed to a node (the agent's cap) and a node's status report
 * (aquiferd's cap on POST /v1/agent/status). A report carries every volume
 * the node serves, a few hundred bytes each, so a node with a few thousand
 * volumes outgrows the API's 1 MiB: past that, its reports were refused
 * and the node went DOWN. */
#define API_INTENT_BODY_MAX (16u << 20)
/* The volumes one node serves at most (issue 22 follow-up), as GCNV and
 * ANF have hard per-pool/per-node volume limits: placement takes no node
 * at the limit (srv_place.c: no node left, the create fails
 * RESOURCE_EXHAUSTED naming it), and an agent refuses a whole intent over
 * it (agent_apply: nothing changes). Derived from the body cap: a volume's
 * entry in a status report, its snapshots aside, takes at most
 * API_NODE_VOLUME_REPORT_MAX bytes with every field at its longest
 * (test_agent_apply measures it), and the limit's reports fill at most
 * half of API_INTENT_BODY_MAX: the other half is the margin for the
 * report's other parts and for snapshot entries. */
#define API_NODE_VOLUME_REPORT_MAX 3072u
#define API_NODE_VOLUMES_MAX 2500u
_Static_assert((unsigned long long)API_NODE_VOLUMES_MAX * API_NODE_VOLUME_REPORT_MAX * 2 <= API_INTENT_BODY_MAX,
	       "a node's status report at API_NODE_VOLUMES_MAX must fit API_INTENT_BODY_MAX with margin 2");
/* Timeouts of the calls between aquiferd and an agent that name a node's
 * volumes (issue 22): a push (the intent lists every volume the node
 * serves and the agent applies it before it answers) and a status report
 * (every volume with its figures). Both are O(volumes on the node) to
 * build, send, read and act on, seconds at 10,000 volumes on a busy
 * machine: a fixed 5 s timed them out and each retry redid the work. The
 * timeout grows with the volumes the call names (api_agent_call_ms).
 * Liveness does not wait for them: while an agent's last answered report
 * is API_AGENT_RENEW_LATE report intervals old, it sends a renewal, a
 * status report without "volumes", which aquiferd takes for liveness,
 * applied generation, failed volumes, service addresses and backups only
 * (no volume figures). */
#define API_AGENT_CALL_MS 5000L          /* a call naming no volume */
#define API_AGENT_CALL_PER_VOLUME_US 2000L /* ...and this more per volume it names */
#define API_AGENT_CALL_MAX_MS 300000L    /* ...at most (the bodies' cap bounds the volumes) */
#define API_AGENT_RENEW_LATE 1.5

/* The timeout (ms) of a push or status report naming volumes volumes. */
static inline long api_agent_call_ms(size_t volumes)
{
	long ms = API_AGENT_CALL_MS;

	if (volumes > (size_t)(API_AGENT_CALL_MAX_MS * 1000 / API_AGENT_CALL_PER_VOLUME_US))
		return API_AGENT_CALL_MAX_MS;
	ms += (long)volumes * API_AGENT_CALL_PER_VOLUME_US / 1000;
	return ms < API_AGENT_CALL_MAX_MS ? ms : API_AGENT_CALL_MAX_MS;
}
#define API_INTENT_SMB_USER_LEN 64      /* 1-64 of letters, digits, '.', '-', '_'; first a letter or digit */
#define API_INTENT_PROJECT_LEN 63       /* a project id (api_id_check) */

struct api_intent_smb_user {
	char project[API_INTENT_PROJECT_LEN + 1];
	char name[API_INTENT_SMB_USER_LEN + 1];
	char nt_hash[33];                         /* 32 hex digits (ut_hex_decode gives the bytes) */
	uint32_t uid, gid;
};

/* The agent's SMB address. An agent whose SMB server listens
 * (--smb-listen) says where: "smbAddress": "HOST:PORT" in its join body and
 * in its status reports (a report without the key keeps what the node has;
 * "" says SMB stopped). A node without one serves no SMB: the control plane
 * never calls an SMB volume placed there READY (its operation fails, naming
 * the reason) and its mountOptions have no SMB entry. */
#define API_INTENT_SMB_ADDRESS "smbAddress"
#define API_INTENT_SMB_PORT 445

/* The user-name rule above; the message names the field as what. */
int api_intent_smb_user_name_check(const char *name, const char *what, aq_msg *msg);
json_t *api_intent_smb_user_encode(const struct api_intent_smb_user *u);
int api_intent_smb_user_decode(const json_t *in, struct api_intent_smb_user *out, aq_msg *msg);

#endif
