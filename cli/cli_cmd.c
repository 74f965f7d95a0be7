/* cli_cmd: the command table of `aquifer` (see cli_cmd.h). Adding a verb is
 * adding a row here; dispatch, help, completion and __routes follow. */
#include "cli/cli_cmd.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli_local.h"

#define POOLS "/v1/projects/{project}/locations/{location}/storagePools"
#define VOLUMES "/v1/projects/{project}/locations/{location}/volumes"
#define SMBUSERS "/v1/projects/{project}/locations/{location}/smbUsers"
#define BVAULTS "/v1/projects/{project}/locations/{location}/backupVaults"
#define BPOLICIES "/v1/projects/{project}/locations/{location}/backupPolicies"
#define OPERATIONS "/v1/projects/{project}/locations/{location}/operations"
#define SNAPSHOTS VOLUMES "/{volume}/snapshots"
#define BACKUPS BVAULTS "/{backupVault}/backups"

#define ON_C CLI_ON(CLI_K_CREATE)
#define ON_CU CLI_ON_MUTATE
#define ON_D CLI_ON(CLI_K_DELETE)
#define ON_A CLI_ON(CLI_K_ACTION)
#define ON_L CLI_ON(CLI_K_LOCAL)
#define ON_LIST CLI_ON(CLI_K_LIST)
#define ON_ASYNC (CLI_ON_MUTATE | ON_D | ON_A)

static const char *const service_levels[] = { "STANDARD", "PREMIUM", "EXTREME", "FLEX", NULL };
static const char *const qos_types[] = { "AUTO", "MANUAL", NULL };
static const char *const protocols[] = { "NFSV3", "NFSV4", "SMB", "ISCSI", NULL };
static const char *const access_types[] = { "READ_ONLY", "READ_WRITE", "READ_NONE", NULL };
static const char *const squash_modes[] = { "NO_ROOT_SQUASH", "ROOT_SQUASH", "ALL_SQUASH", NULL };
static const char *const tier_actions[] = { "ENABLED", "PAUSED", NULL };
static const char *const retrieval_policies[] = { "DEFAULT", "ON_READ", "NEVER", NULL };
static const char *const read_ahead_modes[] = { "NONE", "AGGRESSIVE", "CROSS_FILE_SEQUENTIAL", NULL };
static const char *const media_types[] = { "TLC", "QLC", NULL };
static const char *const smb_settings[] = { "ENCRYPT_DATA", "BROWSABLE", "CHANGE_NOTIFY", "NON_BROWSABLE", "OPLOCKS",
					    "SHOW_SNAPSHOT", "SHOW_PREVIOUS_VERSIONS", "ACCESS_BASED_ENUMERATION",
					    "CONTINUOUSLY_AVAILABLE", NULL };
static const char *const security_styles[] = { "UNIX", "NTFS", NULL };

static const struct cli_key export_rule_keys[] = {
	{ "allowed-clients", CLI_T_STR, "allowedClients", NULL },
	{ "access-type", CLI_T_ENUM, "accessType", access_types },
	{ "has-root-access", CLI_T_BOOLSTR, "hasRootAccess", NULL },
	{ "nfsv3", CLI_T_BOOL, "nfsv3", NULL },
	{ "nfsv4", CLI_T_BOOL, "nfsv4", NULL },
	{ "squash-mode", CLI_T_ENUM, "squashMode", squash_modes },
	{ "anon-uid", CLI_T_INT64, "anonUid", NULL },
	{ "kerberos-5-read-only", CLI_T_BOOL, "kerberos5ReadOnly", NULL },
	{ "kerberos-5-read-write", CLI_T_BOOL, "kerberos5ReadWrite", NULL },
	{ "kerberos-5i-read-only", CLI_T_BOOL, "kerberos5iReadOnly", NULL },
	{ "kerberos-5i-read-write", CLI_T_BOOL, "kerberos5iReadWrite", NULL },
	{ "kerberos-5p-read-only", CLI_T_BOOL, "kerberos5pReadOnly", NULL },
	{ "kerberos-5p-read-write", CLI_T_BOOL, "kerberos5pReadWrite", NULL },
	{ NULL, CLI_T_STR, NULL, NULL }
};

/* gcloud's --snapshot-hourly/-daily/-weekly/-monthly (ArgDict); monthly's
 * day= is the API's daysOfMonth */
static const struct cli_key hourly_keys[] = {
	{ "snapshots-to-keep", CLI_T_INT, "snapshotsToKeep", NULL },
	{ "minute", CLI_T_INT, "minute", NULL },
	{ NULL, CLI_T_STR, NULL, NULL }
};

static const struct cli_key daily_keys[] = {
	{ "snapshots-to-keep", CLI_T_INT, "snapshotsToKeep", NULL },
	{ "minute", CLI_T_INT, "minute", NULL },
	{ "hour", CLI_T_INT, "hour", NULL },
	{ NULL, CLI_T_STR, NULL, NULL }
};

static const struct cli_key weekly_keys[] = {
	{ "snapshots-to-keep", CLI_T_INT, "snapshotsToKeep", NULL },
	{ "minute", CLI_T_INT, "minute", NULL },
	{ "hour", CLI_T_INT, "hour", NULL },
	{ "day", CLI_T_STR, "day", NULL },
	{ NULL, CLI_T_STR, NULL, NULL }
};

static const struct cli_key monthly_keys[] = {
	{ "snapshots-to-keep", CLI_T_INT, "snapshotsToKeep", NULL },
	{ "minute", CLI_T_INT, "minute", NULL },
	{ "hour", CLI_T_INT, "hour", NULL },
	{ "day", CLI_T_STR, "daysOfMonth", NULL },
	{ NULL, CLI_T_STR, NULL, NULL }
};

static const struct cli_key tiering_keys[] = {
	{ "tier-action", CLI_T_ENUM, "tierAction", tier_actions },
	{ "cooling-threshold-days", CLI_T_INT, "coolingThresholdDays", NULL },
	{ "enable-hot-tier-bypass-mode", CLI_T_BOOL, "hotTierBypassModeEnabled", NULL },
	{ "retrieval-policy", CLI_T_ENUM, "retrievalPolicy", retrieval_policies },
	{ NULL, CLI_T_STR, NULL, NULL }
};

/* gcloud's --backup-config=backup-policies=P,backup-vault=V,enable-scheduled-backups=BOOL */
static const struct cli_key backup_config_keys[] = {
	{ "backup-policies", CLI_T_STR_LIST, "backupPolicies", NULL },
	{ "backup-vault", CLI_T_STR, "backupVault", NULL },
	{ "enable-scheduled-backups", CLI_T_BOOL, "scheduledBackupEnabled", NULL },
	{ NULL, CLI_T_STR, NULL, NULL }
};

/* --read-ahead=MODE[,depth-files=N] (issue 23): the mode leads, unnamed */
static const struct cli_key read_ahead_keys[] = {
	{ "mode", CLI_T_ENUM, "mode", read_ahead_modes },
	{ "depth-files", CLI_T_INT, "depthFiles", NULL },
	{ NULL, CLI_T_STR, NULL, NULL }
};

/* A location's service addresses (issue 25): --service-addresses=10.99.0.32/27,prefix-length=24,port=2049 */
static const struct cli_key service_addr_keys[] = {
	{ "range", CLI_T_STR, "range", NULL },
	{ "prefix-length", CLI_T_INT, "prefixLength", NULL },
	{ "port", CLI_T_INT, "port", NULL },
	{ NULL, CLI_T_STR, NULL, NULL }
};

