// openapi/spec-paths.js: the part of gen-spec.js that lists every route
// aquiferd serves (checked against `aquiferd routes` by
// tests/e2e/test_openapi.sh) with its parameters, body and answers.
'use strict';

const { limits, limit, docs } = require('./spec-tables');
const { schemas, parameters, ref, listParams, volumeListParams, responses, json, errors, body } = require('./spec-components');

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
  description: 'Synchronous: answers with the location. Only the fields named in updateMask change (displayName, labels, coldStore; serviceAddresses is set on create only). coldStore.s3.secretAccessKey is never returned.',
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
  description: 'Answers with an Operation whose response is the volume. 409 when the volume ID or the shareName is taken in the location; 404 when the storage pool does not exist. RESOURCE_EXHAUSTED (429, nothing stored) when the location\'s shelves (their capacityGib summed, when every shelf states one) cannot hold capacityGib beside what the location\'s volumes in every pool take; the message names the shelves and what is free.',
  parameters: [...pathParams('projectId', 'locationId'), ref('volumeIdQuery'), ref('validateOnly')],
  requestBody: body('Volume', 'The volume.'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 409, 413, 429])),
});
op(`${PL}/volumes`, 'get', {
  operationId: 'listVolumes', tags: ['Volumes'], summary: 'List volumes',
  parameters: [...pathParams('projectId', 'locationId'), ...volumeListParams],
  responses: Object.assign({ 200: json('ListVolumesResponse', 'A page of volumes.') }, errors([400, 401, 403, 404])),
});
op(`${PL}/volumes/{volumeId}`, 'get', {
  operationId: 'getVolume', tags: ['Volumes'], summary: 'Get a volume',
  parameters: pathParams('projectId', 'locationId', 'volumeId'),
  responses: Object.assign({ 200: json('Volume', 'The volume.') }, errors([400, 401, 403, 404])),
});
op(`${PL}/volumes/{volumeId}`, 'patch', {
  operationId: 'updateVolume', tags: ['Volumes'], summary: 'Update a volume',
  description: 'Only the fields named in updateMask change (camelCase or snake_case, nested paths such as `tiering_policy.cooling_threshold_days`). Changing storagePool moves the volume (PREMIUM <-> EXTREME only). Tiering cannot be removed once set (pause it instead). One change at a time: while an operation on the volume runs (CREATING, UPDATING, DELETING) a PATCH is refused with FAILED_PRECONDITION (400) naming it, as GCNV refuses concurrent mutations of a resource. Growing capacityGib past what the location\'s shelves have free is refused with RESOURCE_EXHAUSTED (429) naming them, as a create is; a shrink is never refused for the shelves, but one below the volume\'s usedGib is refused with FAILED_PRECONDITION (400). On an NVMe-oF shelf a growth grows the volume\'s namespace and file system online; when that fails the volume serves on at its old size and stateDetails says why.',
  parameters: [...pathParams('projectId', 'locationId', 'volumeId'), ref('updateMask'), ref('validateOnly')],
  requestBody: body('Volume', 'The volume fields to change.'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 409, 413, 429])),
});
op(`${PL}/volumes/{volumeId}`, 'delete', {
  operationId: 'deleteVolume', tags: ['Volumes'], summary: 'Delete a volume',
  description: 'The operation\'s response is Empty. Refused with FAILED_PRECONDITION (400) while another operation on the volume runs (cancel a running create instead) and while restrictedActions holds DELETE. An accepted delete always completes.',
  parameters: [...pathParams('projectId', 'locationId', 'volumeId'), ref('force')],
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 409])),
});

