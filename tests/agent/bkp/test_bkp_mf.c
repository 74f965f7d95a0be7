/* test_bkp_mf: the manifest codec of agent/bkp/ (bkp_mf.c) alone: a round
 * trip of every kind of entry, every truncation refused, counts that the
 * bytes left cannot hold refused before any allocation, unclean paths, a
 * hard link pointing forward, trailing bytes, and the path and id checks.
 * fuzz/fuzz_bkp_manifest.c covers the rest. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include "agent/bkp/bkp_internal.h"
#include "tests/lib/aqt.h"

/* A manifest with a root, a folder, a file of 3 chunks (one a hole), a
 * symlink and a hard link. */
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
	ck_assert_ptr_nonnull(e = bkp_mf_add(m, BKP_T_REG, "d/f"));
	e->size = 2 * 4096 + 10;
	e->nchunks = 3;
	e->chunks = calloc(3, sizeof *e->chunks);
	memset(e->chunks[0].id, 0xab, BKP_ID_LEN);
	e->chunks[1].zero = true;
	memset(e->chunks[2].id, 0xcd, BKP_ID_LEN);
	e->mtime_ns = -5; /* before 1970 */
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
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(mf_suite());
}
