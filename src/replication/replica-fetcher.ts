// The follower side of replication (Kafka's ReplicaFetcherManager, ReplicaFetcherThread and
// AbstractFetcherThread): one fetcher per source broker (times num.replica.fetchers) holds the
// partitions this broker follows from that leader and moves each through truncating → fetching.
// A fetcher loops: one Fetch (v15+: ReplicaState with this broker's id and epoch, LastFetchedEpoch
// per partition) to the leader; each answer's bytes are appended as they are (appendAsFollower),
// its high watermark and log start offset taken; a DivergingEpoch answer (KIP-595) truncates the
// divergent suffix, OFFSET_OUT_OF_RANGE resets against the leader's log start or end (ListOffsets),
// other partition errors back off for replica.fetch.backoff.ms, and a lost connection backs off
// every partition and reconnects. Fetches use a fetch session (KIP-227): after the first, only
// partitions whose fetch changed are sent. Throttled partitions (follower.replication.throttled.*,
// for a replica outside the ISR) share the follower quota: left out of a Fetch while it is used up,
// asked for no more than it allows otherwise. The network is a port (`connect`): the broker plugs
// in a BrokerConnection, tests a scripted leader.
import { ErrorCode, ZERO_UUID } from '../protocol/index.js';
import { StorageError } from '../storage/index.js';
import { limits, partitionKey, partitionName, type Clock } from '../util/index.js';
import type { ReplicaFetchers } from './fetchers.js';
import type { Partition } from './partition.js';
import type { ReplicationQuota } from './quota.js';
import type { Scheduler } from './purgatory.js';

const FETCH = 1;
const LIST_OFFSETS = 2;
const OFFSET_FOR_LEADER_EPOCH = 23;
/** ReplicaState (the follower's id and broker epoch) exists from Fetch v15 on. */
const FETCH_VERSION_MIN = 15;
const SESSION_ERRORS: ReadonlySet<number> = new Set([ErrorCode.FETCH_SESSION_ID_NOT_FOUND, ErrorCode.INVALID_FETCH_SESSION_EPOCH, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR]);
const LATEST_TIMESTAMP = -1n;
const EARLIEST_TIMESTAMP = -2n;
/** ListOffsets EARLIEST_LOCAL (KIP-405): the leader's local log start offset. */
const EARLIEST_LOCAL_TIMESTAMP = -4n;

/** A connection to a leader, after ApiVersions (BrokerConnection is one). */
export interface LeaderLink {
  send<T = any>(apiKey: number, version: number, body: object): Promise<T>;
  /** The highest version of an API both sides speak; throws when the leader has none. */
  version(apiKey: number): number;
  readonly closed: boolean;
  close(): void;
}

export interface LeaderEndpoint { host: string; port: number }

/** Kafka's replica.fetch.* and num.replica.fetchers. */
export interface ReplicaFetcherConfig {
  /** replica.fetch.max.bytes: asked for per partition. */
  fetchMaxBytes: number;
  /** replica.fetch.response.max.bytes: asked for per Fetch. */
  fetchResponseMaxBytes: number;
  /** replica.fetch.wait.max.ms: the Fetch's max wait. */
  fetchWaitMaxMs: number;
  /** replica.fetch.min.bytes. */
  fetchMinBytes: number;
  /** replica.fetch.backoff.ms: a failed partition or connection waits this long. */
  fetchBackoffMs: number;
  /** num.replica.fetchers: fetchers (connections) per source broker. */
  numFetchers: number;
}

export interface FetcherLogger { info(msg: string): void; warn(msg: string): void; error(msg: string): void }

export interface ReplicaFetcherPorts {
  brokerId: number;
  /** This broker's epoch (its registration), sent as ReplicaState.ReplicaEpoch. */
  brokerEpoch(): bigint;
  /** The leader's inter-broker endpoint from the metadata image, or undefined when not registered. */
  leaderEndpoint(brokerId: number): LeaderEndpoint | undefined;
  /** A topic's id from the metadata image (Fetch v13+ names topics by id). */
  topicId(topic: string): string | undefined;
  /** Opens a connection to a leader and negotiates versions. */
  connect(endpoint: LeaderEndpoint): Promise<LeaderLink>;
  /** A followed partition took records or a new high watermark (wakes consumers fetching from this follower). */
  onFollowerProgress?(partition: Partition): void;
  clock: Clock;
  /** Where a fetcher waits out its backoff (real timers when absent; a simulation passes its own). */
  scheduler?: Scheduler;
  logger?: FetcherLogger;
  /** The follower replication throttle: the quota, and whether a partition's copy counts against it. */
  throttle?: { readonly quota: ReplicationQuota; isThrottled(p: Partition): boolean };
  /**
   * Tiered storage (Kafka's TierStateMachine): the leader answered OFFSET_MOVED_TO_TIERED_STORAGE,
   * so the log is emptied and restarted at the leader's local log start `localStart` (log start
   * `logStart`) with the leader-epoch cache and producer state the remote tier's copy of the
   * segment before it holds. Resolves false when that copy cannot be read yet (tried again later).
   */
  restoreFromRemoteTier?(partition: Partition, localStart: number, logStart: number): Promise<boolean>;
  /**
   * False while a followed partition must not grow here (its log directory is below
   * log.dir.min.free.bytes): it is not fetched, backing off as after an error, so it may leave the
   * ISR, and is fetched again once space returns. Absent: always.
   */
  mayAppend?(partition: Partition): boolean;
}

