/* bkp_mf: the manifest of a backup in memory and its byte codec. The
 * decoder reads bytes that came out of the store (authenticated, but from a
 * vault that other software could have written with the key), so it is
 * bounded like a network parser: a sticky-error cursor, every count checked
 * against the bytes left before anything is allocated, every path checked,
 * and one canonical encoding (encode(decode(x)) == x).
 *
 * Encoding (big-endian integers; str16 = u16 length + bytes):
 *   "AQBKMF02" u32 chunk_size i64 create_unix_ns u64 stats[13]
 *   str16 source  str16 prev_id  u32 n_entries  entry[n_entries]
 *   entry: u8 type  str16 path  u32 mode uid gid  i64 atime mtime ctime (ns)
 *          u64 ino size, then by type:
 *          DIR:     xattrs
 *          REG:     u32 nchunks (= ceil(size / chunk_size)), per chunk a u8
 *                   flag: 0 then 32 bytes of name, or 1 (all zero: a hole);
 *                   then xattrs
 *          SYMLINK: str16 target
 *          LINK:    u32 index of an earlier REG entry
 *   xattrs: u8 mask (bit i: bkp_xa_name[i] is carried; no other bit), per
 *          bit set in increasing order u32 length (1..BKP_XA_MAX) + bytes
 *   Entry 0 is the root: a DIR with path "". Entries are in walk order
 *   (a folder before what it holds). "AQBKMF01" (the backups made before
 *   xattrs were carried) is the same without the xattrs fields; it still
 *   decodes (version 1) and encodes back the same.
 */
#include "agent/bkp/bkp_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/vol/vol.h"
#include "util/ut_buf.h"

#define BKP_MF_MAGIC "AQBKMF0" /* + the version digit */
#define BKP_MF_NSTATS 13
#define BKP_MF_ENT_MIN (1 + 2 + 12 + 24 + 16) /* a DIR entry with an empty path */
#define BKP_MODE_MASK 07777u

const char *const bkp_xa_name[BKP_XA_N] = { [BKP_XA_DOS] = VOL_DOS_ATTR, [BKP_XA_EA] = VOL_EA_ATTR,
						    [BKP_XA_SD] = VOL_SD_ATTR };

void bkp_mf_init(struct bkp_mf *m)
{
	memset(m, 0, sizeof *m);
	m->version = BKP_MF_VERSION;
	m->chunk_size = BKP_CHUNK_DEFAULT;
}

void bkp_mf_cleanup(struct bkp_mf *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->ents[i].path);
		free(m->ents[i].chunks);
		free(m->ents[i].target);
		for (unsigned x = 0; x < BKP_XA_N; x++)
			free(m->ents[i].xa[x]);
	}
	free(m->ents);
	bkp_mf_init(m);
}

struct bkp_ent *bkp_mf_add(struct bkp_mf *m, uint8_t type, const char *path)
{
	struct bkp_ent *e;

	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		void *p;

		if (cap > BKP_MF_ENTRIES_MAX)
			cap = BKP_MF_ENTRIES_MAX;
		if (m->n >= cap || !(p = realloc(m->ents, cap * sizeof *m->ents)))
			return NULL;
		m->ents = p;
		m->cap = cap;
	}
	e = &m->ents[m->n];
	memset(e, 0, sizeof *e);
	if (!(e->path = strdup(path)))
		return NULL;
	e->type = type;
	m->n++;
	return e;
}

int bkp_id_check(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	if (n == 0 || n > BKP_ID_MAX || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') ||
		      (id[i] >= '0' && id[i] <= '9') || id[i] == '.' || id[i] == '_' || id[i] == '-'))
			return -EINVAL;
	return 0;
}

int bkp_path_check(const char *p, size_t len)
{
	size_t start = 0;

	if (len == 0)
		return 0;
	if (len > BKP_PATH_MAX || memchr(p, '\0', len))
		return -EINVAL;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && p[i] != '/')
			continue;
		size_t c = i - start;
		if (c == 0 || (c == 1 && p[start] == '.') || (c == 2 && p[start] == '.' && p[start + 1] == '.'))
			return -EINVAL;
		start = i + 1;
	}
	return 0;
}

/* ---- encoder ---- */

