// The topic configuration a partition log acts on, by Kafka's names (camel-cased). The broker's
// resolved TopicConfig satisfies it; tests pass a partial one over LOG_DEFAULTS.
export interface LogConfig {
  readonly segmentBytes: number;
  readonly segmentMs: number;
  readonly segmentJitterMs: number;
  readonly segmentIndexBytes: number;
  readonly indexIntervalBytes: number;
  readonly retentionMs: number;
  readonly retentionBytes: number;
  readonly cleanupPolicy: readonly ('compact' | 'delete')[];
  readonly deleteRetentionMs: number;
  readonly minCleanableDirtyRatio: number;
  readonly minCompactionLagMs: number;
  readonly maxCompactionLagMs: number;
  readonly flushMessages: number;
  readonly flushMs: number;
  readonly fileDeleteDelayMs: number;
  readonly messageTimestampType: 'CreateTime' | 'LogAppendTime';
  readonly messageTimestampBeforeMaxMs: number;
  readonly messageTimestampAfterMaxMs: number;
  /** remote.storage.enable (KIP-405): rolled segments are copied to the remote tier and local retention applies. */
  readonly remoteStorageEnable: boolean;
  /** local.retention.ms / .bytes: what stays on local disk once copied; -2 means retention.ms / .bytes. */
  readonly localRetentionMs: number;
  readonly localRetentionBytes: number;
  /** remote.log.copy.disable (KIP-950): no more copies; local retention falls back to the total retention. */
  readonly remoteLogCopyDisable: boolean;
  /** remote.log.delete.on.disable (KIP-950): turning tiering off deletes the remote data. */
  readonly remoteLogDeleteOnDisable: boolean;
}

/** Kafka's defaults. */
export const LOG_DEFAULTS: LogConfig = Object.freeze({
  segmentBytes: 1073741824,
  segmentMs: 604800000,
  segmentJitterMs: 0,
  segmentIndexBytes: 10485760,
  indexIntervalBytes: 4096,
  retentionMs: 604800000,
  retentionBytes: -1,
  cleanupPolicy: Object.freeze(['delete'] as const),
  deleteRetentionMs: 86400000,
  minCleanableDirtyRatio: 0.5,
  minCompactionLagMs: 0,
  maxCompactionLagMs: Number.MAX_SAFE_INTEGER,
  flushMessages: Number.MAX_SAFE_INTEGER,
  flushMs: Number.MAX_SAFE_INTEGER,
  fileDeleteDelayMs: 60000,
  messageTimestampType: 'CreateTime',
  messageTimestampBeforeMaxMs: Number.MAX_SAFE_INTEGER,
  messageTimestampAfterMaxMs: 3600000,
  remoteStorageEnable: false,
  localRetentionMs: -2,
  localRetentionBytes: -2,
  remoteLogCopyDisable: false,
  remoteLogDeleteOnDisable: false,
});

export function logConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return Object.freeze({ ...LOG_DEFAULTS, ...overrides });
}
