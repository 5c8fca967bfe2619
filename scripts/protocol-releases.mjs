// What Kafka's releases after the 4.0.0 schema snapshot changed, applied by generate-protocol.mjs
// to the schemas it reads. This is the one place the generator's input is amended: a range the
// release widened, a field a later version added, an error code a later release defined, a record
// schema Kafka keeps outside the snapshot's folders. Each entry names the release and KIP.

/** A field in Kafka's JSON schema form (as the snapshot's files write them). */
const field = (name, type, versions, extra = {}) => ({ name, type, versions, ...extra });

/**
 * Kafka 4.0.0: ranges the release widened over the snapshot without adding a field (KIP-890 part
 * 2: Produce v12 and TxnOffsetCommit v5 are v11 and v4 again; they tell the broker to add the
 * partition, or the group's offsets partition, to the transaction itself; EndTxn v5 is stable).
 */
const RELEASED_4_0 = {
  ProduceRequest: { validVersions: '0-12' }, ProduceResponse: { validVersions: '0-12' },
  TxnOffsetCommitRequest: { validVersions: '0-5' }, TxnOffsetCommitResponse: { validVersions: '0-5' },
  EndTxnRequest: { stable: true },
};

/**
 * Kafka 4.1 (KIP-932, share groups): the share APIs' v1 is their first stable version. v0 (4.0's
 * early access) is kept so a 4.0 client is still answered. ShareFetch v1 takes MaxRecords and
 * BatchSize and no longer PartitionMaxBytes, and its answer says how long the records are locked;
 * the other share APIs' v1 bodies are v0's. The share-coordinator RPCs (83-87) stay at v0, stable.
 */
const RELEASED_4_1 = {
  ShareGroupHeartbeatRequest: { validVersions: '0-1', stable: true }, ShareGroupHeartbeatResponse: { validVersions: '0-1' },
  ShareGroupDescribeRequest: { validVersions: '0-1', stable: true }, ShareGroupDescribeResponse: { validVersions: '0-1' },
  ShareAcknowledgeRequest: { validVersions: '0-1', stable: true }, ShareAcknowledgeResponse: { validVersions: '0-1' },
  ShareFetchRequest: {
    validVersions: '0-1', stable: true,
    fieldVersions: { 'Topics.Partitions.PartitionMaxBytes': '0' },
    addAfter: { MaxBytes: [field('MaxRecords', 'int32', '1+'), field('BatchSize', 'int32', '1+')] },
  },
  ShareFetchResponse: { validVersions: '0-1', addAfter: { ErrorMessage: [field('AcquisitionLockTimeoutMs', 'int32', '1+')] } },
  InitializeShareGroupStateRequest: { stable: true }, ReadShareGroupStateRequest: { stable: true }, WriteShareGroupStateRequest: { stable: true },
  DeleteShareGroupStateRequest: { stable: true }, ReadShareGroupStateSummaryRequest: { stable: true },
};

/** Error codes Kafka 4.1 defined after the snapshot's table (librdkafka 2.15 knows them all). */
export const ADDED_ERROR_CODES = [
  { code: 129, name: 'REBOOTSTRAP_REQUIRED', retriable: false },
  { code: 130, name: 'STREAMS_INVALID_TOPOLOGY', retriable: false },
  { code: 131, name: 'STREAMS_INVALID_TOPOLOGY_EPOCH', retriable: false },
  { code: 132, name: 'STREAMS_TOPOLOGY_FENCED', retriable: false },
  { code: 133, name: 'SHARE_SESSION_LIMIT_REACHED', retriable: true },
];

const stateBatch = (versions) => field('StateBatches', '[]StateBatch', versions, {
  fields: [field('FirstOffset', 'int64', versions), field('LastOffset', 'int64', versions),
    field('DeliveryState', 'int8', versions), field('DeliveryCount', 'int16', versions)],
});
const shareKeyFields = [field('GroupId', 'string', '0-1'), field('TopicId', 'uuid', '0-1'), field('Partition', 'int32', '0-1')];

