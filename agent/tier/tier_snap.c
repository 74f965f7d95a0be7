/* tier_snap: snapshots of tiered volumes (issue 20).
 *
 * A snapshot of a tiered file holds holes where its chunks were cold; what
 * they held is the objects the chunk rows named at that instant. So a
 * snapshot is made with the volume frozen (no chunk moves out or back in:
 * tier_snap_freeze waits for the moves in flight, new ones wait or skip),
 * and its copy of the rows, snapchunks(snap, uid, fid, idx, key, len, sum),
 * is written in one transaction before the snapshot gets its name; a crash
 * in between leaves rows of a snapshot that does not exist, which
 * tier_snap_sweep drops. An object is deleted only when neither a chunk row
 * (the live file) nor a snapchunks row names it (tier_snap_held, asked by
 * every delete: rehydrate and the pending sweep); forgetting a snapshot
 * makes the keys nothing else names pending deletes. Reads of a snapshot's
 * file (vol's snap_read hook) take the chunks its rows name from the store
 * (through the chunk cache) and the rest from the file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/tier/tier_internal.h"

int tier_snap_freeze(struct tier *t, uint64_t fsid)
{
	struct tier_vol *v = tier_vol_find(t, fsid);

	if (!v)
		return 1;
	pthread_mutex_lock(&v->mu);
	v->frozen++;
	for (;;) {
		bool busy = false;

		for (size_t h = 0; h < TIER_HASH && !busy; h++)
			for (struct tier_file *f = v->hash[h]; f && !busy; f = f->next)
				for (uint32_t c = 0; c < f->n && !busy; c++)
					busy = f->state[c] == CH_BUSY;
		if (!busy)
			break;
		pthread_cond_wait(&v->cv, &v->mu);
	}
	pthread_mutex_unlock(&v->mu);
	tier_vol_unref(v);
	return 0;
}

void tier_snap_thaw(struct tier *t, uint64_t fsid)
{
	struct tier_vol *v = tier_vol_find(t, fsid);

	if (!v)
		return;
	pthread_mutex_lock(&v->mu);
	if (v->frozen)
		v->frozen--;
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->mu);
	tier_vol_unref(v);
}

int tier_snap_record(struct tier *t, uint64_t fsid, const char *snap, const char *uid)
{
	struct tier_vol *v = tier_vol_find(t, fsid);
	int rc;

	if (!v)
		return 0;
	if ((rc = tier_map_begin(v)) == 0) {
		/* rows a crash left under this id and uid (the snapshot never came) */
		rc = tier_map_exec(v, "DELETE FROM snapchunks WHERE snap = ?1 AND uid = ?2", snap, uid, NULL, 0, 0);
		if (rc == 0)
			rc = tier_map_exec(v, "INSERT INTO snapchunks(snap, uid, fid, idx, key, len, sum)"
					      " SELECT ?1, ?2, fid, idx, key, len, sum FROM chunks", snap, uid, NULL, 0, 0);
		rc = tier_map_end(v, rc);
	}
	tier_vol_unref(v);
	return rc;
}

/* Drop the rows of snapshot snap (id) with uid; the keys nothing else
 * names become pending deletes (the same transaction). */
static int tier_snap_drop(struct tier_vol *v, const char *snap, const char *uid)
{
	int rc;

	if ((rc = tier_map_begin(v)) == 0) {
		rc = tier_map_exec(v, "INSERT OR REPLACE INTO pending(key, why) SELECT s.key, 'snapshot' FROM snapchunks s"
				      " WHERE s.snap = ?1 AND s.uid = ?2 AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.key = s.key)"
				      " AND NOT EXISTS (SELECT 1 FROM snapchunks o WHERE o.key = s.key AND"
				      " NOT (o.snap = ?1 AND o.uid = ?2))",
				   snap, uid, NULL, 0, 0);
		if (rc == 0)
			rc = tier_map_exec(v, "DELETE FROM snapchunks WHERE snap = ?1 AND uid = ?2", snap, uid, NULL, 0, 0);
		rc = tier_map_end(v, rc);
	}
	if (rc == 0)
		tier_kick(v->t); /* the pass deletes the pending objects */
	return rc;
}

int tier_snap_forget(struct tier *t, uint64_t fsid, const char *snap, const char *uid)
{
	struct tier_vol *v = tier_vol_find(t, fsid);
	int rc;

	if (!v)
		return 0;
	rc = tier_snap_drop(v, snap, uid);
	tier_vol_unref(v);
	return rc;
}

