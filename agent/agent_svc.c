/* agent_svc: claim, announce and release service addresses on
 * --service-interface (see agent_svc.h). The interface is changed with
 * rtnetlink (no ip(8) needed); announcements are ARP requests from the
 * address to itself, sent to the broadcast MAC (the gratuitous ARP of RFC
 * 5227 §3): every host and switch on the segment updates its cache and
 * forwarding table to this node's MAC at once, so clients retransmitting
 * to the address reach the new holder without waiting for an ARP timeout. */
#include "agent/agent_svc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/rtnetlink.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api/api_schema.h"
#include "util/ut_clock.h"
#include "util/ut_hostport.h"
#include "util/ut_log.h"

/* How long after a claim the reporter announces it again. */
#define SVC_ANNOUNCE_MS 10000
/* How often the fence thread looks at the lease. */
#define SVC_FENCE_TICK_MS 50

static bool wildcard(const char *listen)
{
	struct ut_hostport hp;

	return ut_hostport_parse(listen, 2049, 0, &hp, NULL) == AQ_OK &&
	       (strcmp(hp.host, "0.0.0.0") == 0 || strcmp(hp.host, "::") == 0);
}

int agent_svc_init(struct agent_svc *s, const char *iface, const char *nfs_listen, const char *smb_listen,
		   unsigned nfs_port, aq_msg *msg)
{
	memset(s, 0, sizeof(*s));
	s->nfs_port = nfs_port;
	if (!iface || !*iface)
		return AQ_OK;
	if (strlen(iface) >= sizeof(s->iface) || !(s->ifindex = if_nametoindex(iface)))
		return aq_fail(msg, AQ_EINVAL, "--service-interface %.64s: no such network interface", iface);
	if (!wildcard(nfs_listen))
		return aq_fail(msg, AQ_EINVAL, "--service-interface needs --nfs-listen on a wildcard address "
			       "(0.0.0.0:PORT), so the service addresses it claims are served; it is %.128s", nfs_listen);
	if (smb_listen && *smb_listen && !wildcard(smb_listen))
		return aq_fail(msg, AQ_EINVAL, "--service-interface needs --smb-listen on a wildcard address "
			       "(0.0.0.0[:PORT]); it is %.128s", smb_listen);
	snprintf(s->iface, sizeof(s->iface), "%s", iface);
	return AQ_OK;
}

/* RTM_NEWADDR (add) or RTM_DELADDR of addr/prefix on ifindex; 0 or -errno
 * (-EEXIST: it is there already, -EADDRNOTAVAIL: it was not). */
static int nl_addr(bool add, unsigned ifindex, uint32_t addr, unsigned prefix)
{
	struct {
		struct nlmsghdr nh;
		struct ifaddrmsg ifa;
		char attrs[64];
	} req;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	char buf[512];
	struct nlmsghdr *nh;
	struct rtattr *rta;
	uint32_t be = htonl(addr);
	ssize_t got;
	int fd, rc = -EIO;

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifa));
	req.nh.nlmsg_type = add ? RTM_NEWADDR : RTM_DELADDR;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (add ? NLM_F_CREATE | NLM_F_EXCL : 0);
	req.nh.nlmsg_seq = 1;
	req.ifa.ifa_family = AF_INET;
	req.ifa.ifa_prefixlen = (unsigned char)prefix;
	req.ifa.ifa_scope = RT_SCOPE_UNIVERSE;
	req.ifa.ifa_index = ifindex;
	for (int t = 0; t < 2; t++) {
		rta = (struct rtattr *)(void *)((char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len));
		rta->rta_type = t == 0 ? IFA_LOCAL : IFA_ADDRESS;
		rta->rta_len = RTA_LENGTH(sizeof(be));
		memcpy(RTA_DATA(rta), &be, sizeof(be));
		req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
	}
	if ((fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE)) < 0)
		return -errno;
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		rc = -errno;
		goto out;
	}
	if ((got = recv(fd, buf, sizeof(buf), 0)) < 0) {
		rc = -errno;
		goto out;
	}
	for (nh = (struct nlmsghdr *)(void *)buf; NLMSG_OK(nh, (size_t)got); nh = NLMSG_NEXT(nh, got))
		if (nh->nlmsg_type == NLMSG_ERROR) {
			rc = ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
			break;
		}
out:
	close(fd);
	return rc;
}

/* Two gratuitous ARPs (a request and a reply, as arping -U/-A send: some
 * peers update only on one of them) from addr, broadcast on ifindex. */
