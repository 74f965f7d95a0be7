/* nfs_fh_tool: file handles as an attacker (or a client that keeps them)
 * sees them, for tests/e2e/test_security_handle.sh.
 *
 *   nfs_fh_tool forge --key HEX64 --fsid HEX16 [--snap] PATH
 *       print the handle an attacker holding the location key builds for
 *       export fsid around the kernel handle of PATH (any file of the shelf's
 *       file system): vol_fh_encode, the code the agent itself mints with
 *       (--snap: a snapshot object's handle, version 3).
 *   nfs_fh_tool lookup --port P --export /SHARE NAME
 *       MNT the export and LOOKUP NAME in its root (AUTH_SYS root); print the
 *       handle the server gave.
 *   nfs_fh_tool use --port P --fh HEX
 *       GETATTR, READ (up to 4 KiB from offset 0) and SETATTR (mode 0604)
 *       with that handle; print "getattr=N read=N setattr=N data=TEXT" with
 *       the NFSv3 status numbers and the bytes read (printable ones).
 * Exit status 0 when the calls could be made (whatever they answered).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/vol/vol.h"
#include "tests/agent/nfs/raw_rpc.h"
#include "util/ut_hex.h"

static int unhex(const char *hex, uint8_t *out, size_t cap, size_t *n)
{
	return ut_hex_decode(hex, strlen(hex), out, cap, n) == AQ_OK ? 0 : -EINVAL;
}

static void put_hex(const uint8_t *p, size_t n)
{
	char text[2 * 256 + 1];

	if (ut_hex_encode(p, n, text, sizeof(text)) == AQ_OK)
		printf("%s\n", text);
}

static const char *opt(int argc, char **argv, const char *name)
{
	int i;

	for (i = 2; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return argv[i + 1];
	return NULL;
}

static int forge(const char *keyhex, const char *fsidhex, bool snap, const char *path)
{
	union {
		struct file_handle fh;
		uint8_t raw[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	uint8_t key[VOL_KEY_LEN];
	struct vol_fh fh;
	size_t n;
	char *end;
	unsigned long long fsid;
	int mnt;

	errno = 0;
	fsid = strtoull(fsidhex, &end, 16);
	if (unhex(keyhex, key, sizeof(key), &n) != 0 || n != VOL_KEY_LEN || errno || *end) {
		fprintf(stderr, "nfs_fh_tool: bad --key or --fsid\n");
		return 2;
	}
	u.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, path, &u.fh, &mnt, 0) != 0) {
		fprintf(stderr, "nfs_fh_tool: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (vol_fh_encode(key, snap, fsid, (uint32_t)u.fh.handle_type, u.fh.f_handle, u.fh.handle_bytes, &fh) != 0)
		return 1;
	put_hex(fh.data, fh.len);
	return 0;
}

static int lookup(int port, const char *export, const char *name)
{
	struct raw_fh root, f;

	raw_connect_as(port, 0, 0);
	if (raw_mnt(export, &root) != 0 || raw_lookup(&root, name, &f) != 0) {
		fprintf(stderr, "nfs_fh_tool: MNT %s / LOOKUP %s: %u\n", export, name, raw_R.st);
		return 1;
	}
	put_hex((const uint8_t *)f.data, f.len);
	return 0;
}

static int use(int port, const char *hex)
{
	struct raw_fh f;
	uint32_t ga, rd, sa;
	size_t n, i;
	SETATTR3args s;

	if (unhex(hex, (uint8_t *)f.data, sizeof(f.data), &n) != 0) {
		fprintf(stderr, "nfs_fh_tool: bad --fh\n");
		return 2;
	}
	f.len = (uint32_t)n;
	raw_connect_as(port, 0, 0);
	ga = raw_getattr(&f, NULL);
	rd = raw_read3(&f, 0, 4096);
	printf("getattr=%u read=%u", ga, rd);
	memset(&s, 0, sizeof(s));
	s.object = raw_wire(&f);
	s.new_attributes.mode.set_it = 1;
	s.new_attributes.mode.set_mode3_u.mode = 0604; /* a mode nothing here has */
	if (rd == 0) {
		printf(" data=");
		for (i = 0; i < raw_R.dlen && i < sizeof(raw_R.data); i++)
			putchar(isprint((unsigned char)raw_R.data[i]) ? raw_R.data[i] : '.');
	}
	RAW_RUN(K_SETATTR, &raw_R, rpc_nfs3_setattr_async(raw_rpc, raw_cb, &s, RAW_PD));
	sa = raw_R.st;
	printf(" setattr=%u\n", sa);
	return 0;
}

static int port_of(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = s ? strtol(s, &end, 10) : 0;
	return s && !errno && !*end && v > 0 && v < 65536 ? (int)v : 0;
}

int main(int argc, char **argv)
{
	int port = argc > 1 ? port_of(opt(argc, argv, "--port")) : 0;

	if (argc >= 7 && !strcmp(argv[1], "forge") && opt(argc, argv, "--key") && opt(argc, argv, "--fsid"))
		return forge(opt(argc, argv, "--key"), opt(argc, argv, "--fsid"), !strcmp(argv[argc - 2], "--snap"),
			     argv[argc - 1]);
	if (argc >= 7 && !strcmp(argv[1], "lookup") && port && opt(argc, argv, "--export"))
		return lookup(port, opt(argc, argv, "--export"), argv[argc - 1]);
	if (argc >= 6 && !strcmp(argv[1], "use") && port && opt(argc, argv, "--fh"))
		return use(port, opt(argc, argv, "--fh"));
	fprintf(stderr, "usage: nfs_fh_tool forge --key HEX64 --fsid HEX16 [--snap] PATH\n"
			"       nfs_fh_tool lookup --port P --export /SHARE NAME\n"
			"       nfs_fh_tool use --port P --fh HEX\n");
	return 2;
}
