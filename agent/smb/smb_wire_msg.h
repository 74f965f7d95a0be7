/* smb_wire_msg: the request bodies smb_wire decodes and the response bodies
 * it encodes, one pair per SMB2 command (MS-SMB2 2.2.3 to 2.2.26). Included
 * by smb_wire.h; the contract there applies: decoders check StructureSize
 * and every (offset, length) against the message, return pointers into it;
 * encoders append to a struct ut_buf whose message header starts at
 * hdr_off.
 */
#ifndef AQ_AGENT_SMB_WIRE_MSG_H
#define AQ_AGENT_SMB_WIRE_MSG_H

/* ---- NEGOTIATE (2.2.3, 2.2.4) ------------------------------------------------ */
#define SMB2_DIALECT_202 0x0202u
#define SMB2_DIALECT_210 0x0210u
#define SMB2_DIALECT_300 0x0300u
#define SMB2_DIALECT_302 0x0302u
#define SMB2_DIALECT_311 0x0311u

#define SMB2_NEGOTIATE_SIGNING_ENABLED 0x0001u
#define SMB2_NEGOTIATE_SIGNING_REQUIRED 0x0002u

#define SMB2_GLOBAL_CAP_DFS 0x00000001u
#define SMB2_GLOBAL_CAP_LEASING 0x00000002u
#define SMB2_GLOBAL_CAP_LARGE_MTU 0x00000004u
#define SMB2_GLOBAL_CAP_MULTI_CHANNEL 0x00000008u
#define SMB2_GLOBAL_CAP_PERSISTENT_HANDLES 0x00000010u
#define SMB2_GLOBAL_CAP_DIRECTORY_LEASING 0x00000020u
#define SMB2_GLOBAL_CAP_ENCRYPTION 0x00000040u

#define SMB2_PREAUTH_INTEGRITY_CAPABILITIES 0x0001u
#define SMB2_ENCRYPTION_CAPABILITIES 0x0002u
#define SMB2_COMPRESSION_CAPABILITIES 0x0003u
#define SMB2_NETNAME_NEGOTIATE_CONTEXT_ID 0x0005u
#define SMB2_TRANSPORT_CAPABILITIES 0x0006u
#define SMB2_RDMA_TRANSFORM_CAPABILITIES 0x0007u
#define SMB2_SIGNING_CAPABILITIES 0x0008u

#define SMB2_PREAUTH_INTEGRITY_SHA512 0x0001u
#define SMB2_ENCRYPTION_AES128_CCM 0x0001u
#define SMB2_ENCRYPTION_AES128_GCM 0x0002u
#define SMB2_ENCRYPTION_AES256_CCM 0x0003u
#define SMB2_ENCRYPTION_AES256_GCM 0x0004u
#define SMB2_SIGNING_HMAC_SHA256 0x0000u
#define SMB2_SIGNING_AES_CMAC 0x0001u
#define SMB2_SIGNING_AES_GMAC 0x0002u
#define SMB_WIRE_NONE 0xFFFFu /* no algorithm chosen */
#define SMB_WIRE_SALT_LEN 32u

struct smb_wire_negotiate_req {
	uint16_t dialect_count;
	uint16_t dialects[SMB_WIRE_DIALECT_MAX];
	uint16_t security_mode;
	uint32_t capabilities;
	uint8_t client_guid[16];
	/* Negotiate contexts (only when dialects include 3.1.1). Known ids in
	 * the client's order of preference; unknown ids and unknown contexts
	 * are skipped. */
	bool has_preauth, has_encryption, has_signing, has_compression;
	bool sha512;                 /* PREAUTH offers SHA-512 */
	uint8_t cipher_count;
	uint16_t ciphers[4];
	uint8_t signing_count;
	uint16_t signing[3];
};

/* AQ_EINVAL: DialectCount 0 or past the body, a context past the frame, a
 * duplicate PREAUTH/ENCRYPTION/COMPRESSION/SIGNING context, an empty
 * algorithm list; AQ_ETOOBIG: more than SMB_WIRE_DIALECT_MAX dialects. */
int smb_wire_negotiate_req_decode(const struct smb_wire_msg *m, struct smb_wire_negotiate_req *r);
/* Highest dialect both offer among those in the mask (bit 0 = 2.0.2, 1 = 2.1,
 * 2 = 3.0, 3 = 3.0.2, 4 = 3.1.1); 0 if none. */
