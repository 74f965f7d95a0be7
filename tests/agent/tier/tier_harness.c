/* tier_harness: the tier suites' volume, tier and clock (tier_harness.h). */
#include "tests/agent/tier/tier_harness.h"

#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

uint8_t tiert_pat(uint64_t off)
{
	return (uint8_t)((off * 2654435761u) >> 13 ^ off >> 20);
}

double tiert_clock_now(void *arg)
{
	const struct tiert_clock *clk = arg;

	return (double)atomic_load(&clk->now);
}

void tiert_vol_up(const char *tmpl, char *tmp, size_t cap, struct vol_export_cfg *cfg, struct tier_vol_cfg *tcfg,
		  struct vol_store **S)
{
	uint8_t key[VOL_KEY_LEN];

	ck_assert_uint_lt(strlen(tmpl), cap);
	snprintf(tmp, cap, "%s", tmpl);
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->id, sizeof(cfg->id), "vol0");
	snprintf(cfg->path, sizeof(cfg->path), "/v0");
	snprintf(cfg->root, sizeof(cfg->root), "%s/v0", tmp);
	mkdir(cfg->root, 0777);
	cfg->fsid = 0xabc;
	cfg->capacity = 1ull << 30;
	memset(tcfg, 0, sizeof(*tcfg));
	tcfg->fsid = cfg->fsid;
	snprintf(tcfg->root, sizeof(tcfg->root), "%s", cfg->root);
	snprintf(tcfg->state_dir, sizeof(tcfg->state_dir), "%s/tierstate", tmp);
	tcfg->action = TIER_ENABLED;
	tcfg->cooling_days = 2;
	tcfg->retrieval = TIER_RET_DEFAULT;
	memset(key, 7, sizeof(key));
	ck_assert_int_eq(vol_store_new(key, S), 0);
	ck_assert_int_eq(vol_store_set(*S, cfg, 1), 0);
}

void tiert_tier_up(const char *tmp, unsigned day, struct tiert_clock *clk, const struct tier_vol_cfg *tcfg,
		   struct vol_store *S, struct tier **T)
{
	struct tier_cfg tc = { .location = "loc1", .day_seconds = day, .now = tiert_clock_now, .now_arg = clk };
	struct obj_cfg oc = { .kind = OBJ_DIRECTORY };

	snprintf(oc.path, sizeof(oc.path), "%s/cold", tmp);
	ck_assert_int_eq(tier_new(&tc, T), 0);
	ck_assert_int_eq(tier_set_store(*T, &oc), 0);
	ck_assert_int_eq(tier_set_volumes(*T, tcfg, 1, NULL), 0);
	vol_store_set_tier(S, tier_ops(), *T);
}

struct vol_obj tiert_make_file(struct vol_store *S, const char *name, uint64_t size)
{
	static const struct vol_cred root = { 0, 0, 0, { 0 }, 0 };
	const size_t mib = 1024 * 1024;
	struct vol_export *e = vol_export_by_path(S, "/v0", 3);
	struct vol_obj r, o;
	uint8_t *buf = malloc(mib);
	int committed;

	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(vol_root(e, &r), 0);
	vol_export_unref(e);
	ck_assert_int_eq(vol_create(&r, &root, name, strlen(name), false, NULL, NULL, &o), 0);
	for (uint64_t off = 0; off < size; off += mib) {
		size_t n = size - off < mib ? (size_t)(size - off) : mib;

		for (size_t i = 0; i < n; i++)
			buf[i] = tiert_pat(off + i);
		ck_assert_int_eq(vol_write(&o, &root, off, buf, n, 2, &committed), 0);
	}
	free(buf);
	vol_obj_cleanup(&r);
	return o;
}

void tiert_down(const char *tmp, struct vol_store *S, struct tier *T)
{
	char cmd[128];

	vol_store_free(S);
	tier_free(T);
	ck_assert_uint_lt(strlen(tmp) + 8, sizeof(cmd));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	ck_assert_int_eq(system(cmd), 0);
}
