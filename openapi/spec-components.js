// openapi/spec-components.js: the part of gen-spec.js that builds
// components: the schemas (from the field tables and by hand), the shared
// query and path parameters, the error answers, and the helpers the paths
// use to name a JSON answer, its errors and a request body.
'use strict';

const { enums, schemaName, objectSchema } = require('./spec-tables');

// ---- components ----------------------------------------------------------
const T = {
  pool: 'type.googleapis.com/google.cloud.netapp.v1.StoragePool',
  volume: 'type.googleapis.com/google.cloud.netapp.v1.Volume',
  smbUser: 'type.googleapis.com/aquifer.v1.SmbUser',
  snapshot: 'type.googleapis.com/google.cloud.netapp.v1.Snapshot',
  backupVault: 'type.googleapis.com/google.cloud.netapp.v1.BackupVault',
  backupPolicy: 'type.googleapis.com/google.cloud.netapp.v1.BackupPolicy',
  backup: 'type.googleapis.com/google.cloud.netapp.v1.Backup',
  empty: 'type.googleapis.com/google.protobuf.Empty',
  opmeta: 'type.googleapis.com/google.cloud.netapp.v1.OperationMetadata',
  locmeta: 'type.googleapis.com/google.cloud.netapp.v1.LocationMetadata',
};

const schemas = {};
for (const t of Object.keys(schemaName)) schemas[schemaName[t]] = objectSchema(t);
schemas.StoragePool.description = 'google.cloud.netapp.v1.StoragePool. JSON names are camelCase; int64 values are JSON strings. Requests may use proto3 JSON as well: the original proto field names (`capacity_gib`), enum numbers (`1`), an enum\'s `*_UNSPECIFIED` value on an optional field (as if it were left out; refused on a required one or in a list), and int64/int32/double as a number or a string. Output-only fields in a request are ignored; unknown fields are refused (400).';
schemas.Volume.description = 'google.cloud.netapp.v1.Volume. JSON names are camelCase; int64 values are JSON strings. Requests may use proto3 JSON as well: the original proto field names (`capacity_gib`), enum numbers (`1`), an enum\'s `*_UNSPECIFIED` value on an optional field (as if it were left out; refused on a required one or in a list), and int64/int32/double as a number or a string. Output-only fields in a request are ignored; unknown fields are refused (400).';
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
schemas.Snapshot.description = 'google.cloud.netapp.v1.Snapshot.';
schemas.SnapshotAny = anyOf('Snapshot', T.snapshot);
schemas.BackupVault.description = 'google.cloud.netapp.v1.BackupVault. Its store is a folder on the shelf of its location (backupRegion for CROSS_REGION), outside every export; its key is never returned.';
schemas.BackupPolicy.description = 'google.cloud.netapp.v1.BackupPolicy.';
schemas.BackupVaultAny = anyOf('BackupVault', T.backupVault);
schemas.BackupPolicyAny = anyOf('BackupPolicy', T.backupPolicy);
schemas.Backup.description = 'google.cloud.netapp.v1.Backup: an encrypted, incremental-forever copy of a volume (or of one of its snapshots) in a backup vault.';
schemas.BackupAny = anyOf('Backup', T.backup);
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
    verb: { type: 'string', readOnly: true, enum: ['create', 'update', 'delete', 'revert', 'restore'] },
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
    details: { type: 'array', description: 'A google.rpc.ErrorInfo (`reason`, `domain` netapp.googleapis.com).', items: { type: 'object', additionalProperties: true } },
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
        { $ref: '#/components/schemas/SnapshotAny' },
        { $ref: '#/components/schemas/BackupVaultAny' },
        { $ref: '#/components/schemas/BackupPolicyAny' },
        { $ref: '#/components/schemas/BackupAny' },
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
        details: { type: 'array', description: 'Always a google.rpc.ErrorInfo (`@type` type.googleapis.com/google.rpc.ErrorInfo, `reason` such as RESOURCE_NOT_FOUND or INVALID_ARGUMENT, `domain` netapp.googleapis.com); for an INVALID_ARGUMENT about one request field also a google.rpc.BadRequest whose `fieldViolations[0].field` is its path (e.g. `volume.exportPolicy.rules[0].accessType`, `updateMask`).', items: { type: 'object', additionalProperties: true } },
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
schemas.ListBackupVaultsResponse = listSchema('backupVaults', 'BackupVault', 'A page of backup vaults.');
schemas.ListBackupsResponse = listSchema('backups', 'Backup', 'A page of backups.');
schemas.ListBackupPoliciesResponse = listSchema('backupPolicies', 'BackupPolicy', 'A page of backup policies.');
schemas.ListSnapshotsResponse = listSchema('snapshots', 'Snapshot', 'A page of snapshots.');
schemas.ListOperationsResponse = listSchema('operations', 'Operation', 'A page of operations.');
schemas.ListProjectsResponse = listSchema('projects', 'Project', 'A page of projects (a project token sees only its own project).');
schemas.ListLocationsResponse = listSchema('locations', 'Location', 'A page of locations.');
schemas.Health = {
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: {
    status: { type: 'string', enum: ['ok'] },
    leader: { type: 'boolean', description: 'This replica holds the leader lease now: it runs the reconciler, node liveness and the snapshot scheduler (every replica serves the whole API).' },
    leaderEpoch: { type: 'integer', format: 'int64', description: 'The leader lease\'s epoch (its fencing token) as this replica last saw it; one more at every change of leader.' },
    leaderUrl: { type: 'string', description: 'The public URL of the replica holding the lease, as this replica last saw it.' },
  },
};

