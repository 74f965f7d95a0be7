/* agent_apply: turn a pushed intent into the node's served state.
 *
 * Idempotent and level-triggered: the intent lists every volume the node
 * must serve; the NFS export set is replaced by exactly that list, volumes
 * listed under "deletes" lose their data (after they stopped being served),
 * and the intent is persisted before the new generation is reported. An
 * intent older than the applied generation changes nothing.
 *
 * Check, then proceed: every volume is first decoded against the contract
 * (api_intent.h: its limits are the volume store's) and checked against the
 * others (one export path, fsid and name each) without touching anything;
 * only the volumes that pass are attached and exported. A volume this node
 * cannot serve (a bad entry, a share name another volume already exports
 * here, a shelf directory that cannot be attached, a tier map that cannot
 * be opened) is left out and listed in a->failed, which the answer and the
 * status reports carry, so its operation fails with the reason; the other
 * volumes are served. When two volumes claim one export path, the one
 * already served keeps it.
 *
 * Snapshots (issue 20): each volume's snapshot fields are decoded with the
 * rest in the check; a clone's folder is made before it is attached, then
 * revert, snapshot deletes and creates run on it (agent_snap.c).
 *
 * Cold tier (issue 11): "coldStore" (S3 or a directory; absent = the
 * embedded default <shelf>/.aquifer-cold/<location>) is applied in place when
 * it changed; each volume's "tieringPolicy" goes to the tier engine before
 * the export set changes, so cold data is never served as holes. A volume
 * whose tier map exists keeps being tiered (PAUSED at least): tiering cannot
 * be switched off once on. Its tier map lives in <shelf>/.aquifer-tier/<fsid>.
 */
#include "agent/agent_internal.h"
#include "agent/vol/vol_grace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "api/api_intent.h"
#include "api/api_schema.h"
#include "util/ut_hex.h"
#include "util/ut_log.h"

/* The intent's rule as the volume store holds it. */
static void apply_rule(const struct api_intent_rule *r, struct vol_rule *out)
{
	snprintf(out->clients, sizeof(out->clients), "%s", r->clients);
	out->access = r->access == API_INTENT_READ_WRITE ? VOL_ACCESS_RW
		      : r->access == API_INTENT_READ_ONLY ? VOL_ACCESS_RO : VOL_ACCESS_NONE;
	out->squash = r->squash == API_INTENT_ROOT_SQUASH ? VOL_SQUASH_ROOT
		      : r->squash == API_INTENT_ALL_SQUASH ? VOL_SQUASH_ALL : VOL_SQUASH_NONE;
	out->anon_uid = r->anon_uid;
	out->anon_gid = r->anon_uid;
	out->not_for = (r->nfsv3 ? 0u : VOL_PROTO_NFSV3) | (r->nfsv4 ? 0u : VOL_PROTO_NFSV4);
}

/* QoS: absent or 0 = unlimited; FLEX volumes share their pool's budget. */
static void apply_qos(const struct api_intent_qos *in, struct qos_limits *q)
{
	memset(q, 0, sizeof(*q));
	q->bytes_per_s = (uint64_t)(in->mibps * 1048576.0);
	q->ops_per_s = (uint64_t)in->iops;
	snprintf(q->pool, sizeof(q->pool), "%s", in->shared_pool);
	if (in->shared_pool[0]) {
		q->pool_bytes_per_s = (uint64_t)(in->shared_mibps * 1048576.0);
		q->pool_ops_per_s = (uint64_t)in->shared_iops;
	}
}

static int copy_field(char *dst, size_t cap, const json_t *o, const char *key, bool need, aq_msg *msg)
{
	const char *s = api_json_str(o, key, "");

	if (strlen(s) >= cap || (need && !*s))
		return aq_fail(msg, AQ_EINVAL, "coldStore: %s is %s", key, *s ? "too long" : "missing");
	snprintf(dst, cap, "%s", s);
	return AQ_OK;
}

