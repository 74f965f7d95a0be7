/* api_intent_backup: the backup jobs of the intent and their reports (see
 * api_intent_backup.h). Pure. */
#include "api/api_intent_backup.h"

#include <stdio.h>
#include <string.h>

#include "api/api_math.h"

static const char *const bkp_states[] = { "UPLOADING", "READY", "ERROR", "DELETED" };

static bool hex_ok(const char *s, size_t n)
{
	return strlen(s) == n && strspn(s, "0123456789abcdef") == n;
}

/* A string member of at most cap-1 bytes into dst ("" when absent and not
 * needed). */
static int text(const json_t *o, const char *key, bool need, char *dst, size_t cap)
{
	const json_t *v = json_object_get(o, key);
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;

	if ((v && !s) || (s && (strlen(s) >= cap || strlen(s) != json_string_length(v))) || (need && (!s || !*s)))
		return AQ_EINVAL;
	snprintf(dst, cap, "%s", s ? s : "");
	return AQ_OK;
}

static int count(const json_t *o, const char *key, uint64_t *out)
{
	const json_t *v = json_object_get(o, key);

	if (v && (!json_is_integer(v) || json_integer_value(v) < 0))
		return AQ_EINVAL;
	*out = v ? (uint64_t)json_integer_value(v) : 0;
	return AQ_OK;
}

