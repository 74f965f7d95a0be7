/* nfs4_harness: the in-process NFSv4.1 + SMB fixture of the nfs4 suites (see
 * nfs4_harness.h): the servers over one store, v4.1 clients with a session
 * each, and the SMB CREATE of the shared file. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tests/agent/nfs4/nfs4_harness.h"

#include <check.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/nfs/nfs_srv.h"
#include "agent/nfs/nlm.h"
#include "agent/nfs4/nfs4.h"
#include "api/api_intent.h"
#include "tests/lib/aqt_store.h"

/* ---- the servers ---- */

void nfs4t_srv_up(const struct nfs4t_spec *spec, struct aqt_store *ts, struct nfs_srv **nsrv, struct nfs4_srv **v4,
		  struct smb_srv **ssrv)
{
	char p[200];
	int fd;

	aqt_store_init(ts, 1, &(struct aqt_store_spec){ .id_prefix = "vol", .fsid = spec->fsid, .capacity = 1ull << 30,
							.clients = "0.0.0.0/0", .key_byte = spec->key_byte });
	ts->cfg[0].protocols = API_INTENT_NFSV3 | API_INTENT_NFSV4 | API_INTENT_SMB;
	ck_assert_int_eq(vol_store_set(ts->store, ts->cfg, ts->n), 0);
	snprintf(p, sizeof(p), "%s/f", ts->cfg[0].root);
	ck_assert_int_ge(fd = open(p, O_CREAT | O_WRONLY, 0666), 0);
	ck_assert_int_eq(write(fd, "0123456789", 10), 10);
	close(fd);
	ck_assert_int_eq(nfs_srv_new("127.0.0.1:0", ts->store, spec->threads, nsrv), 0);
	ck_assert_int_eq(nfs4_srv_new(&(struct nfs4_cfg){ .lease_s = spec->lease_s }, v4), 0);
	ck_assert_int_eq(nfs_srv_add_prog(*nsrv, &nfs4_prog, *v4), 0);
	if (spec->nlm) {
		ck_assert_int_eq(nlm_srv_new(&(struct nlm_cfg){ .cb_timeout_ms = 500, .my_name = "aquifer-test" },
					     ts->store, spec->nlm), 0);
		ck_assert_int_eq(nfs_srv_add_prog(*nsrv, &nlm_prog, *spec->nlm), 0);
	}
	ck_assert_int_eq(nfs_srv_start(*nsrv), 0);
	smbt_srv_new(ts->store, ssrv);
}

void nfs4t_srv_down(struct aqt_store *ts, struct nfs_srv *nsrv, struct nfs4_srv *v4, struct smb_srv *ssrv)
{
	nfs4t_srv_down_nlm(ts, nsrv, v4, ssrv, NULL);
}

void nfs4t_srv_down_nlm(struct aqt_store *ts, struct nfs_srv *nsrv, struct nfs4_srv *v4, struct smb_srv *ssrv,
			struct nlm_srv *nlm)
{
	smbt_srv_free(ssrv);
	nfs_srv_free(nsrv);
	nlm_srv_free(nlm); /* after the server that served it, before the store it locks in */
	nfs4_srv_free(v4);
	aqt_store_cleanup(ts);
}

/* ---- a v4.1 client ---- */

void nfs4t_cl_up(struct nfs4t_cl *x, uint16_t port, const char *owner, uint32_t csflags)
{
	nfs4t_cl_up_ex(x, port, owner, csflags, false);
}

void nfs4t_cl_up_ex(struct nfs4t_cl *x, uint16_t port, const char *owner, uint32_t csflags, bool mute_null)
{
	uint32_t got;

	memset(x, 0, sizeof(*x));
	ck_assert_int_eq(nfs4_cl_dial(&x->c, port), 0);
	x->c.mute_null = mute_null;
	x->seq = 1;
	ck_assert_uint_eq(nfs4_cl_session_ex(&x->c, owner, 4, &got, csflags), 0);
	ck_assert_uint_eq(x->c.cs_flags & 2u, csflags & 2u); /* the backchannel granted as asked */
}

void nfs4t_begin(struct nfs4t_cl *x, uint32_t nops)
{
	nfs4_cl_begin(&x->c, &x->b, 1, nops + 1);
	nfs4_cl_sequence(&x->b, &x->c, 0, x->seq++, false);
}

void nfs4t_send(struct nfs4t_cl *x)
{
	uint32_t n;

	ck_assert_int_eq(nfs4_cl_send(&x->c, &x->b, &x->cur), 0);
	(void)nfs4_cl_res(&x->cur, &n);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 53), 0);
	x->flags = nfs4_cl_sequence_flags(&x->cur);
}

uint32_t nfs4t_open(struct nfs4t_cl *x, uint32_t access, uint32_t deny)
{
	uint32_t st;

	nfs4t_begin(x, 4);
	nfs4_cl_putrootfh(&x->b);
	nfs4_cl_lookup(&x->b, "v0");
	nfs4_cl_open_deny(&x->b, x->owner ? x->owner : "open-owner", x->name ? x->name : "f", access, deny);
	nfs4_cl_getfh(&x->b);
	nfs4t_send(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 24), 0);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 15), 0);
	if ((st = nfs4_cl_op(&x->cur, 18)) == 0) {
		const uint8_t *p;

		nfs4_cl_open_res_wdeleg(&x->cur, &x->open, &x->dtype, &x->deleg, &x->space_limit, NULL);
		x->why = UINT32_MAX;
		if (x->dtype == 3) { /* OPEN_DELEGATE_NONE_EXT: why, and a bool for CONTENTION / RESOURCE */
			x->why = xdr_u32(&x->cur);
			if (x->why == 1 || x->why == 2)
				ck_assert_uint_eq(xdr_u32(&x->cur), 0); /* the server never pushes nor signals */
		}
		ck_assert_uint_eq(nfs4_cl_op(&x->cur, 10), 0);
		ck_assert_ptr_nonnull(p = xdr_opaque(&x->cur, 128, &x->fhlen));
		memcpy(x->fh, p, x->fhlen);
	}
	return st;
}

