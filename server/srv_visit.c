/* srv_visit.c: what one visit of a node does, for the reconciler's pushers
 * (srv_pusher.c) and the status reports (srv_agent.c): build the node's
 * intent (srv_intent.h) with its mount instructions, take a generation for
 * it when it changed, and finish what waited for a generation the node
 * applied. Split out of srv_reconcile.c so that the pass (srv_reconcile.c)
 * and the pool (srv_pusher.c) depend on it and not on each other. */
#include "server/srv_visit.h"

#include <openssl/sha.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_intent.h"
#include "api/api_resource.h"
#include "api/api_schema.h"
#include "api/api_svcaddr.h"
#include "db/db.h"
#include "server/srv_intent.h"
#include "server/srv_internal.h"
#include "server/srv_lead.h"
#include "server/srv_node.h"
#include "server/srv_op.h"
#include "server/srv_svcaddr.h"
#include "util/ut_clock.h"
#include "util/ut_hex.h"
#include "util/ut_hostport.h"
#include "util/ut_log.h"

#define VOL_TYPE "type.googleapis.com/google.cloud.netapp.v1.Volume"
#define EMPTY_TYPE "type.googleapis.com/google.protobuf.Empty"

/* All documents of kind under parent (NULL: everywhere). */
static int list_all(struct db *db, const char *kind, const char *parent, json_t **out)
{
	struct db_query q = { .kind = kind, .parent = parent };

	return db_list_all(db, &q, out, NULL);
}

/* Does the volume's protocols list name proto? */
static bool vol_speaks(const json_t *vol, const char *proto)
{
	json_t *ps = json_object_get(vol, "protocols"), *p;
	size_t i;

	json_array_foreach(ps, i, p)
		if (strcmp(json_string_value(p), proto) == 0)
			return true;
	return false;
}

/* addr's host as a mount command wants it; a wildcard (the agent listens
 * on every address) takes the host of alt. An IPv6 host keeps its
 * brackets, as mount(8) wants "[::1]:/share". */
static void mount_host(const char *addr, const char *alt, uint16_t dport, char *ip, size_t cap, long *port)
{
	struct ut_hostport hp = { .port = dport }, ha = { .port = dport };

	*port = dport;
	if (ut_hostport_parse(addr, dport, 0, &hp, NULL) != AQ_OK) {
		snprintf(ip, cap, "%s", addr);
		return;
	}
	*port = hp.port;
	if ((strcmp(hp.host, "0.0.0.0") == 0 || strcmp(hp.host, "::") == 0) && alt &&
	    ut_hostport_parse(alt, dport, 0, &ha, NULL) == AQ_OK) {
		memcpy(hp.host, ha.host, sizeof(hp.host));
		hp.v6 = ha.v6;
	}
	snprintf(ip, cap, hp.v6 ? "[%s]" : "%s", hp.host);
}

/* What a mount instruction names: the share, the host and port it is
 * mounted from, and its export paths (made from the first three). */
struct mount_at {
	const char *share;
	char ip[UT_HOST_MAX + 2], port[24], exp[120], full[200];
};

/* Expand template tpl into out: {share}, {ip}, {port}, {exp} and {full}
 * stand for m's; anything else is copied. Truncated to cap like snprintf. */
static void mount_expand(const struct mount_at *m, const char *tpl, char *out, size_t cap)
{
	const struct { const char *name; const char *val; } vars[] = {
		{ "{share}", m->share }, { "{ip}", m->ip }, { "{port}", m->port }, { "{exp}", m->exp },
		{ "{full}", m->full },
	};
	size_t len = 0, i, n;

	while (*tpl && len + 1 < cap) {
		for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
			if (strncmp(tpl, vars[i].name, strlen(vars[i].name)) == 0)
				break;
		if (i == sizeof(vars) / sizeof(vars[0])) {
			out[len++] = *tpl++;
			continue;
		}
		n = snprintf(out + len, cap - len, "%s", vars[i].val);
		len = n < cap - len ? len + n : cap - 1;
		tpl += strlen(vars[i].name);
	}
	out[len] = '\0';
}

