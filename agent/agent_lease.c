/* agent_lease: the disk lease's record format and state machine (pure; the
 * contract and the algorithm are in agent_lease.h). The record is written
 * big-endian, guarded by a magic, a version and an FNV-1a checksum, so a
 * torn or foreign sector is never taken for a lease.
 *
 *   0 magic "AQLEASE1"   8 version (1)   12 state   16 owner   24 gen
 *  32 counter   40 wall_ms   48 timeout_ms   52 name length   56 name[64]
 * 120 volume id[16]   136..507 zero   508 FNV-1a 32 of bytes 0..507
 */
#include "agent/agent_lease.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define LEASE_VERSION 1
#define LEASE_SUM_AT (AGENT_LEASE_REC - 4)

static uint64_t get_be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

static void put_be(uint8_t *p, uint64_t v, unsigned n)
{
	while (n--) {
		p[n] = (uint8_t)v;
		v >>= 8;
	}
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t lease_sum(const uint8_t *p)
{
	uint32_t h = 2166136261u;
	unsigned i;

	for (i = 0; i < LEASE_SUM_AT; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

int agent_lease_parse(const uint8_t *buf, size_t len, struct agent_lease_rec *out)
{
	struct agent_lease_rec r;
	uint32_t nlen, i;

	if (len < AGENT_LEASE_REC)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	for (i = 0; i < AGENT_LEASE_REC && buf[i] == 0; i++)
		;
	if (i == AGENT_LEASE_REC) {
		r.blank = 1;
		*out = r;
		return 0;
	}
	if (memcmp(buf, AGENT_LEASE_MAGIC, 8) != 0 || get_be(buf + 8, 4) != LEASE_VERSION ||
	    get_be(buf + LEASE_SUM_AT, 4) != lease_sum(buf))
		return -EPROTO;
	r.state = (enum agent_lease_state)get_be(buf + 12, 4);
	r.owner = get_be(buf + 16, 8);
	r.gen = get_be(buf + 24, 8);
	r.counter = get_be(buf + 32, 8);
	r.wall_ms = get_be(buf + 40, 8);
	r.timeout_ms = (uint32_t)get_be(buf + 48, 4);
	nlen = (uint32_t)get_be(buf + 52, 4);
	if ((r.state != AGENT_LEASE_FREE && r.state != AGENT_LEASE_HELD) || (r.state == AGENT_LEASE_HELD && !r.owner) ||
	    nlen > AGENT_LEASE_NAME_MAX)
		return -EPROTO;
	for (i = 0; i < nlen; i++) {
		if (buf[56 + i] < 0x21 || buf[56 + i] > 0x7e)
			return -EPROTO;
		r.name[i] = (char)buf[56 + i];
	}
	memcpy(r.id, buf + 120, 16);
	*out = r;
	return 0;
}

void agent_lease_encode(const struct agent_lease_rec *r, uint8_t out[AGENT_LEASE_REC])
{
	size_t nlen = strnlen(r->name, AGENT_LEASE_NAME_MAX);

	memset(out, 0, AGENT_LEASE_REC);
	memcpy(out, AGENT_LEASE_MAGIC, 8);
	put_be(out + 8, LEASE_VERSION, 4);
	put_be(out + 12, (uint64_t)r->state, 4);
	put_be(out + 16, r->owner, 8);
	put_be(out + 24, r->gen, 8);
	put_be(out + 32, r->counter, 8);
	put_be(out + 40, r->wall_ms, 8);
	put_be(out + 48, r->timeout_ms, 4);
	put_be(out + 52, nlen, 4);
	memcpy(out + 56, r->name, nlen);
	memcpy(out + 120, r->id, 16);
	put_be(out + LEASE_SUM_AT, lease_sum(out), 4);
}

int64_t agent_lease_offset(uint64_t bytes)
{
	if (bytes < 16u * AGENT_LEASE_AREA || bytes > (uint64_t)INT64_MAX)
		return -ENOSPC;
	return (int64_t)((bytes - AGENT_LEASE_AREA) & ~(uint64_t)4095);
}

int64_t agent_lease_ext4_bytes(const uint8_t *sb, size_t len)
{
	uint64_t blocks;
	uint32_t log;

	/* the superblock's fields we read end at s_blocks_count_hi (0x150) */
	if (len < 0x154 || sb[56] != 0x53 || sb[57] != 0xef)
		return -EPROTO;
	log = get_le32(sb + 24);
	if (log > 6) /* blocks of 1 KiB << log: at most 64 KiB */
		return -EPROTO;
	blocks = get_le32(sb + 4);
	if (get_le32(sb + 96) & 0x80) /* INCOMPAT_64BIT */
		blocks |= (uint64_t)get_le32(sb + 0x150) << 32;
	if (blocks >> (62 - 10 - log))
		return -EPROTO;
	return (int64_t)(blocks << (10 + log));
}

void agent_lease_init(struct agent_lease *l, uint64_t me, const char *name, const uint8_t id[16])
{
	memset(l, 0, sizeof(*l));
	l->me = me;
	snprintf(l->name, sizeof(l->name), "%s", name);
	memcpy(l->id, id, 16);
	l->renew_ms = AGENT_LEASE_RENEW_MS;
	l->expire_ms = AGENT_LEASE_EXPIRE_MS;
	l->timeout_ms = AGENT_LEASE_TIMEOUT_MS;
	l->settle_ms = AGENT_LEASE_SETTLE_MS;
}

void agent_lease_set_timeout(struct agent_lease *l, unsigned timeout_ms)
{
	l->timeout_ms = timeout_ms;
	l->renew_ms = timeout_ms / 5;
	l->expire_ms = timeout_ms / 5 * 3;
	l->settle_ms = timeout_ms / 10;
}

/* Our record: held, or (release) free. */
static void lease_ours(const struct agent_lease *l, enum agent_lease_state st, uint8_t out[AGENT_LEASE_REC])
{
	struct agent_lease_rec r;

	memset(&r, 0, sizeof(r));
	r.state = st;
	r.owner = l->me;
	r.gen = l->gen;
	r.counter = l->counter;
	r.timeout_ms = l->timeout_ms;
	snprintf(r.name, sizeof(r.name), "%s", l->name);
	memcpy(r.id, l->id, 16);
	agent_lease_encode(&r, out);
}

static int lease_same(const struct agent_lease_rec *a, const struct agent_lease_rec *b)
{
	return a->state == b->state && a->owner == b->owner && a->gen == b->gen && a->counter == b->counter;
}

int agent_lease_acquire_step(struct agent_lease *l, uint64_t now, const uint8_t *buf, size_t len,
			     uint8_t out[AGENT_LEASE_REC], unsigned *wait_ms)
{
	struct agent_lease_rec r;
	uint64_t left;
	int rc;

	if ((rc = agent_lease_parse(buf, len, &r)) != 0)
		return rc;
	if (!r.blank && memcmp(r.id, l->id, 16) != 0)
		return -EXDEV;
	if (l->phase == AGENT_LEASE_CONFIRM) {
		if (!r.blank && r.state == AGENT_LEASE_HELD && r.owner == l->me && r.gen == l->gen &&
		    r.counter == l->counter) {
			l->phase = AGENT_LEASE_OWNED;
			l->ok = l->since; /* the write began then: the expiry counts from there */
			return AGENT_LEASE_ACT_DONE;
		}
		l->phase = AGENT_LEASE_IDLE; /* another taker wrote after us */
		return -EBUSY;
	}
	if (!r.blank && r.state == AGENT_LEASE_HELD && r.owner != l->me) {
		if (l->phase != AGENT_LEASE_WATCH || !lease_same(&r, &l->seen)) {
			l->phase = AGENT_LEASE_WATCH; /* (again): the owner is alive, or a new one came */
			l->seen = r;
			l->since = now;
		}
		if (now - l->since < l->timeout_ms) {
			left = l->since + l->timeout_ms - now;
			*wait_ms = (unsigned)(left < l->renew_ms / 2 ? left : l->renew_ms / 2);
			return AGENT_LEASE_ACT_WAIT;
		}
	}
	/* free, blank, ours from before a restart, or an owner silent for the timeout */
	l->gen = r.blank ? 1 : r.gen + 1;
	l->counter = 0;
	l->phase = AGENT_LEASE_CONFIRM;
	l->since = now;
	l->lost_to = 0;
	lease_ours(l, AGENT_LEASE_HELD, out);
	*wait_ms = l->settle_ms;
	return AGENT_LEASE_ACT_WRITE;
}

static int lease_lose(struct agent_lease *l, uint64_t to)
{
	l->phase = AGENT_LEASE_LOST;
	l->lost_to = to;
	return -ESTALE;
}

static int lease_expired(const struct agent_lease *l, uint64_t now)
{
	return now < l->ok || now - l->ok > l->expire_ms;
}

int agent_lease_renew_step(struct agent_lease *l, uint64_t start, const uint8_t *buf, size_t len,
			   uint8_t out[AGENT_LEASE_REC])
{
	struct agent_lease_rec r;

	if (l->phase != AGENT_LEASE_OWNED)
		return -ESTALE;
	if (lease_expired(l, start))
		return lease_lose(l, 0);
	if (agent_lease_parse(buf, len, &r) != 0 || r.blank || memcmp(r.id, l->id, 16) != 0)
		return lease_lose(l, 0); /* the area was overwritten: we cannot prove it is ours */
	if (!(r.owner == l->me && r.gen == l->gen && r.state == AGENT_LEASE_HELD) && r.gen >= l->gen)
		return lease_lose(l, r.owner);
	/* ours, or an older generation's stale write (a fenced owner's last renewal): ours again */
	l->counter++;
	lease_ours(l, AGENT_LEASE_HELD, out);
	return AGENT_LEASE_ACT_WRITE;
}

int agent_lease_renewed(struct agent_lease *l, uint64_t start, uint64_t now)
{
	if (l->phase != AGENT_LEASE_OWNED)
		return -ESTALE;
	if (lease_expired(l, now))
		return lease_lose(l, 0);
	l->ok = start;
	return 0;
}

int agent_lease_renew_failed(struct agent_lease *l, uint64_t now)
{
	if (l->phase != AGENT_LEASE_OWNED)
		return -ESTALE;
	return lease_expired(l, now) ? lease_lose(l, 0) : 0;
}

int agent_lease_valid(const struct agent_lease *l, uint64_t now)
{
	return l->phase == AGENT_LEASE_OWNED && !lease_expired(l, now);
}

void agent_lease_release_rec(struct agent_lease *l, uint8_t out[AGENT_LEASE_REC])
{
	l->counter++;
	lease_ours(l, AGENT_LEASE_FREE, out);
	l->phase = AGENT_LEASE_IDLE;
}
