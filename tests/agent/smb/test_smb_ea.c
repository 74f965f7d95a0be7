/* test_smb_ea: extended attributes over SMB (agent/smb/smb_ea.c,
 * agent/smb/smb_info_ea.c over agent/vol/vol_ea.c), through the server's
 * own dispatcher:
 * - SET_INFO FileFullEaInformation then QUERY_INFO: the list kept (names
 *   case-insensitive, the case last set kept, an empty value removes one),
 *   FileEaInformation's EaSize and FileAllInformation's EA field its
 *   length; the list lives in the shelf file's trusted.aquifer.ea (what
 *   survives the agent) and counts against capacity (up on set, down on
 *   removal and when the file goes);
 * - the scan: SL_RESTART_SCAN, SL_RETURN_SINGLE_ENTRY, STATUS_NO_MORE_EAS
 *   at the end, BUFFER_OVERFLOW with what fits, BUFFER_TOO_SMALL when
 *   nothing does, SL_INDEX_SPECIFIED NOT_SUPPORTED; an EA name list
 *   answers the names asked, an unknown one with an empty value;
 * - bad input changes nothing: a bad name INVALID_EA_NAME, an unknown flag
 *   INVALID_EA_FLAG, a malformed list INVALID_PARAMETER, a file's list past
 *   65535 bytes EA_TOO_LARGE, past the volume's free space DISK_FULL, an
 *   open without FILE_WRITE_EA ACCESS_DENIED;
 * - FILE_NEED_EA: a CREATE with FILE_NO_EA_KNOWLEDGE of such a file is
 *   ACCESS_DENIED, without it the open works;
 * - a SET on a folder or a file is answered without a sync (SMB makes it
 *   stable on FLUSH: VOL_CRED_DEFER_SYNC): each one answered is one change
 *   counted in vol_stats.deferred and no vol_stats.filesyncs, a refused
 *   one neither, and the folder's list is on the shelf.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "agent/smb/smb_ea.h"
#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define FileEaInformation 7u
#define FileFullEaInformation 15u
#define FileAllInformation 18u
#define RW_ACCESS (0x3u | 0x8u | 0x10u | 0x80u | 0x100u | 0x10000u) /* data, EAs, attributes, delete */
#define NO_WRITE_EA (0x3u | 0x8u | 0x80u | 0x100u)
#define FILE_NO_EA_KNOWLEDGE 0x200u

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;

static void setup(struct smbt_conn *a)
{
	smbt_export_up(&ts, &srv, &exp0);
	smbt_conn_export(a, srv, &ts, 1, 0);
}

static void teardown(void)
{
	smbt_export_down(&ts, srv, exp0);
}

/* A list of n entries (flags, name, value) into out; its length. */
struct ea_in {
	uint8_t flags;
	const char *name;
	const char *value;
	size_t vlen; /* 0: strlen(value) */
};

static size_t ea_list(uint8_t *out, size_t cap, const struct ea_in *in, size_t n)
{
	size_t len = 0, last = 0;

	for (size_t i = 0; i < n; i++) {
		struct smb_ea e = { .flags = in[i].flags, .name_len = (uint8_t)strlen(in[i].name),
				    .name = (const uint8_t *)in[i].name, .value = (const uint8_t *)in[i].value };

		e.value_len = (uint16_t)(in[i].vlen ? in[i].vlen : strlen(in[i].value));
		ck_assert_int_eq(smb_ea_add(out, cap, &len, &last, &e), AQ_OK);
	}
	return len;
}

