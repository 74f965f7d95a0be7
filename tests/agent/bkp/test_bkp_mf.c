/* test_bkp_mf: the manifest codec of agent/bkp/ (bkp_mf.c) alone: a round
 * trip of every kind of entry (the xattrs of folders and files included),
 * every truncation refused, counts that the bytes left cannot hold refused
 * before any allocation, unclean paths, a hard link pointing forward,
 * trailing bytes, bad xattr fields, version 1 manifests (before xattrs)
 * still read and written the same, and the path and id checks.
 * fuzz/fuzz_bkp_manifest.c covers the rest. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include "agent/bkp/bkp_internal.h"
#include "tests/lib/aqt.h"

/* xattr x of e: the bytes of s. */
static void put_xa(struct bkp_ent *e, unsigned x, const char *s)
{
	e->xa_len[x] = (uint32_t)strlen(s);
	ck_assert_ptr_nonnull(e->xa[x] = (uint8_t *)strdup(s));
}

/* A manifest with a root, a folder (with an EA list), a file of 3 chunks
 * (one a hole; with DOS attributes and an EA list), a symlink and a hard
 * link. */
static void sample(struct bkp_mf *m)
{
	struct bkp_ent *e;

	bkp_mf_init(m);
	m->chunk_size = 4096;
	m->create_unix_ns = 1700000000123456789;
	m->stats.files = 1;
	snprintf(m->source, sizeof m->source, "snap-1");
	snprintf(m->prev_id, sizeof m->prev_id, "b0");
	ck_assert_ptr_nonnull(e = bkp_mf_add(m, BKP_T_DIR, ""));
	e->mode = 0755;
	ck_assert_ptr_nonnull(e = bkp_mf_add(m, BKP_T_DIR, "d"));
	e->mode = 02750;
	e->uid = 7;
	put_xa(e, BKP_XA_EA, "folder-eas");
	ck_assert_ptr_nonnull(e = bkp_mf_add(m, BKP_T_REG, "d/f"));
	e->size = 2 * 4096 + 10;
	e->nchunks = 3;
	e->chunks = calloc(3, sizeof *e->chunks);
	memset(e->chunks[0].id, 0xab, BKP_ID_LEN);
	e->chunks[1].zero = true;
	memset(e->chunks[2].id, 0xcd, BKP_ID_LEN);
	e->mtime_ns = -5; /* before 1970 */
	put_xa(e, BKP_XA_DOS, "dos-bits");
	put_xa(e, BKP_XA_EA, "file-eas");
	put_xa(e, BKP_XA_SD, "ntfs-sd");
	ck_assert_ptr_nonnull(e = bkp_mf_add(m, BKP_T_SYMLINK, "s"));
	e->target = strdup("../../x");
	ck_assert_ptr_nonnull(e = bkp_mf_add(m, BKP_T_LINK, "h"));
	e->link = 2;
}

START_TEST(t_roundtrip)
{
	struct bkp_mf m, d;
	uint8_t *b = NULL, *b2 = NULL;
	size_t len = 0, len2 = 0;

	sample(&m);
	ck_assert_int_eq(bkp_mf_encode(&m, &b, &len), 0);
	ck_assert_int_eq(bkp_mf_decode(b, len, &d), 0);
	ck_assert_uint_eq(d.n, 5);
	ck_assert_str_eq(d.ents[2].path, "d/f");
	ck_assert_uint_eq(d.ents[2].nchunks, 3);
	ck_assert(d.ents[2].chunks[1].zero);
	ck_assert_uint_eq(d.ents[2].chunks[2].id[31], 0xcd);
	ck_assert_int_eq(d.ents[2].mtime_ns, -5);
	ck_assert_str_eq(d.ents[3].target, "../../x"); /* a target may point anywhere: restore never follows it */
	ck_assert_uint_eq(d.ents[4].link, 2);
	ck_assert_uint_eq(d.ents[1].mode, 02750);
	ck_assert_uint_eq(d.version, BKP_MF_VERSION);
	ck_assert_ptr_null(d.ents[0].xa[BKP_XA_EA]);
	ck_assert_ptr_null(d.ents[1].xa[BKP_XA_DOS]);
	ck_assert_uint_eq(d.ents[1].xa_len[BKP_XA_EA], 10);
	ck_assert_mem_eq(d.ents[1].xa[BKP_XA_EA], "folder-eas", 10);
	ck_assert_mem_eq(d.ents[2].xa[BKP_XA_DOS], "dos-bits", 8);
	ck_assert_mem_eq(d.ents[2].xa[BKP_XA_EA], "file-eas", 8);
	ck_assert_mem_eq(d.ents[2].xa[BKP_XA_SD], "ntfs-sd", 7);
	ck_assert_str_eq(d.source, "snap-1");
	ck_assert_str_eq(d.prev_id, "b0");
	ck_assert_int_eq(d.create_unix_ns, 1700000000123456789);
	ck_assert_int_eq(bkp_mf_encode(&d, &b2, &len2), 0);
	ck_assert_uint_eq(len, len2);
	ck_assert_mem_eq(b, b2, len); /* canonical */
	bkp_mf_cleanup(&d);
	/* every strict prefix and one trailing byte more are refused */
	for (size_t n = 0; n < len; n++) {
		ck_assert_int_eq(bkp_mf_decode(b, n, &d), -EBADMSG);
	}
	b = realloc(b, len + 1);
	b[len] = 0;
	ck_assert_int_eq(bkp_mf_decode(b, len + 1, &d), -EBADMSG);
	free(b);
	free(b2);
	bkp_mf_cleanup(&m);
}
END_TEST

