/* agent_svc: the service addresses this node holds (issue 25,
 * api/api_svcaddr.h). With --service-interface IFACE the agent adds the
 * address each volume it serves carries in its intent to IFACE (rtnetlink,
 * RTM_NEWADDR), announces it with gratuitous ARP so peers and switches
 * update their caches at once, removes the addresses no served volume
 * carries any more, and reports what it holds. Addresses are claimed only
 * from a push, never from the intent.json of an earlier run: after a crash
 * that intent may name addresses another node took over since, so at
 * start-up the agent only removes them (stale ones a kill left). A clean
 * stop releases everything. Needs CAP_NET_ADMIN and CAP_NET_RAW. Without
 * an interface nothing is touched, and a volume whose intent carries an
 * address fails by name (it would not be reachable where it is mounted).
 *
 * Self-fencing: every accepted status report renews a lease of the length
 * aquiferd's answer gives ("serviceAddressLeaseMs", srv_svcaddr.h: half of
 * its --node-down-seconds), counted on this node's monotonic clock from the
 * moment the report was sent. When it runs out the fence thread removes
 * every held address (the node stops answering on them: the kernel drops
 * what is sent to an address it no longer has) and claims nothing until a
 * report is accepted again; then it re-claims what the intent it holds gives
 * it if aquiferd's answer shows that intent is current, else it waits for
 * the next push. aquiferd gives the addresses to another node only after
 * node-down-seconds from receiving the last report, which came after its
 * send: the agent's deadline is earlier whatever the offset of the clocks.
 * Callers hold the agent's lock (the fence thread takes it). */
#ifndef AQ_AGENT_SVC_H
#define AQ_AGENT_SVC_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"
#include "api/api_svcaddr.h"

/* Addresses one node holds at most (one per served volume). */
#define AGENT_SVC_MAX 1024

struct agent_svc {
	char iface[16];        /* "" : no --service-interface */
	unsigned ifindex;
	unsigned nfs_port;     /* the NFS server's port: an address wanting another fails */
	bool live;             /* a push was applied: claims are allowed */
	bool fenced;           /* the lease ran out: nothing held, nothing claimed */
	int64_t lease_ms;      /* aquiferd's serviceAddressLeaseMs (0: none given: no fence) */
	int64_t lease_end_ms;  /* monotonic: the last accepted report's send + lease_ms */
	pthread_mutex_t *lock; /* the agent's, taken by the fence thread */
	pthread_t fencer;
	bool fencer_on, fencer_stop;
	size_t nwant;          /* want[]'s entries from the last apply (re-claimed after a fence) */
	size_t n;
	struct api_svcaddr held[AGENT_SVC_MAX];
	int64_t claimed_ms[AGENT_SVC_MAX]; /* when each was claimed (re-announced for a while) */
	struct api_svcaddr want[AGENT_SVC_MAX]; /* agent_svc_apply's scratch: what the intent wants */
	size_t want_vol[AGENT_SVC_MAX];         /* ... and the volume (index) wanting each */
};

/* Check the interface (it exists) and the listeners (NFS and, when given,
 * SMB listen on a wildcard address, so a claimed address is served).
 * iface "" : nothing to check. AQ_EINVAL naming the option. */
int agent_svc_init(struct agent_svc *s, const char *iface, const char *nfs_listen, const char *smb_listen,
		   unsigned nfs_port, aq_msg *msg);

/* After an intent was applied: vols its volumes, served[i] whether volume
 * i is served. Releases what no served volume carries, claims what they
 * carry (when s->live), appends {name, error} to failed for a volume whose
 * address cannot be held. req: the log's request id. */
void agent_svc_apply(struct agent_svc *s, const json_t *vols, const bool *served, json_t *failed, const char *req);

/* Gratuitous ARP again for addresses claimed in the last 10 s (a lost
 * first announcement); called by the reporter. */
void agent_svc_announce(struct agent_svc *s, int64_t now_ms);

/* A status report sent at sent_ms (monotonic) was accepted; lease_ms is
 * its answer's serviceAddressLeaseMs (0: the answer has none), current
 * whether the answer's generation is the one this node applied. Ends a
 * fence: re-claims what the last apply wanted when current. */
void agent_svc_renew(struct agent_svc *s, int64_t sent_ms, int64_t lease_ms, bool current, const char *req);

/* How long the reporter waits between reports: report_ms, shortened to a
 * third of the lease when there is one, so that one late report does not
 * fence. */
int agent_svc_report_ms(const struct agent_svc *s, int report_ms);

/* Start (stop) the thread that fences when the lease runs out; lock is
 * the agent's. Without an interface nothing is started. AQ_OK or
 * AQ_EINTERNAL. Stop accepts a fencer never started. */
int agent_svc_fence_start(struct agent_svc *s, pthread_mutex_t *lock);
void agent_svc_fence_stop(struct agent_svc *s);

/* Remove every held address from the interface (clean stop). */
void agent_svc_release_all(struct agent_svc *s);

/* The held addresses as a JSON array of "a.b.c.d" (new reference). */
json_t *agent_svc_report(const struct agent_svc *s);

#endif
