/* api_project: the Project and Location resources (Aquifer's own: projects are
 * real resources here; locations are cluster-wide and created by an admin). */
#include "api/api_resource.h"

#include <stddef.h>

const struct api_field api_project_fields[] = {
	{ "name", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "projectId", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "displayName", API_T_STRING, 0, NULL, NULL, 200 },
	{ "labels", API_T_LABELS, 0, NULL, NULL, 0 },
	{ "state", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "createTime", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

const struct api_field api_location_fields[] = {
	{ "name", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "locationId", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "displayName", API_T_STRING, 0, NULL, NULL, 200 },
	{ "labels", API_T_LABELS, 0, NULL, NULL, 0 },
	{ "metadata", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "createTime", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};