/**
 * The share coordinator's records in `__share_group_state` (Kafka 4.1, share-coordinator module,
 * outside the snapshot's folders). As with the group coordinator's records, a key's version is its
 * record type: 0 a snapshot of a share-partition's whole state, 1 an update on top of the latest
 * snapshot. DeliveryCompleteCount is 4.2's tagged field (KIP-1226).
 */
export const ADDED_SCHEMAS = [
  { folder: 'share-coordinator', schema: { type: 'data', name: 'ShareSnapshotKey', validVersions: '0', flexibleVersions: 'none', fields: shareKeyFields } },
  { folder: 'share-coordinator', schema: { type: 'data', name: 'ShareUpdateKey', validVersions: '1', flexibleVersions: 'none', fields: shareKeyFields } },
  {
    folder: 'share-coordinator',
    schema: {
      type: 'data', name: 'ShareSnapshotValue', validVersions: '0', flexibleVersions: '0+',
      fields: [
        field('SnapshotEpoch', 'int32', '0+'), field('StateEpoch', 'int32', '0+'), field('LeaderEpoch', 'int32', '0+'), field('StartOffset', 'int64', '0+'),
        field('CreateTimestamp', 'int64', '0+'), field('WriteTimestamp', 'int64', '0+'),
        field('DeliveryCompleteCount', 'int32', '0+', { taggedVersions: '0+', tag: 0, default: '-1' }),
        stateBatch('0+'),
      ],
    },
  },
  {
    folder: 'share-coordinator',
    schema: {
      type: 'data', name: 'ShareUpdateValue', validVersions: '0', flexibleVersions: '0+',
      fields: [
        field('SnapshotEpoch', 'int32', '0+'), field('LeaderEpoch', 'int32', '0+'), field('StartOffset', 'int64', '0+'),
        field('DeliveryCompleteCount', 'int32', '0+', { taggedVersions: '0+', tag: 0, default: '-1' }),
        stateBatch('0+'),
      ],
    },
  },
];

/**
 * The share groups' admin APIs (KIP-932, Kafka 4.1's clients module; outside the snapshot):
 * DescribeShareGroupOffsets (v1 is Kafka 4.2's, adding Lag, KIP-1226), AlterShareGroupOffsets and
 * DeleteShareGroupOffsets (v0).
 */
