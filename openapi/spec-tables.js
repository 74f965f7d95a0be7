// openapi/spec-tables.js: the part of gen-spec.js that reads the server's C
// field tables (api/api_project.c, api/api_pool.c, api/api_volume.c, the
// limits of api/api_intent.h) and turns a table into a JSON Schema object,
// with the field descriptions of GCNV's semantics.
'use strict';

const fs = require('fs');
const path = require('path');

const top = path.resolve(__dirname, '..');

// ---- parse the C field tables ------------------------------------------
function readC(rel) {
  return fs.readFileSync(path.join(top, rel), 'utf8');
}

function parseEnums(src) {
  const out = {};
  const re = /static const char \*const (\w+)\[\]\s*=\s*\{([^}]*)\}/g;
  let m;
  while ((m = re.exec(src))) {
    out[m[1]] = [...m[2].matchAll(/"([^"]*)"/g)].map((x) => x[1]);
  }
  return out;
}

// The contract's limits (api/api_intent.h): a table row may name one.
const limits = {};
for (const m of readC('api/api_intent.h').matchAll(/^#define (API_INTENT_\w+) (-?\d+)\b/gm)) limits[m[1]] = Number(m[2]);
for (const m of readC('api/api_resource.h').matchAll(/^#define (API_SMB_USER_\w+) (-?\d+)/gm)) limits[m[1]] = Number(m[2]);
for (const m of readC('api/api_shelf.h').matchAll(/^#define (API_SHELF_\w+) (-?\d+)\b/gm)) limits[m[1]] = Number(m[2]);
function limit(tok) {
  if (/^-?\d+$/.test(tok)) return Number(tok);
  if (!(tok in limits)) throw new Error(`unknown limit ${tok} in a field table`);
  return limits[tok];
}

function parseTables(src) {
  const out = {};
  const re = /struct api_field (\w+)\[\]\s*=\s*\{([\s\S]*?)\n\};/g;
  let m;
  while ((m = re.exec(src))) {
    const rows = [];
    const rowRe = /\{\s*"(\w+)",\s*(API_T_\w+),\s*([^,]+),\s*(\w+),\s*(\w+),\s*(-?\w+)\s*\}/g;
    let r;
    while ((r = rowRe.exec(m[2]))) {
      rows.push({
        name: r[1],
        type: r[2],
        flags: r[3].trim() === '0' ? [] : r[3].split('|').map((s) => s.trim()),
        enums: r[4] === 'NULL' ? null : r[4],
        sub: r[5] === 'NULL' ? null : r[5],
        maxLen: limit(r[6]),
      });
    }
    out[m[1]] = rows;
  }
  return out;
}

const sources = ['api/api_project.c', 'api/api_pool.c', 'api/api_volume.c', 'api/api_snapshot.c', 'api/api_smb_user.c', 'api/api_backup.c', 'api/api_shelf.c'].map(readC);
const enums = Object.assign({}, ...sources.map(parseEnums));
const tables = Object.assign({}, ...sources.map(parseTables));

// Schema names for the C tables.
const schemaName = {
  api_project_fields: 'Project',
  api_location_fields: 'Location',
  api_pool_fields: 'StoragePool',
  api_volume_fields: 'Volume',
  api_snapshot_fields: 'Snapshot',
  api_smb_user_fields: 'SmbUser',
  api_shelf_fields: 'Shelf',
  shelf_io_fields: 'ShelfIoStats',
  api_backup_vault_fields: 'BackupVault',
  api_backup_policy_fields: 'BackupPolicy',
  api_backup_fields: 'Backup',
  retention_fields: 'BackupRetentionPolicy',
  vol_clone_fields: 'CloneDetails',
  vol_rule_fields: 'SimpleExportPolicyRule',
  vol_export_fields: 'ExportPolicy',
  vol_mount_fields: 'MountOption',
  vol_sched_fields: 'SnapshotSchedule',
  vol_snap_policy_fields: 'SnapshotPolicy',
  vol_tiering_fields: 'TieringPolicy',
  vol_ra_fields: 'ReadAhead',
  vol_restore_fields: 'RestoreParameters',
  vol_backup_fields: 'BackupConfig',
  loc_cold_fields: 'ColdStore',
  loc_svc_fields: 'ServiceAddresses',
  loc_s3_fields: 'ColdStoreS3',
  loc_dir_fields: 'ColdStoreDirectory',
};

// Field descriptions (GCNV semantics: the v1 volume and storage pool messages).
const docs = {
  'StoragePool.name': 'Resource name: projects/{project}/locations/{location}/storagePools/{storagePoolId}.',
  'StoragePool.serviceLevel': 'Service level of the pool. Immutable.',
  'StoragePool.capacityGib': 'Provisioned (billed) capacity of the pool in GiB (int64 as a JSON string).',
  'StoragePool.volumeCapacityGib': 'Sum of the capacities of the pool\'s volumes, GiB.',
  'StoragePool.volumeCount': 'Number of volumes in the pool.',
  'StoragePool.network': 'Required, as in GCNV: the VPC network, projects/{project}/global/networks/{network} (the project may be a Shared VPC host); anything else is refused (400). Immutable. The CLI fills in projects/PROJECT/global/networks/default when --network is not given.',
  'StoragePool.allowAutoTiering': 'Allow volumes of this pool to tier cold data. Can be enabled after creation but not disabled.',
  'StoragePool.totalThroughputMibps': 'Throughput budget of the pool in MiB/s (input only with customPerformanceEnabled; always returned).',
  'StoragePool.availableThroughputMibps': 'Throughput budget not yet given to volumes (MiB/s).',
  'StoragePool.qosType': 'Quality of service: AUTO (volume throughput follows capacity) or MANUAL (set per volume). Defaults to AUTO.',
  'StoragePool.kmsConfig': 'Not supported by Aquifer (400 if set). Immutable.',
  'StoragePool.ldapEnabled': 'Not supported by Aquifer (400 if true). Immutable.',
  'StoragePool.type': 'Only FILE is supported. Immutable.',
  'StoragePool.mode': 'Only DEFAULT is supported. Immutable.',
  'Volume.name': 'Resource name: projects/{project}/locations/{location}/volumes/{volumeId}.',
  'Volume.shareName': 'NFS export path (/shareName on the volume\'s node), unique per location across every project (409 ALREADY_EXISTS when another volume of the location has it; the answer names no other project). Immutable.',
  'Volume.storagePool': 'The pool holding the volume: an ID or a full resource name in the same project and location. Read back as it was sent (ID or full name), so a Terraform config using either `pool.name` or `pool.id` shows no diff. Updating it moves the volume (PREMIUM <-> EXTREME only).',
  'Volume.capacityGib': 'Capacity of the volume in GiB (int64 as a JSON string).',
  'Volume.protocols': 'GCNV\'s sets are NFSV3, NFSV4, SMB, NFSV3+NFSV4, SMB+NFSV3, SMB+NFSV4; Aquifer serves ["NFSV3"], ["SMB"] and ["NFSV3","SMB"], so any other set is refused (400 naming it). An SMB volume is READY only on a node whose agent serves SMB. Immutable.',
  'Volume.smbSettings': 'ENCRYPT_DATA (the share refuses unencrypted requests), NON_BROWSABLE (the node lists no shares), SHOW_PREVIOUS_VERSIONS (snapshots as Windows previous versions) and CHANGE_NOTIFY (SMB2 CHANGE_NOTIFY, fed by changes over every protocol) are served; any other setting is refused (400 naming it).',
  'Volume.snapshotPolicy': 'Scheduled snapshots, run by aquiferd\'s scheduler (UTC): each schedule keeps exactly snapshotsToKeep snapshots of its kind, named hourly-YYYYMMDD-HHMM (daily-, weekly-, monthly-); the oldest goes when a new one is made. Slots missed while aquiferd was down are not replayed (one catch-up per kind). Defaults: minute 0, hour 0, day Sunday, daysOfMonth 1. A field of another kind (hour in hourlySchedule, ...) is refused (400).',
  'Volume.snapReserve': 'Deprecated in GCNV. No space is set aside for snapshots (their space counts in usedGib against capacityGib): any value but 0 is refused (400).',
  'Volume.snapshotDirectory': 'true: /.snapshot/<snapshotId>/ at the export root, read-only. Defaults to false (the proto3 default), also when an updateMask names it without a value, so a Terraform config that leaves it out plans no change.',
  'Volume.readAhead': 'Aquifer extension: read-ahead of the volume\'s data path (every protocol). Leave it out for the kernel\'s own read-ahead. updateMask path: readAhead.',
  'ReadAhead.mode': 'Required in readAhead. NONE; AGGRESSIVE (every read asks for the next 8 MiB of the same file); CROSS_FILE_SEQUENTIAL (a file read from its start prefetches the next depthFiles files of its folder whose names continue its numeric suffix: frame000123.dpx, frame000124.dpx, ...; decimal keeping the zero padding, else hexadecimal keeping the case). Prefetch is charged to the volume\'s throughput limit.',
  'ReadAhead.depthFiles': 'CROSS_FILE_SEQUENTIAL only (400 with another mode): how many files ahead, 1-16 (default 4, stored).',
  'Volume.cloneDetails': 'Set on a volume created from a snapshot (restoreParameters.sourceSnapshot). sharedSpaceGib: the source volume\'s used GiB when the snapshot was taken.',
  'BackupVault.name': 'Resource name: projects/{project}/locations/{location}/backupVaults/{backupVaultId}.',
  'BackupVault.backupVaultType': 'IN_REGION (the default) or CROSS_REGION. Immutable.',
  'BackupVault.backupRegion': 'CROSS_REGION only (required there, refused otherwise): the ID of another existing location, whose shelf holds the vault\'s store. Immutable.',
  'BackupVault.sourceRegion': 'CROSS_REGION: the vault\'s own location.',
  'BackupVault.kmsConfig': 'Not supported by Aquifer (400 if set): each vault is encrypted (AES-256-GCM, on the agents) with its own random 32-byte key, which aquiferd keeps and never returns.',
  'BackupVault.backupRetentionPolicy': 'backupMinimumEnforcedRetentionDays 0-36500; when above 0, at least one of the four *BackupImmutable flags must be true (GCNV\'s rule).',
  'BackupVault.state': 'READY once created.',
  'Backup.name': 'Resource name: projects/{project}/locations/{location}/backupVaults/{backupVaultId}/backups/{backupId}.',
  'Backup.state': 'CREATING (the job is in the intent of the node serving the volume), UPLOADING (the node uploads; the create operation\'s statusMessage says how far), READY (the manifest is stored: the backup restores), DELETING, ERROR (stateDetails says why).',
  'Backup.stateDetails': 'Aquifer: why the backup is in state ERROR, or why an upload waits (the store is unavailable).',
  'Backup.sourceVolume': 'Required: the volume\'s full name, projects/P/locations/L/volumes/V, in the vault\'s project and location, READY and served by a node (a tiered volume backs up whole: cold ranges are read from the tier). Immutable.',
  'Backup.sourceSnapshot': 'Optional: a READY snapshot of sourceVolume (its full name). Without it a snapshot bkp-<16 hex> is made for the backup and deleted after it. Immutable.',
  'Backup.backupType': 'MANUAL for backups created by this route.',
  'Backup.volumeUsageBytes': 'The bytes of file data the backup holds (hard links once, holes excluded).',
  'Backup.chainStorageBytes': 'What the volume\'s READY backups in this vault uploaded, this one included (the first uploads the volume\'s data, each later one only changed chunks and its manifest).',
  'Backup.enforcedRetentionEndTime': 'createTime + the vault\'s backupMinimumEnforcedRetentionDays when manualBackupImmutable; before it a delete is refused (FAILED_PRECONDITION). Absent when the vault enforces nothing.',
  'Backup.volumeRegion': 'The source volume\'s location.',
  'Backup.backupRegion': 'The location whose shelf holds the backup (the vault\'s).',
  'BackupPolicy.name': 'Resource name: projects/{project}/locations/{location}/backupPolicies/{backupPolicyId}.',
  'BackupPolicy.dailyBackupLimit': 'Daily backups to keep: at least 2 when given (GCNV), at most 1019.',
  'BackupPolicy.weeklyBackupLimit': 'Weekly backups to keep, 0-1019. daily + weekly + monthly must be at least 2.',
  'BackupPolicy.monthlyBackupLimit': 'Monthly backups to keep, 0-1019.',
  'BackupPolicy.enabled': 'Defaults to true.',
  'BackupPolicy.assignedVolumeCount': 'Volumes of the location whose backupConfig.backupPolicies names the policy, computed on every answer. A policy volumes name is not deleted (FAILED_PRECONDITION).',
  'BackupConfig.backupPolicies': 'At most one (GCNV): the full name projects/{project}/locations/{location}/backupPolicies/{id} of an existing policy of the volume\'s project and location; needs backupVault.',
  'BackupConfig.backupVault': 'The full name of an existing IN_REGION vault of the volume\'s project and location. A vault volumes name is not deleted (FAILED_PRECONDITION).',
  'BackupConfig.scheduledBackupEnabled': 'With a policy in backupPolicies that is enabled: aquiferd takes SCHEDULED backups (daily 00:00 UTC, weekly Sundays, monthly the 1st) named <kind>-<volume>-YYYYMMDD-HHMM and keeps the policy\'s number per kind (the oldest go; never a MANUAL one, never one inside its retention). True without a policy is refused (400).',
  'BackupConfig.backupChainBytes': 'What the volume\'s READY backups in backupVault uploaded; stored, refreshed when a backup of that chain becomes READY or is deleted.',
  'Snapshot.name': 'Resource name: projects/{project}/locations/{location}/volumes/{volumeId}/snapshots/{snapshotId}.',
  'Snapshot.state': 'CREATING until the volume\'s node reports it made, READY, DELETING, or ERROR (stateDetails says why).',
  'Snapshot.usedBytes': 'Bytes the snapshot alone holds (what deleting it frees), from its node\'s reports.',
  'Snapshot.createTime': 'When the snapshot was requested; it holds every write acknowledged as stable before then.',
  'Volume.securityStyle': 'UNIX (the default) or NTFS (Windows security descriptors stored per object and enforced by the SMB server; protocols must be ["SMB"] only, NTFS with NFSV3 or NFSV4 is refused with 400). Immutable.',
  'Volume.multipleEndpoints': 'Each volume is served at its node\'s one NFS address: true is refused (400). Immutable.',
  'Volume.backupConfig': 'Where the volume\'s backups go and which policy would schedule them; each refusal names the field (400). Patch it whole or by subfield (updateMask backupConfig.backupVault, ...).',
  'Volume.restrictedActions': 'DELETE: deleting the volume is refused (FAILED_PRECONDITION) until DELETE is removed. GCNV blocks deletes while the volume is mounted; NFSv3 has no reliable notion of mounted, so Aquifer blocks every delete.',
  'Volume.encryptionType': 'SERVICE_MANAGED: Aquifer does not encrypt volume data itself; data at rest is protected by whatever the shelf provides (self-encrypting drives, dm-crypt/LUKS under the shelf filesystem). See README.',
  'Volume.exportPolicy': 'At most 20 rules (api/api_intent.h); the first rule matching the client and its protocol decides.',
  'SimpleExportPolicyRule.allowedClients': 'Comma-separated IPv4 addresses or CIDRs: at most 32 entries and 640 bytes (api/api_intent.h; GCNV allows 4096 characters).',
  'SimpleExportPolicyRule.nfsv3': 'false: the rule does not apply to NFSv3 clients (the next rule decides; none: no access). Default true.',
  'SimpleExportPolicyRule.nfsv4': 'Whether the rule applies to NFSv4.1 clients. Default true.',
  'SimpleExportPolicyRule.kerberos5ReadOnly': 'Kerberos is not supported: true is refused (400); likewise kerberos5ReadWrite, kerberos5i*, kerberos5p*.',
  'StoragePool.activeDirectory': 'SMB and Active Directory are not supported yet: a value is refused (400).',
  'StoragePool.zone': 'Every node of a location shares one shelf, so a location is one zone: only the pool\'s location ID is accepted (or leave it out).',
  'StoragePool.replicaZone': 'Regional pools replicated to a second zone are not supported: a value is refused (400).',
  'StoragePool.encryptionType': 'SERVICE_MANAGED: Aquifer does not encrypt volume data itself; data at rest is protected by whatever the shelf provides. CLOUD_KMS (kmsConfig) is refused.',
  'Volume.throughputMibps': 'Throughput limit in MiB/s. Settable only in MANUAL QoS pools; computed otherwise.',
  'Volume.tieringPolicy': 'Auto-tiering settings (needs a pool with allowAutoTiering). updateMask paths may address sub-fields, e.g. tiering_policy.cooling_threshold_days.',
  'Volume.kerberosEnabled': 'Not supported by Aquifer (400 if true). Immutable.',
  'Volume.restoreParameters': 'Create the volume as a clone of sourceSnapshot (a READY snapshot\'s full name in the same project and location), or from sourceBackup (a READY backup\'s full name, projects/P/locations/L/backupVaults/V/backups/B, in the same project and location; capacityGib must hold its volumeUsageBytes): the volume is RESTORING until its node has restored the backup into it, then READY, or ERROR with stateDetails when the restore failed. One of the two. Immutable.',
  'Volume.usedGib': 'Used capacity in GiB, computed periodically; counts the snapshots\' space, as GCNV does.',
  'Volume.coldTierSizeGib': 'GiB of the volume\'s data on the cold tier (rounded up), from its node\'s reports. With tierAction ENABLED in PREMIUM/EXTREME AUTO pools each cold GiB earns 2 KiB/s instead of the level\'s rate.',
  'Volume.hotTierSizeUsedGib': 'GiB of the volume\'s data on the hot tier (the shelf), rounded up, from its node\'s reports.',
  'Volume.stateDetails': 'Why the volume is in its state; for a READY volume, a capacity growth its shelf could not make ("shelf: ...": the volume serves at its old size) or a cold-tier problem its node reports (e.g. the cold store is unreachable), cleared once it is fine again.',
  'StoragePool.coldTierSizeUsedGib': 'Sum of the coldTierSizeGib of the pool\'s volumes.',
  'StoragePool.hotTierSizeUsedGib': 'Sum of the hotTierSizeUsedGib of the pool\'s volumes.',
  'StoragePool.enableHotTierAutoResize': 'FLEX pools only. On other pools false (the value the Terraform provider sends) is accepted and true is refused (400).',
  'TieringPolicy.retrievalPolicy': 'Aquifer extension (ANF\'s names): DEFAULT (random reads bring cold data back, sequential reads stream it from the cold tier), ON_READ (every read brings it back), NEVER.',
  'TieringPolicy.hotTierBypassModeEnabled': 'FLEX pools only: new data is written straight to the cold tier.',
  'TieringPolicy.coolingThresholdDays': 'Days without access before data moves to the cold tier: 2-183 (default 31).',
  'TieringPolicy.tierAction': 'ENABLED or PAUSED (default PAUSED). Tiering cannot be switched off once on: the tieringPolicy cannot be removed, only PAUSED.',
  'MountOption.instructions': 'Instructions for mounting, as GCNV gives them: lines to paste into a shell on the client (comments say what to install; mkdir and the mount command with vers=3, the port and nolock).',
  'MountOption.port': 'Aquifer extension: the NFS and MOUNT port of the volume\'s node, or of its location\'s serviceAddresses.',
  'MountOption.ipAddress': 'The address to mount: the volume\'s service address when its location has serviceAddresses (stable across failovers), else its node\'s.',
  'MountOption.libnfsUrl': 'Aquifer extension: the volume as a libnfs URL (nfs://HOST/SHARE?version=3&nfsport=P&mountport=P), for nfs-ls, nfs-cp and other libnfs tools.',
  'Location.coldStore': 'Aquifer extension (cluster admin): where the location\'s cold tier lives, exactly one of s3 or directory. Without it the agents use a directory on the shelf. Changing or removing it is refused (FAILED_PRECONDITION) while volumes of the location have tiering enabled or cold data. Not shown in the per-project view.',
  'Location.serviceAddresses': 'Aquifer extension (cluster admin, issue 25): the range each volume of the location takes a stable mount address from. The node serving a volume holds its address (aquifer-agent --service-interface) and a failover moves it with the volume, so a hard-mounted client resumes by itself; mountOptions show it.',
  'ServiceAddresses.range': 'IPv4 CIDR A.B.C.D/LEN, LEN 16..32, no host bits, not loopback, link-local, multicast, 0/8 or 240/4, and not overlapping another location\'s range. The network and broadcast addresses of a /30 or wider range are not used. IPv6 is refused.',
  'ServiceAddresses.prefixLength': 'Prefix length each address is added with (the subnet the range lies in, 8..LEN); default LEN.',
  'ServiceAddresses.port': 'NFS port the addresses serve (1..65535, default 2049); each node\'s --nfs-listen must use it.',
  'ColdStore.s3': 'Any S3-API object store (requests are signed with AWS SigV4, path-style addressing).',
  'ColdStore.directory': 'A directory every node of the location reaches.',
  'ColdStoreS3.endpoint': 'http:// or https:// URL of the store, e.g. http://127.0.0.1:9000.',
  'ColdStoreS3.bucket': 'Bucket name (S3 rules: 3-63 of a-z, 0-9, ".", "-").',
  'ColdStoreS3.region': 'Signing region (default us-east-1).',
  'ColdStoreS3.accessKeyId': 'Access key ID.',
  'ColdStoreS3.secretAccessKey': 'Secret access key. A PATCH may leave it out while endpoint, bucket and accessKeyId stay the same: the stored one is kept.',
  'ColdStoreDirectory.path': 'Absolute path.',
  'Shelf.name': 'Resource name: shelves/{shelfId}.',
  'Shelf.location': 'The location whose nodes share it (must exist). Immutable.',
  'Shelf.backend': 'directory (default): a folder every node of the location mounts; nvmeof: NVMe over Fabrics, one namespace and file system per volume (agents run with --shelf nvmeof:TRANSPORT:ADDR:PORT:NQN). Immutable.',
  'Shelf.transport': 'nvmeof only (required there, refused on a directory shelf): tcp or rdma (RoCEv2). Immutable.',
  'Shelf.nqn': 'nvmeof only (required there): the subsystem NQN, nqn. and at most 223 characters of [A-Za-z0-9.:_-] (the agent\'s rule). Immutable.',
  'Shelf.addresses': 'nvmeof only (required there, 1-8): the portals, HOST:PORT or [IPv6]:PORT, host at most 63 characters of [A-Za-z0-9.:_-], port 1-65535, no repeats.',
  'Shelf.capacityGib': 'What the shelf holds, GiB (int64 as a JSON string), 1 to 2^30 when given. Placement counts it: a location\'s volumes (their capacityGib, in every project and pool) fit what its shelves hold together; a create or growth past it is refused with RESOURCE_EXHAUSTED (429), a PATCH or DELETE that would leave less than they take with FAILED_PRECONDITION (400). A location with a shelf that states no capacityGib is not bounded.',
  'Shelf.readThroughputMibps': 'Read ceiling, MiB/s, above 0 and at most 1e8 (seed: ~140 GB/s). Placement never promises a location\'s volumes more than the sum of its shelves\' read ceilings.',
  'Shelf.writeThroughputMibps': 'Write ceiling, MiB/s, above 0 and at most 1e8 (seed: 70 GB/s TLC; QLC half).',
  'Shelf.media': 'TLC (default) or QLC.',
  'Shelf.updateTime': 'When a PATCH last changed it.',
  'Shelf.ioStats': 'What the agents of the shelf report of the I/O their volume stores issue to it (every volume, every protocol); absent while no node reports it. A node on an nvmeof shelf counts on the shelf with its NQN, a node on a directory shelf on its location\'s directory shelf first by name. In memory: aquiferd starts empty.',
  'ShelfIoStats.readBytes': 'Bytes read, summed over the reporting nodes since each agent started.',
  'ShelfIoStats.writeBytes': 'Bytes written, likewise.',
  'ShelfIoStats.readOps': 'Reads issued, likewise (zero-copy sends count here).',
  'ShelfIoStats.writeOps': 'Writes issued, likewise.',
  'ShelfIoStats.readMibps': 'Read throughput over each node\'s last report interval (about 2 s), summed, MiB/s.',
  'ShelfIoStats.writeMibps': 'Write throughput, likewise.',
  'ShelfIoStats.readLatencyMs': 'Mean latency of the timed reads of the last interval (zero-copy sends are counted, not timed); absent without any.',
  'ShelfIoStats.writeLatencyMs': 'Mean latency of the writes of the last interval; absent without any.',
  'ShelfIoStats.nodes': 'The nodes reporting it (nodes/N).',
  'Project.name': 'Resource name: projects/{projectId}.',
  'Location.name': 'Resource name: locations/{locationId} (cluster view) or projects/{project}/locations/{locationId}.',
};

const maxDefault = { string: 4096, list: 64 };

function fieldSchema(owner, f) {
  let s;
  switch (f.type) {
    case 'API_T_STRING':
      s = { type: 'string', maxLength: f.maxLen > 0 ? f.maxLen : maxDefault.string };
      break;
    case 'API_T_INT64':
      s = { type: 'string', format: 'int64', pattern: '^-?[0-9]+$' };
      break;
    case 'API_T_INT32':
      s = { type: 'integer', format: 'int32' };
      break;
    case 'API_T_DOUBLE':
      s = { type: 'number', format: 'double' };
      break;
    case 'API_T_BOOL':
      s = { type: 'boolean' };
      break;
    case 'API_T_ENUM':
      s = { type: 'string', enum: enums[f.enums] };
      break;
    case 'API_T_ENUM_LIST':
      s = { type: 'array', items: { type: 'string', enum: enums[f.enums] }, maxItems: f.maxLen > 0 ? f.maxLen : maxDefault.list };
      break;
    case 'API_T_STRING_LIST':
      s = { type: 'array', items: { type: 'string', maxLength: maxDefault.string }, maxItems: f.maxLen > 0 ? f.maxLen : maxDefault.list };
      break;
    case 'API_T_LABELS':
      // Google's label rule: lowercase letters, digits, _ and - (and international characters)
      s = { type: 'object', maxProperties: 64, description: 'Keys: 1-63 lowercase letters, digits, `_` or `-` (or international characters), starting with a lowercase letter. Values: at most 63 of the same.',
        additionalProperties: { type: 'string', maxLength: 63 } };
      break;
    case 'API_T_OBJECT':
      s = { $ref: `#/components/schemas/${schemaName[f.sub]}` };
      break;
    case 'API_T_OBJECT_LIST':
      s = { type: 'array', items: { $ref: `#/components/schemas/${schemaName[f.sub]}` }, maxItems: f.maxLen > 0 ? f.maxLen : maxDefault.list };
      break;
    default:
      throw new Error(`unknown field type ${f.type} in ${owner}.${f.name}`);
  }
  const notes = [];
  if (docs[`${owner}.${f.name}`]) notes.push(docs[`${owner}.${f.name}`]);
  if (f.flags.includes('API_F_OUTPUT')) notes.push('Output only: ignored in requests.');
  if (f.flags.includes('API_F_IMMUTABLE') && !notes.some((n) => /Immutable/.test(n)))
    notes.push('Immutable: set on create; an updateMask naming it is refused (400).');
  if (f.flags.includes('API_F_INPUT')) notes.push('Input only: never returned.');
  if (s.$ref) {
    // OpenAPI 3.0: siblings of $ref are ignored, so wrap it.
    s = { allOf: [s] };
  }
  if (notes.length) s.description = notes.join(' ');
  if (f.flags.includes('API_F_OUTPUT')) s.readOnly = true;
  if (f.flags.includes('API_F_INPUT')) s.writeOnly = true;
  if (f.flags.includes('API_F_IMMUTABLE')) s['x-aquifer-immutable'] = true;
  return s;
}

function objectSchema(table, extra) {
  const owner = schemaName[table];
  const rows = tables[table];
  if (!rows || !rows.length) throw new Error(`field table ${table} not found`);
  const s = { type: 'object', additionalProperties: false, properties: {} };
  const req = [];
  for (const f of rows) {
    s.properties[f.name] = fieldSchema(owner, f);
    if (f.flags.includes('API_F_REQUIRED')) req.push(f.name);
  }
  if (req.length) s.required = req;
  return Object.assign(s, extra || {});
}

module.exports = { limits, limit, enums, tables, schemaName, docs, objectSchema };