static void put_be(struct ut_buf *b, uint64_t v, unsigned n)
{
	uint8_t x[8];

	for (unsigned i = 0; i < n; i++)
		x[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	ut_buf_add(b, x, n);
}

static void put_str16(struct ut_buf *b, const char *s)
{
	size_t n = strlen(s);

	put_be(b, n, 2);
	ut_buf_add(b, s, n);
}

static const uint64_t *stats_fields(const struct bkp_stats *s, uint64_t out[BKP_MF_NSTATS])
{
	const uint64_t v[BKP_MF_NSTATS] = { s->files, s->dirs, s->symlinks, s->hardlinks, s->skipped,
					    s->logical_bytes, s->bytes_read, s->bytes_uploaded, s->files_unchanged,
					    s->chunks, s->chunks_new, s->chunks_zero, s->manifest_bytes };

	memcpy(out, v, sizeof v);
	return out;
}

static bool has_xattrs(const struct bkp_ent *e)
{
	return e->type == BKP_T_DIR || e->type == BKP_T_REG;
}

/* The entry's xattrs field (version 2); -EINVAL for one it cannot carry. */
static int put_xattrs(struct ut_buf *b, const struct bkp_ent *e)
{
	uint8_t mask = 0;

	for (unsigned x = 0; x < BKP_XA_N; x++) {
		if (!e->xa[x])
			continue;
		if (e->xa_len[x] == 0 || e->xa_len[x] > BKP_XA_MAX)
			return -EINVAL;
		mask |= (uint8_t)(1u << x);
	}
	put_be(b, mask, 1);
	for (unsigned x = 0; x < BKP_XA_N; x++)
		if (e->xa[x]) {
			put_be(b, e->xa_len[x], 4);
			ut_buf_add(b, e->xa[x], e->xa_len[x]);
		}
	return 0;
}

int bkp_mf_encode(const struct bkp_mf *m, uint8_t **out, size_t *len)
{
	struct ut_buf b;
	uint64_t st[BKP_MF_NSTATS];
	int rc = 0;

	if (m->n == 0 || m->ents[0].type != BKP_T_DIR || m->ents[0].path[0] || strlen(m->source) > 1023 ||
	    (m->prev_id[0] && bkp_id_check(m->prev_id) != 0) || m->version < 1 || m->version > BKP_MF_VERSION)
		return -EINVAL;
	ut_buf_init(&b, BKP_MF_MAX - BKP_SEAL_OVERHEAD);
	ut_buf_add(&b, BKP_MF_MAGIC, 7);
	put_be(&b, '0' + m->version, 1);
	put_be(&b, m->chunk_size, 4);
	put_be(&b, (uint64_t)m->create_unix_ns, 8);
	stats_fields(&m->stats, st);
	for (unsigned i = 0; i < BKP_MF_NSTATS; i++)
		put_be(&b, st[i], 8);
	put_str16(&b, m->source);
	put_str16(&b, m->prev_id);
	put_be(&b, m->n, 4);
	for (size_t i = 0; i < m->n && ut_buf_err(&b) == 0; i++) {
		const struct bkp_ent *e = &m->ents[i];

		put_be(&b, e->type, 1);
		put_str16(&b, e->path);
		put_be(&b, e->mode & BKP_MODE_MASK, 4);
		put_be(&b, e->uid, 4);
		put_be(&b, e->gid, 4);
		put_be(&b, (uint64_t)e->atime_ns, 8);
		put_be(&b, (uint64_t)e->mtime_ns, 8);
		put_be(&b, (uint64_t)e->ctime_ns, 8);
		put_be(&b, e->ino, 8);
		put_be(&b, e->size, 8);
		if (e->type == BKP_T_REG) {
			put_be(&b, e->nchunks, 4);
			for (uint32_t c = 0; c < e->nchunks; c++) {
				put_be(&b, e->chunks[c].zero ? 1 : 0, 1);
				if (!e->chunks[c].zero)
					ut_buf_add(&b, e->chunks[c].id, BKP_ID_LEN);
			}
		} else if (e->type == BKP_T_SYMLINK) {
			put_str16(&b, e->target ? e->target : "");
		} else if (e->type == BKP_T_LINK) {
			put_be(&b, e->link, 4);
		}
		for (unsigned x = 0; x < BKP_XA_N && rc == 0; x++) /* only where the version and type carry them */
			if (e->xa[x] && (m->version < 2 || !has_xattrs(e)))
				rc = -EINVAL;
		if (rc == 0 && m->version >= 2 && has_xattrs(e))
			rc = put_xattrs(&b, e);
		if (rc != 0)
			goto out;
	}
	if ((rc = ut_buf_err(&b)) != 0) {
		rc = rc == AQ_ETOOBIG ? -E2BIG : -ENOMEM;
		goto out;
	}
	if (!(*out = (uint8_t *)ut_buf_steal(&b, len)))
		rc = -ENOMEM;
out:
	ut_buf_cleanup(&b);
	return rc;
}

/* ---- decoder: a sticky-error cursor ---- */

struct cur {
	const uint8_t *p;
	size_t left;
	int err;
};

static uint64_t get_be(struct cur *c, unsigned n)
{
	uint64_t v = 0;

	if (c->err || c->left < n) {
		c->err = -EBADMSG;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | c->p[i];
	c->p += n;
	c->left -= n;
	return v;
}

static void get_bytes(struct cur *c, void *out, size_t n)
{
	if (c->err || c->left < n) {
		c->err = -EBADMSG;
		return;
	}
	memcpy(out, c->p, n);
	c->p += n;
	c->left -= n;
}

/* A str16 of at most max bytes into a new string (or into buf when given). */
static char *get_str16(struct cur *c, size_t max, char *buf)
{
	size_t n = (size_t)get_be(c, 2);
	char *s;

	if (c->err || n > max || n > c->left || memchr(c->p, '\0', n)) {
		c->err = -EBADMSG;
		return NULL;
	}
	if (!(s = buf ? buf : malloc(n + 1))) {
		c->err = -ENOMEM;
		return NULL;
	}
	memcpy(s, c->p, n);
	s[n] = '\0';
	c->p += n;
	c->left -= n;
	return s;
}

/* An entry's xattrs field: the mask, then each length (capped before the
 * allocation) and its bytes. */
static void get_xattrs(struct cur *c, struct bkp_ent *e)
{
	uint64_t mask = get_be(c, 1);

	if (!c->err && (mask >> BKP_XA_N) != 0)
		c->err = -EBADMSG;
	for (unsigned x = 0; x < BKP_XA_N && !c->err; x++) {
		if (!(mask & (1u << x)))
			continue;
		e->xa_len[x] = (uint32_t)get_be(c, 4);
		if (c->err || e->xa_len[x] == 0 || e->xa_len[x] > BKP_XA_MAX || e->xa_len[x] > c->left) {
			c->err = -EBADMSG;
			return;
		}
		if (!(e->xa[x] = malloc(e->xa_len[x]))) {
			c->err = -ENOMEM;
			return;
		}
		get_bytes(c, e->xa[x], e->xa_len[x]);
	}
}

static void get_entry(struct cur *c, const struct bkp_mf *m, size_t idx, struct bkp_ent *e)
{
	e->type = (uint8_t)get_be(c, 1);
	if (!c->err && (e->type < BKP_T_DIR || e->type > BKP_T_LINK))
		c->err = -EBADMSG;
	if (!(e->path = get_str16(c, BKP_PATH_MAX, NULL)))
		return;
	if (bkp_path_check(e->path, strlen(e->path)) != 0 || (idx == 0) != (e->path[0] == '\0') ||
	    (idx == 0 && e->type != BKP_T_DIR))
		c->err = -EBADMSG;
	e->mode = (uint32_t)get_be(c, 4);
	e->uid = (uint32_t)get_be(c, 4);
	e->gid = (uint32_t)get_be(c, 4);
	e->atime_ns = (int64_t)get_be(c, 8);
	e->mtime_ns = (int64_t)get_be(c, 8);
	e->ctime_ns = (int64_t)get_be(c, 8);
	e->ino = get_be(c, 8);
	e->size = get_be(c, 8);
	if (!c->err && (e->mode & ~BKP_MODE_MASK))
		c->err = -EBADMSG;
	if (c->err)
		return;
	if (e->type == BKP_T_REG) {
		uint64_t want = e->size / m->chunk_size + (e->size % m->chunk_size ? 1 : 0);

		e->nchunks = (uint32_t)get_be(c, 4);
		/* each reference takes at least one byte: the cap before the allocation */
		if (c->err || e->nchunks != want || e->nchunks > c->left) {
			c->err = -EBADMSG;
			return;
		}
		if (e->nchunks && !(e->chunks = calloc(e->nchunks, sizeof *e->chunks))) {
			c->err = -ENOMEM;
			return;
		}
		for (uint32_t i = 0; i < e->nchunks && !c->err; i++) {
			uint64_t f = get_be(c, 1);

			if (f > 1)
				c->err = -EBADMSG;
			e->chunks[i].zero = f == 1;
			if (f == 0)
				get_bytes(c, e->chunks[i].id, BKP_ID_LEN);
		}
	} else if (e->type == BKP_T_SYMLINK) {
		if ((e->target = get_str16(c, BKP_PATH_MAX, NULL)) && !e->target[0])
			c->err = -EBADMSG;
	} else if (e->type == BKP_T_LINK) {
		e->link = (uint32_t)get_be(c, 4);
		if (!c->err && (e->link >= idx || m->ents[e->link].type != BKP_T_REG))
			c->err = -EBADMSG;
	}
	if (!c->err && m->version >= 2 && has_xattrs(e))
		get_xattrs(c, e);
}

int bkp_mf_decode(const uint8_t *buf, size_t len, struct bkp_mf *out)
{
	struct cur c = { .p = buf, .left = len };
	struct bkp_mf m;
	uint64_t st[BKP_MF_NSTATS];
	char magic[8];
	uint64_t n;

	bkp_mf_init(&m);
	if (len > BKP_MF_MAX)
		return -EBADMSG;
	get_bytes(&c, magic, 8);
	if (!c.err && (memcmp(magic, BKP_MF_MAGIC, 7) != 0 || magic[7] < '1' || magic[7] > '0' + BKP_MF_VERSION))
		c.err = -EBADMSG;
	m.version = c.err ? 0 : (uint32_t)(magic[7] - '0');
	m.chunk_size = (uint32_t)get_be(&c, 4);
	m.create_unix_ns = (int64_t)get_be(&c, 8);
	for (unsigned i = 0; i < BKP_MF_NSTATS; i++)
		st[i] = get_be(&c, 8);
	get_str16(&c, sizeof m.source - 1, m.source);
	get_str16(&c, BKP_ID_MAX, m.prev_id);
	n = get_be(&c, 4);
	if (!c.err && (m.chunk_size < BKP_CHUNK_MIN || m.chunk_size > BKP_CHUNK_MAX ||
		       (m.prev_id[0] && bkp_id_check(m.prev_id) != 0)))
		c.err = -EBADMSG;
	/* the cap before the allocation: a count the bytes left cannot hold is a lie */
	if (!c.err && (n == 0 || n > BKP_MF_ENTRIES_MAX || n > c.left / BKP_MF_ENT_MIN))
		c.err = -EBADMSG;
	if (!c.err && !(m.ents = calloc((size_t)n, sizeof *m.ents)))
		c.err = -ENOMEM;
	if (!c.err)
		m.cap = (size_t)n;
	for (size_t i = 0; i < n && !c.err; i++) {
		get_entry(&c, &m, i, &m.ents[i]);
		m.n = i + 1; /* so that cleanup frees what the entry holds */
	}
	if (!c.err && c.left != 0)
		c.err = -EBADMSG;
	if (c.err) {
		bkp_mf_cleanup(&m);
		return c.err == -ENOMEM ? -ENOMEM : -EBADMSG;
	}
	m.stats = (struct bkp_stats){ .files = st[0], .dirs = st[1], .symlinks = st[2], .hardlinks = st[3],
				      .skipped = st[4], .logical_bytes = st[5], .bytes_read = st[6],
				      .bytes_uploaded = st[7], .files_unchanged = st[8], .chunks = st[9],
				      .chunks_new = st[10], .chunks_zero = st[11], .manifest_bytes = st[12] };
	*out = m;
	return 0;
}
