/* Unit tests for agent/agent_lease.c, the disk lease of fence=lease (issue
 * 24): the record's format (every refusal), where the area lies and the
 * ext4 size check, and the state machine driven against a file standing in
 * for the namespace, with a clock the test advances: a blank area, a live
 * owner that keeps a taker waiting for ever, a take-over after the owner
 * went silent (and the old owner, partitioned, that comes back: it finds
 * itself fenced and writes nothing; one whose renewal was stopped between
 * its read and its write: its late write is overwritten), two takers
 * racing, a release, a restart of the same node, foreign bytes refused. */
#include "agent/agent_lease.h"
#include "agent/agent_shelf_lease.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/aqt.h"

static const uint8_t VOL[16] = { 'A', 'Q', 'F', 'R', 0, 1, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78 };
#define A_ID 0xa1a1a1a1ull
#define B_ID 0xb2b2b2b2ull

static int dev_open(void)
{
	char path[] = "/tmp/aq_lease_XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(ftruncate(fd, AGENT_LEASE_REC), 0); /* a blank area */
	return fd;
}

static void dev_read(int fd, uint8_t *buf)
{
	ck_assert_int_eq(pread(fd, buf, AGENT_LEASE_REC, 0), AGENT_LEASE_REC);
}

static void dev_write(int fd, const uint8_t *buf)
{
	ck_assert_int_eq(pwrite(fd, buf, AGENT_LEASE_REC, 0), AGENT_LEASE_REC);
}

static struct agent_lease_rec dev_rec(int fd)
{
	uint8_t buf[AGENT_LEASE_REC];
	struct agent_lease_rec r;

	dev_read(fd, buf);
	ck_assert_int_eq(agent_lease_parse(buf, sizeof(buf), &r), 0);
	return r;
}

/* Put the checksum back after a test changed a byte (FNV-1a 32 of 0..507). */
static void resum(uint8_t *p)
{
	uint32_t h = 2166136261u;
	unsigned i;

	for (i = 0; i < AGENT_LEASE_REC - 4; i++)
		h = (h ^ p[i]) * 16777619u;
	for (i = 0; i < 4; i++)
		p[AGENT_LEASE_REC - 1 - i] = (uint8_t)(h >> (8 * i));
}

/* One acquire step against the device at *now: writes what it asks and
 * advances *now by the wait it names. Returns the step's answer. */
static int step(struct agent_lease *l, int fd, uint64_t *now)
{
	uint8_t in[AGENT_LEASE_REC], out[AGENT_LEASE_REC];
	unsigned wait = 0;
	int rc;

	dev_read(fd, in);
	rc = agent_lease_acquire_step(l, *now, in, sizeof(in), out, &wait);
	if (rc == AGENT_LEASE_ACT_WRITE)
		dev_write(fd, out);
	if (rc == AGENT_LEASE_ACT_WRITE || rc == AGENT_LEASE_ACT_WAIT)
		*now += wait;
	return rc;
}

/* Acquire to the end (no other node moves meanwhile). */
static int acquire(struct agent_lease *l, int fd, uint64_t *now)
{
	int rc, i;

	for (i = 0; i < 1000; i++)
		if ((rc = step(l, fd, now)) != AGENT_LEASE_ACT_WAIT && rc != AGENT_LEASE_ACT_WRITE)
			return rc;
	ck_abort_msg("acquire did not end");
	return 0;
}

/* One renewal at now taking io_ms: read, step, write, renewed. */
static int renew(struct agent_lease *l, int fd, uint64_t now, unsigned io_ms)
{
	uint8_t in[AGENT_LEASE_REC], out[AGENT_LEASE_REC];
	int rc;

	dev_read(fd, in);
	if ((rc = agent_lease_renew_step(l, now, in, sizeof(in), out)) != AGENT_LEASE_ACT_WRITE)
		return rc;
	dev_write(fd, out);
	return agent_lease_renewed(l, now, now + io_ms);
}

