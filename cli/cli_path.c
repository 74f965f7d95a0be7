/* cli_path: path templates of the command table, expanded with the
 * project, location and NAME of a command line (see cli_path.h). */
#include "cli/cli_path.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The collections of a full name that set a path parameter. */
static const struct name_coll {
	const char *coll;
	int slot;                    /* in vars.buf */
	size_t off;                  /* the member of struct cli_path_vars it sets */
} name_colls[] = {
	{ "projects", 0, offsetof(struct cli_path_vars, project) },
	{ "locations", 1, offsetof(struct cli_path_vars, location) },
	{ "volumes", 3, offsetof(struct cli_path_vars, volume) },
	{ "backupVaults", 4, offsetof(struct cli_path_vars, backup_vault) },
	{ NULL, 0, 0 }
};

int cli_path_vars_from_name(struct cli_path_vars *v, const char *full, aq_msg *msg)
{
	const struct name_coll *c;
	const char *p = full;
	char coll[128], id[256];
	int pairs = 0;

	if (*p == '/')
		p++;
	while (*p) {
		size_t clen = strcspn(p, "/"), ilen;
		if (p[clen] != '/' || clen == 0 || clen >= sizeof(coll))
			return aq_fail(msg, AQ_EINVAL, "invalid resource name '%s'", full);
		memcpy(coll, p, clen);
		coll[clen] = '\0';
		p += clen + 1;
		ilen = strcspn(p, "/");
		if (ilen == 0 || ilen >= sizeof(id))
			return aq_fail(msg, AQ_EINVAL, "invalid resource name '%s'", full);
		memcpy(id, p, ilen);
		id[ilen] = '\0';
		p += ilen + (p[ilen] == '/' ? 1 : 0);
		for (c = name_colls; c->coll; c++)
			if (strcmp(coll, c->coll) == 0) {
				char *slot = v->buf[c->slot];
				snprintf(slot, sizeof(v->buf[0]), "%s", id);
				*(const char **)(void *)((char *)v + c->off) = slot;
			}
		snprintf(v->buf[2], sizeof(v->buf[2]), "%s", id);
		v->name = v->buf[2];
		pairs++;
	}
	return pairs ? AQ_OK : aq_fail(msg, AQ_EINVAL, "invalid resource name '%s'", full);
}

struct var_src {
	const char *param;           /* "{project}" */
	size_t off;                  /* in struct cli_path_vars */
	const char *hint;            /* how to set it */
};

static const struct var_src var_srcs[] = {
	{ "{project}", offsetof(struct cli_path_vars, project),
	  "no project: use --project, AQUIFER_PROJECT or 'aquifer config set project ID'" },
	{ "{location}", offsetof(struct cli_path_vars, location), CLI_PATH_NO_LOCATION },
	{ "{volume}", offsetof(struct cli_path_vars, volume), "missing --volume: the snapshot's volume" },
	{ "{backupVault}", offsetof(struct cli_path_vars, backup_vault), "missing --backup-vault: the backup's vault" },
	{ "{name}", offsetof(struct cli_path_vars, name), "missing NAME" },
	{ NULL, 0, NULL }
};

/* Expand tmpl with v into b; AQ_EINVAL with a hint when a parameter is unset. */
int cli_path_expand(struct ut_buf *b, const char *tmpl, const struct cli_path_vars *v, aq_msg *msg)
{
	const char *p = tmpl;

	while (*p) {
		const struct var_src *s;
		const char *val;
		if (*p != '{') {
			size_t n = strcspn(p, "{");
			ut_buf_add(b, p, n);
			p += n;
			continue;
		}
		for (s = var_srcs; s->param; s++)
			if (strncmp(p, s->param, strlen(s->param)) == 0)
				break;
		if (s->param == NULL)
			return aq_fail(msg, AQ_EINVAL, "bad path template %s", tmpl);
		val = *(const char *const *)(const void *)((const char *)v + s->off);
		if (val == NULL || *val == '\0')
			return aq_fail(msg, AQ_EINVAL, "%s", s->hint);
		cli_buf_add_escaped(b, val);
		p += strlen(s->param);
	}
	return b->err ? AQ_ENOMEM : AQ_OK;
}
