/* test_smb_copy: server-side copy (agent/smb/smb_copy.c) through the
 * server's own dispatcher (smb_harness.h):
 * - FSCTL_SRV_REQUEST_RESUME_KEY answers 32 bytes (key, ContextLength 0);
 * - SRV_COPYCHUNK copies its chunks through the store (the bytes land in
 *   the destination file, past its end too), answering the counts;
 * - a key nobody was given: OBJECT_NAME_NOT_FOUND, nothing written;
 * - more than 256 chunks, an empty chunk, a chunk past 1 MiB:
 *   INVALID_PARAMETER answered with the limits (256, 1 MiB, 16 MiB),
 *   nothing written; a truncated input: INVALID_PARAMETER;
 * - a chunk past the source's end: INVALID_VIEW_SIZE with the counts of
 *   the chunks done before it;
 * - the destination must be open for writing (and, for COPYCHUNK, for
 *   reading: COPYCHUNK_WRITE does without), the source for reading:
 *   ACCESS_DENIED (FILE_EXECUTE counts as reading the source, not the
 *   destination, as in Windows and Samba); MaxOutputResponse under 12: INVALID_PARAMETER;
 * - QoS: a lone COPYCHUNK frame is charged before it is served (its bytes
 *   read and written on one volume: twice), a refused one not at all; past
 *   the volume's budget it is parked and handed back when the budget is there;
 * - capacity: a copy whose growth does not fit the volume's free space is
 *   DISK_FULL before a byte is copied;
 * - FSCTL_DUPLICATE_EXTENTS_TO_FILE (block cloning) is not served: a
 *   well-formed one naming an open source is INVALID_DEVICE_REQUEST (as
 *   Windows without block cloning and smbd on ext4), nothing written.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define ALL_ACCESS 0x001F01FFu
#define READ_ONLY (0x1u | 0x80u)
#define WRITE_ONLY (0x2u | 0x4u | 0x100u)

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;
static const struct vol_cred root_cred = { .uid = 0, .gid = 0 };
static uint8_t frame_buf[512];

static void setup(void)
{
	smbt_export_up(&ts, &srv, &exp0);
}

static void teardown(void)
{
	smbt_export_down(&ts, srv, exp0);
}

static void conn_new(struct smbt_conn *tc)
{
	smbt_conn_export(tc, srv, &ts, 1, 0);
}

/* CREATE name (OPEN_IF) with access: its FileId. */
static uint64_t open_file(struct smbt_conn *tc, const char *name, uint32_t access)
{
	uint64_t fid = 0;
	uint32_t attrs;

	ck_assert_uint_eq(smbl_open(tc, name, false, access, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	return fid;
}

static void resume_key(struct smbt_conn *tc, uint64_t fid, uint8_t key[24])
{
	struct smbt_fsctl_rsp r;

	smbt_fsctl(tc, fid, FSCTL_SRV_REQUEST_RESUME_KEY, NULL, 0, 32, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.out_len, 32);
	ck_assert_uint_eq(smb_wire_get_u32(r.out + 24), 0); /* ContextLength */
	memcpy(key, r.out, 24);
}

/* A SRV_COPYCHUNK_COPY of n chunks {src, dst, len} into in; its length. */
static size_t copy_req(uint8_t *in, const uint8_t key[24], uint32_t n, const uint64_t (*chunks)[3])
{
	memset(in, 0, 32 + 24 * (size_t)n);
	memcpy(in, key, 24);
	smbt_put32(in + 24, n);
	for (uint32_t i = 0; i < n; i++) {
		smbt_put64(in + 32 + 24 * i, chunks ? chunks[i][0] : 0);
		smbt_put64(in + 40 + 24 * i, chunks ? chunks[i][1] : 0);
		smbt_put32(in + 48 + 24 * i, chunks ? (uint32_t)chunks[i][2] : 1);
	}
	return 32 + 24 * (size_t)n;
}

static void expect_counts(const struct smbt_fsctl_rsp *r, uint32_t status, uint32_t chunks, uint32_t bytes,
			  uint32_t total)
{
	ck_assert_uint_eq(r->status, status);
	ck_assert_uint_eq(r->out_len, 12);
	ck_assert_uint_eq(smb_wire_get_u32(r->out), chunks);
	ck_assert_uint_eq(smb_wire_get_u32(r->out + 4), bytes);
	ck_assert_uint_eq(smb_wire_get_u32(r->out + 8), total);
}

/* The bytes of file name in the store (its size in *len). */
static void file_bytes(const char *name, uint8_t *buf, size_t cap, size_t *len)
{
	struct vol_obj root, f;
	bool eof = false;

	ck_assert_int_eq(vol_root(exp0, &root), 0);
	ck_assert_int_eq(vol_lookup(&root, &root_cred, name, strlen(name), &f), 0);
	ck_assert_int_eq(vol_read(&f, &root_cred, 0, buf, cap, len, &eof), 0);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&root);
}

/* The suites' start: the fixture up, connection a, "src" and "dst" open
 * with all access (their FileIds in *src, *dst), data (when not NULL)
 * written to src, and src's resume key in key (when not NULL). */
static void copy_up(struct smbt_conn *a, uint64_t *src, uint64_t *dst, const char *data, uint8_t key[24])
{
	setup();
	conn_new(a);
	*src = open_file(a, "src", ALL_ACCESS);
	*dst = open_file(a, "dst", ALL_ACCESS);
	if (data)
		ck_assert_uint_eq(smbl_write(a, *src, data), STATUS_SUCCESS);
	if (key)
		resume_key(a, *src, key);
}

START_TEST(test_copy_chunks)
{
	struct smbt_conn a;
	uint8_t key[24], in[32 + 24 * 4], got[64];
	const uint64_t chunks[2][3] = { { 0, 0, 4 }, { 4, 8, 6 } };
	struct smbt_fsctl_rsp r;
	uint64_t src, dst;
	size_t len = 0;

	copy_up(&a, &src, &dst, "abcdefghij", key);
	smbt_fsctl(&a, dst, FSCTL_SRV_COPYCHUNK, in, copy_req(in, key, 2, chunks), 12, &r);
	expect_counts(&r, STATUS_SUCCESS, 2, 0, 10);
	file_bytes("dst", got, sizeof(got), &len);
	ck_assert_uint_eq(len, 14);
	ck_assert_int_eq(memcmp(got, "abcd\0\0\0\0efghij", 14), 0);
	/* a key nobody was given */
	key[10] ^= 1;
	smbt_fsctl(&a, dst, FSCTL_SRV_COPYCHUNK, in, copy_req(in, key, 1, chunks), 12, &r);
	ck_assert_uint_eq(r.status, STATUS_OBJECT_NAME_NOT_FOUND);
	teardown();
}
END_TEST

/* A lone COPYCHUNK frame on fid (unsigned: admission reads no signature) into frame; its length. */
static size_t copy_frame(struct smbt_conn *tc, uint64_t fid, const uint8_t *in, size_t in_len, uint8_t *frame, size_t cap)
{
	struct smb_wire_hdr h = { .command = SMB2_IOCTL, .tree_id = tc->t->id, .message_id = 99,
				  .session_id = tc->s->id, .credit_charge = 1, .credits = 1 };
	struct ut_buf b;
	uint8_t *body = frame + SMB2_HDR_LEN;

	ck_assert_uint_le(SMB2_HDR_LEN + 56 + in_len, cap);
	ut_buf_init(&b, SMB2_HDR_LEN);
	smb_wire_hdr_encode(&b, &h);
	ck_assert_int_eq(b.err, AQ_OK);
	memcpy(frame, ut_buf_bytes(&b), SMB2_HDR_LEN);
	ut_buf_cleanup(&b);
	memset(body, 0, 56);
	smbt_put16(body, 57);
	smbt_put32(body + 4, FSCTL_SRV_COPYCHUNK_WRITE);
	smbt_put64(body + 8, fid);
	smbt_put64(body + 16, fid);
	smbt_put32(body + 24, SMB2_HDR_LEN + 56);
	smbt_put32(body + 28, (uint32_t)in_len);
	smbt_put32(body + 44, 12);
	smbt_put32(body + 48, 1);
	memcpy(body + 56, in, in_len);
	return SMB2_HDR_LEN + 56 + in_len;
}

static uint64_t admitted(void)
{
	struct qos_stats st;

	qos_vol_stats(exp0->acct->qos, qos_now(ts.store->qos), &st);
	return st.admitted_bytes;
}

static void released(void *arg, struct qos_item *it)
{
	(void)it;
	*(int *)arg += 1;
}

/* QoS: a COPYCHUNK is charged before it is served, its bytes as read and
 * as written (one volume: twice), a refused one nothing; past the
 * volume's budget it is parked like a WRITE. */
START_TEST(test_qos)
{
	struct smbt_conn a;
	uint8_t key[24], in[32 + 24 * 4], frame[512];
	const uint64_t chunks[2][3] = { { 0, 0, 4 }, { 4, 8, 6 } }, big[1][3] = { { 0, 0, 1u << 20 } },
		       empty[1][3] = { { 0, 0, 0 } };
	struct qos_limits lim = { .bytes_per_s = 1u << 20 };
	uint64_t src, dst, before;
	size_t n;
	int rel = 0;

	copy_up(&a, &src, &dst, NULL, key);
	before = admitted();
	n = copy_frame(&a, dst, in, copy_req(in, key, 2, chunks), frame, sizeof(frame));
	ck_assert_int_eq(smb_dispatch_admit(a.c, frame, n), QOS_ADMIT);
	ck_assert_uint_eq(admitted() - before, 2 * 10);
	/* refused by the handler (an empty chunk): not charged */
	before = admitted();
	n = copy_frame(&a, dst, in, copy_req(in, key, 1, empty), frame, sizeof(frame));
	ck_assert_int_eq(smb_dispatch_admit(a.c, frame, n), QOS_ADMIT);
	ck_assert_uint_eq(admitted(), before);
	/* 1 MiB/s (a 100 ms bucket): a 1 MiB copy (2 MiB charged) passes into
	 * debt, the next waits */
	ck_assert_int_eq(qos_vol_set(exp0->acct->qos, &lim, qos_now(ts.store->qos)), 0);
	n = copy_frame(&a, dst, in, copy_req(in, key, 1, big), frame, sizeof(frame));
	ck_assert_int_eq(smb_dispatch_admit(a.c, frame, n), QOS_ADMIT);
	ck_assert_int_eq(smb_dispatch_admit(a.c, frame, n), QOS_PARKED);
	/* handed back once the budget is there (about 2 s later) */
	ck_assert_uint_lt(qos_poll(ts.store->qos, qos_now(ts.store->qos), released, &rel), UINT64_MAX);
	ck_assert_int_eq(rel, 0);
	qos_poll(ts.store->qos, qos_now(ts.store->qos) + 10000000000ull, released, &rel);
	ck_assert_int_eq(rel, 1);
	teardown();
}
END_TEST

/* A copy from an open on another share's volume (the same user's other
 * session): charged on both volumes, the destination's first, and parked
 * while either is over its limit; served (its chunks copied across) once
 * both admitted it. */
START_TEST(test_qos_two_volumes)
{
	struct smbt_conn a, b;
	uint8_t key[24], in[32 + 24], got[64];
	const uint64_t big[1][3] = { { 0, 0, 1u << 20 } };
	struct qos_limits lim = { .bytes_per_s = 1u << 20 };
	struct vol_export *exp1;
	struct qos_stats s0, s1;
	uint64_t src, dst, a0, a1;
	size_t n, len = 0;
	int rel = 0;

	aqt_store_init(&ts, 2, &(struct aqt_store_spec){ .id_prefix = "vol", .fsid = 100, .capacity = 1ull << 30,
							 .clients = "0.0.0.0/0", .key_byte = 1 });
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, ts.n), 0);
	smbt_srv_new(ts.store, &srv);
	ck_assert_ptr_nonnull(exp0 = vol_export_at(ts.store, 0));
	ck_assert_ptr_nonnull(exp1 = vol_export_at(ts.store, 1));
	conn_new(&a); /* volume 0: the destination */
	smbt_conn_new(&b, srv, 2, 0);
	ck_assert_ptr_nonnull(b.t->exp = vol_export_at(ts.store, 1)); /* volume 1: the source */
	src = open_file(&b, "src", ALL_ACCESS);
	ck_assert_uint_eq(smbl_write(&b, src, "cross-volume"), STATUS_SUCCESS);
	resume_key(&b, src, key);
	dst = open_file(&a, "dst", ALL_ACCESS);
	/* the source's volume limited, the destination's not */
	ck_assert_int_eq(qos_vol_set(exp1->acct->qos, &lim, qos_now(ts.store->qos)), 0);
	qos_vol_stats(exp0->acct->qos, qos_now(ts.store->qos), &s0);
	qos_vol_stats(exp1->acct->qos, qos_now(ts.store->qos), &s1);
	a0 = s0.admitted_bytes;
	a1 = s1.admitted_bytes;
	n = copy_frame(&a, dst, in, copy_req(in, key, 1, big), frame_buf, sizeof(frame_buf));
	/* 1 MiB read from a 1 MiB/s volume (a 100 ms bucket): into debt */
	ck_assert_int_eq(smb_dispatch_admit(a.c, frame_buf, n), QOS_ADMIT);
	qos_vol_stats(exp0->acct->qos, qos_now(ts.store->qos), &s0);
	qos_vol_stats(exp1->acct->qos, qos_now(ts.store->qos), &s1);
	ck_assert_uint_eq(s0.admitted_bytes - a0, 1u << 20); /* written on the destination's */
	ck_assert_uint_eq(s1.admitted_bytes - a1, 1u << 20); /* read on the source's */
	/* the next one (signed, to be served) waits for the source's volume,
	 * through the receive path */
	{
		static uint8_t signed_frame[512];
		struct smb_wire_hdr h = { .command = SMB2_IOCTL, .tree_id = a.t->id, .message_id = a.mid++ };
		const uint8_t *body = frame_buf + SMB2_HDR_LEN;
		size_t blen = n - SMB2_HDR_LEN;
		uint8_t *f;

		n = smbt_chain_build(&a, &h, &body, &blen, 1, signed_frame, sizeof(signed_frame));
		ck_assert_ptr_nonnull(f = malloc(n));
		memcpy(f, signed_frame, n);
		ck_assert_int_eq(smb_dispatch_recv(a.c, f, n), QOS_PARKED);
	}
	ck_assert(a.c->is_parked);
	qos_poll(ts.store->qos, qos_now(ts.store->qos), released, &rel);
	ck_assert_int_eq(rel, 0);
	qos_poll(ts.store->qos, qos_now(ts.store->qos) + 10000000000ull, released, &rel);
	ck_assert_int_eq(rel, 1);
	smb_dispatch_resume(a.c); /* the destination admits it (unlimited): served */
	ck_assert(!a.c->is_parked);
	smb_conn_kick(a.c);
	{
		uint8_t rb[512];
		struct smb_wire_hdr h;

		ck_assert_int_eq(smbt_recv(&a, rb, sizeof(rb), &len, &h, NULL), 1);
		ck_assert_uint_eq(h.command, SMB2_IOCTL);
		ck_assert_uint_eq(h.status, STATUS_INVALID_VIEW_SIZE); /* served: 1 MiB is past the 12-byte source */
	}
	/* a copy the source holds is copied across volumes */
	{
		const uint64_t one[1][3] = { { 0, 0, 12 } };
		struct smbt_fsctl_rsp r;

		qos_poll(ts.store->qos, qos_now(ts.store->qos) + 20000000000ull, released, &rel);
		smbt_fsctl(&a, dst, FSCTL_SRV_COPYCHUNK, in, copy_req(in, key, 1, one), 12, &r);
		expect_counts(&r, STATUS_SUCCESS, 1, 0, 12);
		file_bytes("dst", got, sizeof(got), &len);
		ck_assert_uint_eq(len, 12);
		ck_assert_int_eq(memcmp(got, "cross-volume", 12), 0);
	}
	vol_export_unref(exp1);
	teardown();
}
END_TEST