static int garp(const char *iface, unsigned ifindex, uint32_t addr)
{
	struct {
		struct arphdr h;
		unsigned char sha[ETH_ALEN], spa[4], tha[ETH_ALEN], tpa[4];
	} __attribute__((packed)) pkt;
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ARP), .sll_halen = ETH_ALEN };
	struct ifreq ifr;
	uint32_t be = htonl(addr);
	int fd, rc = 0;

	if ((fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_ARP))) < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) != 0) {
		rc = -errno;
		goto out;
	}
	to.sll_ifindex = (int)ifindex;
	memset(to.sll_addr, 0xff, ETH_ALEN);
	memset(&pkt, 0, sizeof(pkt));
	pkt.h.ar_hrd = htons(ARPHRD_ETHER);
	pkt.h.ar_pro = htons(ETH_P_IP);
	pkt.h.ar_hln = ETH_ALEN;
	pkt.h.ar_pln = 4;
	memcpy(pkt.sha, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	memcpy(pkt.spa, &be, 4);
	memcpy(pkt.tpa, &be, 4);
	for (int op = 0; op < 2; op++) {
		pkt.h.ar_op = htons(op == 0 ? ARPOP_REQUEST : ARPOP_REPLY);
		if (op == 1)
			memset(pkt.tha, 0xff, ETH_ALEN);
		if (sendto(fd, &pkt, sizeof(pkt), 0, (struct sockaddr *)&to, sizeof(to)) < 0)
			rc = -errno;
	}
out:
	close(fd);
	return rc;
}

static ssize_t held_at(const struct agent_svc *s, uint32_t addr)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->held[i].addr == addr)
			return (ssize_t)i;
	return -1;
}

static void release(struct agent_svc *s, size_t i, const char *req)
{
	char ip[16];
	int rc = nl_addr(false, s->ifindex, s->held[i].addr, s->held[i].prefix);

	api_svcaddr_format(s->held[i].addr, ip, sizeof(ip));
	if (rc != 0 && rc != -EADDRNOTAVAIL)
		UT_ERROR("agent_svc", req, "cannot release %s/%u from %s: %s", ip, s->held[i].prefix, s->iface, strerror(-rc));
	else
		UT_INFO("agent_svc", req, "released %s/%u from %s", ip, s->held[i].prefix, s->iface);
	s->held[i] = s->held[s->n - 1];
	s->claimed_ms[i] = s->claimed_ms[s->n - 1];
	s->n--;
}

/* Claim sa (0, or -errno with why set). */
static int claim(struct agent_svc *s, const struct api_svcaddr *sa, char *why, size_t cap, const char *req)
{
	char ip[16];
	int rc;

	api_svcaddr_format(sa->addr, ip, sizeof(ip));
	if (s->n >= AGENT_SVC_MAX) {
		snprintf(why, cap, "this node holds %d service addresses already", AGENT_SVC_MAX);
		return -ENOSPC;
	}
	if ((rc = nl_addr(true, s->ifindex, sa->addr, sa->prefix)) != 0 && rc != -EEXIST) {
		snprintf(why, cap, "cannot add service address %s/%u to %s: %s", ip, sa->prefix, s->iface, strerror(-rc));
		return rc;
	}
	s->held[s->n] = *sa;
	s->claimed_ms[s->n++] = (int64_t)ut_clock_mono_ms();
	if ((rc = garp(s->iface, s->ifindex, sa->addr)) != 0)
		UT_WARN("agent_svc", req, "claimed %s/%u on %s, but its gratuitous ARP failed: %s", ip, sa->prefix,
			s->iface, strerror(-rc));
	else
		UT_INFO("agent_svc", req, "claimed %s/%u on %s (gratuitous ARP sent)", ip, sa->prefix, s->iface);
	return 0;
}

void agent_svc_apply(struct agent_svc *s, const json_t *vols, const bool *served, json_t *failed, const char *req)
{
	struct api_svcaddr *want = s->want;
	size_t *want_vol = s->want_vol, i, nwant = 0;
	json_t *v;

	json_array_foreach(vols, i, v) {
		const json_t *e = json_object_get(v, API_SVCADDR_KEY);
		const char *name = api_json_str(v, "name", "");
		struct api_svcaddr sa;
		aq_msg why = { .text = "" };
		char text[400];

		if (!e || !served[i])
			continue;
		if (api_svcaddr_decode(e, &sa, &why) != AQ_OK) {
			json_array_append_new(failed, json_pack("{s:s,s:s}", "name", name, "error", why.text));
			continue;
		}
		if (!s->iface[0]) {
			json_array_append_new(failed, json_pack("{s:s,s:s}", "name", name, "error",
								"its location gives it a service address and this agent "
								"holds none: start it with --service-interface IFACE"));
			continue;
		}
		if (sa.port != s->nfs_port) {
			snprintf(text, sizeof(text), "its service address wants NFS on port %u; this agent's NFS server "
				 "listens on port %u (--nfs-listen)", sa.port, s->nfs_port);
			json_array_append_new(failed, json_pack("{s:s,s:s}", "name", name, "error", text));
			continue;
		}
		if (nwant < AGENT_SVC_MAX) {
			want_vol[nwant] = i;
			want[nwant++] = sa;
		}
	}
	if (!s->iface[0])
		return;
	s->nwant = nwant;
	if (s->fenced)
		return; /* claimed once a report is accepted again (agent_svc_renew) */
	if (!s->live) {
		/* the intent.json of an earlier run: remove what a kill left on
		 * the interface, claim nothing until aquiferd pushes */
		for (i = 0; i < nwant; i++)
			if (nl_addr(false, s->ifindex, want[i].addr, want[i].prefix) == 0) {
				char ip[16];

				api_svcaddr_format(want[i].addr, ip, sizeof(ip));
				UT_INFO("agent_svc", req, "removed %s from %s (left by an earlier run; claimed again "
					"once aquiferd pushes it)", ip, s->iface);
			}
		return;
	}
	for (i = s->n; i-- > 0;) {
		size_t k;

		for (k = 0; k < nwant && want[k].addr != s->held[i].addr; k++)
			;
		if (k == nwant)
			release(s, i, req);
	}
	for (i = 0; i < nwant; i++) {
		char why[300];

		if (held_at(s, want[i].addr) >= 0)
			continue;
		if (claim(s, &want[i], why, sizeof(why), req) != 0)
			json_array_append_new(failed, json_pack("{s:s,s:s}", "name",
								api_json_str(json_array_get(vols, want_vol[i]), "name", ""),
								"error", why));
	}
}

