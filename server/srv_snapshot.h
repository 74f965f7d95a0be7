/* srv_snapshot: volume snapshots (stored kind "snapshot", under the
 * volume's name), revert and clones, on the control plane's side.
 *
 * Each snapshot has a companion document the API never shows (kind
 * "snapref", snaprefs/<snapshot name>, parent the volume): the 16-hex uid
 * drawn at create time (api_intent.h: a snapshot deleted and created again
 * under the same id is another snapshot), the action the volume's node
 * must take ("create", "delete"; "" once done, "error" when the node
 * could not make it), the operation waiting for it, and for a scheduled
 * snapshot its kind and slot (srv_snapsched.h). A revert is
 * snapreverts/<volume name>: {id, uid, seq, op}, seq counting the volume's
 * revert requests. Every change is one transaction with its operation, so
 * a kill -9 leaves a snapshot either recorded whole or absent.
 *
 * The reconciler puts them in the volume's intent entry
 * (srv_snapshot_intent); the agent's status report finishes them
 * (srv_snapshot_report): a create is done when the volume's node reports
 * its uid READY (ERROR fails it with the node's reason), a delete when the
 * node no longer reports the uid, a revert when it reports revertSeq >= seq.
 * Every call runs in the caller's transaction unless it says otherwise.
 */
#ifndef AQ_SRV_SNAPSHOT_H
#define AQ_SRV_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"

struct db;
struct srv_req;

int srv_h_snapshot_create(struct srv_req *req, json_t **resp);
int srv_h_snapshot_get(struct srv_req *req, json_t **resp);
int srv_h_snapshot_list(struct srv_req *req, json_t **resp);
int srv_h_snapshot_patch(struct srv_req *req, json_t **resp);
int srv_h_snapshot_delete(struct srv_req *req, json_t **resp);
/* POST .../volumes/V:revert {snapshotId}: the volume becomes the snapshot's
 * content and every newer snapshot is deleted (GCNV: "changes made after
 * the snapshot was created are undone, which includes newer snapshots"). */
int srv_h_volume_revert(struct srv_req *req, json_t **resp);

/* Record snapshot id of volume vol (its stored document): the snapshot
 * (CREATING, createTime now, description and labels from body, may be
 * NULL) and its snapref with a fresh uid and op (may be "": nothing
 * waits). sched (NULL: a manual snapshot) and slot mark a scheduled one.
 * AQ_EEXIST when the id is taken, AQ_EEXHAUSTED past 255 per volume, with
 * a message. */
int srv_snapshot_add(struct db *db, const json_t *vol, const char *id, const json_t *body, const char *op,
		     const char *sched, int64_t slot, aq_msg *msg);
/* Start the delete of snapshot snap (its stored document; op may be "").
 * AQ_EPRECOND when it is being created or deleted, or a clone volume
 * depends on it (named in the message). */
int srv_snapshot_start_delete(struct db *db, const json_t *snap, const char *op, aq_msg *msg);
/* Snapshot sn is read by holder (a running backup, srv_backup.h): until it
 * is released (holder ""), srv_snapshot_start_delete refuses it with
 * AQ_EPRECOND naming the holder. AQ_ENOENT when sn has no snapref. */
int srv_snapshot_hold(struct db *db, const char *sn, const char *holder);

/* A volume create with restoreParameters.sourceSnapshot: the snapshot
 * exists, is READY, lies in parent (the new volume's project and
 * location); sets vol's cloneDetails. */
int srv_snapshot_clone_check(struct db *db, const char *parent, json_t *vol, aq_msg *msg);
/* A volume delete (vol: its stored document): with snapshots it needs
 * force (else AQ_EPRECOND naming one); with force its snapshots, their
 * companions and pending operations go with it (the node deletes the
 * volume's data, snapshots included). A volume whose snapshot a clone
 * depends on is refused, force or not. */
int srv_snapshot_volume_delete(struct db *db, const json_t *vol, bool force, aq_msg *msg);

/* Add the snapshot fields (api_intent_snapset_encode) of volume vol to its
 * intent entry e. Reads only. */
int srv_snapshot_intent(struct db *db, const json_t *vol, json_t *e);
/* One volume entry v of a status report from the node serving vol (its
 * stored document). apply false: only *changed (something would change);
 * apply true: write it. An entry without "snapshots" (an agent that does
 * not handle them) changes nothing. */
int srv_snapshot_report(struct db *db, const json_t *vol, const json_t *v, bool apply, bool *changed);

#endif