START_TEST(test_format)
{
	struct agent_lease_rec r = { .state = AGENT_LEASE_HELD, .owner = A_ID, .gen = 7, .counter = 99,
				     .wall_ms = 123456, .timeout_ms = 10000, .name = "node-a" }, p;
	uint8_t buf[AGENT_LEASE_REC + 8], bad[AGENT_LEASE_REC];

	memcpy(r.id, VOL, 16);
	agent_lease_encode(&r, buf);
	ck_assert_int_eq(agent_lease_parse(buf, AGENT_LEASE_REC, &p), 0);
	ck_assert_int_eq(p.blank, 0);
	ck_assert_int_eq(p.state, AGENT_LEASE_HELD);
	ck_assert_uint_eq(p.owner, A_ID);
	ck_assert_uint_eq(p.gen, 7);
	ck_assert_uint_eq(p.counter, 99);
	ck_assert_uint_eq(p.wall_ms, 123456);
	ck_assert_uint_eq(p.timeout_ms, 10000);
	ck_assert_str_eq(p.name, "node-a");
	ck_assert_mem_eq(p.id, VOL, 16);
	ck_assert(memcmp(buf, AGENT_LEASE_MAGIC, 8) == 0);

	memset(bad, 0, sizeof(bad));
	ck_assert_int_eq(agent_lease_parse(bad, sizeof(bad), &p), 0);
	ck_assert_int_eq(p.blank, 1);
	ck_assert_int_eq(agent_lease_parse(buf, AGENT_LEASE_REC - 1, &p), -EINVAL);

	/* each refusal leaves out untouched */
	memcpy(bad, buf, sizeof(bad)); bad[0] = 'X'; resum(bad); /* magic */
	memset(&p, 0x5a, sizeof(p));
	ck_assert_int_eq(agent_lease_parse(bad, sizeof(bad), &p), -EPROTO);
	ck_assert_uint_eq(p.owner, 0x5a5a5a5a5a5a5a5aull);
	memcpy(bad, buf, sizeof(bad)); bad[60] ^= 1;           /* a torn or changed byte: checksum */
	ck_assert_int_eq(agent_lease_parse(bad, sizeof(bad), &p), -EPROTO);
	memcpy(bad, buf, sizeof(bad)); bad[300] = 1;           /* even in the zero tail */
	ck_assert_int_eq(agent_lease_parse(bad, sizeof(bad), &p), -EPROTO);

	r.state = (enum agent_lease_state)2;                    /* an unknown state */
	agent_lease_encode(&r, bad);
	ck_assert_int_eq(agent_lease_parse(bad, sizeof(bad), &p), -EPROTO);
	r.state = AGENT_LEASE_HELD; r.owner = 0;                /* held by nobody */
	agent_lease_encode(&r, bad);
	ck_assert_int_eq(agent_lease_parse(bad, sizeof(bad), &p), -EPROTO);
	r.owner = A_ID; strcpy(r.name, "a b");                  /* a name that is not printable text */
	agent_lease_encode(&r, bad);
	ck_assert_int_eq(agent_lease_parse(bad, sizeof(bad), &p), -EPROTO);
	strcpy(r.name, "node-a");
	agent_lease_encode(&r, bad);                            /* a name longer than its field */
	bad[55] = AGENT_LEASE_NAME_MAX + 1;
	resum(bad);
	ck_assert_int_eq(agent_lease_parse(bad, sizeof(bad), &p), -EPROTO);
	agent_lease_encode(&r, bad);                            /* another version */
	bad[11] = 2;
	resum(bad);
	ck_assert_int_eq(agent_lease_parse(bad, sizeof(bad), &p), -EPROTO);
}
END_TEST

