#!/usr/bin/env node
// openapi/gen-spec.js: generate openapi/openapi.yaml (on stdout) from the
// server's own field tables (api/api_pool.c, api/api_volume.c,
// api/api_project.c) plus the route table below, so the published contract
// cannot drift from what aquiferd validates. Paths are checked against
// `aquiferd routes` by tests/e2e/test_openapi.sh; the committed YAML is checked
// to equal this script's output by the same test.
//
//   node openapi/gen-spec.js > openapi/openapi.yaml
'use strict';
const fs = require('fs');
const path = require('path');
const yaml = require('js-yaml');

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

const sources = ['api/api_project.c', 'api/api_pool.c', 'api/api_volume.c', 'api/api_smb_user.c'].map(readC);
const enums = Object.assign({}, ...sources.map(parseEnums));
const tables = Object.assign({}, ...sources.map(parseTables));

// Schema names for the C tables.
const schemaName = {
  api_project_fields: 'Project',
  api_location_fields: 'Location',
  api_pool_fields: 'StoragePool',
  api_volume_fields: 'Volume',
  api_smb_user_fields: 'SmbUser',
  vol_rule_fields: 'SimpleExportPolicyRule',
  vol_export_fields: 'ExportPolicy',
  vol_mount_fields: 'MountOption',
  vol_sched_fields: 'SnapshotSchedule',
  vol_snap_policy_fields: 'SnapshotPolicy',
  vol_tiering_fields: 'TieringPolicy',
  vol_restore_fields: 'RestoreParameters',
  vol_backup_fields: 'BackupConfig',
  loc_cold_fields: 'ColdStore',
  loc_s3_fields: 'ColdStoreS3',
  loc_dir_fields: 'ColdStoreDirectory',
};