// Snapshots (issue 20).
schemas.RevertVolumeRequest = {
  type: 'object', additionalProperties: false, required: ['snapshotId'],
  description: 'google.cloud.netapp.v1.RevertVolumeRequest (the name is the path).',
  properties: { snapshotId: { type: 'string', description: 'ID of a READY snapshot of the volume.' } },
};
op(`${PL}/volumes/{volumeId}:revert`, 'post', {
  operationId: 'revertVolume', tags: ['Volumes'], summary: 'Revert a volume to a snapshot',
  description: 'The volume becomes the snapshot\'s content, and every newer snapshot is deleted (GCNV: changes made after the snapshot was created are undone, which includes newer snapshots). The volume is RESTORING until its node has reverted it; the operation\'s response is the volume. Refused with FAILED_PRECONDITION (400) unless the volume is READY and the snapshot READY, or when a newer snapshot is being created or is the source of a clone.',
  parameters: pathParams('projectId', 'locationId', 'volumeId'),
  requestBody: body('RevertVolumeRequest', 'The snapshot to revert to.'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 413])),
});
// RestoreBackupFiles (issue 21).
schemas.RestoreBackupFilesRequest = {
  type: 'object', additionalProperties: false, required: ['backup', 'fileList'],
  description: 'google.cloud.netapp.v1.RestoreBackupFilesRequest (the name is the path).',
  properties: {
    backup: { type: 'string', description: 'Full name of a READY backup in the volume\'s project and location: projects/P/locations/L/backupVaults/V/backups/B.' },
    fileList: { type: 'array', minItems: 1, maxItems: 16, items: { type: 'string', maxLength: 511 }, description: 'Absolute paths of files or folders as in the backed-up volume ("/dir/file"); no ".", ".." or empty component, not "/".' },
    restoreDestinationPath: { type: 'string', maxLength: 511, description: 'An existing folder of the volume (absolute; default "/"): each path is restored as <it>/<the path\'s last component>, replacing a file of that name.' },
  },
};
op(`${PL}/volumes/{volumeId}:restore`, 'post', {
  operationId: 'restoreBackupFiles', tags: ['Volumes'], summary: 'Restore files from a backup into the volume',
  description: 'The node serving the volume restores each path of fileList from the backup into restoreDestinationPath of the live volume, verifying every chunk. The operation (verb restore) ends with the volume, or with NOT_FOUND naming the first path the backup does not hold. A path or destination that would leave the volume, an unknown field or more than 16 paths is INVALID_ARGUMENT naming it; FAILED_PRECONDITION (400) unless the volume is READY and served and the backup READY and not in use by another restore. Meanwhile neither the volume nor the backup is deleted.',
  parameters: pathParams('projectId', 'locationId', 'volumeId'),
  requestBody: body('RestoreBackupFilesRequest', 'The backup and the paths to restore.'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 413])),
});
op(`${PL}/volumes/{volumeId}/snapshots`, 'post', {
  operationId: 'createSnapshot', tags: ['Snapshots'], summary: 'Create a snapshot',
  description: 'Answers with an Operation that is done when the volume\'s node has made the snapshot (its response the snapshot) or could not (its error the node\'s reason; the snapshot shows ERROR). 255 snapshots per volume: the 256th is refused with RESOURCE_EXHAUSTED (429). 409 when the ID is taken in the volume. Refused with FAILED_PRECONDITION (400) unless the volume is READY or UPDATING.',
  parameters: [...pathParams('projectId', 'locationId', 'volumeId'), ref('snapshotIdQuery'), ref('validateOnly')],
  requestBody: body('Snapshot', 'The snapshot (description, labels).'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 409, 413, 429])),
});
op(`${PL}/volumes/{volumeId}/snapshots`, 'get', {
  operationId: 'listSnapshots', tags: ['Snapshots'], summary: 'List the snapshots of a volume',
  parameters: [...pathParams('projectId', 'locationId', 'volumeId'), ...listParams],
  responses: Object.assign({ 200: json('ListSnapshotsResponse', 'A page of snapshots.') }, errors([400, 401, 403, 404])),
});
op(`${PL}/volumes/{volumeId}/snapshots/{snapshotId}`, 'get', {
  operationId: 'getSnapshot', tags: ['Snapshots'], summary: 'Get a snapshot',
  parameters: pathParams('projectId', 'locationId', 'volumeId', 'snapshotId'),
  responses: Object.assign({ 200: json('Snapshot', 'The snapshot.') }, errors([400, 401, 403, 404])),
});
op(`${PL}/volumes/{volumeId}/snapshots/{snapshotId}`, 'patch', {
  operationId: 'updateSnapshot', tags: ['Snapshots'], summary: 'Update a snapshot',
  description: 'description and labels; the operation is done when answered.',
  parameters: [...pathParams('projectId', 'locationId', 'volumeId', 'snapshotId'), ref('updateMask'), ref('validateOnly')],
  requestBody: body('Snapshot', 'The snapshot fields to change.'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 413])),
});
op(`${PL}/volumes/{volumeId}/snapshots/{snapshotId}`, 'delete', {
  operationId: 'deleteSnapshot', tags: ['Snapshots'], summary: 'Delete a snapshot',
  description: 'The operation is done (response Empty) when the volume\'s node no longer has the snapshot. Refused with FAILED_PRECONDITION (400) while the snapshot is being created or deleted, and while a clone volume made from it exists (as a FlexClone\'s parent snapshot, it backs the clone; Aquifer has no clone split).',
  parameters: pathParams('projectId', 'locationId', 'volumeId', 'snapshotId'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404])),
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