/* The intent's "coldStore" as an obj_cfg. */
static int apply_cold_store(struct agent *a, const json_t *intent, struct obj_cfg *c, aq_msg *msg)
{
	const json_t *cs = json_object_get(intent, "coldStore");
	const json_t *s3 = json_object_get(cs, "s3"), *dir = json_object_get(cs, "directory");
	int rc = AQ_OK;

	memset(c, 0, sizeof(*c));
	if (s3) {
		c->kind = OBJ_S3;
		if ((rc = copy_field(c->endpoint, sizeof(c->endpoint), s3, "endpoint", true, msg)) == AQ_OK &&
		    (rc = copy_field(c->bucket, sizeof(c->bucket), s3, "bucket", true, msg)) == AQ_OK &&
		    (rc = copy_field(c->region, sizeof(c->region), s3, "region", false, msg)) == AQ_OK &&
		    (rc = copy_field(c->access_key, sizeof(c->access_key), s3, "accessKeyId", false, msg)) == AQ_OK)
			rc = copy_field(c->secret_key, sizeof(c->secret_key), s3, "secretAccessKey", false, msg);
	} else if (dir) {
		c->kind = OBJ_DIRECTORY;
		rc = copy_field(c->path, sizeof(c->path), dir, "path", true, msg);
	} else {
		char top[1100];

		c->kind = OBJ_DIRECTORY;
		snprintf(top, sizeof(top), "%s/.aquifer-cold", a->cfg.shelf);
		mkdir(top, 0700);
		snprintf(c->path, sizeof(c->path), "%s/%s", top, a->cfg.location);
	}
	return rc;
}

/* The tiering of a volume; none = tiering off unless the volume has a
 * tier map already (it cannot be switched off once on). */
static void apply_tiering(struct agent *a, const struct api_intent_tiering *in, uint64_t fsid, const char *root,
			  struct tier_vol_cfg *t)
{
	char db[4200];

	memset(t, 0, sizeof(*t));
	t->fsid = fsid;
	snprintf(t->root, sizeof(t->root), "%s", root);
	snprintf(t->state_dir, sizeof(t->state_dir), "%s/.aquifer-tier/%016llx", a->cfg.shelf, (unsigned long long)fsid);
	t->action = in->action == API_INTENT_TIER_ENABLED ? TIER_ENABLED
		    : in->action == API_INTENT_TIER_PAUSED ? TIER_PAUSED : TIER_OFF;
	snprintf(db, sizeof(db), "%s/tier.db", t->state_dir);
	if (t->action == TIER_OFF && access(db, F_OK) == 0)
		t->action = TIER_PAUSED;
	t->cooling_days = in->cooling_days;
	t->bypass = in->bypass;
	t->retrieval = in->retrieval == API_INTENT_RET_ON_READ ? TIER_RET_ON_READ
		       : in->retrieval == API_INTENT_RET_NEVER ? TIER_RET_NEVER : TIER_RET_DEFAULT;
}

/* Logged by agent_apply, which knows the generation, once the verdicts are in. */
static void apply_fail(json_t *failed, const char *name, const char *why)
{
	json_array_append_new(failed, json_pack("{s:s,s:s}", "name", name, "error", why));
}

/* agent_served_fn over the agent's volume store. */
static bool apply_served(void *arg, const char *fsid)
{
	struct agent *a = arg;
	struct vol_stats st;

	return vol_store_stats(a->store, fsid, &st) == 0;
}

/* fsid (16 hex digits once decoded) as one spelling: lower case. */
#define APPLY_FSID_KEY 17
static void apply_fsid_key(const char *fsid, char key[APPLY_FSID_KEY])
{
	size_t i;

	for (i = 0; fsid[i] && i < APPLY_FSID_KEY - 1; i++)
		key[i] = (char)((fsid[i] >= 'A' && fsid[i] <= 'Z') ? fsid[i] - 'A' + 'a' : fsid[i]);
	key[i] = '\0';
}

/* The volume of index (a json object: key -> position) that holds key and
 * still passes (ok), or n: none. */
