/* tier_pass: the tiering pass over each volume's files and the tier
 * thread that runs it once per tiering day (and probes a down store).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/tier/tier_internal.h"

/* ---------- the pass ---------- */

/* The file id of fd, assigned now if it has none. */
static int tier_file_id(int fd, char *fid)
{
	ssize_t n = fgetxattr(fd, TIER_FID_XATTR, fid, 16);
	uint64_t r = 0;

	if (n == 16) {
		fid[16] = '\0';
		return strspn(fid, "0123456789abcdef") == 16 ? 0 : -EINVAL;
	}
	if (n >= 0 || errno != ENODATA)
		return n >= 0 ? -EINVAL : -errno;
	while (!r && getrandom(&r, sizeof(r), 0) != sizeof(r))
		;
	snprintf(fid, 17, "%016" PRIx64, r);
	if (fsetxattr(fd, TIER_FID_XATTR, fid, 16, XATTR_CREATE) != 0)
		return errno == EEXIST ? tier_file_id(fd, fid) : -errno;
	return 0;
}

static int tier_pass_file(struct tier_vol *v, struct tier_store *s, int dirfd, const char *name, uint32_t threshold)
{
	int fd = openat(dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
	char fid[17], (*keys)[TIER_KEY_MAX] = NULL, old[17] = "";
	uint32_t today = tier_today(v->t), mday, nfull, *idx = NULL;
	uint64_t serial;
	struct stat st;
	size_t nstale = 0;
	int rc = 0;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || tier_file_id(fd, fid) != 0)
		goto out;
	nfull = (uint32_t)((uint64_t)st.st_size / TIER_CHUNK);
	mday = tier_day_of(v->t, (double)st.st_mtim.tv_sec);
	pthread_mutex_lock(&v->mu);
	struct tier_file *f = tier_file_get(v, st.st_ino, nfull);

	if (f && f->fid[0] && strcmp(f->fid, fid) != 0 && (f = tier_wait_idle(v, st.st_ino, 0, UINT32_MAX))) {
		/* The inode now holds another file: the old one went behind our back. */
		memcpy(old, f->fid, sizeof(old));
		nstale = tier_take_cold(v, f, 0, &keys, &idx);
		f->fid[0] = '\0';
		f->recorded = false;
	}
	if (f && !f->fid[0]) {
		memcpy(f->fid, fid, sizeof(fid));
		f->dirty = true;
	}
	serial = f ? f->serial : 0;
	pthread_mutex_unlock(&v->mu);
	if (old[0])
		tier_drop_records(v, old, keys, idx, nstale, true);
	for (uint32_t c = 0; f && c < nfull && rc == 0 && !atomic_load(&v->t->stopping); c++) {
		uint32_t snap, d;

		pthread_mutex_lock(&v->mu);
		f = tier_file_find(v, st.st_ino);
		if (!f || f->serial != serial || c >= f->n) {
			pthread_mutex_unlock(&v->mu);
			break;
		}
		d = f->day[c] ? f->day[c] : mday;
		if (f->state[c] != CH_HOT || f->inflight || today < d + threshold) {
			pthread_mutex_unlock(&v->mu);
			continue;
		}
		snap = f->ver[c];
		pthread_mutex_unlock(&v->mu);
		rc = tier_move_out(v, s, fd, st.st_ino, serial, fid, c, snap);
	}
out:
	free(keys);
	free(idx);
	close(fd);
	return rc == -EAGAIN ? rc : 0;
}

static int tier_pass_dir(struct tier_vol *v, struct tier_store *s, int dirfd, uint32_t threshold, int depth)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(dirfd);
		return 0;
	}
	while (rc == 0 && !atomic_load(&v->t->stopping) && (de = readdir(d)) != NULL) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISREG(st.st_mode) && st.st_size >= (off_t)TIER_CHUNK) {
			rc = tier_pass_file(v, s, dirfd, de->d_name, threshold);
		} else if (S_ISDIR(st.st_mode) && depth < 256) {
			int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				rc = tier_pass_dir(v, s, sub, threshold, depth + 1);
		}
	}
	closedir(d);
	return rc;
}

