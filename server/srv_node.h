/* srv_node: storage nodes, shelves, placement and the reconciler.
 *
 * Stored kinds (db): "node" (nodes/N, parent locations/L; the public document
 * plus an "internal" object that never leaves the server), "placement"
 * (placements/<volume name>, parent nodes/N: which node serves a volume and
 * the operation waiting for it), "shelf" (shelves/S, parent locations/L) and
 * "locsecret" (locsecrets/L: the location's file-handle key, shared by its
 * nodes so handles survive failover) and "coldsecret" (coldsecrets/L: the
 * secretAccessKey of the location's S3 cold store, never returned) and
 * "join" (joins/<jti>: a spent join token, kept until it would have expired;
 * srv_join.c).
 */
#ifndef AQ_SRV_NODE_H
#define AQ_SRV_NODE_H

#include "server/srv_internal.h"

/* Seed hardware figures (DESIGN.md): node ~35 GB/s read, ~10 GB/s write;
 * shelf ~140 GB/s read, 70 GB/s (TLC) write. In MiB/s. */
#define SRV_NODE_READ_MIBPS 33379.0
#define SRV_NODE_WRITE_MIBPS 9537.0
#define SRV_SHELF_READ_MIBPS 133514.0
#define SRV_SHELF_WRITE_MIBPS 66757.0

/* Place a new or changed volume (in the caller's transaction): pick a node of
 * the volume's location, write its placement with the pending operation and
 * action ("create"/"update"/"delete"). For an update or delete the volume
 * keeps its node (update re-checks that node's headroom). node gets the
 * node's name, for the reconciler's kick after the commit. */
int srv_place_volume(struct srv_req *req, const json_t *vol, const char *op_name,
		     const char *action, char *node, size_t node_cap, aq_msg *msg);
/* Pick a node of location loc for mibps (skip: a node to leave, or NULL). */
int srv_place_pick(struct db *db, const char *loc, const char *skip, double mibps, bool overcommit,
		   char *node, size_t cap, aq_msg *msg);
/* Wake the reconciler after a commit that changed desired state: for node
 * (a name), or for every node (NULL). */
void srv_reconcile_kick(struct srv *srv, const char *node);
int srv_reconcile_start(struct srv *srv, aq_msg *msg);
void srv_reconcile_stop(struct srv *srv);
/* A node reported generation g applied: finish what waited for it. failed
 * (may be NULL): [{name, error}] of volumes the node could not serve; their
 * operations fail with the node's reason and the volumes show ERROR. */
int srv_node_applied(struct srv *srv, struct db *db, const char *node_name, int64_t g,
		     const json_t *failed);
/* Create the default shelf of a new location (in the caller's transaction). */
int srv_shelf_default(struct db *db, const char *location_id);

/* The location's coldStore as the intent carries it (secretAccessKey
 * included), or NULL when it has none (the agents' embedded default). New
 * reference. srv_project.c. */
json_t *srv_cold_store_intent(struct db *db, const char *location_id);

/* The public view of a node: internal fields removed, counts filled. */
int srv_node_view(struct db *db, json_t *node);
/* srv_drain.c: store a node document (in the caller's transaction). */
int srv_node_save(struct db *db, json_t *node);
/* One reconciler pass over node lifecycles: silent nodes become DOWN, and
 * the volumes of DOWN nodes (past ceilings) and DRAINING nodes (within
 * them) move to READY nodes of their location, retried every pass while
 * some wait. True when a node went DOWN or a volume moved. */
bool srv_drain_pass(struct srv *srv, struct db *db, int64_t now_ms);

/* Wall-clock milliseconds since the epoch. */
int64_t srv_node_now_ms(void);

/* srv_join.c. bytes random bytes (at most 64) as hex into out (2 * bytes + 1). */
void srv_rand_hex(char *out, size_t bytes);
/* A node token for node (of location loc, incarnation nid) with the
 * configured lifetime: sets "nodeToken" and "nodeTokenExpireTime" in into. */
int srv_node_token_issue(struct srv *srv, const char *node, const char *loc, const char *nid, json_t *into,
			 aq_msg *msg);
/* s as one POSIX shell word: as is when it holds only safe characters,
 * else in single quotes ('\'' for a quote). AQ_ETOOBIG when out is short. */
int srv_shell_quote(const char *s, char *out, size_t cap);
/* --public-url: an http(s) URL with a host and only URL characters. */
int srv_public_url_check(const char *url, aq_msg *msg);
/* The public URL when none is configured: the scheme aquiferd serves and
 * --listen, with hostname for a wildcard address (0.0.0.0, [::]). */
void srv_public_url_default(const char *listen, bool tls, const char *hostname, char *out, size_t cap);
/* The installCommand of a join token: deploy/install-agent.sh with every
 * word shell-quoted (node NULL or "": no --node; tls: --ca-file). */
int srv_install_command(const char *public_url, const char *token, const char *loc, const char *node, bool tls,
			char *out, size_t cap);

#endif
