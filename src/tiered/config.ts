// From a parsed broker configuration to the remote storage backend, and the topic-level rule
// tiering adds. Settings are read under remote.log.storage.manager.impl.prefix (rsm.config.) with
// the names Aiven's plugin uses, and `dir` for Kafka's LocalTieredStorage, so a server.properties
// written for either works unchanged.
import { join } from 'node:path';
import { ConfigError, type BrokerConfig, type ConfigProblem } from '../config/index.js';
import { limits } from '../util/index.js';
import { ChunkedStorageManager } from './chunked-storage-manager.js';
import { LocalObjectStore } from './local-object-store.js';
import type { ObjectStore } from './object-store.js';
import { ReadCache } from './read-cache.js';
import { S3ObjectStore, S3_PART_BYTES_MIN } from './s3-object-store.js';
import type { RemoteStorageManager } from './storage-manager.js';

const LOCAL_TIERED_STORAGE = 'org.apache.kafka.server.log.remote.storage.LocalTieredStorage';
const AIVEN_RSM = 'io.aiven.kafka.tieredstorage.RemoteStorageManager';
const AIVEN_S3 = 'io.aiven.kafka.tieredstorage.storage.s3.S3Storage';
const AIVEN_FILESYSTEM = 'io.aiven.kafka.tieredstorage.storage.filesystem.FileSystemStorage';

export type RemoteBackendSettings =
  /** linkSegments: a segment's log is hard-linked where the directory shares the log's file system (rsm.config.link.segments). */
  | { readonly kind: 'local'; readonly dir: string; readonly linkSegments: boolean }
  | {
    readonly kind: 's3'; readonly bucket: string; readonly region: string; readonly endpoint?: string; readonly pathStyle: boolean;
    readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
    readonly partBytes: number; readonly multipartThresholdBytes: number;
    /** Aiven's storage.s3.api.call.timeout / .attempt.timeout, in ms; unset: none (the socket timeout still applies). */
    readonly apiCallTimeoutMs?: number; readonly apiCallAttemptTimeoutMs?: number;
  };

export interface RemoteStorageSettings {
  readonly backend: RemoteBackendSettings;
  readonly keyPrefix: string;
  readonly chunkBytes: number;
  readonly chunkCacheBytes: number;
  readonly indexCacheBytes: number;
}

/** Defaults where Aiven's plugin has none or Logline differs (documented in src/tiered/README.md). */
export const REMOTE_STORAGE_DEFAULTS = {
  chunkBytes: 4 * 1024 * 1024,
  chunkCacheBytes: 256 * 1024 * 1024,
  partBytes: 25 * 1024 * 1024,
  multipartThresholdBytes: 25 * 1024 * 1024,
  /** Under the first log directory when no directory is named. */
  localDirName: 'remote-storage',
} as const;

/**
 * The backend the configuration asks for, or null when tiering is off on this broker. Pure: no
 * I/O. Throws ConfigError naming the key at fault.
 */
export function remoteStorageSettings(config: BrokerConfig): RemoteStorageSettings | null {
  if (config.get('remote.log.storage.system.enable') !== true) return null;
  const className = config.get('remote.log.storage.manager.class.name');
  const key = 'remote.log.storage.manager.class.name';
  if (className === null || className === '') throw new ConfigError(`${key} must be set when remote.log.storage.system.enable=true (${LOCAL_TIERED_STORAGE} for a local directory)`, key);
  const prefix = config.get('remote.log.storage.manager.impl.prefix');
  const rsm = (name: string): string | undefined => config.originals.get(prefix + name)?.trim();
  const common = {
    keyPrefix: rsm('key.prefix') ?? '',
    chunkBytes: intSetting(prefix + 'chunk.size', rsm('chunk.size'), REMOTE_STORAGE_DEFAULTS.chunkBytes, 1, limits.remoteChunkBytesMax),
    chunkCacheBytes: intSetting(prefix + 'fetch.chunk.cache.size', rsm('fetch.chunk.cache.size'), REMOTE_STORAGE_DEFAULTS.chunkCacheBytes, 0, Number.MAX_SAFE_INTEGER),
    indexCacheBytes: config.get('remote.log.index.file.cache.total.size.bytes'),
  };
  if (common.keyPrefix !== '' && !/^[A-Za-z0-9._\-/=]+\/$/.test(common.keyPrefix)) {
    throw new ConfigError(`${prefix}key.prefix must be safe characters ending in "/"`, prefix + 'key.prefix', common.keyPrefix);
  }
  const localDir = (dir: string | undefined): RemoteBackendSettings => {
    const logDir = config.logDirs[0];
    if (dir === undefined && logDir === undefined) throw new ConfigError(`${prefix}dir must be set`, prefix + 'dir');
    const link = rsm('link.segments');
    if (link !== undefined && !/^(true|false)$/i.test(link)) throw new ConfigError(`${prefix}link.segments must be true or false`, prefix + 'link.segments', link);
    return { kind: 'local', dir: dir ?? join(logDir!, REMOTE_STORAGE_DEFAULTS.localDirName), linkSegments: link?.toLowerCase() !== 'false' };
  };
  if (className === LOCAL_TIERED_STORAGE) return { ...common, backend: localDir(rsm('dir')) };
  if (className !== AIVEN_RSM) throw new ConfigError(`${key}: unsupported remote storage manager ${className}`, key, className);
  const backendClass = rsm('storage.backend.class');
  if (backendClass === AIVEN_FILESYSTEM) return { ...common, backend: localDir(rsm('storage.root')) };
  if (backendClass !== AIVEN_S3) {
    throw new ConfigError(`${prefix}storage.backend.class must be ${AIVEN_S3} or ${AIVEN_FILESYSTEM}`, prefix + 'storage.backend.class', backendClass);
  }
  return { ...common, backend: s3Settings(prefix, rsm) };
}