#define NFS_INSTALL "# Install the NFS client: sudo apt-get install -y nfs-common (Debian, Ubuntu)" \
	" or sudo yum install -y nfs-utils (Red Hat, SUSE)\n"
#define NFS_MKDIR "sudo mkdir -p /mnt/{share}\n"

/* A protocol a volume may be mounted with, in the order mountOptions lists
 * them: where it is served, its export paths and the lines a user pastes
 * into a shell on the client (prose lines are comments), as mount_expand
 * templates. */
struct mount_proto {
	const char *protocol;   /* as the volume's protocols name it */
	bool smb;               /* at the node's SMB address (else its NFS one) */
	bool by_default;        /* also for a volume that names no protocols */
	const char *exp, *full, *instructions;
	const char *libnfs_url; /* NULL: none */
};

static const struct mount_proto mount_protos[] = {
	/* nolock: the node serves no NLM. libnfsUrl: libnfs tools (nfs-ls,
	 * nfs-cp) cannot be told the port any other way */
	{ .protocol = "NFSV3", .by_default = true, .exp = "/{share}", .full = "{ip}:{exp}",
	  .instructions = NFS_INSTALL "# Create a directory to mount the volume on, then mount it:\n" NFS_MKDIR
			  "sudo mount -t nfs -o rw,hard,vers=3,tcp,port={port},mountport={port},nolock {full} "
			  "/mnt/{share}",
	  .libnfs_url = "nfs://{ip}{exp}?version=3&nfsport={port}&mountport={port}" },
	/* NFSv4.1 (agent/nfs4/): the same port, the share under the pseudo root */
	{ .protocol = "NFSV4", .exp = "/{share}", .full = "{ip}:{exp}",
	  .instructions = NFS_INSTALL "# Create a directory to mount the volume on, then mount it (add nconnect=N "
			  "for more connections):\n" NFS_MKDIR
			  "sudo mount -t nfs -o rw,hard,vers=4.1,tcp,port={port} {full} /mnt/{share}" },
	{ .protocol = "SMB", .smb = true, .exp = "\\\\{ip}\\{share}", .full = "//{ip}/{share}",
	  .instructions = "# Install the SMB client: sudo apt-get install -y cifs-utils smbclient (Debian, Ubuntu)\n"
			  "# USER is one of the project's smbUsers. Mount the share, or browse it with smbclient:\n"
			  "sudo mkdir -p /mnt/{share}\n"
			  "sudo mount -t cifs //{ip}/{share} /mnt/{share} -o vers=3.1.1,username=USER,port={port}\n"
			  "smbclient //{ip}/{share} -U USER -p {port}" },
};

/* p's mount instruction for share served at addr; a wildcard addr takes
 * the host of alt (NULL: none). */
static json_t *mount_option(const struct mount_proto *p, const char *addr, const char *alt, const char *share)
{
	struct mount_at m = { .share = share };
	char instr[1024], url[400];
	long port;
	json_t *o;

	mount_host(addr, alt, p->smb ? API_INTENT_SMB_PORT : 2049, m.ip, sizeof(m.ip), &port);
	snprintf(m.port, sizeof(m.port), "%ld", port);
	mount_expand(&m, p->exp, m.exp, sizeof(m.exp));
	mount_expand(&m, p->full, m.full, sizeof(m.full));
	mount_expand(&m, p->instructions, instr, sizeof(instr));
	o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "export", m.exp, "exportFull", m.full, "protocol", p->protocol,
		      "instructions", instr, "ipAddress", m.ip, "port", (json_int_t)port);
	if (o && p->libnfs_url) {
		mount_expand(&m, p->libnfs_url, url, sizeof(url));
		json_object_set_new(o, "libnfsUrl", json_string(url));
	}
	return o;
}

/* mountOptions as GCNV gives them: one entry per protocol the volume
 * speaks (mount_protos), with Aquifer's port. A volume with a
 * service address (its placement's, srv_svcaddr.h) is mounted there, on
 * the range's port for NFS and the node's SMB port for SMB, wherever it is
 * served. SMB is offered only where the node serves SMB (api_intent.h), a
 * wildcard SMB address taking the NFS host. */