/** Kafka's PartitionFetchState: where the next fetch starts, and whether truncation comes first. */
interface FetchState {
  readonly partition: Partition;
  readonly topicId: string;
  /** The leader epoch the partition followed this leader at when it was added. */
  readonly leaderEpoch: number;
  fetchOffset: number;
  /** Truncating: the log end must first be checked against the leader's (OffsetForLeaderEpoch). */
  truncating: boolean;
  /** No fetch for this partition before this time (backoff after an error). */
  delayUntilMs: number;
  /** The last answer that was not plain records (an error, a truncation), for diagnostics. */
  lastEvent: string;
}

function unrefTimer(fn: () => void, ms: number): { cancel(): void } {
  const t = setTimeout(fn, ms).unref();
  return { cancel: () => clearTimeout(t) };
}

/** Java's String.hashCode, for Kafka's fetcher id: abs(31 * topic.hashCode + partition) % numFetchers. */
function javaHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

export function fetcherIdFor(topic: string, partition: number, numFetchers: number): number {
  return Math.abs((Math.imul(31, javaHash(topic)) + partition) | 0) % Math.max(1, numFetchers);
}

/** Where a divergent log is cut, and whether that settles it (Kafka's OffsetTruncationState). */
interface Truncation { offset: number; completed: boolean }

/**
 * Kafka's AbstractFetcherThread.getOffsetTruncationState: the leader says its epoch `leaderEpoch`
 * ends at `leaderEndOffset`; cut where this log's copy of that epoch ends, or the leader's, or
 * this log's end, whichever is smallest. When this log never had that epoch, cut to where its
 * largest smaller epoch ends and ask again (not completed).
 */
export function offsetTruncationState(log: Partition['log'], fetchOffset: number, leaderEpoch: number, leaderEndOffset: number): Truncation {
  const end = log.logEndOffset;
  if (leaderEndOffset < 0) return { offset: fetchOffset, completed: true };
  if (leaderEpoch < 0) return { offset: Math.min(leaderEndOffset, end), completed: true };
  const mine = log.endOffsetForEpoch(leaderEpoch);
  // This replica kept no epoch at or below the leader's: the leader's end offset is safe.
  if (mine === null) return { offset: Math.min(leaderEndOffset, end), completed: true };
  if (mine.leaderEpoch !== leaderEpoch) return { offset: Math.min(mine.endOffset, end), completed: false };
  return { offset: Math.min(mine.endOffset, leaderEndOffset, end), completed: true };
}

/** One partition of a Fetch as the follower asks for it. */
export interface FetchPartitionData {
  partition: number; currentLeaderEpoch: number; fetchOffset: bigint; lastFetchedEpoch: number; logStartOffset: bigint;
  partitionMaxBytes: number; replicaDirectoryId: string;
}

const INITIAL_EPOCH = 0;

/**
 * A fetch session on the follower's side (KIP-227, Kafka's FetchSessionHandler): the first Fetch
 * is full (session 0, epoch 0) and the leader answers with a session id; later ones are
 * incremental (that id, the next epoch) and carry only partitions that are new or changed, and
 * name the ones dropped as forgotten. A session error, a lost connection or a leader without
 * session slots (id 0) makes the next Fetch full again.
 */
export class FetchSessionHandler {
  private sessionId = 0;
  private nextEpoch = INITIAL_EPOCH;
  /** What the leader's session holds, keyed by topic id and partition. */
  private sessionPartitions = new Map<string, { topicId: string; data: FetchPartitionData }>();
  /** Whether the request being answered was a full one. */
  private lastWasFull = true;