/* A location's S3 cold store: --cold-store-s3=endpoint=URL,bucket=B,... */
static const struct cli_key cold_s3_keys[] = {
	{ "endpoint", CLI_T_STR, "endpoint", NULL },
	{ "bucket", CLI_T_STR, "bucket", NULL },
	{ "region", CLI_T_STR, "region", NULL },
	{ "access-key-id", CLI_T_STR, "accessKeyId", NULL },
	{ "secret-access-key", CLI_T_STR, "secretAccessKey", NULL },
	{ NULL, CLI_T_STR, NULL, NULL }
};

#define END_FLAGS { NULL, CLI_T_STR, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL }

#define ON_U CLI_ON(CLI_K_UPDATE)

/* gcloud's label flags of an update: the labels sent (updateMask labels) are
 * the current ones with these applied: clear, then update, then remove. */
#define LABEL_UPDATE_FLAGS \
	{ "update-labels", CLI_T_LABELS, ON_U, CLI_O_LABELS, "labels", NULL, NULL, NULL, "KEY=VALUE,...", \
	  "Labels to add or change; the others stay." }, \
	{ "remove-labels", CLI_T_KEYS, ON_U, CLI_O_LABELS, "labels", NULL, NULL, NULL, "KEY,...", \
	  "Labels to remove (absent keys are ignored); applied after --update-labels." }, \
	{ "clear-labels", CLI_T_BOOL, ON_U, CLI_O_LABELS, "labels", NULL, NULL, NULL, NULL, \
	  "Remove every label (with --update-labels: only those remain)." }

static const struct cli_key network_keys[] = {
	{ "name", CLI_T_STR, "network", NULL },
	{ "psa-range", CLI_T_STR, "psaRange", NULL },
	{ NULL, CLI_T_STR, NULL, NULL }
};

static const struct cli_flag project_flags[] = {
	{ "display-name", CLI_T_STR, ON_C, 0, "displayName", NULL, NULL, NULL, "NAME",
	  "Human-readable name." },
	{ "labels", CLI_T_LABELS, ON_C, 0, "labels", NULL, NULL, NULL, "KEY=VALUE,...",
	  "Labels to attach." },
	END_FLAGS
};

/* locations create / update (cluster admin) */
static const struct cli_flag location_mut_flags[] = {
	{ "display-name", CLI_T_STR, ON_CU, 0, "displayName", NULL, NULL, NULL, "NAME",
	  "Human-readable name." },
	{ "labels", CLI_T_LABELS, ON_C, 0, "labels", NULL, NULL, NULL, "KEY=VALUE,...",
	  "Labels to attach." },
	LABEL_UPDATE_FLAGS,
	{ "cold-store-s3", CLI_T_DICT, ON_CU, 0, "coldStore.s3", "coldStore", NULL, cold_s3_keys,
	  "KEY=VALUE,...",
	  "Cold tier in an S3-API bucket: endpoint=URL,bucket=NAME,region=REGION,access-key-id=ID,"
	  "secret-access-key=SECRET (the secret is never shown again; on update it may be left out "
	  "while endpoint, bucket and access-key-id stay the same)." },
	{ "cold-store-directory", CLI_T_STR, ON_CU, 0, "coldStore.directory.path", "coldStore", NULL, NULL,
	  "PATH", "Cold tier in a directory every node of the location reaches (absolute path)." },
	{ "service-addresses", CLI_T_LEAD_DICT, ON_C, 0, "serviceAddresses", NULL, NULL, service_addr_keys,
	  "CIDR[,prefix-length=N,port=P]",
	  "IPv4 range each volume of the location takes a stable mount address from; the node serving the volume "
	  "holds it (aquifer-agent --service-interface) and a failover moves it. prefix-length: the subnet's "
	  "(default the range's), port: NFS (2049). Create only." },
	END_FLAGS
};

/* smb-users: the password only from a file, never on the command line */
static const struct cli_flag smbuser_flags[] = {
	{ "password-file", CLI_T_FILE, ON_CU, CLI_O_REQUIRED, "password", NULL, NULL, NULL, "FILE",
	  "A file holding the user's password (one trailing newline is dropped). Kept only as its NT hash; never shown." },
	{ "uid", CLI_T_INT64, ON_CU, CLI_O_REQUIRED, "uid", NULL, NULL, NULL, "UID",
	  "The owner NFS sees for what the user creates over SMB." },
	{ "gid", CLI_T_INT64, ON_CU, CLI_O_REQUIRED, "gid", NULL, NULL, NULL, "GID",
	  "The group NFS sees for what the user creates over SMB." },
	{ "description", CLI_T_STR, ON_CU, 0, "description", NULL, NULL, NULL, "TEXT", "A description." },
	END_FLAGS
};

/* backup-vaults (gcloud netapp backup-vaults): --backup-retention-policy
 * as gcloud spells it */
static const char *const vault_types[] = { "IN_REGION", "CROSS_REGION", NULL };
static const struct cli_key retention_keys[] = {
	{ "backup-minimum-enforced-retention-days", CLI_T_INT, "backupMinimumEnforcedRetentionDays", NULL },
	{ "daily-backup-immutable", CLI_T_BOOL, "dailyBackupImmutable", NULL },
	{ "weekly-backup-immutable", CLI_T_BOOL, "weeklyBackupImmutable", NULL },
	{ "monthly-backup-immutable", CLI_T_BOOL, "monthlyBackupImmutable", NULL },
	{ "manual-backup-immutable", CLI_T_BOOL, "manualBackupImmutable", NULL },
	{ NULL, CLI_T_STR, NULL, NULL }
};
static const struct cli_flag bvault_flags[] = {
	{ "backup-vault-type", CLI_T_ENUM, ON_C, 0, "backupVaultType", NULL, vault_types, NULL, "TYPE",
	  "IN_REGION (default) or CROSS_REGION (cannot be changed)." },
	{ "backup-region", CLI_T_STR, ON_C, 0, "backupRegion", NULL, NULL, NULL, "LOCATION",
	  "CROSS_REGION: the location whose shelf holds the vault's store (cannot be changed)." },
	{ "backup-retention-policy", CLI_T_DICT, ON_CU, 0, "backupRetentionPolicy", NULL, NULL, retention_keys,
	  "KEY=VALUE,...",
	  "backup-minimum-enforced-retention-days=N,daily-backup-immutable=BOOL,weekly-backup-immutable=BOOL,"
	  "monthly-backup-immutable=BOOL,manual-backup-immutable=BOOL." },
	{ "description", CLI_T_STR, ON_CU, 0, "description", NULL, NULL, NULL, "TEXT", "A description." },
	{ "labels", CLI_T_LABELS, ON_C, 0, "labels", NULL, NULL, NULL, "KEY=VALUE,...", "Labels to attach." },
	LABEL_UPDATE_FLAGS,
	END_FLAGS
};
/* backup-policies (gcloud netapp backup-policies) */
static const struct cli_flag bpolicy_flags[] = {
	{ "daily-backup-limit", CLI_T_INT, ON_CU, 0, "dailyBackupLimit", NULL, NULL, NULL, "N",
	  "Daily backups to keep (at least 2)." },
	{ "weekly-backup-limit", CLI_T_INT, ON_CU, 0, "weeklyBackupLimit", NULL, NULL, NULL, "N",
	  "Weekly backups to keep." },
	{ "monthly-backup-limit", CLI_T_INT, ON_CU, 0, "monthlyBackupLimit", NULL, NULL, NULL, "N",
	  "Monthly backups to keep." },
	{ "enabled", CLI_T_BOOL, ON_CU, 0, "enabled", NULL, NULL, NULL, NULL,
	  "Make scheduled backups of the volumes the policy is assigned to (default true; --no-enabled)." },
	{ "description", CLI_T_STR, ON_CU, 0, "description", NULL, NULL, NULL, "TEXT", "A description." },
	{ "labels", CLI_T_LABELS, ON_C, 0, "labels", NULL, NULL, NULL, "KEY=VALUE,...", "Labels to attach." },
	LABEL_UPDATE_FLAGS,
	END_FLAGS
};

