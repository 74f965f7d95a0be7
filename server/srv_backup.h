/* srv_backup: backups (google.cloud.netapp.v1.Backup; issue 21), stored
 * kind "backup" under their vault (routes
 * projects/P/locations/L/backupVaults/V/backups), and the reconciler's side
 * of them: the backup jobs of a node's intent (api/api_intent_backup.h) and
 * the node's reports of those jobs.
 *
 * A create (?backupId=, sourceVolume required, sourceSnapshot optional)
 * answers an Operation that stays running while the node serving the
 * volume uploads: the backup is CREATING, then UPLOADING (the operation's
 * metadata.statusMessage says "uploaded D of T bytes"), then READY with
 * volumeUsageBytes (the data the backup holds), chainStorageBytes (what the
 * volume's READY backups in that vault uploaded, this one included; stored,
 * and refreshed in every backup of the chain when one of them becomes READY
 * or is deleted) and
 * enforcedRetentionEndTime (the vault's retention: createTime + minimum
 * days when manualBackupImmutable). A job the node fails ends the
 * operation with an error saying the backup is in state ERROR (its
 * stateDetails say why); it stays until deleted. Refused by name: a
 * sourceVolume of another project or location, a volume no node serves or
 * that is not READY, a sourceSnapshot of another volume or not READY, a
 * second backup of a volume in a vault while one runs, a CROSS_REGION vault
 * (its store is on another location's shelf, which these nodes do not
 * reach). A tiered volume is backed up whole: the node reads the ranges its
 * snapshot holds in the cold tier from there (agent_bkjob.c, tier_snap_read).
 *
 * Without sourceSnapshot the backup takes a snapshot "bkp-<16 hex>" of the
 * volume first (a snapshot resource like any, made by the same intent) and
 * deletes it when the backup ends.
 *
 * Incremental: each backup names the volume's newest READY backup in the
 * same vault as its previous one (prevId), so only changed data uploads.
 *
 * Delete: refused before enforcedRetentionEndTime (FAILED_PRECONDITION
 * with the time) and while the backup uploads; else the backup is DELETING
 * and a delete job (the manifest, then the vault's gc) goes to the node
 * serving the source volume, or to the first live node of the location
 * when the volume is gone; the operation ends when the node reports it
 * DELETED. A vault holding backups is not deleted (srv_bvault.h).
 *
 * State lives in the database (the backup, and a private record per backup,
 * kind "bkref", name "bkrefs/<backup name>", parent "bkrefs/<location>":
 * uid, prevId, snapshot, the pending action and its operation), jobs in
 * the intent: kill -9 of aquiferd or of the agent loses nothing (the agent
 * runs the job again; the engine is idempotent). */
#ifndef AQ_SRV_BACKUP_H
#define AQ_SRV_BACKUP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"

struct db;
struct srv_req;

int srv_h_backup_create(struct srv_req *req, json_t **resp);

/* A backup to start, for the create route and the scheduler alike. */
struct srv_backup_spec {
	const char *vault;    /* full name, projects/P/locations/L/backupVaults/V */
	const char *id;       /* the backup's ID (api_id_check's rule) */
	json_t *doc;          /* the checked body (api_backup_check); filled in */
	const char *type;     /* backupType: "MANUAL" or "SCHEDULED" */
	const char *kind;     /* the retention flag: "manual", "daily", "weekly", "monthly" */
	int64_t slot;         /* SCHEDULED: the schedule's slot (srv_bkpsched.h) */
	const char *op;       /* the operation the node's report ends ("" or NULL: none) */
	bool validate;        /* check and fill doc only, write nothing */
};
/* In the caller's transaction: the checks of a create (refused by name as
 * above; AQ_EPRECOND for what may pass later: the volume not READY or not
 * served, another backup of it running), then the backup (CREATING), its
 * temporary snapshot and its bkref are written; AQ_EEXIST naming the ID.
 * Nothing is written when it fails before the backup is (a caller that
 * goes on after a failure rolls back first). */
int srv_backup_start(struct db *db, const struct srv_backup_spec *spec, aq_msg *msg);
/* In the caller's transaction: the backup bn (full name) becomes DELETING
 * and its delete job goes to a node; op (or "") is the operation its
 * report ends. AQ_ENOENT naming it; AQ_EPRECOND naming why not now: being
 * created, uploaded or deleted, inside its enforcedRetentionEndTime (the
 * message gives the time), a volume being restored from it. */