static json_t *mount_options(const json_t *vol, const json_t *node, const json_t *pl)
{
	const json_t *sa = json_object_get(pl, API_SVCADDR_KEY);
	const char *nfs = api_json_str(node, "nfsAddress", "");
	const char *smb = api_json_str(node, API_INTENT_SMB_ADDRESS, "");
	const char *share = api_json_str(vol, "shareName", "");
	char nfs_svc[UT_HOST_MAX + 8], smb_svc[UT_HOST_MAX + 8];
	struct ut_hostport hp;
	json_t *out = json_array();
	size_t i;

	if (sa) {
		snprintf(nfs_svc, sizeof(nfs_svc), "%s:%lld", api_json_str(sa, "address", ""),
			 (long long)api_json_int64(sa, "port", API_SVCADDR_PORT));
		nfs = nfs_svc;
		if (*smb && ut_hostport_parse(smb, API_INTENT_SMB_PORT, 0, &hp, NULL) == AQ_OK) {
			snprintf(smb_svc, sizeof(smb_svc), "%s:%u", api_json_str(sa, "address", ""), (unsigned)hp.port);
			smb = smb_svc;
		}
	}
	for (i = 0; i < sizeof(mount_protos) / sizeof(mount_protos[0]); i++) {
		const struct mount_proto *p = &mount_protos[i];
		bool named = vol_speaks(vol, p->protocol) || (p->by_default && !json_object_get(vol, "protocols"));

		if (named && !(p->smb && !*smb))
			json_array_append_new(out, mount_option(p, p->smb ? smb : nfs, p->smb ? nfs : NULL, share));
	}
	return out;
}

/* The error a node gave for volume vn, or NULL. */
static const char *failure_of(const json_t *failed, const char *vn)
{
	json_t *f;
	size_t i;

	json_array_foreach(failed, i, f)
		if (strcmp(api_json_str(f, "name", ""), vn) == 0)
			return api_json_str(f, "error", "unknown error");
	return NULL;
}

/* A batch's reads (vb_body): every document its visits will read,
 * fetched in one query at the start of its transaction. Each is handed out
 * once (pre_get takes it), and the names a visit touched are dropped when
 * it ends, so a later visit of the batch reads what an earlier one wrote
 * from the database, never a stale copy. NULL: a visit alone, reading the
 * database. fenced: the fence already checked in this transaction. */
struct vb_ctx {
	json_t *pre; /* {name: document, or null when it does not exist} */
	const struct db_fence *fenced;
};

static int pre_get(struct db *db, struct vb_ctx *c, const char *name, json_t **doc)
{
	json_t *d = c ? json_object_get(c->pre, name) : NULL;

	if (!d)
		return db_get(db, name, doc);
	if (json_is_null(d)) {
		json_object_del(c->pre, name);
		return AQ_ENOENT;
	}
	*doc = json_incref(d);
	json_object_del(c->pre, name);
	return AQ_OK;
}

/* db_get_many through the batch's reads: only the names it lacks are read. */
static int pre_get_many(struct db *db, struct vb_ctx *c, const json_t *names, json_t **docs)
{
	json_t *rest = NULL, *got = NULL, *n, *d;
	size_t i;
	int rc = AQ_ENOMEM;

	if (!c)
		return db_get_many(db, names, docs);
	if (!(*docs = json_object()) || !(rest = json_array()))
		goto out;
	json_array_foreach(names, i, n) {
		int r = pre_get(db, c, json_string_value(n), &d);

		if (r == AQ_OK)
			json_object_set_new(*docs, json_string_value(n), d);
		else if (r != AQ_ENOENT && json_array_append(rest, n) != 0)
			goto out;
	}
	rc = AQ_OK;
	if (json_array_size(rest) && (rc = db_get_many(db, rest, &got)) == AQ_OK)
		json_object_update(*docs, got);
out:
	json_decref(rest);
	json_decref(got);
	return rc;
}

/* A visit's write, queued for a batch (vb_run): a generation (vg) or
 * the finish of what a node applied (va). Lives on its caller's stack. */