START_TEST(test_area)
{
	uint8_t sb[1024];

	ck_assert_int_eq(agent_lease_offset(1ull << 30), (1ll << 30) - (1 << 20));
	ck_assert_int_eq(agent_lease_offset((1ull << 30) + 512), (1ll << 30) - (1 << 20)); /* 4 KiB aligned */
	ck_assert_int_eq(agent_lease_offset(8u << 20), -ENOSPC);

	memset(sb, 0, sizeof(sb));
	ck_assert_int_eq(agent_lease_ext4_bytes(sb, sizeof(sb)), -EPROTO); /* no magic */
	sb[56] = 0x53; sb[57] = 0xef;
	sb[4] = 0x00; sb[5] = 0x01;                              /* 256 blocks */
	sb[24] = 2;                                              /* of 4 KiB */
	ck_assert_int_eq(agent_lease_ext4_bytes(sb, sizeof(sb)), 256 * 4096);
	sb[0x150] = 1;                                           /* the high half counts only with 64bit */
	ck_assert_int_eq(agent_lease_ext4_bytes(sb, sizeof(sb)), 256 * 4096);
	sb[96] = 0x80;
	ck_assert_int_eq(agent_lease_ext4_bytes(sb, sizeof(sb)), ((1ll << 32) + 256) * 4096);
	ck_assert_int_eq(agent_lease_ext4_bytes(sb, 0x153), -EPROTO); /* short */
	sb[24] = 7;                                              /* 128 KiB blocks do not exist */
	ck_assert_int_eq(agent_lease_ext4_bytes(sb, sizeof(sb)), -EPROTO);
	sb[24] = 6; sb[0x153] = 0xff;                            /* a size past 2^62 */
	ck_assert_int_eq(agent_lease_ext4_bytes(sb, sizeof(sb)), -EPROTO);
}
END_TEST

START_TEST(test_blank)
{
	struct agent_lease a;
	uint64_t now = 1000;
	int fd = dev_open();

	agent_lease_init(&a, A_ID, "node-a", VOL);
	ck_assert_int_eq(step(&a, fd, &now), AGENT_LEASE_ACT_WRITE); /* blank: no wait */
	ck_assert_uint_eq(now, 1000 + AGENT_LEASE_SETTLE_MS);
	ck_assert_int_eq(agent_lease_valid(&a, now), 0);            /* not before the confirm */
	ck_assert_int_eq(step(&a, fd, &now), AGENT_LEASE_ACT_DONE);
	ck_assert_int_eq(agent_lease_valid(&a, now), 1);
	ck_assert_uint_eq(dev_rec(fd).owner, A_ID);
	ck_assert_uint_eq(dev_rec(fd).gen, 1);
	ck_assert_str_eq(dev_rec(fd).name, "node-a");
	/* renewals bump the counter; without them the lease expires */
	ck_assert_int_eq(renew(&a, fd, now + 2000, 10), 0);
	ck_assert_uint_eq(dev_rec(fd).counter, 1);
	ck_assert_int_eq(agent_lease_valid(&a, now + 2000 + AGENT_LEASE_EXPIRE_MS), 1);
	ck_assert_int_eq(agent_lease_valid(&a, now + 2001 + AGENT_LEASE_EXPIRE_MS), 0);
	/* a renewal that begins past the expiry writes nothing, even over its own record */
	{
		uint8_t in[AGENT_LEASE_REC], out[AGENT_LEASE_REC];

		dev_read(fd, in);
		ck_assert_int_eq(agent_lease_renew_step(&a, now + 2001 + AGENT_LEASE_EXPIRE_MS, in, sizeof(in), out), -ESTALE);
		ck_assert_int_eq(a.phase, AGENT_LEASE_LOST);
		ck_assert_uint_eq(a.lost_to, 0);
		ck_assert_uint_eq(dev_rec(fd).counter, 1);
	}
	close(fd);
}
END_TEST

/* A live owner keeps a taker waiting however long it tries. */
START_TEST(test_owner_alive)
{
	struct agent_lease a, b;
	uint64_t now = 0, next_renew, t;
	int fd = dev_open(), rc;

	agent_lease_init(&a, A_ID, "node-a", VOL);
	agent_lease_init(&b, B_ID, "node-b", VOL);
	ck_assert_int_eq(acquire(&a, fd, &now), AGENT_LEASE_ACT_DONE);
	next_renew = now + AGENT_LEASE_RENEW_MS;
	for (t = now; t < now + 60000;) {
		if (t >= next_renew) {
			ck_assert_int_eq(renew(&a, fd, t, 50), 0);
			next_renew = t + AGENT_LEASE_RENEW_MS;
		}
		rc = step(&b, fd, &t);
		ck_assert_int_eq(rc, AGENT_LEASE_ACT_WAIT);
		ck_assert_int_eq(b.phase, AGENT_LEASE_WATCH);
	}
	ck_assert_uint_eq(dev_rec(fd).owner, A_ID);
	ck_assert_int_eq(agent_lease_valid(&a, t), 1);
	close(fd);
}
END_TEST

