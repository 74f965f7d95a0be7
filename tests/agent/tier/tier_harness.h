/* tier_harness: the volume the cold tier suites (test_tier, test_tier_cache)
 * run the tier engine under:
 *
 *     tiert_vol_up("/tmp/aqtier-XXXXXX", tmp, sizeof(tmp), &cfg, &tcfg, &S);
 *     ...change tcfg (retrieval, bypass) if the suite wants...
 *     clk.now = (long)time(NULL);
 *     tiert_tier_up(tmp, DAY, &clk, &tcfg, S, &T);
 *     ...
 *     tiert_down(tmp, S, T);
 *
 * One export "vol0" at /v0 (fsid 0xabc, 1 GiB, no rules), its root the
 * folder TMP/v0, in a volume store with the location key 7...7; its tiering
 * enabled, cold after 2 days, its database in TMP/tierstate; the tier's
 * object store the folder TMP/cold, its clock the suite's fake one. Every
 * helper fails the running Check test (ck_assert) instead of returning an
 * error; the suite keeps what they fill in (its own storage).
 */
#ifndef AQ_TESTS_TIER_HARNESS_H
#define AQ_TESTS_TIER_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "agent/tier/tier.h"
#include "agent/vol/vol.h"

/* The byte at offset off of every file the suites write and read back. */
uint8_t tiert_pat(uint64_t off);

/* A fresh folder from tmpl (mkdtemp's, shorter than cap) into tmp[0..cap);
 * vol0 in it described in *cfg and its tiering in *tcfg (retrieval
 * TIER_RET_DEFAULT, no bypass); a store serving vol0 into *S. Undo with
 * tiert_down. */
void tiert_vol_up(const char *tmpl, char *tmp, size_t cap, struct vol_export_cfg *cfg, struct tier_vol_cfg *tcfg,
		  struct vol_store **S);

/* The suites' fake clock: the tier's now() reads it, the tier's threads
 * too, while the test moves it on. */
struct tiert_clock {
	_Atomic long now; /* seconds */
};

/* The tier_cfg clock over a struct tiert_clock (arg), what tiert_tier_up
 * installs; for a suite that makes a tier of its own on the same clock. */
double tiert_clock_now(void *arg);

/* A tier (location "loc1") whose days last day seconds of clk (borrowed,
 * must outlive the tier), over the folder store TMP/cold, tiering tcfg's
 * volume, installed as S's tier hooks: *T. */
void tiert_tier_up(const char *tmp, unsigned day, struct tiert_clock *clk, const struct tier_vol_cfg *tcfg,
		   struct vol_store *S, struct tier **T);

/* Create name in vol0's root (as root) holding size bytes of tiert_pat,
 * written through S a MiB at a time; the open file (vol_obj_cleanup). */
struct vol_obj tiert_make_file(struct vol_store *S, const char *name, uint64_t size);

/* vol_store_free(S), tier_free(T) (either may be NULL), then remove tmp
 * and everything below it. */
void tiert_down(const char *tmp, struct vol_store *S, struct tier *T);

#endif
