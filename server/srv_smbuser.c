/* srv_smbuser: SMB users (see srv_smbuser.h). Check (pure, api_) then apply
 * (db) in one transaction with the operation record and the secret
 * document, so a user and its hash never disagree. */
#include "server/srv_smbuser.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "agent/smb/smb_ntlm.h"
#include "api/api_intent.h"
#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_internal.h"
#include "server/srv_kick.h"
#include "server/srv_mark.h"
#include "server/srv_op.h"
#include "server/srv_req.h"
#include "util/ut_clock.h"
#include "util/ut_hex.h"

#define USER_TYPE "type.googleapis.com/aquifer.v1.SmbUser"
#define EMPTY_TYPE "type.googleapis.com/google.protobuf.Empty"

/* The resource name of user id (checked) under the request's parent, the
 * id lowercased: names compare case-insensitively. */
static int user_name(struct srv_req *req, const char *id, const char *what, char *name, size_t cap)
{
	char parent[600], low[API_INTENT_SMB_USER_LEN + 1];
	size_t i;
	int rc;

	if ((rc = api_intent_smb_user_name_check(id, what, &req->msg)) != AQ_OK)
		return rc;
	for (i = 0; id[i]; i++)
		low[i] = (char)tolower((unsigned char)id[i]);
	low[i] = '\0';
	srv_parent(req, parent, sizeof(parent));
	snprintf(name, cap, "%s/smbUsers/%s", parent, low);
	return AQ_OK;
}

static int user_load(struct srv_req *req, char *name, size_t cap, json_t **doc)
{
	int rc;

	if ((rc = user_name(req, req->params[2], "the smbUser name", name, cap)) != AQ_OK)
		return rc;
	rc = db_get(req->db, name, doc);
	if (rc == AQ_ENOENT)
		return aq_fail(&req->msg, rc, "smbUser \"%s\" not found", name);
	return rc;
}

/* The NT hash of the body's password as hex into hex; the password leaves
 * doc. Messages never quote it. */
static int user_hash(struct srv_req *req, json_t *doc, char hex[33])
{
	uint8_t h[16];
	int rc;

	rc = smb_ntlm_nt_hash(api_json_str(doc, "password", ""), h);
	json_object_del(doc, "password");
	if (rc == AQ_EINVAL)
		return aq_fail(&req->msg, rc, "password must be valid UTF-8");
	if (rc == AQ_ETOOBIG)
		return aq_fail(&req->msg, AQ_EINVAL, "password must be at most 256 characters");
	if (rc == AQ_OK)
		rc = ut_hex_encode(h, sizeof(h), hex, 33);
	OPENSSL_cleanse(h, sizeof(h));
	return rc;
}

/* Store the user's intent entry (project, lowercased name, hash, uid, gid)
 * as its secret document; hex NULL keeps the stored hash. */
static int secret_put(struct srv_req *req, const json_t *doc, const char *hex, bool create)
{
	const char *name = api_json_str(doc, "name", ""), *id = strrchr(name, '/');
	struct api_intent_smb_user u = { .uid = (uint32_t)api_json_int64(doc, "uid", 0),
					 .gid = (uint32_t)api_json_int64(doc, "gid", 0) };
	char sname[900], sparent[300];
	json_t *old = NULL, *e = NULL;
	int rc;

	snprintf(sname, sizeof(sname), "smbsecrets/%s", name);
	snprintf(sparent, sizeof(sparent), "smbsecrets/%s", req->params[1]);
	snprintf(u.project, sizeof(u.project), "%s", req->params[0]);
	snprintf(u.name, sizeof(u.name), "%s", id ? id + 1 : "");
	if (!hex) {
		if ((rc = db_get(req->db, sname, &old)) != AQ_OK)
			goto out;
		hex = api_json_str(old, "ntHash", "");
	}
	snprintf(u.nt_hash, sizeof(u.nt_hash), "%s", hex);
	rc = (e = api_intent_smb_user_encode(&u)) ? db_put(req->db, "smbsecret", sparent, sname, e, create) : AQ_ENOMEM;
out:
	OPENSSL_cleanse(u.nt_hash, sizeof(u.nt_hash));
	json_decref(old);
	json_decref(e);
	return rc;
}