/* The owner is partitioned (no I/O, its clock runs on); the taker takes
 * the lease after the timeout, by which time the owner already counted it
 * lost; when the owner comes back it finds itself fenced and writes nothing. */
START_TEST(test_takeover_partitioned)
{
	struct agent_lease a, b;
	uint8_t in[AGENT_LEASE_REC], out[AGENT_LEASE_REC];
	uint64_t now = 0, last_a, tb;
	int fd = dev_open(), rc;

	agent_lease_init(&a, A_ID, "node-a", VOL);
	agent_lease_init(&b, B_ID, "node-b", VOL);
	ck_assert_int_eq(acquire(&a, fd, &now), AGENT_LEASE_ACT_DONE);
	ck_assert_int_eq(renew(&a, fd, now + 2000, 20), 0);
	last_a = now + 2000; /* A's last renewal began here; then the partition */
	tb = last_a + 500;
	do {
		uint64_t before = tb;

		rc = step(&b, fd, &tb);
		if (rc == AGENT_LEASE_ACT_WRITE) {
			/* the moment B writes: the silence lasted the timeout, A stopped serving before */
			ck_assert_uint_ge(before, last_a + AGENT_LEASE_TIMEOUT_MS);
			ck_assert_int_eq(agent_lease_valid(&a, before), 0);
		}
	} while (rc == AGENT_LEASE_ACT_WAIT);
	ck_assert_int_eq(rc, AGENT_LEASE_ACT_WRITE);
	ck_assert_int_eq(step(&b, fd, &tb), AGENT_LEASE_ACT_DONE);
	ck_assert_uint_eq(dev_rec(fd).owner, B_ID);
	ck_assert_uint_eq(dev_rec(fd).gen, 2);
	ck_assert_uint_le(tb - last_a, AGENT_LEASE_TIMEOUT_MS + 500 + AGENT_LEASE_RENEW_MS / 2 + AGENT_LEASE_SETTLE_MS);

	/* A comes back: its renewal finds the lease expired, and writes nothing */
	dev_read(fd, in);
	ck_assert_int_eq(agent_lease_renew_step(&a, tb + 1000, in, sizeof(in), out), -ESTALE);
	ck_assert_int_eq(a.phase, AGENT_LEASE_LOST);
	ck_assert_int_eq(agent_lease_valid(&a, tb + 1000), 0);
	ck_assert_uint_eq(dev_rec(fd).owner, B_ID);
	close(fd);
}
END_TEST

/* A reads its record, stops (SIGSTOP) before writing, and writes it late
 * over B's: the write does not count for A (LOST), and B's next renewal
 * puts its own record back (a lower generation is a fenced owner's). */
START_TEST(test_stopped_mid_renewal)
{
	struct agent_lease a, b;
	uint8_t in[AGENT_LEASE_REC], late[AGENT_LEASE_REC];
	uint64_t now = 0, t0, tb;
	int fd = dev_open();

	agent_lease_init(&a, A_ID, "node-a", VOL);
	agent_lease_init(&b, B_ID, "node-b", VOL);
	ck_assert_int_eq(acquire(&a, fd, &now), AGENT_LEASE_ACT_DONE);
	t0 = now + 2000;
	dev_read(fd, in);
	ck_assert_int_eq(agent_lease_renew_step(&a, t0, in, sizeof(in), late), AGENT_LEASE_ACT_WRITE);
	/* A is stopped here; B takes over */
	tb = t0 + 100;
	ck_assert_int_eq(acquire(&b, fd, &tb), AGENT_LEASE_ACT_DONE);
	/* A continues: its write lands, but it came past the expiry */
	dev_write(fd, late);
	ck_assert_int_eq(agent_lease_renewed(&a, t0, tb + 5), -ESTALE);
	ck_assert_int_eq(a.phase, AGENT_LEASE_LOST);
	ck_assert_uint_eq(dev_rec(fd).owner, A_ID);
	ck_assert_int_eq(renew(&b, fd, tb + 2000, 10), 0);
	ck_assert_uint_eq(dev_rec(fd).owner, B_ID);
	ck_assert_uint_eq(dev_rec(fd).gen, 2);
	ck_assert_int_eq(agent_lease_valid(&b, tb + 2010), 1);
	close(fd);
}
END_TEST