  build(partitions: readonly { topicId: string; data: FetchPartitionData }[]): {
    sessionId: number; sessionEpoch: number; toSend: { topicId: string; data: FetchPartitionData }[]; forgotten: { topicId: string; partition: number }[];
  } {
    const next = new Map(partitions.map((p) => [`${p.topicId}:${p.data.partition}`, p]));
    const full = this.nextEpoch === INITIAL_EPOCH;
    this.lastWasFull = full;
    const previous = this.sessionPartitions;
    this.sessionPartitions = next;
    if (full) return { sessionId: 0, sessionEpoch: INITIAL_EPOCH, toSend: [...partitions], forgotten: [] };
    const toSend = partitions.filter((p) => !sameData(previous.get(`${p.topicId}:${p.data.partition}`)?.data, p.data));
    const forgotten = [...previous].filter(([k]) => !next.has(k)).map(([, p]) => ({ topicId: p.topicId, partition: p.data.partition }));
    return { sessionId: this.sessionId, sessionEpoch: this.nextEpoch, toSend, forgotten };
  }

  /** The leader's answer to the last request built: its top-level error code and session id. */
  handleResponse(errorCode: number, sessionId: number): void {
    if (errorCode !== ErrorCode.NONE) {
      this.reset();
      return;
    }
    if (this.lastWasFull) {
      this.sessionId = sessionId;
      this.nextEpoch = sessionId === 0 ? INITIAL_EPOCH : 1;
      return;
    }
    // Epochs wrap to 1, never to 0 (a new session) or below.
    this.nextEpoch = this.nextEpoch === 0x7fffffff ? 1 : this.nextEpoch + 1;
  }

  /** The next Fetch is full and opens a new session. */
  reset(): void {
    this.sessionId = 0;
    this.nextEpoch = INITIAL_EPOCH;
    this.sessionPartitions = new Map();
  }
}

function sameData(a: FetchPartitionData | undefined, b: FetchPartitionData): boolean {
  return a !== undefined && a.fetchOffset === b.fetchOffset && a.currentLeaderEpoch === b.currentLeaderEpoch && a.lastFetchedEpoch === b.lastFetchedEpoch
    && a.logStartOffset === b.logStartOffset && a.partitionMaxBytes === b.partitionMaxBytes;
}

/** One fetcher: the partitions followed from one leader (and fetcher id), fetched over one connection. */
export class ReplicaFetcher {
  private readonly states = new Map<string, FetchState>();
  private link: LeaderLink | null = null;
  private readonly session = new FetchSessionHandler();
  private closing = false;
  private wake: (() => void) | null = null;
  /** The loop; resolves once closed. */
  private readonly running: Promise<void>;
  /** First partition of the next Fetch when more are followed than one request may carry. */
  private cursor = 0;

  constructor(readonly leaderId: number, readonly fetcherId: number, private readonly config: ReplicaFetcherConfig, private readonly ports: ReplicaFetcherPorts) {
    this.running = this.run();
  }

  get partitionCount(): number { return this.states.size; }
  /** Where the next fetch of a partition starts, or undefined when this fetcher does not hold it. */
  fetchOffsetOf(p: Partition): number | undefined { return this.states.get(partitionKey(p.topic, p.index))?.fetchOffset; }

  /** A partition's fetch state as a diagnostic line (tests and tools), or undefined when this fetcher does not hold it. */
  describe(p: Partition): string | undefined {
    const s = this.states.get(partitionKey(p.topic, p.index));
    if (s === undefined) return undefined;
    const delay = s.delayUntilMs - this.ports.clock.nowMs();
    return `fetcher ${this.fetcherId} to broker ${this.leaderId}: fetchOffset=${s.fetchOffset} leaderEpoch=${s.leaderEpoch}${s.truncating ? ' truncating' : ''}`
      + `${delay > 0 ? ` delayed ${delay} ms` : ''}${this.holds(s) ? '' : ' (stale: the partition moved on)'} link=${this.link === null ? 'none' : this.link.closed ? 'closed' : 'open'}`
      + ` partitions=${this.states.size}${this.closing ? ' closing' : ''}${s.lastEvent === '' ? '' : ` last: ${s.lastEvent}`}`;
  }

  /**
   * Kafka's addPartitions: a partition starts fetching at its log end offset with the epoch of its
   * last batch as LastFetchedEpoch (truncation happens on the leader's answer, KIP-595). A log
   * with data but no epochs cannot say where it diverges: it goes through truncation first.
   */
  add(p: Partition, topicId: string): void {
    const log = p.log;
    const truncating = log.latestEpoch < 0 && log.logEndOffset > log.logStartOffset;
    this.states.set(partitionKey(p.topic, p.index), {
      partition: p, topicId, leaderEpoch: p.leaderEpoch, fetchOffset: log.logEndOffset, truncating, delayUntilMs: 0, lastEvent: '',
    });
    this.wake?.();
  }

  remove(p: Partition): boolean { return this.states.delete(partitionKey(p.topic, p.index)); }

  async close(): Promise<void> {
    this.closing = true;
    this.link?.close();
    this.wake?.();
    await this.running;
  }

