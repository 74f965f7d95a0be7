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
 * Callers hold the agent's lock. */
#ifndef AQ_AGENT_SVC_H
#define AQ_AGENT_SVC_H

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

/* Remove every held address from the interface (clean stop). */
void agent_svc_release_all(struct agent_svc *s);

/* The held addresses as a JSON array of "a.b.c.d" (new reference). */
json_t *agent_svc_report(const struct agent_svc *s);

#endif