int tier_snap_sweep(struct tier *t, uint64_t fsid, const struct api_intent_snap *keep, size_t n)
{
	struct tier_vol *v = tier_vol_find(t, fsid);
	struct tier_keylist snaps = {0};
	sqlite3_stmt *st = NULL;
	int rc = 0;

	if (!v)
		return 0;
	pthread_mutex_lock(&v->dbmu);
	if (sqlite3_prepare_v2(v->db, "SELECT DISTINCT snap || ' ' || uid FROM snapchunks", -1, &st, NULL) != SQLITE_OK)
		rc = -EIO;
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW)
		rc = tier_keylist_add(&snaps, (const char *)sqlite3_column_text(st, 0), 0);
	sqlite3_finalize(st);
	pthread_mutex_unlock(&v->dbmu);
	for (size_t i = 0; rc == 0 && i < snaps.n; i++) {
		char *sp = strchr(snaps.k[i], ' ');
		size_t k;

		if (!sp)
			continue;
		*sp = '\0';
		for (k = 0; k < n && !(strcmp(keep[k].id, snaps.k[i]) == 0 && strcmp(keep[k].uid, sp + 1) == 0); k++)
			;
		if (k == n)
			rc = tier_snap_drop(v, snaps.k[i], sp + 1);
	}
	tier_keylist_free(&snaps);
	tier_vol_unref(v);
	return rc;
}

bool tier_snap_held(struct tier_vol *v, const char *key)
{
	sqlite3_stmt *st = NULL;
	bool held = true; /* when in doubt, keep the object */

	pthread_mutex_lock(&v->dbmu);
	if (sqlite3_prepare_v2(v->db, "SELECT 1 FROM snapchunks WHERE key = ?1 LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		held = sqlite3_step(st) == SQLITE_ROW;
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&v->dbmu);
	return held;
}

/* The object snapshot snap recorded for chunk idx of file fid, or -ENOENT. */
static int tier_snap_key(struct tier_vol *v, const char *snap, const char *fid, uint32_t idx, char *key)
{
	sqlite3_stmt *st = NULL;
	int rc = -ENOENT;

	pthread_mutex_lock(&v->dbmu);
	if (sqlite3_prepare_v2(v->db, "SELECT key FROM snapchunks WHERE snap = ?1 AND fid = ?2 AND idx = ?3", -1, &st,
			       NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, snap, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, fid, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, idx);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
			snprintf(key, TIER_KEY_MAX, "%s", (const char *)sqlite3_column_text(st, 0));
			rc = 0;
		}
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&v->dbmu);
	return rc;
}

int tier_snap_read(struct tier *t, uint64_t fsid, const char *snap, int fd, const struct stat *st, uint64_t off,
		   void *buf, size_t len, size_t *got)
{
	struct tier_vol *v = tier_vol_find(t, fsid);
	char fid[17], key[TIER_KEY_MAX];
	uint64_t pos = off, end = off + len;
	ssize_t n;
	int rc = 0;

	*got = 0;
	if (!v)
		return 1;
	if ((n = fgetxattr(fd, TIER_FID_XATTR, fid, 16)) != 16) {
		tier_vol_unref(v);
		return 1; /* never tiered: every byte is in the file */
	}
	fid[16] = '\0';
	if (end > (uint64_t)st->st_size)
		end = (uint64_t)st->st_size;
	while (rc == 0 && pos < end) {
		uint32_t c = (uint32_t)(pos / TIER_CHUNK);
		uint64_t cend = ((uint64_t)c + 1) * TIER_CHUNK < end ? ((uint64_t)c + 1) * TIER_CHUNK : end;
		size_t want = (size_t)(cend - pos), g = 0;
		uint8_t *dst = (uint8_t *)buf + (pos - off);

		if (tier_snap_key(v, snap, fid, c, key) == 0) {
			rc = tier_fetch(v, key, pos - (uint64_t)c * TIER_CHUNK, dst, want, &g);
			if (rc == 0 && g != want)
				rc = -EIO;
			if (rc == 0)
				atomic_fetch_add(&v->cold_read, want);
		} else if ((n = tier_pread_all(fd, dst, want, pos)) < 0) {
			rc = (int)n;
		} else if ((size_t)n < want) {
			memset(dst + n, 0, want - (size_t)n); /* shrank under us: a hole */
		}
		pos = cend;
	}
	if (rc == 0)
		*got = (size_t)(end > off ? end - off : 0);
	tier_vol_unref(v);
	return rc;
}

/* Fill the chunks snapshot snap recorded cold for the regular file open as
 * fd (fid from its xattr) into it, and sync it. */
