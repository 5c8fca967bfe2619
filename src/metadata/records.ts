// Metadata record types and their serde, byte for byte as Kafka writes them into the values of
// `__cluster_metadata` records (AbstractApiMessageSerde): unsigned varint frame version (1),
// unsigned varint record type (the schema's apiKey), unsigned varint record version, then the
// message body. Every metadata schema is flexible, so the body ends with its tagged section.
import {
  Reader, Writer, ProtocolError, messageSchemas, decodeMessage, encodeMessage, defaultMessage, inRange,
  type AbortTransactionRecord, type AccessControlEntryRecord, type BeginTransactionRecord,
  type BrokerRegistrationChangeRecord, type ClientQuotaRecord, type ConfigRecord, type DelegationTokenRecord,
  type EndTransactionRecord, type FeatureLevelRecord, type FenceBrokerRecord, type NoOpRecord,
  type PartitionChangeRecord, type PartitionRecord, type ProducerIdsRecord, type RegisterBrokerRecord,
  type RegisterControllerRecord, type RemoveAccessControlEntryRecord, type RemoveDelegationTokenRecord,
  type RemoveTopicRecord, type RemoveUserScramCredentialRecord, type TopicRecord, type UnfenceBrokerRecord,
  type UnregisterBrokerRecord, type UserScramCredentialRecord, type ZkMigrationStateRecord,
} from '../protocol/index.js';
import { MetadataError } from './errors.js';

/** The only frame version Kafka has ever written. */
export const METADATA_FRAME_VERSION = 1;

/** Kafka's MetadataRecordType ids (the `apiKey` of each schema in kafka-protocol/metadata). */
export const MetadataRecordType = {
  RegisterBrokerRecord: 0,
  UnregisterBrokerRecord: 1,
  TopicRecord: 2,
  PartitionRecord: 3,
  ConfigRecord: 4,
  PartitionChangeRecord: 5,
  FenceBrokerRecord: 7,
  UnfenceBrokerRecord: 8,
  RemoveTopicRecord: 9,
  DelegationTokenRecord: 10,
  UserScramCredentialRecord: 11,
  FeatureLevelRecord: 12,
  ClientQuotaRecord: 14,
  ProducerIdsRecord: 15,
  BrokerRegistrationChangeRecord: 17,
  AccessControlEntryRecord: 18,
  RemoveAccessControlEntryRecord: 19,
  NoOpRecord: 20,
  ZkMigrationStateRecord: 21,
  RemoveUserScramCredentialRecord: 22,
  BeginTransactionRecord: 23,
  EndTransactionRecord: 24,
  AbortTransactionRecord: 25,
  RemoveDelegationTokenRecord: 26,
  RegisterControllerRecord: 27,
} as const;

export interface MetadataRecordDataByName {
  RegisterBrokerRecord: RegisterBrokerRecord;
  UnregisterBrokerRecord: UnregisterBrokerRecord;
  TopicRecord: TopicRecord;
  PartitionRecord: PartitionRecord;
  ConfigRecord: ConfigRecord;
  PartitionChangeRecord: PartitionChangeRecord;
  FenceBrokerRecord: FenceBrokerRecord;
  UnfenceBrokerRecord: UnfenceBrokerRecord;
  RemoveTopicRecord: RemoveTopicRecord;
  DelegationTokenRecord: DelegationTokenRecord;
  UserScramCredentialRecord: UserScramCredentialRecord;
  FeatureLevelRecord: FeatureLevelRecord;
  ClientQuotaRecord: ClientQuotaRecord;
  ProducerIdsRecord: ProducerIdsRecord;
  BrokerRegistrationChangeRecord: BrokerRegistrationChangeRecord;
  AccessControlEntryRecord: AccessControlEntryRecord;
  RemoveAccessControlEntryRecord: RemoveAccessControlEntryRecord;
  NoOpRecord: NoOpRecord;
  ZkMigrationStateRecord: ZkMigrationStateRecord;
  RemoveUserScramCredentialRecord: RemoveUserScramCredentialRecord;
  BeginTransactionRecord: BeginTransactionRecord;
  EndTransactionRecord: EndTransactionRecord;
  AbortTransactionRecord: AbortTransactionRecord;
  RemoveDelegationTokenRecord: RemoveDelegationTokenRecord;
  RegisterControllerRecord: RegisterControllerRecord;
}