  private async run(): Promise<void> {
    while (!this.closing) {
      try {
        await this.doWork();
      } catch (err) {
        if (this.closing) break;
        // The connection (or the leader's answer as a whole) failed: every partition backs off.
        this.ports.logger?.warn(`replica fetcher ${this.fetcherId} to broker ${this.leaderId}: ${err instanceof Error ? err.message : String(err)}; retrying in ${this.config.fetchBackoffMs} ms`);
        this.link?.close();
        this.link = null;
        this.session.reset();
        this.delay([...this.states.values()]);
      }
    }
    this.link?.close();
    this.link = null;
  }

  private async doWork(): Promise<void> {
    const now = this.ports.clock.nowMs();
    const ready: FetchState[] = [];
    let nextDue = Infinity;
    for (const s of this.states.values()) {
      // A partition whose leader or epoch just changed waits for the delta to remove or re-add it.
      if (s.delayUntilMs <= now && (!this.holds(s) || this.ports.mayAppend?.(s.partition) === false)) s.delayUntilMs = now + this.config.fetchBackoffMs;
      if (s.delayUntilMs <= now) ready.push(s);
      else nextDue = Math.min(nextDue, s.delayUntilMs);
    }
    if (ready.length === 0) {
      await this.sleep(nextDue - now);
      return;
    }
    const link = await this.ensureLink();
    const truncating = ready.filter((s) => s.truncating);
    if (truncating.length > 0) await this.truncateToEpochEndOffsets(link, truncating);
    const fetching = ready.filter((s) => !s.truncating && this.holds(s));
    if (fetching.length === 0) return;
    const round = this.throttleRound(this.nextRound(fetching));
    if (round.states.length > 0) await this.fetch(link, round.states, round.maxBytes, round.waitMs);
    else await this.sleep(round.waitMs);
  }

  /**
   * Kafka's shouldFollowerThrottle: throttled partitions are left out while the quota is used up;
   * while it is not, they share what it allows now (each asks for at most the rest). `waitMs`: how
   * long until the left-out ones may go again (the sleep when nothing is left to fetch, else the
   * longest the Fetch may wait, so they are not held up by a long poll for the others).
   */
  private throttleRound(round: FetchState[]): { states: FetchState[]; maxBytes: Map<FetchState, number>; waitMs: number } {
    const maxBytes = new Map<FetchState, number>();
    const throttle = this.ports.throttle;
    if (throttle === undefined || !throttle.quota.isThrottling) return { states: round, maxBytes, waitMs: Infinity };
    const now = this.ports.clock.nowMs();
    let left = throttle.quota.allowance(now);
    let leftOut = false;
    const states = round.filter((s) => {
      if (!throttle.isThrottled(s.partition)) return true;
      if (left <= 0) {
        leftOut = true;
        return false;
      }
      const bytes = Math.min(this.config.fetchMaxBytes, left);
      maxBytes.set(s, bytes);
      left -= bytes;
      return true;
    });
    return { states, maxBytes, waitMs: leftOut ? throttle.quota.delayMs(now) : Infinity };
  }

