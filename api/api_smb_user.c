/* api_smb_user: the SmbUser resource (Aquifer's own, issue 18): an account an
 * SMB session authenticates as, per project and location
 * (projects/P/locations/L/smbUsers/NAME). The password is input only: the
 * server turns it into the NT hash at once and keeps that apart from this
 * document (server/srv_smbuser.c), so no field here ever holds a secret.
 * uid and gid are the owner NFS sees for what the user creates. */
#include "api/api_resource.h"

#include <stdio.h>
#include <string.h>

#include "api/api_intent.h"

const struct api_field api_smb_user_fields[] = {
	{ "name", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "createTime", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	/* required on create (srv_smbuser.c): a required field would be in answers' schema */
	{ "password", API_T_STRING, API_F_INPUT, NULL, NULL, API_SMB_USER_PASSWORD_LEN },
	{ "uid", API_T_INT64, API_F_REQUIRED, NULL, NULL, 0 },
	{ "gid", API_T_INT64, API_F_REQUIRED, NULL, NULL, 0 },
	{ "description", API_T_STRING, 0, NULL, NULL, 2048 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

int api_smb_user_check(const struct api_math_params *p, json_t *doc, aq_msg *msg)
{
	static const char *const ids[] = { "uid", "gid" };
	json_t *pw = json_object_get(doc, "password");

	(void)p;
	/* 0..2^32-2: 2^32-1 is (uid_t)-1, "no change" to chown(2) */
	for (int i = 0; i < 2; i++) {
		int64_t v = api_json_int64(doc, ids[i], 0);

		if (json_object_get(doc, ids[i]) && (v < 0 || v > API_SMB_USER_ID_MAX))
			return aq_fail(msg, AQ_EINVAL, "%s must be 0-%lld", ids[i], (long long)API_SMB_USER_ID_MAX);
	}
	/* never quote the password in a message */
	if (pw && json_string_length(pw) == 0)
		return aq_fail(msg, AQ_EINVAL, "password must not be empty");
	if (pw && strlen(json_string_value(pw)) != json_string_length(pw))
		return aq_fail(msg, AQ_EINVAL, "password must not contain a NUL character");
	return AQ_OK;
}