struct vb_req {
	struct vg_tx *vg;
	struct va_tx *va;
	int rc;
	bool done;
	struct vb_req *next;
};

static int vb_run(struct db *db, struct vb_req *me);

/* The fence check, once per fence in a batch's transaction. */
static int vb_fence(struct db *db, struct vb_ctx *c, const struct db_fence *f)
{
	const struct db_fence *g = c ? c->fenced : NULL;
	int rc;

	if (!f || !f->lease)
		return AQ_OK;
	if (g && g->epoch == f->epoch && strcmp(g->lease, f->lease) == 0 && strcmp(g->holder ? g->holder : "", f->holder ? f->holder : "") == 0)
		return AQ_OK;
	if ((rc = srv_lead_fence(db, f)) == AQ_OK && c)
		c->fenced = f;
	return rc;
}

/* A volume its node could not serve: ERROR with the node's reason; a create
 * gives its placement up (nothing was served), so the next intent no longer
 * carries it and the operation fails. */
static int applied_failed(struct db *db, const char *node_name, json_t *pl, const char *op,
			  const char *action, const char *why)
{
	const char *vn = api_json_str(pl, "volume", "");
	char pname[800], vparent[600], text[700];
	json_t *vol = NULL;
	int rc;

	snprintf(pname, sizeof(pname), "placements/%s", vn);
	snprintf(text, sizeof(text), "node %s could not serve the volume: %s", node_name, why);
	if ((rc = srv_intent_vol_parent(vn, vparent, sizeof(vparent))) != AQ_OK || (rc = db_get(db, vn, &vol)) != AQ_OK)
		goto out;
	json_object_set_new(vol, "state", json_string("ERROR"));
	json_object_set_new(vol, "stateDetails", json_string(text));
	if ((rc = db_put(db, "volume", vparent, vn, vol, false)) != AQ_OK)
		goto out;
	if (strcmp(action, "create") == 0) {
		rc = db_delete(db, pname);
	} else {
		json_object_del(pl, "op");
		json_object_set_new(pl, "action", json_string(""));
		json_object_set_new(pl, "pendingGeneration", json_integer(0));
		rc = db_put(db, "placement", node_name, pname, pl, false);
	}
	if (rc == AQ_OK)
		rc = srv_op_end(db, op, NULL, AQ_EINTERNAL, text);
out:
	json_decref(vol);
	return rc;
}

/* srv_visit_applied's transaction body (db_group_run: it may share its
 * transaction with other nodes' and run again alone) */
struct va_tx {
	const char *node_name;
	int64_t g;
	const json_t *failed, *due;
};