static size_t apply_holder(const json_t *index, const char *key, const bool *ok, size_t n)
{
	const json_t *at = json_object_get(index, key);
	size_t j = at ? (size_t)json_integer_value(at) : n;

	return j < n && ok[j] ? j : n;
}

/* The fsids (apply_fsid_key) of the volumes that pass, as a json object
 * (a hash table): what apply_releases and apply_deletes ask once each per
 * volume. NULL when memory ran out. */
static json_t *apply_served_set(const struct api_intent_volume *iv, const bool *ok, size_t n)
{
	json_t *set = json_object();
	char key[APPLY_FSID_KEY];
	size_t i;

	for (i = 0; set && i < n; i++) {
		if (!ok[i])
			continue;
		apply_fsid_key(iv[i].fsid, key);
		if (json_object_set_new(set, key, json_true()) != 0) {
			json_decref(set);
			set = NULL;
		}
	}
	return set;
}

void agent_apply_check(const json_t *vols, agent_served_fn served, void *arg, struct api_intent_volume *iv,
		       struct api_intent_snapset *ss, bool *ok, json_t *failed)
{
	const json_t *v;
	size_t i, n = json_array_size(vols);
	/* who holds each name, fsid and share name among the volumes checked
	 * so far (a position; one that lost since no longer passes): one hash
	 * lookup per volume and key, not a pass over the volumes before it
	 * (issue 22: 30,000 volumes were 450 million comparisons) */
	json_t *names = json_object(), *fsids = json_object(), *shares = json_object();

	json_array_foreach(vols, i, v) {
		aq_msg why = { .text = "" };

		ok[i] = api_intent_volume_decode(v, &iv[i], &why) == AQ_OK &&
			(!ss || api_intent_snapset_decode(v, &ss[i], &why) == AQ_OK);
		if (ok[i] && (iv[i].protocols & API_INTENT_SMB) && (iv[i].smb_settings & ~(unsigned)SMB_SRV_SETTINGS)) {
			/* never accept what is not done: the SMB server honours these only */
			snprintf(why.text, sizeof(why.text), "smbSettings: only ENCRYPT_DATA, NON_BROWSABLE and SHOW_PREVIOUS_VERSIONS are served");
			ok[i] = false;
		}
		if (!ok[i])
			apply_fail(failed, api_json_str(v, "name", ""), why.text);
	}
	for (i = 0; i < n; i++) {
		char key[APPLY_FSID_KEY], text[160];
		size_t jn, jf, js, loser = i;

		if (!ok[i])
			continue;
		if (!names || !fsids || !shares) {
			apply_fail(failed, iv[i].name, "out of memory checking the intent");
			ok[i] = false;
			continue;
		}
		apply_fsid_key(iv[i].fsid, key);
		jn = apply_holder(names, iv[i].name, ok, n);
		jf = apply_holder(fsids, key, ok, n);
		js = apply_holder(shares, iv[i].share, ok, n);
		jn = jf < jn ? jf : jn;
		/* as a pass over the volumes before i would meet them: the
		 * first one sharing anything with i decides */
		if (js < n && js < jn) {
			/* the one already served keeps its path; never name the other */
			if (served(arg, iv[i].fsid) && !served(arg, iv[js].fsid))
				loser = js;
			snprintf(text, sizeof(text), "shareName \"%s\" is already exported by another volume on this node",
				 iv[loser].share);
			apply_fail(failed, iv[loser].name, text);
			ok[loser] = false;
		}
		if (ok[i] && jn < n) {
			apply_fail(failed, iv[i].name, "the intent lists this volume (or its fsid) twice");
			ok[i] = false;
		}
		if (!ok[i])
			continue;
		if (json_object_set_new(names, iv[i].name, json_integer((json_int_t)i)) != 0 ||
		    json_object_set_new(fsids, key, json_integer((json_int_t)i)) != 0 ||
		    json_object_set_new(shares, iv[i].share, json_integer((json_int_t)i)) != 0) {
			apply_fail(failed, iv[i].name, "out of memory checking the intent");
			ok[i] = false;
		}
	}
	json_decref(names);
	json_decref(fsids);
	json_decref(shares);
}

