/* smb_stub: the shared cold tier stub of the SMB suites (smb_stub.h). */
#include "tests/agent/smb/smb_stub.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/agent/smb/smb_harness.h"
#include "tests/lib/aqt_store.h"

struct smbt_stub smbt_stub = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static const struct vol_cred stub_root = { .uid = 0, .gid = 0 };

static bool stub_is_cold(ino_t ino)
{
	return ino == smbt_stub.cold_ino[0] || ino == smbt_stub.cold_ino[1];
}

static int stub_cold(void *arg, uint64_t fsid, const struct stat *st, uint64_t off, size_t len)
{
	(void)arg, (void)fsid, (void)off, (void)len;
	return stub_is_cold(st->st_ino);
}

/* Count a cold file's call in *count; hold the thread while the stalled
 * file's calls are not let go (at most SMBT_STUB_HOLD_S). */
static void stub_hold(ino_t ino, unsigned *count)
{
	struct timespec until;

	pthread_mutex_lock(&smbt_stub.mu);
	if (stub_is_cold(ino))
		(*count)++;
	if (ino != smbt_stub.stall_ino) {
		pthread_mutex_unlock(&smbt_stub.mu);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += SMBT_STUB_HOLD_S;
	if (++smbt_stub.inside > smbt_stub.max_inside)
		smbt_stub.max_inside = smbt_stub.inside;
	while (!smbt_stub.go && pthread_cond_timedwait(&smbt_stub.cv, &smbt_stub.mu, &until) == 0)
		;
	smbt_stub.inside--;
	smbt_stub.ended++;
	pthread_mutex_unlock(&smbt_stub.mu);
}

static int stub_read(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, void *buf, size_t len,
		     size_t *got, void **swap)
{
	(void)arg, (void)fsid, (void)fd, (void)off, (void)buf, (void)len, (void)got, (void)swap;
	stub_hold(st->st_ino, &smbt_stub.cold_reads);
	return 1; /* the file holds every byte: the store reads it */
}

/* A write's tier work (a cold range brought back first). */
static int stub_write_begin(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, size_t len)
{
	unsigned none = 0;

	(void)arg, (void)fsid, (void)fd, (void)off;
	pthread_mutex_lock(&smbt_stub.mu);
	smbt_stub.writes++;
	if (len > smbt_stub.write_len_max)
		smbt_stub.write_len_max = len;
	pthread_mutex_unlock(&smbt_stub.mu);
	stub_hold(st->st_ino, &none);
	return 0;
}

static void stub_void(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, size_t len)
{
	(void)arg, (void)fsid, (void)fd, (void)st, (void)off, (void)len;
}

/* A truncate's tier work (the cold chunks past the new size dropped). */
static int stub_trunc(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t size)
{
	(void)arg, (void)fsid, (void)fd, (void)size;
	stub_hold(st->st_ino, &smbt_stub.truncs);
	return 0;
}

static void stub_st(void *arg, uint64_t fsid, const struct stat *st)
{
	(void)arg, (void)fsid, (void)st;
}

const struct vol_tier_ops smbt_stub_ops = {
	.read = stub_read, .cold = stub_cold, .write_begin = stub_write_begin, .write_end = stub_void,
	.truncate = stub_trunc, .truncate_end = stub_st, .unlinked = stub_st,
};

void smbt_stub_reset(void)
{
	pthread_mutex_lock(&smbt_stub.mu);
	smbt_stub.cold_ino[0] = smbt_stub.cold_ino[1] = smbt_stub.stall_ino = 0;
	smbt_stub.go = false;
	smbt_stub.inside = smbt_stub.max_inside = smbt_stub.ended = 0;
	smbt_stub.cold_reads = smbt_stub.truncs = smbt_stub.writes = 0;
	smbt_stub.write_len_max = 0;
	pthread_mutex_unlock(&smbt_stub.mu);
}

void smbt_stub_release(void)
{
	pthread_mutex_lock(&smbt_stub.mu);
	smbt_stub.go = true;
	pthread_cond_broadcast(&smbt_stub.cv);
	pthread_mutex_unlock(&smbt_stub.mu);
}

unsigned smbt_stub_get(const unsigned *field)
{
	unsigned v;

	pthread_mutex_lock(&smbt_stub.mu);
	v = *field;
	pthread_mutex_unlock(&smbt_stub.mu);
	return v;
}

double smbt_now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void smbt_stub_wait_inside(unsigned n)
{
	double end = smbt_now_s() + 5;

	while (smbt_stub_get(&smbt_stub.inside) < n && smbt_now_s() < end)
		usleep(2000);
	ck_assert_uint_eq(smbt_stub_get(&smbt_stub.inside), n);
}

uint8_t smbt_pattern(const char *name, uint64_t i)
{
	return (uint8_t)(name[0] * 31u + i * 7u + (i >> 9));
}

ino_t smbt_file_make(struct vol_export *e, const char *name, size_t len)
{
	struct vol_obj root, f;
	struct vol_sattr sa = { 0 };
	uint8_t *data = malloc(len ? len : 1);
	ino_t ino;
	int committed;

	ck_assert_ptr_nonnull(data);
	for (uint64_t i = 0; i < len; i++)
		data[i] = smbt_pattern(name, i);
	ck_assert_int_eq(vol_root(e, &root), 0);
	ck_assert_int_eq(vol_create(&root, &stub_root, name, strlen(name), false, NULL, &sa, &f), 0);
	for (size_t off = 0; off < len; off += VOL_IO_MAX)
		ck_assert_int_eq(vol_write(&f, &stub_root, off, data + off, len - off < VOL_IO_MAX ? len - off : VOL_IO_MAX,
					   0, &committed), 0);
	ino = f.st.st_ino;
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&root);
	free(data);
	return ino;
}

void smbt_stub_up(struct aqt_store *ts, struct smb_srv **srv, struct vol_export **exp0)
{
	smbt_export_up(ts, srv, exp0);
	vol_store_set_tier(ts->store, &smbt_stub_ops, NULL);
	smbt_stub_reset();
}

void smbt_stub_down(struct aqt_store *ts, struct smb_srv *srv, struct vol_export *exp0)
{
	smbt_stub_release(); /* whatever still waits in the stub */
	smbt_export_down(ts, srv, exp0);
}
