/* agent_backup: run one backup or delete job against its vault (see
 * agent_backup.h). */
#include "agent/agent_backup.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/crypto.h>

#include "agent/bkp/bkp.h"
#include "agent/snap/snap.h"
#include "agent/obj/obj.h"
#include "util/ut_hex.h"
#include "util/ut_log.h"

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
			       .progress = on_progress, .progress_arg = &p, .read = o->read, .read_arg = o->read_arg };
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

/* restoreFiles: the paths from backup backupId into the folder o->src. */
static int run_files(struct bkp_vault *v, const struct api_intent_backup *job, const struct agent_backup_opts *o,
		     struct api_intent_backup_state *st)
{
	struct run_progress p = { .o = o, .st = st };
	struct bkp_restore_opts ro = { .progress = on_progress, .progress_arg = &p };
	const char *paths[API_INTENT_BKP_FILES_MAX];
	struct bkp_stats s = { 0 };
	aq_msg why = { .text = "" };
	int rc;

	for (unsigned i = 0; i < job->npaths && i < API_INTENT_BKP_FILES_MAX; i++)
		paths[i] = job->paths[i];
	if (!o->src || !*o->src)
		return outcome(st, -EINVAL, "restoring files", &(aq_msg){ .text = "no destination folder" });
	if ((rc = bkp_restore(v, job->backup_id, o->src, paths, job->npaths, &ro, &s, &why)) != 0)
		return outcome(st, rc == -EAGAIN ? rc : rc, "restoring files", &why);
	st->logical_bytes = s.logical_bytes;
	st->bytes_done = st->bytes_total = s.logical_bytes;
	st->state = API_INTENT_BKP_READY;
	UT_INFO("agent_backup", NULL, "backup %s: %u paths restored into %s of %s (%llu files, %llu bytes)", job->name,
		job->npaths, job->dest, job->volume, (unsigned long long)s.files, (unsigned long long)s.logical_bytes);
	return 0;
}

/* Open job's vault: the directory store <shelf>/<store path>. */
static int open_vault(const char *shelf, const struct api_intent_backup *job, struct bkp_vault **v, aq_msg *msg)
{
	struct obj_cfg cfg = { .kind = OBJ_DIRECTORY };
	uint8_t key[BKP_KEY_LEN];
	char top[4096];
	size_t n = 0;
	int rc;

	if (ut_hex_decode(job->key_hex, strlen(job->key_hex), key, sizeof(key), &n) != AQ_OK || n != sizeof(key))
		return aq_fail(msg, -EINVAL, "the vault key is not 64 hex digits");
	snprintf(top, sizeof(top), "%s/%.*s", shelf, (int)strlen(API_INTENT_BKP_STORE_PREFIX) - 1,
		 API_INTENT_BKP_STORE_PREFIX);
	if (mkdir(top, 0700) != 0 && errno != EEXIST) {
		rc = aq_fail(msg, -errno, "%s: %s", top, strerror(errno));
		goto out;
	}
	if ((size_t)snprintf(cfg.path, sizeof(cfg.path), "%s/%s", shelf, job->store_path) >= sizeof(cfg.path)) {
		rc = aq_fail(msg, -ENAMETOOLONG, "the store path is too long");
		goto out;
	}
	rc = bkp_vault_open(&cfg, key, v, msg);
out:
	OPENSSL_cleanse(key, sizeof(key));
	return rc;
}

int agent_backup_restore(const char *shelf, const struct api_intent_backup *job, const char *dst, aq_msg *msg)
{
	struct bkp_restore_opts ro = { .parallel = 0 };
	struct bkp_vault *v = NULL;
	struct bkp_stats st;
	char stage[4200];
	aq_msg why = { .text = "" };
	int rc;

	if ((size_t)snprintf(stage, sizeof(stage), "%s.restoring", dst) >= sizeof(stage))
		return aq_fail(msg, -ENAMETOOLONG, "the volume folder's name is too long");
	snap_tree_remove(stage);
	if ((rc = snap_volume_make(stage, 0755)) != 0) {
		rc = aq_fail(msg, rc, "cannot make %s: %s", stage, strerror(-rc));
		goto out;
	}
	if ((rc = open_vault(shelf, job, &v, &why)) != 0) {
		rc = aq_fail(msg, rc, "cannot open the vault of backup %s: %s", job->name, why.text);
		goto out;
	}
	if ((rc = bkp_restore(v, job->id, stage, NULL, 0, &ro, &st, &why)) != 0) {
		rc = aq_fail(msg, rc, "cannot restore backup %s: %s", job->name, why.text[0] ? why.text : strerror(-rc));
		goto out;
	}
	if (rename(stage, dst) != 0) {
		rc = aq_fail(msg, -errno, "cannot move the restored tree into place: %s", strerror(errno));
		goto out;
	}
	UT_INFO("agent_backup", NULL, "backup %s restored into %s: %llu files, %llu bytes", job->name, dst,
		(unsigned long long)st.files, (unsigned long long)st.logical_bytes);
out:
	if (rc != 0)
		snap_tree_remove(stage);
	bkp_vault_close(v);
	return rc;
}

int agent_backup_run(const char *shelf, const struct api_intent_backup *job, const struct agent_backup_opts *o,
		     struct api_intent_backup_state *st)
{
	struct bkp_vault *v = NULL;
	aq_msg why = { .text = "" };
	int rc;

	memset(st, 0, sizeof(*st));
	snprintf(st->id, sizeof(st->id), "%s", job->id);
	st->state = API_INTENT_BKP_UPLOADING;
	if (job->op == API_INTENT_BKP_RESTORE)
		return outcome(st, -EINVAL, "a restore is not a job", &why);
	if ((rc = open_vault(shelf, job, &v, &why)) != 0)
		return outcome(st, rc, "opening the vault", &why);
	rc = job->op == API_INTENT_BKP_DELETE		? run_delete(v, job, st)
	     : job->op == API_INTENT_BKP_RESTORE_FILES ? run_files(v, job, o, st)
							: run_backup(v, job, o, st);
	bkp_vault_close(v);
	return rc;
}