static int tier_snap_fill_file(struct tier_vol *v, const char *snap, int fd, uint8_t *buf)
{
	char fid[17], key[TIER_KEY_MAX];
	struct stat st;
	bool wrote = false;
	int rc = 0;

	if (fgetxattr(fd, TIER_FID_XATTR, fid, 16) != 16 || fstat(fd, &st) != 0)
		return 0; /* never tiered: every byte is in the file */
	fid[16] = '\0';
	/* the source's tier map is not on this node: a hole may be a cold
	 * chunk it cannot fetch, so a tiered file with holes is refused */
	if (!v)
		return st.st_size > 0 && lseek(fd, 0, SEEK_HOLE) < st.st_size ? -EREMOTE : 0;
	for (uint32_t c = 0; rc == 0 && (uint64_t)c * TIER_CHUNK < (uint64_t)st.st_size; c++) {
		uint64_t at = (uint64_t)c * TIER_CHUNK;
		size_t want = (uint64_t)st.st_size - at < TIER_CHUNK ? (size_t)((uint64_t)st.st_size - at) : TIER_CHUNK;
		size_t got = 0;

		if (tier_snap_key(v, snap, fid, c, key) != 0)
			continue; /* hot at snapshot time: the copy has it */
		if ((rc = tier_fetch(v, key, 0, buf, want, &got)) == 0 && got != want)
			rc = -EIO;
		if (rc == 0 && pwrite(fd, buf, want, (off_t)at) != (ssize_t)want)
			rc = -EIO;
		wrote = true;
	}
	if (rc == 0 && wrote && fdatasync(fd) != 0)
		rc = -errno;
	return rc;
}

/* Walk the folder dfd (closed here), depth bounded like the copy's. */
static int tier_snap_fill_dir(struct tier_vol *v, const char *snap, int dfd, int depth, uint8_t *buf)
{
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (depth > 512) {
		close(dfd);
		return -ELOOP;
	}
	if (!(d = fdopendir(dfd))) {
		close(dfd);
		return -errno;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		struct stat st;
		int fd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			rc = -errno;
		} else if (S_ISDIR(st.st_mode)) {
			if ((fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
				rc = -errno;
			else
				rc = tier_snap_fill_dir(v, snap, fd, depth + 1, buf);
		} else if (S_ISREG(st.st_mode)) {
			if ((fd = openat(dirfd(d), de->d_name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
				rc = -errno;
			} else {
				rc = tier_snap_fill_file(v, snap, fd, buf);
				close(fd);
			}
		}
	}
	closedir(d);
	return rc;
}

int tier_snap_fill(struct tier *t, uint64_t fsid, const char *snap, int dirfd, const char *name)
{
	struct tier_vol *v = tier_vol_find(t, fsid);
	uint8_t *buf = NULL;
	int fd, rc;

	/* without v (the volume is not tiered here) only the check runs */
	if (!(buf = malloc(TIER_CHUNK))) {
		rc = -ENOMEM;
		goto out;
	}
	if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		rc = -errno;
		goto out;
	}
	rc = tier_snap_fill_dir(v, snap, fd, 0, buf);
out:
	free(buf);
	if (v)
		tier_vol_unref(v);
	return rc;
}

int tier_snap_revert(struct tier *t, uint64_t fsid)
{
	struct tier_vol *v = tier_vol_find(t, fsid);
	int rc;

	if (!v)
		return 0;
	if ((rc = tier_map_begin(v)) == 0) {
		/* the old tree's objects go unless a snapshot names them */
		rc = tier_map_exec(v, "INSERT OR REPLACE INTO pending(key, why) SELECT c.key, 'revert' FROM chunks c"
				      " WHERE NOT EXISTS (SELECT 1 FROM snapchunks s WHERE s.key = c.key)",
				   NULL, NULL, NULL, 0, 0);
		if (rc == 0)
			rc = tier_map_exec(v, "DELETE FROM chunks", NULL, NULL, NULL, 0, 0);
		if (rc == 0)
			rc = tier_map_exec(v, "DELETE FROM heat", NULL, NULL, NULL, 0, 0);
		if (rc == 0)
			rc = tier_map_exec(v, "DELETE FROM files", NULL, NULL, NULL, 0, 0);
		rc = tier_map_end(v, rc);
	}
	if (rc == 0) {
		/* what is known of the old tree's files, by inode, goes too: the
		 * new tree's inodes may carry the same numbers (a btrfs snapshot
		 * keeps them); every user looks a file up again by inode */
		pthread_mutex_lock(&v->mu);
		for (size_t h = 0; h < TIER_HASH; h++) {
			struct tier_file *f = v->hash[h], *next;

			for (; f; f = next) {
				next = f->next;
				tier_file_free(f);
			}
			v->hash[h] = NULL;
		}
		atomic_store(&v->cold_bytes, 0);
		pthread_cond_broadcast(&v->cv);
		pthread_mutex_unlock(&v->mu);
		tier_kick(t); /* the pass deletes the pending objects */
	}
	tier_vol_unref(v);
	return rc;
}
