/* smb_iface: FSCTL_QUERY_NETWORK_INTERFACE_INFO (MS-SMB2 3.3.5.15.11), the
 * addresses a multichannel client may open more channels to. The list is
 * the server's listen address, or, for a wildcard one (0.0.0.0, ::), the
 * addresses of the node's interfaces that are up (loopback ones only when
 * there is nothing else), collected once when the server starts
 * (smb_iface_collect), not on the socket loop. Each entry says its
 * interface index and link speed (/sys/class/net/IF/speed; 1 Gbit/s when
 * the interface does not tell, as smbd's default); neither RSS nor RDMA is
 * claimed. The IOCTL must name no file (FileId all ones, else
 * INVALID_PARAMETER, as smbd). The answer is built from that list alone: no
 * client bytes are parsed here beyond the IOCTL's own decoder.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "util/ut_log.h"

#define SMB_IFACE_ENTRY_LEN 152u          /* NETWORK_INTERFACE_INFO (2.2.32.5) */
#define SMB_IFACE_FAMILY_V4 0x0002u       /* SOCKADDR_STORAGE Family (2.2.32.5.1) */
#define SMB_IFACE_FAMILY_V6 0x0017u
#define SMB_IFACE_SPEED_DEFAULT 1000000000ull /* bits per second */

/* The interface's link speed in bits per second (sysfs gives Mbit/s; -1 or nothing when unknown). */
static uint64_t smb_iface_speed(const char *name)
{
	char path[64 + IF_NAMESIZE];
	long mbit = -1;
	FILE *f;

	if (snprintf(path, sizeof(path), "/sys/class/net/%s/speed", name) >= (int)sizeof(path))
		return SMB_IFACE_SPEED_DEFAULT;
	if ((f = fopen(path, "r")) != NULL) {
		if (fscanf(f, "%ld", &mbit) != 1)
			mbit = -1;
		fclose(f);
	}
	return mbit > 0 ? (uint64_t)mbit * 1000000ull : SMB_IFACE_SPEED_DEFAULT;
}

static void smb_iface_add(struct smb_srv *srv, const struct sockaddr *sa, const char *name)
{
	struct smb_srv_iface *e;

	if (srv->nifaces >= SMB_SRV_IFACES_MAX)
		return;
	e = &srv->ifaces[srv->nifaces];
	memset(e, 0, sizeof(*e));
	if (sa->sa_family == AF_INET) {
		e->v6 = false;
		memcpy(e->addr, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;

		if (IN6_IS_ADDR_LINKLOCAL(a))
			return; /* needs a scope the client cannot use */
		e->v6 = true;
		memcpy(e->addr, a, 16);
	} else {
		return;
	}
	e->ifindex = name ? if_nametoindex(name) : 0;
	e->speed = name ? smb_iface_speed(name) : SMB_IFACE_SPEED_DEFAULT;
	srv->nifaces++;
}

/* Whether sa's address is a wildcard (0.0.0.0 or ::). */
static bool smb_iface_any(const struct sockaddr *sa)
{
	static const uint8_t zero[16];

	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	return memcmp(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, zero, 16) == 0;
}

static bool smb_iface_same(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)(const void *)b)->sin_addr.s_addr;
	return memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr,
		      &((const struct sockaddr_in6 *)(const void *)b)->sin6_addr, 16) == 0;
}

void smb_iface_collect(struct smb_srv *srv, const struct sockaddr *listen_sa)
{
	struct ifaddrs *ifs = NULL;
	bool any = smb_iface_any(listen_sa), v6 = listen_sa->sa_family == AF_INET6;

	srv->nifaces = 0;
	if (getifaddrs(&ifs) != 0)
		ifs = NULL;
	/* two passes for a wildcard: the interfaces but loopback, then, when
	 * there were none, loopback */
	for (int pass = 0; pass < 2 && srv->nifaces == 0; pass++) {
		for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
			if (!i->ifa_addr || !(i->ifa_flags & IFF_UP))
				continue;
			if (!any) {
				if (pass == 0 && smb_iface_same(i->ifa_addr, listen_sa)) {
					smb_iface_add(srv, i->ifa_addr, i->ifa_name);
					break;
				}
				continue;
			}
			if ((i->ifa_addr->sa_family != AF_INET && !(v6 && i->ifa_addr->sa_family == AF_INET6)) ||
			    (pass == 0) == ((i->ifa_flags & IFF_LOOPBACK) != 0))
				continue;
			smb_iface_add(srv, i->ifa_addr, i->ifa_name);
		}
	}
	if (!any && srv->nifaces == 0)
		smb_iface_add(srv, listen_sa, NULL); /* an address no interface lists (yet) */
	if (ifs)
		freeifaddrs(ifs);
	UT_DEBUG("smb_srv", NULL, "%u network interface(s) for multichannel clients", (unsigned)srv->nifaces);
}

uint32_t smb_iface_query(struct smb_req *r, const struct smb_wire_ioctl_req *q)
{
	const struct smb_srv *srv = r->c->srv;
	struct ut_buf o = { 0 };
	uint32_t status = STATUS_INSUFFICIENT_RESOURCES;

	/* it names the server, not a file: a FileId other than all ones is
	 * INVALID_PARAMETER (MS-SMB2 3.3.5.15, smbd) */
	if (q->fid.persistent != UINT64_MAX || q->fid.volatile_ != UINT64_MAX)
		return STATUS_INVALID_PARAMETER;
	/* served with multichannel only: a connection that did not negotiate
	 * it is answered as before (clients take it as "not supported") */
	if (!(r->c->server_caps & SMB2_GLOBAL_CAP_MULTI_CHANNEL) || srv->nifaces == 0)
		return STATUS_INVALID_DEVICE_REQUEST;
	if (q->max_output_response < srv->nifaces * SMB_IFACE_ENTRY_LEN)
		return STATUS_BUFFER_TOO_SMALL;
	ut_buf_init(&o, srv->nifaces * SMB_IFACE_ENTRY_LEN);
	for (size_t i = 0; i < srv->nifaces; i++) {
		const struct smb_srv_iface *e = &srv->ifaces[i];
		size_t at = o.len;

		smb_wire_put_u32(&o, i + 1 < srv->nifaces ? SMB_IFACE_ENTRY_LEN : 0); /* Next */
		smb_wire_put_u32(&o, e->ifindex);
		smb_wire_put_u32(&o, 0); /* Capability: neither RSS nor RDMA */
		smb_wire_put_u32(&o, 0);
		smb_wire_put_u64(&o, e->speed);
		smb_wire_put_u16(&o, e->v6 ? SMB_IFACE_FAMILY_V6 : SMB_IFACE_FAMILY_V4);
		smb_wire_put_u16(&o, 0); /* Port */
		if (e->v6) {
			smb_wire_put_u32(&o, 0); /* FlowInfo */
			smb_wire_put_bytes(&o, e->addr, 16);
		} else {
			smb_wire_put_bytes(&o, e->addr, 4);
		}
		ut_buf_put_zero(&o, SMB_IFACE_ENTRY_LEN - (o.len - at)); /* the rest of the 128-byte storage */
	}
	if (o.err == AQ_OK) {
		smb_wire_ioctl_rsp_encode(r->out, r->hdr_off, q->ctl_code, &q->fid, ut_buf_bytes(&o), o.len);
		status = STATUS_SUCCESS;
	}
	ut_buf_cleanup(&o);
	return status;
}