json_t *srv_smbuser_intent(struct db *db, const char *loc)
{
	char parent[300];
	json_t *items = NULL, *out = json_array(), *it;
	size_t i;

	snprintf(parent, sizeof(parent), "smbsecrets/%s", loc);
	if (!out || db_list_all(db, &(struct db_query){ .kind = "smbsecret", .parent = parent }, &items, NULL) != AQ_OK)
		goto out;
	json_array_foreach(items, i, it) {
		struct api_intent_smb_user u;
		aq_msg why = { .text = "" };

		if (i < API_INTENT_MAX_SMB_USERS && api_intent_smb_user_decode(it, &u, &why) == AQ_OK)
			json_array_append_new(out, api_intent_smb_user_encode(&u));
	}
out:
	json_decref(items);
	return out;
}

static json_t *user_answer(const json_t *doc)
{
	json_t *out = json_deep_copy(doc);

	if (out) {
		api_schema_strip_input(api_smb_user_fields, out);
		json_object_set_new(out, "@type", json_string(USER_TYPE));
	}
	return out;
}

/* Mark the nodes of the location of parent ("projects/P/locations/L"):
 * every node's intent carries every SMB user of its location (srv_mark.h);
 * commit, and ring those nodes only. */
static int smb_commit(struct srv_req *req, const char *parent)
{
	const char *loc = strstr(parent, "/locations/");
	char location[300];
	json_t *nodes = json_object();
	int rc;

	if (!nodes)
		return AQ_ENOMEM;
	snprintf(location, sizeof(location), "locations/%s", loc ? loc + 11 : "");
	if ((rc = srv_mark_location(req->db, location, nodes)) == AQ_OK && (rc = db_commit(req->db)) == AQ_OK)
		srv_mark_ring(req->srv, nodes);
	json_decref(nodes);
	return rc;
}

int srv_h_smbuser_create(struct srv_req *req, json_t **resp)
{
	const char *id = srv_query(req, "smbUserId");
	char parent[600], name[700], now[48], hex[33] = "";
	json_t *doc = NULL, *out = NULL;
	bool validate;
	int rc;

	if ((rc = srv_query_bool(req, "validateOnly", false, &validate)) != AQ_OK)
		return rc;
	if (!id)
		return aq_fail(&req->msg, AQ_EINVAL, "smbUserId is required");
	if ((rc = user_name(req, id, "smbUserId", name, sizeof(name))) != AQ_OK)
		return rc;
	if (!req->body)
		return aq_fail(&req->msg, AQ_EINVAL, "the request body must be an smbUser");
	if ((rc = api_schema_check(api_smb_user_fields, req->body, true, "smbUser", &doc, &req->msg)) != AQ_OK ||
	    (rc = api_smb_user_check(&req->srv->cfg.math, doc, &req->msg)) != AQ_OK)
		goto out;
	if (!json_object_get(doc, "password")) {
		rc = aq_fail(&req->msg, AQ_EINVAL, "password is required");
		goto out;
	}
	if ((rc = user_hash(req, doc, hex)) != AQ_OK)
		goto out;
	srv_parent(req, parent, sizeof(parent));
	ut_clock_now_text(now, sizeof(now));
	json_object_set_new(doc, "name", json_string(name));
	json_object_set_new(doc, "createTime", json_string(now));
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = srv_check_parent(req, SRV_PARENT_LOCATION)) != AQ_OK)
		goto out;
	out = user_answer(doc);
	if (validate) {
		*resp = srv_op_preview(parent, name, "create", out);
		goto out;
	}
	rc = db_put(req->db, "smbuser", parent, name, doc, true);
	if (rc == AQ_EEXIST)
		rc = aq_fail(&req->msg, rc, "smbUser \"%s\" already exists (names compare case-insensitively)", name);
	if (rc != AQ_OK || (rc = secret_put(req, doc, hex, true)) != AQ_OK ||
	    (rc = srv_op_create(req, parent, name, "create", true, out, resp)) != AQ_OK ||
	    (rc = smb_commit(req, parent)) != AQ_OK)
		goto out;
