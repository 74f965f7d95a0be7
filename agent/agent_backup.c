/* agent_backup: run one backup or delete job against its vault (see
 * agent_backup.h). */
#include "agent/agent_backup.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/crypto.h>

#include "agent/bkp/bkp.h"
#include "agent/obj/obj.h"
#include "util/ut_hex.h"

struct run_progress {
	const struct agent_backup_opts *o;
	struct api_intent_backup_state *st;
};

static void on_progress(void *arg, uint64_t done, uint64_t total)
{
	struct run_progress *p = arg;

	p->st->bytes_done = done;
	p->st->bytes_total = total;
	if (p->o->progress)
		p->o->progress(p->o->progress_arg, done, total);
}

/* The report of a failed call: -EAGAIN keeps the job UPLOADING. */
static int outcome(struct api_intent_backup_state *st, int rc, const char *what, const aq_msg *why)
{
	st->state = rc == -EAGAIN ? API_INTENT_BKP_UPLOADING : API_INTENT_BKP_ERROR;
	snprintf(st->detail, sizeof(st->detail), "%s%s: %s", rc == -EAGAIN ? "the backup store is unavailable, "
		 "retrying: " : "", what, why->text[0] ? why->text : strerror(-rc));
	return rc;
}

static void set_stats(struct api_intent_backup_state *st, const struct bkp_stats *s)
{
	st->logical_bytes = s->logical_bytes;
	st->uploaded_bytes = s->bytes_uploaded;
	st->bytes_done = st->bytes_total = s->logical_bytes;
}

static int run_backup(struct bkp_vault *v, const struct api_intent_backup *job, const struct agent_backup_opts *o,
		      struct api_intent_backup_state *st)
{
	struct run_progress p = { .o = o, .st = st };
	struct bkp_opts bo = { .prev_id = job->prev_id[0] ? job->prev_id : NULL, .source = job->name,
			       .ident = o->strict_ident ? BKP_IDENT_STRICT : BKP_IDENT_MTIME,
			       .progress = on_progress, .progress_arg = &p };
	struct bkp_stats s = { 0 };
	struct bkp_info info;
	aq_msg why = { .text = "" };
	int rc;

	if (!o->src)
		return outcome(st, -EINVAL, "no source folder", &why);
	rc = bkp_backup(v, job->id, o->src, &bo, &s, &why);
	if (rc == -ENOENT && bo.prev_id) {
		/* the previous backup is gone from the vault: a full one (dedup
		 * keeps the upload to what the vault lacks) */
		why.text[0] = '\0';
		bo.prev_id = NULL;
		rc = bkp_backup(v, job->id, o->src, &bo, &s, &why);
	}
	if (rc == -EEXIST) {
		/* a re-run after a crash: the manifest says it is whole */
		why.text[0] = '\0';
		if ((rc = bkp_info(v, job->id, &info, &why)) != 0)
			return outcome(st, rc, "the finished backup does not verify", &why);
		s = info.stats;
		s.bytes_uploaded = 0;
	} else if (rc != 0) {
		return outcome(st, rc, "backup", &why);
	}
	set_stats(st, &s);
	st->state = API_INTENT_BKP_READY;
	return AQ_OK;
}

static int run_delete(struct bkp_vault *v, const struct api_intent_backup *job, struct api_intent_backup_state *st)
{
	struct bkp_gc_stats gs;
	aq_msg why = { .text = "" };
	int rc = bkp_delete(v, job->id, &why);

	if (rc != 0 && rc != -ENOENT)
		return outcome(st, rc, "delete", &why);
	why.text[0] = '\0';
	rc = bkp_gc(v, 0, &gs, &why);
	if (rc != 0 && rc != -EBUSY)
		return outcome(st, rc, "the backup is deleted but collecting its chunks failed", &why);
	st->state = API_INTENT_BKP_DELETED;
	return AQ_OK;
}

int agent_backup_run(const char *shelf, const struct api_intent_backup *job, const struct agent_backup_opts *o,
		     struct api_intent_backup_state *st)
{
	struct obj_cfg cfg = { .kind = OBJ_DIRECTORY };
	struct bkp_vault *v = NULL;
	uint8_t key[BKP_KEY_LEN];
	char top[4096];
	aq_msg why = { .text = "" };
	size_t n = 0;
	int rc;

	memset(st, 0, sizeof(*st));
	snprintf(st->id, sizeof(st->id), "%s", job->id);
	st->state = API_INTENT_BKP_UPLOADING;
	if (ut_hex_decode(job->key_hex, strlen(job->key_hex), key, sizeof(key), &n) != AQ_OK || n != sizeof(key)) {
		rc = outcome(st, -EINVAL, "the vault key", &why);
		goto out;
	}
	snprintf(top, sizeof(top), "%s/%.*s", shelf, (int)strlen(API_INTENT_BKP_STORE_PREFIX) - 1,
		 API_INTENT_BKP_STORE_PREFIX);
	if (mkdir(top, 0700) != 0 && errno != EEXIST) {
		rc = outcome(st, -errno, top, &why);
		goto out;
	}
	if ((size_t)snprintf(cfg.path, sizeof(cfg.path), "%s/%s", shelf, job->store_path) >= sizeof(cfg.path)) {
		rc = outcome(st, -ENAMETOOLONG, "the store path", &why);
		goto out;
	}
	if ((rc = bkp_vault_open(&cfg, key, &v, &why)) != 0) {
		outcome(st, rc, "opening the vault", &why);
		goto out;
	}
	rc = job->op == API_INTENT_BKP_DELETE ? run_delete(v, job, st) : run_backup(v, job, o, st);
out:
	bkp_vault_close(v);
	OPENSSL_cleanse(key, sizeof(key));
	return rc;
}