static int va_run(struct db *db, const struct va_tx *a, struct vb_ctx *c)
{
	const char *node_name = a->node_name;
	json_t *pls = NULL, *pl, *node = NULL, *dn;
	size_t i;
	int rc;

	if ((rc = pre_get(db, c, node_name, &node)) != AQ_OK || (rc = pre_get_many(db, c, a->due, &pls)) != AQ_OK)
		goto out;
	json_array_foreach(a->due, i, dn) {
		char op[800], action[16], pname[800], vparent[600];
		const char *vn;
		int64_t pg;
		json_t *vol = NULL, *resp = NULL;
		bool waits = false;

		if (!(pl = json_object_get(pls, json_string_value(dn))))
			continue; /* gone since */
		vn = api_json_str(pl, "volume", "");
		pg = api_json_int64(pl, "pendingGeneration", 0);
		/* copies: pl is edited below */
		snprintf(op, sizeof(op), "%s", api_json_str(pl, "op", ""));
		snprintf(action, sizeof(action), "%s", api_json_str(pl, "action", ""));
		if (!*action || pg <= 0 || pg > a->g)
			continue;
		if (strcmp(action, "delete") != 0 && failure_of(a->failed, vn)) {
			if ((rc = applied_failed(db, node_name, pl, op, action, failure_of(a->failed, vn))) != AQ_OK)
				goto out;
			continue;
		}
		snprintf(pname, sizeof(pname), "placements/%s", vn);
		if (srv_intent_vol_parent(vn, vparent, sizeof(vparent)) != AQ_OK)
			continue;
		if (strcmp(action, "delete") == 0) {
			resp = json_pack("{s:s}", "@type", EMPTY_TYPE);
			if ((rc = db_delete(db, vn)) != AQ_OK && rc != AQ_ENOENT)
				goto next;
			if ((rc = db_delete(db, pname)) != AQ_OK || (rc = srv_op_end(db, op, resp, AQ_OK, NULL)) != AQ_OK)
				goto next;
		} else {
			if ((rc = pre_get(db, c, vn, &vol)) != AQ_OK)
				goto next;
			/* nothing serves its share: never READY (api_intent.h) */
			if (vol_speaks(vol, "SMB") && !*api_json_str(node, API_INTENT_SMB_ADDRESS, "")) {
				rc = applied_failed(db, node_name, pl, op, action,
						    "its protocols include SMB and the node's agent serves no SMB "
						    "(it reports no smbAddress: start it with --smb-listen)");
				goto next;
			}
			/* a service address not held yet is not served (srv_svcaddr.h) */
			if ((rc = srv_svcaddr_applied_wait(db, node, pl, action, vol, vparent, &waits)) != AQ_OK || waits)
				goto next;
			json_object_set_new(vol, "state", json_string("READY"));
			json_object_set_new(vol, "stateDetails", json_string(""));
			json_object_set_new(vol, "mountOptions", mount_options(vol, node, pl));
			if ((rc = db_put(db, "volume", vparent, vn, vol, false)) != AQ_OK)
				goto next;
			resp = json_deep_copy(vol);
			json_object_set_new(resp, "@type", json_string(VOL_TYPE));
			json_object_del(pl, "op");
			json_object_set_new(pl, "action", json_string(""));
			json_object_set_new(pl, "pendingGeneration", json_integer(0));
			if ((rc = db_put(db, "placement", node_name, pname, pl, false)) != AQ_OK ||
			    (rc = srv_op_end(db, op, resp, AQ_OK, NULL)) != AQ_OK)
				goto next;
		}
next:
		json_decref(vol);
		json_decref(resp);
		if (rc != AQ_OK)
			goto out;
	}
out:
	json_decref(pls);
	json_decref(node);
	return rc;
}

static int va_body(struct db *db, void *arg)
{
	return va_run(db, arg, NULL);
}

int srv_visit_applied(struct srv *srv, struct db *db, const char *node_name, int64_t g,
		     const json_t *failed)
{
	json_t *pls = NULL, *pl, *due = NULL;
	size_t i;
	int rc;

	(void)srv;
	/* which placements wait for a generation up to g, read without the
	 * write lock; the transaction reads those again (O(what finished), not
	 * O(volumes on the node)) and acts on what still waits */
	if ((rc = list_all(db, "placement", node_name, &pls)) != AQ_OK || !(due = json_array()))
		goto out;
	json_array_foreach(pls, i, pl) {
		int64_t pg = api_json_int64(pl, "pendingGeneration", 0);

		if (*api_json_str(pl, "action", "") && pg > 0 && pg <= g)
			json_array_append_new(due, json_sprintf("placements/%s", api_json_str(pl, "volume", "")));
	}
	if (json_array_size(due) == 0)
		goto out;
	/* in one batch with other nodes' (vb_run): one body, one read, one
	 * commit for many visits and reports, not one each */
	rc = vb_run(db, &(struct vb_req){ .va = &(struct va_tx){ .node_name = node_name, .g = g, .failed = failed, .due = due } });
out:
	json_decref(pls);
	json_decref(due);
	return rc;
}

void srv_visit_intent_cleanup(struct srv_visit_intent *ri)
{
	json_decref(ri->intent);
	json_decref(ri->bad);
	json_decref(ri->pending);
	free(ri->text);
	memset(ri, 0, sizeof(*ri));
}

int srv_visit_intent_build(const struct api_math_params *math, struct db *db, const json_t *node,
			       struct srv_visit_intent *ri)
{
	unsigned char sum[SHA256_DIGEST_LENGTH];
	int rc;