  /** At most limits.partitionsPerRequestMax partitions per Fetch, taking turns. */
  private nextRound(fetching: FetchState[]): FetchState[] {
    const max = limits.partitionsPerRequestMax;
    if (fetching.length <= max) return fetching;
    const start = this.cursor % fetching.length;
    this.cursor = start + max;
    return [...fetching, ...fetching].slice(start, start + max);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        timer?.cancel();
        if (this.wake === done) this.wake = null;
        resolve();
      };
      const scheduler = this.ports.scheduler;
      // A fetcher waiting for its backoff must not keep a process alive on its own (a broker in a
      // test that is never closed); a connection to a leader does while there is one.
      const timer = !Number.isFinite(ms) ? null : scheduler !== undefined ? scheduler.schedule(Math.max(0, ms), done) : unrefTimer(done, Math.max(0, ms));
      this.wake = done;
    });
  }

  private async ensureLink(): Promise<LeaderLink> {
    if (this.link !== null && !this.link.closed) return this.link;
    const endpoint = this.ports.leaderEndpoint(this.leaderId);
    if (endpoint === undefined) throw new Error(`leader ${this.leaderId} has no registered endpoint`);
    const link = await this.ports.connect(endpoint);
    if (this.closing) link.close();
    this.link = link;
    return link;
  }

  /** The state is still this fetcher's and the partition still follows this leader at its epoch. */
  private holds(s: FetchState): boolean {
    const p = s.partition;
    return this.states.get(partitionKey(p.topic, p.index)) === s && p.leaderId === this.leaderId && p.leaderEpoch === s.leaderEpoch;
  }

  private delay(states: Iterable<FetchState>): void {
    const until = this.ports.clock.nowMs() + this.config.fetchBackoffMs;
    for (const s of states) s.delayUntilMs = until;
  }

  /** Kafka's markPartitionFailed: the partition stops until a metadata delta adds it again. */
  private fail(s: FetchState, why: string): void {
    const p = s.partition;
    this.ports.logger?.warn(`${partitionName(p.topic, p.index)}: fetching from broker ${this.leaderId} stops until the next leader change: ${why}`);
    this.states.delete(partitionKey(p.topic, p.index));
  }

  // ---- Fetch -------------------------------------------------------------------------------

  private async fetch(link: LeaderLink, round: FetchState[], throttledMaxBytes: ReadonlyMap<FetchState, number>, waitMaxMs: number): Promise<void> {
    const version = link.version(FETCH);
    if (version < FETCH_VERSION_MIN) throw new Error(`leader ${this.leaderId} speaks Fetch up to v${version}; followers need v${FETCH_VERSION_MIN}+`);
    // Every partition of the round is in the session; an answer may name any of them.
    const sent = new Map<string, { state: FetchState; fetchOffset: number }>();
    const wanted = round.map((s) => {
      const log = s.partition.log;
      sent.set(`${s.topicId}:${s.partition.index}`, { state: s, fetchOffset: s.fetchOffset });
      return {
        topicId: s.topicId,
        data: {
          partition: s.partition.index, currentLeaderEpoch: s.leaderEpoch, fetchOffset: BigInt(s.fetchOffset),
          lastFetchedEpoch: log.latestEpoch, logStartOffset: BigInt(log.logStartOffset),
          partitionMaxBytes: throttledMaxBytes.get(s) ?? this.config.fetchMaxBytes, replicaDirectoryId: ZERO_UUID,
        },
      };
    });
    const built = this.session.build(wanted);
    const topics = new Map<string, { topicId: string; topic: string; partitions: FetchPartitionData[] }>();
    for (const p of built.toSend) {
      let t = topics.get(p.topicId);
      if (t === undefined) topics.set(p.topicId, t = { topicId: p.topicId, topic: '', partitions: [] });
      t.partitions.push(p.data);
    }
    const forgotten = new Map<string, number[]>();
    for (const f of built.forgotten) forgotten.set(f.topicId, [...(forgotten.get(f.topicId) ?? []), f.partition]);
    const response = await link.send(FETCH, version, {
      clusterId: null, replicaId: this.ports.brokerId,
      replicaState: { replicaId: this.ports.brokerId, replicaEpoch: this.ports.brokerEpoch() },
      maxWaitMs: Math.min(this.config.fetchWaitMaxMs, waitMaxMs), minBytes: this.config.fetchMinBytes, maxBytes: this.config.fetchResponseMaxBytes,
      isolationLevel: 0, sessionId: built.sessionId, sessionEpoch: built.sessionEpoch, topics: [...topics.values()],
      forgottenTopicsData: [...forgotten].map(([topicId, partitions]) => ({ topic: '', topicId, partitions })), rackId: '',
    });
    this.session.handleResponse(response.errorCode, response.sessionId);
    if (this.closing) return;
    if (response.errorCode !== ErrorCode.NONE) {
      // A session the leader lost or no longer matches: the next Fetch, full, opens a new one.
      if (SESSION_ERRORS.has(response.errorCode)) return;
      this.ports.logger?.warn(`replica fetcher to broker ${this.leaderId}: Fetch failed with error ${response.errorCode}`);
      this.delay(round);
      return;
    }
    const diverging: { state: FetchState; epoch: number; endOffset: number }[] = [];
    const appended: FetchState[] = [];
    for (const t of response.responses) {
      for (const pd of t.partitions) {
        const req = sent.get(`${t.topicId}:${pd.partitionIndex}`);
        // Only an answer to the fetch this partition is still at counts (Kafka's check against
        // the current fetch state): a removal, re-add or truncation meanwhile makes it stale.
        // Throttled bytes count once they have crossed the network, stale or not.
        if (req !== undefined && throttledMaxBytes.has(req.state)) this.ports.throttle?.quota.record(pd.records?.length ?? 0, this.ports.clock.nowMs());
        if (req === undefined || !this.holds(req.state) || req.state.truncating || req.state.fetchOffset !== req.fetchOffset) continue;
        await this.onPartitionAnswer(req.state, pd, diverging);
        if (req.state.fetchOffset !== req.fetchOffset) appended.push(req.state);
      }
    }
    // flush.messages: the next Fetch reports these log end offsets to the leader, which counts them
    // toward its high watermark, so they must be fsynced first. One grouped round of the log
    // directory covers every partition of this answer (and the other fetchers' answers meanwhile).
    if (appended.length > 0) await this.awaitDurable(appended);
    for (const d of diverging) {
      if (this.holds(d.state)) this.truncate(d.state, offsetTruncationState(d.state.partition.log, d.state.fetchOffset, d.epoch, d.endOffset));
    }
  }

  private async awaitDurable(states: FetchState[]): Promise<void> {
    const results = await Promise.allSettled(states.map((s) => s.partition.log.whenDurable()));
    for (let i = 0; i < states.length; i++) {
      const r = results[i]!;
      // A partition removed meanwhile (its log deleted or closed) is no longer this fetcher's.
      if (r.status === 'fulfilled' || this.closing || !this.holds(states[i]!)) continue;
      const err = r.reason as unknown;
      if (err instanceof StorageError && err.kind === 'KAFKA_STORAGE_ERROR') this.fail(states[i]!, err.message);
      else throw err;
    }
  }

  private async onPartitionAnswer(s: FetchState, pd: any, diverging: { state: FetchState; epoch: number; endOffset: number }[]): Promise<void> {
    const name = partitionName(s.partition.topic, s.partition.index);
    switch (pd.errorCode) {
      case ErrorCode.NONE:
        // Told it diverges, the follower truncates first and takes nothing from this answer (Kafka
        // does the same): its high watermark, min(the leader's, its own log end), would otherwise
        // cover its divergent tail until the truncation, and a consumer fetching from this replica
        // could read records that are about to go.
        if (pd.divergingEpoch !== undefined && pd.divergingEpoch.epoch >= 0) {
          diverging.push({ state: s, epoch: pd.divergingEpoch.epoch, endOffset: Number(pd.divergingEpoch.endOffset) });
          return;
        }
        try {
          await this.processPartitionData(s, pd);
        } catch (err) {
          if (err instanceof StorageError && err.kind === 'KAFKA_STORAGE_ERROR') {
            this.fail(s, err.message);
            return;
          }
          this.ports.logger?.error(`${name}: appending what broker ${this.leaderId} sent failed: ${err instanceof Error ? err.message : String(err)}`);
          this.delay([s]);
          return;
        }
        return;
      case ErrorCode.OFFSET_OUT_OF_RANGE:
        await this.onOffsetOutOfRange(s);
        return;
      case ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE:
        await this.onOffsetMovedToTieredStorage(s);
        return;
      case ErrorCode.FENCED_LEADER_EPOCH:
        // The leader has moved on past the epoch this replica follows: wait for the metadata.
        this.fail(s, `the leader's epoch is newer than ${s.leaderEpoch}`);
        return;
      default:
        // NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH, UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION,
        // ...: the leader's metadata lags this broker's, or the other way round; try again later.
        s.lastEvent = `error ${pd.errorCode} at ${s.fetchOffset} (${new Date(this.ports.clock.nowMs()).toISOString()})`;
        this.delay([s]);
    }
  }

  /**
   * Kafka's ReplicaFetcherThread.processPartitionData: the bytes as the leader sent them, then
   * high watermark = min(leader's, own log end offset), then the log start offset moves up to the
   * leader's (never past the high watermark).
   */
  private async processPartitionData(s: FetchState, pd: any): Promise<void> {
    const p = s.partition;
    const log = p.log;
    if (pd.records !== null && pd.records.length > 0) {
      log.appendAsFollower(pd.records);
      s.fetchOffset = log.logEndOffset;
    }
    const hw = Math.max(log.logStartOffset, Math.min(Number(pd.highWatermark), log.logEndOffset));
    const hwMoved = hw !== p.highWatermark;
    p.highWatermark = hw;
    log.updateHighWatermark(hw);
    if (hwMoved) this.ports.onFollowerProgress?.(p);
    const leaderStart = Number(pd.logStartOffset);
    if (leaderStart > log.logStartOffset && leaderStart <= hw) await log.deleteRecordsBefore(leaderStart);
  }

  /** Cuts the log (Kafka's ReplicaFetcherThread.truncate) and fetches on from there, or asks again. */
  private truncate(s: FetchState, t: Truncation): void {
    const p = s.partition;
    const log = p.log;
    if (t.offset < p.highWatermark) {
      this.ports.logger?.warn(`${partitionName(p.topic, p.index)}: truncating to ${t.offset}, below the high watermark ${p.highWatermark}`);
    }
    s.lastEvent = `truncated ${log.logEndOffset} -> ${Math.min(t.offset, log.logEndOffset)}${t.completed ? '' : ' (asking again)'} (${new Date(this.ports.clock.nowMs()).toISOString()})`;
    // Also at the log end offset: an epoch this log started but never wrote in goes (see truncateTo).
    log.truncateTo(Math.min(t.offset, log.logEndOffset));
    p.highWatermark = Math.min(p.highWatermark, log.logEndOffset);
    s.fetchOffset = log.logEndOffset;
    s.truncating = !t.completed;
  }

  // ---- Truncating: OffsetForLeaderEpoch ----------------------------------------------------

  /**
   * Kafka's maybeTruncate for partitions in the truncating state: a log without epochs is cut to
   * its high watermark; the others ask the leader where their latest epoch ends.
   */
  private async truncateToEpochEndOffsets(link: LeaderLink, truncating: FetchState[]): Promise<void> {
    const withEpoch: FetchState[] = [];
    for (const s of truncating) {
      if (s.partition.log.latestEpoch >= 0) withEpoch.push(s);
      else this.truncate(s, { offset: Math.min(s.partition.highWatermark, s.partition.log.logEndOffset), completed: true });
    }
    if (withEpoch.length === 0) return;
    const byTopic = new Map<string, object[]>();
    for (const s of withEpoch) {
      const list = byTopic.get(s.partition.topic) ?? [];
      byTopic.set(s.partition.topic, list);
      list.push({ partition: s.partition.index, currentLeaderEpoch: s.leaderEpoch, leaderEpoch: s.partition.log.latestEpoch });
    }
    const response = await link.send(OFFSET_FOR_LEADER_EPOCH, link.version(OFFSET_FOR_LEADER_EPOCH), {
      replicaId: this.ports.brokerId, topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
    });
    if (this.closing) return;
    const asked = new Map(withEpoch.map((s) => [partitionKey(s.partition.topic, s.partition.index), s]));
    for (const t of response.topics) {
      for (const r of t.partitions) {
        const s = asked.get(partitionKey(t.topic, r.partition));
        if (s === undefined || !this.holds(s) || !s.truncating) continue;
        if (r.errorCode === ErrorCode.FENCED_LEADER_EPOCH) this.fail(s, `the leader's epoch is newer than ${s.leaderEpoch}`);
        else if (r.errorCode !== ErrorCode.NONE) this.delay([s]);
        else this.truncate(s, offsetTruncationState(s.partition.log, s.fetchOffset, r.leaderEpoch, Number(r.endOffset)));
      }
    }
  }

  // ---- OFFSET_OUT_OF_RANGE -----------------------------------------------------------------

  /**
   * Kafka's fetchOffsetAndTruncate: when the leader's log ends below this one (an unclean
   * election), cut to the leader's end; otherwise fetch from the larger of this log's end and
   * the leader's log start, emptying this log when the leader's start is past all of it.
   */
  private async onOffsetOutOfRange(s: FetchState): Promise<void> {
    const link = this.link;
    if (link === null) return;
    const p = s.partition;
    s.lastEvent = `OFFSET_OUT_OF_RANGE at ${s.fetchOffset} (${new Date(this.ports.clock.nowMs()).toISOString()})`;
    const leaderEnd = await this.leaderOffset(link, s, LATEST_TIMESTAMP);
    if (leaderEnd === null || !this.holds(s)) return;
    const log = p.log;
    if (leaderEnd < log.logEndOffset) {
      this.ports.logger?.warn(`${partitionName(p.topic, p.index)}: the leader's log ends at ${leaderEnd}, below this replica's ${log.logEndOffset}; truncating`);
      this.truncate(s, { offset: leaderEnd, completed: true });
      return;
    }
    const leaderStart = await this.leaderOffset(link, s, EARLIEST_TIMESTAMP);
    if (leaderStart === null || !this.holds(s)) return;
    if (leaderStart > log.logEndOffset) {
      this.ports.logger?.warn(`${partitionName(p.topic, p.index)}: the leader's log starts at ${leaderStart}, past this replica's end ${log.logEndOffset}; starting over there`);
      log.truncateFullyAndStartAt(leaderStart);
      p.highWatermark = log.logEndOffset;
      log.updateHighWatermark(p.highWatermark);
    }
    s.fetchOffset = log.logEndOffset;
  }

  /**
   * Kafka's TierStateMachine.start: what this replica lacks is only in the remote tier, so it
   * starts over at the leader's local log start, with its epochs and producer state rebuilt from
   * the tier, and copies only the local window.
   */
  private async onOffsetMovedToTieredStorage(s: FetchState): Promise<void> {
    const link = this.link;
    const restore = this.ports.restoreFromRemoteTier;
    if (link === null) return;
    if (restore === undefined) { this.delay([s]); return; }
    const p = s.partition;
    const localStart = await this.leaderOffset(link, s, EARLIEST_LOCAL_TIMESTAMP);
    if (localStart === null || !this.holds(s)) return;
    const logStart = await this.leaderOffset(link, s, EARLIEST_TIMESTAMP);
    if (logStart === null || !this.holds(s)) return;
    if (!(await restore(p, localStart, logStart)) || !this.holds(s)) { this.delay([s]); return; }
    this.ports.logger?.info(`${partitionName(p.topic, p.index)}: below the leader's local log start; restarted at ${localStart} (log start ${logStart}) from the remote tier`);
    p.highWatermark = p.log.logEndOffset;
    p.log.updateHighWatermark(p.highWatermark);
    s.fetchOffset = p.log.logEndOffset;
  }

  /** The leader's latest (log end) or earliest offset by ListOffsets as a replica; null after a per-partition error (backed off). */
  private async leaderOffset(link: LeaderLink, s: FetchState, timestamp: bigint): Promise<number | null> {
    const p = s.partition;
    const response = await link.send(LIST_OFFSETS, link.version(LIST_OFFSETS), {
      replicaId: this.ports.brokerId, isolationLevel: 0, timeoutMs: 0,
      topics: [{ name: p.topic, partitions: [{ partitionIndex: p.index, currentLeaderEpoch: s.leaderEpoch, timestamp, maxNumOffsets: 1 }] }],
    });
    const r = response.topics.find((t: any) => t.name === p.topic)?.partitions.find((x: any) => x.partitionIndex === p.index);
    if (r === undefined || r.errorCode !== ErrorCode.NONE) {
      if (r?.errorCode === ErrorCode.FENCED_LEADER_EPOCH) this.fail(s, `the leader's epoch is newer than ${s.leaderEpoch}`);
      else this.delay([s]);
      return null;
    }
    return Number(r.offset);
  }
}