// Field descriptions (GCNV semantics, shared/reference/gcnv.md §1.7-1.8).
const docs = {
  'StoragePool.name': 'Resource name: projects/{project}/locations/{location}/storagePools/{storagePoolId}.',
  'StoragePool.serviceLevel': 'Service level of the pool. Immutable.',
  'StoragePool.capacityGib': 'Provisioned (billed) capacity of the pool in GiB (int64 as a JSON string).',
  'StoragePool.volumeCapacityGib': 'Sum of the capacities of the pool\'s volumes, GiB.',
  'StoragePool.volumeCount': 'Number of volumes in the pool.',
  'StoragePool.network': 'VPC network, projects/{project}/global/networks/{network}. Defaults to "default". Immutable.',
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
  'Volume.storagePool': 'The pool holding the volume: an ID or a full resource name in the same project and location. Returned as the full resource name. Updating it moves the volume (PREMIUM <-> EXTREME only).',
  'Volume.capacityGib': 'Capacity of the volume in GiB (int64 as a JSON string).',
  'Volume.protocols': 'GCNV\'s sets are NFSV3, NFSV4, SMB, NFSV3+NFSV4, SMB+NFSV3, SMB+NFSV4; Aquifer serves ["NFSV3"], ["SMB"] and ["NFSV3","SMB"], so any other set is refused (400 naming it). An SMB volume is READY only on a node whose agent serves SMB. Immutable.',
  'Volume.smbSettings': 'No SMB setting is served yet (ENCRYPT_DATA comes with the agent\'s per-share encryption): a non-empty list is refused (400 naming the setting).',
  'Volume.snapshotPolicy': 'Automatic snapshots are not implemented yet: enabled true is refused (400); enabled false (the schedule kept, nothing taken) is accepted.',
  'Volume.snapReserve': 'No snapshots, so no reserve: any value but 0 is refused (400).',
  'Volume.snapshotDirectory': 'No snapshots, so no .snapshot directory: true is refused (400); defaults to false (GCNV\'s default is true).',
  'Volume.securityStyle': 'UNIX (the default; SMB shows the mode bits as a synthesized descriptor); NTFS is not served yet and is refused (400). Immutable.',
  'SmbUser.name': 'Resource name: projects/{project}/locations/{location}/smbUsers/{smbUserId}, the ID lowercased (names compare case-insensitively).',
  'SmbUser.password': 'Input only: never stored, never returned. Kept only as its NT hash (MD4 of the UTF-16LE password), which no answer carries. Required on create.',
  'SmbUser.uid': 'The owner NFS sees for what the user creates over SMB (0-4294967294, int64 as a JSON string).',
  'SmbUser.gid': 'The group NFS sees for what the user creates over SMB (0-4294967294).',
  'SmbUser.description': 'Free text.',
  'Volume.multipleEndpoints': 'Each volume is served at its node\'s one NFS address: true is refused (400). Immutable.',
  'Volume.backupConfig': 'Backups are not implemented yet: backupPolicies, backupVault or scheduledBackupEnabled true are refused (400).',
  'Volume.restrictedActions': 'DELETE: deleting the volume is refused (FAILED_PRECONDITION) until DELETE is removed. GCNV blocks deletes while the volume is mounted; NFSv3 has no reliable notion of mounted, so Aquifer blocks every delete.',
  'Volume.encryptionType': 'SERVICE_MANAGED: Aquifer does not encrypt volume data itself; data at rest is protected by whatever the shelf provides (self-encrypting drives, dm-crypt/LUKS under the shelf filesystem). See README.',
  'Volume.exportPolicy': 'At most 20 rules (api/api_intent.h); the first rule matching the client and its protocol decides.',
  'SimpleExportPolicyRule.allowedClients': 'Comma-separated IPv4 addresses or CIDRs: at most 32 entries and 640 bytes (api/api_intent.h; GCNV allows 4096 characters).',
  'SimpleExportPolicyRule.nfsv3': 'false: the rule does not apply to NFSv3 clients (the next rule decides; none: no access). Default true.',
  'SimpleExportPolicyRule.nfsv4': 'Whether the rule applies to NFSv4.1 clients (NFSv4 is not served yet). Default true.',
  'SimpleExportPolicyRule.kerberos5ReadOnly': 'Kerberos is not supported: true is refused (400); likewise kerberos5ReadWrite, kerberos5i*, kerberos5p*.',
  'StoragePool.activeDirectory': 'SMB and Active Directory are not supported yet: a value is refused (400).',
  'StoragePool.zone': 'Every node of a location shares one shelf, so a location is one zone: only the pool\'s location ID is accepted (or leave it out).',
  'StoragePool.replicaZone': 'Regional pools replicated to a second zone are not supported: a value is refused (400).',
  'StoragePool.encryptionType': 'SERVICE_MANAGED: Aquifer does not encrypt volume data itself; data at rest is protected by whatever the shelf provides. CLOUD_KMS (kmsConfig) is refused.',
  'Volume.throughputMibps': 'Throughput limit in MiB/s. Settable only in MANUAL QoS pools; computed otherwise.',
  'Volume.tieringPolicy': 'Auto-tiering settings (needs a pool with allowAutoTiering). updateMask paths may address sub-fields, e.g. tiering_policy.cooling_threshold_days.',
  'Volume.kerberosEnabled': 'Not supported by Aquifer (400 if true). Immutable.',
  'Volume.restoreParameters': 'Create from a snapshot or backup: not supported yet (400). Immutable.',
  'Volume.usedGib': 'Used capacity in GiB, computed periodically.',
  'Volume.coldTierSizeGib': 'GiB of the volume\'s data on the cold tier (rounded up), from its node\'s reports. With tierAction ENABLED in PREMIUM/EXTREME AUTO pools each cold GiB earns 2 KiB/s instead of the level\'s rate.',
  'Volume.hotTierSizeUsedGib': 'GiB of the volume\'s data on the hot tier (the shelf), rounded up, from its node\'s reports.',
  'Volume.stateDetails': 'Why the volume is in its state; for a READY volume, a cold-tier problem its node reports (e.g. the cold store is unreachable), cleared once it is fine again.',
  'StoragePool.coldTierSizeUsedGib': 'Sum of the coldTierSizeGib of the pool\'s volumes.',
  'StoragePool.hotTierSizeUsedGib': 'Sum of the hotTierSizeUsedGib of the pool\'s volumes.',
  'TieringPolicy.retrievalPolicy': 'Aquifer extension (ANF\'s names): DEFAULT (random reads bring cold data back, sequential reads stream it from the cold tier), ON_READ (every read brings it back), NEVER.',
  'TieringPolicy.hotTierBypassModeEnabled': 'FLEX pools only: new data is written straight to the cold tier.',
  'TieringPolicy.coolingThresholdDays': 'Days without access before data moves to the cold tier: 2-183 (default 31).',
  'TieringPolicy.tierAction': 'ENABLED or PAUSED (default PAUSED). Tiering cannot be switched off once on: the tieringPolicy cannot be removed, only PAUSED.',
  'Location.coldStore': 'Aquifer extension (cluster admin): where the location\'s cold tier lives, exactly one of s3 or directory. Without it the agents use a directory on the shelf. Changing or removing it is refused (FAILED_PRECONDITION) while volumes of the location have tiering enabled or cold data. Not shown in the per-project view.',
  'ColdStore.s3': 'Any S3-API object store (requests are signed with AWS SigV4, path-style addressing).',
  'ColdStore.directory': 'A directory every node of the location reaches.',
  'ColdStoreS3.endpoint': 'http:// or https:// URL of the store, e.g. http://127.0.0.1:9000.',
  'ColdStoreS3.bucket': 'Bucket name (S3 rules: 3-63 of a-z, 0-9, ".", "-").',
  'ColdStoreS3.region': 'Signing region (default us-east-1).',
  'ColdStoreS3.accessKeyId': 'Access key ID.',
  'ColdStoreS3.secretAccessKey': 'Secret access key. A PATCH may leave it out while endpoint, bucket and accessKeyId stay the same: the stored one is kept.',
  'ColdStoreDirectory.path': 'Absolute path.',
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
      s = { type: 'object', maxProperties: 64, additionalProperties: { type: 'string', maxLength: 63 } };
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

// ---- components ----------------------------------------------------------
const T = {
  pool: 'type.googleapis.com/google.cloud.netapp.v1.StoragePool',
  volume: 'type.googleapis.com/google.cloud.netapp.v1.Volume',
  smbUser: 'type.googleapis.com/aquifer.v1.SmbUser',
  empty: 'type.googleapis.com/google.protobuf.Empty',
  opmeta: 'type.googleapis.com/google.cloud.netapp.v1.OperationMetadata',
  locmeta: 'type.googleapis.com/google.cloud.netapp.v1.LocationMetadata',
};

const schemas = {};
for (const t of Object.keys(schemaName)) schemas[schemaName[t]] = objectSchema(t);
schemas.StoragePool.description = 'google.cloud.netapp.v1.StoragePool. JSON names are camelCase; int64 values are JSON strings. Output-only fields in a request are ignored; unknown fields are refused (400).';
schemas.Volume.description = 'google.cloud.netapp.v1.Volume. JSON names are camelCase; int64 values are JSON strings. Output-only fields in a request are ignored; unknown fields are refused (400).';
schemas.SmbUser.description = 'An account SMB sessions authenticate as (NTLMv2), per project and location: a user of project P reaches only the shares of P\'s volumes.';
schemas.Project.description = 'An Aquifer project (projects are real resources here; a cluster admin creates them).';
schemas.Location.description = 'google.cloud.location.Location. Locations are cluster-wide; a cluster admin creates them and every project sees them.';
// The field table lists Location.metadata as an output string; what the server
// returns is a LocationMetadata Any (srv_project.c location_view).
schemas.Location.properties.metadata = {
  allOf: [{ $ref: '#/components/schemas/LocationMetadata' }],
  readOnly: true,
  description: 'Output only.',
};
schemas.Project.properties.state.enum = ['ACTIVE'];

// Resource as the `response` of an Operation: the same fields plus the Any @type.
function anyOf(name, type) {
  const base = schemas[name];
  return {
    type: 'object',
    description: `${name} packed in a google.protobuf.Any (the JSON form carries @type).`,
    additionalProperties: false,
    required: ['@type', ...(base.required || [])],
    properties: Object.assign({ '@type': { type: 'string', enum: [type] } }, base.properties),
  };
}
schemas.StoragePoolAny = anyOf('StoragePool', T.pool);
schemas.VolumeAny = anyOf('Volume', T.volume);
schemas.SmbUserAny = anyOf('SmbUser', T.smbUser);
delete schemas.SmbUserAny.properties.password; // input only: never in an answer
schemas.EmptyAny = {
  type: 'object',
  description: 'google.protobuf.Empty packed in an Any: the response of a finished delete.',
  additionalProperties: false,
  required: ['@type'],
  properties: { '@type': { type: 'string', enum: [T.empty] } },
};
schemas.Empty = {
  type: 'object',
  description: 'google.protobuf.Empty: `{}`.',
  additionalProperties: false,
  properties: {},
};
schemas.LocationMetadata = {
  type: 'object',
  additionalProperties: false,
  properties: {
    '@type': { type: 'string', enum: [T.locmeta] },
    supportedServiceLevels: { type: 'array', items: { type: 'string', enum: enums.pool_levels } },
    supportedFlexPerformance: { type: 'array', items: { type: 'string', enum: ['FLEX_PERFORMANCE_DEFAULT', 'FLEX_PERFORMANCE_CUSTOM'] } },
    hasVcp: { type: 'boolean' },
    hasOntapProxy: { type: 'boolean' },
  },
};
const ts = { type: 'string', format: 'date-time', readOnly: true };
schemas.OperationMetadata = {
  type: 'object',
  description: 'google.cloud.netapp.v1.OperationMetadata packed in an Any. All fields are output only.',
  additionalProperties: false,
  required: ['@type', 'createTime', 'target', 'verb'],
  properties: {
    '@type': { type: 'string', enum: [T.opmeta] },
    createTime: ts,
    endTime: ts,
    target: { type: 'string', readOnly: true, description: 'Resource name the operation acts on.' },
    verb: { type: 'string', readOnly: true, enum: ['create', 'update', 'delete'] },
    statusMessage: { type: 'string', readOnly: true },
    requestedCancellation: { type: 'boolean', readOnly: true },
    apiVersion: { type: 'string', readOnly: true },
  },
};
schemas.Status = {
  type: 'object',
  description: 'google.rpc.Status: `code` is the numeric google.rpc.Code (3 INVALID_ARGUMENT, 5 NOT_FOUND, 9 FAILED_PRECONDITION, 1 CANCELLED, 13 INTERNAL, ...).',
  additionalProperties: false,
  required: ['code', 'message'],
  properties: {
    code: { type: 'integer', format: 'int32' },
    message: { type: 'string' },
    details: { type: 'array', items: { type: 'object', additionalProperties: true } },
  },
};
schemas.Operation = {
  type: 'object',
  description: 'google.longrunning.Operation. While `done` is false neither `error` nor `response` is set; once done exactly one is. Poll GET /v1/{name} until done. Aquifer finishes pool and volume changes inside the request, so their operations are usually done when returned.',
  additionalProperties: false,
  required: ['name', 'metadata', 'done'],
  properties: {
    name: { type: 'string', description: 'projects/{project}/locations/{location}/operations/{operationId}', pattern: '^projects/[^/]+/locations/[^/]+/operations/[^/]+$' },
    metadata: { $ref: '#/components/schemas/OperationMetadata' },
    done: { type: 'boolean' },
    error: { $ref: '#/components/schemas/Status' },
    response: {
      description: 'The resource (create, update) or Empty (delete), as an Any.',
      oneOf: [
        { $ref: '#/components/schemas/StoragePoolAny' },
        { $ref: '#/components/schemas/VolumeAny' },
        { $ref: '#/components/schemas/SmbUserAny' },
        { $ref: '#/components/schemas/EmptyAny' },
      ],
    },
  },
  // done=true carries exactly one of error/response; done=false neither.
  oneOf: [
    { title: 'running', properties: { done: { type: 'boolean', enum: [false] }, error: { not: {} }, response: { not: {} } } },
    { title: 'failed', properties: { done: { type: 'boolean', enum: [true] }, error: {}, response: { not: {} } }, required: ['error'] },
    { title: 'succeeded', properties: { done: { type: 'boolean', enum: [true] }, error: { not: {} }, response: {} }, required: ['response'] },
  ],
};
schemas.ErrorBody = {
  type: 'object',
  description: 'The Google error envelope (AIP-193).',
  additionalProperties: false,
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      additionalProperties: false,
      required: ['code', 'message', 'status'],
      properties: {
        code: { type: 'integer', description: 'HTTP status code.' },
        message: { type: 'string' },
        status: {
          type: 'string',
          enum: ['INVALID_ARGUMENT', 'FAILED_PRECONDITION', 'OUT_OF_RANGE', 'UNAUTHENTICATED', 'PERMISSION_DENIED', 'NOT_FOUND', 'ALREADY_EXISTS', 'ABORTED', 'RESOURCE_EXHAUSTED', 'CANCELLED', 'INTERNAL', 'UNIMPLEMENTED', 'UNAVAILABLE', 'DEADLINE_EXCEEDED'],
        },
        details: { type: 'array', items: { type: 'object', additionalProperties: true } },
      },
    },
  },
};
function listSchema(plural, item, desc) {
  return {
    type: 'object',
    description: desc,
    additionalProperties: false,
    required: [plural],
    properties: {
      [plural]: { type: 'array', items: { $ref: `#/components/schemas/${item}` } },
      nextPageToken: { type: 'string', description: 'Pass as pageToken to get the next page; absent on the last page.' },
      unreachable: { type: 'array', items: { type: 'string' }, description: 'Locations that could not be reached.' },
    },
  };
}
schemas.ListStoragePoolsResponse = listSchema('storagePools', 'StoragePool', 'A page of storage pools.');
schemas.ListVolumesResponse = listSchema('volumes', 'Volume', 'A page of volumes.');
schemas.ListSmbUsersResponse = listSchema('smbUsers', 'SmbUser', 'A page of SMB users.');
schemas.ListOperationsResponse = listSchema('operations', 'Operation', 'A page of operations.');
schemas.ListProjectsResponse = listSchema('projects', 'Project', 'A page of projects (a project token sees only its own project).');
schemas.ListLocationsResponse = listSchema('locations', 'Location', 'A page of locations.');
schemas.Health = {
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: { status: { type: 'string', enum: ['ok'] } },
};