/* The volume's capacity may have grown: the shelf grows what backs it
 * online (agent_shelf.h grow). When it cannot, the volume serves on at what
 * the shelf holds (the store's limit follows that, so nothing is promised
 * that cannot be written) and the status report says why (shelfDetails). */
static void apply_grow(struct agent *a, const struct api_intent_volume *v, struct vol_export_cfg *c)
{
	char why[400] = "";
	uint64_t have = 0;
	int rc;

	if (!a->shelf.ops->grow)
		return;
	rc = a->shelf.ops->grow(&a->shelf, v->dir, v->capacity_bytes, &have, why, sizeof(why));
	if (rc != 0 && have > 0 && have < c->capacity)
		c->capacity = have;
	if (rc != 0)
		UT_WARN("agent_apply", NULL, "volume %s: cannot grow to %llu bytes on the shelf: %s", v->name,
			(unsigned long long)v->capacity_bytes, why);
	pthread_mutex_lock(&a->lock); /* the status reports read the notes */
	if (!a->shelf_notes)
		a->shelf_notes = json_object();
	if (rc == 0)
		json_object_del(a->shelf_notes, v->name);
	else
		json_object_set_new(a->shelf_notes, v->name, json_string(why));
	pthread_mutex_unlock(&a->lock);
}

int agent_ntfs_root_settle(const char *root)
{
	struct stat st;
	int rc = 0;

	if (getxattr(root, AGENT_NTFS_ROOT_XA, NULL, 0) >= 0)
		return 0; /* decided at an earlier attach */
	if (errno != ENODATA)
		return -errno;
	if (stat(root, &st) != 0)
		return -errno;
	if ((st.st_mode & 07777) == AGENT_NTFS_ROOT_OLD_MODE) {
		if (getxattr(root, VOL_SD_ATTR, NULL, 0) < 0) {
			if (errno != ENODATA)
				return -errno;
			if (chmod(root, 0777) != 0) /* the root default's Everyone full access now reaches users */
				return -errno;
			rc = 1;
		}
	}
	if (setxattr(root, AGENT_NTFS_ROOT_XA, "1", 1, 0) != 0)
		return -errno; /* looked at again next time: the same answer */
	return rc;
}

/* Proceed with one checked volume: attach its data, fill its export. */
static int apply_volume(struct agent *a, const struct api_intent_volume *v, const struct api_intent_snapset *ss,
			struct vol_export_cfg *c, struct tier_vol_cfg *t, aq_msg *msg)
{
	int rc;

	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%s", v->fsid);
	c->fsid = strtoull(v->fsid, NULL, 16);
	snprintf(c->path, sizeof(c->path), "/%s", v->share);
	c->capacity = v->capacity_bytes;
	c->protocols = v->protocols;
	c->read_ahead = v->read_ahead;
	apply_qos(&v->qos, &c->qos);
	if ((rc = agent_snap_prepare(a, v, ss, msg)) != AQ_OK)
		return rc;
	/* an NVMe-oF attach may wait for the volume's lease: the reports go
	 * on, as a->lock is not held here (agent_apply) */
	/* a new NTFS volume's root is 0777: its descriptor decides who may do
	 * what (agent/smb/smb_acl_open.c), the mode must not refuse it first */
	rc = a->shelf.ops->attach(&a->shelf, v->dir,
				  v->security == API_INTENT_SEC_NTFS ? 0777u : (unsigned)strtoul(v->unix_permissions, NULL, 8),
				  v->capacity_bytes, c->root, sizeof(c->root));
	if (rc != 0)
		return aq_fail(msg, AQ_EIO, "cannot attach %s on the shelf: %s", v->dir, strerror(-rc));
	/* one made before that, 0770, without a descriptor: 0777 once */
	if (v->security == API_INTENT_SEC_NTFS && (rc = agent_ntfs_root_settle(c->root)) != 0)
		UT_LOG(rc > 0 ? UT_LOG_INFO : UT_LOG_WARN, "agent_apply", NULL, "volume %s: NTFS root %s: %s", v->name, c->root,
		       rc > 0 ? "0770 without a descriptor, made 0777" : strerror(-rc));
	apply_grow(a, v, c);
	for (c->nrules = 0; c->nrules < v->nrules; c->nrules++)
		apply_rule(&v->rules[c->nrules], &c->rules[c->nrules]);
	agent_snap_dir(a, v, ss, c->snapdir, sizeof(c->snapdir), &c->snapdir_hidden);
	/* lock holders: on the shelf, outside the export, for the node that takes the volume over */
	snprintf(c->lockdir, sizeof(c->lockdir), "%s/.aquifer-locks/%016llx", a->cfg.shelf, (unsigned long long)c->fsid);
	apply_tiering(a, &v->tiering, c->fsid, c->root, t);
	return AQ_OK;
}

