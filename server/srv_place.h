/* srv_place: which node serves a volume.
 *
 * Stored kind "placement" (placements/<volume name>, parent nodes/N): the
 * node serving a volume, its weight (mibps), the action the node must take
 * ("create", "update", "delete") and the operation waiting for it. Every
 * call runs in the caller's transaction; no state of its own.
 */
#ifndef AQ_SRV_PLACE_H
#define AQ_SRV_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"

struct db;
struct db_reads;
struct db_usage;
struct srv_req;

/* What placement and the capacity checks read of one location (id), in
 * the caller's transaction (srv_place_loc_read): its nodes (name, state,
 * throughputCeilingMibps) and its shelves (name, capacityGib,
 * readThroughputMibps) in one list (db_list_fields2; shared, read-only:
 * the process caches them under the location's placement version,
 * db_placever, and reads them again only when it changed), and the
 * usage counters of its storage pools and nodes (db_usage_location). A volume create reads it once, at
 * the start of its checks, for its pool's room, its shelves' room and its
 * placement: nothing it writes before placing changes what placement
 * reads (a volume counts in its pool, a placement in its node). doc: the
 * location's document when the caller read it in the same transaction
 * (borrowed; NULL: read where needed). */
struct srv_place_loc {
	char id[100];
	char parent[120]; /* "locations/<id>" */
	json_t *nodes;
	json_t *shelves;
	json_t *usage; /* {name: [count, capacityGib, mibps, coldGib, hotGib]} */
	const json_t *doc;
};
/* Read pl for location loc (pl->doc set to NULL); srv_place_loc_cleanup
 * frees what it holds (also after a failed read, and on a zeroed pl). */
int srv_place_loc_read(struct db *db, const char *loc, struct srv_place_loc *pl);
void srv_place_loc_cleanup(struct srv_place_loc *pl);
/* The same read in two steps, for a caller that makes it with reads of its
 * own in one db_reads (a create: one round trip on PostgreSQL):
 * srv_place_loc_want readies pl (as srv_place_loc_read would) and sets r's
 * usage inputs (pl->usage gets the counters and the placement version
 * while r is read); srv_place_loc_take, after the reads, takes the nodes
 * and shelves from the cache or reads them (a second statement, only when
 * the version changed). */
int srv_place_loc_want(const char *loc, struct srv_place_loc *pl, struct db_reads *r);
int srv_place_loc_take(struct db *db, struct srv_place_loc *pl);
/* How often srv_place_loc_read found the location's nodes and shelves in
 * the process's cache (same placement version, db_placever) or read them
 * (metric aquifer_place_cache_total{result}). */
void srv_place_cache_stats(uint64_t *hits, uint64_t *misses);
/* The counters of name (a pool or node of pl's location) as read; all 0
 * when nothing counts there. */
void srv_place_loc_usage(const struct srv_place_loc *pl, const char *name, struct db_usage *u);
/* Place a new or changed volume: pick a node of the volume's location,
 * write its placement with the pending operation and action. For an update
 * or delete the volume keeps its node (update re-checks that node's
 * headroom). node gets the node's name, for the reconciler's kick after
 * the commit. A create whose name still has a placement (an earlier volume
 * of that name whose node is still deleting its data) is AQ_EBUSY: the
 * name is reused once that is done. */
/* seen: what the caller read of the location in this transaction (a
 * create's checks), or NULL to read it here. */
int srv_place_volume(struct srv_req *req, const json_t *vol, const char *op_name, const char *action, char *node,
		     size_t node_cap, const struct srv_place_loc *seen, aq_msg *msg);
/* Pick a READY node of location loc with room for mibps (skip: a node to
 * leave, or NULL; overcommit: past ceilings when none has room). */
int srv_place_pick(struct db *db, const char *loc, const char *skip, double mibps, bool overcommit, char *node,
		   size_t cap, aq_msg *msg);
/* The sum of the placement weights on node node_name, and (count not
 * NULL) how many placements it holds. */
int srv_place_allocated(struct db *db, const char *node_name, double *mibps, int64_t *count);

/* Shelf capacity of location loc, in GiB: *cap what its shelves hold
 * (their capacityGib summed; skip: a shelf id left out, NULL none) and
 * *used what its volumes take (the storage pools' usage counters, so the
 * caller's own writes count). *bounded is false when a counted shelf
 * states no capacityGib (or none is left): nothing to count against, so
 * placement does not refuse. counted (may be NULL) gets how many shelves
 * were counted, names (may be NULL) their ids, ", " between them. Reads in the caller's transaction, which makes
 * two creates racing for the last GiB serialise (SQLite: one writer;
 * PostgreSQL: SERIALIZABLE). */
int srv_place_shelf_gib(struct db *db, const char *loc, const char *skip, bool *bounded, double *cap,
			double *used, size_t *counted, char *names, size_t names_cap);
/* Refuse growing the volumes of location loc by grow_gib GiB past its
 * shelves' capacity (api_place_capacity: RESOURCE_EXHAUSTED naming the
 * shelves); AQ_OK when it fits, shrinks, or the shelves are unbounded. */
int srv_place_shelf_room(struct db *db, const char *loc, double grow_gib, aq_msg *msg);
/* The same from what the caller read (pl). */
int srv_place_shelf_room_in(const struct srv_place_loc *pl, double grow_gib, aq_msg *msg);
/* The location id of a volume's full name (projects/P/locations/L/...). */
void srv_place_location(const char *vol_name, char *loc, size_t cap);

#endif