// ---- parameters ----------------------------------------------------------
const idRule = 'Unique within the parent; letters, digits and hyphens; starts with a letter, ends with a letter or digit; at most 63 characters.';
const idPattern = '^[a-zA-Z]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$';
const parameters = {
  projectId: { name: 'projectId', in: 'path', required: true, description: 'Project ID.', schema: { type: 'string' } },
  locationId: { name: 'locationId', in: 'path', required: true, description: 'Location ID (e.g. us-central1).', schema: { type: 'string' } },
  storagePoolId: { name: 'storagePoolId', in: 'path', required: true, description: 'Storage pool ID.', schema: { type: 'string' } },
  smbUserId: { name: 'smbUserId', in: 'path', required: true, description: 'SMB user name (any case).', schema: { type: 'string' } },
  smbUserIdQuery: { name: 'smbUserId', in: 'query', required: true, description: 'Name of the new user: 1-64 letters, digits, \'.\', \'-\' or \'_\', starting with a letter or digit; unique in the project and location case-insensitively.', schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$', maxLength: 64 } },
  volumeId: { name: 'volumeId', in: 'path', required: true, description: 'Volume ID.', schema: { type: 'string' } },
  operationId: { name: 'operationId', in: 'path', required: true, description: 'Operation ID (the last segment of Operation.name).', schema: { type: 'string' } },
  storagePoolIdQuery: { name: 'storagePoolId', in: 'query', required: true, description: `ID of the new pool. ${idRule}`, schema: { type: 'string', pattern: idPattern, maxLength: 63 } },
  volumeIdQuery: { name: 'volumeId', in: 'query', required: true, description: `ID of the new volume. ${idRule}`, schema: { type: 'string', pattern: idPattern, maxLength: 63 } },
  projectIdQuery: { name: 'projectId', in: 'query', required: true, description: `ID of the new project. ${idRule}`, schema: { type: 'string', pattern: idPattern, maxLength: 63 } },
  locationIdQuery: { name: 'locationId', in: 'query', required: true, description: `ID of the new location. ${idRule}`, schema: { type: 'string', pattern: idPattern, maxLength: 63 } },
  updateMask: {
    name: 'updateMask', in: 'query', required: true,
    description: 'Comma-separated field paths to change (google.protobuf.FieldMask), camelCase or snake_case, nested paths with dots (e.g. `capacityGib,description,labels` or `tiering_policy.cooling_threshold_days`). `*` means every mutable field. A path naming an output-only or immutable field is refused (400). A field in the mask but absent from the body is cleared.',
    schema: { type: 'string' },
  },
  validateOnly: { name: 'validateOnly', in: 'query', required: false, description: 'Check the request and answer with a done operation carrying the would-be resource, without changing anything.', schema: { type: 'boolean', default: false } },
  force: { name: 'force', in: 'query', required: false, description: 'Delete the volume even if it has snapshots (the provider sends it for deletion_policy = FORCE).', schema: { type: 'boolean', default: false } },
  pageSize: { name: 'pageSize', in: 'query', required: false, description: 'Maximum items per page (0 or absent: server default).', schema: { type: 'integer', format: 'int32', minimum: 0 } },
  pageToken: { name: 'pageToken', in: 'query', required: false, description: 'nextPageToken of the previous page; the filter and orderBy must be the same.', schema: { type: 'string' } },
  filter: { name: 'filter', in: 'query', required: false, description: 'Equality filter: `field=value` terms joined with AND, values optionally quoted (e.g. `storagePool="projects/p/locations/l/storagePools/sp1"`).', schema: { type: 'string' } },
  orderBy: { name: 'orderBy', in: 'query', required: false, description: '`name`, `name asc`, `name desc` or empty (unsorted).', schema: { type: 'string', enum: ['', 'name', 'name asc', 'name desc'] } },
};
const ref = (n) => ({ $ref: `#/components/parameters/${n}` });
const listParams = ['pageSize', 'pageToken', 'filter', 'orderBy'].map(ref);

// ---- responses -----------------------------------------------------------
const errs = {
  400: ['BadRequest', 'INVALID_ARGUMENT (bad field, ID, enum, query parameter or JSON), FAILED_PRECONDITION or OUT_OF_RANGE.'],
  401: ['Unauthenticated', 'UNAUTHENTICATED: missing, malformed, wrongly signed or expired bearer token. Carries `WWW-Authenticate: Bearer realm="aquifer"`.'],
  403: ['PermissionDenied', 'PERMISSION_DENIED: the token\'s role or project does not allow this method.'],
  404: ['NotFound', 'NOT_FOUND: the resource, its project or its location does not exist.'],
  409: ['Conflict', 'ALREADY_EXISTS (the ID or shareName is taken) or ABORTED (concurrent change; retry).'],
  413: ['PayloadTooLarge', 'The request body is larger than 1 MiB (status INVALID_ARGUMENT).'],
};
const responses = {};
for (const [code, [name, desc]] of Object.entries(errs)) {
  responses[name] = {
    description: desc,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
  };
  if (code === '401')
    responses[name].headers = { 'WWW-Authenticate': { description: 'Bearer challenge.', schema: { type: 'string' } } };
}
responses.InternalError = {
  description: 'INTERNAL, UNAVAILABLE or another server-side error.',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
};
responses.OperationResponse = {
  description: 'The long-running operation. Poll GET /v1/{operation.name} until `done`.',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Operation' } } },
};
responses.EmptyResponse = {
  description: 'Done: an empty object.',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Empty' } } },
};

function json(schemaRef, description) {
  return { description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${schemaRef}` } } } };
}
function errors(codes) {
  const r = {};
  for (const c of codes) r[c] = { $ref: `#/components/responses/${errs[c][0]}` };
  r.default = { $ref: '#/components/responses/InternalError' };
  return r;
}
function body(schemaName, desc) {
  return {
    required: true,
    description: desc,
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${schemaName}` } } },
  };
}

// ---- paths -----------------------------------------------------------------
const PL = '/v1/projects/{projectId}/locations/{locationId}';
const authed = [{ bearerAuth: [] }];
const paths = {};
function op(p, method, o) {
  paths[p] = paths[p] || {};
  paths[p][method] = o;
}
function pathParams(...names) {
  return names.map(ref);
}

op('/healthz', 'get', {
  operationId: 'healthz', tags: ['Service'], summary: 'Liveness check', security: [],
  description: 'Answered on the socket thread without a token.',
  responses: { 200: json('Health', 'The server is up.') },
});
op('/metrics', 'get', {
  operationId: 'metrics', tags: ['Service'], summary: 'Prometheus metrics (metrics or cluster-admin token)',
  description: 'It names every project\'s volumes, so by default (`metrics_auth = true`) it needs a token of role `metrics` '
    + '(`aquiferd token --role metrics`, which reads nothing else) or a cluster-admin token. With `metrics_auth = false` it is open.',
  security: [{ bearerAuth: [] }, {}],
  responses: Object.assign({
    200: { description: 'Prometheus text exposition format 0.0.4.', content: { 'text/plain': { schema: { type: 'string' } } } },
  }, errors([401, 403])),
});
op('/v1/openapi.yaml', 'get', {
  operationId: 'getOpenApi', tags: ['Service'], summary: 'This OpenAPI document', security: [],
  responses: { 200: { description: 'The spec, as built into the binary.', content: { 'application/yaml': { schema: { type: 'string' } } } } },
});
op('/docs/', 'get', {
  operationId: 'getDocs', tags: ['Service'], summary: 'HTML API reference generated from this document', security: [],
  responses: { 200: { description: 'Standalone HTML page.', content: { 'text/html': { schema: { type: 'string' } } } } },
});

op('/ui/', 'get', {
  operationId: 'getDashboard', tags: ['Service'], summary: 'Built-in dashboard (pools, volumes, nodes, throughput charts)', security: [],
  description: 'Static page embedded in aquiferd. It takes a token from the URL fragment (`/ui/#token=...`) or a sign-in box and polls the API with it.',
  responses: { 200: { description: 'The dashboard page.', content: { 'text/html': { schema: { type: 'string' } } } } },
});
op('/ui/{file}', 'get', {
  operationId: 'getDashboardFile', tags: ['Service'], summary: 'A file of the dashboard (app.js, app.css)', security: [],
  parameters: [{ name: 'file', in: 'path', required: true, schema: { type: 'string', enum: ['index.html', 'app.js', 'app.css'] }, description: 'File name.' }],
  responses: {
    200: { description: 'The file.', content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } }, 'text/html': { schema: { type: 'string' } } } },
    404: { $ref: '#/components/responses/NotFound' },
  },
});