/* A volume on a file system of its own (the NVMe-oF shelf) that this node
 * lets go of: the store's cached descriptors on it go first, or they keep
 * it from being unmounted. */
static void apply_forget(struct agent *a, const char *dir)
{
	char root[1200];
	struct stat st;

	snprintf(root, sizeof(root), "%s/%s", a->shelf.path, dir);
	if (a->shelf.nvme && stat(root, &st) == 0)
		vol_store_forget_dev(a->store, st.st_dev);
}

/* Volumes the last applied intent served that this one does not (moved to
 * another node, or failing here now): the shelf lets them go, so the next
 * node can take them (an NVMe-oF volume is unmounted, its reservation
 * released). */
static void apply_releases(struct agent *a, const json_t *old, const json_t *dels, const json_t *serving,
			   const char *req)
{
	const json_t *v, *d;
	json_t *deleted = json_object();
	char key[APPLY_FSID_KEY];
	size_t i;

	json_array_foreach(dels, i, d) {
		apply_fsid_key(api_json_str(d, "fsid", ""), key);
		json_object_set_new(deleted, key, json_true());
	}
	json_array_foreach(json_object_get(old, "volumes"), i, v) {
		const char *dir = api_json_str(v, "dir", "");
		int rc;

		apply_fsid_key(api_json_str(v, "fsid", ""), key);
		if (json_object_get(serving, key) || !agent_shelf_dir_ok(dir))
			continue;
		if (json_object_get(deleted, key))
			continue; /* deleted: destroy lets it go (apply_deletes) */
		apply_forget(a, dir);
		if ((rc = a->shelf.ops->release(&a->shelf, dir)) != 0)
			UT_WARN("agent_apply", req, "cannot release %s: %s", dir, strerror(-rc));
	}
	json_decref(deleted);
}

/* The data of deleted volumes goes only once nothing serves it; a delete
 * naming a volume the intent also serves is ignored. */
static void apply_deletes(struct agent *a, const json_t *dels, const json_t *serving, const char *req)
{
	const json_t *v;
	char key[APPLY_FSID_KEY];
	size_t i;

	json_array_foreach(dels, i, v) {
		struct api_intent_delete d;
		aq_msg why = { .text = "" };
		char sd[1200];
		int drc;

		if (api_intent_delete_decode(v, &d, &why) != AQ_OK) {
			UT_WARN("agent_apply", req, "delete ignored: %s", why.text);
			continue;
		}
		apply_fsid_key(d.fsid, key);
		if (json_object_get(serving, key)) {
			UT_WARN("agent_apply", req, "delete of %s ignored: the intent also serves it", d.fsid);
			continue;
		}
		apply_forget(a, d.dir);
		if ((drc = a->shelf.ops->destroy(&a->shelf, d.dir)) != 0)
			UT_ERROR("agent_apply", req, "cannot delete %s: %s", d.dir, strerror(-drc));
		else
			UT_INFO("agent_apply", req, "volume %s deleted", d.fsid);
		agent_snap_destroy(a, d.dir);
		/* its cold objects and tier map */
		snprintf(sd, sizeof(sd), "%s/.aquifer-tier/%016llx", a->cfg.shelf, strtoull(d.fsid, NULL, 16));
		if (access(sd, F_OK) == 0)
			tier_destroy_volume(a->tier, strtoull(d.fsid, NULL, 16), sd);
		/* its lock holders' records (vol_grace.h) */
		snprintf(sd, sizeof(sd), "%s/.aquifer-locks/%016llx/" VOL_GRACE_FILE, a->cfg.shelf,
			 strtoull(d.fsid, NULL, 16));
		(void)unlink(sd);
		*strrchr(sd, '/') = 0;
		(void)rmdir(sd);
	}
}