int srv_backup_start_delete(struct db *db, const char *bn, const char *op, aq_msg *msg);
int srv_h_backup_get(struct srv_req *req, json_t **resp);
int srv_h_backup_list(struct srv_req *req, json_t **resp);
int srv_h_backup_patch(struct srv_req *req, json_t **resp);
int srv_h_backup_delete(struct srv_req *req, json_t **resp);

/* POST .../volumes/V:restore (GCNV RestoreBackupFiles; srv_backup_files.c):
 * body {backup (required: a backup's full name in V's project and
 * location), fileList (required: 1-API_INTENT_BKP_FILES_MAX absolute paths
 * as in the backup's volume, no "."/".." component, not "/"),
 * restoreDestinationPath (optional, default "/": an existing folder of V;
 * each path lands as <it>/<the path's last component>, replacing a file of
 * that name)}; any other field, or a path that would leave the volume, is
 * INVALID_ARGUMENT naming it and changes nothing. V READY and served, the
 * backup READY and not busy (one restore from a backup at a time), else
 * FAILED_PRECONDITION. Answers an Operation (verb "restore", target V)
 * that ends with the volume when the node restored every path, or with
 * NOT_FOUND naming the first path the backup does not hold (other failures:
 * INTERNAL with the node's reason). Meanwhile neither V nor the backup is
 * deleted. The node runs the job with the engine's per-path restore
 * (api_intent_backup.h "restoreFiles"). */
int srv_h_volume_restore(struct srv_req *req, json_t **resp);

/* The backup jobs node (its document) runs: sets "backups" in intent when
 * there are any (absent otherwise, so an intent without backups hashes as
 * before). A vault whose secret is missing is left out. */
int srv_backup_intent(struct db *db, const json_t *node, json_t *intent);

/* The node's status body's "backups" reports (entries that do not decode
 * are ignored): *changed is set when one changes a backup; with apply
 * the changes are written (in the caller's transaction), operations ended,
 * and *kick set when the node's intent changes (a job ended). */
int srv_backup_report(struct db *db, const json_t *node, const json_t *body, bool apply, bool *changed,
		      bool *kick);

/* A volume create (vol, in parent "projects/P/locations/L") with
 * restoreParameters.sourceBackup: the backup is in the same project and
 * location (else INVALID_ARGUMENT naming the field), exists (NOT_FOUND
 * naming it), is READY (FAILED_PRECONDITION), and capacityGib holds its
 * volumeUsageBytes (INVALID_ARGUMENT naming capacityGib). The volume is then
 * RESTORING: its node restores the backup into its empty folder before
 * serving it (srv_backup_restore_intent); READY once served, ERROR with
 * stateDetails when the restore failed. No sourceBackup: AQ_OK. */
int srv_backup_restore_check(struct db *db, const char *parent, json_t *vol, aq_msg *msg);
/* The volume entry e of vol gets "restoreSource" (api_intent.h) while vol is
 * RESTORING from a backup; AQ_ENOENT when the backup (or its vault's key) is
 * gone: the volume must then fail, not be served empty. */
int srv_backup_restore_intent(struct db *db, const json_t *vol, json_t *e);

/* The bytes of volume vn's chain in vault: the uploadedBytes of its READY
 * backups there (the chainStorageBytes each of them shows, and the
 * volume's backupConfig.backupChainBytes, both stored: refreshed when a
 * backup of the chain becomes READY or is deleted). */
int srv_backup_chain_bytes(struct db *db, const char *vn, const char *vault, int64_t *sum);
/* Before vol is written (create, patch): its backupConfig.backupChainBytes
 * from the chain in its backupVault, none without a vault; what a client
 * sent is dropped. Stored, so a GET answers it from the document (and the
 * document cache) as it stands. */
int srv_backup_volume_chain(struct db *db, json_t *vol);

/* AQ_EPRECOND naming it when a backup of volume vn is being created or
 * uploaded (a volume is not deleted under a running backup). */
int srv_backup_volume_busy(struct db *db, const char *vn, aq_msg *msg);

#endif