// Projects and locations (Aquifer administration).
op('/v1/projects', 'post', {
  operationId: 'createProject', tags: ['Projects'], summary: 'Create a project (cluster admin)',
  description: 'Synchronous: answers with the project.',
  parameters: [ref('projectIdQuery'), ref('validateOnly')],
  requestBody: Object.assign(body('Project', 'The project (may be empty).'), { required: false }),
  responses: Object.assign({ 200: json('Project', 'The new project.') }, errors([400, 401, 403, 409, 413])),
});
op('/v1/projects', 'get', {
  operationId: 'listProjects', tags: ['Projects'], summary: 'List projects',
  description: 'A cluster admin sees every project; a project token sees its own.',
  parameters: listParams,
  responses: Object.assign({ 200: json('ListProjectsResponse', 'A page of projects.') }, errors([400, 401, 403])),
});
op('/v1/projects/{projectId}', 'get', {
  operationId: 'getProject', tags: ['Projects'], summary: 'Get a project',
  parameters: pathParams('projectId'),
  responses: Object.assign({ 200: json('Project', 'The project.') }, errors([400, 401, 403, 404])),
});
op('/v1/projects/{projectId}', 'delete', {
  operationId: 'deleteProject', tags: ['Projects'], summary: 'Delete a project (cluster admin)',
  description: 'Refused with FAILED_PRECONDITION (400) while the project holds pools or volumes.',
  parameters: pathParams('projectId'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/EmptyResponse' } }, errors([400, 401, 403, 404, 409])),
});
op('/v1/locations', 'post', {
  operationId: 'createLocation', tags: ['Locations'], summary: 'Create a location (cluster admin)',
  parameters: [ref('locationIdQuery'), ref('validateOnly')],
  requestBody: Object.assign(body('Location', 'The location (may be empty).'), { required: false }),
  responses: Object.assign({ 200: json('Location', 'The new location.') }, errors([400, 401, 403, 409, 413])),
});
op('/v1/locations', 'get', {
  operationId: 'listLocationsAdmin', tags: ['Locations'], summary: 'List locations (cluster admin view)',
  parameters: listParams,
  responses: Object.assign({ 200: json('ListLocationsResponse', 'A page of locations.') }, errors([400, 401, 403])),
});
op('/v1/locations/{locationId}', 'get', {
  operationId: 'getLocationAdmin', tags: ['Locations'], summary: 'Get a location (cluster admin view)',
  parameters: pathParams('locationId'),
  responses: Object.assign({ 200: json('Location', 'The location.') }, errors([400, 401, 403, 404])),
});
op('/v1/locations/{locationId}', 'patch', {
  operationId: 'updateLocation', tags: ['Locations'], summary: 'Update a location (cluster admin)',
  description: 'Synchronous: answers with the location. Only the fields named in updateMask change (displayName, labels, coldStore). coldStore.s3.secretAccessKey is never returned.',
  parameters: [...pathParams('locationId'), ref('updateMask'), ref('validateOnly')],
  requestBody: body('Location', 'The location fields to change.'),
  responses: Object.assign({ 200: json('Location', 'The updated location.') }, errors([400, 401, 403, 404, 409, 413])),
});
op('/v1/locations/{locationId}', 'delete', {
  operationId: 'deleteLocation', tags: ['Locations'], summary: 'Delete a location (cluster admin)',
  description: 'Refused with FAILED_PRECONDITION (400) while storage pools exist in it.',
  parameters: pathParams('locationId'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/EmptyResponse' } }, errors([400, 401, 403, 404, 409])),
});
op('/v1/projects/{projectId}/locations', 'get', {
  operationId: 'listLocations', tags: ['Locations'], summary: 'List the locations a project sees',
  parameters: [...pathParams('projectId'), ...listParams],
  responses: Object.assign({ 200: json('ListLocationsResponse', 'A page of locations.') }, errors([400, 401, 403, 404])),
});
op(PL, 'get', {
  operationId: 'getLocation', tags: ['Locations'], summary: 'Get a location',
  parameters: pathParams('projectId', 'locationId'),
  responses: Object.assign({ 200: json('Location', 'The location with its LocationMetadata.') }, errors([400, 401, 403, 404])),
});

// Storage pools.
op(`${PL}/storagePools`, 'post', {
  operationId: 'createStoragePool', tags: ['Storage pools'], summary: 'Create a storage pool',
  description: 'Answers with an Operation whose response is the pool. Output-only fields in the body are ignored; unknown fields, a bad enum value or the throughput math failing are INVALID_ARGUMENT.',
  parameters: [...pathParams('projectId', 'locationId'), ref('storagePoolIdQuery'), ref('validateOnly')],
  requestBody: body('StoragePool', 'The pool.'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 409, 413])),
});
op(`${PL}/storagePools`, 'get', {
  operationId: 'listStoragePools', tags: ['Storage pools'], summary: 'List storage pools',
  parameters: [...pathParams('projectId', 'locationId'), ...listParams],
  responses: Object.assign({ 200: json('ListStoragePoolsResponse', 'A page of pools.') }, errors([400, 401, 403, 404])),
});
op(`${PL}/storagePools/{storagePoolId}`, 'get', {
  operationId: 'getStoragePool', tags: ['Storage pools'], summary: 'Get a storage pool',
  parameters: pathParams('projectId', 'locationId', 'storagePoolId'),
  responses: Object.assign({ 200: json('StoragePool', 'The pool.') }, errors([400, 401, 403, 404])),
});
op(`${PL}/storagePools/{storagePoolId}`, 'patch', {
  operationId: 'updateStoragePool', tags: ['Storage pools'], summary: 'Update a storage pool',
  description: 'Only the fields named in updateMask change. Fields of the body outside the mask are checked but not applied.',
  parameters: [...pathParams('projectId', 'locationId', 'storagePoolId'), ref('updateMask'), ref('validateOnly')],
  requestBody: body('StoragePool', 'The pool fields to change.'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 409, 413])),
});
op(`${PL}/storagePools/{storagePoolId}`, 'delete', {
  operationId: 'deleteStoragePool', tags: ['Storage pools'], summary: 'Delete a storage pool',
  description: 'Refused with FAILED_PRECONDITION (400) while the pool holds volumes. The operation\'s response is Empty.',
  parameters: pathParams('projectId', 'locationId', 'storagePoolId'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 409])),
});

