/* smb_harness: the in-process SMB server the dispatcher suites
 * (test_smb_async, test_smb_notify, test_smb_lease) drive. A server made with
 * smb_srv_new gets an eventfd but no loop; each test connection is one end of
 * a socketpair, already negotiated (SMB 2.1, so HMAC-SHA256 signing) and
 * authenticated, with one valid session (id key << 24 | 1) holding one tree
 * (id 1). Requests are signed frames handed to smb_dispatch_frame; responses
 * are read from the client's end; the loop's part (the eventfd a wake writes,
 * smb_async_run) is played by smbt_loop_turn. Every helper fails the running
 * Check test (ck_assert) on anything unexpected instead of returning an error.
 * What a suite's requests and opens look like stays in the suite, apart from
 * CANCEL (smbt_cancel) and FSCTL (smbt_fsctl: test_smb_sparse, test_smb_copy,
 * test_smb_info), which the suites send alike.
 */
#ifndef AQ_TESTS_SMB_HARNESS_H
#define AQ_TESTS_SMB_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/smb/smb_srv_internal.h"

/* One test connection: the server's side (c, s, t) and the client's socket. */
struct smbt_conn {
	struct smb_conn *c;
	int peer;          /* the client's end */
	struct smb_sess *s;
	struct smb_tree *t;
	uint64_t mid;      /* the next MessageId, for the suite's request builders */
	uint64_t nonce;    /* the last transform nonce counter smbt_seal used */
	const uint8_t *key; /* what signs (HMAC-SHA256) and verifies here: NULL, the
			      harness's session key; a bound channel's key (test_smb_sess) */
};

/* A server over store (borrowed, must outlive it) with an eventfd for the
 * waiters' wakes; *srv is freed by smbt_srv_free. */
void smbt_srv_new(struct vol_store *store, struct smb_srv **srv);

/* The dispatcher suites' fixture: one export (fsid 100, 1 GiB, every client)
 * in a fresh temporary store *ts, set live, and a server over it in *srv.
 * Undo with smbt_srv_free(*srv) then aqt_store_cleanup(ts). */
struct aqt_store;
void smbt_store_up(struct aqt_store *ts, struct smb_srv **srv);

/* smbt_store_up, plus a reference to the store's first export in *exp0
 * (what most suites compare against). Undo with smbt_export_down, which
 * frees srv, drops *exp0 and cleans ts up. */
void smbt_export_up(struct aqt_store *ts, struct smb_srv **srv, struct vol_export **exp0);
void smbt_export_down(struct aqt_store *ts, struct smb_srv *srv, struct vol_export *exp0);
/* What exp's volume has free (vol_fsstat's available bytes): what an
 * allocation takes and its release gives back. */
uint64_t smbt_free_bytes(struct vol_export *exp);

/* smbt_conn_new, its tree being the store's first export (CREATE opens in
 * it; the tree holds the reference). */
void smbt_conn_export(struct smbt_conn *tc, struct smb_srv *srv, const struct aqt_store *ts, uint64_t key,
		      unsigned settings);

/* smbt_conn_export with oplocks on, its session user `user` of project p1
 * and its tree share `share`: what a durable reconnect compares. */
void smbt_conn_user(struct smbt_conn *tc, struct smb_srv *srv, const struct aqt_store *ts, uint64_t key,
		    const char *user, const char *share);

/* Free every connection of srv (their sessions, trees, opens and waiters). */
void smbt_conns_free(struct smb_srv *srv);

/* smbt_conns_free, then close the eventfd and free srv. */
void smbt_srv_free(struct smb_srv *srv);

/* Add a connection with client key `key` to srv, its tree's share having
 * smbSettings `settings` (API_INTENT_SMB_* bits), and describe it in tc
 * (caller's storage; tc->mid starts at 1). The connection, its session and
 * tree belong to srv: smb_conn_free or smbt_conns_free frees them. */
void smbt_conn_new(struct smbt_conn *tc, struct smb_srv *srv, uint64_t key, unsigned settings);

/* A zeroed open with FileId id in tc's tree, linked into its session (which
 * frees it); obj.fd and parent.fd are -1 for the suite to fill in. */
struct smb_open *smbt_open_new(struct smbt_conn *tc, uint64_t id);

/* Little-endian stores into a request body. */
void smbt_put16(uint8_t *p, uint16_t v);
void smbt_put32(uint8_t *p, uint32_t v);
void smbt_put64(uint8_t *p, uint64_t v);
/* A READ request body (49 bytes, MS-SMB2 2.2.19) of len bytes at off on
 * fid (persistent and volatile alike) into b; returns 49. */
size_t smbt_read_body(uint8_t *b, uint64_t fid, uint64_t off, uint32_t len);

/* Sign and dispatch one message: header fields from h (the caller sets
 * command, message_id, tree_id and any async fields; SessionId, SIGNED and one
 * credit are set here), then body[0..n); then flush what the server queued. */
