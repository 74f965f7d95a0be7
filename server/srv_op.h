/* srv_op: long-running operations (google.longrunning.Operation): the
 * documents every mutation answers (the collection's routes:
 * srv_operation.h). A create, patch or delete stores its
 * operation in the same transaction as its change; one whose work a node
 * does stays running until the node reports the generation that carries it
 * applied (srv_reconcile.h), and always ends, with a response or an error. */
#ifndef AQ_SRV_OP_H
#define AQ_SRV_OP_H

#include <stdbool.h>

#include <jansson.h>

struct db;
struct srv_req;

/* Create an Operation document for verb on target in parent
 * ("projects/p/locations/l"), store it (inside the caller's transaction) and
 * return it in *op (new reference). done/response/error as given. */
int srv_op_create(struct srv_req *req, const char *parent, const char *target, const char *verb, bool done,
		  const json_t *response, json_t **op);
/* The end of a create, patch or delete that stored its change in the
 * caller's transaction: srv_op_create of a done operation verb on target
 * answering response (NULL: a google.protobuf.Empty, what a delete
 * answers) into *op, then db_commit. */
int srv_op_commit(struct srv_req *req, const char *parent, const char *target, const char *verb,
		  const json_t *response, json_t **op);
/* The end of a create (verb "create") or patch (verb "update") of a
 * resource that stores doc alone, in the caller's transaction: with
 * validate, *resp is srv_op_preview of out and nothing is stored; otherwise
 * doc is stored as the resource name of kind under parent (create:
 * srv_put_new, AQ_EEXIST saying "<what> \"<name>\" already exists";
 * update: db_put over the old one) and srv_op_commit answers out. The
 * caller rolls back whatever this returns. */
int srv_op_save(struct srv_req *req, bool validate, const char *verb, const char *kind, const char *parent,
		const char *name, const json_t *doc, const char *what, const json_t *out, json_t **resp);
/* Mark an operation done with a response or an error (code + message). */
int srv_op_finish(struct db *db, const char *op_name, const json_t *response, int err, const char *errmsg);
/* srv_op_finish of op when it names one (op "" or NULL: nothing waits);
 * an operation its owner deleted meanwhile is no error. */
int srv_op_end(struct db *db, const char *op, const json_t *response, int err, const char *errmsg);
/* validateOnly answer: a done operation, not stored. */
json_t *srv_op_preview(const char *parent, const char *target, const char *verb, const json_t *response);

#endif
