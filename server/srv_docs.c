/* srv_docs: the published contract, served from the binary:
 * GET /v1/openapi.yaml (the spec) and GET /docs/ (HTML generated from it). */
#include "server/srv_docs.h"

#include <stdlib.h>
#include <string.h>

#include "server/srv_req.h"

extern const unsigned char srv_openapi_yaml[];
extern const size_t srv_openapi_yaml_len;
extern const unsigned char srv_docs_html[];
extern const size_t srv_docs_html_len;

static int docs_send(struct srv_req *req, const unsigned char *data, size_t len, const char *ctype)
{
	if (!(req->text = malloc(len + 1)))
		return AQ_ENOMEM;
	memcpy(req->text, data, len);
	req->text[len] = '\0';
	req->text_len = len;
	req->ctype = ctype;
	req->status = 200;
	return AQ_OK;
}

int srv_h_openapi(struct srv_req *req, json_t **resp)
{
	(void)resp;
	return docs_send(req, srv_openapi_yaml, srv_openapi_yaml_len, "application/yaml");
}

int srv_h_docs(struct srv_req *req, json_t **resp)
{
	(void)resp;
	return docs_send(req, srv_docs_html, srv_docs_html_len, "text/html; charset=utf-8");
}
