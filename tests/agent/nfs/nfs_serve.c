/* nfs_serve: a test server over libaqnfs and libaqnfs4: serves directories
 * as NFSv3 and NFSv4.1 exports on one port until SIGTERM/SIGINT (v3only: a
 * volume whose protocols are NFSV3 alone; nov4rule: its rule has nfsv4 false),
 * with NLM v4 and NSM (agent/nfs/nlm.h; --nlm-state-dir records hosts for a
 * grace period of --nlm-grace-s after a restart, --nlm-pmap-port is where
 * clients' portmappers answer GRANTED callbacks' GETPORT, default 111).
 *
 *   nfs_serve --listen 127.0.0.1:PORT --key HEX64 [--workers N] [--port-file F] [--nfs4-max-slots N]
 *             [--nfs4-lease-s N] [--nlm-state-dir DIR] [--nlm-grace-s N] [--nlm-pmap-port N]
 *             --export /name=DIR[,capacity=BYTES][,ro][,clients=CIDR,...]
 *                      [,squash=root|all][,anonuid=N][,anongid=N][,mibps=N][,v3only][,nov4rule] (repeatable)
 * mibps: the export's QoS limit in MiB/s.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nfs/nfs_srv.h"
#include "agent/nfs4/nfs4.h"
#include "agent/nfs/nlm.h"
#include "util/ut_hash.h"
#include "util/ut_hex.h"

#define MAX_EXPORTS 16

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || end == s)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_key(const char *hex, uint8_t *key)
{
	if (strlen(hex) != 2 * VOL_KEY_LEN)
		return -EINVAL;
	return ut_hex_decode(hex, 2 * VOL_KEY_LEN, key, VOL_KEY_LEN, NULL) == AQ_OK ? 0 : -EINVAL;
}

static int copy(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (n >= cap)
		return -EINVAL;
	memcpy(dst, src, n + 1);
	return 0;
}

/* "/name=DIR,opt,opt..." -> cfg */
static int parse_export(const char *spec, struct vol_export_cfg *cfg)
{
	char buf[8192];
	char *eq, *opts, *tok, *next;
	struct vol_rule *r = &cfg->rules[0];
	uint64_t v;
	bool in_clients = false;

	memset(cfg, 0, sizeof(*cfg));
	cfg->protocols = API_INTENT_NFSV3 | API_INTENT_NFSV4; /* both versions, unless v3only */
	if (snprintf(buf, sizeof(buf), "%s", spec) >= (int)sizeof(buf))
		return -EINVAL;
	eq = strchr(buf, '=');
	if (!eq || buf[0] != '/')
		return -EINVAL;
	*eq = '\0';
	opts = strchr(eq + 1, ',');
	if (opts)
		*opts++ = '\0';
	if (copy(cfg->path, sizeof(cfg->path), buf) || copy(cfg->id, sizeof(cfg->id), buf + 1) ||
	    copy(cfg->root, sizeof(cfg->root), eq + 1))
		return -EINVAL;
	cfg->fsid = ut_hash_fnv64_str(buf);
	cfg->capacity = 1ull << 40;
	cfg->nrules = 1;
	snprintf(r->clients, sizeof(r->clients), "0.0.0.0/0");
	r->access = VOL_ACCESS_RW;
	r->squash = VOL_SQUASH_NONE;
	r->anon_uid = r->anon_gid = 65534;
	for (tok = opts; tok && *tok; tok = next) {
		next = tok + strcspn(tok, ",");
		if (*next)
			*next++ = '\0';
		if (!*tok)
			continue;
		if (in_clients && tok[0] >= '0' && tok[0] <= '9') {
			size_t l = strlen(r->clients);

			snprintf(r->clients + l, sizeof(r->clients) - l, ",%s", tok);
			continue;
		}
		in_clients = false;
		if (!strcmp(tok, "v3only")) {
			cfg->protocols = API_INTENT_NFSV3;
			continue;
		}
		if (!strcmp(tok, "nov4rule")) {
			r->not_for |= VOL_PROTO_NFSV4;
			continue;
		}
		if (!strcmp(tok, "ro")) {
			r->access = VOL_ACCESS_RO;
		} else if (!strcmp(tok, "rw")) {
			r->access = VOL_ACCESS_RW;
		} else if (!strncmp(tok, "capacity=", 9)) {
			if (parse_u64(tok + 9, &cfg->capacity))
				return -EINVAL;
		} else if (!strncmp(tok, "clients=", 8)) {
			if (copy(r->clients, sizeof(r->clients), tok + 8))
				return -EINVAL;
			in_clients = true;
		} else if (!strcmp(tok, "squash=root")) {
			r->squash = VOL_SQUASH_ROOT;
		} else if (!strcmp(tok, "squash=all")) {
			r->squash = VOL_SQUASH_ALL;
		} else if (!strcmp(tok, "squash=none")) {
			r->squash = VOL_SQUASH_NONE;
		} else if (!strncmp(tok, "anonuid=", 8)) {
			if (parse_u64(tok + 8, &v) || v > UINT32_MAX)
				return -EINVAL;
			r->anon_uid = (uint32_t)v;
		} else if (!strncmp(tok, "mibps=", 6)) {
			if (parse_u64(tok + 6, &v) || v > (UINT64_MAX >> 20))
				return -EINVAL;
			cfg->qos.bytes_per_s = v << 20;
		} else if (!strncmp(tok, "anongid=", 8)) {
			if (parse_u64(tok + 8, &v) || v > UINT32_MAX)
				return -EINVAL;
			r->anon_gid = (uint32_t)v;
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct vol_export_cfg cfg[MAX_EXPORTS];
	const char *listen = "127.0.0.1:2049", *portfile = NULL;
	uint8_t key[VOL_KEY_LEN] = {0};
	bool have_key = false;
	size_t n = 0;
	uint64_t workers = 8;
	struct vol_store *store = NULL;
	struct nfs_srv *srv = NULL;
	struct nfs4_srv *v4 = NULL;
	uint64_t slots = 0, lease = 0, grace = 0, pmap = 0;
	const char *nlm_dir = NULL;
	struct nlm_srv *nlm = NULL;
	sigset_t set;
	int i, sig, rc = 1;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			goto usage;
		if (!strcmp(a, "--listen"))
			listen = v;
		else if (!strcmp(a, "--key") && parse_key(v, key) == 0)
			have_key = true;
		else if (!strcmp(a, "--port-file"))
			portfile = v;
		else if (!strcmp(a, "--workers") && parse_u64(v, &workers) == 0 && workers < 1024)
			;
		else if (!strcmp(a, "--nfs4-max-slots") && parse_u64(v, &slots) == 0 && slots <= NFS4_SLOTS_MAX)
			;
		else if (!strcmp(a, "--nfs4-lease-s") && parse_u64(v, &lease) == 0 && lease >= 1 && lease <= 3600)
			;
		else if (!strcmp(a, "--nlm-state-dir"))
			nlm_dir = v;
		else if (!strcmp(a, "--nlm-grace-s") && parse_u64(v, &grace) == 0 && grace <= 3600)
			;
		else if (!strcmp(a, "--nlm-pmap-port") && parse_u64(v, &pmap) == 0 && pmap <= 65535)
			;
		else if (!strcmp(a, "--export") && n < MAX_EXPORTS && parse_export(v, &cfg[n]) == 0)
			n++;
		else
			goto usage;
		i++;
	}
	if (!have_key)
		goto usage;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* threads inherit the mask */
	if ((rc = vol_store_new(key, &store)) != 0 || (rc = vol_store_set(store, cfg, n)) != 0 ||
	    (rc = nfs_srv_new(listen, store, (unsigned)workers, &srv)) != 0 ||
	    (rc = nfs4_srv_new(&(struct nfs4_cfg){ .max_slots = (unsigned)slots, .lease_s = (unsigned)lease }, &v4)) != 0 ||
	    (rc = nfs_srv_add_prog(srv, &nfs4_prog, v4)) != 0 ||
	    (rc = nlm_srv_new(&(struct nlm_cfg){ .state_dir = nlm_dir, .grace_s = (unsigned)grace,
						 .pmap_port = (uint16_t)pmap }, store, &nlm)) != 0 ||
	    (rc = nfs_srv_add_prog(srv, &nlm_prog, nlm)) != 0 || (rc = nfs_srv_add_prog(srv, &nsm_prog, nlm)) != 0 ||
	    (rc = nfs_srv_start(srv)) != 0) {
		fprintf(stderr, "nfs_serve: %s\n", strerror(-rc));
		rc = 1;
		goto out;
	}
	fprintf(stderr, "nfs_serve: listening on port %u, %zu export(s)\n", nfs_srv_port(srv), n);
	if (portfile) {
		FILE *f = fopen(portfile, "w");

		if (!f) {
			rc = 1;
			goto out;
		}
		fprintf(f, "%u\n", nfs_srv_port(srv));
		fclose(f);
	}
	sigwait(&set, &sig);
	rc = 0;
out:
	nfs_srv_free(srv);
	nfs4_srv_free(v4);
	nlm_srv_free(nlm);
	vol_store_free(store);
	return rc;
usage:
	fprintf(stderr, "usage: nfs_serve --listen HOST:PORT --key HEX64 [--workers N] [--port-file F] [--nfs4-max-slots N]"
			" [--nfs4-lease-s N] [--nlm-state-dir DIR] [--nlm-grace-s N] [--nlm-pmap-port N]\n"
			"       --export /name=DIR[,capacity=BYTES][,ro][,clients=CIDR,...][,squash=root|all]"
			"[,anonuid=N][,anongid=N][,mibps=N] ...\n");
	return 2;
}