static const struct cli_flag location_flags[] = {
	{ "cluster", CLI_T_BOOL, CLI_ON(CLI_K_LIST) | CLI_ON(CLI_K_DESCRIBE), 0, "cluster", NULL, NULL,
	  NULL, NULL, "Use the cluster-admin route (every location, no project needed)." },
	END_FLAGS
};

static const struct cli_flag pool_flags[] = {
	{ "capacity", CLI_T_GIB, ON_CU, CLI_O_REQUIRED, "capacityGib", NULL, NULL, NULL, "CAPACITY",
	  "Pool capacity: GiB by default, or with a unit (500GiB, 2TiB)." },
	{ "service-level", CLI_T_ENUM, ON_C, CLI_O_REQUIRED, "serviceLevel", NULL, service_levels, NULL,
	  "LEVEL", "Service level (cannot be changed)." },
	{ "qos-type", CLI_T_ENUM, ON_CU, 0, "qosType", NULL, qos_types, NULL, "TYPE",
	  "Quality of service: AUTO follows capacity, MANUAL sets it per volume (one way)." },
	{ "allow-auto-tiering", CLI_T_BOOL, ON_CU, 0, "allowAutoTiering", NULL, NULL, NULL, NULL,
	  "Let volumes of this pool move cold data to the cold tier (cannot be disabled)." },
	{ "custom-performance-enabled", CLI_T_BOOL, ON_C, 0, "customPerformanceEnabled", NULL, NULL,
	  NULL, NULL, "FLEX: set throughput and IOPS independently of capacity (cannot be changed)." },
	{ "total-throughput", CLI_T_MIBPS, ON_CU, 0, "totalThroughputMibps", NULL, NULL, NULL,
	  "THROUGHPUT", "Custom performance throughput: MiB/s by default, or 1GiB/s." },
	{ "total-iops", CLI_T_INT64, ON_CU, 0, "totalIops", NULL, NULL, NULL, "IOPS",
	  "Custom performance IOPS (derived from throughput if unset)." },
	{ "description", CLI_T_STR, ON_CU, 0, "description", NULL, NULL, NULL, "TEXT",
	  "Description." },
	{ "labels", CLI_T_LABELS, ON_C, 0, "labels", NULL, NULL, NULL, "KEY=VALUE,...",
	  "Labels to attach." },
	LABEL_UPDATE_FLAGS,
	{ "network", CLI_T_NETWORK, ON_C, 0, "network", NULL, NULL, network_keys, "name=NETWORK[,psa-range=RANGE]",
	  "VPC network, as gcloud's: name= a network ID (projects/PROJECT/global/networks/ID is sent) "
	  "or a full name; psa-range= is stored and not used (as in GCNV). Default: name=default." },
	END_FLAGS
};

static const struct cli_flag volume_flags[] = {
	{ "storage-pool", CLI_T_STR, ON_CU, CLI_O_REQUIRED, "storagePool", NULL, NULL, NULL, "POOL",
	  "Storage pool (ID or full name); changing it moves the volume." },
	{ "capacity", CLI_T_GIB, ON_CU, CLI_O_REQUIRED, "capacityGib", NULL, NULL, NULL, "CAPACITY",
	  "Volume capacity: GiB by default, or with a unit (500GiB, 2TiB)." },
	{ "protocols", CLI_T_ENUM_LIST, ON_C, CLI_O_REQUIRED, "protocols", NULL, protocols, NULL,
	  "PROTOCOL,...", "Protocols the volume is shared with (cannot be changed)." },
	{ "share-name", CLI_T_STR, ON_C, CLI_O_REQUIRED, "shareName", NULL, NULL, NULL, "SHARE",
	  "Export path / share name, unique in the location (cannot be changed)." },
	{ "smb-settings", CLI_T_ENUM_LIST, ON_CU, 0, "smbSettings", NULL, smb_settings, NULL, "SETTING,...",
	  "SMB share settings; the server refuses, naming it, any it does not serve yet." },
	{ "security-style", CLI_T_ENUM, ON_C, 0, "securityStyle", NULL, security_styles, NULL, "STYLE",
	  "UNIX (default) or NTFS (SMB-only volumes; cannot be changed)." },
	{ "export-policy", CLI_T_DICT, ON_CU, CLI_O_REPEAT, "exportPolicy.rules", "exportPolicy",
	  NULL, export_rule_keys, "KEY=VALUE,...",
	  "An export rule (repeat for more): allowed-clients=CIDR,access-type=READ_WRITE,"
	  "nfsv3=true,squash-mode=ROOT_SQUASH,anon-uid=65534,has-root-access=true." },
	{ "throughput-mibps", CLI_T_MIBPS_NUM, ON_CU, 0, "throughputMibps", NULL, NULL, NULL,
	  "THROUGHPUT", "MANUAL QoS pools: the volume's throughput (MiB/s, or 1GiB/s)." },
	{ "tiering-policy", CLI_T_DICT, ON_CU, 0, "tieringPolicy", NULL, NULL, tiering_keys,
	  "KEY=VALUE,...", "Auto-tiering: tier-action=ENABLED|PAUSED,cooling-threshold-days=N,"
	  "retrieval-policy=DEFAULT|ON_READ|NEVER,enable-hot-tier-bypass-mode=true (FLEX)." },
	{ "read-ahead", CLI_T_LEAD_DICT, ON_CU, 0, "readAhead", NULL, NULL, read_ahead_keys,
	  "MODE[,depth-files=N]", "Read-ahead: NONE, AGGRESSIVE (a larger in-file window) or "
	  "CROSS_FILE_SEQUENTIAL (prefetch the next N files of a numbered sequence, frame0001.dpx, "
	  "frame0002.dpx, ...; N 1-16, default 4)." },
	{ "backup-config", CLI_T_DICT, ON_CU, 0, "backupConfig", NULL, NULL, backup_config_keys,
	  "KEY=VALUE,...", "Backups: backup-vault=VAULT (full name),backup-policies=POLICY (full name; at "
	  "most one),enable-scheduled-backups=false (true is refused until served). Sets the whole backupConfig." },
	{ "unix-permissions", CLI_T_STR, ON_CU, 0, "unixPermissions", NULL, NULL, NULL, "MODE",
	  "UNIX permissions of the volume root, e.g. 0770." },
	{ "large-capacity", CLI_T_BOOL, ON_C, 0, "largeCapacity", NULL, NULL, NULL, NULL,
	  "Large-capacity volume (15 TiB and more; cannot be changed)." },
	{ "description", CLI_T_STR, ON_CU, 0, "description", NULL, NULL, NULL, "TEXT",
	  "Description." },
	{ "labels", CLI_T_LABELS, ON_C, 0, "labels", NULL, NULL, NULL, "KEY=VALUE,...",
	  "Labels to attach." },
	LABEL_UPDATE_FLAGS,
	{ "force", CLI_T_BOOL, ON_D, CLI_O_QUERY, "force", NULL, NULL, NULL, NULL,
	  "Delete even if the volume has snapshots (they are deleted with it)." },
	/* issue 20: snapshots, as gcloud spells them */
	{ "snapshot-directory", CLI_T_BOOL, ON_CU, 0, "snapshotDirectory", NULL, NULL, NULL, NULL,
	  "Serve the snapshots read-only under /.snapshot/<snapshot>/ at the export root (--snapshot-directory=false: not)." },
	{ "source-snapshot", CLI_T_STR, ON_C, 0, "restoreParameters.sourceSnapshot", "restoreParameters", NULL, NULL,
	  "SNAPSHOT", "Create the volume as a clone of this snapshot (its full name, "
	  "projects/P/locations/L/volumes/V/snapshots/S, in the same project and location)." },
	{ "snapshot-hourly", CLI_T_DICT, ON_CU, CLI_O_ENABLE, "snapshotPolicy.hourlySchedule", "snapshotPolicy", NULL,
	  hourly_keys, "snapshots-to-keep=N,minute=M",
	  "Make a snapshot every hour at minute M (default 0), keeping the newest N. Any --snapshot-* flag "
	  "sets the whole snapshotPolicy (enabled, the schedules given)." },
	{ "snapshot-daily", CLI_T_DICT, ON_CU, CLI_O_ENABLE, "snapshotPolicy.dailySchedule", "snapshotPolicy", NULL,
	  daily_keys, "snapshots-to-keep=N,hour=H,minute=M", "Make a snapshot every day at H:M (UTC), keeping the newest N." },
	{ "snapshot-weekly", CLI_T_DICT, ON_CU, CLI_O_ENABLE, "snapshotPolicy.weeklySchedule", "snapshotPolicy", NULL,
	  weekly_keys, "snapshots-to-keep=N,day=DAY,hour=H,minute=M",
	  "Make a snapshot every week on DAY (Monday, ...; default Sunday) at H:M, keeping the newest N." },
	{ "snapshot-monthly", CLI_T_DICT, ON_CU, CLI_O_ENABLE, "snapshotPolicy.monthlySchedule", "snapshotPolicy", NULL,
	  monthly_keys, "snapshots-to-keep=N,day=D,hour=H,minute=M",
	  "Make a snapshot every month on day D (1-31; default 1) at H:M, keeping the newest N." },
	END_FLAGS
};

