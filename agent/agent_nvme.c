/* agent_nvme: the NVMe-oF shelf's parsers and command builders (agent_nvme.h).
 * Pure functions: no I/O, no allocation; every read of bytes is bounded by
 * the length given. */
#include "agent/agent_nvme.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ut_hex.h"

int agent_nvme_is_spec(const char *spec)
{
	return strncmp(spec, "nvmeof:", 7) == 0;
}

const char *agent_nvme_transport_name(enum agent_nvme_transport t)
{
	return t == AGENT_NVME_RDMA ? "rdma" : "tcp";
}

/* Characters an address, an NQN or a program path may hold: nothing that
 * would split the fabrics option string (',' '=') or a line. */
static int nvme_text_ok(const char *p, size_t n, const char *extra)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '-' || c == '_' || c == ':' || strchr(extra, c)))
			return 0;
	}
	return n > 0;
}

/* One ",key=value" option of the spec. */
static int spec_option(const char *opt, size_t n, struct agent_nvme_spec *out, aq_msg *msg)
{
	if (n == 8 && strncmp(opt, "fence=pr", 8) == 0) {
		out->fence = AGENT_NVME_FENCE_PR;
	} else if (n == 10 && strncmp(opt, "fence=none", 10) == 0) {
		out->fence = AGENT_NVME_FENCE_NONE;
	} else if (n == 11 && strncmp(opt, "fence=lease", 11) == 0) {
		out->fence = AGENT_NVME_FENCE_LEASE;
	} else if (n > 6 && strncmp(opt, "lease=", 6) == 0) {
		unsigned v = 0;
		size_t i;

		for (i = 6; i < n && i < 10 && opt[i] >= '0' && opt[i] <= '9'; i++)
			v = v * 10 + (unsigned)(opt[i] - '0');
		if (i != n || v < 5 || v > 600)
			return aq_fail(msg, AQ_EINVAL, "--shelf: lease= takes the lease timeout in seconds, 5..600");
		out->lease_s = v;
	} else if (n > 10 && strncmp(opt, "provision=", 10) == 0) {
		if (n - 10 >= sizeof(out->provision) || opt[10] != '/' || !nvme_text_ok(opt + 10, n - 10, "/+"))
			return aq_fail(msg, AQ_EINVAL, "--shelf: provision= needs an absolute program path");
		memcpy(out->provision, opt + 10, n - 10);
		out->provision[n - 10] = 0;
	} else {
		return aq_fail(msg, AQ_EINVAL, "--shelf: unknown option \"%.*s\" (fence=pr|lease|none, lease=SECONDS, provision=PROG)",
			       (int)(n > 64 ? 64 : n), opt);
	}
	return AQ_OK;
}

int agent_nvme_spec_parse(const char *spec, struct agent_nvme_spec *out, aq_msg *msg)
{
	struct agent_nvme_spec s = { .fence = AGENT_NVME_FENCE_PR };
	const char *p = spec, *end, *opts;
	char *num_end;
	unsigned long port;
	int rc = AQ_OK;

	if (!agent_nvme_is_spec(p)) {
		rc = aq_fail(msg, AQ_EINVAL, "--shelf: an NVMe-oF shelf starts with nvmeof:");
		goto out;
	}
	p += 7;
	if (strncmp(p, "tcp:", 4) == 0) {
		s.transport = AGENT_NVME_TCP;
	} else if (strncmp(p, "rdma:", 5) == 0) {
		s.transport = AGENT_NVME_RDMA;
	} else {
		rc = aq_fail(msg, AQ_EINVAL, "--shelf: transport must be tcp or rdma (nvmeof:tcp:ADDR:PORT:NQN)");
		goto out;
	}
	p = strchr(p, ':') + 1;
	if (*p == '[') { /* [IPv6] */
		if (!(end = strchr(p, ']')) || end[1] != ':') {
			rc = aq_fail(msg, AQ_EINVAL, "--shelf: an IPv6 address goes in brackets: [ADDR]:PORT");
			goto out;
		}
		p++;
	} else if (!(end = strchr(p, ':'))) {
		rc = aq_fail(msg, AQ_EINVAL, "--shelf: nvmeof:TRANSPORT:ADDR:PORT:NQN expected");
		goto out;
	}
	if (!api_shelf_addr_ok(p, (size_t)(end - p))) { /* the API's rule (api/api_shelf.h) */
		rc = aq_fail(msg, AQ_EINVAL, "--shelf: the address must be 1..%d characters of [A-Za-z0-9.:_-]",
			     AGENT_NVME_ADDR_MAX);
		goto out;
	}
	memcpy(s.addr, p, (size_t)(end - p));
	p = end + (*end == ']' ? 2 : 1);
	port = strtoul(p, &num_end, 10);
	if (num_end == p || *num_end != ':' || port < 1 || port > 65535 || *p == '+' || *p == '-') {
		rc = aq_fail(msg, AQ_EINVAL, "--shelf: the port must be 1..65535, followed by :NQN");
		goto out;
	}
	s.port = (unsigned)port;
	p = num_end + 1;
	opts = strchr(p, ',');
	end = opts ? opts : p + strlen(p);
	if (!api_shelf_nqn_ok(p, (size_t)(end - p))) { /* the API's rule (api/api_shelf.h) */
		rc = aq_fail(msg, AQ_EINVAL, "--shelf: the NQN must start with nqn. and be at most %d characters "
			     "of [A-Za-z0-9.:_-]", AGENT_NVME_NQN_MAX);
		goto out;
	}
	memcpy(s.nqn, p, (size_t)(end - p));
	while (opts) {
		const char *o = opts + 1, *next = strchr(o, ',');
		size_t n = next ? (size_t)(next - o) : strlen(o);

		if ((rc = spec_option(o, n, &s, msg)) != AQ_OK)
			goto out;
		opts = next;
	}
	if (s.lease_s && s.fence != AGENT_NVME_FENCE_LEASE) {
		rc = aq_fail(msg, AQ_EINVAL, "--shelf: lease= is the timeout of fence=lease; name fence=lease too");
		goto out;
	}
	if (s.fence == AGENT_NVME_FENCE_LEASE && !s.lease_s)
		s.lease_s = 10;
	*out = s;
out:
	return rc;
}