// Volumes.
op(`${PL}/volumes`, 'post', {
  operationId: 'createVolume', tags: ['Volumes'], summary: 'Create a volume',
  description: 'Answers with an Operation whose response is the volume. 409 when the volume ID or the shareName is taken in the location; 404 when the storage pool does not exist.',
  parameters: [...pathParams('projectId', 'locationId'), ref('volumeIdQuery'), ref('validateOnly')],
  requestBody: body('Volume', 'The volume.'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 409, 413])),
});
op(`${PL}/volumes`, 'get', {
  operationId: 'listVolumes', tags: ['Volumes'], summary: 'List volumes',
  parameters: [...pathParams('projectId', 'locationId'), ...listParams],
  responses: Object.assign({ 200: json('ListVolumesResponse', 'A page of volumes.') }, errors([400, 401, 403, 404])),
});
op(`${PL}/volumes/{volumeId}`, 'get', {
  operationId: 'getVolume', tags: ['Volumes'], summary: 'Get a volume',
  parameters: pathParams('projectId', 'locationId', 'volumeId'),
  responses: Object.assign({ 200: json('Volume', 'The volume.') }, errors([400, 401, 403, 404])),
});
op(`${PL}/volumes/{volumeId}`, 'patch', {
  operationId: 'updateVolume', tags: ['Volumes'], summary: 'Update a volume',
  description: 'Only the fields named in updateMask change (camelCase or snake_case, nested paths such as `tiering_policy.cooling_threshold_days`). Changing storagePool moves the volume (PREMIUM <-> EXTREME only). Tiering cannot be removed once set (pause it instead). One change at a time: while an operation on the volume runs (CREATING, UPDATING, DELETING) a PATCH is refused with FAILED_PRECONDITION (400) naming it, as GCNV refuses concurrent mutations of a resource.',
  parameters: [...pathParams('projectId', 'locationId', 'volumeId'), ref('updateMask'), ref('validateOnly')],
  requestBody: body('Volume', 'The volume fields to change.'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 409, 413])),
});
op(`${PL}/volumes/{volumeId}`, 'delete', {
  operationId: 'deleteVolume', tags: ['Volumes'], summary: 'Delete a volume',
  description: 'The operation\'s response is Empty. Refused with FAILED_PRECONDITION (400) while another operation on the volume runs (cancel a running create instead) and while restrictedActions holds DELETE. An accepted delete always completes.',
  parameters: [...pathParams('projectId', 'locationId', 'volumeId'), ref('force')],
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 409])),
});

// SMB users (issue 18).
op(`${PL}/smbUsers`, 'post', {
  operationId: 'createSmbUser', tags: ['SMB users'], summary: 'Create an SMB user',
  description: 'Answers with a done Operation whose response is the user (without the password). 409 when the name is taken in the project and location, in any case. The user reaches the agents with the next intent push.',
  parameters: [...pathParams('projectId', 'locationId'), ref('smbUserIdQuery'), ref('validateOnly')],
  requestBody: body('SmbUser', 'The user; password, uid and gid are required.'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 409, 413])),
});
op(`${PL}/smbUsers`, 'get', {
  operationId: 'listSmbUsers', tags: ['SMB users'], summary: 'List SMB users',
  parameters: [...pathParams('projectId', 'locationId'), ...listParams],
  responses: Object.assign({ 200: json('ListSmbUsersResponse', 'A page of users.') }, errors([400, 401, 403, 404])),
});
op(`${PL}/smbUsers/{smbUserId}`, 'get', {
  operationId: 'getSmbUser', tags: ['SMB users'], summary: 'Get an SMB user',
  parameters: pathParams('projectId', 'locationId', 'smbUserId'),
  responses: Object.assign({ 200: json('SmbUser', 'The user (never the password or its hash).') }, errors([400, 401, 403, 404])),
});
op(`${PL}/smbUsers/{smbUserId}`, 'patch', {
  operationId: 'updateSmbUser', tags: ['SMB users'], summary: 'Update an SMB user',
  description: 'Only the fields named in updateMask change: description, password, uid, gid (the last three cannot be cleared).',
  parameters: [...pathParams('projectId', 'locationId', 'smbUserId'), ref('updateMask'), ref('validateOnly')],
  requestBody: body('SmbUser', 'The fields to change.'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 413])),
});
op(`${PL}/smbUsers/{smbUserId}`, 'delete', {
  operationId: 'deleteSmbUser', tags: ['SMB users'], summary: 'Delete an SMB user',
  description: 'The operation\'s response is Empty; the user leaves the agents with the next intent push.',
  parameters: pathParams('projectId', 'locationId', 'smbUserId'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404])),
});