uint32_t nfs4t_fh_op(struct nfs4t_cl *x, uint32_t op, void (*build)(struct ut_buf *, const struct nfs4_sid *),
		     const struct nfs4_sid *sid)
{
	nfs4t_begin(x, 2);
	nfs4_cl_putfh(&x->b, x->fh, x->fhlen);
	build(&x->b, sid);
	nfs4t_send(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 22), 0);
	return nfs4_cl_op(&x->cur, op);
}

uint32_t nfs4t_close(struct nfs4t_cl *x)
{
	return nfs4t_fh_op(x, 4, nfs4_cl_close_op, &x->open);
}

void nfs4t_build_read(struct ut_buf *b, const struct nfs4_sid *sid)
{
	nfs4_cl_read(b, sid, 0, 4);
}

uint32_t nfs4t_delegreturn(struct nfs4t_cl *x, const struct nfs4_sid *sid)
{
	return nfs4t_fh_op(x, 8, nfs4_cl_delegreturn, sid);
}

uint32_t nfs4t_ping(struct nfs4t_cl *x)
{
	nfs4t_begin(x, 0);
	nfs4t_send(x);
	return x->flags;
}

void nfs4t_expect_recall(struct nfs4t_cl *x, uint32_t seq, bool answer)
{
	struct nfs4_cl_cb cb;

	if (!x->c.cb) /* it may have come in with a reply already */
		ck_assert_int_eq(nfs4_cl_wait_cb(&x->c, 20000), 1);
	ck_assert_int_eq(nfs4_cl_cb_parse(&x->c, &cb), 0);
	ck_assert_uint_eq(cb.prog, 0x40000000u); /* csa_cb_program of nfs4_cl_session */
	ck_assert_uint_eq(cb.vers, 1);
	ck_assert_uint_eq(cb.proc, 1); /* CB_COMPOUND */
	ck_assert_uint_eq(cb.minor, 1);
	ck_assert_int_eq(memcmp(cb.sess, x->c.sess, 16), 0);
	ck_assert_uint_eq(cb.seq, seq);
	ck_assert_uint_eq(cb.slot, 0);
	ck_assert_uint_eq(cb.nrecalls, 1);
	ck_assert_int_eq(memcmp(cb.recall[0].other, x->deleg.other, 12), 0);
	ck_assert_uint_eq(cb.fhlen[0], x->fhlen);
	ck_assert_int_eq(memcmp(cb.fh[0], x->fh, x->fhlen), 0);
	if (answer)
		ck_assert_int_eq(nfs4_cl_cb_reply(&x->c, &cb, 0), 0);
	free(x->c.cb);
	x->c.cb = NULL;
}

void nfs4t_expect_no_call(struct nfs4t_cl *x, int ms)
{
	ck_assert_ptr_null(x->c.cb);
	ck_assert_int_eq(nfs4_cl_wait_cb(&x->c, ms), 0);
}

bool nfs4t_readable_within(int fd, int ms)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };

	return poll(&pf, 1, ms) == 1;
}

/* ---- SMB ---- */

uint64_t nfs4t_smb_create(struct smbt_conn *sc, uint32_t access, uint32_t share, struct smb_wire_hdr *h,
			  uint8_t fid[16])
{
	uint8_t body[128] = { 0 }, buf[2048];
	uint64_t mid;
	size_t len;

	memset(h, 0, sizeof(*h));
	h->command = SMB2_CREATE;
	smbt_put16(body, 57);
	smbt_put32(body + 4, 2);       /* impersonation */
	smbt_put32(body + 24, access);
	smbt_put32(body + 32, share);
	smbt_put32(body + 36, 1);      /* FILE_OPEN */
	smbt_put32(body + 40, 0x40u);  /* FILE_NON_DIRECTORY_FILE */
	smbt_put16(body + 44, SMB2_HDR_LEN + 56);
	smbt_put16(body + 46, 2);
	body[56] = 'f';
	h->tree_id = sc->t->id;
	h->message_id = mid = sc->mid++;
	smbt_send(sc, h, body, 58);
	ck_assert_int_eq(smbt_recv(sc, buf, sizeof(buf), &len, h, NULL), 1);
	ck_assert_uint_eq(h->command, SMB2_CREATE);
	if (fid && h->status == STATUS_SUCCESS) {
		ck_assert_uint_ge(len, SMB2_HDR_LEN + 80);
		memcpy(fid, buf + SMB2_HDR_LEN + 64, 16);
	}
	return mid;
}

void nfs4t_smb_create_final(struct smb_srv *ssrv, struct smbt_conn *sc, uint64_t mid, uint64_t aid)
{
	struct smb_wire_hdr h = { 0 };
	uint8_t buf[2048];
	size_t len;

	for (int i = 0; i < 50; i++) {
		smb_async_tick(ssrv);
		if (smbt_recv(sc, buf, sizeof(buf), &len, &h, NULL) == 1)
			break;
		usleep(20000);
	}
	smbt_check_final(&h, SMB2_CREATE, mid, aid, STATUS_SUCCESS);
}
