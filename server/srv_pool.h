/* srv_pool: what pool handlers share with volume handlers. */
#ifndef AQ_SRV_POOL_H
#define AQ_SRV_POOL_H

#include "server/srv_internal.h"

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
/* Fill the pool's output-only fields from its volumes' usage. */
void srv_pool_output(const struct srv_cfg *cfg, json_t *pool, const struct srv_pool_usage *u);
/* Recompute AUTO/FLEX volume limits after the pool changed (in the caller's
 * transaction). */
int srv_pool_reprice_volumes(struct srv_req *req, const json_t *pool);

#endif
