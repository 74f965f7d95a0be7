/* srv_health: GET /healthz, answered on the socket thread (see
 * srv_health.h). */
#include "server/srv_health.h"

#include "api/api_error.h"

int srv_h_healthz(struct srv_req *req, json_t **resp)
{
	(void)req;
	*resp = json_pack("{s:s}", "status", "ok");
	return *resp ? AQ_OK : AQ_ENOMEM;
}
