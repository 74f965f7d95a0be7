/* srv_project: projects (stored kind "project", projects/P), created and
 * deleted by the cluster admin, read by their own tokens. Synchronous:
 * metadata, nothing waits on a node. Each handler runs in its own
 * transaction on a worker. */
#ifndef AQ_SRV_PROJECT_H
#define AQ_SRV_PROJECT_H

#include <stdint.h>

#include <jansson.h>

struct srv_req;

/* Count kind under "projects/P/locations/L" for every pair of a project
 * and a location, one side fixed by project or location (the other NULL).
 * Exact counts per parent: a scan of one page of all pools would miss those
 * past it. */
int srv_project_count(struct srv_req *req, const char *kind, const char *project, const char *location,
		      int64_t *total);

int srv_h_project_create(struct srv_req *req, json_t **resp);
int srv_h_project_get(struct srv_req *req, json_t **resp);
int srv_h_project_list(struct srv_req *req, json_t **resp);
int srv_h_project_delete(struct srv_req *req, json_t **resp);

#endif
