/* tier_move: moving chunks: out to the object store (upload, record,
 * punch) and back in (rehydrate), with the races against hot I/O the
 * chunk versions settle.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/tier/tier_internal.h"

/* ---------- moving chunks ---------- */

void tier_kick(struct tier *t)
{
	pthread_mutex_lock(&t->tmu);
	t->kick = true;
	pthread_cond_signal(&t->tcv);
	pthread_mutex_unlock(&t->tmu);
}

/* Wait (v->mu held) until no chunk of f in [a, b) is busy; f may be gone
 * after (re-find by ino). */
struct tier_file *tier_wait_idle(struct tier_vol *v, uint64_t ino, uint32_t a, uint32_t b)
{
	struct tier_file *f;

	for (;;) {
		bool busy = false;

		if (!(f = tier_file_find(v, ino)))
			return NULL;
		for (uint32_t c = a; c < b && c < f->n; c++)
			busy |= f->state[c] == CH_BUSY;
		if (!busy)
			return f;
		pthread_cond_wait(&v->cv, &v->mu);
	}
}

static int tier_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t k = pwrite(fd, (const char *)buf + done, len - done, (off_t)(off + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		done += (size_t)k;
	}
	return 0;
}

ssize_t tier_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t k = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		done += (size_t)k;
	}
	return (ssize_t)done;
}

/* Bring cold chunk c of inode ino back into the file (fd: any descriptor
 * of it). 0 also when someone else did it first. */
int tier_rehydrate(struct tier_vol *v, uint64_t ino, uint32_t c, int fd)
{
	char key[TIER_KEY_MAX], fid[17], sum[TIER_SUM_HEX], want[TIER_SUM_HEX], p[64];
	uint8_t *buf = NULL;
	uint64_t cver, serial;
	struct tier_file *f;
	size_t got = 0;
	int rc = 0, wfd = -1;

	pthread_mutex_lock(&v->mu);
	f = tier_wait_idle(v, ino, c, c + 1);
	if (!f || c >= f->n || f->state[c] != CH_COLD) {
		pthread_mutex_unlock(&v->mu);
		return 0;
	}
	cver = f->cver[c];
	serial = f->serial;
	memcpy(fid, f->fid, sizeof(fid));
	pthread_mutex_unlock(&v->mu);
	tier_key(v, fid, c, cver, key);
	if (!(buf = malloc(TIER_CHUNK)))
		return -ENOMEM;
	rc = tier_fetch(v, key, 0, buf, TIER_CHUNK, &got);
	pthread_mutex_lock(&v->mu);
	f = tier_wait_idle(v, ino, c, c + 1);
	while (v->frozen) { /* a snapshot is being made: its rows must stay true */
		pthread_cond_wait(&v->cv, &v->mu);
		f = tier_wait_idle(v, ino, c, c + 1);
	}
	if (rc != 0 && (!f || f->serial != serial || f->state[c] != CH_COLD || f->cver[c] != cver))
		rc = 0; /* another reader brought it back and deleted the object under our GET */
	if (rc != 0) {
		pthread_mutex_unlock(&v->mu);
		goto out;
	}
	if (!f || f->serial != serial || f->state[c] != CH_COLD || f->cver[c] != cver) {
		pthread_mutex_unlock(&v->mu);
		goto out; /* another reader or writer brought it back first */
	}
	f->state[c] = CH_BUSY;
	pthread_mutex_unlock(&v->mu);
	/* Busy: the record cannot go away under the check. */
	tier_sum(buf, got, sum);
	if (got != TIER_CHUNK || tier_map_sum(v, fid, c, want) != 0 || strcmp(sum, want) != 0) {
		UT_ERROR("tier_move", NULL, "cold object %s fails its checksum", key);
		rc = -EIO;
	}
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	if (rc == 0 && (wfd = open(p, O_WRONLY | O_CLOEXEC)) < 0)
		rc = -errno;
	if (rc == 0)
		rc = tier_pwrite_all(wfd, buf, TIER_CHUNK, (uint64_t)c * TIER_CHUNK);
	if (rc == 0 && fdatasync(wfd) != 0)
		rc = -errno;
	if (rc == 0 && (rc = tier_map_begin(v)) == 0) {
		rc = tier_map_exec(v, "DELETE FROM chunks WHERE fid = ?1 AND idx = ?5", fid, NULL, NULL, 0, c);
		if (rc == 0)
			rc = tier_map_exec(v, "INSERT OR REPLACE INTO pending(key, why) VALUES(?1, 'rehydrated')", key, NULL,
				     NULL, 0, 0);
		rc = tier_map_end(v, rc);
	}
	pthread_mutex_lock(&v->mu);
	f->state[c] = rc == 0 ? CH_HOT : CH_COLD;
	if (rc == 0) {
		f->cver[c] = 0;
		f->ver[c]++;
		f->day[c] = tier_today(v->t);
		f->dirty = true;
	}
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->mu);
	if (rc == 0) {
		struct tier_store *s = tier_store_get(v->t);

		atomic_fetch_sub(&v->cold_bytes, TIER_CHUNK);
		if (s && (tier_snap_held(v, key) || obj_delete(s->obj, key) == 0))
			tier_map_pending_del(v, key); /* a snapshot's object stays */
		tier_store_put(s);
	}
out:
	if (wfd >= 0)
		close(wfd);
	free(buf);
	return rc;
}

/* Move chunk c of the file (fd, inode ino, serial) out when it is still
 * untouched since snap. 0 when moved or skipped. */