/**
 * Kafka's ReplicaFetcherManager behind the replica manager's ReplicaFetchers port: partitions go to
 * the fetcher of their leader and fetcher id, created on first use; a fetcher left without
 * partitions is closed.
 */
export class ReplicaFetcherManager implements ReplicaFetchers {
  private readonly fetchers = new Map<string, ReplicaFetcher>();
  /** Which fetcher holds each partition. */
  private readonly owner = new Map<string, ReplicaFetcher>();
  private readonly closings = new Set<Promise<void>>();
  private closed = false;

  constructor(readonly config: ReplicaFetcherConfig, private readonly ports: ReplicaFetcherPorts) {}

  addFetcherForPartitions(partitions: readonly Partition[]): void {
    if (this.closed) return;
    for (const p of partitions) {
      if (p.leaderId < 0 || p.isLeader) continue;
      const topicId = this.ports.topicId(p.topic);
      if (topicId === undefined) {
        this.ports.logger?.warn(`${partitionName(p.topic, p.index)}: no topic id in the metadata; not fetching`);
        continue;
      }
      this.removeOne(p);
      const id = fetcherIdFor(p.topic, p.index, this.config.numFetchers);
      const k = `${p.leaderId}/${id}`;
      let f = this.fetchers.get(k);
      if (f === undefined) this.fetchers.set(k, f = new ReplicaFetcher(p.leaderId, id, this.config, this.ports));
      f.add(p, topicId);
      this.owner.set(partitionKey(p.topic, p.index), f);
    }
  }