uint16_t smb_wire_negotiate_pick_dialect(const struct smb_wire_negotiate_req *r, unsigned mask);
/* The client's first choice among ours (ours: bitmask of 1 << id), or
 * SMB_WIRE_NONE. */
uint16_t smb_wire_negotiate_pick(const uint16_t *ids, unsigned n, unsigned ours);

struct smb_wire_negotiate_rsp {
	uint16_t security_mode;
	uint16_t dialect;
	uint8_t server_guid[16];
	uint32_t capabilities;
	uint32_t max_transact, max_read, max_write;
	uint64_t system_time;  /* FILETIME */
	uint64_t start_time;
	const uint8_t *sec_blob;
	size_t sec_len;
	/* 3.1.1 contexts: sent when dialect is 3.1.1 */
	uint8_t salt[SMB_WIRE_SALT_LEN];
	uint16_t cipher;       /* SMB_WIRE_NONE: no ENCRYPTION context */
	uint16_t signing;      /* SMB_WIRE_NONE: no SIGNING context */
};

void smb_wire_negotiate_rsp_encode(struct ut_buf *buf, size_t hdr_off, const struct smb_wire_negotiate_rsp *r);

/* ---- SESSION_SETUP (2.2.5, 2.2.6), LOGOFF, TREE_* ------------------------------ */
#define SMB2_SESSION_FLAG_BINDING 0x01u
#define SMB2_SESSION_FLAG_IS_GUEST 0x0001u
#define SMB2_SESSION_FLAG_IS_NULL 0x0002u
#define SMB2_SESSION_FLAG_ENCRYPT_DATA 0x0004u

struct smb_wire_session_setup_req {
	uint8_t flags;
	uint8_t security_mode;
	uint32_t capabilities;
	uint64_t previous_session_id;
	const uint8_t *blob;
	size_t blob_len;
};

int smb_wire_session_setup_req_decode(const struct smb_wire_msg *m, struct smb_wire_session_setup_req *r);
void smb_wire_session_setup_rsp_encode(struct ut_buf *buf, size_t hdr_off, uint16_t session_flags,
				       const uint8_t *blob, size_t blob_len);

/* Bodies that are just StructureSize 4 and Reserved: LOGOFF,
 * TREE_DISCONNECT, ECHO, CANCEL requests. */
int smb_wire_empty_req_decode(const struct smb_wire_msg *m);
/* And the 4-byte responses (LOGOFF, TREE_DISCONNECT, ECHO, FLUSH, LOCK). */
void smb_wire_empty_rsp_encode(struct ut_buf *buf);

#define SMB2_TREE_CONNECT_FLAG_EXTENSION_PRESENT 0x0004u
#define SMB2_SHARE_TYPE_DISK 0x01u
#define SMB2_SHARE_TYPE_PIPE 0x02u
#define SMB2_SHAREFLAG_ENCRYPT_DATA 0x00008000u
#define SMB2_SHAREFLAG_ACCESS_BASED_DIRECTORY_ENUM 0x00000800u
#define SMB2_SHARE_CAP_CONTINUOUS_AVAILABILITY 0x00000010u

struct smb_wire_tree_connect_req {
	uint16_t flags;
	const uint8_t *path;  /* UTF-16LE "\\server\share" */
	size_t path_len;
};

/* AQ_EUNIMPL for the 3.1.1 extension form (remoted identity, redirection). */
int smb_wire_tree_connect_req_decode(const struct smb_wire_msg *m, struct smb_wire_tree_connect_req *r);

struct smb_wire_tree_connect_rsp {
	uint8_t share_type;
	uint32_t share_flags;
	uint32_t capabilities;
	uint32_t maximal_access;
};

void smb_wire_tree_connect_rsp_encode(struct ut_buf *buf, const struct smb_wire_tree_connect_rsp *r);

/* ---- attributes shared by CREATE, CLOSE and FILE_NETWORK_OPEN_INFORMATION ---------- */
struct smb_wire_attrs {
	uint64_t creation, last_access, last_write, change; /* FILETIME */
	uint64_t allocation, eof;
	uint32_t attributes;
};

/* The four times, AllocationSize, EndOfFile and FileAttributes (52 bytes),
 * in the order all three use (MS-SMB2 2.2.14, 2.2.16, MS-FSCC 2.4.34). */
void smb_wire_attrs_encode(struct ut_buf *buf, const struct smb_wire_attrs *a);

