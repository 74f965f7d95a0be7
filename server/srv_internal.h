/* srv_internal: the context every piece of aquiferd is handed, struct
 * srv. Nothing else lives here: each module declares its own calls in its
 * own header (srv_<module>.h), and a handler's request is srv_req.h's.
 */
#ifndef AQ_SRV_INTERNAL_H
#define AQ_SRV_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "server/srv_auth.h"
#include "server/srv_cfg.h"

/* The context of a running aquiferd. Each subsystem owns its state behind
 * a pointer only its own file can look into: the HTTP front (srv_http.h),
 * the reconciler and its doorbell (srv_reconcile.h, srv_kick.h), node liveness (srv_node.h). What stays
 * here is read-only once serve runs (configuration, key, start time) or
 * has its own lock (the time series, srv_series.h). */
struct srv_http;
struct srv_kick;
struct srv_rec;
struct srv_live;
struct srv_series;
struct srv_sched;
struct srv_lead;
struct tls_ca;

struct srv {
	struct srv_cfg cfg;
	unsigned char key[SRV_KEY_LEN];
	uint64_t start_ns;
	struct srv_http *http;     /* srv_http.c */
	struct srv_kick *kick;     /* srv_kick.c: the reconciler's doorbell */
	struct srv_rec *rec;       /* srv_reconcile.c: its thread */
	struct srv_live *live;     /* srv_node.c */
	struct srv_sched *sched;   /* srv_snapsched.c: the snapshot scheduler's thread */
	struct srv_lead *lead;     /* srv_lead.c: the leader lease (NULL: always leads) */
	/* per-volume and per-node time series fed by status reports, in memory
	 * only (srv_series.h) */
	struct srv_series *series;
	struct srv_shelfio *shelfio; /* per-shelf I/O from status reports (srv_shelfio.h) */
	/* TLS (srv_ca.h): the cluster CA, the served pair (PEM), the state folder */
	struct tls_ca *ca;
	char *tls_cert_pem, *tls_key_pem;
	char ca_dir[1024];
	/* set at SIGTERM (srv_main.c), read by any thread: new mutations are
	 * refused 503 (srv_http.c) and long passes stop between transactions
	 * (srv_drain.c) */
	bool stopping;
};

#endif