function s3Settings(prefix: string, rsm: (name: string) => string | undefined): RemoteBackendSettings {
  const bucket = rsm('storage.s3.bucket.name');
  if (bucket === undefined || bucket === '') throw new ConfigError(`${prefix}storage.s3.bucket.name must be set`, prefix + 'storage.s3.bucket.name');
  const accessKeyId = rsm('storage.aws.access.key.id');
  const secretAccessKey = rsm('storage.aws.secret.access.key');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError(`${prefix}storage.aws.access.key.id and ${prefix}storage.aws.secret.access.key must be set together (or neither, for the SDK's default credentials)`, prefix + 'storage.aws.access.key.id');
  }
  const pathStyle = rsm('storage.s3.path.style.access.enabled');
  if (pathStyle !== undefined && !/^(true|false)$/i.test(pathStyle)) throw new ConfigError(`${prefix}storage.s3.path.style.access.enabled must be true or false`, prefix + 'storage.s3.path.style.access.enabled', pathStyle);
  const endpoint = rsm('storage.s3.endpoint.url');
  const timeout = (name: string): number | undefined => {
    const raw = rsm(name);
    return raw === undefined ? undefined : intSetting(prefix + name, raw, 0, 1, 0x7fffffff);
  };
  const apiCallTimeoutMs = timeout('storage.s3.api.call.timeout');
  const apiCallAttemptTimeoutMs = timeout('storage.s3.api.call.attempt.timeout');
  const partBytes = intSetting(prefix + 'storage.s3.multipart.upload.part.size', rsm('storage.s3.multipart.upload.part.size'), REMOTE_STORAGE_DEFAULTS.partBytes, S3_PART_BYTES_MIN, 0x7fffffff);
  return {
    kind: 's3', bucket, region: rsm('storage.s3.region') ?? 'us-east-1', pathStyle: pathStyle?.toLowerCase() === 'true',
    ...(endpoint !== undefined ? { endpoint } : {}),
    ...(accessKeyId !== undefined ? { credentials: { accessKeyId, secretAccessKey: secretAccessKey! } } : {}),
    partBytes,
    multipartThresholdBytes: intSetting(prefix + 'storage.s3.multipart.upload.threshold', rsm('storage.s3.multipart.upload.threshold'), partBytes, S3_PART_BYTES_MIN, Number.MAX_SAFE_INTEGER),
    ...(apiCallTimeoutMs !== undefined ? { apiCallTimeoutMs } : {}), ...(apiCallAttemptTimeoutMs !== undefined ? { apiCallAttemptTimeoutMs } : {}),
  };
}

function intSetting(name: string, raw: string | undefined, dflt: number, min: number, max: number): number {
  if (raw === undefined) return dflt;
  const n = Number(raw);
  if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(`Invalid value ${JSON.stringify(raw)} for configuration ${name}: Value must be between ${min} and ${max}`, name, raw);
  }
  return n;
}