/* ---- CREATE (2.2.13, 2.2.14) -------------------------------------------------------- */
struct smb_wire_create_ctx {
	const uint8_t *name;  /* a 4-character tag ("MxAc") or a 16-byte GUID */
	size_t name_len;
	const uint8_t *data;
	size_t data_len;
};

struct smb_wire_create_req {
	uint8_t security_flags;
	uint8_t oplock_level;
	uint32_t impersonation;
	uint32_t desired_access;
	uint32_t file_attributes;
	uint32_t share_access;
	uint32_t disposition;
	uint32_t options;
	const uint8_t *name;  /* UTF-16LE, relative to the share root */
	size_t name_len;
	unsigned ctx_count;
	struct smb_wire_create_ctx ctx[SMB_WIRE_CREATE_CTX_MAX];
};

/* AQ_EINVAL for an odd name, a context chain whose Next is not 8-aligned or
 * leaves the buffer, a context name or data outside its context, a
 * duplicate name; AQ_ETOOBIG past SMB_WIRE_CREATE_CTX_MAX contexts or a name
 * over SMB_WIRE_NAME_MAX. */
int smb_wire_create_req_decode(const struct smb_wire_msg *m, struct smb_wire_create_req *r);
const struct smb_wire_create_ctx *smb_wire_create_ctx_find(const struct smb_wire_create_req *r, const char *tag);

/* Create context payloads (2.2.13.2.x). */
struct smb_wire_lease {
	uint8_t key[16];
	uint32_t state;
	uint32_t flags;
	uint8_t parent_key[16]; /* v2 only */
	uint16_t epoch;         /* v2 only */
	bool v2;
};
int smb_wire_lease_decode(const struct smb_wire_create_ctx *c, struct smb_wire_lease *l);
void smb_wire_lease_encode(struct ut_buf *buf, const struct smb_wire_lease *l);

struct smb_wire_durable_v2 {
	uint32_t timeout;
	uint32_t flags;         /* SMB2_DHANDLE_FLAG_PERSISTENT 0x2 */
	uint8_t create_guid[16];
	struct smb_wire_fid fid; /* reconnect (DH2C) only */
};
/* SMB2_CREATE_TIMEWARP_TOKEN (2.2.13.2.7): 8 bytes, the FILETIME of the
 * previous version to open. */
#define SMB2_CREATE_TIMEWARP_TOKEN "TWrp"
/* SMB2_CREATE_APP_INSTANCE_ID (2.2.13.2.13: StructureSize 20, Reserved,
 * the 16-byte AppInstanceId) and _VERSION (2.2.13.2.15: StructureSize 24,
 * Reserved, Padding, AppInstanceVersionHigh and Low): GUID-named. */
#define SMB2_CREATE_APP_INSTANCE_ID "\x45\xBC\xA6\x6A\xEF\xA7\xF7\x4A\x90\x08\xFA\x46\x2E\x14\x4D\x74"
#define SMB2_CREATE_APP_INSTANCE_VERSION "\xB9\x82\xD0\xB7\x3B\x56\x07\x4F\xA0\x7B\x52\x4A\x81\x16\xA0\x10"

/* "DH2Q" (request) and "DH2C" (reconnect); "DHnC" fills fid only. */
int smb_wire_durable_decode(const struct smb_wire_create_ctx *c, struct smb_wire_durable_v2 *d);

struct smb_wire_create_rsp_ctx {
	const char *name;
	const uint8_t *data;
	size_t data_len;
};

struct smb_wire_create_rsp {
	uint8_t oplock_level;
	uint8_t flags;
	uint32_t action;
	struct smb_wire_attrs attrs;
	struct smb_wire_fid fid;
	unsigned ctx_count;
	const struct smb_wire_create_rsp_ctx *ctx;
};

void smb_wire_create_rsp_encode(struct ut_buf *buf, size_t hdr_off, const struct smb_wire_create_rsp *r);

/* ---- CLOSE, FLUSH (2.2.15 to 2.2.18) ----------------------------------------------- */
#define SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB 0x0001u

struct smb_wire_close_req {
	uint16_t flags;
	struct smb_wire_fid fid;
};
int smb_wire_close_req_decode(const struct smb_wire_msg *m, struct smb_wire_close_req *r);

struct smb_wire_close_rsp {
	uint16_t flags;             /* POSTQUERY_ATTRIB: attrs are sent, else zeros */
	struct smb_wire_attrs attrs;
};
void smb_wire_close_rsp_encode(struct ut_buf *buf, const struct smb_wire_close_rsp *r);