static const struct cli_flag revert_flags[] = {
	{ "snapshot", CLI_T_STR, ON_A, CLI_O_REQUIRED, "snapshotId", NULL, NULL, NULL, "SNAPSHOT",
	  "The snapshot (its ID) to revert to; every newer snapshot is deleted." },
	END_FLAGS
};

static const struct cli_flag restore_flags[] = {
	{ "backup", CLI_T_STR, ON_A, CLI_O_REQUIRED, "backup", NULL, NULL, NULL, "BACKUP",
	  "The backup's full name: projects/P/locations/L/backupVaults/V/backups/B." },
	{ "file-list", CLI_T_KEYS, ON_A, CLI_O_REQUIRED, "fileList", NULL, NULL, NULL, "PATH,...",
	  "Absolute paths of the files or folders in the backup (at most 16)." },
	{ "restore-destination-path", CLI_T_STR, ON_A, 0, "restoreDestinationPath", NULL, NULL, NULL, "PATH",
	  "The volume's folder they are restored into (default /); each as PATH/<its name>." },
	END_FLAGS
};

static const struct cli_flag snapshot_flags[] = {
	{ "volume", CLI_T_STR, CLI_ON_ALL, CLI_O_PATH, "volume", NULL, NULL, NULL, "VOLUME",
	  "The snapshot's volume (its ID); required unless NAME is the snapshot's full name." },
	{ "description", CLI_T_STR, ON_CU, 0, "description", NULL, NULL, NULL, "TEXT", "Description." },
	{ "labels", CLI_T_LABELS, ON_C, 0, "labels", NULL, NULL, NULL, "KEY=VALUE,...", "Labels to attach." },
	LABEL_UPDATE_FLAGS,
	END_FLAGS
};

/* backups (gcloud netapp backup-vaults backups) */
static const struct cli_flag backup_flags[] = {
	{ "backup-vault", CLI_T_STR, CLI_ON_ALL, CLI_O_PATH, "backupVault", NULL, NULL, NULL, "VAULT",
	  "The backup's vault (its ID); required unless NAME is the backup's full name." },
	{ "source-volume", CLI_T_STR, ON_C, CLI_O_REQUIRED, "sourceVolume", NULL, NULL, NULL, "VOLUME",
	  "The volume to back up, its full name: projects/P/locations/L/volumes/V (same project and location "
	  "as the vault)." },
	{ "source-snapshot", CLI_T_STR, ON_C, 0, "sourceSnapshot", NULL, NULL, NULL, "SNAPSHOT",
	  "Back up this snapshot of --source-volume (its full name, .../volumes/V/snapshots/S); without it a "
	  "temporary snapshot is made and removed after." },
	{ "description", CLI_T_STR, ON_CU, 0, "description", NULL, NULL, NULL, "TEXT", "Description." },
	{ "labels", CLI_T_LABELS, ON_C, 0, "labels", NULL, NULL, NULL, "KEY=VALUE,...", "Labels to attach." },
	LABEL_UPDATE_FLAGS,
	END_FLAGS
};

/* The Shelf resource (api/api_shelf.h): the server checks every value and
 * names the field it refuses. */
static const struct cli_flag shelf_flags[] = {
	{ "backend", CLI_T_STR, ON_C, 0, "backend", NULL, NULL, NULL, "BACKEND",
	  "directory (default: a shared folder) or nvmeof (NVMe over Fabrics; needs --transport, --nqn, --addresses)." },
	{ "transport", CLI_T_STR, ON_C, 0, "transport", NULL, NULL, NULL, "TRANSPORT",
	  "nvmeof only: tcp or rdma (RoCEv2)." },
	{ "nqn", CLI_T_STR, ON_C, 0, "nqn", NULL, NULL, NULL, "NQN",
	  "nvmeof only: the subsystem's NQN (nqn...., at most 223 characters)." },
	{ "addresses", CLI_T_KEYS, ON_CU, 0, "addresses", NULL, NULL, NULL, "HOST:PORT,...",
	  "nvmeof only: the portals ([IPv6]:PORT for IPv6), at most 8." },
	{ "capacity", CLI_T_GIB, ON_CU, 0, "capacityGib", NULL, NULL, NULL, "CAPACITY",
	  "What the shelf holds: GiB by default, or TiB. Placement counts it: a location's volumes fit its shelves' capacity." },
	{ "media", CLI_T_ENUM, ON_CU, 0, "media", NULL, media_types, NULL, "MEDIA",
	  "Flash type (default TLC; QLC halves the default write throughput)." },
	{ "read-throughput", CLI_T_MIBPS_NUM, ON_CU, 0, "readThroughputMibps", NULL, NULL, NULL,
	  "THROUGHPUT", "Read ceiling: MiB/s by default, or GiB/s." },
	{ "write-throughput", CLI_T_MIBPS_NUM, ON_CU, 0, "writeThroughputMibps", NULL, NULL, NULL,
	  "THROUGHPUT", "Write ceiling: MiB/s by default, or GiB/s." },
	END_FLAGS
};

static const struct cli_flag join_token_flags[] = {
	{ "ttl", CLI_T_SECONDS, ON_A, CLI_O_QUERY, "ttl", NULL, NULL, NULL, "DURATION",
	  "Token lifetime: seconds, or 30m, 2h, 1d." },
	{ "node", CLI_T_STR, ON_A, CLI_O_QUERY, "node", NULL, NULL, NULL, "NAME",
	  "Only a node of this name may join with the token (any name when left out; the token joins one node, once)." },
	END_FLAGS
};