int agent_nvme_connect_string(const struct agent_nvme_spec *s, const char *hostnqn, const char *hostid, char *buf,
			      size_t cap)
{
	int n = snprintf(buf, cap, "transport=%s,traddr=%s,trsvcid=%u,nqn=%s,hostnqn=%s,hostid=%s",
			 agent_nvme_transport_name(s->transport), s->addr, s->port, s->nqn, hostnqn, hostid);

	return n < 0 || (size_t)n >= cap ? -ENOSPC : 0;
}

/* A decimal of at most 9 digits at buf[*i], len-bounded. */
static int nvme_decimal(const char *buf, size_t len, size_t *i, int *out)
{
	size_t start = *i;
	int v = 0;

	while (*i < len && buf[*i] >= '0' && buf[*i] <= '9' && *i - start < 9)
		v = v * 10 + (buf[(*i)++] - '0');
	if (*i == start || (*i < len && buf[*i] >= '0' && buf[*i] <= '9'))
		return -EPROTO;
	*out = v;
	return 0;
}

int agent_nvme_connect_reply(const char *buf, size_t len, int *instance)
{
	size_t i = 9;
	int inst, cntlid;

	if (len < 9 || memcmp(buf, "instance=", 9) != 0 || nvme_decimal(buf, len, &i, &inst) != 0)
		return -EPROTO;
	if (len - i < 8 || memcmp(buf + i, ",cntlid=", 8) != 0)
		return -EPROTO;
	i += 8;
	if (nvme_decimal(buf, len, &i, &cntlid) != 0)
		return -EPROTO;
	if (i < len && buf[i] != '\n' && buf[i] != 0)
		return -EPROTO;
	*instance = inst;
	return 0;
}

int agent_nvme_address_match(const char *buf, size_t len, const struct agent_nvme_spec *s)
{
	char port[8];
	int traddr = 0, trsvcid = 0;
	size_t i = 0;

	snprintf(port, sizeof(port), "%u", s->port);
	while (i < len && buf[i] != '\n' && buf[i] != 0) {
		size_t k = i, eq, v;

		while (k < len && buf[k] != ',' && buf[k] != '\n' && buf[k] != 0)
			k++;
		for (eq = i; eq < k && buf[eq] != '='; eq++)
			;
		if (eq == k || eq == i)
			return -EINVAL; /* no key=value */
		v = eq + 1;
		if (eq - i == 6 && memcmp(buf + i, "traddr", 6) == 0)
			traddr = k - v == strlen(s->addr) && memcmp(buf + v, s->addr, k - v) == 0 ? 1 : -1;
		else if (eq - i == 7 && memcmp(buf + i, "trsvcid", 7) == 0)
			trsvcid = k - v == strlen(port) && memcmp(buf + v, port, k - v) == 0 ? 1 : -1;
		i = k < len && buf[k] == ',' ? k + 1 : k;
	}
	if (!traddr || !trsvcid)
		return -EINVAL;
	return traddr == 1 && trsvcid == 1;
}

int agent_nvme_nsid_of_fsid(const char *fsid, uint8_t id[16])
{
	static const uint8_t prefix[8] = { 'A', 'Q', 'F', 'R', 0x00, 0x01, 0x00, 0x00 };
	uint64_t v = 0;
	size_t n = strlen(fsid), i;

	if (n < 1 || n > 16)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		int h = ut_hex_value(fsid[i]);

		if (h < 0)
			return -EINVAL;
		v = v << 4 | (uint64_t)h;
	}
	memcpy(id, prefix, 8);
	for (i = 0; i < 8; i++)
		id[8 + i] = (uint8_t)(v >> (56 - 8 * i));
	return 0;
}