/* Capacity: the growth a copy makes must fit before anything is copied. */
START_TEST(test_disk_full)
{
	struct smbt_conn a;
	uint8_t key[24], in[32 + 24 * 4], got[64];
	/* the first chunk fits (no growth), the second makes the file 1 MiB */
	const uint64_t far[2][3] = { { 0, 0, 4 }, { 0, 1u << 20, 4 } };
	struct smbt_fsctl_rsp r;
	uint64_t src, dst, u0;
	size_t len = 0;

	copy_up(&a, &src, &dst, "abcd", key);
	u0 = atomic_load(&exp0->acct->used);
	ck_assert_int_eq(vol_reserve(exp0, exp0->cfg.capacity - u0 - 4096), 0);
	smbt_fsctl(&a, dst, FSCTL_SRV_COPYCHUNK, in, copy_req(in, key, 2, far), 12, &r);
	expect_counts(&r, STATUS_DISK_FULL, 0, 0, 0);
	file_bytes("dst", got, sizeof(got), &len);
	ck_assert_uint_eq(len, 0); /* not even the first chunk */
	vol_adjust(exp0, -(int64_t)(exp0->cfg.capacity - u0 - 4096));
	smbt_fsctl(&a, dst, FSCTL_SRV_COPYCHUNK, in, copy_req(in, key, 2, far), 12, &r);
	expect_counts(&r, STATUS_SUCCESS, 2, 0, 8);
	teardown();
}
END_TEST