out:
	db_rollback(req->db);
	OPENSSL_cleanse(hex, sizeof(hex));
	json_decref(doc);
	json_decref(out);
	return rc;
}

int srv_h_smbuser_get(struct srv_req *req, json_t **resp)
{
	char name[700];
	json_t *doc = NULL;
	int rc;

	if ((rc = user_load(req, name, sizeof(name), &doc)) == AQ_OK)
		*resp = doc;
	return rc;
}

int srv_h_smbuser_list(struct srv_req *req, json_t **resp)
{
	return srv_list_answer(req, "smbuser", "smbUsers", resp);
}

int srv_h_smbuser_patch(struct srv_req *req, json_t **resp)
{
	struct api_mask_path paths[API_MASK_MAX];
	char name[700], parent[600], hex[33] = "";
	json_t *old = NULL, *patch = NULL, *doc = NULL, *out = NULL;
	bool validate, new_pw = false;
	int npaths, rc;

	if ((rc = srv_query_bool(req, "validateOnly", false, &validate)) != AQ_OK)
		return rc;
	if ((rc = api_mask_parse(api_smb_user_fields, srv_query(req, "updateMask"), paths, &npaths, &req->msg)) != AQ_OK)
		return rc;
	if (!req->body)
		return aq_fail(&req->msg, AQ_EINVAL, "request body must be an smbUser");
	if ((rc = api_schema_check(api_smb_user_fields, req->body, false, "smbUser", &patch, &req->msg)) != AQ_OK)
		return rc;
	for (int i = 0; i < npaths; i++) {
		const char *f = paths[i].field->name;

		/* uid, gid and password name what they set: none can be cleared */
		if (strcmp(f, "description") != 0 && !json_object_get(patch, f)) {
			rc = aq_fail(&req->msg, AQ_EINVAL, "updateMask names %s but the body has none; %s cannot be cleared", f, f);
			goto out;
		}
		new_pw = new_pw || strcmp(f, "password") == 0;
	}
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = user_load(req, name, sizeof(name), &old)) != AQ_OK)
		goto out;
	doc = json_deep_copy(old);
	api_mask_apply(doc, patch, paths, npaths);
	if ((rc = api_smb_user_check(&req->srv->cfg.math, doc, &req->msg)) != AQ_OK ||
	    (new_pw && (rc = user_hash(req, doc, hex)) != AQ_OK))
		goto out;
	json_object_del(doc, "password");
	out = user_answer(doc);
	srv_parent(req, parent, sizeof(parent));
	if (validate) {
		*resp = srv_op_preview(parent, name, "update", out);
		goto out;
	}
	if ((rc = db_put(req->db, "smbuser", parent, name, doc, false)) != AQ_OK ||
	    (rc = secret_put(req, doc, new_pw ? hex : NULL, false)) != AQ_OK ||
	    (rc = srv_op_create(req, parent, name, "update", true, out, resp)) != AQ_OK ||
	    (rc = smb_commit(req, parent)) != AQ_OK)
		goto out;
out:
	db_rollback(req->db);
	OPENSSL_cleanse(hex, sizeof(hex));
	json_decref(old);
	json_decref(patch);
	json_decref(doc);
	json_decref(out);
	return rc;
}

int srv_h_smbuser_delete(struct srv_req *req, json_t **resp)
{
	char name[700], parent[600], sname[900];
	json_t *old = NULL, *empty = NULL;
	int rc;

	if ((rc = db_begin(req->db)) != AQ_OK || (rc = user_load(req, name, sizeof(name), &old)) != AQ_OK)
		goto out;
	srv_parent(req, parent, sizeof(parent));
	snprintf(sname, sizeof(sname), "smbsecrets/%s", name);
	empty = json_pack("{s:s}", "@type", EMPTY_TYPE);
	if ((rc = db_delete(req->db, name)) != AQ_OK || ((rc = db_delete(req->db, sname)) != AQ_OK && rc != AQ_ENOENT) ||
	    (rc = srv_op_create(req, parent, name, "delete", true, empty, resp)) != AQ_OK ||
	    (rc = smb_commit(req, parent)) != AQ_OK)
		goto out;
out:
	db_rollback(req->db);
	json_decref(old);
	json_decref(empty);
	return rc;
}
