/* api_shelf: the Shelf resource (Aquifer's own, cluster admin; issue 24):
 * the storage a location's nodes share, with what it is (backend, and for
 * NVMe-oF the transport, portal addresses and subsystem NQN), how much it
 * holds and the throughput ceilings placement counts.
 *
 * One contract: the limits below are what the API accepts and what the
 * agent's --shelf nvmeof:... parser accepts (agent/agent_nvme.c uses
 * api_shelf_nqn_ok and api_shelf_addr_ok), so a shelf the API describes is
 * one an agent can be pointed at, and the reverse. Pure code. A shelf holds
 * no secret: in-band authentication (DH-HMAC-CHAP) is not offered, and an
 * unknown field such as dhchapSecret is refused by name like any other.
 */
#ifndef AQ_API_SHELF_H
#define AQ_API_SHELF_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "api/api_error.h"
#include "api/api_schema.h"

#define API_SHELF_NQN_LEN 223            /* NVMe Base 2.0, 4.5: an NQN is at most 223 bytes */
#define API_SHELF_ADDR_LEN 63            /* a portal's host: IPv4, a name, or an IPv6 literal */
#define API_SHELF_ADDR_ITEM_LEN 72       /* "[" host "]:" port */
#define API_SHELF_ADDRESSES_MAX 8        /* portals (paths) per shelf */
#define API_SHELF_MIBPS_MAX 100000000    /* ~100 TiB/s: past any shelf */
#define API_SHELF_CAPACITY_GIB_MAX 1073741824 /* 1 ZiB in GiB */

/* Seed figures of a shelf (DESIGN.md): ~140 GB/s read, 70 GB/s (TLC)
 * write (QLC half of that), in MiB/s. */
#define API_SHELF_READ_MIBPS 133514.0
#define API_SHELF_WRITE_MIBPS 66757.0

extern const struct api_field api_shelf_fields[];

/* p[0..n) is an NQN both sides accept: "nqn." then at most
 * API_SHELF_NQN_LEN characters in all of [A-Za-z0-9.:_-]. */
bool api_shelf_nqn_ok(const char *p, size_t n);
/* p[0..n) is a portal host both sides accept: 1..API_SHELF_ADDR_LEN
 * characters of [A-Za-z0-9.:_-] (an IPv6 literal without its brackets). */
bool api_shelf_addr_ok(const char *p, size_t n);

/* A whole shelf document (a create body, or the stored one with a PATCH
 * applied), normalised by api_schema_check; fills defaults in doc: backend
 * "directory", media "TLC", the seed's ceilings (QLC: half the write).
 * directory: transport, nqn and addresses refused (naming them). nvmeof:
 * transport, nqn and addresses (each "HOST:PORT" or "[IPv6]:PORT", port
 * 1..65535, no repeats) required. Ceilings 0 < x <= API_SHELF_MIBPS_MAX,
 * capacityGib 1..API_SHELF_CAPACITY_GIB_MAX when given. AQ_EINVAL naming
 * the field. (The srv_check_fn shape: p is unused.) */
struct api_math_params;
int api_shelf_check(const struct api_math_params *p, json_t *doc, aq_msg *msg);

#endif
