/* srv_bkpsched: the scheduler of scheduled backups (issue 21). For every
 * volume whose backupConfig has scheduledBackupEnabled true, a backup
 * policy (backupPolicies[0]) that is enabled and a backupVault, each kind
 * of the policy (daily at 00:00 UTC, weekly on Sundays at 00:00, monthly
 * on the 1st at 00:00) takes the newest slot that has come: when it is
 * newer than the last slot taken, one backup, backupType SCHEDULED, named
 * <kind>-<volume ID>-YYYYMMDD-HHMM (api_backup_sched_id), is started
 * through srv_backup_start exactly as a manual one (no operation waits), in
 * one transaction with the slot taken (record "bkpscheds/<volume name>"):
 * kill -9 of aquiferd never makes two backups for one slot. A kind whose
 * limit is 0 takes none. A slot that cannot start now (another backup of
 * the volume runs, the volume is not READY or not served) is not taken:
 * a later pass starts it, or the newest slot by then; a slot refused for
 * good (the vault became CROSS_REGION, ...) is taken and logged. Slots
 * missed while aquiferd was down are not replayed: only the newest is
 * taken. A kind first seen takes no backup for the slot already past.
 * When the slots of several kinds coincide, the rarer kind goes first
 * (monthly, weekly, daily): one backup of a volume runs at a time.
 *
 * Pruning: on every pass, the volume's READY scheduled backups of each kind
 * in its vault beyond the policy's dailyBackupLimit / weeklyBackupLimit /
 * monthlyBackupLimit are deleted, oldest slot first. Never a MANUAL one,
 * never one inside its enforcedRetentionEndTime (it waits, and goes in the
 * first pass after that time), never one a volume is being restored from.
 *
 * The clock: UTC, or with backup-schedule-period = N (config) a test clock
 * on which a day lasts N seconds. It runs on the snapshot scheduler's
 * thread (srv_snapsched.c), on the reconciler leader only. */
#ifndef AQ_SRV_BKPSCHED_H
#define AQ_SRV_BKPSCHED_H

#include <stdint.h>

#include "api/api_error.h"

struct db;
struct db_fence;
struct srv;

/* One pass at schedule time t (seconds on the backup scheduler's clock).
 * Each volume's and kind's transaction first checks fence (NULL: none).
 * *made counts the backups started and the deletes started. */
int srv_bkpsched_pass(struct db *db, const struct db_fence *fence, int64_t t, int *made);
/* The backup scheduler's clock now: real UTC seconds, or the test clock's. */
int64_t srv_bkpsched_now(const struct srv *srv);

#endif