static int tier_pass_vol(struct tier_vol *v, struct tier_store *s, bool bypass_only)
{
	int fd, rc = 0;

	if (v->cfg.action == TIER_ENABLED && (!bypass_only || v->cfg.bypass)) {
		atomic_store(&v->bypass_due, false);
		fd = open(v->cfg.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			rc = tier_pass_dir(v, s, fd, v->cfg.bypass ? 0 : (uint32_t)v->cfg.cooling_days, 0);
	}
	if (!bypass_only)
		tier_map_flush_heat(v);
	if (rc != -EAGAIN)
		tier_map_gc(v, s);
	return rc;
}

/* Snapshot of the volume set (counted). */
size_t tier_vols_get(struct tier *t, struct tier_vol ***out)
{
	size_t n;

	pthread_rwlock_rdlock(&t->lk);
	*out = calloc(t->nvols ? t->nvols : 1, sizeof(**out));
	n = *out ? t->nvols : 0;
	for (size_t i = 0; i < n; i++) {
		(*out)[i] = t->vols[i];
		atomic_fetch_add(&t->vols[i]->refs, 1);
	}
	pthread_rwlock_unlock(&t->lk);
	return n;
}

void tier_vols_put(struct tier_vol **vs, size_t n)
{
	for (size_t i = 0; vs && i < n; i++)
		tier_vol_unref(vs[i]);
	free(vs);
}

static int tier_pass_mode(struct tier *t, bool bypass_only)
{
	struct tier_store *s = tier_store_get(t);
	struct tier_vol **vs;
	size_t n = tier_vols_get(t, &vs);
	int rc = s ? 0 : -EAGAIN;

	for (size_t i = 0; i < n && rc == 0; i++) {
		if (!bypass_only || atomic_load(&vs[i]->bypass_due))
			rc = tier_pass_vol(vs[i], s, bypass_only);
		else
			tier_map_gc(vs[i], s); /* deferred deletes */
	}
	tier_vols_put(vs, n);
	tier_store_put(s);
	return rc;
}

int tier_pass(struct tier *t)
{
	return tier_pass_mode(t, false);
}

void tier_drain(struct tier *t)
{
	tier_pass_mode(t, true);
}

/* Is the store back? */
static void tier_probe(struct tier *t)
{
	struct tier_store *s = tier_store_get(t);
	char key[96];
	uint64_t size;
	int rc;

	if (!s)
		return;
	snprintf(key, sizeof(key), "%s/probe", t->cfg.location);
	rc = obj_head(s->obj, key, &size);
	tier_health(t, rc == -ENOENT ? 0 : rc, "probe");
	tier_store_put(s);
}

void *tier_main(void *arg)
{
	struct tier *t = arg;
	double next = (double)ut_clock_mono_ms() + 1500;

	pthread_mutex_lock(&t->tmu);
	while (!t->stopping) {
		struct timespec ts;
		double now = (double)ut_clock_mono_ms(), until = next < now + 1000 ? next : now + 1000;

		if (!t->kick && until > now) {
			ut_clock_deadline(&ts, (uint64_t)(until - now));
			pthread_cond_timedwait(&t->tcv, &t->tmu, &ts);
		}
		t->kick = false;
		pthread_mutex_unlock(&t->tmu);
		if (tier_is_down(t)) {
			tier_probe(t);
		} else if ((double)ut_clock_mono_ms() >= next) {
			tier_pass(t);
			next = (double)ut_clock_mono_ms() + t->cfg.day_seconds * 1000.0;
		} else {
			tier_drain(t);
		}
		pthread_mutex_lock(&t->tmu);
	}
	pthread_mutex_unlock(&t->tmu);
	return NULL;
}