START_TEST(test_limits)
{
	struct smbt_conn a;
	static uint8_t in[32 + 24 * 300];
	uint8_t key[24], got[64];
	uint64_t one[1][3] = { { 0, 0, 0 } };
	struct smbt_fsctl_rsp r;
	uint64_t src, dst;
	size_t len = 0;

	copy_up(&a, &src, &dst, "abcdefghij", key);
	/* 257 chunks, an empty chunk, one past 1 MiB: the limits, nothing written */
	smbt_fsctl(&a, dst, FSCTL_SRV_COPYCHUNK, in, copy_req(in, key, 257, NULL), 12, &r);
	expect_counts(&r, STATUS_INVALID_PARAMETER, 256, 1u << 20, 16u << 20);
	smbt_fsctl(&a, dst, FSCTL_SRV_COPYCHUNK, in, copy_req(in, key, 1, (const uint64_t (*)[3])one), 12, &r);
	expect_counts(&r, STATUS_INVALID_PARAMETER, 256, 1u << 20, 16u << 20);
	one[0][2] = (1u << 20) + 1;
	smbt_fsctl(&a, dst, FSCTL_SRV_COPYCHUNK, in, copy_req(in, key, 1, (const uint64_t (*)[3])one), 12, &r);
	expect_counts(&r, STATUS_INVALID_PARAMETER, 256, 1u << 20, 16u << 20);
	/* a chunk count the input does not hold */
	copy_req(in, key, 1, NULL);
	smbt_put32(in + 24, 2);
	smbt_fsctl(&a, dst, FSCTL_SRV_COPYCHUNK, in, 32 + 24, 12, &r);
	ck_assert_uint_eq(r.status, STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(r.out_len, 0);
	/* no room for the answer */
	smbt_fsctl(&a, dst, FSCTL_SRV_COPYCHUNK, in, copy_req(in, key, 1, NULL), 11, &r);
	ck_assert_uint_eq(r.status, STATUS_INVALID_PARAMETER);
	file_bytes("dst", got, sizeof(got), &len);
	ck_assert_uint_eq(len, 0);
	/* past the source's end: the chunks before it are done */
	{
		const uint64_t two[2][3] = { { 0, 0, 5 }, { 6, 5, 5 } };

		smbt_fsctl(&a, dst, FSCTL_SRV_COPYCHUNK, in, copy_req(in, key, 2, two), 12, &r);
		expect_counts(&r, STATUS_INVALID_VIEW_SIZE, 1, 0, 5);
		file_bytes("dst", got, sizeof(got), &len);
		ck_assert_uint_eq(len, 5);
	}
	teardown();
}
END_TEST

START_TEST(test_access)
{
	struct smbt_conn a;
	uint8_t key[24], in[64];
	const uint64_t one[1][3] = { { 0, 0, 4 } };
	struct smbt_fsctl_rsp r;
	uint64_t src, wsrc, dst_w, dst;
	size_t len = 0;
	uint8_t got[16];

	setup();
	conn_new(&a);
	src = open_file(&a, "src", ALL_ACCESS);
	ck_assert_uint_eq(smbl_write(&a, src, "abcdefghij"), STATUS_SUCCESS);
	/* a source open without read access */
	wsrc = open_file(&a, "src", WRITE_ONLY);
	dst = open_file(&a, "dst", ALL_ACCESS);
	resume_key(&a, wsrc, key);
	smbt_fsctl(&a, dst, FSCTL_SRV_COPYCHUNK, in, copy_req(in, key, 1, one), 12, &r);
	ck_assert_uint_eq(r.status, STATUS_ACCESS_DENIED);
	/* a destination without read: COPYCHUNK refused, COPYCHUNK_WRITE done */
	resume_key(&a, src, key);
	dst_w = open_file(&a, "dst", WRITE_ONLY);
	smbt_fsctl(&a, dst_w, FSCTL_SRV_COPYCHUNK, in, copy_req(in, key, 1, one), 12, &r);
	ck_assert_uint_eq(r.status, STATUS_ACCESS_DENIED);
	file_bytes("dst", got, sizeof(got), &len);
	ck_assert_uint_eq(len, 0);
	smbt_fsctl(&a, dst_w, FSCTL_SRV_COPYCHUNK_WRITE, in, copy_req(in, key, 1, one), 12, &r);
	expect_counts(&r, STATUS_SUCCESS, 1, 0, 4);
	/* execute is read enough for the source, not for the destination (Windows, Samba) */
	smbt_fsctl(&a, open_file(&a, "dst", WRITE_ONLY | 0x20u), FSCTL_SRV_COPYCHUNK, in, copy_req(in, key, 1, one), 12,
		   &r);
	ck_assert_uint_eq(r.status, STATUS_ACCESS_DENIED);
	resume_key(&a, open_file(&a, "src", 0x20u | 0x80u), key);
	smbt_fsctl(&a, dst_w, FSCTL_SRV_COPYCHUNK_WRITE, in, copy_req(in, key, 1, one), 12, &r);
	expect_counts(&r, STATUS_SUCCESS, 1, 0, 4);
	/* a destination without write */
	smbt_fsctl(&a, open_file(&a, "dst", READ_ONLY), FSCTL_SRV_COPYCHUNK_WRITE, in, copy_req(in, key, 1, one), 12,
		   &r);
	ck_assert_uint_eq(r.status, STATUS_ACCESS_DENIED);
	file_bytes("dst", got, sizeof(got), &len);
	ck_assert_uint_eq(len, 4);
	ck_assert_int_eq(memcmp(got, "abcd", 4), 0);
	teardown();
}
END_TEST

START_TEST(test_dup_extents_refused)
{
	struct smbt_conn a;
	uint8_t in[32], got[16];
	struct smbt_fsctl_rsp r;
	uint64_t src, dst;
	size_t len = 0;

	copy_up(&a, &src, &dst, "abcdefghij", NULL);
	/* DUPLICATE_EXTENTS_DATA: the source's FileId (persistent, volatile),
	 * SourceFileOffset, TargetFileOffset, ByteCount */
	smbt_put64(in, src);
	smbt_put64(in + 8, src);
	smbt_put64(in + 16, 0);
	smbt_put64(in + 24, 10);
	smbt_fsctl(&a, dst, FSCTL_DUPLICATE_EXTENTS_TO_FILE, in, sizeof(in), 0, &r);
	ck_assert_uint_eq(r.status, STATUS_INVALID_DEVICE_REQUEST);
	file_bytes("dst", got, sizeof(got), &len);
	ck_assert_uint_eq(len, 0);
	teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_copy");
	TCase *tc = tcase_create("copychunk");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_copy_chunks);
	tcase_add_test(tc, test_qos);
	tcase_add_test(tc, test_qos_two_volumes);
	tcase_add_test(tc, test_disk_full);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_access);
	tcase_add_test(tc, test_dup_extents_refused);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
