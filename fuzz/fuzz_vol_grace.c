/* fuzz_vol_grace: libFuzzer harness over the reader of a volume's lock
 * holder records (agent/vol/vol_grace.c, "<lockdir>/holders" on the
 * shelf): vol_grace_parse_line on the input as one NUL-terminated line, and
 * a whole-file load (the input written as the file, the volume attached so
 * the store reads it, every line through the caps). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/vol/vol.h"
#include "agent/vol/vol_grace.h"

static struct vol_store *store;
static struct vol_export_cfg cfg;
static char scratch[] = "/tmp/aqfuzz-grace-XXXXXX";
static char path[512];

static void init(void)
{
	uint8_t key[VOL_KEY_LEN] = { 1 };

	if (!mkdtemp(scratch))
		abort();
	snprintf(cfg.id, sizeof(cfg.id), "v");
	snprintf(cfg.path, sizeof(cfg.path), "/v");
	snprintf(cfg.root, sizeof(cfg.root), "%s/root", scratch);
	snprintf(cfg.lockdir, sizeof(cfg.lockdir), "%s/locks", scratch);
	snprintf(path, sizeof(path), "%s/%s", cfg.lockdir, VOL_GRACE_FILE);
	cfg.fsid = 7;
	cfg.capacity = 1 << 20;
	if (mkdir(cfg.root, 0755) != 0 || mkdir(cfg.lockdir, 0700) != 0 || vol_store_new(key, &store) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t name[VOL_GRACE_NAME_MAX];
	struct sockaddr_storage ss;
	unsigned proto;
	size_t len;
	char *line;
	FILE *f;

	if (!store)
		init();
	if (!(line = malloc(size + 1)))
		return 0;
	memcpy(line, data, size);
	line[size] = 0;
	if (vol_grace_parse_line(line, &proto, name, &len, &ss) == 0 &&
	    (len == 0 || len > VOL_GRACE_NAME_MAX || (proto != VOL_GRACE_NLM && proto != VOL_GRACE_NFS4)))
		abort();
	free(line);
	if ((f = fopen(path, "w"))) {
		fwrite(data, 1, size, f);
		fclose(f);
		(void)vol_store_set(store, &cfg, 1); /* attached: the records are read */
		(void)vol_store_set(store, NULL, 0);
	}
	return 0;
}