static const struct cli_flag drain_flags[] = {
	{ "force", CLI_T_BOOL, ON_A, CLI_O_QUERY, "force", NULL, NULL, NULL, NULL,
	  "Drain even when some volumes find no other READY node with room: they stay (served) and move by "
	  "themselves once a node joins or is undrained." },
	END_FLAGS
};

static const struct cli_flag metrics_flags[] = {
	{ "window", CLI_T_STR, CLI_ON(CLI_K_DESCRIBE), CLI_O_QUERY, "window", NULL, NULL, NULL, "DURATION",
	  "How far back: 90s, 15m, 1h (default 1h, the most kept)." },
	END_FLAGS
};

static const struct cli_flag login_flags[] = {
	{ "token", CLI_T_STR, ON_L, CLI_O_REQUIRED, "token", NULL, NULL, NULL, "TOKEN",
	  "The bearer token to store (from `aquiferd token`); - reads it from stdin." },
	END_FLAGS
};

const struct cli_flag cli_global_flags[] = {
	{ "project", CLI_T_STR, CLI_ON_ALL, 0, "project", NULL, NULL, NULL, "PROJECT",
	  "Project ID (default: $AQUIFER_PROJECT, then config `project`)." },
	{ "location", CLI_T_STR, CLI_ON_ALL, 0, "location", NULL, NULL, NULL, "LOCATION",
	  "Location ID (default: $AQUIFER_LOCATION, then config `location`)." },
	{ "endpoint", CLI_T_STR, CLI_ON_ALL, 0, "endpoint", NULL, NULL, NULL, "URL",
	  "Server URL, or the URLs of aquiferd replicas comma-separated (tried in turn while one cannot be "
	  "connected to; default: $AQUIFER_ENDPOINT, then config `endpoint`)." },
	{ "ca-file", CLI_T_STR, CLI_ON_ALL, 0, "ca-file", NULL, NULL, NULL, "FILE",
	  "CA certificate (PEM) that verifies the server (default: $AQUIFER_CA_FILE, then config `ca_file`, then the system store)." },
	{ "insecure", CLI_T_BOOL, CLI_ON_ALL, 0, "insecure", NULL, NULL, NULL, NULL,
	  "Do not verify the server's TLS certificate (warns on stderr; tokens may go to an impostor)." },
	{ "format", CLI_T_STR, CLI_ON_ALL, 0, "format", NULL, NULL, NULL, "FORMAT",
	  "Output format: table, value(FIELD,...), csv(FIELD,...), flattened, json, yaml; table(...), "
	  "json(...), yaml(...) pick fields; FIELD.basename(), .location(), .date(FORMAT); "
	  "FIELD:label=HEADER. An unknown field or transform is an error." },
	{ "quiet", CLI_T_BOOL, ON_D, 0, "quiet", NULL, NULL, NULL, NULL,
	  "Do not ask for confirmation (-q). Deletes ask only when stdin is a terminal." },
	{ "async", CLI_T_BOOL, ON_ASYNC, 0, "async", NULL, NULL, NULL, NULL,
	  "Do not wait: print the long-running operation." },
	{ "dry-run", CLI_T_BOOL, ON_CU, 0, "dry-run", NULL, NULL, NULL, NULL,
	  "Validate only (validateOnly=true) and print the computed resource." },
	{ "filter", CLI_T_STR, ON_LIST, 0, "filter", NULL, NULL, NULL, "EXPR",
	  "Keep items matching a gcloud filter: FIELD:TEXT (has), FIELD=VALUE, !=, <, <=, >, >=, "
	  "joined by AND (or a blank), OR, NOT, parentheses." },
	{ "sort-by", CLI_T_STR, ON_LIST, 0, "sort-by", NULL, NULL, NULL, "FIELD,...",
	  "Sort by fields (a column's key or header sorts by what the column shows); ~FIELD "
	  "sorts descending." },
	{ "uri", CLI_T_BOOL, ON_LIST, 0, "uri", NULL, NULL, NULL, NULL,
	  "Print each resource's URI (ENDPOINT/v1/NAME) instead of the table, as gcloud." },
	{ "limit", CLI_T_INT, ON_LIST, 0, "limit", NULL, NULL, NULL, "N",
	  "Print at most N items." },
	{ "page-size", CLI_T_INT, ON_LIST, 0, "page-size", NULL, NULL, NULL, "N",
	  "Items per request while paging through the list." },
	{ "help", CLI_T_BOOL, CLI_ON_ALL, 0, "help", NULL, NULL, NULL, NULL, "Show this help." },
	END_FLAGS
};

const struct cli_group cli_groups[] = {
	{ "projects", "Manage projects." },
	{ "locations", "Manage locations (creating and deleting them is cluster admin)." },
	{ "storage-pools", "Manage storage pools." },
	{ "volumes", "Manage volumes." },
	{ "volumes snapshots", "Manage volume snapshots (--volume names the volume)." },
	{ "operations", "Inspect and cancel long-running operations." },
	{ "smb-users", "Manage the SMB users of a project (what SMB sessions authenticate as)." },
	{ "backup-vaults", "Manage backup vaults (where backups are stored, encrypted)." },
	{ "backup-vaults backups", "Manage backups (--backup-vault names the vault)." },
	{ "backup-policies", "Manage backup policies (how many scheduled backups to keep)." },
	{ "nodes", "Manage storage nodes (cluster admin)." },
	{ "shelves", "Register and inspect storage shelves (cluster admin)." },
	{ "config", "Get and set local configuration." },
	{ "auth", "Manage credentials." },
	{ "completion", "Print shell completion scripts." },
	{ NULL, NULL }
};

#define NOFLAGS NULL
#define NOLOCAL NULL