int smb_wire_flush_req_decode(const struct smb_wire_msg *m, struct smb_wire_fid *fid);

/* ---- READ, WRITE (2.2.19 to 2.2.22) ------------------------------------------------- */
struct smb_wire_read_req {
	uint8_t flags;
	uint32_t length;
	uint64_t offset;
	struct smb_wire_fid fid;
	uint32_t minimum;
	uint32_t channel;
};
/* AQ_EINVAL for a channel other than NONE (no RDMA here); AQ_ETOOBIG for
 * a Length over SMB_WIRE_IO_MAX (checked here so that no caller sizes a
 * buffer from it first). */
int smb_wire_read_req_decode(const struct smb_wire_msg *m, struct smb_wire_read_req *r);
/* The fixed part of a READ response; the caller appends data_len bytes (or
 * sends them from another buffer right after). */
void smb_wire_read_rsp_encode(struct ut_buf *buf, size_t hdr_off, uint32_t data_len, uint32_t remaining);

struct smb_wire_write_req {
	uint32_t flags;
	uint64_t offset;
	struct smb_wire_fid fid;
	uint32_t channel;
	const uint8_t *data;
	size_t data_len;
};
int smb_wire_write_req_decode(const struct smb_wire_msg *m, struct smb_wire_write_req *r);
void smb_wire_write_rsp_encode(struct ut_buf *buf, uint32_t count);

/* ---- LOCK (2.2.26) ----------------------------------------------------------------------- */
#define SMB2_LOCKFLAG_SHARED 0x01u
#define SMB2_LOCKFLAG_EXCLUSIVE 0x02u
#define SMB2_LOCKFLAG_UNLOCK 0x04u
#define SMB2_LOCKFLAG_FAIL_IMMEDIATELY 0x10u

struct smb_wire_lock_elem {
	uint64_t offset, length;
	uint32_t flags;
};
struct smb_wire_lock_req {
	uint32_t sequence; /* LockSequenceNumber (4 bits) and Index (28 bits) */
	struct smb_wire_fid fid;
	uint16_t count;
	struct smb_wire_lock_elem locks[SMB_WIRE_LOCK_MAX];
};
/* AQ_EINVAL: LockCount 0 or past the message; AQ_ETOOBIG past SMB_WIRE_LOCK_MAX. */
int smb_wire_lock_req_decode(const struct smb_wire_msg *m, struct smb_wire_lock_req *r);

/* ---- IOCTL (2.2.31, 2.2.32) ---------------------------------------------------------------- */
#define SMB2_0_IOCTL_IS_FSCTL 0x00000001u
#define FSCTL_VALIDATE_NEGOTIATE_INFO 0x00140204u
#define FSCTL_QUERY_NETWORK_INTERFACE_INFO 0x001401FCu
#define FSCTL_SRV_REQUEST_RESUME_KEY 0x00140078u
#define FSCTL_SRV_COPYCHUNK 0x001440F2u
#define FSCTL_SRV_COPYCHUNK_WRITE 0x001480F2u
#define FSCTL_SET_SPARSE 0x000900C4u
#define FSCTL_SET_ZERO_DATA 0x000980C8u
#define FSCTL_QUERY_ALLOCATED_RANGES 0x000940CFu
#define FSCTL_SRV_ENUMERATE_SNAPSHOTS 0x00144064u /* previous versions (smb_prev.c) */
#define FSCTL_GET_COMPRESSION 0x0009003Cu
#define FSCTL_SET_COMPRESSION 0x0009C040u
#define FSCTL_GET_OBJECT_ID 0x0009009Cu
#define FSCTL_CREATE_OR_GET_OBJECT_ID 0x000900C0u
#define FSCTL_DUPLICATE_EXTENTS_TO_FILE 0x00098344u /* where the shelf clones: smb_clone.c */
#define FSCTL_DUPLICATE_EXTENTS_TO_FILE_EX 0x000983E8u

struct smb_wire_ioctl_req {
	uint32_t ctl_code;
	struct smb_wire_fid fid;
	const uint8_t *input;
	size_t input_len;
	uint32_t max_input_response;
	uint32_t max_output_response;
	uint32_t flags;
};
int smb_wire_ioctl_req_decode(const struct smb_wire_msg *m, struct smb_wire_ioctl_req *r);
void smb_wire_ioctl_rsp_encode(struct ut_buf *buf, size_t hdr_off, uint32_t ctl_code,
			       const struct smb_wire_fid *fid, const uint8_t *out, size_t out_len);