int tier_move_out(struct tier_vol *v, struct tier_store *s, int fd, uint64_t ino, uint64_t serial,
			 const char *fid, uint32_t c, uint32_t snap)
{
	char key[TIER_KEY_MAX], sum[TIER_SUM_HEX];
	uint8_t *buf = malloc(TIER_CHUNK);
	struct tier_file *f;
	uint64_t ver = 0, size = 0;
	bool recorded;
	ssize_t n;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	n = tier_pread_all(fd, buf, TIER_CHUNK, (uint64_t)c * TIER_CHUNK);
	if (n != (ssize_t)TIER_CHUNK) {
		free(buf);
		return n < 0 ? (int)n : 0; /* the file shrank meanwhile */
	}
	while (!ver && getrandom(&ver, sizeof(ver), 0) != sizeof(ver))
		;
	tier_key(v, fid, c, ver, key);
	if ((rc = tier_map_pending_add(v, key, "upload")) != 0)
		goto out;
	if ((rc = obj_put(s->obj, key, buf, TIER_CHUNK)) != 0 || (rc = obj_head(s->obj, key, &size)) != 0 ||
	    (size != TIER_CHUNK && (rc = -EIO))) {
		tier_health(v->t, rc, "upload");
		goto drop;
	}
	tier_sum(buf, TIER_CHUNK, sum);
	pthread_mutex_lock(&v->mu);
	f = tier_file_find(v, ino);
	if (!f || f->serial != serial || c >= f->n || f->state[c] != CH_HOT || f->ver[c] != snap || f->inflight ||
	    v->frozen) {
		pthread_mutex_unlock(&v->mu);
		goto drop; /* touched meanwhile: stays hot */
	}
	f->state[c] = CH_BUSY;
	recorded = f->recorded;
	pthread_mutex_unlock(&v->mu);
	if ((rc = tier_map_begin(v)) == 0) {
		if (!recorded)
			rc = tier_map_exec(v, "INSERT OR REPLACE INTO files(fid, ino) VALUES(?1, ?4)", fid, NULL, NULL,
				     (int64_t)ino, 0);
		if (rc == 0)
			rc = tier_map_exec(v, "INSERT OR REPLACE INTO chunks(fid, idx, key, len, sum) VALUES(?1, ?5, ?2, ?4, ?3)",
				     fid, key, sum, TIER_CHUNK, c);
		if (rc == 0)
			rc = tier_map_exec(v, "DELETE FROM pending WHERE key = ?1", key, NULL, NULL, 0, 0);
		rc = tier_map_end(v, rc);
	}
	/* Recorded: now the local copy may go. */
	if (rc == 0 && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)c * TIER_CHUNK, TIER_CHUNK) != 0)
		UT_ERROR("tier_move", NULL, "cannot punch a hole in a tiered file: %s", strerror(errno));
	pthread_mutex_lock(&v->mu);
	f->state[c] = rc == 0 ? CH_COLD : CH_HOT;
	if (rc == 0) {
		f->cver[c] = ver;
		f->recorded = true;
	}
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->mu);
	if (rc == 0) {
		atomic_fetch_add(&v->cold_bytes, TIER_CHUNK);
		atomic_fetch_add(&v->cold_write, TIER_CHUNK);
		goto out;
	}
drop:
	if (obj_delete(s->obj, key) == 0)
		tier_map_pending_del(v, key);
out:
	free(buf);
	return rc;
}

/* Forget the cold chunks of f (v->mu held; none busy): their rows go and
 * their objects become pending deletes. Returns the keys (malloc'd). */
size_t tier_take_cold(struct tier_vol *v, struct tier_file *f, uint32_t from, char (**keys)[TIER_KEY_MAX],
			uint32_t **idx)
{
	size_t n = 0;

	*keys = NULL;
	*idx = NULL;
	for (uint32_t c = from; c < f->n; c++)
		n += f->state[c] == CH_COLD;
	if (!n || !(*keys = calloc(n, TIER_KEY_MAX)) || !(*idx = calloc(n, sizeof(uint32_t)))) {
		free(*keys);
		*keys = NULL;
		return 0;
	}
	n = 0;
	for (uint32_t c = from; c < f->n; c++) {
		if (f->state[c] != CH_COLD)
			continue;
		tier_key(v, f->fid, c, f->cver[c], (*keys)[n]);
		(*idx)[n++] = c;
		f->state[c] = CH_HOT;
		f->cver[c] = 0;
	}
	return n;
}

void tier_drop_records(struct tier_vol *v, const char *fid, char (*keys)[TIER_KEY_MAX], uint32_t *idx, size_t n,
			 bool whole)
{
	int rc;

	if ((n || whole) && tier_map_begin(v) == 0) {
		rc = 0;
		for (size_t i = 0; i < n && rc == 0; i++) {
			rc = tier_map_exec(v, "DELETE FROM chunks WHERE fid = ?1 AND idx = ?5", fid, NULL, NULL, 0, idx[i]);
			if (rc == 0)
				rc = tier_map_exec(v, "INSERT OR REPLACE INTO pending(key, why) VALUES(?1, 'dropped')", keys[i],
					     NULL, NULL, 0, 0);
		}
		if (rc == 0 && whole)
			rc = tier_map_exec(v, "DELETE FROM heat WHERE fid = ?1", fid, NULL, NULL, 0, 0);
		if (rc == 0 && whole)
			rc = tier_map_exec(v, "DELETE FROM files WHERE fid = ?1", fid, NULL, NULL, 0, 0);
		tier_map_end(v, rc);
	}
	atomic_fetch_sub(&v->cold_bytes, (uint64_t)n * TIER_CHUNK);
	if (n)
		tier_kick(v->t);
}
