/* srv_health: GET /healthz, answered on the socket thread (see
 * srv_health.h). */
#include "server/srv_health.h"

#include "api/api_error.h"
#include "server/srv_lead.h"
#include "server/srv_req.h"

int srv_h_healthz(struct srv_req *req, json_t **resp)
{
	if (!(*resp = json_pack("{s:s}", "status", "ok")))
		return AQ_ENOMEM;
	srv_lead_view(req->srv, *resp);
	return AQ_OK;
}
