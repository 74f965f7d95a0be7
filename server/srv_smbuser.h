/* srv_smbuser: SMB users (stored kind "smbuser", under projects/P/locations/L,
 * routes projects/P/locations/L/smbUsers): the accounts the agents' SMB
 * servers authenticate, per project (issue 18). The password is input only:
 * it becomes the NT hash at once (smb_ntlm_nt_hash) and only that is kept,
 * in a secret document apart from the user's (kind "smbsecret", name
 * "smbsecrets/<user name>", parent "smbsecrets/<location>"), which holds the
 * user's intent entry (api_intent_smb_user) and is read by nothing but the
 * intent: no route, list or filter reaches it, so no answer, operation or
 * log line can carry the hash. User names follow
 * api_intent_smb_user_name_check and compare case-insensitively: the
 * resource is named with the lowercased name, so "Alice" and "alice" are one
 * user (ALREADY_EXISTS). Mutations answer done operations, as pools do, and
 * kick the reconciler: every node of the location gets every user of the
 * location (a node may serve any project's volume). */
#ifndef AQ_SRV_SMBUSER_H
#define AQ_SRV_SMBUSER_H

#include <jansson.h>

struct db;
struct srv_req;

/* The intent's "smbUsers" of location loc: every user of every project
 * there (new reference; NULL on ENOMEM). Entries that fail
 * api_intent_smb_user_decode are left out. */
json_t *srv_smbuser_intent(struct db *db, const char *loc);

int srv_h_smbuser_create(struct srv_req *req, json_t **resp);
int srv_h_smbuser_get(struct srv_req *req, json_t **resp);
int srv_h_smbuser_list(struct srv_req *req, json_t **resp);
int srv_h_smbuser_patch(struct srv_req *req, json_t **resp);
int srv_h_smbuser_delete(struct srv_req *req, json_t **resp);

#endif