export type MetadataRecordName = keyof MetadataRecordDataByName;

/** One metadata record: its type id, schema version and decoded body. `name` is filled on decode. */
export interface MetadataRecordOf<N extends MetadataRecordName> {
  readonly type: (typeof MetadataRecordType)[N];
  readonly name?: N;
  readonly version: number;
  readonly data: MetadataRecordDataByName[N];
}

/** The union over every record type; switch on `type` to narrow `data`. */
export type MetadataRecord = { [N in MetadataRecordName]: MetadataRecordOf<N> }[MetadataRecordName];

/** A decoded record always carries its name. */
export type DecodedMetadataRecord = MetadataRecord & { readonly name: MetadataRecordName };

const NAME_BY_TYPE = new Map<number, MetadataRecordName>(
  Object.entries(MetadataRecordType).map(([name, type]) => [type, name as MetadataRecordName]),
);

export function metadataRecordName(type: number): MetadataRecordName {
  const name = NAME_BY_TYPE.get(type);
  if (name === undefined) throw new MetadataError('UNKNOWN_RECORD_TYPE', `unknown metadata record type ${type}`);
  return name;
}

/** Highest version of a record type this build can read and write. */
export function latestVersion(name: MetadataRecordName): number {
  return messageSchemas[name]!.validVersions![1];
}

function checkVersion(name: MetadataRecordName, version: number): void {
  if (!Number.isInteger(version) || !inRange(messageSchemas[name]!.validVersions, version)) {
    throw new MetadataError('UNSUPPORTED_VERSION', `${name} has no version ${version}`);
  }
}

/**
 * Builds a record from a partial body: missing fields take the schema's defaults (the same values a
 * decoder gives), so replay code reads one complete shape. The version defaults to the latest.
 */
export function metadataRecord<N extends MetadataRecordName>(
  name: N, data: Partial<MetadataRecordDataByName[N]>, version: number = latestVersion(name),
): MetadataRecordOf<N> {
  checkVersion(name, version);
  const full: Record<string, unknown> = { ...defaultMessage<Record<string, unknown>>(name, version) };
  for (const [k, v] of Object.entries(data)) if (v !== undefined) full[k] = v;
  return { type: MetadataRecordType[name], name, version, data: full as unknown as MetadataRecordDataByName[N] } as MetadataRecordOf<N>;
}

export function serializeMetadataRecord(record: MetadataRecord, w: Writer = new Writer(256)): Buffer {
  const name = metadataRecordName(record.type);
  checkVersion(name, record.version);
  w.unsignedVarint(METADATA_FRAME_VERSION);
  w.unsignedVarint(record.type);
  w.unsignedVarint(record.version);
  encodeMessage(name, record.version, record.data, w);
  return w.toBuffer();
}

/** Decodes one record value; the whole buffer must be exactly one record. */
export function deserializeMetadataRecord(buf: Buffer): DecodedMetadataRecord {
  const r = new Reader(buf);
  try {
    const frameVersion = r.unsignedVarint();
    if (frameVersion !== METADATA_FRAME_VERSION) {
      throw new MetadataError('MALFORMED_RECORD', `unknown metadata record frame version ${frameVersion}`);
    }
    const type = r.unsignedVarint();
    const version = r.unsignedVarint();
    const name = metadataRecordName(type);
    checkVersion(name, version);
    const data = decodeMessage(name, version, r);
    if (r.remaining !== 0) {
      throw new MetadataError('MALFORMED_RECORD', `${name} v${version}: ${r.remaining} trailing bytes`);
    }
    return { type, name, version, data } as DecodedMetadataRecord;
  } catch (e) {
    if (e instanceof ProtocolError) throw new MetadataError('MALFORMED_RECORD', `metadata record: ${e.message}`);
    throw e;
  }
}