// Time series (issue 8): in memory, 10 s points, the last hour.
schemas.MetricsPoint = {
  type: 'object',
  description: 'One 10 s slot. Bytes and operations are what happened in the slot (sum them over points for a total).',
  properties: {
    time: { type: 'string', format: 'date-time', description: 'Start of the slot.' },
    readBytes: { type: 'string', format: 'int64', description: 'Bytes read by NFS READ in the slot.' },
    writeBytes: { type: 'string', format: 'int64', description: 'Bytes written by NFS WRITE in the slot.' },
    readOps: { type: 'string', format: 'int64', description: 'READ operations in the slot.' },
    writeOps: { type: 'string', format: 'int64', description: 'WRITE operations in the slot.' },
    latencyP50Ms: { type: 'number', format: 'double', nullable: true, description: 'Median latency of the slot\'s NFS operations (null: none).' },
    latencyP99Ms: { type: 'number', format: 'double', nullable: true, description: '99th percentile latency (null: no operations).' },
    throughputLimitMibps: { type: 'number', format: 'double', description: 'The QoS limit (pools: sum of their volumes; nodes: ceiling).' },
    usedBytes: { type: 'string', format: 'int64', description: 'Bytes used at the end of the slot.' },
    throttledSeconds: { type: 'number', format: 'double', description: 'Time requests waited for QoS in the slot.' },
    tieredBytes: { type: 'string', format: 'int64', description: 'Bytes on the cold tier at the end of the slot (GCNV auto_tiering/tiered_bytes).' },
    coldTierReadByteCount: { type: 'string', format: 'int64', description: 'Bytes read from the cold tier in the slot (GCNV auto_tiering/cold_tier_read_byte_count).' },
    coldTierWriteByteCount: { type: 'string', format: 'int64', description: 'Bytes written to the cold tier in the slot (GCNV auto_tiering/cold_tier_write_byte_count).' },
  },
  required: ['time', 'readBytes', 'writeBytes', 'readOps', 'writeOps', 'throughputLimitMibps', 'usedBytes'],
};
schemas.MetricsResponse = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'The resource the series is of.' },
    windowSeconds: { type: 'integer', format: 'int32' },
    stepSeconds: { type: 'integer', format: 'int32', description: 'Slot length (10).' },
    points: { type: 'array', items: { $ref: '#/components/schemas/MetricsPoint' }, description: 'Oldest first; slots without a report are left out.' },
  },
  required: ['name', 'stepSeconds', 'points'],
};
parameters.window = { name: 'window', in: 'query', required: false, schema: { type: 'string', pattern: '^[0-9]+[smh]?$' }, description: 'How far back: 90s, 15m, 1h (default and most: 1h).' };
op(`${PL}/volumes/{volumeId}/metrics`, 'get', {
  operationId: 'getVolumeMetrics', tags: ['Volumes'], summary: 'Time series of a volume',
  description: 'Fed by the status reports of the volume\'s node; kept in memory by aquiferd (empty after its restart).',
  parameters: [...pathParams('projectId', 'locationId', 'volumeId'), ref('window')],
  responses: Object.assign({ 200: json('MetricsResponse', 'The points.') }, errors([400, 401, 403, 404])),
});
op(`${PL}/storagePools/{storagePoolId}/metrics`, 'get', {
  operationId: 'getStoragePoolMetrics', tags: ['Storage pools'], summary: 'Time series of a pool (the sum of its volumes)',
  parameters: [...pathParams('projectId', 'locationId', 'storagePoolId'), ref('window')],
  responses: Object.assign({ 200: json('MetricsResponse', 'The points.') }, errors([400, 401, 403, 404])),
});