// Backup vaults and policies (issue 21).
for (const [coll, Schema, idp, what, createDesc, delDesc] of [
  ['backupVaults', 'BackupVault', 'backupVaultId', 'backup vault',
    'Answers with a done Operation whose response is the vault. The vault gets a random 32-byte key, kept by aquiferd and never returned, and a store: the folder .backups/<uid> on the shelf of its location (of backupRegion for CROSS_REGION), outside every export. An empty body {} makes an IN_REGION vault. 409 when the ID is taken.',
    'The operation\'s response is Empty. Refused with FAILED_PRECONDITION (400) while the vault holds backups.'],
  ['backupPolicies', 'BackupPolicy', 'backupPolicyId', 'backup policy',
    'Answers with a done Operation whose response is the policy. 409 when the ID is taken.',
    'The operation\'s response is Empty.'],
]) {
  const plural = Schema === 'BackupPolicy' ? 'BackupPolicies' : `${Schema}s`;
  op(`${PL}/${coll}`, 'post', {
    operationId: `create${Schema}`, tags: ['Backups'], summary: `Create a ${what}`,
    description: createDesc,
    parameters: [...pathParams('projectId', 'locationId'), ref(`${idp}Query`), ref('validateOnly')],
    requestBody: body(Schema, `The ${what}.`),
    responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 409, 413])),
  });
  op(`${PL}/${coll}`, 'get', {
    operationId: `list${plural}`, tags: ['Backups'], summary: `List ${what === 'backup policy' ? 'backup policies' : 'backup vaults'}`,
    parameters: [...pathParams('projectId', 'locationId'), ...listParams],
    responses: Object.assign({ 200: json(`List${plural}Response`, 'A page.') }, errors([400, 401, 403, 404])),
  });
  op(`${PL}/${coll}/{${idp}}`, 'get', {
    operationId: `get${Schema}`, tags: ['Backups'], summary: `Get a ${what}`,
    parameters: pathParams('projectId', 'locationId', idp),
    responses: Object.assign({ 200: json(Schema, `The ${what}.`) }, errors([400, 401, 403, 404])),
  });
  op(`${PL}/${coll}/{${idp}}`, 'patch', {
    operationId: `update${Schema}`, tags: ['Backups'], summary: `Update a ${what}`,
    description: 'Only the fields named in updateMask change; the operation is done when answered.',
    parameters: [...pathParams('projectId', 'locationId', idp), ref('updateMask'), ref('validateOnly')],
    requestBody: body(Schema, 'The fields to change.'),
    responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 413])),
  });
  op(`${PL}/${coll}/{${idp}}`, 'delete', {
    operationId: `delete${Schema}`, tags: ['Backups'], summary: `Delete a ${what}`,
    description: delDesc,
    parameters: pathParams('projectId', 'locationId', idp),
    responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404])),
  });
}