/* A partitioned owner whose renewals fail: still serving within the
 * expiry, lost after it. And an owner whose record another node took
 * (a newer generation) loses it at the next renewal, naming the taker. */
START_TEST(test_renew_failures)
{
	struct agent_lease a, b;
	uint8_t in[AGENT_LEASE_REC], out[AGENT_LEASE_REC];
	uint64_t now = 0, ok;
	int fd = dev_open();

	agent_lease_init(&a, A_ID, "node-a", VOL);
	ck_assert_int_eq(acquire(&a, fd, &now), AGENT_LEASE_ACT_DONE);
	ok = a.ok;
	ck_assert_int_eq(agent_lease_renew_failed(&a, ok + 3000), 0);
	ck_assert_int_eq(agent_lease_valid(&a, ok + 3000), 1);
	ck_assert_int_eq(agent_lease_renew_failed(&a, ok + AGENT_LEASE_EXPIRE_MS + 1), -ESTALE);
	ck_assert_int_eq(a.phase, AGENT_LEASE_LOST);
	ck_assert_int_eq(renew(&a, fd, ok + 7000, 1), -ESTALE); /* lost stays lost */

	/* B wrote a newer generation while A still thought itself the owner */
	agent_lease_init(&a, A_ID, "node-a", VOL);
	agent_lease_init(&b, B_ID, "node-b", VOL);
	now = 100000;
	ck_assert_int_eq(acquire(&a, fd, &now), AGENT_LEASE_ACT_DONE);
	{
		struct agent_lease_rec r = { .state = AGENT_LEASE_HELD, .owner = B_ID, .gen = a.gen + 1, .name = "node-b" };

		memcpy(r.id, VOL, 16);
		agent_lease_encode(&r, out);
		dev_write(fd, out);
	}
	dev_read(fd, in);
	ck_assert_int_eq(agent_lease_renew_step(&a, now + 100, in, sizeof(in), out), -ESTALE);
	ck_assert_uint_eq(a.lost_to, B_ID);
	ck_assert_uint_eq(dev_rec(fd).owner, B_ID);
	close(fd);
}
END_TEST

/* Two takers of a blank area: the one whose write lands last wins; the
 * other sees it at the confirm read. */
START_TEST(test_race)
{
	struct agent_lease a, b;
	uint8_t blank[AGENT_LEASE_REC], wa[AGENT_LEASE_REC], wb[AGENT_LEASE_REC];
	unsigned wait;
	uint64_t ta = 0, tb = 10;
	int fd = dev_open();

	agent_lease_init(&a, A_ID, "node-a", VOL);
	agent_lease_init(&b, B_ID, "node-b", VOL);
	/* both read the blank area before either writes; B's write lands last */
	dev_read(fd, blank);
	ck_assert_int_eq(agent_lease_acquire_step(&a, ta, blank, sizeof(blank), wa, &wait), AGENT_LEASE_ACT_WRITE);
	ta += wait;
	ck_assert_int_eq(agent_lease_acquire_step(&b, tb, blank, sizeof(blank), wb, &wait), AGENT_LEASE_ACT_WRITE);
	tb += wait;
	dev_write(fd, wa);
	dev_write(fd, wb);
	ck_assert_int_eq(step(&a, fd, &ta), -EBUSY);
	ck_assert_int_eq(a.phase, AGENT_LEASE_IDLE);
	ck_assert_int_eq(step(&b, fd, &tb), AGENT_LEASE_ACT_DONE);
	ck_assert_uint_eq(dev_rec(fd).owner, B_ID);
	close(fd);
}
END_TEST

/* A release lets a taker in at once; a restarted node takes its own
 * record back at once, one generation up. */
