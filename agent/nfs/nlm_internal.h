/* nlm_internal: what the files of the lock manager share (nlm.c: NLM4
 * procedures and the service; nlm_xdr.c: decoders and encoders; nlm_block.c:
 * blocked locks, the callback thread, GRANTED and SM_NOTIFY calls, the host
 * records; nsm.c: the NSM program). Not part of the contract (nlm.h). */
#ifndef AQ_AGENT_NLM_INTERNAL_H
#define AQ_AGENT_NLM_INTERNAL_H

#include "agent/nfs/nlm.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "agent/vol/vol_grace.h"
#include "agent/vol/vol_lock.h"

enum nlm_block_state { NLM_BL_WAIT = 0, NLM_BL_GRANTED = 1 };

/* A blocked LOCK: waiting in the table, or granted and not yet claimed. */
struct nlm_block {
	struct nlm_block *next;
	struct vol_lock_waiter w;      /* registered while waiting */
	struct nlm_srv *srv;
	uint64_t id;                   /* our cookie in GRANTED */
	enum nlm_block_state state;
	bool calling;                  /* a GRANTED call is out for it */
	uint64_t granted_ns;           /* when it was granted (for NLM_GRANT_UNCLAIMED_S) */
	uint64_t next_call_ns;         /* when to call GRANTED again */
	struct vol_lock_key key;
	struct vol_lock_owner owner;
	uint64_t start, len;           /* as the table takes them */
	unsigned flags;
	uint32_t svid;
	uint64_t l_off, l_len;         /* as the client sent them */
	uint8_t fh[NLM_FH_MAX];
	uint32_t fh_len;
	uint8_t oh[NLM_OBJ_MAX];
	uint32_t oh_len;
	char caller[NLM_NAME_MAX + 1];
	struct sockaddr_storage peer;
};

struct nlm_host_rec {
	char name[NLM_NAME_MAX + 1];
	struct sockaddr_storage addr;
};

struct nsm_mon {
	char name[NLM_NAME_MAX + 1];
	char my_name[NLM_NAME_MAX + 1];
	uint32_t my_prog, my_vers, my_proc;
	uint8_t priv[16];
};

struct nlm_srv {
	struct nlm_cfg cfg;
	char state_dir[1024];
	char my_name[256];
	struct vol_store *store;
	struct vol_lock_tab *locks;
	pthread_mutex_t mu;            /* blocks, hosts, mons; taken before the table's */
	struct nlm_block *blocks;
	size_t nblocks;
	uint64_t next_id;
	struct nlm_host_rec *hosts;    /* recorded for notification after a restart */
	size_t nhosts;
	struct nlm_host_rec *notify;   /* hosts of the previous run still to notify */
	size_t nnotify;
	struct nsm_mon mons[NSM_MON_MAX];
	size_t nmons;
	uint32_t nsm_state;            /* odd: up */
	uint64_t grace_end_ns;         /* 0: no grace period */
	/* the callback thread: woken through wmu/cv, never holding wmu while it
	 * calls the table (wake runs under the table's mutex) */
	pthread_mutex_t wmu;
	pthread_cond_t cv;
	bool kick, stop;
	pthread_t thr;
	bool thr_started;
};

/* nlm_xdr.c */
void nlm_enc_res(struct ut_buf *b, void *r, struct nfs_call *call);
void nlm_enc_void(struct ut_buf *b, void *r, struct nfs_call *call);
int nlm_dec_void(struct xdr_cur *c, void *a);
void nlm_put_lock(struct ut_buf *b, const char *caller, const uint8_t *fh, uint32_t fh_len, const uint8_t *oh,
		  uint32_t oh_len, uint32_t svid, uint64_t off, uint64_t len);

/* nlm.c */
uint64_t nlm_host_id(const void *name, size_t len);
bool nlm_grace(struct nlm_srv *s);

/* nlm_block.c */
/* A blocking LOCK that conflicts: register a wait (under s->mu). */
uint32_t nlm_block_add(struct nlm_srv *s, const struct nlm_block *proto);
/* The block of owner o on k for this range, or NULL (under s->mu). */
struct nlm_block *nlm_block_find(struct nlm_srv *s, const struct vol_lock_key *k, const struct vol_lock_owner *o,
				 uint64_t start, uint64_t len, unsigned flags);
/* Unlink and free b (under s->mu); its granted lock is the caller's business. */
void nlm_block_drop(struct nlm_srv *s, struct nlm_block *b);
/* Drop every block of host (all owners) or of owner o on k (under s->mu),
 * taking back granted ones when release is true. */
void nlm_block_drop_host(struct nlm_srv *s, uint64_t host);
void nlm_block_drop_owner(struct nlm_srv *s, const struct vol_lock_key *k, const struct vol_lock_owner *o);
/* GRANTED_RES: the client's answer to our callback with cookie id. */
void nlm_block_granted_res(struct nlm_srv *s, uint64_t id, uint32_t stat);
/* Record host (name, addr) for notification after a restart (under s->mu). */
void nlm_host_record(struct nlm_srv *s, const char *name, size_t len, const struct sockaddr *addr);
void nlm_host_forget(struct nlm_srv *s, const char *name, size_t len);
/* May a FREE_ALL or SM_NOTIFY from address from release host name? Not when
 * the host is recorded with another address (under s->mu). */
bool nlm_host_may_release(struct nlm_srv *s, const char *name, size_t len, const struct sockaddr *from);
int nlm_cb_start(struct nlm_srv *s);
void nlm_cb_stop(struct nlm_srv *s);
void nlm_hosts_load(struct nlm_srv *s);

#endif