struct smb_wire_validate_negotiate {
	uint32_t capabilities;
	uint8_t guid[16];
	uint16_t security_mode;
	uint16_t dialect_count;
	uint16_t dialects[SMB_WIRE_DIALECT_MAX];
};
int smb_wire_validate_negotiate_decode(const uint8_t *p, size_t len, struct smb_wire_validate_negotiate *v);
/* The 24-byte VALIDATE_NEGOTIATE_INFO response (2.2.32.6), appended to buf
 * as an IOCTL output. */
void smb_wire_validate_negotiate_encode(struct ut_buf *buf, uint32_t capabilities, const uint8_t guid[16],
					uint16_t security_mode, uint16_t dialect);

/* The two 64-bit fields of FILE_ZERO_DATA_INFORMATION (FileOffset,
 * BeyondFinalZero: MS-FSCC 2.3.85) and FILE_ALLOCATED_RANGE_BUFFER
 * (FileOffset, Length: 2.3.52), the inputs of FSCTL_SET_ZERO_DATA and
 * FSCTL_QUERY_ALLOCATED_RANGES: AQ_OK, AQ_EINVAL when len is under 16
 * (bytes past them are ignored, as Windows and Samba do). */
#define SMB_WIRE_RANGE_LEN 16u
int smb_wire_range_decode(const uint8_t *p, size_t len, uint64_t *first, uint64_t *second);

/* DUPLICATE_EXTENTS_DATA (MS-FSCC 2.3.8: the source's FileId, source and
 * target offsets, byte count; 40 bytes) or, ex set, DUPLICATE_EXTENTS_DATA_EX
 * (2.3.9: StructureSize 0x38, the same, Flags, Reserved; 56 bytes). Bytes
 * past them are ignored. AQ_EINVAL: too short, or the EX's size is wrong. */
#define SMB_WIRE_DUP_LEN 40u
#define SMB_WIRE_DUP_EX_LEN 56u
struct smb_wire_dup {
	struct smb_wire_fid src;
	uint64_t src_off, dst_off, len;
	uint32_t flags;
};
int smb_wire_dup_decode(const uint8_t *p, size_t len, bool ex, struct smb_wire_dup *out);

/* SRV_COPYCHUNK_COPY (2.2.31.1), the input of FSCTL_SRV_COPYCHUNK and
 * _WRITE. The limits are Windows' and Samba's (3.3.3): past them the
 * server answers INVALID_PARAMETER with the limits in the response. */
#define SMB_WIRE_COPYCHUNK_MAX 256u                 /* chunks in one request */
#define SMB_WIRE_COPYCHUNK_LEN_MAX (1u << 20)       /* bytes in one chunk */
#define SMB_WIRE_COPYCHUNK_TOTAL_MAX (16u << 20)    /* bytes in one request */
#define SMB_WIRE_RESUME_KEY_LEN 24u
struct smb_wire_chunk {
	uint64_t src_off, dst_off;
	uint32_t len;
};
struct smb_wire_copychunk {
	uint8_t key[SMB_WIRE_RESUME_KEY_LEN];
	uint32_t count;              /* ChunkCount as sent */
	const uint8_t *chunks;       /* count x 24 bytes inside the input (count <= SMB_WIRE_COPYCHUNK_MAX) */
};
/* AQ_OK; AQ_ETOOBIG when ChunkCount is past SMB_WIRE_COPYCHUNK_MAX (the
 * chunks are then not looked at); AQ_EINVAL when the input is shorter than
 * its header and chunks. Nothing is allocated. */
int smb_wire_copychunk_decode(const uint8_t *p, size_t len, struct smb_wire_copychunk *cc);
/* Chunk i (< cc->count) of a decoded request. */
void smb_wire_copychunk_chunk(const struct smb_wire_copychunk *cc, uint32_t i, struct smb_wire_chunk *out);

/* ---- QUERY_DIRECTORY, CHANGE_NOTIFY, QUERY_INFO, SET_INFO (2.2.33 to 2.2.40) --------------- */
#define SMB2_RESTART_SCANS 0x01u
#define SMB2_RETURN_SINGLE_ENTRY 0x02u
#define SMB2_INDEX_SPECIFIED 0x04u
#define SMB2_REOPEN 0x10u

