// One mirror partition's link fetcher (issue 35, mirror topics): the target partition's leader
// fetches from the source partition's leader as a follower would, but as a client (replica id -1,
// read_uncommitted, so never past the source's high watermark), and appends the source's batches
// unchanged at the same offsets through the log's follower-append path. When the source's leader
// or its epoch changes, the mirror's end is checked with OffsetForLeaderEpoch (the source epoch of
// the mirror's last batch) and the mirror truncated where the source's log diverges.
import { ApiKey, ErrorCode, errorName } from '../protocol/index.js';
import { ClientError, KafkaError, type ClusterClient } from '../client/index.js';
import { partitionName, type Logger } from '../util/index.js';

/** What a link fetcher needs of the target partition (the node's replica manager fills it). */
export interface MirrorLog {
  mirrorState(topic: string, partition: number, withLastEpoch?: boolean): Promise<{ errorCode: number; logEndOffset: number; lastEpoch: number; logStartOffset: number; highWatermark: number }>;
  appendMirrored(topic: string, partition: number, records: Buffer): { errorCode: number; errorMessage: string | null; logEndOffset: number };
  truncateMirrored(topic: string, partition: number, offset: number): number;
  restartMirroredAt(topic: string, partition: number, offset: number): number;
}

export interface LinkFetcherOptions {
  /** Fetch's max_wait_ms toward the source (a long poll: the source answers as soon as it has data). */
  maxWaitMs: number;
  partitionMaxBytes: number;
  /** The pause after an error before the next try. */
  retryBackoffMs: number;
}

/** Per-partition progress, for `logline link status` and /v1 (source HW as last seen). */
export interface LinkPartitionStatus {
  topic: string;
  partition: number;
  sourceHighWatermark: number;
  logEndOffset: number;
  lastError: string | null;
}

/** How long a source leader is trusted without an error before Metadata is asked again. */
const LEADER_REFRESH_MS = 5000;

export class LinkPartitionFetcher {
  private stopped = false;
  private loop: Promise<void> | null = null;
  /** The source leader and epoch this mirror's end was last checked against (-1: check first). */
  private validatedEpoch = -1;
  private wake: (() => void) | null = null;
  private leader: { leader: number; leaderEpoch: number; at: number } | null = null;
  readonly status: LinkPartitionStatus;

