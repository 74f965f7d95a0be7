/* srv_ui: the built-in dashboard, static files embedded in the binary at
 * build time (server/ui/, by server/embed.sh): GET /ui/ is the page, GET
 * /ui/app.js and /ui/app.css its script and style. No token is needed to
 * fetch them; the page asks the API with the token the operator gives it. */
#include "server/srv_docs.h"

#include <stdlib.h>
#include <string.h>

#include "server/srv_req.h"

extern const unsigned char srv_ui_index_html[];
extern const size_t srv_ui_index_html_len;
extern const unsigned char srv_ui_app_js[];
extern const size_t srv_ui_app_js_len;
extern const unsigned char srv_ui_app_css[];
extern const size_t srv_ui_app_css_len;

static const struct {
	const char *file;
	const unsigned char *data;
	const size_t *len;
	const char *ctype;
} ui_files[] = {
	{ "", srv_ui_index_html, &srv_ui_index_html_len, "text/html; charset=utf-8" },
	{ "index.html", srv_ui_index_html, &srv_ui_index_html_len, "text/html; charset=utf-8" },
	{ "app.js", srv_ui_app_js, &srv_ui_app_js_len, "text/javascript; charset=utf-8" },
	{ "app.css", srv_ui_app_css, &srv_ui_app_css_len, "text/css; charset=utf-8" },
};

int srv_h_ui(struct srv_req *req, json_t **resp)
{
	const char *file = req->nparams > 0 ? req->params[0] : "";

	(void)resp;
	for (size_t i = 0; i < sizeof(ui_files) / sizeof(ui_files[0]); i++) {
		if (strcmp(ui_files[i].file, file) != 0)
			continue;
		if (!(req->text = malloc(*ui_files[i].len + 1)))
			return AQ_ENOMEM;
		memcpy(req->text, ui_files[i].data, *ui_files[i].len);
		req->text[*ui_files[i].len] = '\0';
		req->text_len = *ui_files[i].len;
		req->ctype = ui_files[i].ctype;
		req->status = 200;
		return AQ_OK;
	}
	return aq_fail(&req->msg, AQ_ENOENT, "no dashboard file \"%s\"", file);
}
