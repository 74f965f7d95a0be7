/* srv_routes: the route table (one row per method and path, with who may
 * call it and how) and the matcher the socket thread runs on every request.
 * The table is constant; matching is pure and thread-safe
 * (tests/server/test_srv_routes.c checks that every row matches itself and
 * that no row shadows another). */
#ifndef AQ_SRV_ROUTES_H
#define AQ_SRV_ROUTES_H

#include "server/srv_req.h"

extern const struct srv_route srv_routes[];
extern const int srv_nroutes;

/* Match method+path; *idx the route, params filled. AQ_ENOENT no path,
 * AQ_ENOMETHOD path matches with another method. */
int srv_route_match(const char *method, const char *path, int *idx, char params[][256], int *nparams);

#endif