void smbt_send(struct smbt_conn *tc, struct smb_wire_hdr *h, const uint8_t *body, size_t n);

/* One compound frame of count messages (at most 16, 8 KiB): header i from
 * h[i] (the caller sets command, message_id, tree_id and
 * SMB2_FLAGS_RELATED_OPERATIONS; SessionId, SIGNED, one credit and
 * NextCommand are set here), body[i][0..n[i]), each message padded to 8
 * bytes and signed on its own; then flush what the server queued. */
void smbt_send_chain(struct smbt_conn *tc, struct smb_wire_hdr *h, const uint8_t *const *body, const size_t *n,
		     size_t count);

/* The compound frame smbt_send_chain sends, built into frame (cap bytes)
 * and not sent: its length. */
size_t smbt_chain_build(struct smbt_conn *tc, struct smb_wire_hdr *h, const uint8_t *const *body, const size_t *n,
			size_t count, uint8_t *frame, size_t cap);

/* Encryption (MS-SMB2 3.1.4.3, 3.2.5.1.1): smbt_conn_cipher makes tc's
 * connection 3.1.1 with cipher (SMB2_ENCRYPTION_*) and gives its session
 * the harness's encryption keys (the server decrypts what smbt_seal
 * encrypts and seals its answers for smbt_unseal). smbt_seal: the
 * TRANSFORM frame of plain[0..len) for tc's session (a fresh nonce each
 * time) into out (cap bytes); its length. smbt_unseal: a sealed answer
 * opened in place (the tag must verify); the plain length. recv_sealed:
 * smbt_recv of a sealed answer, opened (0: nothing waiting). */
void smbt_conn_cipher(struct smbt_conn *tc, uint16_t cipher);
size_t smbt_seal(struct smbt_conn *tc, const uint8_t *plain, size_t len, uint8_t *out, size_t cap);
size_t smbt_unseal(const struct smbt_conn *tc, uint8_t *frame, size_t len);
int smbt_recv_sealed(const struct smbt_conn *tc, uint8_t *buf, size_t cap, size_t *len, struct smb_wire_hdr *h);

/* SMB2 CANCEL: of the request with AsyncId id (async) or MessageId id. */
void smbt_cancel(struct smbt_conn *tc, bool async, uint64_t id);

/* What an FSCTL answered: its status and, when the answer is an IOCTL
 * response (StructureSize 49), its output (at most 64 bytes). */
struct smbt_fsctl_rsp {
	uint32_t status;
	uint8_t out[64];
	size_t out_len;
};

/* The most input smbt_fsctl sends (300 copychunk entries of 24 bytes). */
#define SMBT_FSCTL_IN_MAX (24 * 300)

/* An IOCTL with SMB2_0_IOCTL_IS_FSCTL: control code on FileId fid in tc's
 * tree, with tc's next MessageId, input in[0..in_len) (in_len at most
 * SMBT_FSCTL_IN_MAX; in may be NULL when it is 0) and MaxOutputResponse
 * max_out; the answer, which must be the next frame on tc, into rsp (the
 * caller's). The answer's output must lie within it and fit rsp->out. */
void smbt_fsctl(struct smbt_conn *tc, uint64_t fid, uint32_t code, const uint8_t *in, size_t in_len,
		uint32_t max_out, struct smbt_fsctl_rsp *rsp);

/* The next frame on tc's socket into buf (at most cap bytes): 1 with its
 * length in *len and its header in *h, and, when sig_ok is not NULL, whether
 * its signature verifies; 0 when nothing is waiting. */
int smbt_recv(const struct smbt_conn *tc, uint8_t *buf, size_t cap, size_t *len, struct smb_wire_hdr *h,
	      bool *sig_ok);

/* The loop's part: drain the eventfd, let smb_async_run retry the waiters.
 * Returns whether anything had woken. */
bool smbt_loop_turn(struct smb_srv *srv);

/* Turn tc's server's loop (smbt_loop_turn) until a frame waits on tc's
 * socket (a break sent from another thread, a waiter woken by a timeout),
 * for up to 5 s, 10 ms apart; the frame is left for the caller to read.
 * Fails the test when none came. */
void smbt_wait_msg(const struct smbt_conn *tc);

/* Header checks. pending: an interim STATUS_PENDING for MessageId mid, async,
 * with a nonzero AsyncId, which it returns. final: the async answer of
 * `command` mid/aid with `status`. sync: a sync answer to mid with `status`. */
uint64_t smbt_check_pending(const struct smb_wire_hdr *h, uint64_t mid);
void smbt_check_final(const struct smb_wire_hdr *h, uint16_t command, uint64_t mid, uint64_t aid, uint32_t status);
void smbt_check_sync(const struct smb_wire_hdr *h, uint64_t mid, uint32_t status);

#endif
