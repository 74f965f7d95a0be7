/* api_place: placement of volumes on storage nodes, as a pure function.
 *
 * A volume's weight is its throughput limit (MiB/s). A node may hold volumes
 * whose weights sum to at most its ceiling; every node of a location shares
 * the location's shelves, whose summed ceiling bounds the location total.
 * Among the nodes that fit, the one with the most headroom wins (ties: the
 * first), so load spreads and adding a node adds capacity linearly.
 * On failover (overcommit), availability wins: ceilings are ignored and the
 * healthy node with the most headroom (possibly negative) is chosen.
 */
#ifndef AQ_API_PLACE_H
#define AQ_API_PLACE_H

#include <stdbool.h>
#include <stddef.h>

#include "api/api_error.h"

struct api_place_node {
	const char *name;
	double ceiling_mibps;
	double allocated_mibps;
	bool eligible;           /* READY and not the node being left */
};

/* Choose a node for a volume of weight mibps. shelf_headroom is what the
 * location's shelves can still take (ignored when overcommit). On success
 * *chosen is the index. AQ_EEXHAUSTED when nothing fits (msg names the
 * largest headroom), AQ_EUNAVAIL when no node is eligible at all. */
int api_place(const struct api_place_node *nodes, size_t n, double mibps, double shelf_headroom,
	      bool overcommit, size_t *chosen, aq_msg *msg);

/* Shelf capacity: a location's volumes (their capacityGib, whatever their
 * state) live on its shelves, which hold shelf_gib in all. Growing what
 * they take by grow_gib (a create: its capacity; a resize: new minus old)
 * fits when used_gib + grow_gib <= shelf_gib; shrinking always fits.
 * AQ_EEXHAUSTED (RESOURCE_EXHAUSTED: google.rpc's "the entire file system
 * is out of space") naming shelves (their ids, as the caller lists them),
 * location loc, what is free and what is asked. Pure. */
int api_place_capacity(double shelf_gib, double used_gib, double grow_gib, const char *shelves, const char *loc,
		       aq_msg *msg);

#endif