  constructor(
    readonly topic: string,
    readonly partition: number,
    private readonly source: ClusterClient,
    private readonly log: MirrorLog,
    private readonly options: LinkFetcherOptions,
    private readonly logger: Logger,
  ) {
    this.status = { topic, partition, sourceHighWatermark: -1, logEndOffset: -1, lastError: null };
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  /** A pause that stop() cuts short. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => { this.wake = null; resolve(); }, ms);
      this.wake = () => { clearTimeout(t); this.wake = null; resolve(); };
    });
  }

  private get name(): string { return partitionName(this.topic, this.partition); }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const more = await this.step();
        if (!more) await this.pause(this.options.retryBackoffMs);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (this.status.lastError !== message) this.logger.warn(`link fetch of ${this.name}: ${message}`);
        this.status.lastError = message;
        this.validatedEpoch = -1;
        this.leader = null;
        await this.pause(this.options.retryBackoffMs);
      }
    }
  }

  /** One fetch; false when the caller should back off (not led here, nothing to do). */
  private async step(): Promise<boolean> {
    // The source leader is looked up again after any error (the catch clears it) and now and then.
    if (this.leader === null || Date.now() - this.leader.at > LEADER_REFRESH_MS) {
      const [info] = await this.source.metadata([this.topic]);
      const found = info?.partitions.find((x) => x.partition === this.partition);
      if (!info || info.errorCode !== 0 || !found || found.leader < 0) {
        throw new KafkaError(info?.errorCode || found?.errorCode || ErrorCode.LEADER_NOT_AVAILABLE, `source ${this.name}`);
      }
      this.leader = { leader: found.leader, leaderEpoch: found.leaderEpoch, at: Date.now() };
    }
    const p = this.leader;
    // The last batch's epoch is read only when the source's leader must be checked against.
    const state = await this.log.mirrorState(this.topic, this.partition, this.validatedEpoch !== p.leaderEpoch);
    if (state.errorCode !== ErrorCode.NONE) {
      this.status.lastError = `target: ${errorName(state.errorCode)}`;
      return false;
    }
    this.status.logEndOffset = state.logEndOffset;
    const conn = await this.source.broker(p.leader);
    if (this.validatedEpoch !== p.leaderEpoch) {
      if (!await this.truncateToSource(conn, p.leaderEpoch, state)) return false;
      this.validatedEpoch = p.leaderEpoch;
      return true;
    }
    const r = await conn.send(ApiKey.Fetch, conn.version(ApiKey.Fetch, 12), {
      replicaId: -1, maxWaitMs: this.options.maxWaitMs, minBytes: 1, maxBytes: this.options.partitionMaxBytes, isolationLevel: 0,
      sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: this.topic, partitions: [{ partition: this.partition, currentLeaderEpoch: p.leaderEpoch, fetchOffset: BigInt(state.logEndOffset), lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: this.options.partitionMaxBytes }] }],
      forgottenTopicsData: [], rackId: '',
    });
    if (r.errorCode !== 0) throw new KafkaError(r.errorCode, `source fetch of ${this.name}`);
    const pd = r.responses[0]?.partitions[0];
    if (pd === undefined) throw new ClientError(`source answered no data for ${this.name}`);
    if (pd.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) return this.outOfRange(conn, p.leaderEpoch, state);
    if (pd.errorCode !== ErrorCode.NONE) throw new KafkaError(pd.errorCode, `source fetch of ${this.name}`);
    this.status.sourceHighWatermark = Number(pd.highWatermark);
    const records: Buffer | null = pd.records ?? null;
    if (records !== null && records.length > 0) {
      const a = this.log.appendMirrored(this.topic, this.partition, records);
      if (a.errorCode !== ErrorCode.NONE) throw new KafkaError(a.errorCode, `mirror append of ${this.name}${a.errorMessage ? `: ${a.errorMessage}` : ''}`);
      this.status.logEndOffset = a.logEndOffset;
    }
    this.status.lastError = null;
    return true;
  }

  /**
   * The source's leader (or its epoch) is new to this fetcher: where does the source's log hold the
   * epoch of the mirror's last batch up to? Past that the mirror diverges (the old source leader's
   * tail never committed there) and is cut, as a follower truncates by epoch.
   */
  private async truncateToSource(conn: Awaited<ReturnType<ClusterClient['broker']>>, currentLeaderEpoch: number, state: { logEndOffset: number; lastEpoch: number; highWatermark: number }): Promise<boolean> {
    if (state.lastEpoch < 0) return true;
    const r = await conn.send(ApiKey.OffsetForLeaderEpoch, conn.version(ApiKey.OffsetForLeaderEpoch, 4), {
      replicaId: -1, topics: [{ topic: this.topic, partitions: [{ partition: this.partition, currentLeaderEpoch, leaderEpoch: state.lastEpoch }] }],
    });
    const e = r.topics[0]?.partitions[0];
    if (e === undefined) throw new ClientError(`source answered no epoch for ${this.name}`);
    if (e.errorCode !== ErrorCode.NONE) throw new KafkaError(e.errorCode, `source OffsetForLeaderEpoch of ${this.name}`);
    const end = Number(e.endOffset);
    if (e.leaderEpoch < 0 || end < 0 || end >= state.logEndOffset) return true;
    const code = this.log.truncateMirrored(this.topic, this.partition, end);
    if (code !== ErrorCode.NONE) {
      throw new KafkaError(code, `the source's log ends at ${end} for epoch ${state.lastEpoch}, below what this mirror has committed (${state.highWatermark}): an unclean leader election at the source?`);
    }
    this.logger.info(`${this.name}: truncated the mirror from ${state.logEndOffset} to ${end} (the source's epoch ${state.lastEpoch} ends there)`);
    return true;
  }

  /** The mirror's end is outside the source's log: past its end (check epochs), or below its start (retention there: start over at it). */
  private async outOfRange(conn: Awaited<ReturnType<ClusterClient['broker']>>, leaderEpoch: number, state: { logEndOffset: number; lastEpoch: number; highWatermark: number }): Promise<boolean> {
    const r = await conn.send(ApiKey.ListOffsets, conn.version(ApiKey.ListOffsets, 7), {
      replicaId: -1, isolationLevel: 0,
      topics: [{ name: this.topic, partitions: [{ partitionIndex: this.partition, currentLeaderEpoch: leaderEpoch, timestamp: -2n, maxNumOffsets: 1 }] }],
    });
    const earliest = r.topics[0]?.partitions[0];
    if (earliest === undefined || earliest.errorCode !== 0) throw new KafkaError(earliest?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, `source ListOffsets of ${this.name}`);
    const start = Number(earliest.offset);
    if (start > state.logEndOffset) {
      const code = this.log.restartMirroredAt(this.topic, this.partition, start);
      if (code !== ErrorCode.NONE) throw new KafkaError(code, `restart of ${this.name} at ${start}`);
      this.logger.info(`${this.name}: the source's log starts at ${start}, past the mirror's end ${state.logEndOffset}: the mirror restarts there`);
      return true;
    }
    // Past the source's end: check the mirror's last epoch against the source (on the next step).
    this.validatedEpoch = -1;
    return false;
  }
}