START_TEST(test_release_restart)
{
	struct agent_lease a, b, a2;
	uint8_t out[AGENT_LEASE_REC];
	uint64_t now = 0, t;
	int fd = dev_open();

	agent_lease_init(&a, A_ID, "node-a", VOL);
	agent_lease_init(&b, B_ID, "node-b", VOL);
	agent_lease_init(&a2, A_ID, "node-a", VOL);
	ck_assert_int_eq(acquire(&a, fd, &now), AGENT_LEASE_ACT_DONE);
	agent_lease_release_rec(&a, out);
	dev_write(fd, out);
	ck_assert_int_eq(agent_lease_valid(&a, now), 0);
	ck_assert_int_eq(dev_rec(fd).state, AGENT_LEASE_FREE);
	t = now;
	ck_assert_int_eq(acquire(&b, fd, &t), AGENT_LEASE_ACT_DONE);
	ck_assert_uint_eq(t - now, AGENT_LEASE_SETTLE_MS); /* no timeout waited */
	ck_assert_uint_eq(dev_rec(fd).gen, 2);

	/* B's node restarts: its new agent takes its own record at once */
	agent_lease_init(&b, B_ID, "node-b", VOL);
	now = t;
	ck_assert_int_eq(acquire(&b, fd, &t), AGENT_LEASE_ACT_DONE);
	ck_assert_uint_eq(t - now, AGENT_LEASE_SETTLE_MS);
	ck_assert_uint_eq(dev_rec(fd).gen, 3);
	/* A (not restarted: another node) must wait the timeout */
	now = t;
	ck_assert_int_eq(step(&a2, fd, &t), AGENT_LEASE_ACT_WAIT);
	close(fd);
}
END_TEST

/* Bytes that are not a lease (a file system reaching into the area), or
 * another volume's record: refused, never written over. */
START_TEST(test_foreign)
{
	struct agent_lease a;
	struct agent_lease_rec r = { .state = AGENT_LEASE_HELD, .owner = B_ID, .gen = 1, .name = "x" };
	uint8_t junk[AGENT_LEASE_REC], in[AGENT_LEASE_REC], out[AGENT_LEASE_REC];
	uint64_t now = 0;
	unsigned wait = 0;
	int fd = dev_open();

	agent_lease_init(&a, A_ID, "node-a", VOL);
	memset(junk, 0xe5, sizeof(junk));
	dev_write(fd, junk);
	ck_assert_int_eq(step(&a, fd, &now), -EPROTO);
	dev_read(fd, in);
	ck_assert_mem_eq(in, junk, sizeof(junk));
	memset(r.id, 0x77, 16);
	agent_lease_encode(&r, out);
	dev_write(fd, out);
	memset(out, 0, sizeof(out));
	dev_read(fd, in);
	ck_assert_int_eq(agent_lease_acquire_step(&a, now, in, sizeof(in), out, &wait), -EXDEV);
	ck_assert_int_eq(a.phase, AGENT_LEASE_IDLE);
	close(fd);
}
END_TEST

/* Every timing follows the lease timeout (lease=SECONDS), the defaults are 10 s's. */
START_TEST(test_timeout)
{
	struct agent_lease a, d;
	uint64_t now = 0, t;
	int fd = dev_open();

	agent_lease_init(&d, A_ID, "node-a", VOL);
	agent_lease_init(&a, A_ID, "node-a", VOL);
	agent_lease_set_timeout(&a, 10000);
	ck_assert_uint_eq(a.renew_ms, d.renew_ms);
	ck_assert_uint_eq(a.expire_ms, d.expire_ms);
	ck_assert_uint_eq(a.settle_ms, d.settle_ms);
	agent_lease_set_timeout(&a, 30000);
	ck_assert_uint_eq(a.timeout_ms, 30000);
	ck_assert_uint_eq(a.renew_ms, 6000);
	ck_assert_uint_eq(a.expire_ms, 18000);
	ck_assert_uint_eq(a.settle_ms, 3000);
	ck_assert_int_eq(acquire(&a, fd, &now), AGENT_LEASE_ACT_DONE);
	ck_assert_uint_eq(now, 3000);
	ck_assert_int_eq(agent_lease_valid(&a, a.ok + 18000), 1);
	ck_assert_int_eq(agent_lease_valid(&a, a.ok + 18001), 0);
	/* a taker with the same timeout waits 30 s of silence */
	agent_lease_init(&d, B_ID, "node-b", VOL);
	agent_lease_set_timeout(&d, 30000);
	t = now;
	ck_assert_int_eq(acquire(&d, fd, &t), AGENT_LEASE_ACT_DONE);
	ck_assert_uint_ge(t - now, 30000);
	close(fd);
}
END_TEST