// Operations.
op(`${PL}/operations`, 'get', {
  operationId: 'listOperations', tags: ['Operations'], summary: 'List operations',
  parameters: [...pathParams('projectId', 'locationId'), ...listParams],
  responses: Object.assign({ 200: json('ListOperationsResponse', 'A page of operations.') }, errors([400, 401, 403, 404])),
});
op(`${PL}/operations/{operationId}`, 'get', {
  operationId: 'getOperation', tags: ['Operations'], summary: 'Get (poll) an operation',
  description: 'An unknown operation is NOT_FOUND (404); the Terraform provider keeps polling on 404.',
  parameters: pathParams('projectId', 'locationId', 'operationId'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404])),
});
op(`${PL}/operations/{operationId}`, 'delete', {
  operationId: 'deleteOperation', tags: ['Operations'], summary: 'Delete an operation record',
  parameters: pathParams('projectId', 'locationId', 'operationId'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/EmptyResponse' } }, errors([400, 401, 403, 404, 409])),
});
op(`${PL}/operations/{operationId}:cancel`, 'post', {
  operationId: 'cancelOperation', tags: ['Operations'], summary: 'Cancel an operation',
  description: 'A running volume create is rolled back: the volume is deleted (its node removes what it made) and the operation ends at once with error code 1 (CANCELLED) and requestedCancellation true. Anything else is refused with FAILED_PRECONDITION (400) saying why: a done operation has nothing to cancel; a volume update may already be in effect; an accepted delete always completes; pool operations are done when answered.',
  parameters: pathParams('projectId', 'locationId', 'operationId'),
  requestBody: { required: false, content: { 'application/json': { schema: { $ref: '#/components/schemas/Empty' } } } },
  responses: Object.assign({ 200: { $ref: '#/components/responses/EmptyResponse' } }, errors([400, 401, 403, 404, 409, 413])),
});

// Storage nodes, shelves and the agent-facing calls (Aquifer cluster administration).
const num = (d) => ({ type: 'number', format: 'double', description: d });
const str = (d) => ({ type: 'string', description: d });
schemas.Node = {
  type: 'object',
  description: 'A storage node (one aquifer-agent). Output only: nodes join with a join token.',
  properties: {
    name: str('nodes/{node}'),
    location: str('The location the node serves.'),
    state: { type: 'string', enum: ['READY', 'DOWN', 'DRAINING'], description: 'READY: serves and takes volumes. DRAINING: takes none, its volumes move away (undrain makes it READY). DOWN: silent past --node-down-seconds; its volumes move.' },
    lastSeenTime: { type: 'string', format: 'date-time' },
    createTime: { type: 'string', format: 'date-time' },
    throughputCeilingMibps: num('What placement may put on the node (MiB/s).'),
    writeThroughputCeilingMibps: num('The node\'s write ceiling (MiB/s), for information.'),
    allocatedThroughputMibps: num('Sum of the throughput limits of the volumes placed on it.'),
    overcommitted: { type: 'boolean', description: 'allocated > ceiling (after a failover).' },
    volumeCount: { type: 'integer', format: 'int32' },
    agentVersion: str('aquifer-agent version.'),
    address: str('The agent API URL aquiferd pushes to.'),
    nfsAddress: str('HOST:PORT of its NFS server.'),
    smbAddress: str('HOST:PORT of its SMB server; absent: the node serves no SMB.'),
    generation: { type: 'integer', format: 'int64', description: 'Generation of the node\'s desired state.' },
    appliedGeneration: { type: 'integer', format: 'int64', description: 'Generation the node reported applied.' },
    stateDetails: str('What the state means for its volumes: DRAINING (how many still wait for room, or drained), DOWN (silent since; volumes waiting).'),
  },
  required: ['name', 'location', 'state'],
};
schemas.ListNodesResponse = { type: 'object', properties: { nodes: { type: 'array', items: { $ref: '#/components/schemas/Node' } }, nextPageToken: { type: 'string' } } };
schemas.Shelf = {
  type: 'object',
  description: 'Shared storage of a location, with its throughput ceilings. Every location starts with one shelf of the seed\'s figures.',
  properties: {
    name: { type: 'string', readOnly: true, description: 'shelves/{shelf}' },
    location: str('The location whose nodes share it.'),
    readThroughputMibps: num('Read ceiling (seed: ~140 GB/s).'),
    writeThroughputMibps: num('Write ceiling (seed: 70 GB/s TLC, 35 GB/s QLC).'),
    media: { type: 'string', enum: ['TLC', 'QLC'] },
    backend: { type: 'string', readOnly: true, description: 'directory (today) or nvme-of.' },
    createTime: { type: 'string', format: 'date-time', readOnly: true },
  },
  required: ['location'],
};
schemas.ListShelvesResponse = { type: 'object', properties: { shelves: { type: 'array', items: { $ref: '#/components/schemas/Shelf' } }, nextPageToken: { type: 'string' } } };
schemas.JoinToken = {
  type: 'object',
  properties: {
    token: str('A single-use join token bound to the location (and to node, when given).'), expireTime: { type: 'string', format: 'date-time' }, location: str(''),
    node: str('The only node name the token may join (when the request named one).'),
    installCommand: str('The one line to run on the new node (deploy/install-agent.sh) with aquiferd\'s public URL (--public-url), every word shell-quoted; shelf path to adapt.'),
    caCertificate: str('Under TLS: the cluster CA certificate (PEM), to save on the node as the agent\'s --ca-file.'),
  },
  required: ['token', 'expireTime'],
};
schemas.AgentJoinRequest = {
  type: 'object',
  properties: {
    node: str('Node name (an ID).'), location: str(''), address: str('Agent API URL.'), nfsAddress: str('HOST:PORT.'),
    smbAddress: str('HOST:PORT of its SMB server (--smb-listen); absent: no SMB.'),
    throughputCeilingMibps: num(''), writeThroughputCeilingMibps: num(''), agentVersion: str(''),
    csr: str('Under TLS (required then): a PEM certificate request for the agent\'s own key, at most 8192 bytes.'),
  },
  required: ['node', 'location', 'address', 'nfsAddress'],
};
schemas.AgentJoinResponse = {
  type: 'object',
  properties: {
    nodeToken: str('The node\'s own token, for status reports; it acts only as this node, until the node is deleted.'),
    nodeTokenExpireTime: { type: 'string', format: 'date-time', description: 'When the node token expires (--node-token-ttl); status answers renew it.' },
    pushSecret: str('What aquiferd presents on pushes.'),
    handleKey: str('The location\'s file-handle key (hex).'), generation: { type: 'integer', format: 'int64' },
    certificate: str('Under TLS: the agent\'s certificate (PEM) from the cluster CA, for its csr.'),
    caCertificate: str('Under TLS: the cluster CA certificate (PEM).'),
  },
  required: ['nodeToken', 'pushSecret', 'handleKey'],
};
schemas.AgentStatusRequest = {
  type: 'object',
  properties: {
    appliedGeneration: { type: 'integer', format: 'int64' },
    volumes: {
      type: 'array',
      items: {
        type: 'object',
        description: 'Counters are cumulative since the export appeared on the node; latUsHist[i] counts operations under 2^i microseconds.',
        properties: {
          name: { type: 'string' }, usedBytes: { type: 'integer', format: 'int64' },
          readBytes: { type: 'integer', format: 'int64' }, writeBytes: { type: 'integer', format: 'int64' },
          readOps: { type: 'integer', format: 'int64' }, writeOps: { type: 'integer', format: 'int64' },
          throttledUs: { type: 'integer', format: 'int64' }, hotBytes: { type: 'integer', format: 'int64' },
          coldBytes: { type: 'integer', format: 'int64' }, throughputLimitMibps: { type: 'number', format: 'double' },
          latUsHist: { type: 'array', items: { type: 'integer', format: 'int64' } },
          countersAgeMs: { type: 'integer', format: 'int64', description: 'How long ago the counters began (the export appeared on the node); a volume first seen counts from zero when that was after aquiferd started.' },
        },
      },
    },
    agentVersion: { type: 'string' },
    smbAddress: { type: 'string', description: 'HOST:PORT of its SMB server; "" says it stopped; absent keeps what the node has.' },
    tokenRenewal: { type: 'boolean', description: 'The agent keeps the nodeToken a status answer carries.' },
  },
  required: ['appliedGeneration'],
};
schemas.AgentStatusResponse = {
  type: 'object',
  properties: {
    generation: { type: 'integer', format: 'int64' },
    nodeToken: str('A renewed node token, once the one presented is past half its life: the agent keeps it.'),
    nodeTokenExpireTime: { type: 'string', format: 'date-time' },
  },
};
for (const k of ['Node', 'Shelf', 'JoinToken', 'AgentJoinResponse', 'AgentStatusResponse'])
  schemas[k].additionalProperties = true;

parameters.nodeId = { name: 'nodeId', in: 'path', required: true, schema: { type: 'string' }, description: 'Node name.' };
parameters.shelfId = { name: 'shelfId', in: 'path', required: true, schema: { type: 'string' }, description: 'Shelf ID.' };
parameters.shelfIdQuery = { name: 'shelfId', in: 'query', required: true, schema: { type: 'string' }, description: 'The new shelf\'s ID.' };
parameters.ttl = { name: 'ttl', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 2678400 }, description: 'Lifetime in seconds (default 3600).' };
parameters.joinNode = { name: 'node', in: 'query', required: false, schema: { type: 'string' }, description: 'The only node name the token may join.' };
parameters.force = { name: 'force', in: 'query', required: false, schema: { type: 'boolean' }, description: 'Drain even when some volumes find no other READY node: they stay, served, and move once one has room.' };