	srv_visit_intent_cleanup(ri);
	if (!(ri->pending = json_object()))
		return AQ_ENOMEM;
	if ((rc = srv_intent_build(math, db, node, &ri->intent, &ri->bad, ri->pending)) != AQ_OK)
		return rc;
	if (!(ri->text = json_dumps(ri->intent, JSON_COMPACT | JSON_SORT_KEYS)))
		return AQ_ENOMEM;
	SHA256((const unsigned char *)ri->text, strlen(ri->text), sum);
	ut_hex_encode(sum, sizeof(sum), ri->hash, sizeof(ri->hash));
	return AQ_OK;
}

/* A placement is given generation g only when g's intent carries it as it
 * stands: an intent built before a volume create committed does not carry
 * it, and if the create's placement took that generation, the node's
 * report of it would make the volume READY before any node served it (and
 * a clone's first intent, then no longer CREATING, would carry no
 * cloneSource, so the node would make it empty: issue 20). The intent is
 * built without the write lock (a pass over every volume of the node); the
 * transaction here reads only the node and the placements that build saw
 * waiting, and gives the generation to those still as it read them. That
 * transaction is vg_body, run through db_group_run (db.h) so that many
 * nodes' generations share one commit; it may run twice (its group rolled
 * back), so it sets its outputs from what it reads. */
struct vg_tx {
	const struct db_fence *fence;
	const char *nn;
	const struct srv_visit_intent *ri;
	int64_t gen;
	bool more;
};

static int vg_run(struct db *db, struct vg_tx *a, struct vb_ctx *c)
{
	const char *nn = a->nn, *pname;
	json_t *node = NULL, *pl = NULL, *internal, *seen;
	int rc;

	a->gen = 0;
	a->more = false;
	if ((rc = vb_fence(db, c, a->fence)) != AQ_OK || (rc = pre_get(db, c, nn, &node)) != AQ_OK)
		goto out;
	internal = json_object_get(node, "internal");
	a->gen = api_json_int64(node, "generation", 0);
	if (strcmp(api_json_str(internal, "intentHash", ""), a->ri->hash) != 0) {
		a->gen++;
		json_object_set_new(node, "generation", json_integer(a->gen));
		json_object_set_new(internal, "intentHash", json_string(a->ri->hash));
		if ((rc = srv_node_save(db, node)) != AQ_OK)
			goto out;
	}
	json_object_foreach(a->ri->pending, pname, seen) {
		char now[900];

		json_decref(pl);
		pl = NULL;
		if ((rc = pre_get(db, c, pname, &pl)) == AQ_ENOENT) {
			rc = AQ_OK; /* gone since (a failed or cancelled create) */
			continue;
		}
		if (rc != AQ_OK)
			goto out;
		snprintf(now, sizeof(now), "%s|%s", api_json_str(pl, "op", ""), api_json_str(pl, "action", ""));
		if (strcmp(now, json_string_value(seen)) != 0 || strcmp(api_json_str(pl, "node", ""), nn) != 0) {
			if (*api_json_str(pl, "action", ""))
				a->more = true; /* changed since the build: the next one carries it */
			continue;
		}
		if (api_json_int64(pl, "pendingGeneration", 0) > 0)
			continue;
		json_object_set_new(pl, "pendingGeneration", json_integer(a->gen));
		if ((rc = db_put(db, "placement", nn, pname, pl, false)) != AQ_OK)
			goto out;
	}
out:
	json_decref(node);
	json_decref(pl);
	return rc;
}

static int vg_body(struct db *db, void *arg)
{
	return vg_run(db, arg, NULL);
}

int srv_visit_generation(const struct api_math_params *math, struct db *db, const struct db_fence *fence,
			     const json_t *n, struct srv_visit_intent *ri, int64_t *gen, bool *more)
{
	struct vg_tx a = { .fence = fence, .nn = api_json_str(n, "name", ""), .ri = ri };
	json_t *node = NULL;
	int rc;

	(void)math;
	if (more)
		*more = false;
	/* look first, without the write lock: usually nothing changed */
	if ((rc = db_get(db, a.nn, &node)) != AQ_OK)
		goto out;
	*gen = api_json_int64(node, "generation", 0);
	if (strcmp(api_json_str(json_object_get(node, "internal"), "intentHash", ""), ri->hash) == 0 &&
	    json_object_size(ri->pending) == 0)
		goto out;
	/* in one batch with other nodes' (vb_run) */
	if ((rc = vb_run(db, &(struct vb_req){ .vg = &a })) != AQ_OK)
		goto out;
	*gen = a.gen;
	if (more)
		*more = a.more;
out:
	json_decref(node);
	return rc;
}

