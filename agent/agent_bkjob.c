/* agent_bkjob: the intent's backup jobs (api/api_intent_backup.h) handed to
 * the backup worker (agent_bkpq.h), and its reports in the status (issue 21
 * phase 2, agent side). aquiferd sends a job while a backup is being made or
 * deleted (server/srv_backup.h): with none, the worker idles and the status
 * carries no "backups". A "restore" is not a job here (a volume's
 * restoreSource, agent_snap.c): such a job is left out.
 *
 * The source of a backup is the named snapshot's folder
 * (snap_dir_of(shelf, volume)/<snapshot id>) of a volume this node serves
 * by the last applied intent; a job without a snapshot fails by name (the
 * temporary snapshot is not made yet). The identity mode follows the
 * volume's snapshot mechanism (btrfs: strict). */
#include "agent/agent_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_bkpq.h"
#include "agent/snap/snap.h"
#include "agent/tier/tier.h"
#include "api/api_schema.h"
#include "util/ut_hex.h"

/* The served volume's folder name under volumes/ into out ("" when not). */
static bool bkjob_volume_name(struct agent *a, const char *volume, char *out, size_t cap)
{
	json_t *v;
	size_t i;
	bool found = false;

	out[0] = '\0';
	pthread_mutex_lock(&a->lock);
	json_array_foreach(json_object_get(a->intent, "volumes"), i, v) {
		const char *dir = api_json_str(v, "dir", "");

		if (strcmp(api_json_str(v, "name", ""), volume) != 0 || strncmp(dir, "volumes/", 8) != 0 ||
		    !ut_hex_valid(dir + 8, strlen(dir + 8)) || strlen(dir + 8) == 0)
			continue;
		snprintf(out, cap, "%s", dir + 8);
		found = true;
		break;
	}
	pthread_mutex_unlock(&a->lock);
	return found;
}

/* restoreFiles: <shelf>/volumes/<folder><dest>, an existing folder reached
 * through no symlink (the files never land outside the volume). */
static int bkjob_dest(struct agent *a, const struct api_intent_backup *job, char *dst, size_t cap, aq_msg *msg)
{
	char name[80];
	size_t root;
	struct stat st;

	if (!bkjob_volume_name(a, job->volume, name, sizeof(name)))
		return aq_fail(msg, -EAGAIN, "restore %s: volume %s is not served by this node", job->name, job->volume);
	root = (size_t)snprintf(dst, cap, "%s/volumes/%s", a->cfg.shelf, name);
	if (root >= cap || (size_t)snprintf(dst + root, cap - root, "%s", strcmp(job->dest, "/") ? job->dest : "") >= cap - root)
		return aq_fail(msg, -ENAMETOOLONG, "restoreDestinationPath %s is too long", job->dest);
	for (char *c = dst + root + 1; c <= dst + strlen(dst); c++) {
		char keep = *c;

		if (*c != '/' && *c != '\0')
			continue;
		*c = '\0';
		if (lstat(dst, &st) != 0 || !S_ISDIR(st.st_mode)) {
			*c = keep;
			return aq_fail(msg, -ENOTDIR, "restoreDestinationPath %s is not a folder of volume %s", job->dest,
				       job->volume);
		}
		*c = keep;
	}
	return AQ_OK;
}

static int bkjob_source(void *arg, const struct api_intent_backup *job, char *src, size_t cap, bool *strict,
			aq_msg *msg)
{
	struct agent *a = arg;
	char name[80], root[1200], sdir[1100];
	struct stat st;

	if (job->op == API_INTENT_BKP_RESTORE_FILES)
		return bkjob_dest(a, job, src, cap, msg);
	if (!job->has_snap)
		return aq_fail(msg, AQ_EINVAL, "backup %s: a sourceSnapshot is needed (temporary snapshots: not yet)",
			       job->name);
	if (!bkjob_volume_name(a, job->volume, name, sizeof(name)))
		return aq_fail(msg, -EAGAIN, "backup %s: volume %s is not served by this node", job->name, job->volume);
	if (!snap_exists(a->cfg.shelf, name, &job->snap))
		return aq_fail(msg, AQ_EINVAL, "backup %s: snapshot %s (uid %s) of %s does not exist", job->name,
			       job->snap.id, job->snap.uid, job->volume);
	snap_dir_of(a->cfg.shelf, name, sdir, sizeof(sdir));
	if ((size_t)snprintf(src, cap, "%s/%s", sdir, job->snap.id) >= cap || stat(src, &st) != 0 ||
	    !S_ISDIR(st.st_mode))
		return aq_fail(msg, AQ_EINVAL, "backup %s: snapshot folder of %s missing", job->name, job->snap.id);
	snprintf(root, sizeof(root), "%s/volumes/%s", a->cfg.shelf, name);
	*strict = snap_mech_of(root) == SNAP_BTRFS;
	return AQ_OK;
}