/* Encodes m, applies fn to the bytes, expects the decoder to refuse them. */
static void refused(void (*fn)(struct bkp_mf *m))
{
	struct bkp_mf m, d;
	uint8_t *b = NULL;
	size_t len = 0;

	sample(&m);
	fn(&m);
	if (bkp_mf_encode(&m, &b, &len) == 0) {
		ck_assert_int_eq(bkp_mf_decode(b, len, &d), -EBADMSG);
		free(b);
	}
	bkp_mf_cleanup(&m);
}

static void dotdot(struct bkp_mf *m)
{
	free(m->ents[2].path);
	m->ents[2].path = strdup("d/../../f");
}
static void abs_path(struct bkp_mf *m)
{
	free(m->ents[1].path);
	m->ents[1].path = strdup("/etc");
}
static void empty_comp(struct bkp_mf *m)
{
	free(m->ents[1].path);
	m->ents[1].path = strdup("d//e");
}
static void link_fwd(struct bkp_mf *m)
{
	m->ents[4].link = 4;
}
static void link_to_dir(struct bkp_mf *m)
{
	m->ents[4].link = 1;
}
static void wrong_nchunks(struct bkp_mf *m)
{
	m->ents[2].size = 4096; /* one chunk's worth, three listed */
}
static void tiny_chunk(struct bkp_mf *m)
{
	m->chunk_size = 512;
}
static void root_not_first(struct bkp_mf *m)
{
	m->ents[0].type = BKP_T_REG;
}

START_TEST(t_refused)
{
	refused(dotdot);
	refused(abs_path);
	refused(empty_comp);
	refused(link_fwd);
	refused(link_to_dir);
	refused(wrong_nchunks);
	refused(tiny_chunk);
	refused(root_not_first);
}
END_TEST

/* Counts the bytes cannot hold: refused without allocating them. */
START_TEST(t_counts)
{
	struct bkp_mf m, d;
	uint8_t *b = NULL;
	size_t len = 0, off;

	sample(&m);
	ck_assert_int_eq(bkp_mf_encode(&m, &b, &len), 0);
	/* n_entries sits after magic, chunk size, time, 13 stats, "snap-1", "b0" */
	off = 8 + 4 + 8 + 13 * 8 + 2 + 6 + 2 + 2;
	ck_assert_uint_eq(b[off + 3], 5);
	b[off] = 0x00;
	b[off + 1] = 0xff;
	b[off + 2] = 0xff;
	b[off + 3] = 0xff; /* 16 M entries in a few hundred bytes */
#ifndef __SANITIZE_ADDRESS__
	/* 16 M entries would take over 1 GiB: with that much address space
	 * refused, an allocation before the check shows as -ENOMEM */
	struct rlimit old, lim = { 1ul << 30, 1ul << 30 };
	ck_assert_int_eq(getrlimit(RLIMIT_AS, &old), 0);
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &lim), 0);
#endif
	int rc = bkp_mf_decode(b, len, &d);
#ifndef __SANITIZE_ADDRESS__
	setrlimit(RLIMIT_AS, &old);
#endif
	ck_assert_int_eq(rc, -EBADMSG);
	b[off] = 0xff; /* past the cap */
	ck_assert_int_eq(bkp_mf_decode(b, len, &d), -EBADMSG);
	free(b);
	bkp_mf_cleanup(&m);
}
END_TEST

/* A manifest of the root alone with an EA list of one byte; its encoding
 * ends with the xattrs field: mask, u32 length 1, the byte. */
static uint8_t *root_with_xa(size_t *len)
{
	struct bkp_mf m;
	struct bkp_ent *e;
	uint8_t *b = NULL;

	bkp_mf_init(&m);
	ck_assert_ptr_nonnull(e = bkp_mf_add(&m, BKP_T_DIR, ""));
	put_xa(e, BKP_XA_EA, "x");
	ck_assert_int_eq(bkp_mf_encode(&m, &b, len), 0);
	bkp_mf_cleanup(&m);
	ck_assert_uint_eq(b[*len - 6], 1u << BKP_XA_EA);
	return b;
}