void agent_nvme_id_text(const uint8_t id[16], char *buf, size_t cap)
{
	snprintf(buf, cap, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", id[0], id[1],
		 id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10], id[11], id[12], id[13], id[14], id[15]);
}

int agent_nvme_id_parse(const char *buf, size_t len, uint8_t id[16])
{
	uint8_t out[16];
	size_t i, k = 0;

	if (len < 36 || (len > 36 && buf[36] != '\n' && buf[36] != 0) || (len > 37 && buf[37] != 0))
		return -EINVAL;
	for (i = 0; i < 36;) {
		int hi, lo;

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (buf[i++] != '-')
				return -EINVAL;
			continue;
		}
		if ((hi = ut_hex_value(buf[i])) < 0 || (lo = ut_hex_value(buf[i + 1])) < 0)
			return -EINVAL;
		out[k++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	memcpy(id, out, 16);
	return 0;
}

uint64_t agent_nvme_key_of_node(const char *node)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (; *node; node++)
		h = (h ^ (unsigned char)*node) * 1099511628211ULL;
	return h ? h : 1;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

void agent_nvme_cmd_register(struct agent_nvme_cmd *c, enum agent_nvme_rrega act, int iekey, uint64_t crkey,
			     uint64_t nrkey)
{
	memset(c, 0, sizeof(*c));
	c->opcode = AGENT_NVME_OP_RESV_REGISTER;
	/* RREGA 2:0, IEKEY 3, CPTPL 31:30 = 0 (no change to power-loss persistence) */
	c->cdw10 = (uint32_t)act | (iekey ? 1u << 3 : 0);
	put_le64(c->data, crkey);
	put_le64(c->data + 8, nrkey);
	c->data_len = 16;
}

void agent_nvme_cmd_acquire(struct agent_nvme_cmd *c, enum agent_nvme_racqa act, uint64_t crkey, uint64_t prkey)
{
	memset(c, 0, sizeof(*c));
	c->opcode = AGENT_NVME_OP_RESV_ACQUIRE;
	/* RACQA 2:0, IEKEY 3 = 0, RTYPE 15:8 */
	c->cdw10 = (uint32_t)act | (uint32_t)AGENT_NVME_RTYPE_WRITE_EXCLUSIVE << 8;
	put_le64(c->data, crkey);
	put_le64(c->data + 8, prkey);
	c->data_len = 16;
}

void agent_nvme_cmd_release(struct agent_nvme_cmd *c, uint64_t crkey)
{
	memset(c, 0, sizeof(*c));
	c->opcode = AGENT_NVME_OP_RESV_RELEASE;
	/* RRELA 2:0 = 0 (release), RTYPE 15:8 */
	c->cdw10 = (uint32_t)AGENT_NVME_RTYPE_WRITE_EXCLUSIVE << 8;
	put_le64(c->data, crkey);
	c->data_len = 8;
}

void agent_nvme_cmd_report(struct agent_nvme_cmd *c, uint32_t len)
{
	memset(c, 0, sizeof(*c));
	c->opcode = AGENT_NVME_OP_RESV_REPORT;
	c->cdw10 = len / 4 - 1; /* NUMD, 0's based */
	c->cdw11 = 1;           /* EDS: 128-bit host identifiers, as fabrics require */
}

int agent_nvme_resv_parse(const uint8_t *buf, size_t len, struct agent_nvme_resv *out)
{
	struct agent_nvme_resv r;
	unsigned i, regctl;

	memset(&r, 0, sizeof(r));
	if (len < AGENT_NVME_RESV_HDR)
		return -EPROTO;
	r.gen = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 24;
	r.rtype = buf[4];
	regctl = (unsigned)buf[5] | (unsigned)buf[6] << 8;
	/* the count first: never read an entry the buffer or the cap lacks */
	if (regctl > AGENT_NVME_RESV_MAX || (len - AGENT_NVME_RESV_HDR) / AGENT_NVME_RESV_ENTRY < regctl)
		return -EPROTO;
	for (i = 0; i < regctl; i++) {
		const uint8_t *e = buf + AGENT_NVME_RESV_HDR + (size_t)i * AGENT_NVME_RESV_ENTRY;

		r.keys[i] = get_le64(e + 8);
		if ((e[2] & 1) && r.rtype != 5 && r.rtype != 6) { /* RCSTS: it holds the reservation */
			if (r.holder_key)
				return -EPROTO; /* one holder of a Write Exclusive reservation */
			r.holder_key = r.keys[i];
		}
	}
	if (r.rtype && !r.holder_key && r.rtype != 5 && r.rtype != 6)
		return -EPROTO; /* reserved, by nobody listed */
	r.nregs = regctl;
	*out = r;
	return 0;
}