/* A tiered volume's snapshot: its cold ranges (holes in the snapshot's
 * files) come from the tier (tier_snap_read), never as zeros; a file never
 * tiered is read as it is. */
static ssize_t bkjob_read(void *arg, const struct api_intent_backup *job, int fd, const char *path, void *buf,
			  size_t len, uint64_t off)
{
	struct agent *a = arg;
	uint64_t fsid = 0;
	struct stat st;
	size_t got = 0;
	json_t *v;
	size_t i;
	ssize_t n;
	int rc;

	(void)path;
	pthread_mutex_lock(&a->lock);
	json_array_foreach(json_object_get(a->intent, "volumes"), i, v)
		if (strcmp(api_json_str(v, "name", ""), job->volume) == 0)
			fsid = strtoull(api_json_str(v, "fsid", "0"), NULL, 16);
	pthread_mutex_unlock(&a->lock);
	if (fsid && a->tier && fstat(fd, &st) == 0) {
		rc = tier_snap_read(a->tier, fsid, job->snap.id, fd, &st, off, buf, len, &got);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return (ssize_t)got;
	}
	do
		n = pread(fd, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int agent_bkjob_start(struct agent *a)
{
	struct agent_bkpq_cfg c = { .shelf = a->cfg.shelf, .source_fn = bkjob_source, .read_fn = bkjob_read,
				    .arg = a };

	return agent_bkpq_new(&c, &a->bkpq);
}

void agent_bkjob_stop(struct agent *a)
{
	agent_bkpq_free(a->bkpq);
	a->bkpq = NULL;
}

int agent_bkjob_check(const json_t *jobs, struct api_intent_backup **out, size_t *n, aq_msg *msg)
{
	size_t i, k = json_array_size(jobs);
	json_t *j;

	*out = NULL;
	*n = 0;
	if (!jobs || k == 0)
		return AQ_OK;
	if (!json_is_array(jobs) || k > API_INTENT_MAX_BACKUPS)
		return aq_fail(msg, AQ_EINVAL, "intent backups must be an array of at most %d jobs", API_INTENT_MAX_BACKUPS);
	if (!(*out = calloc(k, sizeof(**out))))
		return aq_fail(msg, AQ_ENOMEM, "out of memory");
	/* a bad job is left out (logged), never the intent */
	json_array_foreach(jobs, i, j) {
		aq_msg why = { .text = "" };

		if (api_intent_backup_decode(j, &(*out)[*n], &why) == AQ_OK && (*out)[*n].op == API_INTENT_BKP_RESTORE)
			snprintf(why.text, sizeof(why.text), "a restore is a volume's restoreSource, not a job");
		else if (why.text[0] == '\0')
			(*n)++;
		if (why.text[0])
			UT_WARN("agent_bkjob", NULL, "backup job %zu left out: %s", i, why.text);
	}
	return AQ_OK;
}

void agent_bkjob_offer(struct agent *a, const struct api_intent_backup *jobs, size_t n, const char *req)
{
	if (a->bkpq && agent_bkpq_offer(a->bkpq, jobs, n) != AQ_OK)
		UT_ERROR("agent_bkjob", req, "%zu backup jobs not offered", n);
}

void agent_bkjob_status(struct agent *a, json_t *doc)
{
	json_t *r = a->bkpq ? agent_bkpq_report(a->bkpq) : NULL;

	if (r && json_array_size(r) > 0)
		json_object_set_new(doc, "backups", r);
	else
		json_decref(r);
}