/* xattr fields that break the rules: refused, nothing published. */
START_TEST(t_xattrs_refused)
{
	struct bkp_mf m, d;
	uint8_t *b;
	size_t len;

	b = root_with_xa(&len);
	ck_assert_int_eq(bkp_mf_decode(b, len, &d), 0);
	bkp_mf_cleanup(&d);
	b[len - 6] |= 0x80; /* a bit no xattr has */
	ck_assert_int_eq(bkp_mf_decode(b, len, &d), -EBADMSG);
	free(b);
	b = root_with_xa(&len);
	b[len - 2] = 0; /* an empty value */
	ck_assert_int_eq(bkp_mf_decode(b, len, &d), -EBADMSG);
	b[len - 4] = 1; /* 65537 bytes: past BKP_XA_MAX and the bytes left */
	b[len - 2] = 1;
	ck_assert_int_eq(bkp_mf_decode(b, len, &d), -EBADMSG);
	free(b);
	/* the encoder carries none where the manifest cannot: a symlink, version 1 */
	sample(&m);
	put_xa(&m.ents[3], BKP_XA_EA, "x");
	ck_assert_int_eq(bkp_mf_encode(&m, &b, &len), -EINVAL);
	bkp_mf_cleanup(&m);
	sample(&m);
	m.version = 1;
	ck_assert_int_eq(bkp_mf_encode(&m, &b, &len), -EINVAL);
	bkp_mf_cleanup(&m);
}
END_TEST

/* A backup made before xattrs were carried (AQBKMF01) still decodes, and
 * encodes back to the same bytes; read as version 2 its bytes are short. */
START_TEST(t_version1)
{
	struct bkp_mf m, d;
	uint8_t *b = NULL, *b2 = NULL;
	size_t len = 0, len2 = 0;

	sample(&m);
	for (size_t i = 0; i < m.n; i++)
		for (unsigned x = 0; x < BKP_XA_N; x++) {
			free(m.ents[i].xa[x]);
			m.ents[i].xa[x] = NULL;
		}
	m.version = 1;
	ck_assert_int_eq(bkp_mf_encode(&m, &b, &len), 0);
	ck_assert_mem_eq(b, "AQBKMF01", 8);
	ck_assert_int_eq(bkp_mf_decode(b, len, &d), 0);
	ck_assert_uint_eq(d.version, 1);
	ck_assert_uint_eq(d.n, 5);
	ck_assert_int_eq(bkp_mf_encode(&d, &b2, &len2), 0);
	ck_assert_uint_eq(len2, len);
	ck_assert_mem_eq(b2, b, len);
	bkp_mf_cleanup(&d);
	b[7] = '2';
	ck_assert_int_eq(bkp_mf_decode(b, len, &d), -EBADMSG);
	b[7] = '3'; /* a version this code does not know */
	ck_assert_int_eq(bkp_mf_decode(b, len, &d), -EBADMSG);
	free(b);
	free(b2);
	bkp_mf_cleanup(&m);
}
END_TEST

START_TEST(t_checks)
{
	ck_assert_int_eq(bkp_path_check("", 0), 0);
	ck_assert_int_eq(bkp_path_check("a/b.c/..d", 9), 0);
	ck_assert_int_eq(bkp_path_check("a/./b", 5), -EINVAL);
	ck_assert_int_eq(bkp_path_check("a/", 2), -EINVAL);
	ck_assert_int_eq(bkp_path_check("..", 2), -EINVAL);
	ck_assert_int_eq(bkp_path_check("a\0b", 3), -EINVAL);
	ck_assert_int_eq(bkp_id_check("backup-2026.12_06"), 0);
	ck_assert_int_eq(bkp_id_check(".."), -EINVAL);
	ck_assert_int_eq(bkp_id_check("a/b"), -EINVAL);
	ck_assert_int_eq(bkp_id_check(""), -EINVAL);
	ck_assert_int_eq(bkp_id_check("0123456789012345678901234567890123456789012345678901234567890123"), -EINVAL);
}
END_TEST

static Suite *mf_suite(void)
{
	Suite *s = suite_create("bkp manifest");
	TCase *tc = tcase_create("mf");

	tcase_add_test(tc, t_roundtrip);
	tcase_add_test(tc, t_refused);
	tcase_add_test(tc, t_counts);
	tcase_add_test(tc, t_checks);
	tcase_add_test(tc, t_xattrs_refused);
	tcase_add_test(tc, t_version1);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(mf_suite());
}