// ---- parameters ----------------------------------------------------------
const idRule = 'Unique within the parent; lowercase letters, digits and hyphens; starts with a letter, ends with a letter or digit; at most 63 characters (GCNV\'s rule).';
const idPattern = '^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$';
const parameters = {
  projectId: { name: 'projectId', in: 'path', required: true, description: 'Project ID.', schema: { type: 'string' } },
  locationId: { name: 'locationId', in: 'path', required: true, description: 'Location ID (e.g. us-central1).', schema: { type: 'string' } },
  storagePoolId: { name: 'storagePoolId', in: 'path', required: true, description: 'Storage pool ID.', schema: { type: 'string' } },
  smbUserId: { name: 'smbUserId', in: 'path', required: true, description: 'SMB user name (any case).', schema: { type: 'string' } },
  smbUserIdQuery: { name: 'smbUserId', in: 'query', required: true, description: 'Name of the new user: 1-64 letters, digits, \'.\', \'-\' or \'_\', starting with a letter or digit; unique in the project and location case-insensitively.', schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$', maxLength: 64 } },
  volumeId: { name: 'volumeId', in: 'path', required: true, description: 'Volume ID.', schema: { type: 'string' } },
  snapshotId: { name: 'snapshotId', in: 'path', required: true, description: 'Snapshot ID.', schema: { type: 'string' } },
  operationId: { name: 'operationId', in: 'path', required: true, description: 'Operation ID (the last segment of Operation.name).', schema: { type: 'string' } },
  storagePoolIdQuery: { name: 'storagePoolId', in: 'query', required: true, description: `ID of the new pool. ${idRule}`, schema: { type: 'string', pattern: idPattern, maxLength: 63 } },
  backupVaultId: { name: 'backupVaultId', in: 'path', required: true, description: 'Backup vault ID.', schema: { type: 'string' } },
  backupId: { name: 'backupId', in: 'path', required: true, description: 'Backup ID.', schema: { type: 'string' } },
  backupIdQuery: { name: 'backupId', in: 'query', required: true, description: `ID of the new backup, unique within the vault. ${idRule}`, schema: { type: 'string', pattern: idPattern, maxLength: 63 } },
  backupPolicyId: { name: 'backupPolicyId', in: 'path', required: true, description: 'Backup policy ID.', schema: { type: 'string' } },
  backupVaultIdQuery: { name: 'backupVaultId', in: 'query', required: true, description: `ID of the new vault. ${idRule}`, schema: { type: 'string', pattern: idPattern, maxLength: 63 } },
  backupPolicyIdQuery: { name: 'backupPolicyId', in: 'query', required: true, description: `ID of the new policy. ${idRule}`, schema: { type: 'string', pattern: idPattern, maxLength: 63 } },
  snapshotIdQuery: { name: 'snapshotId', in: 'query', required: true, description: `ID of the new snapshot, unique within the volume. ${idRule}`, schema: { type: 'string', pattern: idPattern, maxLength: 63 } },
  volumeIdQuery: { name: 'volumeId', in: 'query', required: true, description: `ID of the new volume. ${idRule}`, schema: { type: 'string', pattern: idPattern, maxLength: 63 } },
  projectIdQuery: { name: 'projectId', in: 'query', required: true, description: `ID of the new project. ${idRule}`, schema: { type: 'string', pattern: idPattern, maxLength: 63 } },
  locationIdQuery: { name: 'locationId', in: 'query', required: true, description: `ID of the new location. ${idRule}`, schema: { type: 'string', pattern: idPattern, maxLength: 63 } },
  updateMask: {
    name: 'updateMask', in: 'query', required: true,
    description: 'Comma-separated field paths to change (google.protobuf.FieldMask), camelCase or snake_case, nested paths with dots (e.g. `capacityGib,description,labels` or `tiering_policy.cooling_threshold_days`). `*` means every mutable field. A path naming an output-only or immutable field is refused (400). A field in the mask but absent from the body is cleared.',
    schema: { type: 'string' },
  },
  validateOnly: { name: 'validateOnly', in: 'query', required: false, description: 'Check the request and answer with a done operation carrying the would-be resource, without changing anything.', schema: { type: 'boolean', default: false } },
  force: { name: 'force', in: 'query', required: false, description: 'Delete the volume even if it has snapshots; they go with it (the provider sends it for deletion_policy = FORCE). Without it a volume with snapshots is refused (FAILED_PRECONDITION).', schema: { type: 'boolean', default: false } },
  pageSize: { name: 'pageSize', in: 'query', required: false, description: 'Maximum items per page (0 or absent: server default).', schema: { type: 'integer', format: 'int32', minimum: 0 } },
  pageToken: { name: 'pageToken', in: 'query', required: false, description: 'nextPageToken of the previous page; the filter and orderBy must be the same.', schema: { type: 'string' } },
  filter: { name: 'filter', in: 'query', required: false, description: 'Equality filter: `field=value` terms joined with AND, values optionally quoted (e.g. `storagePool="sp1"`; a volume\'s storagePool matches as it was sent, ID or full name).', schema: { type: 'string' } },
  orderBy: { name: 'orderBy', in: 'query', required: false, description: '`name`, `name asc`, `name desc` or empty (unsorted).', schema: { type: 'string', enum: ['', 'name', 'name asc', 'name desc'] } },
  volumeOrderBy: { name: 'orderBy', in: 'query', required: false, description: 'A hint, as in GCNV: `name desc` lists in reverse name order; any other value lists by name (never a 400).', schema: { type: 'string' } },
};
const ref = (n) => ({ $ref: `#/components/parameters/${n}` });
const listParams = ['pageSize', 'pageToken', 'filter', 'orderBy'].map(ref);
const volumeListParams = ['pageSize', 'pageToken', 'filter', 'volumeOrderBy'].map(ref);

// ---- responses -----------------------------------------------------------
const errs = {
  400: ['BadRequest', 'INVALID_ARGUMENT (bad field, ID, enum, query parameter or JSON), FAILED_PRECONDITION or OUT_OF_RANGE.'],
  401: ['Unauthenticated', 'UNAUTHENTICATED: missing, malformed, wrongly signed or expired bearer token. Carries `WWW-Authenticate: Bearer realm="aquifer"`.'],
  403: ['PermissionDenied', 'PERMISSION_DENIED: the token\'s role or project does not allow this method.'],
  404: ['NotFound', 'NOT_FOUND: the resource, its project or its location does not exist.'],
  409: ['Conflict', 'ALREADY_EXISTS (the ID or shareName is taken) or ABORTED (concurrent change; retry).'],
  413: ['PayloadTooLarge', 'The request body is larger than 1 MiB (status INVALID_ARGUMENT).'],
  429: ['ResourceExhausted', 'RESOURCE_EXHAUSTED: a per-resource limit is reached (255 snapshots per volume).'],
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

module.exports = { schemas, parameters, ref, listParams, volumeListParams, responses, json, errors, body };
