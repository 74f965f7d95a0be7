/* srv_backup_int: what srv_backup.c (the routes, srv_backup_start) and
 * srv_backup_job.c (the reconciler's side) share; private to the two and
 * srv_bkpsched.c. A backup's private record is kind "bkref", name
 * "bkrefs/<backup name>", parent "bkrefs/<location>" (srv_backup.h). */
#ifndef AQ_SRV_BACKUP_INT_H
#define AQ_SRV_BACKUP_INT_H

#include <stddef.h>

#include <jansson.h>

#include "api/api_error.h"

struct db;

#define SRV_BACKUP_TYPE "type.googleapis.com/google.cloud.netapp.v1.Backup"
#define SRV_EMPTY_TYPE "type.googleapis.com/google.protobuf.Empty"

/* "bkrefs/<backup name>" and "bkrefs/<location>". */
void srv_bk_ref_name(const char *bn, char *out, size_t cap);
void srv_bk_ref_parent(const char *location, char *out, size_t cap);
/* db_get with NOT_FOUND naming what ("backupVault") and name. */
int srv_bk_get(struct db *db, const char *name, const char *what, json_t **doc, aq_msg *msg);
/* The backup as answered: a copy with @type (new reference; NULL: no memory). */
json_t *srv_bk_answer(const json_t *doc);
/* The bkrefs of location, of vault and volume vn when not NULL, as an
 * array (new reference in *out). */
int srv_bk_refs_of(struct db *db, const char *location, const char *vault, const char *vn, json_t **out);
/* The node that runs ref's job into node (cap bytes; "" when none): the
 * node serving its volume; a delete of a volume no node serves goes to the
 * first node of the location not DOWN. */
int srv_bk_job_node(struct db *db, const json_t *ref, const char *location, char *node, size_t cap);
/* Mark dirty (db_dirty_mark, in the caller's transaction) the node that
 * runs ref's job as just written (the one its intent carries it to), so
 * the leader pushes that node and no other; none when no node runs it. */
int srv_bk_mark(struct db *db, const json_t *ref, const char *location);

#endif