/* Batches (vb_run). Every visit's write used to be its own group body
 * (db_group_run), each reading its node, placements and volumes one
 * round trip at a time and checking the fence again: on PostgreSQL at
 * 1,000 nodes a visit's two writes took ~200 ms each and the visits
 * queued for a minute behind the creates (bench/sim/REPORT.md). Here a
 * caller queues its request; the first that finds no batch running leads
 * one: it queues one group body, which, when the group runs it, takes
 * every request queued by then (up to VB_MAX), reads every document they
 * will read in one query, checks each fence once and runs them in order,
 * in that one transaction. The leader's db_group_run returns once it
 * committed: every request of the batch is durable then (a generation
 * before its push) and gets AQ_OK. When the batch fails, each of its
 * requests runs again alone (its own group body), so one failure undoes
 * no other's writes and each caller gets its own result. */
#define VB_MAX 128
/* A batch runs requests while it has run less than the group budget
 * (db_group_budget: DB_GROUP_BUDGET_NS unless db_group_limits set another);
 * the rest go back to the front of the queue for the next batch, so the
 * status reports of the live lane (node liveness) never wait behind a long
 * batch. */

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct vb_req *head, **tail;
	bool leading;
	struct srv_visit_batch_stats st;
} vb = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .tail = &vb.head };

/* The requests one batch body took (on its first run; a second run, alone
 * after its group rolled back, runs the same). */
struct vb_batch {
	struct vb_req *first;
	size_t n;
};

/* Add name (and, for a placement, its volume) to the batch's reads. */
static int vb_want(json_t *names, const char *name, bool with_volume)
{
	if (json_array_append_new(names, json_string(name)) != 0)
		return AQ_ENOMEM;
	if (with_volume && strncmp(name, "placements/", 11) == 0 &&
	    json_array_append_new(names, json_string(name + 11)) != 0)
		return AQ_ENOMEM;
	return AQ_OK;
}

/* The names request r reads (its node, its placements, their volumes). */
static int vb_names(const struct vb_req *r, json_t *names)
{
	const char *pname;
	json_t *v;
	size_t i;
	int rc;

	if (r->vg) {
		if ((rc = vb_want(names, r->vg->nn, false)) != AQ_OK)
			return rc;
		json_object_foreach(r->vg->ri->pending, pname, v)
			if ((rc = vb_want(names, pname, false)) != AQ_OK)
				return rc;
		return AQ_OK;
	}
	if ((rc = vb_want(names, r->va->node_name, false)) != AQ_OK)
		return rc;
	json_array_foreach(r->va->due, i, v)
		if ((rc = vb_want(names, json_string_value(v), true)) != AQ_OK)
			return rc;
	return AQ_OK;
}

/* The batch's requests after r (not run yet) back to the front of the
 * queue, in their order: the batch ends with r. */
static void vb_give_back(struct vb_batch *b, struct vb_req *r)
{
	struct vb_req *rest = r->next, *last = rest;
	size_t n = 1;

	while (last->next) {
		last = last->next;
		n++;
	}
	r->next = NULL;
	b->n -= n;
	pthread_mutex_lock(&vb.mu);
	if (!(last->next = vb.head))
		vb.tail = &last->next;
	vb.head = rest;
	vb.st.queued += n;
	vb.st.given_back += n;
	pthread_mutex_unlock(&vb.mu);
}