int api_backup_path_check(const char *path, bool root_ok, const char *what, aq_msg *msg)
{
	size_t n = strnlen(path, API_INTENT_BKP_PATH_LEN + 1);

	if (n > API_INTENT_BKP_PATH_LEN)
		return aq_fail(msg, AQ_EINVAL, "%s: a path of at most %d bytes", what, API_INTENT_BKP_PATH_LEN);
	if (path[0] != '/')
		return aq_fail(msg, AQ_EINVAL, "%s \"%s\" must be an absolute path in the volume (\"/dir/file\")", what,
			       path);
	if (n == 1)
		return root_ok ? AQ_OK : aq_fail(msg, AQ_EINVAL, "%s \"/\": name a file or folder, not the root", what);
	for (const char *c = path + 1; *c;) {
		size_t k = strcspn(c, "/");

		if (k == 0 || (k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.'))
			return aq_fail(msg, AQ_EINVAL, "%s \"%s\" has an empty, \".\" or \"..\" component: a path "
				       "never leaves the volume", what, path);
		c += k;
		if (*c == '/' && !*++c)
			return aq_fail(msg, AQ_EINVAL, "%s \"%s\" ends with \"/\"", what, path);
	}
	return AQ_OK;
}

static int decode_files(const json_t *in, struct api_intent_backup *out, aq_msg *msg)
{
	const json_t *paths = json_object_get(in, "paths"), *p;
	size_t i;

	if (text(in, "backupId", true, out->backup_id, sizeof(out->backup_id)) != AQ_OK ||
	    !hex_ok(out->backup_id, API_INTENT_BKP_ID_LEN))
		return aq_fail(msg, AQ_EINVAL, "backup job %s: backupId must be 16 hex digits", out->id);
	if (text(in, "volume", true, out->volume, sizeof(out->volume)) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "backup job %s: volume must be a resource name of at most %d bytes", out->id,
			       API_INTENT_NAME_LEN);
	if (!json_is_array(paths) || json_array_size(paths) == 0 || json_array_size(paths) > API_INTENT_BKP_FILES_MAX)
		return aq_fail(msg, AQ_EINVAL, "backup job %s: paths must be 1-%d paths", out->id, API_INTENT_BKP_FILES_MAX);
	json_array_foreach(paths, i, p) {
		if (!json_is_string(p) || json_string_length(p) > API_INTENT_BKP_PATH_LEN ||
		    strlen(json_string_value(p)) != json_string_length(p))
			return aq_fail(msg, AQ_EINVAL, "backup job %s: paths[%zu] must be a path of at most %d bytes", out->id,
				       i, API_INTENT_BKP_PATH_LEN);
		snprintf(out->paths[i], sizeof(out->paths[i]), "%s", json_string_value(p));
		if (api_backup_path_check(out->paths[i], false, "paths[]", msg) != AQ_OK)
			return AQ_EINVAL;
	}
	out->npaths = (unsigned)i;
	if (text(in, "dest", true, out->dest, sizeof(out->dest)) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "backup job %s: dest must be a path of at most %d bytes", out->id,
			       API_INTENT_BKP_PATH_LEN);
	return api_backup_path_check(out->dest, true, "dest", msg);
}

json_t *api_intent_backup_encode(const struct api_intent_backup *b)
{
	static const char *const ops[] = { "backup", "delete", "restore", "restoreFiles" };
	json_t *o = json_pack("{s:s, s:s, s:s, s:{s:s, s:{s:{s:s}}}}", "op", ops[b->op], "id", b->id, "name", b->name,
			      "vault",
			      "key", b->key_hex, "store", "directory", "path", b->store_path);

	if (o && b->op == API_INTENT_BKP_RESTORE_FILES) {
		json_t *paths = json_array();

		for (unsigned i = 0; paths && i < b->npaths; i++)
			json_array_append_new(paths, json_string(b->paths[i]));
		json_object_set_new(o, "backupId", json_string(b->backup_id));
		json_object_set_new(o, "volume", json_string(b->volume));
		json_object_set_new(o, "paths", paths ? paths : json_null());
		json_object_set_new(o, "dest", json_string(b->dest));
		return o;
	}
	if (!o || b->op != API_INTENT_BKP_BACKUP)
		return o;
	json_object_set_new(o, "volume", json_string(b->volume));
	if (b->has_snap)
		json_object_set_new(o, "snapshot", json_pack("{s:s, s:s}", "id", b->snap.id, "uid", b->snap.uid));
	if (b->prev_id[0])
		json_object_set_new(o, "prevId", json_string(b->prev_id));
	return o;
}

static int decode_source(const json_t *in, struct api_intent_backup *out, aq_msg *msg)
{
	const json_t *snap = json_object_get(in, "snapshot");
	aq_msg why = { .text = "" };

	if (text(in, "volume", true, out->volume, sizeof(out->volume)) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "backup job %s: volume must be a resource name of at most %d bytes", out->id,
			       API_INTENT_NAME_LEN);
	if (snap) {
		if (!json_is_object(snap) || text(snap, "id", true, out->snap.id, sizeof(out->snap.id)) != AQ_OK ||
		    api_id_check(out->snap.id, "snapshot.id", &why) != AQ_OK)
			return aq_fail(msg, AQ_EINVAL, "backup job %s: snapshot.id must follow the id rule", out->id);
		if (text(snap, "uid", true, out->snap.uid, sizeof(out->snap.uid)) != AQ_OK || !hex_ok(out->snap.uid, 16))
			return aq_fail(msg, AQ_EINVAL, "backup job %s: snapshot.uid must be 16 hex digits", out->id);
		out->has_snap = true;
	}
	if (text(in, "prevId", false, out->prev_id, sizeof(out->prev_id)) != AQ_OK ||
	    (out->prev_id[0] && !hex_ok(out->prev_id, API_INTENT_BKP_ID_LEN)))
		return aq_fail(msg, AQ_EINVAL, "backup job %s: prevId must be 16 hex digits", out->id);
	if (strcmp(out->prev_id, out->id) == 0)
		return aq_fail(msg, AQ_EINVAL, "backup job %s: prevId must name another backup", out->id);
	return AQ_OK;
}

int api_intent_backup_decode(const json_t *in, struct api_intent_backup *out, aq_msg *msg)
{
	const json_t *vault = json_object_get(in, "vault");
	const json_t *dir = json_object_get(json_object_get(vault, "store"), "directory");
	char op[16];
	int rc;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(in) || text(in, "id", true, out->id, sizeof(out->id)) != AQ_OK ||
	    !hex_ok(out->id, API_INTENT_BKP_ID_LEN))
		return aq_fail(msg, AQ_EINVAL, "a backup job's id must be 16 hex digits");
	if (text(in, "op", true, op, sizeof(op)) != AQ_OK ||
	    (strcmp(op, "backup") && strcmp(op, "delete") && strcmp(op, "restore") && strcmp(op, "restoreFiles")))
		return aq_fail(msg, AQ_EINVAL, "backup job %s: op must be backup, delete, restore or restoreFiles", out->id);
	out->op = strcmp(op, "delete") == 0		 ? API_INTENT_BKP_DELETE
		  : strcmp(op, "restore") == 0	 ? API_INTENT_BKP_RESTORE
		  : strcmp(op, "restoreFiles") == 0 ? API_INTENT_BKP_RESTORE_FILES
						    : API_INTENT_BKP_BACKUP;
	if (text(in, "name", true, out->name, sizeof(out->name)) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "backup job %s: name must be a resource name of at most %d bytes", out->id,
			       API_INTENT_NAME_LEN);
	/* never quote the key */
	if (!json_is_object(vault) || text(vault, "key", true, out->key_hex, sizeof(out->key_hex)) != AQ_OK ||
	    !hex_ok(out->key_hex, API_INTENT_BKP_KEY_HEX))
		return aq_fail(msg, AQ_EINVAL, "backup job %s: vault.key must be 64 hex digits", out->id);
	if (!json_is_object(dir) || text(dir, "path", true, out->store_path, sizeof(out->store_path)) != AQ_OK ||
	    strncmp(out->store_path, API_INTENT_BKP_STORE_PREFIX, strlen(API_INTENT_BKP_STORE_PREFIX)) != 0 ||
	    !hex_ok(out->store_path + strlen(API_INTENT_BKP_STORE_PREFIX), 16))
		return aq_fail(msg, AQ_EINVAL, "backup job %s: vault.store.directory.path must be %s<16 hex digits>",
			       out->id, API_INTENT_BKP_STORE_PREFIX);
	if (out->op == API_INTENT_BKP_BACKUP)
		return decode_source(in, out, msg);
	if (out->op == API_INTENT_BKP_RESTORE_FILES) {
		if ((rc = decode_files(in, out, msg)) != AQ_OK)
			memset(out->paths, 0, sizeof(out->paths));
		return rc;
	}
	if (json_object_get(in, "volume") || json_object_get(in, "snapshot") || json_object_get(in, "prevId"))
		return aq_fail(msg, AQ_EINVAL, "backup job %s: a %s takes no volume, snapshot or prevId", out->id, op);
	return AQ_OK;
}

json_t *api_intent_backup_state_encode(const struct api_intent_backup_state *st)
{
	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:s}", "id", st->id, "state", bkp_states[st->state],
			 "bytesDone", (json_int_t)st->bytes_done, "bytesTotal", (json_int_t)st->bytes_total,
			 "logicalBytes", (json_int_t)st->logical_bytes, "uploadedBytes", (json_int_t)st->uploaded_bytes,
			 "stateDetails", st->detail);
}