const struct cli_cmd cli_cmds[] = {
	/* projects */
	{ "projects", "create", CLI_K_CREATE, "POST", "/v1/projects", NULL, "projectId", NULL, "project",
	  "Creating", NULL, "PROJECT_ID", 1, 1, project_flags, NOLOCAL, 0, "Create a project." },
	{ "projects", "list", CLI_K_LIST, "GET", "/v1/projects", NULL, NULL, "projects", NULL, NULL,
	  "name.basename():PROJECT_ID,displayName,createTime", NULL, 0, 0, NOFLAGS, NOLOCAL, 0,
	  "List projects." },
	{ "projects", "describe", CLI_K_DESCRIBE, "GET", "/v1/projects/{name}", NULL, NULL, NULL, NULL, NULL,
	  NULL, "PROJECT_ID", 1, 1, NOFLAGS, NOLOCAL, 0, "Describe a project." },
	{ "projects", "delete", CLI_K_DELETE, "DELETE", "/v1/projects/{name}", NULL, NULL, NULL, "project",
	  "Deleting", NULL, "PROJECT_ID", 1, 1, NOFLAGS, NOLOCAL, 0, "Delete a project." },

	/* locations */
	{ "locations", "create", CLI_K_CREATE, "POST", "/v1/locations", NULL, "locationId", NULL,
	  "location", "Creating", NULL, "LOCATION_ID", 1, 1, location_mut_flags, NOLOCAL, 0,
	  "Create a location (cluster admin)." },
	{ "locations", "update", CLI_K_UPDATE, "PATCH", "/v1/locations/{name}", NULL, NULL, NULL,
	  "location", "Updating", NULL, "LOCATION_ID", 1, 1, location_mut_flags, NOLOCAL, 0,
	  "Update a location (cluster admin): display name, labels, cold store." },
	{ "locations", "list", CLI_K_LIST, "GET", "/v1/projects/{project}/locations", "/v1/locations", NULL,
	  "locations", NULL, NULL, "locationId:NAME,displayName,name:FULL_NAME", NULL, 0, 0, location_flags,
	  NOLOCAL, 0, "List the locations a project can use (--cluster: every location, cluster admin)." },
	{ "locations", "describe", CLI_K_DESCRIBE, "GET", "/v1/projects/{project}/locations/{name}",
	  "/v1/locations/{name}",
	  NULL, NULL, NULL, NULL, NULL, "LOCATION_ID", 1, 1, location_flags, NOLOCAL, 0,
	  "Describe a location of a project (--cluster: as cluster admin)." },
	{ "locations", "delete", CLI_K_DELETE, "DELETE", "/v1/locations/{name}", NULL, NULL, NULL,
	  "location", "Deleting", NULL, "LOCATION_ID", 1, 1, NOFLAGS, NOLOCAL, 0,
	  "Delete a location (cluster admin)." },

	/* storage-pools */
	{ "storage-pools", "create", CLI_K_CREATE, "POST", POOLS, NULL, "storagePoolId", NULL,
	  "storage pool", "Creating", NULL, "NAME", 1, 1, pool_flags, NOLOCAL, CLI_C_NETWORK,
	  "Create a storage pool." },
	{ "storage-pools", "list", CLI_K_LIST, "GET", POOLS, NULL, NULL, "storagePools", NULL, NULL,
	  "name.basename():NAME,name.location():LOCATION,serviceLevel,capacityGib,volumeCapacityGib,"
	  "volumeCount,"
	  "availableThroughputMibps,qosType,state",
	  NULL, 0, 0, NOFLAGS, NOLOCAL, 0, "List storage pools." },
	{ "storage-pools", "describe", CLI_K_DESCRIBE, "GET", POOLS "/{name}", NULL, NULL, NULL, NULL, NULL,
	  NULL, "NAME", 1, 1, NOFLAGS, NOLOCAL, 0, "Describe a storage pool." },
	{ "storage-pools", "metrics", CLI_K_DESCRIBE, "GET", POOLS "/{name}/metrics", NULL, NULL, NULL, NULL,
	  NULL, NULL, "NAME", 1, 1, metrics_flags, NOLOCAL, CLI_C_METRICS,
	  "Time series of a pool (the sum of its volumes), 10 s points." },
	{ "storage-pools", "update", CLI_K_UPDATE, "PATCH", POOLS "/{name}", NULL, NULL, NULL,
	  "storage pool", "Updating", NULL, "NAME", 1, 1, pool_flags, NOLOCAL, 0,
	  "Update a storage pool; only the flags given are changed." },
	{ "storage-pools", "delete", CLI_K_DELETE, "DELETE", POOLS "/{name}", NULL, NULL, NULL,
	  "storage pool", "Deleting", NULL, "NAME", 1, 1, pool_flags, NOLOCAL, 0,
	  "Delete a storage pool." },

	/* volumes */
	{ "volumes", "create", CLI_K_CREATE, "POST", VOLUMES, NULL, "volumeId", NULL, "volume", "Creating",
	  NULL, "NAME", 1, 1, volume_flags, NOLOCAL, 0, "Create a volume." },
	{ "volumes", "list", CLI_K_LIST, "GET", VOLUMES, NULL, NULL, "volumes", NULL, NULL,
	  "name.basename():NAME,name.location():LOCATION,storagePool.basename():STORAGE_POOL,"
	  "capacityGib,serviceLevel,"
	  "shareName,throughputMibps,state",
	  NULL, 0, 0, NOFLAGS, NOLOCAL, 0, "List volumes." },
	{ "volumes", "describe", CLI_K_DESCRIBE, "GET", VOLUMES "/{name}", NULL, NULL, NULL, NULL, NULL,
	  NULL, "NAME", 1, 1, NOFLAGS, NOLOCAL, 0, "Describe a volume." },
	{ "volumes", "metrics", CLI_K_DESCRIBE, "GET", VOLUMES "/{name}/metrics", NULL, NULL, NULL, NULL,
	  NULL, NULL, "NAME", 1, 1, metrics_flags, NOLOCAL, CLI_C_METRICS,
	  "Time series of a volume, 10 s points: a table of read/write MiB/s, limit, p99 latency and "
	  "used bytes (--format=json for every field: operations, throttling, cold tier)." },
	{ "volumes", "update", CLI_K_UPDATE, "PATCH", VOLUMES "/{name}", NULL, NULL, NULL, "volume",
	  "Updating", NULL, "NAME", 1, 1, volume_flags, NOLOCAL, 0,
	  "Update a volume; only the flags given are changed." },
	{ "volumes", "delete", CLI_K_DELETE, "DELETE", VOLUMES "/{name}", NULL, NULL, NULL, "volume",
	  "Deleting", NULL, "NAME", 1, 1, volume_flags, NOLOCAL, 0, "Delete a volume." },
	{ "volumes", "revert", CLI_K_ACTION, "POST", VOLUMES "/{name}:revert", NULL, NULL, NULL, "volume",
	  "Reverting", NULL, "NAME", 1, 1, revert_flags, NOLOCAL, 0,
	  "Revert a volume to a snapshot: its content becomes the snapshot's, newer snapshots are deleted." },
	{ "volumes", "restore", CLI_K_ACTION, "POST", VOLUMES "/{name}:restore", NULL, NULL, NULL, "volume",
	  "Restoring files into", NULL, "NAME", 1, 1, restore_flags, NOLOCAL, 0,
	  "Restore files or folders from a backup into the live volume (GCNV RestoreBackupFiles)." },

	/* volumes snapshots */
	{ "volumes snapshots", "create", CLI_K_CREATE, "POST", SNAPSHOTS, NULL, "snapshotId", NULL, "snapshot",
	  "Creating", NULL, "NAME", 1, 1, snapshot_flags, NOLOCAL, 0, "Create a snapshot of --volume." },
	{ "volumes snapshots", "list", CLI_K_LIST, "GET", SNAPSHOTS, NULL, NULL, "snapshots", NULL, NULL,
	  "name.basename():NAME,name.location():LOCATION,state,createTime,usedBytes", NULL, 0, 0, snapshot_flags,
	  NOLOCAL, 0, "List the snapshots of --volume." },
	{ "volumes snapshots", "describe", CLI_K_DESCRIBE, "GET", SNAPSHOTS "/{name}", NULL, NULL, NULL, NULL, NULL,
	  NULL, "NAME", 1, 1, snapshot_flags, NOLOCAL, 0, "Describe a snapshot." },
	{ "volumes snapshots", "update", CLI_K_UPDATE, "PATCH", SNAPSHOTS "/{name}", NULL, NULL, NULL, "snapshot",
	  "Updating", NULL, "NAME", 1, 1, snapshot_flags, NOLOCAL, 0, "Update a snapshot's description and labels." },
	{ "volumes snapshots", "delete", CLI_K_DELETE, "DELETE", SNAPSHOTS "/{name}", NULL, NULL, NULL, "snapshot",
	  "Deleting", NULL, "NAME", 1, 1, snapshot_flags, NOLOCAL, 0, "Delete a snapshot." },

	/* smb-users */
	{ "smb-users", "create", CLI_K_CREATE, "POST", SMBUSERS, NULL, "smbUserId", NULL, "SMB user",
	  "Creating", NULL, "NAME", 1, 1, smbuser_flags, NOLOCAL, 0,
	  "Create an SMB user of the project (names compare case-insensitively)." },
	{ "smb-users", "list", CLI_K_LIST, "GET", SMBUSERS, NULL, NULL, "smbUsers", NULL, NULL,
	  "name.basename():NAME,name.location():LOCATION,uid,gid,description,createTime", NULL, 0, 0,
	  NOFLAGS, NOLOCAL, 0, "List SMB users." },
	{ "smb-users", "describe", CLI_K_DESCRIBE, "GET", SMBUSERS "/{name}", NULL, NULL, NULL, NULL, NULL,
	  NULL, "NAME", 1, 1, NOFLAGS, NOLOCAL, 0, "Describe an SMB user." },
	{ "smb-users", "update", CLI_K_UPDATE, "PATCH", SMBUSERS "/{name}", NULL, NULL, NULL, "SMB user",
	  "Updating", NULL, "NAME", 1, 1, smbuser_flags, NOLOCAL, 0,
	  "Update an SMB user; only the flags given are changed." },
	{ "smb-users", "delete", CLI_K_DELETE, "DELETE", SMBUSERS "/{name}", NULL, NULL, NULL, "SMB user",
	  "Deleting", NULL, "NAME", 1, 1, NOFLAGS, NOLOCAL, 0, "Delete an SMB user." },

	/* backup-vaults, backup-policies (issue 21) */
	{ "backup-vaults", "create", CLI_K_CREATE, "POST", BVAULTS, NULL, "backupVaultId", NULL, "backup vault",
	  "Creating", NULL, "NAME", 1, 1, bvault_flags, NOLOCAL, 0, "Create a backup vault." },
	{ "backup-vaults", "list", CLI_K_LIST, "GET", BVAULTS, NULL, NULL, "backupVaults", NULL, NULL,
	  "name.basename():NAME,name.location():LOCATION,backupVaultType,backupRegion,state,createTime", NULL, 0, 0,
	  NOFLAGS, NOLOCAL, 0, "List backup vaults." },
	{ "backup-vaults", "describe", CLI_K_DESCRIBE, "GET", BVAULTS "/{name}", NULL, NULL, NULL, NULL, NULL,
	  NULL, "NAME", 1, 1, NOFLAGS, NOLOCAL, 0, "Describe a backup vault." },
	{ "backup-vaults", "update", CLI_K_UPDATE, "PATCH", BVAULTS "/{name}", NULL, NULL, NULL, "backup vault",
	  "Updating", NULL, "NAME", 1, 1, bvault_flags, NOLOCAL, 0,
	  "Update a backup vault; only the flags given are changed." },
	{ "backup-vaults", "delete", CLI_K_DELETE, "DELETE", BVAULTS "/{name}", NULL, NULL, NULL, "backup vault",
	  "Deleting", NULL, "NAME", 1, 1, NOFLAGS, NOLOCAL, 0, "Delete a backup vault (it must hold no backups)." },
	/* backups (issue 21), as gcloud spells them: backup-vaults backups */
#define BACKUP_CMDS(G, O) \
	{ G, "create", CLI_K_CREATE, "POST", BACKUPS, NULL, "backupId", NULL, "backup", "Creating", NULL, "NAME", 1, 1, \
	  backup_flags, NOLOCAL, O, "Back up --source-volume into --backup-vault (waits until READY)." }, \
	{ G, "list", CLI_K_LIST, "GET", BACKUPS, NULL, NULL, "backups", NULL, NULL, \
	  "name.basename():NAME,sourceVolume.basename():VOLUME,backupType,state,volumeUsageBytes,createTime", NULL, 0, 0, \
	  backup_flags, NOLOCAL, O, "List the backups of --backup-vault." }, \
	{ G, "describe", CLI_K_DESCRIBE, "GET", BACKUPS "/{name}", NULL, NULL, NULL, NULL, NULL, NULL, "NAME", 1, 1, \
	  backup_flags, NOLOCAL, O, "Describe a backup." }, \
	{ G, "update", CLI_K_UPDATE, "PATCH", BACKUPS "/{name}", NULL, NULL, NULL, "backup", "Updating", NULL, "NAME", 1, 1, \
	  backup_flags, NOLOCAL, O, "Update a backup's description and labels." }, \
	{ G, "delete", CLI_K_DELETE, "DELETE", BACKUPS "/{name}", NULL, NULL, NULL, "backup", "Deleting", NULL, "NAME", 1, \
	  1, backup_flags, NOLOCAL, O, "Delete a backup (not before its enforcedRetentionEndTime)." }
	BACKUP_CMDS("backup-vaults backups", 0),
#undef BACKUP_CMDS
	{ "backup-policies", "create", CLI_K_CREATE, "POST", BPOLICIES, NULL, "backupPolicyId", NULL,
	  "backup policy", "Creating", NULL, "NAME", 1, 1, bpolicy_flags, NOLOCAL, 0, "Create a backup policy." },
	{ "backup-policies", "list", CLI_K_LIST, "GET", BPOLICIES, NULL, NULL, "backupPolicies", NULL, NULL,
	  "name.basename():NAME,name.location():LOCATION,dailyBackupLimit,weeklyBackupLimit,monthlyBackupLimit,"
	  "enabled,assignedVolumeCount,state",
	  NULL, 0, 0, NOFLAGS, NOLOCAL, 0, "List backup policies." },
	{ "backup-policies", "describe", CLI_K_DESCRIBE, "GET", BPOLICIES "/{name}", NULL, NULL, NULL, NULL, NULL,
	  NULL, "NAME", 1, 1, NOFLAGS, NOLOCAL, 0, "Describe a backup policy." },
	{ "backup-policies", "update", CLI_K_UPDATE, "PATCH", BPOLICIES "/{name}", NULL, NULL, NULL, "backup policy",
	  "Updating", NULL, "NAME", 1, 1, bpolicy_flags, NOLOCAL, 0,
	  "Update a backup policy; only the flags given are changed." },
	{ "backup-policies", "delete", CLI_K_DELETE, "DELETE", BPOLICIES "/{name}", NULL, NULL, NULL,
	  "backup policy", "Deleting", NULL, "NAME", 1, 1, NOFLAGS, NOLOCAL, 0, "Delete a backup policy." },

	/* operations */
	{ "operations", "list", CLI_K_LIST, "GET", OPERATIONS, NULL, NULL, "operations", NULL, NULL,
	  "name.basename():NAME,name.location():LOCATION,metadata.verb:TYPE,"
	  "metadata.target.basename():TARGET,done,"
	  "metadata.createTime:CREATE_TIME,error.message:ERROR",
	  NULL, 0, 0, NOFLAGS, NOLOCAL, 0, "List long-running operations." },
	{ "operations", "describe", CLI_K_DESCRIBE, "GET", OPERATIONS "/{name}", NULL, NULL, NULL, NULL,
	  NULL, NULL, "OPERATION", 1, 1, NOFLAGS, NOLOCAL, 0, "Describe an operation." },
	{ "operations", "delete", CLI_K_DELETE, "DELETE", OPERATIONS "/{name}", NULL, NULL, NULL,
	  "operation", "Deleting", NULL, "OPERATION", 1, 1, NOFLAGS, NOLOCAL, 0,
	  "Forget a finished operation." },
	{ "operations", "cancel", CLI_K_ACTION, "POST", OPERATIONS "/{name}:cancel", NULL, NULL, NULL,
	  "operation", "Cancelling", NULL, "OPERATION", 1, 1, NOFLAGS, NOLOCAL, CLI_C_REREAD,
	  "Cancel a running volume create (rolled back; the operation ends CANCELLED) and print the operation; anything else is refused with the reason." },

	/* nodes */
	{ "nodes", "list", CLI_K_LIST, "GET", "/v1/nodes", NULL, NULL, "nodes", NULL, NULL,
	  "name.basename():NAME,location,state,nfsAddress,volumeCount,allocatedThroughputMibps",
	  NULL, 0, 0, NOFLAGS, NOLOCAL, 0,
	  "List storage nodes." },
	{ "nodes", "describe", CLI_K_DESCRIBE, "GET", "/v1/nodes/{name}", NULL, NULL, NULL, NULL, NULL,
	  NULL, "NODE", 1, 1, NOFLAGS, NOLOCAL, 0, "Describe a storage node." },
	{ "nodes", "metrics", CLI_K_DESCRIBE, "GET", "/v1/nodes/{name}/metrics", NULL, NULL, NULL, NULL,
	  NULL, NULL, "NODE", 1, 1, metrics_flags, NOLOCAL, CLI_C_METRICS,
	  "Time series of a storage node (the volumes it serves), 10 s points." },
	{ "nodes", "drain", CLI_K_ACTION, "POST", "/v1/nodes/{name}:drain", NULL, NULL, NULL, "node",
	  "Draining", NULL, "NODE", 1, 1, drain_flags, NOLOCAL, 0,
	  "Move a node's volumes to other nodes of its location (refused when some find no room, unless --force)." },
	{ "nodes", "undrain", CLI_K_ACTION, "POST", "/v1/nodes/{name}:undrain", NULL, NULL, NULL, "node",
	  "Undraining", NULL, "NODE", 1, 1, NOFLAGS, NOLOCAL, 0,
	  "Make a DRAINING node READY again: it takes new volumes (those that moved away stay)." },
	{ "nodes", "delete", CLI_K_DELETE, "DELETE", "/v1/nodes/{name}", NULL, NULL, NULL, "node",
	  "Deleting", NULL, "NODE", 1, 1, NOFLAGS, NOLOCAL, 0,
	  "Forget a node that serves nothing (DOWN or drained)." },
	{ "nodes", "join-token", CLI_K_ACTION, "POST", "/v1/locations/{location}:joinToken", NULL, NULL,
	  NULL, NULL, NULL, NULL, NULL, 0, 0, join_token_flags, NOLOCAL, 0,
	  "Mint a token a new node of --location uses to join." },

	/* shelves */
	{ "shelves", "create", CLI_K_CREATE, "POST", "/v1/shelves", NULL, "shelfId", NULL, "shelf",
	  "Creating", NULL, "SHELF", 1, 1, shelf_flags, NOLOCAL, CLI_C_LOCATION_BODY,
	  "Register a storage shelf of --location (cluster admin)." },
	{ "shelves", "list", CLI_K_LIST, "GET", "/v1/shelves", NULL, NULL, "shelves", NULL, NULL,
	  "name.basename():NAME,location,backend,transport,media,capacityGib,readThroughputMibps,writeThroughputMibps", NULL, 0, 0,
	  NOFLAGS, NOLOCAL, 0, "List storage shelves." },
	{ "shelves", "describe", CLI_K_DESCRIBE, "GET", "/v1/shelves/{name}", NULL, NULL, NULL, NULL, NULL,
	  NULL, "SHELF", 1, 1, NOFLAGS, NOLOCAL, 0, "Describe a storage shelf." },
	{ "shelves", "update", CLI_K_UPDATE, "PATCH", "/v1/shelves/{name}", NULL, NULL, NULL, "shelf",
	  "Updating", NULL, "SHELF", 1, 1, shelf_flags, NOLOCAL, 0,
	  "Update a shelf's portals, capacity, media or ceilings (refused below what its location's volumes take or were promised)." },
	{ "shelves", "delete", CLI_K_DELETE, "DELETE", "/v1/shelves/{name}", NULL, NULL, NULL, "shelf",
	  "Deleting", NULL, "SHELF", 1, 1, NOFLAGS, NOLOCAL, 0,
	  "Delete a shelf (refused while its location's volumes need it)." },

	/* local */
	{ "config", "set", CLI_K_LOCAL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "KEY VALUE", 2, 2,
	  NOFLAGS, cli_local_config_set, 0,
	  "Store KEY (endpoint, token, project, location, ca_file) in the config file." },
	{ "config", "get", CLI_K_LOCAL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "KEY", 1, 1,
	  NOFLAGS, cli_local_config_get, 0,
	  "Print KEY's effective value (flags, then environment, then config file)." },
	{ "config", "list", CLI_K_LOCAL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0,
	  NOFLAGS, cli_local_config_list, 0, "Print every key of the config file." },
	{ "config", "unset", CLI_K_LOCAL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "KEY", 1, 1,
	  NOFLAGS, cli_local_config_unset, 0, "Remove KEY from the config file." },
	{ "auth", "print-token", CLI_K_LOCAL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0,
	  NOFLAGS, cli_local_auth_print_token, 0, "Print the token aquifer would send." },
	{ "auth", "login", CLI_K_LOCAL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0,
	  login_flags, cli_local_auth_login, 0, "Store a bearer token in the config file." },
	{ "completion", "bash", CLI_K_LOCAL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0,
	  NOFLAGS, cli_local_completion_bash, 0,
	  "Print a bash completion script: source <(aquifer completion bash)." },
	{ NULL, NULL, CLI_K_COUNT, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL,
	  0, NULL }
};

