/* srv_push: send one node its intent (PUT /v1/intent on the agent, the
 * node's push secret as bearer token, a timeout that grows with the
 * intent's volumes: api_agent_call_ms). Blocking (libcurl):
 * the reconciler's pushers only (srv_pusher.h). */
#ifndef AQ_SRV_PUSH_H
#define AQ_SRV_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct srv;

/* PUT intent (with its generation) to node's agent. On AQ_OK *applied is
 * the generation the agent reports and *failed (new reference, may be
 * NULL) its [{name, error}]; else err says why (AQ_EUNAVAIL: no answer,
 * AQ_EIO: an answer other than 200 with JSON). */
int srv_push_intent(const struct srv *srv, const json_t *node, const json_t *intent, int64_t *applied,
		    json_t **failed, char *err, size_t errcap);

#endif