// Backups (issue 21): srv_backup.h.
const BK = `${PL}/backupVaults/{backupVaultId}/backups`;
op(BK, 'post', {
  operationId: 'createBackup', tags: ['Backups'], summary: 'Back up a volume',
  description: 'Answers with an Operation that is done when the node serving sourceVolume has uploaded the backup (its response the READY backup) or could not (its error says the backup is in state ERROR, and why). Refused by name (400/404, nothing stored): a sourceVolume of another project or location, missing, not READY or served by no node; a sourceSnapshot of another volume, missing or not READY; a CROSS_REGION vault (not supported yet). FAILED_PRECONDITION (400) while another backup of the volume runs. 409 when the ID is taken in the vault.',
  parameters: [...pathParams('projectId', 'locationId', 'backupVaultId'), ref('backupIdQuery'), ref('validateOnly')],
  requestBody: body('Backup', 'sourceVolume (required), sourceSnapshot, description, labels.'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 409, 413])),
});
op(BK, 'get', {
  operationId: 'listBackups', tags: ['Backups'], summary: 'List the backups of a vault',
  parameters: [...pathParams('projectId', 'locationId', 'backupVaultId'), ...listParams],
  responses: Object.assign({ 200: json('ListBackupsResponse', 'A page of backups.') }, errors([400, 401, 403, 404])),
});
op(`${BK}/{backupId}`, 'get', {
  operationId: 'getBackup', tags: ['Backups'], summary: 'Get a backup',
  parameters: pathParams('projectId', 'locationId', 'backupVaultId', 'backupId'),
  responses: Object.assign({ 200: json('Backup', 'The backup.') }, errors([400, 401, 403, 404])),
});
op(`${BK}/{backupId}`, 'patch', {
  operationId: 'updateBackup', tags: ['Backups'], summary: 'Update a backup',
  description: 'description and labels (updateMask); the operation is done when answered.',
  parameters: [...pathParams('projectId', 'locationId', 'backupVaultId', 'backupId'), ref('updateMask'), ref('validateOnly')],
  requestBody: body('Backup', 'The fields to change.'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/OperationResponse' } }, errors([400, 401, 403, 404, 413])),
});
op(`${BK}/{backupId}`, 'delete', {
  operationId: 'deleteBackup', tags: ['Backups'], summary: 'Delete a backup',
  description: 'Answers with an Operation done when the node has deleted the backup from the vault (its response Empty); every other backup stays restorable. Refused with FAILED_PRECONDITION (400) before enforcedRetentionEndTime (the message gives it) and while the backup is CREATING or UPLOADING.',
  parameters: pathParams('projectId', 'locationId', 'backupVaultId', 'backupId'),
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
    partial: { type: 'boolean', description: 'Present and true on the slot still filling (by aquiferd\'s clock): its figures are not all in yet, so it is not a drop.' },
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
    serviceAddresses: { type: 'array', items: { type: 'string' }, description: 'The service addresses the node reports it holds on its --service-interface (issue 25).' },
    generation: { type: 'integer', format: 'int64', description: 'Generation of the node\'s desired state.' },
    appliedGeneration: { type: 'integer', format: 'int64', description: 'Generation the node reported applied.' },
    stateDetails: str('What the state means for its volumes: DRAINING (how many still wait for room, or drained), DOWN (silent since; volumes waiting).'),
  },
  required: ['name', 'location', 'state'],
};
schemas.ListNodesResponse = { type: 'object', properties: { nodes: { type: 'array', items: { $ref: '#/components/schemas/Node' } }, nextPageToken: { type: 'string' } } };
schemas.Shelf.description = 'Shared storage of a location (cluster admin): what it is (backend; for nvmeof the transport, portal addresses and subsystem NQN, the same rules as the agent\'s --shelf nvmeof:...), what it holds and the throughput ceilings placement counts (the sum of a location\'s readThroughputMibps bounds what its volumes are promised). Every location starts with one directory shelf of the seed\'s figures. A shelf holds no secret: in-band authentication (DH-HMAC-CHAP) is not offered and an unknown field is refused by name.';
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
    serviceAddresses: { type: 'array', maxItems: 4096, items: { type: 'string' }, description: 'The IPv4 service addresses the agent holds (absent or empty: none).' },
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
  description: 'Synchronous: answers with the shelf. 400 naming the field for bad input (an nvmeof shelf without transport, nqn or addresses; transport, nqn or addresses on a directory shelf; a ceiling not above 0), 404 when the location does not exist, 409 when the ID is taken.',
  parameters: [ref('shelfIdQuery'), ref('validateOnly')],
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
op('/v1/shelves/{shelfId}', 'patch', {
  operationId: 'updateShelf', tags: ['Nodes'], summary: 'Update a shelf (cluster admin)',
  description: 'Synchronous: answers with the shelf. Only the fields named in updateMask change (addresses, capacityGib, media, readThroughputMibps, writeThroughputMibps; the rest is immutable); the result is checked whole. '
    + 'A media change without writeThroughputMibps derives the write ceiling again. FAILED_PRECONDITION (400) when the location\'s shelves would read less than its volumes are promised.',
  parameters: [...pathParams('shelfId'), ref('updateMask'), ref('validateOnly')],
  requestBody: body('Shelf', 'The fields updateMask names.'),
  responses: Object.assign({ 200: json('Shelf', 'The shelf.') }, errors([400, 401, 403, 404, 413])),
});
op('/v1/shelves/{shelfId}', 'delete', {
  operationId: 'deleteShelf', tags: ['Nodes'], summary: 'Delete a shelf (cluster admin)',
  description: 'Refused with FAILED_PRECONDITION (400), changing nothing, while it is in use: the last shelf of a location that holds volumes, or one without which the location\'s shelves would read less than its volumes are promised.',
  parameters: pathParams('shelfId'),
  responses: Object.assign({ 200: { $ref: '#/components/responses/EmptyResponse' } }, errors([400, 401, 403, 404])),
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

module.exports = { authed, paths };