const struct cli_group *cli_group_find(const char *name)
{
	const struct cli_group *g;

	for (g = cli_groups; g->name; g++)
		if (strcmp(g->name, name) == 0)
			return g;
	return NULL;
}

const struct cli_cmd *cli_cmd_find(const char *group, const char *verb)
{
	const struct cli_cmd *c;

	for (c = cli_cmds; c->group; c++)
		if (strcmp(c->group, group) == 0 && strcmp(c->verb, verb) == 0)
			return c;
	return NULL;
}

bool cli_flag_applies(const struct cli_flag *f, const struct cli_cmd *cmd)
{
	return (f->on & CLI_ON(cmd->kind)) != 0;
}

bool cli_type_is_bool(enum cli_type t)
{
	return t == CLI_T_BOOL;
}

static const struct cli_flag *flag_in(const struct cli_flag *flags, const struct cli_cmd *cmd,
				      const char *name)
{
	const struct cli_flag *f;

	for (f = flags; f && f->name; f++)
		if (strcmp(f->name, name) == 0 && cli_flag_applies(f, cmd))
			return f;
	return NULL;
}

const struct cli_flag *cli_cmd_flag(const struct cli_cmd *cmd, const char *name)
{
	const struct cli_flag *f = flag_in(cmd->flags, cmd, name);

	return f ? f : flag_in(cli_global_flags, cmd, name);
}