struct smb_wire_query_dir_req {
	uint8_t info_class;
	uint8_t flags;
	uint32_t file_index;
	struct smb_wire_fid fid;
	const uint8_t *pattern;  /* UTF-16LE */
	size_t pattern_len;
	uint32_t output_len;
};
int smb_wire_query_dir_req_decode(const struct smb_wire_msg *m, struct smb_wire_query_dir_req *r);
/* QUERY_DIRECTORY, CHANGE_NOTIFY and QUERY_INFO responses share one shape:
 * StructureSize 9, OutputBufferOffset, OutputBufferLength, Buffer. */
void smb_wire_output_rsp_encode(struct ut_buf *buf, size_t hdr_off, const uint8_t *out, size_t out_len);

#define SMB2_WATCH_TREE 0x0001u
struct smb_wire_notify_req {
	uint16_t flags;
	uint32_t output_len;
	struct smb_wire_fid fid;
	uint32_t filter;
};
int smb_wire_notify_req_decode(const struct smb_wire_msg *m, struct smb_wire_notify_req *r);

#define SMB2_0_INFO_FILE 0x01u
#define SMB2_0_INFO_FILESYSTEM 0x02u
#define SMB2_0_INFO_SECURITY 0x03u
#define SMB2_0_INFO_QUOTA 0x04u

struct smb_wire_query_info_req {
	uint8_t info_type;
	uint8_t info_class;
	uint32_t output_len;
	const uint8_t *input;
	size_t input_len;
	uint32_t additional;
	uint32_t flags;
	struct smb_wire_fid fid;
};
int smb_wire_query_info_req_decode(const struct smb_wire_msg *m, struct smb_wire_query_info_req *r);

struct smb_wire_set_info_req {
	uint8_t info_type;
	uint8_t info_class;
	const uint8_t *data;
	size_t data_len;
	uint32_t additional;
	struct smb_wire_fid fid;
};
int smb_wire_set_info_req_decode(const struct smb_wire_msg *m, struct smb_wire_set_info_req *r);
void smb_wire_set_info_rsp_encode(struct ut_buf *buf);
/* FILE_RENAME_INFORMATION_TYPE_2 and FILE_LINK_INFORMATION_TYPE_2 (MS-FSCC
 * 2.4.37.2, 2.4.27.2; one layout): ReplaceIfExists, 7 reserved, RootDirectory
 * (0 for SMB2, not looked at, as Samba), FileNameLength, the UTF-16 name from
 * the share root. name points into p; the length is checked against what p
 * holds before anything is read (AQ_EINVAL: short, or a name past the end). */
struct smb_wire_name_info {
	bool replace;
	const uint8_t *name;
	uint32_t name_len;
};
int smb_wire_name_info_decode(const uint8_t *p, size_t len, struct smb_wire_name_info *out);

/* ---- OPLOCK_BREAK (2.2.23 to 2.2.25) ------------------------------------------------------ */
#define SMB2_OPLOCK_LEVEL_NONE 0x00u
#define SMB2_OPLOCK_LEVEL_II 0x01u
#define SMB2_OPLOCK_LEVEL_EXCLUSIVE 0x08u
#define SMB2_OPLOCK_LEVEL_BATCH 0x09u
#define SMB2_OPLOCK_LEVEL_LEASE 0xFFu
#define SMB2_LEASE_READ_CACHING 0x01u
#define SMB2_LEASE_HANDLE_CACHING 0x02u
#define SMB2_LEASE_WRITE_CACHING 0x04u
#define SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED 0x01u

/* An acknowledgment is of an oplock (StructureSize 24) or a lease (36). */
struct smb_wire_break_ack {
	bool lease;
	uint8_t oplock_level;      /* oplock */
	struct smb_wire_fid fid;   /* oplock */
	uint8_t lease_key[16];     /* lease */
	uint32_t lease_state;      /* lease */
};
int smb_wire_break_ack_decode(const struct smb_wire_msg *m, struct smb_wire_break_ack *a);
/* Server-to-client notifications (sent with MessageId 0xFFFF...) and the
 * responses to acknowledgments. */
void smb_wire_oplock_break_encode(struct ut_buf *buf, uint8_t level, const struct smb_wire_fid *fid);
void smb_wire_lease_break_encode(struct ut_buf *buf, uint16_t epoch, uint32_t flags, const uint8_t key[16],
				 uint32_t current, uint32_t new_state);
void smb_wire_lease_ack_rsp_encode(struct ut_buf *buf, const uint8_t key[16], uint32_t state);

/* ---- ERROR response (2.2.2) ----------------------------------------------------------------- */
void smb_wire_error_rsp_encode(struct ut_buf *buf);

#endif