/* The shelf layer over a loop device: a take watching another node's live
 * record gives up at once when the agent stops (agent_shelf_lease_quit),
 * rather than after a lease timeout or three. Needs root and a loop
 * device (as the snapshot suites do); says so and checks nothing without. */
struct take_arg {
	struct agent_shelf_leases *ls;
	const char *dev;
	int rc;
};

static void *take_thread(void *p)
{
	struct take_arg *t = p;

	t->rc = agent_shelf_lease_take(t->ls, "00aa", t->dev, VOL, "/nonexistent/aq-lease-mp");
	return NULL;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(test_quit_stops_a_taker)
{
	char img[] = "/tmp/aq_lease_img_XXXXXX", cmd[256], dev[64] = "";
	struct agent_lease_rec r = { .state = AGENT_LEASE_HELD, .owner = B_ID, .gen = 1, .counter = 5,
				     .timeout_ms = 5000, .name = "node-b" };
	uint8_t buf[AGENT_LEASE_REC];
	struct take_arg t = { .rc = 1 };
	pthread_t th;
	double t0, took;
	FILE *f;
	int fd = mkstemp(img);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 16 << 20), 0);
	memcpy(r.id, VOL, 16);
	agent_lease_encode(&r, buf);
	ck_assert_int_eq(pwrite(fd, buf, sizeof(buf), agent_lease_offset(16 << 20)), (ssize_t)sizeof(buf));
	close(fd);
	snprintf(cmd, sizeof(cmd), "losetup -f --show %s 2>/dev/null", img);
	if ((f = popen(cmd, "r"))) {
		if (!fgets(dev, sizeof(dev), f))
			dev[0] = '\0';
		pclose(f);
	}
	dev[strcspn(dev, "\n")] = '\0';
	if (!dev[0]) {
		fprintf(stderr, "test_quit_stops_a_taker: no loop device (not root?): nothing checked\n");
		unlink(img);
		return;
	}
	t.ls = agent_shelf_lease_new(A_ID, "node-a", 5000, NULL, NULL);
	t.dev = dev;
	ck_assert_ptr_nonnull(t.ls);
	t0 = mono_s();
	ck_assert_int_eq(pthread_create(&th, NULL, take_thread, &t), 0);
	usleep(500 * 1000); /* the taker reads B's record and watches it */
	agent_shelf_lease_quit(t.ls);
	pthread_join(th, NULL);
	took = mono_s() - t0;
	agent_shelf_lease_free(t.ls);
	snprintf(cmd, sizeof(cmd), "losetup -d %s", dev);
	ck_assert_int_eq(system(cmd), 0);
	unlink(img);
	ck_assert_int_eq(t.rc, -ECANCELED);
	ck_assert_msg(took < 2.5, "the taker gave up %.2f s after it began (quit at 0.5 s; B's lease times out at 5 s)", took);
}
END_TEST

static Suite *lease_suite(void)
{
	Suite *s = suite_create("agent_lease");
	TCase *tc = tcase_create("lease");

	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_area);
	tcase_add_test(tc, test_blank);
	tcase_add_test(tc, test_owner_alive);
	tcase_add_test(tc, test_takeover_partitioned);
	tcase_add_test(tc, test_stopped_mid_renewal);
	tcase_add_test(tc, test_renew_failures);
	tcase_add_test(tc, test_race);
	tcase_add_test(tc, test_release_restart);
	tcase_add_test(tc, test_foreign);
	tcase_add_test(tc, test_timeout);
	tcase_add_test(tc, test_quit_stops_a_taker);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(lease_suite());
}
