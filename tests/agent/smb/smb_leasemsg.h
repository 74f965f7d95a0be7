/* smb_leasemsg: the CREATE, CLOSE, WRITE, LOCK and OPLOCK_BREAK requests the
 * oplock and lease suites (test_smb_lease, test_smb_break, test_smb_break_ns,
 * test_smb_lease_steps, test_smb_durable...) send through smb_harness, the
 * parse of their answers and of break notifications, and the look at a
 * grant in the store's lease table they check breaks against; also the
 * SET_INFO and QUERY_INFO other suites send alike (file classes, and the
 * security descriptor: test_smb_secinfo, test_smb_sd_race, test_smb_info).
 * Every helper fails the running Check test on anything unexpected.
 */
#ifndef AQ_TESTS_SMB_LEASEMSG_H
#define AQ_TESTS_SMB_LEASEMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tests/agent/smb/smb_harness.h"

#define SMBL_R 0x1u
#define SMBL_RH 0x3u
#define SMBL_RW 0x5u
#define SMBL_RWH 0x7u
#define SMBL_SHARE_ALL 7u
#define SMBL_OPEN_IF 3u
#define SMBL_OVERWRITE_IF 5u

/* One message from the server. */
struct smbl_msg {
	struct smb_wire_hdr h;
	uint8_t body[1024];
	size_t len;
};

struct smbl_lease {
	bool on, v2;
	uint8_t key;       /* the key is 16 times this byte */
	uint32_t state;
	uint16_t epoch;
};

/* What a CREATE is and what it got. */
struct smbl_create {
	const char *name;          /* ASCII */
	uint8_t oplock;
	struct smbl_lease lease;
	bool dir;
	uint32_t share;            /* ShareAccess (0 taken as all) */
	bool share_none;           /* ShareAccess 0 */
	uint32_t access;           /* DesiredAccess (0: read/write data, list for a directory) */
	uint32_t disposition;      /* 0 taken as OPEN_IF */
	uint32_t options;          /* CreateOptions added (FILE_DELETE_ON_CLOSE...) */
	const char *dh;            /* a durable handle context ("DHnQ", "DH2Q", "DHnC", "DH2C") or NULL */
	uint8_t dh_data[36];
	size_t dh_len;
	const char *dh_extra;      /* a second one, with 16 zero bytes (a malformed request) */
	uint64_t alsi;             /* an AlSi context with this allocation size (0: none) */
	bool oplock_as_is;         /* OplockLevel q->oplock even with a lease context */
	const uint8_t *app;        /* an APP_INSTANCE_ID context with these 16 bytes (NULL: none) */
	bool app_ver;              /* an APP_INSTANCE_VERSION context of app_hi, app_lo */
	uint64_t app_hi, app_lo;
	/* the answer */
	uint32_t status;           /* STATUS_PENDING: waiting, mid and aid set */
	uint64_t mid, aid;
	uint8_t oplock_got;
	uint64_t fid;
	uint64_t alloc_got, eof_got; /* AllocationSize, EndofFile */
	uint32_t action_got;       /* CreateAction */
	bool ctx;                  /* a lease context came back */
	uint8_t key[16];
	uint32_t state, flags;
	uint16_t epoch;
	size_t ctx_len;
	char dh_got[5];            /* the durable context answered ("" none) */
	uint32_t dh_timeout, dh_flags;
};

/* The break suites' teardown: free srv's connections, check that every grant
 * went with its open (the store's lease table empty) and no CREATE still
 * waits, then smbt_export_down. */
void smbl_export_down(struct aqt_store *ts, struct smb_srv *srv, struct vol_export *exp0);
/* The break suites' fixture (test_smb_break, test_smb_break_ns,
 * test_smb_lease_steps): smbl_fix_up, a checked setup, brings one export up
 * (smbt_export_up) in smbl_ts, smbl_srv and smbl_exp0; smbl_fix_down is
 * smbl_export_down of it; smbl_conn opens connection tc (key) to it with
 * oplocks and leases on (API_INTENT_SMB_OPLOCKS). */
extern struct aqt_store smbl_ts;
extern struct smb_srv *smbl_srv;
extern struct vol_export *smbl_exp0;
void smbl_fix_up(void);
void smbl_fix_down(void);
void smbl_conn(struct smbt_conn *tc, uint64_t key);
/* The durable suites' teardown (over smbt_store_up): free srv's
 * connections, check that no open is kept for a reconnect and the store's
 * lease table is empty, then free srv and clean ts up. */
void smbl_store_down(struct aqt_store *ts, struct smb_srv *srv);

/* The next message on tc (0: none waiting). */
int smbl_recv(struct smbt_conn *tc, struct smbl_msg *m);
/* Send one request in tc's tree with its next MessageId. */
void smbl_send(struct smbt_conn *tc, struct smb_wire_hdr *h, const uint8_t *body, size_t n);
/* CREATE q->name with read/write access (list for a directory); the answer
 * (or the interim STATUS_PENDING) into q. */
void smbl_create(struct smbt_conn *tc, struct smbl_create *q);
/* A plain CREATE body (no contexts, all sharing, impersonation) of name into
 * b (at least 56 + 2 * strlen(name) bytes): DesiredAccess access,
 * FileAttributes attrs, CreateOptions options (the caller adds
 * DIRECTORY_FILE 0x1 or NON_DIRECTORY_FILE 0x40), CreateDisposition
 * disposition. Returns its length. */
size_t smbl_create_body(uint8_t *b, const char *name, uint32_t access, uint32_t attrs, uint32_t options,
			uint32_t disposition);
/* Send that CREATE (OPEN_IF; options get 0x1 for dir, 0x40 otherwise) and
 * return its status; on success the FileId in *fid and the FileAttributes
 * answered in *attrs_got. */