static int route_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void cli_routes_print(FILE *out)
{
	char *lines[2 * sizeof(cli_cmds) / sizeof(cli_cmds[0])];
	size_t n = 0, i;
	const struct cli_cmd *c;

	for (c = cli_cmds; c->group; c++) {
		char line[512];
		size_t len;
		const char *p;
		int in_param = 0;

		int which;

		for (which = 0; which < 2; which++) {
		const char *tmpl = which ? c->admin_path : c->path;
		if (c->method == NULL || tmpl == NULL)
			continue;
		len = (size_t)snprintf(line, sizeof(line), "%s ", c->method);
		for (p = tmpl; *p && len + 2 < sizeof(line); p++) {
			if (*p == '{') {
				in_param = 1;
				line[len++] = '*';
			} else if (*p == '}') {
				in_param = 0;
			} else if (!in_param) {
				line[len++] = *p;
			}
		}
		line[len] = '\0';
		if ((lines[n] = strdup(line)) != NULL)
			n++;
		}
	}
	qsort(lines, n, sizeof(lines[0]), route_cmp);
	for (i = 0; i < n; i++)
		if (i == 0 || strcmp(lines[i], lines[i - 1]) != 0)
			fprintf(out, "%s\n", lines[i]);
	for (i = 0; i < n; i++)
		free(lines[i]);
}