static int vb_body(struct db *db, void *arg)
{
	struct vb_batch *b = arg;
	struct vb_ctx c = { .pre = NULL };
	json_t *names = json_array(), *one = NULL, *n;
	struct vb_req *r;
	uint64_t t0, budget = db_group_budget();
	size_t i;
	int rc = AQ_ENOMEM;

	if (!b->first) { /* first run: take what is queued now */
		struct vb_req **last = &b->first;

		pthread_mutex_lock(&vb.mu);
		while (vb.head && b->n < VB_MAX) {
			r = vb.head;
			if (!(vb.head = r->next))
				vb.tail = &vb.head;
			r->next = NULL;
			*last = r;
			last = &r->next;
			b->n++;
			vb.st.queued--;
		}
		pthread_mutex_unlock(&vb.mu);
	}
	if (!names)
		goto out;
	for (r = b->first; r; r = r->next)
		if ((rc = vb_names(r, names)) != AQ_OK)
			goto out;
	if ((rc = db_get_many(db, names, &c.pre)) != AQ_OK)
		goto out;
	json_array_foreach(names, i, n)
		if (!json_object_get(c.pre, json_string_value(n)))
			json_object_set_new(c.pre, json_string_value(n), json_null());
	t0 = ut_clock_mono_ns();
	for (r = b->first; r; r = r->next) {
		if ((rc = r->vg ? vg_run(db, r->vg, &c) : va_run(db, r->va, &c)) != AQ_OK)
			goto out;
		if (r->next && ut_clock_mono_ns() - t0 >= budget)
			vb_give_back(b, r);
		/* what it touched is read from the database from now on */
		json_decref(one);
		if (!(one = json_array()) || (rc = vb_names(r, one)) != AQ_OK)
			goto out;
		json_array_foreach(one, i, n)
			json_object_del(c.pre, json_string_value(n));
	}
	rc = AQ_OK;
out:
	json_decref(names);
	json_decref(one);
	json_decref(c.pre);
	return rc;
}

/* r alone, in its own group body. */
static int vb_alone(struct db *db, struct vb_req *r)
{
	return r->vg ? db_group_run(db, DB_GROUP_RECON, vg_body, r->vg) :
		       db_group_run(db, DB_GROUP_RECON, va_body, r->va);
}

/* Lead one batch on db (vb.leading set, vb.mu not held). */
static void vb_lead(struct db *db, struct vb_req *me)
{
	struct vb_batch b = { .first = NULL };
	struct vb_req *r, *next, **pp;
	int rc = db_group_run(db, DB_GROUP_RECON, vb_body, &b);

	for (r = b.first; r; r = r->next)
		r->rc = rc == AQ_OK || b.n == 1 ? rc : vb_alone(db, r);
	pthread_mutex_lock(&vb.mu);
	if (!b.first) { /* the body never ran: only my request fails */
		for (pp = &vb.head; *pp && *pp != me; pp = &(*pp)->next)
			;
		if (*pp) {
			if (!(*pp = me->next))
				vb.tail = pp;
			vb.st.queued--;
		}
		me->rc = rc;
		me->done = true;
	}
	if (b.n) {
		vb.st.batches++;
		vb.st.requests += b.n;
		if (rc != AQ_OK && b.n > 1)
			vb.st.alone += b.n;
	}
	for (r = b.first; r; r = next) {
		next = r->next;
		r->done = true;
	}
	pthread_mutex_unlock(&vb.mu);
}

static int vb_run(struct db *db, struct vb_req *me)
{
	me->rc = AQ_EIO;
	me->done = false;
	me->next = NULL;
	pthread_mutex_lock(&vb.mu);
	*vb.tail = me;
	vb.tail = &me->next;
	vb.st.queued++;
	while (!me->done) {
		if (vb.leading) {
			pthread_cond_wait(&vb.cv, &vb.mu);
			continue;
		}
		vb.leading = true;
		pthread_mutex_unlock(&vb.mu);
		vb_lead(db, me);
		pthread_mutex_lock(&vb.mu);
		vb.leading = false;
		pthread_cond_broadcast(&vb.cv);
	}
	pthread_mutex_unlock(&vb.mu);
	return me->rc;
}

void srv_visit_batch_stats(struct srv_visit_batch_stats *st)
{
	pthread_mutex_lock(&vb.mu);
	*st = vb.st;
	pthread_mutex_unlock(&vb.mu);
}