/* The intent's smbUsers, all checked before anything changes. */
static int apply_smb_users(const json_t *arr, struct smb_srv_user **out, size_t *n, aq_msg *msg)
{
	const json_t *u;
	size_t i;

	*out = NULL;
	*n = 0;
	if (!arr)
		return AQ_OK;
	if (!json_is_array(arr) || json_array_size(arr) > API_INTENT_MAX_SMB_USERS)
		return aq_fail(msg, AQ_EINVAL, "smbUsers must be an array of at most %u users", API_INTENT_MAX_SMB_USERS);
	if (!(*out = calloc(json_array_size(arr) + 1, sizeof(**out))))
		return AQ_ENOMEM;
	json_array_foreach(arr, i, u) {
		struct api_intent_smb_user d;
		struct smb_srv_user *s = &(*out)[i];
		size_t hn = 0;

		if (api_intent_smb_user_decode(u, &d, msg) != AQ_OK ||
		    ut_hex_decode(d.nt_hash, 32, s->nt_hash, sizeof(s->nt_hash), &hn) != AQ_OK || hn != 16) {
			free(*out);
			*out = NULL;
			return AQ_EINVAL;
		}
		snprintf(s->project, sizeof(s->project), "%s", d.project);
		snprintf(s->name, sizeof(s->name), "%s", d.name);
		s->uid = d.uid;
		s->gid = d.gid;
	}
	*n = json_array_size(arr);
	return AQ_OK;
}

/* The SMB share of a served volume: its shareName in its project. */
static void apply_smb_share(const struct api_intent_volume *v, const struct vol_export_cfg *c, struct smb_srv_share *s)
{
	const char *p = strncmp(v->name, "projects/", 9) == 0 ? v->name + 9 : "";
	size_t n = strcspn(p, "/");

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", v->share);
	snprintf(s->project, sizeof(s->project), "%.*s", (int)(n < sizeof(s->project) ? n : 0), p);
	snprintf(s->path, sizeof(s->path), "%s", c->path);
	s->smb_settings = v->smb_settings;
	s->security = v->security;
}

