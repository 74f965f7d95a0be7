/* srv_snapsched: the scheduler of volumes' snapshotPolicy. One thread with
 * its own db connection wakes every tick, and for each volume whose policy
 * is enabled and each of its schedules (hourly, daily, weekly, monthly;
 * api_snapshot_kind) takes the newest slot that has come
 * (api_snapshot_slot): when it is newer than the last slot taken, one
 * snapshot named <kind>-YYYYMMDD-HHMM is created (no operation waits) and
 * the oldest snapshots of that kind beyond snapshotsToKeep are deleted, in
 * one transaction with the slot taken (snapscheds/<volume name>). A slot is
 * therefore taken once, whatever kill -9 does, and slots missed while
 * aquiferd was down are never replayed: only the newest is taken (at most
 * one catch-up per kind). A schedule first seen (or whose times changed) takes no snapshot for the
 * slot already past; its first is the next one. A snapshot a clone depends
 * on is kept beyond the count until the clone goes.
 *
 * The clock: UTC, or with snapshot-schedule-period = N (config) a test
 * clock on which an hour lasts N seconds (a day 24 N), so that a test
 * watches an hourly schedule in seconds.
 *
 * One aquiferd runs it today. With several replicas over one database it
 * is the reconciler leader's job: the slot record makes a second runner
 * harmless (the loser's transaction finds the slot taken), but only the
 * leader should spend the passes.
 */
#ifndef AQ_SRV_SNAPSCHED_H
#define AQ_SRV_SNAPSCHED_H

#include <stdint.h>

#include "api/api_error.h"

struct db;
struct db_fence;
struct srv;

int srv_snapsched_start(struct srv *srv, aq_msg *msg);
void srv_snapsched_stop(struct srv *srv);
/* One pass at schedule time t (seconds on the scheduler's clock): what the
 * thread runs each tick, on the leader only (srv_lead.h). Each volume's
 * transaction first checks fence (NULL: none) and records nothing once it
 * no longer holds the leader lease. *made counts the snapshots created and
 * deleted. */
int srv_snapsched_pass(struct db *db, const struct db_fence *fence, int64_t t, int *made);
/* The scheduler's clock now: real UTC seconds, or the test clock's. */
int64_t srv_snapsched_now(const struct srv *srv);

#endif
