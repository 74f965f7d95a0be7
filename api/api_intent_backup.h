/* api_intent_backup: the backup jobs of the intent contract (issue 21;
 * aquiferd sends them, server/srv_backup.c, the agent runs them,
 * agent/agent_bkjob.c) and the agent's
 * report of each. Pure codecs with every field checked, so the server and
 * the agent read one format (api_intent.h's habits: a bad entry fails that
 * job, never the node).
 *
 * The intent's top-level "backups": [job, ...], at most
 * API_INTENT_MAX_BACKUPS, each
 *   {"op": "backup"|"delete",
 *    "id": 16 hex digits       the vault-side backup id (the backup
 *                              resource's uid: a backup deleted and made
 *                              again under the same name is another one),
 *    "name": backup resource name (for logs and reports),
 *    "vault": {"key": 64 hex digits (the vault's 32-byte key),
 *              "store": {"directory": {"path": ".backups/<16 hex>"}}},
 *                              relative to the agent's shelf (srv_bvault.h)
 *    backup only:
 *    "volume": the source volume's resource name (served by this node),
 *    "snapshot": {"id", "uid"} the source snapshot; absent: the agent makes
 *                              a temporary snapshot and removes it after,
 *    "prevId": 16 hex digits   the previous READY backup of that volume in
 *                              that vault (absent: the first, a full one)}
 *
 *
 * "op": "restoreFiles" (volumes/V:restore, RestoreBackupFiles): "id" is the
 * restore's own 16 hex digits (its report's id), "backupId" the vault-side
 * backup id to read, "name" the backup's resource name, "vault" as above,
 * "volume" the live volume the files go into (served by this node),
 * "paths": [1..API_INTENT_BKP_FILES_MAX absolute paths as in the backup,
 * api_backup_path_check's rule, not "/"], "dest": the folder of that volume
 * they are restored into (same rule, "/" allowed; each path lands as
 * <dest>/<its last component>, replacing a file of that name). Its report
 * is READY when every path is restored, ERROR naming the first path the
 * backup does not hold (or why else it failed).
 *
 * A volume entry's "restoreSource" (a volume created from a backup, while
 * it is RESTORING) is the same object with "op": "restore" and, as a delete,
 * no volume, snapshot or prevId: when the volume's folder does not exist
 * yet, the agent restores backup id into it before serving it. "restore" is
 * not a job of the top-level "backups" (the agent leaves such a job out).
 *
 * The agent reports each job in the status's top-level "backups":
 *   {"id", "state": "UPLOADING"|"READY"|"ERROR"|"DELETED", "bytesDone",
 *    "bytesTotal", "logicalBytes", "uploadedBytes", "stateDetails"}
 * (integers; READY only once the manifest is stored; DELETED once
 * bkp_delete is done). */
#ifndef AQ_API_INTENT_BACKUP_H
#define AQ_API_INTENT_BACKUP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api_intent.h"

#define API_INTENT_MAX_BACKUPS 64        /* jobs per intent */
#define API_INTENT_BKP_ID_LEN 16         /* hex digits */
#define API_INTENT_BKP_KEY_HEX 64        /* a 32-byte key in hex */
#define API_INTENT_BKP_STORE_PREFIX ".backups/"
#define API_INTENT_BKP_FILES_MAX 16      /* paths per file restore */
#define API_INTENT_BKP_PATH_LEN 511      /* bytes per path */

enum api_intent_bkp_op { API_INTENT_BKP_BACKUP, API_INTENT_BKP_DELETE, API_INTENT_BKP_RESTORE,
			 API_INTENT_BKP_RESTORE_FILES };

struct api_intent_backup {
	enum api_intent_bkp_op op;
	char id[API_INTENT_BKP_ID_LEN + 1];
	char name[API_INTENT_NAME_LEN + 1];
	char key_hex[API_INTENT_BKP_KEY_HEX + 1];
	char store_path[API_INTENT_DIR_LEN + 1];     /* relative to the shelf */
	char volume[API_INTENT_NAME_LEN + 1];        /* backup only */
	bool has_snap;
	struct api_intent_snap snap;
	char prev_id[API_INTENT_BKP_ID_LEN + 1];     /* "" = none */
	/* restoreFiles only: the backup read, the files, the folder they go into */
	char backup_id[API_INTENT_BKP_ID_LEN + 1];
	unsigned npaths;
	char paths[API_INTENT_BKP_FILES_MAX][API_INTENT_BKP_PATH_LEN + 1];
	char dest[API_INTENT_BKP_PATH_LEN + 1];
};

/* A path inside a volume as file restores take it: absolute ("/a/b"), at
 * most API_INTENT_BKP_PATH_LEN bytes, no empty, "." or ".." component (so
 * it never leaves the volume), no trailing "/"; "/" itself only when
 * root_ok. AQ_EINVAL naming what and the path. */
int api_backup_path_check(const char *path, bool root_ok, const char *what, aq_msg *msg);

enum api_intent_bkp_state {
	API_INTENT_BKP_UPLOADING,
	API_INTENT_BKP_READY,
	API_INTENT_BKP_ERROR,
	API_INTENT_BKP_DELETED,
};

struct api_intent_backup_state {
	char id[API_INTENT_BKP_ID_LEN + 1];
	enum api_intent_bkp_state state;
	uint64_t bytes_done, bytes_total, logical_bytes, uploaded_bytes;
	char detail[API_INTENT_SNAP_DETAIL_LEN + 1];
};

/* New reference (NULL: ENOMEM). The key is in it: the caller never logs it. */
json_t *api_intent_backup_encode(const struct api_intent_backup *b);
/* Every field checked (AQ_EINVAL naming the job and the field; the message
 * never quotes the key): id and prevId 16 hex digits, prevId not id, key 64
 * hex digits, store path ".backups/" and 16 hex digits, volume and name
 * non-empty, snapshot id/uid as in api_intent_snapset_decode, and no
 * volume, snapshot or prevId on a delete. */
int api_intent_backup_decode(const json_t *in, struct api_intent_backup *out, aq_msg *msg);

json_t *api_intent_backup_state_encode(const struct api_intent_backup_state *st);
/* AQ_EINVAL naming the field; bytesDone may not pass bytesTotal. */
int api_intent_backup_state_decode(const json_t *in, struct api_intent_backup_state *out, aq_msg *msg);

#endif