op('/v1/nodes', 'get', {
  operationId: 'listNodes', tags: ['Nodes'], summary: 'List storage nodes (cluster admin)',
  parameters: listParams,
  responses: Object.assign({ 200: json('ListNodesResponse', 'A page of nodes.') }, errors([400, 401, 403])),
});
op('/v1/nodes/{nodeId}', 'get', {
  operationId: 'getNode', tags: ['Nodes'], summary: 'Get a storage node (cluster admin)',
  parameters: pathParams('nodeId'),
  responses: Object.assign({ 200: json('Node', 'The node.') }, errors([400, 401, 403, 404])),
});
op('/v1/nodes/{nodeId}', 'delete', {
  operationId: 'deleteNode', tags: ['Nodes'], summary: 'Forget a node that serves nothing (cluster admin)',
  description: 'Refused with FAILED_PRECONDITION (400) while the node is READY or still holds volumes: drain it first.',
  parameters: pathParams('nodeId'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/EmptyResponse' } }, errors([400, 401, 403, 404])),
});
op('/v1/nodes/{nodeId}/metrics', 'get', {
  operationId: 'getNodeMetrics', tags: ['Nodes'], summary: 'Time series of a storage node (cluster admin)',
  description: 'The sum of the volumes the node served in each slot; the limit is the node\'s ceiling.',
  parameters: [...pathParams('nodeId'), ref('window')],
  responses: Object.assign({ 200: json('MetricsResponse', 'The points.') }, errors([400, 401, 403, 404])),
});
op('/v1/nodes/{nodeId}:drain', 'post', {
  operationId: 'drainNode', tags: ['Nodes'], summary: 'Drain a node: DRAINING, and its volumes move within ceilings',
  description: 'Refused with FAILED_PRECONDITION (400), changing nothing, when some volumes find no other READY node with room (draining the last node), unless force=true; '
    + 'then those stay, served, and move by themselves once a node joins or is undrained. A DOWN node is refused (its volumes move by themselves). '
    + 'Each moved volume is served again once its new node applies it (its stateDetails say so meanwhile).',
  parameters: [...pathParams('nodeId'), ref('force')],
  requestBody: { required: false, content: { 'application/json': { schema: { $ref: '#/components/schemas/Empty' } } } },
  responses: Object.assign({ 200: json('Node', 'The node, DRAINING.') }, errors([400, 401, 403, 404])),
});
op('/v1/nodes/{nodeId}:undrain', 'post', {
  operationId: 'undrainNode', tags: ['Nodes'], summary: 'Undrain a node: READY again, it takes new volumes',
  description: 'Volumes that moved away stay where they are; pending moves of other nodes may land on it. FAILED_PRECONDITION (400) unless the node is DRAINING.',
  parameters: pathParams('nodeId'),
  requestBody: { required: false, content: { 'application/json': { schema: { $ref: '#/components/schemas/Empty' } } } },
  responses: Object.assign({ 200: json('Node', 'The node, READY.') }, errors([400, 401, 403, 404])),
});
op('/v1/shelves', 'post', {
  operationId: 'createShelf', tags: ['Nodes'], summary: 'Declare a shelf in a location (cluster admin)',
  parameters: [ref('shelfIdQuery')],
  requestBody: body('Shelf', 'The shelf and its ceilings.'),
  responses: Object.assign({ 200: json('Shelf', 'The shelf.') }, errors([400, 401, 403, 404, 409, 413])),
});
op('/v1/shelves', 'get', {
  operationId: 'listShelves', tags: ['Nodes'], summary: 'List shelves (cluster admin)',
  parameters: listParams,
  responses: Object.assign({ 200: json('ListShelvesResponse', 'A page of shelves.') }, errors([400, 401, 403])),
});
op('/v1/shelves/{shelfId}', 'get', {
  operationId: 'getShelf', tags: ['Nodes'], summary: 'Get a shelf (cluster admin)',
  parameters: pathParams('shelfId'),
  responses: Object.assign({ 200: json('Shelf', 'The shelf.') }, errors([400, 401, 403, 404])),
});
op('/v1/locations/{locationId}:joinToken', 'post', {
  operationId: 'createJoinToken', tags: ['Nodes'], summary: 'A join token for new nodes of a location (cluster admin)',
  description: 'A join token joins one node, once (its id is recorded), in this location only, and only as node when given.',
  parameters: [...pathParams('locationId'), ref('ttl'), ref('joinNode')],
  requestBody: { required: false, content: { 'application/json': { schema: { $ref: '#/components/schemas/Empty' } } } },
  responses: Object.assign({ 200: json('JoinToken', 'The token.') }, errors([400, 401, 403, 404])),
});
op('/v1/agent/join', 'post', {
  operationId: 'agentJoin', tags: ['Agents'], summary: 'A node joins (a single-use join token)',
  description: 'Refused: a node token (403), a join token already used or for another location or node (403), a name already joined (409: drain and delete the node first).',
  requestBody: body('AgentJoinRequest', 'Who the node is and where it serves.'),
  responses: Object.assign({ 200: json('AgentJoinResponse', 'The node\'s credentials.') }, errors([400, 401, 403, 404, 409, 413])),
});
op('/v1/agent/status', 'post', {
  operationId: 'agentStatus', tags: ['Agents'], summary: 'A node reports its applied generation and usage (node token)',
  requestBody: body('AgentStatusRequest', 'The report.'),
  responses: Object.assign({ 200: json('AgentStatusResponse', 'The node\'s desired generation.') }, errors([400, 401, 403, 413])),
});

const spec = {
  openapi: '3.0.3',
  info: {
    title: 'Aquifer API',
    version: 'v1',
    description: [
      'Aquifer is a self-hosted clone of Google Cloud NetApp Volumes. Its REST surface under `/v1/` follows `netapp.googleapis.com/v1`:',
      'camelCase JSON, int64 values as JSON strings, long-running operations for every create, update and delete of pools and volumes,',
      'and the Google error body `{"error":{"code","message","status"}}`.',
      '',
      'Authentication: `Authorization: Bearer <token>` with a token from `aquiferd token` (HS256 JWT).',
      '`/healthz`, `/v1/openapi.yaml`, `/docs/` and the dashboard files under `/ui/` need no token; `/metrics` needs a metrics or cluster-admin token unless `metrics_auth = false`.',
      '',
      'Errors every route may answer: 400 for more than 23 query parameters, invalid JSON or a body on a method that takes none;',
      '405 (status INVALID_ARGUMENT) for a known path with another method; 404 for an unknown path; 413 for a body over 1 MiB;',
      '500/503 for server faults. This server does not rate-limit (no 429).',
      '',
      'The Terraform google provider drives it with `netapp_custom_endpoint = "http://HOST:PORT/v1/"` (see deploy/terraform/).',
      '',
      'Generated by openapi/gen-spec.js from the server\'s field tables; do not edit by hand.',
    ].join('\n'),
    license: { name: 'Proprietary' },
  },
  servers: [{ url: 'http://127.0.0.1:8080', description: 'A local aquiferd (default --listen).' }],
  security: authed,
  tags: [
    { name: 'Storage pools', description: 'google.cloud.netapp.v1 storagePools.' },
    { name: 'Volumes', description: 'google.cloud.netapp.v1 volumes.' },
    { name: 'Operations', description: 'google.longrunning.Operations.' },
    { name: 'SMB users', description: 'Aquifer\'s SMB accounts (NTLMv2), per project and location.' },
    { name: 'Locations', description: 'google.cloud.location and Aquifer\'s cluster-wide locations.' },
    { name: 'Projects', description: 'Aquifer projects.' },
    { name: 'Service', description: 'Health, metrics and this document.' },
    { name: 'Nodes', description: 'Storage nodes, shelves and join tokens (cluster admin).' },
    { name: 'Agents', description: 'Calls aquifer-agent makes (node tokens).' },
  ],
  paths,
  components: {
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A token printed by `aquiferd token --db PATH --role admin|editor|viewer|metrics [--project P]`.' },
    },
    parameters,
    responses,
    schemas,
  },
};

process.stdout.write('# Generated by openapi/gen-spec.js from api/api_*.c; do not edit by hand.\n');
process.stdout.write(yaml.dump(spec, { lineWidth: 120, noRefs: true, sortKeys: false }));