/* SET_INFO FileFullEaInformation of data[0..n) on fid (any size). */
static uint32_t set_eas(struct smbt_conn *tc, uint64_t fid, const uint8_t *data, size_t n)
{
	uint8_t *body = calloc(1, 32 + n);
	struct smb_wire_hdr h = { .command = SMB2_SET_INFO };
	struct smbl_msg m;

	ck_assert_ptr_nonnull(body);
	smbt_put16(body, 33);
	body[2] = SMB2_0_INFO_FILE;
	body[3] = FileFullEaInformation;
	smbt_put32(body + 4, (uint32_t)n);
	smbt_put16(body + 8, SMB2_HDR_LEN + 32);
	smbt_put64(body + 16, fid);
	smbt_put64(body + 24, fid);
	memcpy(body + 32, data, n);
	smbl_send(tc, &h, body, 32 + n);
	free(body);
	ck_assert_int_eq(smbl_recv(tc, &m), 1);
	return m.h.status;
}

/* QUERY_INFO FileFullEaInformation with flags, an input list in[0..inlen)
 * and OutputBufferLength outlen: its status, the output in m. */
static uint32_t query_eas(struct smbt_conn *tc, uint64_t fid, uint32_t flags, const uint8_t *in, size_t inlen,
			  uint32_t outlen, struct smbl_msg *m, const uint8_t **out, size_t *n)
{
	uint8_t body[40 + 256] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_QUERY_INFO };

	ck_assert_uint_le(inlen, 256);
	smbt_put16(body, 41);
	body[2] = SMB2_0_INFO_FILE;
	body[3] = FileFullEaInformation;
	smbt_put32(body + 4, outlen);
	smbt_put16(body + 8, inlen ? SMB2_HDR_LEN + 40 : 0);
	smbt_put32(body + 12, (uint32_t)inlen);
	smbt_put32(body + 20, flags);
	smbt_put64(body + 24, fid);
	smbt_put64(body + 32, fid);
	if (inlen)
		memcpy(body + 40, in, inlen);
	smbl_send(tc, &h, body, 40 + (inlen ? inlen : 1));
	ck_assert_int_eq(smbl_recv(tc, m), 1);
	*n = 0;
	*out = NULL;
	if (m->h.status == STATUS_SUCCESS || m->h.status == STATUS_BUFFER_OVERFLOW) {
		*n = smb_wire_get_u32(m->body + 4);
		*out = m->body + smb_wire_get_u16(m->body + 2) - SMB2_HDR_LEN;
	}
	return m->h.status;
}

static uint32_t ea_size(struct smbt_conn *tc, uint64_t fid)
{
	uint8_t out[512];
	size_t n;

	ck_assert_uint_eq(smbl_query_info(tc, fid, FileEaInformation, 4, out, &n), STATUS_SUCCESS);
	return smb_wire_get_u32(out);
}

static uint64_t used(void)
{
	return atomic_load(&exp0->acct->used);
}

static ssize_t shelf_xattr(const char *name, uint8_t *buf, size_t cap)
{
	char p[4200];

	snprintf(p, sizeof(p), "%s/%s", ts.cfg[0].root, name);
	return getxattr(p, VOL_EA_ATTR, buf, cap);
}