  removeFetcherForPartitions(partitions: readonly Partition[]): void {
    for (const p of partitions) this.removeOne(p);
  }

  private removeOne(p: Partition): void {
    const k = partitionKey(p.topic, p.index);
    const f = this.owner.get(k);
    if (f === undefined) return;
    this.owner.delete(k);
    f.remove(p);
    if (f.partitionCount > 0) return;
    // Kafka's shutdownIdleFetcherThreads, done at once.
    this.fetchers.delete(`${f.leaderId}/${f.fetcherId}`);
    const closing = f.close();
    this.closings.add(closing);
    void closing.finally(() => this.closings.delete(closing));
  }

  /** The fetcher holding a partition (tests and metrics). */
  fetcherOf(p: Partition): ReplicaFetcher | undefined { return this.owner.get(partitionKey(p.topic, p.index)); }
  /** A partition's fetch state as a diagnostic line: its fetcher's view, or why none fetches it. */
  describe(p: Partition): string {
    const f = this.owner.get(partitionKey(p.topic, p.index));
    if (f === undefined) return 'no fetcher';
    return f.describe(p) ?? `dropped by fetcher ${f.fetcherId} to broker ${f.leaderId} (failed, awaiting a leader change)`;
  }
  get fetcherCount(): number { return this.fetchers.size; }

  /** Stops every fetcher (broker shutdown); resolves once none is running. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.fetchers.values()].map((f) => f.close());
    this.fetchers.clear();
    this.owner.clear();
    await Promise.all([...all, ...this.closings]);
  }
}
