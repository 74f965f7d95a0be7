/* aq-objbench: obj_get_many throughput against an object store (bench/tier).
 *
 *   aq-objbench (--s3 ENDPOINT [--bucket B] [--access-key K] [--secret-key S] | --dir PATH)
 *               [--size-mib 256] [--object-mib 4] [--read-kib 1024] [--parallel 16]
 *               [--batch 64] [--seconds 5] [--random] [--no-fill]
 *
 * Fills the store with size-mib of data in objects of object-mib under
 * "bench/objNNNN" (skipped with --no-fill), then for `seconds` reads it in
 * batches of `batch` ranges of read-kib each through obj_get_many(...,
 * parallel): in order (sequential) or at random aligned offsets (--random).
 * Every range is checked against the pattern written. Prints one line:
 *   "read MiB/s=… ops/s=… batch_ms=… (ranges=… parallel=… read_kib=…)"
 * Exit status 1 on any obj error or mismatch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/obj/obj.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Byte at absolute offset off of object i: cheap, position-dependent. */
static unsigned char pattern(unsigned i, uint64_t off)
{
	return (unsigned char)((off * 2654435761u >> 13) ^ (i * 131u));
}

static void usage(void)
{
	fprintf(stderr, "usage: aq-objbench (--s3 URL [--bucket B] [--access-key K] [--secret-key S] | --dir PATH)\n"
			"       [--size-mib N] [--object-mib N] [--read-kib N] [--parallel N] [--batch N]\n"
			"       [--seconds N] [--random] [--no-fill]\n");
	exit(2);
}

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || v == 0)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	struct obj_cfg cfg = { 0 };
	struct obj_store *s = NULL;
	unsigned long size_mib = 256, obj_mib = 4, read_kib = 1024, parallel = 16, batch = 64, seconds = 5;
	int random_io = 0, fill = 1, rc = 1;

	snprintf(cfg.bucket, sizeof cfg.bucket, "aq-bench");
	snprintf(cfg.access_key, sizeof cfg.access_key, "S3RVER");
	snprintf(cfg.secret_key, sizeof cfg.secret_key, "S3RVER");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--random") == 0) { random_io = 1; continue; }
		if (strcmp(a, "--no-fill") == 0) { fill = 0; continue; }
		if (!v)
			usage();
		i++;
		if (strcmp(a, "--s3") == 0) { cfg.kind = OBJ_S3; snprintf(cfg.endpoint, sizeof cfg.endpoint, "%s", v); }
		else if (strcmp(a, "--dir") == 0) { cfg.kind = OBJ_DIRECTORY; snprintf(cfg.path, sizeof cfg.path, "%s", v); }
		else if (strcmp(a, "--bucket") == 0) snprintf(cfg.bucket, sizeof cfg.bucket, "%s", v);
		else if (strcmp(a, "--access-key") == 0) snprintf(cfg.access_key, sizeof cfg.access_key, "%s", v);
		else if (strcmp(a, "--secret-key") == 0) snprintf(cfg.secret_key, sizeof cfg.secret_key, "%s", v);
		else if (strcmp(a, "--size-mib") == 0) size_mib = num(v);
		else if (strcmp(a, "--object-mib") == 0) obj_mib = num(v);
		else if (strcmp(a, "--read-kib") == 0) read_kib = num(v);
		else if (strcmp(a, "--parallel") == 0) parallel = num(v);
		else if (strcmp(a, "--batch") == 0) batch = num(v);
		else if (strcmp(a, "--seconds") == 0) seconds = num(v);
		else usage();
	}
	if (!cfg.kind || obj_mib > size_mib || read_kib > obj_mib * 1024 || (obj_mib * 1024) % read_kib)
		usage();
	cfg.timeout_ms = 30000;
	unsigned nobj = (unsigned)(size_mib / obj_mib);
	size_t osize = obj_mib << 20, rsize = read_kib << 10;
	unsigned char *obuf = malloc(osize), *rbuf = malloc(batch * rsize);
	struct obj_range *r = calloc(batch, sizeof *r);
	char (*keys)[32] = calloc(batch, sizeof *keys);
	char err[256];
	int orc;

	if (!obuf || !rbuf || !r || !keys)
		goto out;
	if ((orc = obj_open(&cfg, &s)) != 0 || (orc = obj_ensure_bucket(s)) != 0) {
		fprintf(stderr, "aq-objbench: open: %s\n", obj_strerror(orc));
		goto out;
	}
	double t0 = now_s();
	for (unsigned i = 0; fill && i < nobj; i++) {
		char key[32];
		for (size_t b = 0; b < osize; b++)
			obuf[b] = pattern(i, b);
		snprintf(key, sizeof key, "bench/obj%04u", i);
		if ((orc = obj_put(s, key, obuf, osize)) != 0) {
			obj_last_error(s, err, sizeof err);
			fprintf(stderr, "aq-objbench: put %s: %s (%s)\n", key, obj_strerror(orc), err);
			goto out;
		}
	}
	if (fill)
		printf("fill MiB/s=%.1f (%lu MiB in %u objects)\n", (double)size_mib / (now_s() - t0), size_mib, nobj);

	uint64_t per_obj = osize / rsize, total = per_obj * nobj, next = 0, bytes = 0, ops = 0, batches = 0;
	srand(42);
	t0 = now_s();
	double end = t0 + (double)seconds;
	while (now_s() < end) {
		for (size_t k = 0; k < batch; k++) {
			uint64_t idx = random_io ? ((uint64_t)rand() * 65536u + (uint64_t)rand()) % total : next++ % total;
			snprintf(keys[k], sizeof keys[k], "bench/obj%04u", (unsigned)(idx / per_obj));
			r[k] = (struct obj_range){ .key = keys[k], .off = (idx % per_obj) * rsize,
						   .buf = rbuf + k * rsize, .len = rsize };
		}
		if ((orc = obj_get_many(s, r, batch, (unsigned)parallel)) != 0) {
			obj_last_error(s, err, sizeof err);
			fprintf(stderr, "aq-objbench: get_many: %s (%s)\n", obj_strerror(orc), err);
			goto out;
		}
		for (size_t k = 0; k < batch; k++) {
			unsigned i = (unsigned)strtoul(keys[k] + 9, NULL, 10);
			unsigned char *p = r[k].buf;
			if (r[k].got != rsize || p[0] != pattern(i, r[k].off) ||
			    p[rsize - 1] != pattern(i, r[k].off + rsize - 1)) {
				fprintf(stderr, "aq-objbench: %s@%llu: wrong data\n", keys[k], (unsigned long long)r[k].off);
				goto out;
			}
			bytes += r[k].got;
		}
		ops += batch;
		batches++;
	}
	double el = now_s() - t0;
	printf("read MiB/s=%.1f ops/s=%.0f batch_ms=%.1f (%s, ranges=%lu parallel=%lu read_kib=%lu)\n",
	       (double)bytes / 1048576.0 / el, (double)ops / el, el * 1000.0 / (double)batches,
	       random_io ? "random" : "sequential", batch, parallel, read_kib);
	rc = 0;
out:
	obj_close(s);
	free(obuf);
	free(rbuf);
	free(r);
	free(keys);
	return rc;
}
