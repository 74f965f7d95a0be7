/* agent_nvme: the pure half of the NVMe-oF shelf backend (agent_shelf_nvme.c).
 *
 * Everything here reads or builds bytes and text without touching the
 * system, so each piece is unit-tested (tests/agent/test_agent_nvme.c) and
 * fuzzed (fuzz/fuzz_agent_nvme.c): the --shelf spec, the connect string the
 * kernel's /dev/nvme-fabrics takes and the line it answers, the sysfs
 * "address" and NGUID/UUID files, the volume's namespace id derived from its
 * fsid, and the NVMe Reservation commands (Register, Acquire, Release, Report)
 * with the parser of the Report's extended data structure. The design is in
 * docs/internals/shelf.md.
 *
 * Return codes: AQ_OK, or AQ_EINVAL with the reason in msg (parsers of text
 * an operator wrote), or -EINVAL / -EPROTO (bytes from the kernel or the
 * target). Nothing is allocated.
 */
#ifndef AQ_AGENT_NVME_H
#define AQ_AGENT_NVME_H

#include <stddef.h>
#include <stdint.h>

#include "api/api_error.h"
#include "api/api_shelf.h"

/* The NVMe spec's cap on an NQN (NVMe Base 2.0, 4.5). */
#define AGENT_NVME_NQN_MAX API_SHELF_NQN_LEN  /* one contract with /v1/shelves */
#define AGENT_NVME_ADDR_MAX API_SHELF_ADDR_LEN
#define AGENT_NVME_PATH_MAX 512
/* Registrants a Reservation Report may list that we read (the buffer's cap). */
#define AGENT_NVME_RESV_MAX 32
#define AGENT_NVME_RESV_HDR 64   /* extended data structure: header and entry size */
#define AGENT_NVME_RESV_ENTRY 64
#define AGENT_NVME_RESV_BUF (AGENT_NVME_RESV_HDR + AGENT_NVME_RESV_MAX * AGENT_NVME_RESV_ENTRY)

enum agent_nvme_transport { AGENT_NVME_TCP = 1, AGENT_NVME_RDMA = 2 };
/* pr: an NVMe persistent reservation; lease: a disk lease in the namespace's
 * last MiB (agent_lease.h); none: unfenced, by the operator's choice. */
enum agent_nvme_fence { AGENT_NVME_FENCE_PR = 0, AGENT_NVME_FENCE_NONE = 1, AGENT_NVME_FENCE_LEASE = 2 };

/* --shelf nvmeof:TRANSPORT:ADDR:PORT:NQN[,fence=pr|lease|none][,lease=SECONDS][,provision=PROG]
 * ADDR is an IPv4 address, a host name, or [IPv6]. */
struct agent_nvme_spec {
	enum agent_nvme_transport transport;
	char addr[AGENT_NVME_ADDR_MAX + 1];
	unsigned port;
	char nqn[AGENT_NVME_NQN_MAX + 1];
	enum agent_nvme_fence fence;
	unsigned lease_s;   /* fence=lease: the lease timeout, lease=SECONDS (5..600; 10 by default) */
	char provision[AGENT_NVME_PATH_MAX]; /* "" none: namespaces are made out of band */
};

/* Parse spec (NUL-terminated). True prefix check: agent_nvme_is_spec. */
int agent_nvme_spec_parse(const char *spec, struct agent_nvme_spec *out, aq_msg *msg);
int agent_nvme_is_spec(const char *spec);
const char *agent_nvme_transport_name(enum agent_nvme_transport t);

/* The option string written to /dev/nvme-fabrics:
 * "transport=tcp,traddr=A,trsvcid=P,nqn=N,hostnqn=H,hostid=I". -ENOSPC if
 * cap is short. */
int agent_nvme_connect_string(const struct agent_nvme_spec *s, const char *hostnqn, const char *hostid, char *buf,
			      size_t cap);

/* The kernel's answer read back from the same descriptor:
 * "instance=N,cntlid=M\n". len bytes, need not be NUL-terminated. */