const errorFields = (versions) => [field('ErrorCode', 'int16', versions), field('ErrorMessage', 'string', versions, { nullableVersions: versions, default: 'null' })];
ADDED_SCHEMAS.push(
  {
    folder: 'clients',
    schema: {
      apiKey: 90, type: 'request', listeners: ['broker'], name: 'DescribeShareGroupOffsetsRequest', validVersions: '0-1', flexibleVersions: '0+',
      fields: [field('Groups', '[]DescribeShareGroupOffsetsRequestGroup', '0+', {
        fields: [field('GroupId', 'string', '0+'), field('Topics', '[]DescribeShareGroupOffsetsRequestTopic', '0+', {
          nullableVersions: '0+', fields: [field('TopicName', 'string', '0+'), field('Partitions', '[]int32', '0+')],
        })],
      })],
    },
  },
  {
    folder: 'clients',
    schema: {
      apiKey: 90, type: 'response', name: 'DescribeShareGroupOffsetsResponse', validVersions: '0-1', flexibleVersions: '0+',
      fields: [field('ThrottleTimeMs', 'int32', '0+'), field('Groups', '[]DescribeShareGroupOffsetsResponseGroup', '0+', {
        fields: [
          field('GroupId', 'string', '0+'),
          field('Topics', '[]DescribeShareGroupOffsetsResponseTopic', '0+', {
            fields: [field('TopicName', 'string', '0+'), field('TopicId', 'uuid', '0+'), field('Partitions', '[]DescribeShareGroupOffsetsResponsePartition', '0+', {
              fields: [field('PartitionIndex', 'int32', '0+'), field('StartOffset', 'int64', '0+'), field('LeaderEpoch', 'int32', '0+'),
                field('Lag', 'int64', '1+', { ignorable: true, default: '-1' }), ...errorFields('0+')],
            })],
          }),
          ...errorFields('0+'),
        ],
      })],
    },
  },
  {
    folder: 'clients',
    schema: {
      apiKey: 91, type: 'request', listeners: ['broker'], name: 'AlterShareGroupOffsetsRequest', validVersions: '0', flexibleVersions: '0+',
      fields: [field('GroupId', 'string', '0+'), field('Topics', '[]AlterShareGroupOffsetsRequestTopic', '0+', {
        fields: [field('TopicName', 'string', '0+', { mapKey: true }), field('Partitions', '[]AlterShareGroupOffsetsRequestPartition', '0+', {
          fields: [field('PartitionIndex', 'int32', '0+'), field('StartOffset', 'int64', '0+')],
        })],
      })],
    },
  },
  {
    folder: 'clients',
    schema: {
      apiKey: 91, type: 'response', name: 'AlterShareGroupOffsetsResponse', validVersions: '0', flexibleVersions: '0+',
      fields: [field('ThrottleTimeMs', 'int32', '0+'), ...errorFields('0+'), field('Responses', '[]AlterShareGroupOffsetsResponseTopic', '0+', {
        fields: [field('TopicName', 'string', '0+', { mapKey: true }), field('TopicId', 'uuid', '0+'), field('Partitions', '[]AlterShareGroupOffsetsResponsePartition', '0+', {
          fields: [field('PartitionIndex', 'int32', '0+'), ...errorFields('0+')],
        })],
      })],
    },
  },
  {
    folder: 'clients',
    schema: {
      apiKey: 92, type: 'request', listeners: ['broker'], name: 'DeleteShareGroupOffsetsRequest', validVersions: '0', flexibleVersions: '0+',
      fields: [field('GroupId', 'string', '0+'), field('Topics', '[]DeleteShareGroupOffsetsRequestTopic', '0+', { fields: [field('TopicName', 'string', '0+')] })],
    },
  },
  {
    folder: 'clients',
    schema: {
      apiKey: 92, type: 'response', name: 'DeleteShareGroupOffsetsResponse', validVersions: '0', flexibleVersions: '0+',
      fields: [field('ThrottleTimeMs', 'int32', '0+'), ...errorFields('0+'), field('Responses', '[]DeleteShareGroupOffsetsResponseTopic', '0+', {
        fields: [field('TopicName', 'string', '0+'), field('TopicId', 'uuid', '0+'), ...errorFields('0+')],
      })],
    },
  },
);

const PATCHES = [RELEASED_4_0, RELEASED_4_1];

/** Applies every release's amendments to one parsed schema, in release order. */
export function applyReleases(schema) {
  for (const release of PATCHES) {
    const p = release[schema.name];
    if (!p) continue;
    if (p.validVersions) schema.validVersions = p.validVersions;
    if (p.stable) delete schema.latestVersionUnstable;
    for (const [path, versions] of Object.entries(p.fieldVersions ?? {})) findField(schema.fields, path.split('.'), schema.name).versions = versions;
    for (const [after, added] of Object.entries(p.addAfter ?? {})) {
      const i = schema.fields.findIndex((f) => f.name === after);
      if (i < 0) throw new Error(`${schema.name}: no field ${after} to add after`);
      schema.fields.splice(i + 1, 0, ...added);
    }
  }
  return schema;
}

function findField(fields, path, name) {
  const f = fields.find((x) => x.name === path[0]);
  if (!f) throw new Error(`${name}: no field ${path[0]}`);
  return path.length === 1 ? f : findField(f.fields ?? [], path.slice(1), name);
}