int agent_apply(struct agent *a, json_t *intent, aq_msg *msg)
{
	json_t *vols = json_object_get(intent, "volumes"), *dels = json_object_get(intent, "deletes");
	int64_t gen = api_json_int64(intent, "generation", -1);
	struct api_intent_volume *iv = NULL;
	struct api_intent_snapset *ss = NULL;
	struct vol_export_cfg *cfg = NULL;
	struct tier_vol_cfg *tv = NULL;
	size_t *vi = NULL;
	bool *ok = NULL;
	int *trc = NULL;
	struct obj_cfg cold;
	aq_msg cwhy = { .text = "" };
	char tdir[1100];
	json_t *failed, *f, *old = NULL, *serving = NULL;
	int64_t applied;
	char req[32];
	size_t i, k, n = json_array_size(vols), used = 0, nusers = 0, nshares = 0;
	struct smb_srv_user *users = NULL;
	struct smb_srv_share *shares = NULL;
	struct api_intent_backup *bk = NULL;
	size_t nbk = 0;
	int rc = AQ_OK;

	snprintf(req, sizeof(req), "gen-%lld", (long long)gen);
	if (gen < 0 || !json_is_array(vols) || (dels && !json_is_array(dels)))
		return aq_fail(msg, AQ_EINVAL, "intent needs generation, volumes[] and (optional) deletes[]");
	/* the node's status report must fit the body cap (api_intent.h) */
	if (n > API_NODE_VOLUMES_MAX)
		return aq_fail(msg, AQ_EINVAL, "the intent lists %zu volumes; a node serves at most %u (API_NODE_VOLUMES_MAX)",
			       n, API_NODE_VOLUMES_MAX);
	if ((rc = agent_bkjob_check(json_object_get(intent, "backups"), &bk, &nbk, msg)) != AQ_OK)
		return rc;
	if ((rc = apply_smb_users(json_object_get(intent, "smbUsers"), &users, &nusers, msg)) != AQ_OK) {
		free(bk);
		return rc;
	}
	failed = json_array();
	/* apply_lock, held throughout, keeps other applies out: the applied
	 * state (a->intent, a->applied, a->cold) changes only under it. a->lock
	 * is held only to read that state here and to publish the new one at
	 * the end: the work between is O(volumes on the node) and the status
	 * reports, which take a->lock, must not wait for it (issue 22: a node
	 * with 11,000 volumes fell silent and went DOWN behind its applies). */
	pthread_mutex_lock(&a->apply_lock);
	pthread_mutex_lock(&a->lock);
	applied = a->applied;
	old = json_incref(a->intent);
	pthread_mutex_unlock(&a->lock);
	if (gen < applied) {
		UT_INFO("agent_apply", req, "stale intent ignored: generation %lld is applied", (long long)applied);
		goto out; /* a stale push: the newer state stays */
	}
	iv = calloc(n ? n : 1, sizeof(*iv));
	ss = calloc(n ? n : 1, sizeof(*ss));
	ok = calloc(n ? n : 1, sizeof(*ok));
	cfg = calloc(n ? n : 1, sizeof(*cfg));
	tv = calloc(n ? n : 1, sizeof(*tv));
	vi = calloc(n ? n : 1, sizeof(*vi));
	trc = calloc(n ? n : 1, sizeof(*trc));
	if (!iv || !ss || !ok || !cfg || !tv || !vi || !trc) {
		rc = AQ_ENOMEM;
		goto out;
	}
	agent_apply_check(vols, apply_served, a, iv, ss, ok, failed);
	/* The cold store first: recovery of newly tiered volumes needs it. */
	if (apply_cold_store(a, intent, &cold, &cwhy) != AQ_OK) {
		UT_WARN("agent_apply", req, "cold store not changed: %s", cwhy.text);
	} else if (memcmp(&cold, &a->cold, sizeof(cold)) != 0 && a->cold.kind && tier_cold_total(a->tier)) {
		/* The records name objects in the store in use: switching now
		 * would leave cold data unreadable. Moving data between stores
		 * is not implemented. */
		UT_WARN("agent_apply", req, "cold store change refused: volumes hold data in %s",
			a->cold.kind == OBJ_S3 ? a->cold.endpoint : a->cold.path);
		pthread_mutex_lock(&a->lock);
		snprintf(a->last_error, sizeof(a->last_error),
			 "cold store change refused: tiered volumes still hold data in the current store");
		pthread_mutex_unlock(&a->lock);
	} else if (memcmp(&cold, &a->cold, sizeof(cold)) != 0) {
		int crc = tier_set_store(a->tier, &cold);

		if (crc == 0)
			a->cold = cold;
		else
			UT_ERROR("agent_apply", req, "cold store refused: %s", strerror(-crc));
	}
	snprintf(tdir, sizeof(tdir), "%s/.aquifer-tier", a->cfg.shelf);
	mkdir(tdir, 0700);
	snprintf(tdir, sizeof(tdir), "%s/.aquifer-locks", a->cfg.shelf);
	mkdir(tdir, 0700);
	/* Proceed with the volumes that passed the check. */
	for (i = 0; i < n; i++) {
		aq_msg why = { .text = "" };

		if (!ok[i])
			continue;
		if (apply_volume(a, &iv[i], &ss[i], &cfg[used], &tv[used], &why) == AQ_OK) {
			vi[used++] = i;
			continue;
		}
		apply_fail(failed, iv[i].name, why.text);
		ok[i] = false;
	}
	/* Tiering before exports: a served volume always finds its tier map. */
	tier_set_volumes(a->tier, tv, used, trc);
	for (i = 0, k = 0; i < used; i++) { /* not served without its tier map */
		if (trc[i] != 0) {
			char why[300];

			snprintf(why, sizeof(why), "cannot open its tier map in %s: %s", tv[i].state_dir, strerror(-trc[i]));
			apply_fail(failed, iv[vi[i]].name, why);
			ok[vi[i]] = false;
			continue;
		}
		/* snapshots once the tier knows the volume: a tiered one's rows
		 * are recorded with each snapshot (tier_snap.c) */
		agent_snap_apply(a, &iv[vi[i]], &ss[vi[i]], cfg[i].root, req);
		cfg[i].tree_seq = agent_snap_tree_seq(a, &iv[vi[i]]);
		vi[k] = vi[i];
		cfg[k++] = cfg[i];
	}
	used = k;
	/* Every check vol_store_set makes was made above, per volume: what
	 * is left is a local fault (memory, a shelf folder gone meanwhile). */
	if ((rc = vol_store_set(a->store, cfg, used)) != 0) {
		rc = aq_fail(msg, AQ_EINVAL, "the NFS server refused the export set: %s", strerror(-rc));
		goto out;
	}
	if (a->smb && (shares = calloc(used + 1, sizeof(*shares)))) {
		for (i = 0; i < used; i++)
			if (iv[vi[i]].protocols & API_INTENT_SMB)
				apply_smb_share(&iv[vi[i]], &cfg[i], &shares[nshares++]);
		if (smb_srv_set_config(a->smb, shares, nshares, users, nusers) != 0)
			UT_ERROR("agent_apply", req, "the SMB server kept its shares and users: out of memory");
	}
	/* service addresses follow the served volumes (agent_svc.h; the
	 * reporter renews them under a->lock) */
	pthread_mutex_lock(&a->lock);
	agent_svc_apply(&a->svc, vols, ok, failed, req);
	a->svc_gen = gen;
	pthread_mutex_unlock(&a->lock);
	json_array_foreach(failed, i, f)
		UT_WARN("agent_apply", req, "not serving %s: %s", *api_json_str(f, "name", "") ? api_json_str(f, "name", "") : "a volume",
			api_json_str(f, "error", ""));
	/* one hash table of what is served, not a pass over it per volume */
	if (!(serving = apply_served_set(iv, ok, n))) {
		rc = aq_fail(msg, AQ_ENOMEM, "out of memory releasing the volumes that left");
		goto out;
	}
	apply_releases(a, old, dels, serving, req);
	apply_deletes(a, dels, serving, req);
	if ((rc = agent_state_write(a->cfg.state_dir, "intent.json", intent, msg)) != AQ_OK)
		goto out;
	/* publish: the reports name the new volumes with the new generation */
	pthread_mutex_lock(&a->lock);
	json_decref(a->intent);
	a->intent = json_incref(intent);
	/* a push of the applied generation again is news only at debug */
	UT_LOG(gen != applied ? UT_LOG_INFO : UT_LOG_DEBUG, "agent_apply", req, "applied: %zu volumes served, %zu not",
	       used, json_array_size(failed));
	a->applied = gen;
	agent_snap_kick(a);
	agent_bkjob_offer(a, bk, nbk, req);
	json_decref(a->failed);
	a->failed = failed;
	failed = NULL;
	pthread_mutex_unlock(&a->lock);
out:
	pthread_mutex_unlock(&a->apply_lock);
	json_decref(old);
	json_decref(serving);
	json_decref(failed);
	free(iv);
	free(ss);
	free(ok);
	free(cfg);
	free(tv);
	free(vi);
	free(trc);
	free(users);
	free(shares);
	free(bk);
	return rc;
}