int agent_nvme_connect_reply(const char *buf, size_t len, int *instance);

/* A controller's sysfs "address" file ("traddr=A,trsvcid=P[,src_addr=S]\n"):
 * whether it names s's address and port. 1 yes, 0 no, -EINVAL malformed. */
int agent_nvme_address_match(const char *buf, size_t len, const struct agent_nvme_spec *s);

/* A volume's namespace id (NGUID, and the same 16 bytes as its UUID): the
 * bytes "AQFR" 0x00 0x01 0x00 0x00, then the fsid (up to 16 hex digits) as
 * 8 big-endian bytes. -EINVAL if fsid is not 1..16 hex digits. */
int agent_nvme_nsid_of_fsid(const char *fsid, uint8_t id[16]);
/* id as text, the way sysfs and nvmet configfs write it:
 * "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (cap >= 37). */
void agent_nvme_id_text(const uint8_t id[16], char *buf, size_t cap);
/* Parse sysfs "nguid" / "uuid" text (36 characters, a trailing newline
 * allowed; len bytes, need not be NUL-terminated). */
int agent_nvme_id_parse(const char *buf, size_t len, uint8_t id[16]);

/* A node's reservation key: a non-zero 64-bit hash of its name. */
uint64_t agent_nvme_key_of_node(const char *node);

/* NVMe I/O commands, as the fields of struct nvme_passthru_cmd (opcode,
 * cdw10, cdw11) and the data they carry (data_len bytes in data). */
struct agent_nvme_cmd {
	uint8_t opcode;
	uint32_t cdw10, cdw11;
	uint8_t data[16];
	uint32_t data_len;
};
#define AGENT_NVME_OP_RESV_REGISTER 0x0d
#define AGENT_NVME_OP_RESV_REPORT 0x0e
#define AGENT_NVME_OP_RESV_ACQUIRE 0x11
#define AGENT_NVME_OP_RESV_RELEASE 0x15
#define AGENT_NVME_RTYPE_WRITE_EXCLUSIVE 1
/* Status code of a Reservation Conflict (generic command status 0x83). */
#define AGENT_NVME_SC_RESV_CONFLICT 0x83

enum agent_nvme_rrega { AGENT_NVME_REGISTER = 0, AGENT_NVME_UNREGISTER = 1, AGENT_NVME_REPLACE = 2 };
enum agent_nvme_racqa { AGENT_NVME_ACQUIRE = 0, AGENT_NVME_PREEMPT = 1 };

/* Register, unregister or replace (iekey: ignore the current key). */
void agent_nvme_cmd_register(struct agent_nvme_cmd *c, enum agent_nvme_rrega act, int iekey, uint64_t crkey,
			     uint64_t nrkey);
/* Acquire (or preempt prkey's holder) a Write Exclusive reservation. */
void agent_nvme_cmd_acquire(struct agent_nvme_cmd *c, enum agent_nvme_racqa act, uint64_t crkey, uint64_t prkey);
/* Release our Write Exclusive reservation. */
void agent_nvme_cmd_release(struct agent_nvme_cmd *c, uint64_t crkey);
/* Report, extended data structure, into a buffer of len bytes (a multiple of 4). */
void agent_nvme_cmd_report(struct agent_nvme_cmd *c, uint32_t len);

/* A Reservation Report (extended data structure) as read. */
struct agent_nvme_resv {
	uint32_t gen;
	uint8_t rtype;          /* 0: no reservation */
	unsigned nregs;         /* registrants listed (at most AGENT_NVME_RESV_MAX) */
	uint64_t holder_key;    /* the key of the registrant that holds it (0: none) */
	uint64_t keys[AGENT_NVME_RESV_MAX];
};
/* Parse len bytes of a report. -EPROTO if the header's count of registrants
 * does not fit len or the cap (the count is checked before any entry is read). */
int agent_nvme_resv_parse(const uint8_t *buf, size_t len, struct agent_nvme_resv *out);

#endif
