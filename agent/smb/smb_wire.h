/* smb_wire: the bytes of SMB2/3 (MS-SMB2 section 2) with no sockets and no
 * state: a bounded little-endian cursor and a capped encode buffer, both with
 * a sticky error; UTF-16LE <-> UTF-8; the direct-TCP framing; the SMB2
 * header (sync and async), the transform header, the SMB1 multi-protocol
 * NEGOTIATE; the compound splitter; and one decoder per request body and one
 * encoder per response body the server sends.
 *
 * Decoding: every read past the end sets cur->err (AQ_EINVAL) and turns the
 * later reads into no-ops that yield zeros; decode a whole structure, check
 * once. A decoder checks the body's StructureSize and that every
 * (offset, length) pair lies inside the message it was given before handing
 * out a pointer; the pointers it returns point into that message and live as
 * long as the frame. Nothing a peer sends is allocated by this module.
 *
 * Encoding: the smb_wire_put_* writers append little-endian fields to util's
 * capped buffer (struct ut_buf, util/ut_buf.h: ut_buf_init with the user's
 * cap, ut_buf_put_zero to reserve, ut_buf_set_le16/le32 to patch a field
 * written earlier); past the cap the buffer's sticky error is AQ_ETOOBIG and
 * later writes are no-ops. Offsets inside
 * an SMB2 message are relative to its header, so each response encoder takes
 * hdr_off, the buffer offset where the caller wrote that message's header.
 *
 * Return codes: AQ_OK, AQ_EINVAL (malformed: the server answers
 * STATUS_INVALID_PARAMETER or drops the connection), AQ_ETOOBIG (over a cap),
 * AQ_EUNIMPL (well formed, but something this server does not do), AQ_ENOMEM.
 */
#ifndef AQ_AGENT_SMB_WIRE_H
#define AQ_AGENT_SMB_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/ut_buf.h"

/* ---- caps ------------------------------------------------------------- */
/* Largest READ/WRITE payload the server offers with SMB2_GLOBAL_CAP_LARGE_MTU. */
#define SMB_WIRE_IO_MAX (8u << 20)
/* Largest direct-TCP frame accepted once a session is authenticated: one
 * maximal READ/WRITE plus room for the transform header and compounded
 * small requests. Checked on the 4-byte length before anything is allocated. */
#define SMB_WIRE_FRAME_MAX (SMB_WIRE_IO_MAX + (64u << 10))
/* Before authentication (NEGOTIATE, SESSION_SETUP): room for an NTLMSSP or
 * Kerberos token, not for data. */
#define SMB_WIRE_FRAME_MAX_PREAUTH (128u << 10)
/* A path or name a client sends, in UTF-16 bytes (MS-FSCC: 32767 chars max;
 * Windows names are far shorter; Samba caps at 4096 bytes of UTF-8). */
#define SMB_WIRE_NAME_MAX 4096u
#define SMB_WIRE_DIALECT_MAX 64u
#define SMB_WIRE_CREATE_CTX_MAX 16u
#define SMB_WIRE_LOCK_MAX 64u

/* ---- cursor ------------------------------------------------------------ */
struct smb_wire_cur {
	const uint8_t *p;
	size_t len;
	size_t pos;
	int err; /* AQ_OK or AQ_EINVAL; sticky */
};

void smb_wire_cur_init(struct smb_wire_cur *cur, const void *data, size_t len);
uint8_t smb_wire_u8(struct smb_wire_cur *cur);
uint16_t smb_wire_u16(struct smb_wire_cur *cur);
uint32_t smb_wire_u32(struct smb_wire_cur *cur);
uint64_t smb_wire_u64(struct smb_wire_cur *cur);
/* n bytes as a pointer into the buffer (NULL and err set if short). */
const uint8_t *smb_wire_bytes(struct smb_wire_cur *cur, size_t n);
void smb_wire_skip(struct smb_wire_cur *cur, size_t n);
/* Move to absolute position pos (<= len). */
void smb_wire_seek(struct smb_wire_cur *cur, size_t pos);
/* Skip to the next multiple of 8 of pos, or to the end if fewer bytes are
 * left (the last element of a list need not be padded). */
void smb_wire_align8(struct smb_wire_cur *cur);
size_t smb_wire_left(const struct smb_wire_cur *cur);

