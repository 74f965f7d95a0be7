/* rpc: ONC RPC v2 (RFC 5531) over TCP: record marking, call header parsing
 * and reply header encoding. No I/O here; nfs_srv owns the sockets.
 *
 * Record marking: every fragment starts with a 4-byte mark (top bit = last
 * fragment, low 31 bits = length). struct rpc_rec reassembles a record of
 * several fragments and refuses (RPC_REC_TOOBIG) any record whose total length
 * would exceed its cap before allocating for it. Memory follows what has
 * arrived, not what a mark announced: a fragment's room grows from
 * RPC_REC_STEP as its bytes come, so a peer that announces 1 MiB and sends
 * nothing more holds 64 KiB. Growing by doubling copies about the whole
 * record once more (realloc); a record given a budget (rpc_rec_budget), once
 * a fragment filled its first RPC_REC_STEP, takes the room for the rest of
 * the fragment at once, charged to the budget shared by the server's
 * connections until the record is taken: large WRITEs arrive with no copy,
 * and peers that stall mid-record hold at most the budget between them
 * (past it, room grows by doubling again).
 */
#ifndef AQ_AGENT_RPC_H
#define AQ_AGENT_RPC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/nfs/xdr.h"

enum {
	RPC_MSG_CALL = 0,
	RPC_MSG_REPLY = 1,
	RPC_AUTH_NONE = 0,
	RPC_AUTH_SYS = 1,
	RPC_MAX_AUTH_BYTES = 400,
	RPC_MAX_MACHINE = 255,
	RPC_MAX_GIDS = 16,
	/* A record holds one call: 1 MiB of WRITE data plus headers. */
	RPC_REC_MAX = (1u << 20) + 4096,
	/* The first room of a fragment; it doubles as the bytes fill it. */
	RPC_REC_STEP = 64u << 10,
};

enum rpc_accept_stat {
	RPC_SUCCESS = 0,
	RPC_PROG_UNAVAIL = 1,
	RPC_PROG_MISMATCH = 2,
	RPC_PROC_UNAVAIL = 3,
	RPC_GARBAGE_ARGS = 4,
	RPC_SYSTEM_ERR = 5,
};

enum rpc_auth_stat {
	RPC_AUTH_OK = 0,
	RPC_AUTH_BADCRED = 1,
	RPC_AUTH_REJECTEDCRED = 2,
	RPC_AUTH_BADVERF = 3,
	RPC_AUTH_TOOWEAK = 5,
};

/* ---- record reassembly ---- */
struct rpc_rec {
	uint8_t mark[4];
	size_t mark_have;      /* bytes of the current mark received */
	size_t frag_left;      /* body bytes left in the current fragment */
	bool in_body;
	bool last;             /* current fragment is the last one */
	uint8_t *buf;          /* record so far (owned) */
	size_t len;
	size_t cap;            /* bytes allocated at buf */
	size_t max;            /* cap on a whole record */
	_Atomic size_t *ahead; /* shared budget of room taken ahead of bytes, or NULL */
	size_t ahead_max;      /* the most *ahead may reach */
	size_t held;           /* what this record charged to *ahead */
};

enum { RPC_REC_MORE = 0, RPC_REC_DONE = 1, RPC_REC_TOOBIG = -1 };

void rpc_rec_init(struct rpc_rec *r, size_t max);
void rpc_rec_cleanup(struct rpc_rec *r);
/* Let r take a fragment's room ahead of its bytes (see above), charging
 * *ahead up to ahead_max; the charge goes back at rpc_rec_take and
 * rpc_rec_cleanup. *ahead must outlive r. */
void rpc_rec_budget(struct rpc_rec *r, _Atomic size_t *ahead, size_t ahead_max);
/* Feed n bytes; *used receives how many were consumed. Returns RPC_REC_DONE
 * when a whole record is ready (take it with rpc_rec_take before feeding
 * more), RPC_REC_MORE when more input is needed, RPC_REC_TOOBIG (or -ENOMEM)
 * when the peer announced too much: the connection must be closed. */
int rpc_rec_feed(struct rpc_rec *r, const uint8_t *data, size_t n, size_t *used);
/* Direct read into the record: when inside a fragment body, returns a pointer
 * where up to *room bytes of the body may be written (room allocated so far,
 * at most what the fragment still lacks); else NULL (also when no memory). */
uint8_t *rpc_rec_direct(struct rpc_rec *r, size_t *room);
/* Account n bytes written through rpc_rec_direct; returns RPC_REC_DONE or
 * RPC_REC_MORE. */
int rpc_rec_advance(struct rpc_rec *r, size_t n);
/* Hand the finished record to the caller (who frees it) and reset. */
uint8_t *rpc_rec_take(struct rpc_rec *r, size_t *len);
/* Part of a record (a mark or body bytes) has arrived and it is not whole. */
bool rpc_rec_started(const struct rpc_rec *r);

/* ---- call header ---- */
struct rpc_cred {
	uint32_t flavor;       /* RPC_AUTH_NONE or RPC_AUTH_SYS */
	uint32_t uid, gid;
	uint32_t ngids;
	uint32_t gids[RPC_MAX_GIDS];
	char machine[RPC_MAX_MACHINE + 1];
};

struct rpc_call {
	uint32_t xid;
	uint32_t rpcvers, prog, vers, proc;
	struct rpc_cred cred;
	const uint8_t *args;   /* into the record */
	size_t args_len;
};

enum rpc_parse {
	RPC_PARSE_OK = 0,
	RPC_PARSE_GARBAGE = -1,      /* not even an xid / not a call: drop */
	RPC_PARSE_RPC_MISMATCH = -2, /* reply MSG_DENIED RPC_MISMATCH */
	RPC_PARSE_BADCRED = -3,      /* reply MSG_DENIED AUTH_ERROR BADCRED */
	RPC_PARSE_TOOWEAK = -4,      /* flavor we do not accept */
};

/* Parse a call header from a whole record. call->xid is valid for every
 * result except RPC_PARSE_GARBAGE. */
int rpc_call_parse(const uint8_t *rec, size_t len, struct rpc_call *call);

/* ---- reply headers ----
 * Each appends to buf (which the caller started with 4 bytes reserved for the
 * record mark). */
void rpc_reply_accepted(struct ut_buf *buf, uint32_t xid, enum rpc_accept_stat st);
void rpc_reply_prog_mismatch(struct ut_buf *buf, uint32_t xid, uint32_t lo, uint32_t hi);
void rpc_reply_rpc_mismatch(struct ut_buf *buf, uint32_t xid);
void rpc_reply_auth_error(struct ut_buf *buf, uint32_t xid, enum rpc_auth_stat st);

#endif