int api_intent_backup_state_decode(const json_t *in, struct api_intent_backup_state *out, aq_msg *msg)
{
	char state[16];
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(in) || text(in, "id", true, out->id, sizeof(out->id)) != AQ_OK ||
	    !hex_ok(out->id, API_INTENT_BKP_ID_LEN))
		return aq_fail(msg, AQ_EINVAL, "a backup report's id must be 16 hex digits");
	if (text(in, "state", true, state, sizeof(state)) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "backup %s: state is required", out->id);
	for (i = 0; i < sizeof(bkp_states) / sizeof(bkp_states[0]) && strcmp(state, bkp_states[i]); i++)
		;
	if (i == sizeof(bkp_states) / sizeof(bkp_states[0]))
		return aq_fail(msg, AQ_EINVAL, "backup %s: state must be UPLOADING, READY, ERROR or DELETED", out->id);
	out->state = (enum api_intent_bkp_state)i;
	if (count(in, "bytesDone", &out->bytes_done) != AQ_OK || count(in, "bytesTotal", &out->bytes_total) != AQ_OK ||
	    count(in, "logicalBytes", &out->logical_bytes) != AQ_OK ||
	    count(in, "uploadedBytes", &out->uploaded_bytes) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "backup %s: bytesDone, bytesTotal, logicalBytes and uploadedBytes must be "
			       "non-negative integers", out->id);
	if (out->bytes_done > out->bytes_total)
		return aq_fail(msg, AQ_EINVAL, "backup %s: bytesDone passes bytesTotal", out->id);
	if (text(in, "stateDetails", false, out->detail, sizeof(out->detail)) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "backup %s: stateDetails must be a string of at most %d bytes", out->id,
			       API_INTENT_SNAP_DETAIL_LEN);
	return AQ_OK;
}