START_TEST(test_set_query)
{
	struct smbt_conn a;
	struct smbl_msg m;
	uint8_t l1[256], l2[256], want[256], kept[256], out[512];
	const uint8_t *got;
	size_t n1, n2, nw, n;
	uint64_t fid, u0;
	uint32_t attrs;

	setup(&a);
	ck_assert_uint_eq(smbl_open(&a, "ea.txt", false, RW_ACCESS, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	ck_assert_uint_eq(ea_size(&a, fid), 0);
	ck_assert_uint_eq(query_eas(&a, fid, 1, NULL, 0, 512, &m, &got, &n), STATUS_NO_EAS_ON_FILE);
	u0 = used();
	n1 = ea_list(l1, sizeof(l1), (struct ea_in[]){ { 0, "EAONE", "VALUE1", 0 }, { 0, "SecondEA", "ValueTwo", 0 } }, 2);
	ck_assert_uint_eq(set_eas(&a, fid, l1, n1), STATUS_SUCCESS);
	ck_assert_uint_eq(query_eas(&a, fid, 1, NULL, 0, 512, &m, &got, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(n, n1);
	ck_assert_mem_eq(got, l1, n1);
	ck_assert_uint_eq(ea_size(&a, fid), n1);
	ck_assert_uint_eq(smbl_query_info(&a, fid, FileAllInformation, 512, out, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(smb_wire_get_u32(out + 40 + 24 + 8), n1);
	/* on the shelf, byte for byte, and charged */
	ck_assert_int_eq(shelf_xattr("ea.txt", kept, sizeof(kept)), (ssize_t)n1);
	ck_assert_mem_eq(kept, l1, n1);
	ck_assert_uint_eq(used(), u0 + n1);
	/* "secondea" replaces SecondEA (its case kept), "eaone" with no value goes */
	n2 = ea_list(l2, sizeof(l2), (struct ea_in[]){ { 0, "secondea", "2", 0 }, { 0, "eaone", "", 0 } }, 2);
	ck_assert_uint_eq(set_eas(&a, fid, l2, n2), STATUS_SUCCESS);
	nw = ea_list(want, sizeof(want), (struct ea_in[]){ { 0, "secondea", "2", 0 } }, 1);
	ck_assert_uint_eq(query_eas(&a, fid, 1, NULL, 0, 512, &m, &got, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(n, nw);
	ck_assert_mem_eq(got, want, nw);
	ck_assert_uint_eq(used(), u0 + nw);
	/* removing the last leaves none, and nothing charged */
	n2 = ea_list(l2, sizeof(l2), (struct ea_in[]){ { 0, "SECONDEA", "", 0 } }, 1);
	ck_assert_uint_eq(set_eas(&a, fid, l2, n2), STATUS_SUCCESS);
	ck_assert_uint_eq(query_eas(&a, fid, 1, NULL, 0, 512, &m, &got, &n), STATUS_NO_EAS_ON_FILE);
	ck_assert_int_lt(shelf_xattr("ea.txt", kept, sizeof(kept)), 0);
	ck_assert_uint_eq(used(), u0);
	/* the file's EAs go with it */
	ck_assert_uint_eq(set_eas(&a, fid, l1, n1), STATUS_SUCCESS);
	ck_assert_uint_eq(used(), u0 + n1);
	ck_assert_uint_eq(smbl_close(&a, fid), STATUS_SUCCESS);
	{
		struct vol_obj root;
		struct vol_cred root_cred = { 0 };

		ck_assert_int_eq(vol_root(exp0, &root), 0);
		ck_assert_int_eq(vol_remove(&root, &root_cred, "ea.txt", 6), 0);
		vol_obj_cleanup(&root);
	}
	ck_assert_uint_eq(used(), u0 - VOL_NAME_COST);
	teardown();
}
END_TEST

START_TEST(test_scan)
{
	struct smbt_conn a;
	struct smbl_msg m;
	uint8_t l[256], one[64], names[64];
	const uint8_t *got;
	size_t nl, n1, nn, n;
	uint64_t fid;
	uint32_t attrs;

	setup(&a);
	ck_assert_uint_eq(smbl_open(&a, "scan.txt", false, RW_ACCESS, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	nl = ea_list(l, sizeof(l),
		     (struct ea_in[]){ { 0, "A", "1", 0 }, { 0, "BB", "22", 0 }, { 0, "CCC", "333", 0 } }, 3);
	ck_assert_uint_eq(set_eas(&a, fid, l, nl), STATUS_SUCCESS);
	/* one at a time, then the end, then from the start again */
	n1 = ea_list(one, sizeof(one), (struct ea_in[]){ { 0, "A", "1", 0 } }, 1);
	ck_assert_uint_eq(query_eas(&a, fid, 1 | 2, NULL, 0, 512, &m, &got, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(n, n1);
	ck_assert_mem_eq(got, one, n1);
	n1 = ea_list(one, sizeof(one), (struct ea_in[]){ { 0, "BB", "22", 0 } }, 1);
	ck_assert_uint_eq(query_eas(&a, fid, 2, NULL, 0, 512, &m, &got, &n), STATUS_SUCCESS);
	ck_assert_mem_eq(got, one, n1);
	ck_assert_uint_eq(query_eas(&a, fid, 0, NULL, 0, 512, &m, &got, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(got[8], 'C');
	ck_assert_uint_eq(query_eas(&a, fid, 0, NULL, 0, 512, &m, &got, &n), STATUS_NO_MORE_EAS);
	/* room for two entries (11 bytes padded to 12, then 13; the third 15): overflow, then the rest */
	ck_assert_uint_eq(query_eas(&a, fid, 1, NULL, 0, 26, &m, &got, &n), STATUS_BUFFER_OVERFLOW);
	ck_assert_uint_eq(n, 12 + 13);
	ck_assert_uint_eq(smb_wire_get_u32(got + 12), 0); /* the last one answered ends the list */
	ck_assert_uint_eq(query_eas(&a, fid, 0, NULL, 0, 26, &m, &got, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(got[8], 'C');
	/* not even one fits */
	ck_assert_uint_eq(query_eas(&a, fid, 1, NULL, 0, 8, &m, &got, &n), STATUS_BUFFER_TOO_SMALL);
	ck_assert_uint_eq(query_eas(&a, fid, 4, NULL, 0, 512, &m, &got, &n), STATUS_NOT_SUPPORTED);
	/* by name (FILE_GET_EA_INFORMATION): "cCc" then "nope" */
	memset(names, 0, sizeof(names));
	smbt_put32(names, 12);
	names[4] = 3;
	memcpy(names + 5, "cCc", 3);
	names[16] = 4;
	memcpy(names + 17, "nope", 4);
	nn = 12 + 10;
	ck_assert_uint_eq(query_eas(&a, fid, 0, names, nn, 512, &m, &got, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(got[5], 3);
	ck_assert_uint_eq(smb_wire_get_u16(got + 6), 3);
	ck_assert_mem_eq(got + 8, "CCC\0" "333", 7);
	ck_assert_uint_eq(smb_wire_get_u32(got), 16);
	ck_assert_uint_eq(got[16 + 5], 4);
	ck_assert_uint_eq(smb_wire_get_u16(got + 16 + 6), 0);
	ck_assert_mem_eq(got + 16 + 8, "nope", 5);
	/* a name list past its buffer */
	names[4] = 40;
	ck_assert_uint_eq(query_eas(&a, fid, 0, names, nn, 512, &m, &got, &n), STATUS_INVALID_PARAMETER);
	teardown();
}
END_TEST

START_TEST(test_refused)
{
	struct smbt_conn a;
	uint8_t l[256], *big;
	size_t nl;
	uint64_t fid, ro, u0;
	uint32_t attrs, before;

	setup(&a);
	ck_assert_uint_eq(smbl_open(&a, "bad.txt", false, RW_ACCESS, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	nl = ea_list(l, sizeof(l), (struct ea_in[]){ { 0, "KEEP", "me", 0 } }, 1);
	ck_assert_uint_eq(set_eas(&a, fid, l, nl), STATUS_SUCCESS);
	before = ea_size(&a, fid);
	u0 = used();
	/* a good entry, then a bad name: neither is set */
	nl = ea_list(l, sizeof(l), (struct ea_in[]){ { 0, "OK", "1", 0 }, { 0, "a*b", "1", 0 } }, 2);
	ck_assert_uint_eq(set_eas(&a, fid, l, nl), STATUS_INVALID_EA_NAME);
	nl = ea_list(l, sizeof(l), (struct ea_in[]){ { 0, "OK", "1", 0 }, { 0x01, "FLAG", "1", 0 } }, 2);
	ck_assert_uint_eq(set_eas(&a, fid, l, nl), STATUS_INVALID_EA_FLAG);
	/* malformed: next offset not a multiple of 4, past the buffer, no NUL after the name */
	nl = ea_list(l, sizeof(l), (struct ea_in[]){ { 0, "OK", "1", 0 }, { 0, "TWO", "2", 0 } }, 2);
	smbt_put32(l, 13);
	ck_assert_uint_eq(set_eas(&a, fid, l, nl), STATUS_INVALID_PARAMETER);
	smbt_put32(l, 400);
	ck_assert_uint_eq(set_eas(&a, fid, l, nl), STATUS_INVALID_PARAMETER);
	nl = ea_list(l, sizeof(l), (struct ea_in[]){ { 0, "OK", "1", 0 } }, 1);
	l[8 + 2] = 'x';
	ck_assert_uint_eq(set_eas(&a, fid, l, nl), STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(set_eas(&a, fid, l, 0), STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(ea_size(&a, fid), before);
	ck_assert_uint_eq(used(), u0);
	/* a file's list past 65535 bytes (the merge a SET makes; on the shelf
	 * of this test, ext4, one block is the limit: then refused the same) */
	big = calloc(1, 200000);
	ck_assert_ptr_nonnull(big);
	memset(big + 100000, 'v', 50000);
	{
		size_t old_len = ea_list(big, 50000, (struct ea_in[]){ { 0, "BIG1", (const char *)big + 100000, 40000 } }, 1);
		size_t upd_len = ea_list(big + 50000, 50000,
					 (struct ea_in[]){ { 0, "BIG2", (const char *)big + 100000, 30000 } }, 1);
		size_t out_len = 0;
		uint8_t *out = malloc(SMB_EA_LIST_MAX);

		ck_assert_ptr_nonnull(out);
		ck_assert_int_eq(smb_ea_merge(big, old_len, big + 50000, upd_len, out, SMB_EA_LIST_MAX, &out_len),
				 AQ_ETOOBIG);
		ck_assert_int_eq(smb_ea_merge(big, old_len, big + 50000, 0, out, SMB_EA_LIST_MAX, &out_len), AQ_EINVAL);
		free(out);
	}
	nl = ea_list(big, 60000, (struct ea_in[]){ { 0, "BIG1", (const char *)big + 100000, 40000 } }, 1);
	u0 = used();
	{
		uint32_t st = set_eas(&a, fid, big, nl);

		if (st == STATUS_EA_TOO_LARGE) { /* the shelf holds less: nothing changed, nothing charged */
			ck_assert_uint_eq(ea_size(&a, fid), before);
			ck_assert_uint_eq(used(), u0);
		} else {
			ck_assert_uint_eq(st, STATUS_SUCCESS);
			nl = ea_list(big, 60000, (struct ea_in[]){ { 0, "BIG2", (const char *)big + 100000, 30000 } }, 1);
			ck_assert_uint_eq(set_eas(&a, fid, big, nl), STATUS_EA_TOO_LARGE);
			nl = ea_list(big, 60000, (struct ea_in[]){ { 0, "BIG1", "", 0 } }, 1);
			ck_assert_uint_eq(set_eas(&a, fid, big, nl), STATUS_SUCCESS);
		}
	}
	/* past the volume's free space */
	u0 = used();
	ck_assert_int_eq(vol_reserve(exp0, exp0->cfg.capacity - u0 - 100), 0);
	nl = ea_list(big, 60000, (struct ea_in[]){ { 0, "KEEP", "", 0 } }, 1);
	ck_assert_uint_eq(set_eas(&a, fid, big, nl), STATUS_SUCCESS); /* it shrinks: no room needed */
	before = ea_size(&a, fid);
	ck_assert_uint_eq(before, 0);
	nl = ea_list(big, 60000, (struct ea_in[]){ { 0, "MORE", (const char *)big + 100000, 1000 } }, 1);
	ck_assert_uint_eq(set_eas(&a, fid, big, nl), STATUS_DISK_FULL);
	ck_assert_uint_eq(ea_size(&a, fid), before);
	vol_adjust(exp0, -(int64_t)(exp0->cfg.capacity - u0 - 100));
	free(big);
	/* no FILE_WRITE_EA on the open */
	ck_assert_uint_eq(smbl_open(&a, "bad.txt", false, NO_WRITE_EA, 0, 0, &ro, &attrs), STATUS_SUCCESS);
	nl = ea_list(l, sizeof(l), (struct ea_in[]){ { 0, "OK", "1", 0 } }, 1);
	ck_assert_uint_eq(set_eas(&a, ro, l, nl), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(ea_size(&a, fid), before);
	teardown();
}
END_TEST

START_TEST(test_need_ea)
{
	struct smbt_conn a;
	uint8_t l[64];
	size_t nl;
	uint64_t fid, f2;
	uint32_t attrs;

	setup(&a);
	ck_assert_uint_eq(smbl_open(&a, "need.txt", false, RW_ACCESS, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "need.txt", false, RW_ACCESS, 0, FILE_NO_EA_KNOWLEDGE, &f2, &attrs),
			  STATUS_SUCCESS);
	nl = ea_list(l, sizeof(l), (struct ea_in[]){ { SMB_EA_NEED_EA, "MUST", "x", 0 } }, 1);
	ck_assert_uint_eq(set_eas(&a, fid, l, nl), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "need.txt", false, RW_ACCESS, 0, FILE_NO_EA_KNOWLEDGE, &f2, &attrs),
			  STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_open(&a, "need.txt", false, RW_ACCESS, 0, 0, &f2, &attrs), STATUS_SUCCESS);
	teardown();
}
END_TEST

/* An EA set is answered without a sync, on a folder as on a file (vol_sync_as
 * in vol_ea_set, VOL_CRED_DEFER_SYNC): each SET answered is one deferred
 * change, a refused one none. */
START_TEST(test_set_synced)
{
	struct smbt_conn a;
	struct vol_stats s0, s1;
	uint8_t l[64], bad[64], kept[64];
	size_t nl, nb;
	uint64_t dfid, ffid;
	uint32_t attrs;

	setup(&a);
	ck_assert_uint_eq(smbl_open(&a, "edir", true, RW_ACCESS, 0, 0, &dfid, &attrs), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "edir\\f.txt", false, RW_ACCESS, 0, 0, &ffid, &attrs), STATUS_SUCCESS);
	nl = ea_list(l, sizeof(l), (struct ea_in[]){ { 0, "DirEA", "kept", 0 } }, 1);
	nb = ea_list(bad, sizeof(bad), (struct ea_in[]){ { 0, "bad?name", "x", 0 } }, 1);
	ck_assert_int_eq(vol_store_stats(ts.store, ts.cfg[0].id, &s0), 0);
	ck_assert_uint_eq(set_eas(&a, dfid, l, nl), STATUS_SUCCESS);
	ck_assert_int_eq(vol_store_stats(ts.store, ts.cfg[0].id, &s1), 0);
	ck_assert_uint_eq(s1.filesyncs, s0.filesyncs);
	ck_assert_uint_eq(s1.deferred, s0.deferred + 1);
	ck_assert_uint_eq(set_eas(&a, ffid, l, nl), STATUS_SUCCESS);
	ck_assert_uint_eq(set_eas(&a, dfid, bad, nb), STATUS_INVALID_EA_NAME);
	ck_assert_int_eq(vol_store_stats(ts.store, ts.cfg[0].id, &s0), 0);
	ck_assert_uint_eq(s0.filesyncs, s1.filesyncs);
	ck_assert_uint_eq(s0.deferred, s1.deferred + 1);
	ck_assert_int_eq(shelf_xattr("edir", kept, sizeof(kept)), (ssize_t)nl);
	ck_assert_mem_eq(kept, l, nl);
	teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_ea");
	TCase *tc = tcase_create("ea");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_set_query);
	tcase_add_test(tc, test_scan);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_need_ea);
	tcase_add_test(tc, test_set_synced);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