/* ---- encode writers (onto ut_buf) ----------------------------------------- */
void smb_wire_put_u8(struct ut_buf *buf, uint8_t v);
void smb_wire_put_u16(struct ut_buf *buf, uint16_t v);
void smb_wire_put_u32(struct ut_buf *buf, uint32_t v);
void smb_wire_put_u64(struct ut_buf *buf, uint64_t v);
void smb_wire_put_bytes(struct ut_buf *buf, const void *data, size_t n);
/* Zero-pad until (len - base) is a multiple of align (a power of two). */
void smb_wire_pad(struct ut_buf *buf, size_t base, size_t align);

uint16_t smb_wire_get_u16(const uint8_t *p);
uint32_t smb_wire_get_u32(const uint8_t *p);
uint64_t smb_wire_get_u64(const uint8_t *p);

/* ---- strings -------------------------------------------------------------- */
/* UTF-16LE (in, inlen bytes) to NUL-terminated UTF-8 in out[outcap].
 * AQ_EINVAL: odd length, unpaired surrogate, or an embedded NUL;
 * AQ_ETOOBIG: does not fit. *outlen (may be NULL) excludes the NUL. */
int smb_wire_utf16_to_utf8(const uint8_t *in, size_t inlen, char *out, size_t outcap, size_t *outlen);
/* UTF-8 (len bytes) to UTF-16LE appended to buf; AQ_EINVAL on bad UTF-8.
 * *outlen (may be NULL) receives the number of bytes appended. */
int smb_wire_put_utf16(struct ut_buf *buf, const char *utf8, size_t len, size_t *outlen);

/* ---- framing ---------------------------------------------------------------- */
/* Direct TCP (MS-SMB2 2.1): a zero byte and a 24-bit big-endian length.
 * AQ_EINVAL if the first byte is not zero or the length is below 4,
 * AQ_ETOOBIG above max. */
int smb_wire_frame_len(const uint8_t prefix[4], size_t max, uint32_t *len);

enum smb_wire_kind {
	SMB_WIRE_SMB2,       /* 0xFE 'SMB' */
	SMB_WIRE_TRANSFORM,  /* 0xFD 'SMB': encrypted */
	SMB_WIRE_COMPRESSED, /* 0xFC 'SMB': refused, never negotiated */
	SMB_WIRE_SMB1,       /* 0xFF 'SMB' */
	SMB_WIRE_UNKNOWN,
};
enum smb_wire_kind smb_wire_frame_kind(const uint8_t *p, size_t len);

/* ---- SMB2 header (2.2.1) ------------------------------------------------------ */
#define SMB2_HDR_LEN 64u
#define SMB2_FLAGS_SERVER_TO_REDIR 0x00000001u
#define SMB2_FLAGS_ASYNC_COMMAND 0x00000002u
#define SMB2_FLAGS_RELATED_OPERATIONS 0x00000004u
#define SMB2_FLAGS_SIGNED 0x00000008u
#define SMB2_FLAGS_PRIORITY_MASK 0x00000070u
#define SMB2_FLAGS_DFS_OPERATIONS 0x10000000u
#define SMB2_FLAGS_REPLAY_OPERATION 0x20000000u
#define SMB2_SIG_OFF 48u /* the 16-byte signature inside the header */

enum smb2_cmd {
	SMB2_NEGOTIATE = 0x00,
	SMB2_SESSION_SETUP = 0x01,
	SMB2_LOGOFF = 0x02,
	SMB2_TREE_CONNECT = 0x03,
	SMB2_TREE_DISCONNECT = 0x04,
	SMB2_CREATE = 0x05,
	SMB2_CLOSE = 0x06,
	SMB2_FLUSH = 0x07,
	SMB2_READ = 0x08,
	SMB2_WRITE = 0x09,
	SMB2_LOCK = 0x0A,
	SMB2_IOCTL = 0x0B,
	SMB2_CANCEL = 0x0C,
	SMB2_ECHO = 0x0D,
	SMB2_QUERY_DIRECTORY = 0x0E,
	SMB2_CHANGE_NOTIFY = 0x0F,
	SMB2_QUERY_INFO = 0x10,
	SMB2_SET_INFO = 0x11,
	SMB2_OPLOCK_BREAK = 0x12,
	SMB2_CMD_COUNT
};

struct smb_wire_hdr {
	uint16_t credit_charge;
	uint32_t status;      /* or ChannelSequence/Reserved in requests */
	uint16_t command;
	uint16_t credits;     /* CreditRequest / CreditResponse */
	uint32_t flags;
	uint32_t next_command;
	uint64_t message_id;
	uint64_t async_id;    /* when SMB2_FLAGS_ASYNC_COMMAND */
	uint32_t tree_id;     /* otherwise */
	uint64_t session_id;
	uint8_t signature[16];
};