void agent_svc_announce(struct agent_svc *s, int64_t now_ms)
{
	for (size_t i = 0; i < s->n; i++)
		if (now_ms - s->claimed_ms[i] < SVC_ANNOUNCE_MS)
			(void)garp(s->iface, s->ifindex, s->held[i].addr);
}

void agent_svc_release_all(struct agent_svc *s)
{
	while (s->n)
		release(s, s->n - 1, "stop");
}

json_t *agent_svc_report(const struct agent_svc *s)
{
	json_t *out = json_array();
	char ip[16];

	for (size_t i = 0; out && i < s->n; i++) {
		api_svcaddr_format(s->held[i].addr, ip, sizeof(ip));
		json_array_append_new(out, json_string(ip));
	}
	return out;
}

/* Claim what the last apply wanted and is not held (after a fence). */
static void claim_wanted(struct agent_svc *s, const char *req)
{
	char why[300];

	for (size_t i = 0; i < s->nwant; i++)
		if (held_at(s, s->want[i].addr) < 0 && claim(s, &s->want[i], why, sizeof(why), req) != 0)
			UT_ERROR("agent_svc", req, "%s", why);
}

void agent_svc_renew(struct agent_svc *s, int64_t sent_ms, int64_t lease_ms, bool current, const char *req)
{
	s->lease_ms = lease_ms > 0 ? lease_ms : 0;
	s->lease_end_ms = sent_ms + s->lease_ms;
	/* a report answered late (it waited in a stopped aquiferd's queue)
	 * ends no fence: its lease would run out again at once; the next
	 * report, answered promptly, does */
	if (!s->fenced || (s->lease_ms > 0 && (int64_t)ut_clock_mono_ms() - sent_ms >= s->lease_ms / 2))
		return;
	s->fenced = false;
	if (!current) {
		UT_INFO("agent_svc", req, "a status report was accepted again; aquiferd has a newer intent for this "
			"node: its service addresses are claimed once it is applied");
		return;
	}
	UT_INFO("agent_svc", req, "a status report was accepted again and the intent is current: re-claiming %zu "
		"service addresses", s->nwant);
	claim_wanted(s, req);
}

int agent_svc_report_ms(const struct agent_svc *s, int report_ms)
{
	if (s->iface[0] && s->lease_ms > 0 && s->lease_ms / 3 < report_ms)
		return (int)(s->lease_ms / 3);
	return report_ms;
}

/* The lease ran out: drop everything (under the agent's lock). */
static void fence(struct agent_svc *s, int64_t now_ms)
{
	UT_WARN("agent_svc", "fence", "self-fencing: no status report accepted for %lld ms (lease %lld ms, half of "
		"aquiferd's node-down time): releasing %zu service addresses until one is",
		(long long)(now_ms - s->lease_end_ms + s->lease_ms), (long long)s->lease_ms, s->n);
	s->fenced = true;
	while (s->n)
		release(s, s->n - 1, "fence");
}

static void *fencer(void *arg)
{
	struct agent_svc *s = arg;
	struct timespec tick = { 0, SVC_FENCE_TICK_MS * 1000000L };

	for (;;) {
		int64_t now;

		pthread_mutex_lock(s->lock);
		if (s->fencer_stop) {
			pthread_mutex_unlock(s->lock);
			break;
		}
		now = (int64_t)ut_clock_mono_ms();
		if (!s->fenced && s->lease_ms > 0 && now >= s->lease_end_ms)
			fence(s, now);
		pthread_mutex_unlock(s->lock);
		nanosleep(&tick, NULL);
	}
	return NULL;
}

int agent_svc_fence_start(struct agent_svc *s, pthread_mutex_t *lock)
{
	if (!s->iface[0])
		return AQ_OK;
	s->lock = lock;
	if (pthread_create(&s->fencer, NULL, fencer, s) != 0)
		return AQ_EINTERNAL;
	s->fencer_on = true;
	return AQ_OK;
}

void agent_svc_fence_stop(struct agent_svc *s)
{
	if (!s->fencer_on)
		return;
	pthread_mutex_lock(s->lock);
	s->fencer_stop = true;
	pthread_mutex_unlock(s->lock);
	pthread_join(s->fencer, NULL);
	s->fencer_on = false;
}
