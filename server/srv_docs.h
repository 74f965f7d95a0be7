/* srv_docs: the embedded OpenAPI document (GET /v1/openapi.yaml) and its
 * HTML viewer (GET /docs/), and the embedded web UI (GET /ui/, srv_ui.c).
 * Static bytes built into the binary (server/embed.sh); no token, no
 * state. */
#ifndef AQ_SRV_DOCS_H
#define AQ_SRV_DOCS_H

#include <jansson.h>

struct srv_req;

int srv_h_openapi(struct srv_req *req, json_t **resp);
int srv_h_docs(struct srv_req *req, json_t **resp);
/* srv_ui.c */
int srv_h_ui(struct srv_req *req, json_t **resp);

#endif
