/* raw_rpc: a libnfs raw-RPC client for the live NFS tests: one connection
 * (raw_rpc) carrying MOUNT, NFSv3 and PORTMAP calls, a callback that keeps
 * what each reply says (raw_res), one blocking wrapper per procedure, and the
 * CHECK counters. Handles travel as struct raw_fh. */
#ifndef AQ_TESTS_RAW_RPC_H
#define AQ_TESTS_RAW_RPC_H

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>
#include <nfsc/libnfs-raw-portmap.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                  \
	do {                                                              \
		raw_checks++;                                                 \
		if (!(cond)) {                                            \
			raw_failures++;                                       \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                     \
			fputc('\n', stderr);                              \
		}                                                         \
	} while (0)

#define RAW_MAXE 256

struct raw_fh {
	uint32_t len;
	char data[64];
};

/* What a callback keeps of a reply (reply memory dies with the callback). */
struct raw_res {
	bool done;
	int rpc_status;
	uint32_t st;
	struct raw_fh fh;
	bool has_attr;
	fattr3 attr;
	uint32_t u32, count, eof;
	uint64_t tbytes, fbytes, abytes, tfiles, ffiles, afiles;
	uint64_t maxfilesize;
	char verf[8];
	char data[4096];
	uint32_t dlen;
	size_t nent;
	char names[RAW_MAXE][64];
	uint64_t cookies[RAW_MAXE];
	bool ent_fh[RAW_MAXE];
	uint64_t last_cookie;
};

/* One callback for everything: the proc decides how to read data. */
enum raw_kind { K_STATUS, K_MNT, K_GETPORT, K_GETATTR, K_LOOKUP, K_ACCESS, K_READLINK, K_READ,
	    K_WRITE, K_CREATE, K_READDIR, K_READDIRPLUS, K_FSSTAT, K_COMMIT, K_EXPORT, K_DUMP,
	    K_SETATTR, K_FSINFO };

struct raw_pending {
	enum raw_kind k;
	struct raw_res *r;
};

#define RAW_RUN(kind, r, call)                                                \
	do {                                                              \
		struct raw_pending pd_ = {kind, r};                           \
		memset(r, 0, sizeof(*r));                                 \
		if ((call) != 0) {                                        \
			fprintf(stderr, "queueing failed at line %d\n", __LINE__); \
			exit(1);                                          \
		}                                                         \
		raw_wait_for(r);                                              \
	} while (0)
#define RAW_PD (&pd_)

extern struct rpc_context *raw_rpc;   /* the current connection */
extern struct raw_res raw_R;          /* what the last wrapper call got */
extern int raw_failures, raw_checks;
extern int raw_timeout_ms;            /* a reply later than this ends the test */

void raw_cb(struct rpc_context *c, int status, void *data, void *priv);
/* A new connection to 127.0.0.1:port with AUTH_SYS uid, gid and ngids
 * supplementary groups (assign it to raw_rpc to use the wrappers on it). */
struct rpc_context *raw_connect(int port, uint32_t uid, uint32_t gid, uint32_t ngids, const uint32_t *gids);
/* Connect raw_rpc (replacing it) to 127.0.0.1:port with AUTH_SYS uid/gid. */
void raw_connect_as(int port, uint32_t uid, uint32_t gid);
/* Serve raw_rpc until r's reply came (exits the test after raw_timeout_ms). */
void raw_wait_for(struct raw_res *r);
/* A handle as libnfs sends it (points into f). */
nfs_fh3 raw_wire(const struct raw_fh *f);
/* The wrappers: queue the call, wait for its reply (into raw_R), return its
 * status; a handle the reply carries goes to out. */
uint32_t raw_mnt(const char *path, struct raw_fh *out);
uint32_t raw_getattr(const struct raw_fh *f, fattr3 *attr);
uint32_t raw_lookup(const struct raw_fh *dir, const char *name, struct raw_fh *out);
uint32_t raw_create(const struct raw_fh *dir, const char *name, createmode3 mode, const char *verf, struct raw_fh *out);
uint32_t raw_mkdir3(const struct raw_fh *dir, const char *name, struct raw_fh *out);
uint32_t raw_write3(const struct raw_fh *f, uint64_t off, const void *data, uint32_t len, stable_how how);
uint32_t raw_read3(const struct raw_fh *f, uint64_t off, uint32_t count);
uint32_t raw_setsize(const struct raw_fh *f, uint64_t size);
uint32_t raw_remove3(const struct raw_fh *dir, const char *name);
uint32_t raw_rmdir3(const struct raw_fh *dir, const char *name);
uint32_t raw_rename3(const struct raw_fh *fd, const char *fn, const struct raw_fh *td, const char *tn);
uint32_t raw_link3(const struct raw_fh *f, const struct raw_fh *dir, const char *name);
uint32_t raw_readdir3(const struct raw_fh *dir, uint64_t cookie, const char *verf, uint32_t count);
uint32_t raw_readdirplus3(const struct raw_fh *dir, uint64_t cookie, const char *verf, uint32_t dircount, uint32_t maxcount);
uint32_t raw_fsstat3(const struct raw_fh *f);
bool raw_has_name(const struct raw_res *r, const char *n);

#endif