uint32_t smbl_open(struct smbt_conn *tc, const char *name, bool dir, uint32_t access, uint32_t attrs,
		   uint32_t options, uint64_t *fid, uint32_t *attrs_got);
/* A CREATE of name asking lease l (l.on is set here; the rest of the
 * request as smbl_create's defaults): what it got. */
struct smbl_create smbl_open_lease(struct smbt_conn *tc, const char *name, struct smbl_lease l);
/* The grant of tc's open with FileId fid: its state in the store's lease
 * table (VOL_LEASE_* bits) and, when breaking is not NULL, whether a break
 * of it waits for its acknowledgment. The open must be in tc's session. */
unsigned smbl_grant_state(const struct smbt_conn *tc, uint64_t fid, bool *breaking);
/* q's durable handle context (MS-SMB2 2.2.13.2.3 to 2.2.13.2.12), its data
 * zero but for what each puts there. smbl_dhnq: a v1 request (DHnQ, 16
 * zero bytes); smbl_dh2q: a v2 request (DH2Q: Timeout, Flags, CreateGuid
 * guid); smbl_dhnc: a v1 reconnect (DHnC) naming FileId fid, persistent and
 * volatile; smbl_dh2c: a v2 reconnect (DH2C): that FileId, then CreateGuid
 * guid. */
void smbl_dhnq(struct smbl_create *q);
void smbl_dh2q(struct smbl_create *q, uint32_t timeout, uint32_t flags, const uint8_t guid[16]);
void smbl_dhnc(struct smbl_create *q, uint64_t fid);
void smbl_dh2c(struct smbl_create *q, uint64_t fid, const uint8_t guid[16]);
/* The final answer of q's waiting CREATE, which must be on tc now. */
void smbl_create_final(struct smbt_conn *tc, struct smbl_create *q);
uint32_t smbl_close(struct smbt_conn *tc, uint64_t fid);
/* QUERY_INFO of file class cls on fid with OutputBufferLength len: its
 * status; on SUCCESS or BUFFER_OVERFLOW the output (at most 512 bytes) in
 * out, its length in *n (0 otherwise). */
uint32_t smbl_query_info(struct smbt_conn *tc, uint64_t fid, uint8_t cls, uint32_t len, uint8_t *out, size_t *n);
/* SET_INFO of file class cls on fid with data[0..n) (n at most 224): its
 * status; *mid gets its MessageId and, when the answer is the interim
 * STATUS_PENDING, *aid its AsyncId. smbl_set_info: the same, ids unwanted. */
uint32_t smbl_set_info_async(struct smbt_conn *tc, uint64_t fid, uint8_t cls, const uint8_t *data, size_t n,
			     uint64_t *mid, uint64_t *aid);
uint32_t smbl_set_info(struct smbt_conn *tc, uint64_t fid, uint8_t cls, const uint8_t *data, size_t n);
/* SET_INFO SECURITY of the descriptor sd[0..n) (n at most 1024; 0 sends an
 * empty buffer) on fid, the parts what (AdditionalInformation, SMB_SD_*):
 * its status. smbl_query_sec: QUERY_INFO SECURITY of the parts what of fid
 * with OutputBufferLength cap (at most 1024): its status; on SUCCESS the
 * descriptor in out (cap bytes), its length in *n (0 otherwise). */
uint32_t smbl_set_sec(struct smbt_conn *tc, uint64_t fid, uint32_t what, const uint8_t *sd, size_t n);
uint32_t smbl_query_sec(struct smbt_conn *tc, uint64_t fid, uint32_t what, uint8_t *out, size_t cap, size_t *n);
uint32_t smbl_write(struct smbt_conn *tc, uint64_t fid, const char *data);
/* LOCK of one exclusive range (4 bytes at off) on fid, failing immediately
 * (no async wait): the status answered. */
uint32_t smbl_lock(struct smbt_conn *tc, uint64_t fid, uint64_t off);
/* LOCK of 4 bytes at off on fid with flags (a blocking one, an unlock...):
 * its first answer (the interim STATUS_PENDING of one that waits) in *m. */
void smbl_lock_msg(struct smbt_conn *tc, uint64_t fid, uint64_t off, uint32_t flags, struct smbl_msg *m);
/* Acknowledgments; *level / *state (when not NULL) get the response's. */
uint32_t smbl_ack_oplock(struct smbt_conn *tc, uint64_t fid, uint8_t level, uint8_t *got);
uint32_t smbl_ack_lease(struct smbt_conn *tc, uint8_t key, uint32_t state, uint32_t *got);
/* A break notification must be next on tc: an oplock break of fid to
 * level, a lease break of key (epoch, flags, current -> new). */
void smbl_expect_oplock_break(struct smbt_conn *tc, uint64_t fid, uint8_t level);
void smbl_expect_lease_break(struct smbt_conn *tc, uint8_t key, uint16_t epoch, uint32_t flags, uint32_t cur,
			     uint32_t new_state);
void smbl_expect_nothing(struct smbt_conn *tc);
/* A lease break acknowledged, and the CREATE that waited for it answered:
 * with q's CREATE on tc waiting (STATUS_PENDING) for holder's lease key, a
 * loop turn of smbl_srv sends holder the break (epoch, ACK_REQUIRED,
 * cur -> new_state), holder acknowledges new_state (STATUS_SUCCESS),
 * another loop turn, and q's final answer is read from tc into q. */
void smbl_break_acked(struct smbt_conn *holder, uint8_t key, uint16_t epoch, uint32_t cur, uint32_t new_state,
		      struct smbt_conn *tc, struct smbl_create *q);

#endif
