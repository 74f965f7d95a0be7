/* srv_dbmig: `aquiferd db migrate --from URL --to URL`, the upgrade path
 * from SQLite to PostgreSQL (or back): every resource of the source copied
 * into an empty target in one transaction, then the counts of every kind
 * compared. URLs as db_open takes them (PATH, sqlite:PATH, postgres://...;
 * PostgreSQL credentials from a passfile or the PG environment). aquiferd
 * must not be writing to the source meanwhile: the copy is one snapshot of
 * it, and a difference in the counts afterwards fails the command; so does
 * a copy whose usage counters (db.h) disagree with its documents.
 *
 * `aquiferd db check --db URL` recomputes the usage counters from the
 * volumes and placements and compares (db_usage_verify): exit 0 when they
 * agree, 1 naming the first that differs. */
#ifndef AQ_SRV_DBMIG_H
#define AQ_SRV_DBMIG_H

/* argv[0] is "db"; exit status 0, 1 (failed, with the reason on stderr)
 * or 2 (usage). */
int srv_dbmig_main(int argc, char **argv);

#endif