/* Decode the 64-byte header at p (len bytes available). AQ_EINVAL if not
 * 0xFE 'SMB' with StructureSize 64. */
int smb_wire_hdr_decode(const uint8_t *p, size_t len, struct smb_wire_hdr *h);
/* Append the 64-byte header (async form when flags has ASYNC_COMMAND). */
void smb_wire_hdr_encode(struct ut_buf *buf, const struct smb_wire_hdr *h);
/* The command's name ("CREATE"), "UNKNOWN" past the table. */
const char *smb_wire_cmd_name(uint16_t command);

/* ---- transform header (2.2.41) ---------------------------------------------------- */
#define SMB2_TRANSFORM_LEN 52u
#define SMB2_TRANSFORM_AAD_OFF 20u /* AAD = header from the nonce onward */
#define SMB2_TRANSFORM_AAD_LEN 32u
#define SMB2_TRANSFORM_FLAG_ENCRYPTED 0x0001u

struct smb_wire_transform {
	uint8_t signature[16];
	uint8_t nonce[16];
	uint32_t orig_size;
	uint16_t flags;
	uint64_t session_id;
};

/* AQ_EINVAL unless 0xFD 'SMB', Flags = Encrypted, and OriginalMessageSize
 * equals the bytes after the header (at least one SMB2 header). */
int smb_wire_transform_decode(const uint8_t *p, size_t len, struct smb_wire_transform *t);
void smb_wire_transform_encode(struct ut_buf *buf, const struct smb_wire_transform *t);

/* ---- SMB1 multi-protocol NEGOTIATE (MS-SMB2 3.3.5.3.1) ----------------------------- */
#define SMB2_DIALECT_WILDCARD 0x02FFu
/* The reply an SMB1 NEGOTIATE deserves: SMB2_DIALECT_WILDCARD if it offers
 * "SMB 2.???", 0x0202 if only "SMB 2.002"; AQ_EUNIMPL if it offers neither
 * (an SMB1-only client: the server closes the connection), AQ_EINVAL if
 * malformed. */
int smb_wire_smb1_negotiate(const uint8_t *p, size_t len, uint16_t *dialect);

/* ---- compounds (3.2.4.1.4, 3.3.5.2.7) ------------------------------------------------- */
struct smb_wire_msg {
	const uint8_t *p; /* the header */
	size_t len;       /* header, body and padding up to NextCommand */
	struct smb_wire_hdr hdr;
	const uint8_t *body;
	size_t body_len;
	unsigned index;   /* 0 for the first message of the frame */
};

struct smb_wire_chain {
	const uint8_t *p;
	size_t len;
	size_t off;
	unsigned index;
	bool done;
};

void smb_wire_chain_init(struct smb_wire_chain *ch, const uint8_t *frame, size_t len);
/* Next message: 1 with *m filled, 0 at the end, AQ_EINVAL if NextCommand is
 * not a multiple of 8, points inside the header or past the frame. Once it
 * returned an error or 0, later calls return 0. NextCommand only moves
 * forward, so a chain cannot loop; its length is bounded by the frame. */
int smb_wire_chain_next(struct smb_wire_chain *ch, struct smb_wire_msg *m);
/* A related operation (SMB2_FLAGS_RELATED_OPERATIONS) names the FileId of
 * the previous message's open with all ones (3.3.5.2.7.2). */
#define SMB_WIRE_FID_RELATED UINT64_MAX
/* Compound responses: pad the message whose header starts at prev_hdr_off
 * to 8 bytes and point its NextCommand at the end of buf, where the caller
 * writes the next header. */
void smb_wire_chain_link(struct ut_buf *buf, size_t prev_hdr_off);

/* ---- common body checks ----------------------------------------------------------------- */
/* The StructureSize a request body of command must carry (0 if unknown). */
uint16_t smb_wire_req_size(uint16_t command);
/* A cursor over m's body after checking its StructureSize is want and the
 * body holds its fixed part (StructureSize rounded down to even). */
int smb_wire_body(const struct smb_wire_msg *m, uint16_t want, struct smb_wire_cur *cur);
/* The (off, len) buffer of a message: AQ_OK with *out NULL if len is 0;
 * AQ_EINVAL unless min_off <= off and off + len <= m->len. */
int smb_wire_slice(const struct smb_wire_msg *m, uint32_t off, uint32_t len, size_t min_off, const uint8_t **out);

struct smb_wire_fid {
	uint64_t persistent;
	uint64_t volatile_;
};

#include "agent/smb/smb_wire_msg.h"

#endif
