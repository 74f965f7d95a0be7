/* srv_pool: storage pools (stored kind "pool", under
 * projects/P/locations/L) and what a pool's volumes use of it, which the
 * volume handlers check against. Handlers run in their own transaction on
 * a worker; the rest in the caller's. */
#ifndef AQ_SRV_POOL_H
#define AQ_SRV_POOL_H

#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"

struct db;
struct db_usage;
struct srv_cfg;
struct srv_req;

/* What a pool's volumes use: count, summed capacity, summed throughput
 * limits (MiB/s), cold and hot GiB. */
struct srv_pool_usage {
	int64_t count;
	int64_t capacity_gib;
	double mibps;
	int64_t cold_gib;
	int64_t hot_used_gib;
};

int srv_pool_usage(struct db *db, const char *pool_name, struct srv_pool_usage *u, aq_msg *msg);
/* The same from a pool's usage counters already read (db_usage_get's). */
void srv_pool_usage_of(const struct db_usage *du, struct srv_pool_usage *u);
/* Fill the pool's output-only fields from its volumes' usage. */
void srv_pool_output(const struct srv_cfg *cfg, json_t *pool, const struct srv_pool_usage *u);
/* Recompute AUTO/FLEX volume limits after the pool changed (in the caller's
 * transaction). */
int srv_pool_reprice_volumes(struct srv_req *req, const json_t *pool);

int srv_h_pool_create(struct srv_req *req, json_t **resp);
int srv_h_pool_get(struct srv_req *req, json_t **resp);
int srv_h_pool_list(struct srv_req *req, json_t **resp);
int srv_h_pool_patch(struct srv_req *req, json_t **resp);
int srv_h_pool_delete(struct srv_req *req, json_t **resp);

#endif