/** Opens the backend the settings describe (creates the local directory; the S3 client connects lazily). */
export async function openRemoteStorageManager(settings: RemoteStorageSettings): Promise<RemoteStorageManager> {
  const b = settings.backend;
  const store: ObjectStore = b.kind === 'local'
    ? await LocalObjectStore.open(b.dir, { linkFiles: b.linkSegments })
    : new S3ObjectStore({
      bucket: b.bucket, region: b.region, pathStyle: b.pathStyle, partBytes: b.partBytes, multipartThresholdBytes: b.multipartThresholdBytes,
      ...(b.endpoint !== undefined ? { endpoint: b.endpoint } : {}), ...(b.credentials !== undefined ? { credentials: b.credentials } : {}),
      ...(b.apiCallTimeoutMs !== undefined ? { apiCallTimeoutMs: b.apiCallTimeoutMs } : {}),
      ...(b.apiCallAttemptTimeoutMs !== undefined ? { apiCallAttemptTimeoutMs: b.apiCallAttemptTimeoutMs } : {}),
    });
  return new ChunkedStorageManager({
    store, keyPrefix: settings.keyPrefix, chunkBytes: settings.chunkBytes,
    chunkCache: new ReadCache(settings.chunkCacheBytes), indexCache: new ReadCache(settings.indexCacheBytes),
  });
}

/** The topic settings tiering's rules look at (a resolved TopicConfig has them all). */
export interface TieredTopicSettings {
  readonly remoteStorageEnable: boolean;
  readonly cleanupPolicy: readonly string[];
  readonly retentionMs: number;
  readonly retentionBytes: number;
  readonly localRetentionMs: number;
  readonly localRetentionBytes: number;
  readonly remoteLogCopyDisable: boolean;
  readonly remoteLogDeleteOnDisable: boolean;
}

/**
 * The rules tiering adds to a topic's configuration (Kafka's LogConfig.validateTopicLogConfigValues,
 * with its messages), on the topic's resolved settings: no tiering on a broker without tiered
 * storage, none of compacted topics, local retention within the total, equal to it once copying is
 * disabled (KIP-950), and tiering turned off only with remote.log.delete.on.disable (KIP-950).
 * `wasRemoteStorageEnabled`: the topic's setting before the change (false for a new topic).
 */
export function validateTieredTopicConfig(topic: TieredTopicSettings, remoteStorageSystemEnabled: boolean, wasRemoteStorageEnabled = false): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const problem = (name: string, message: string) => problems.push({ name, errorCode: 'INVALID_CONFIG', message });
  if (!topic.remoteStorageEnable) {
    if (wasRemoteStorageEnabled && !topic.remoteLogDeleteOnDisable) {
      problem('remote.storage.enable', 'It is invalid to disable remote storage without deleting remote data. If you want to keep the remote data and turn to read only, please set `remote.storage.enable=true,remote.log.copy.disable=true`. '
        + 'If you want to disable remote storage and delete all remote data, please set `remote.storage.enable=false,remote.log.delete.on.disable=true`.');
    }
    return problems;
  }
  if (!remoteStorageSystemEnabled) problem('remote.storage.enable', 'Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.');
  if (topic.cleanupPolicy.includes('compact')) problem('cleanup.policy', 'Remote log storage is unsupported for the compacted topics');
  for (const [local, total, localValue, totalValue, unlimited] of [
    ['local.retention.bytes', 'retention.bytes', topic.localRetentionBytes, topic.retentionBytes, topic.retentionBytes <= -1],
    ['local.retention.ms', 'retention.ms', topic.localRetentionMs, topic.retentionMs, topic.retentionMs === -1],
  ] as const) {
    if (unlimited || localValue === -2) continue;
    if (localValue === -1) problem(local, `Invalid value -1 for configuration ${local}: Value must not be -1 as ${total} value is set as ${totalValue}.`);
    else if (localValue > totalValue) problem(local, `Invalid value ${localValue} for configuration ${local}: Value must not be more than ${total} property value: ${totalValue}`);
  }
  if (topic.remoteLogCopyDisable) {
    if (topic.localRetentionBytes !== -2 && topic.localRetentionBytes !== topic.retentionBytes) {
      problem('local.retention.bytes', 'When `remote.log.copy.disable` is set to true, the `local.retention.bytes` and `retention.bytes` must be set to the identical value because there will be no more logs copied to the remote storage.');
    }
    if (topic.localRetentionMs !== -2 && topic.localRetentionMs !== topic.retentionMs) {
      problem('local.retention.ms', 'When `remote.log.copy.disable` is set to true, the `local.retention.ms` and `retention.ms` must be set to the identical value because there will be no more logs copied to the remote storage.');
    }
  }
  return problems;
}
