// Client quotas (Kafka's ClientQuotaManager, ClientRequestQuotaManager and
// ControllerMutationQuotaManager): producer_byte_rate, consumer_byte_rate, request_percentage and
// controller_mutation_rate per user and/or client id, from the ClientQuotaRecords in the metadata
// image. A client over its quota is answered at once with throttle_time_ms and its connection is
// muted for that long (KIP-219); the network layer does the muting (src/network/socket-server.ts), this file decides
// how long.
//
// Which quota applies is Kafka's DefaultQuotaCallback: the first of user+client-id, user+default
// client-id, user, default user+client-id, default user+default client-id, default user,
// client-id, default client-id that sets the key. The level that matched also decides who shares
// the measured rate: a user-level quota is one rate for all of that user's client ids.
//
// Rates are measured over a SampledStat of quota.window.num samples of quota.window.size.seconds,
// and throttle time = (observed − quota) / quota × window, uncapped for byte rates and capped at
// one window for request_percentage, as in Kafka. One deliberate difference: the window is
// Kafka's SimpleRate one (time since the oldest sample, at least one window), not Rate's, which
// counts a fresh or idle client's bytes over at least (samples − 1) windows. That lets such a
// client send quota × 10 s at once, and with a producer that always has more to send the burst
// comes back every time its sample expires: simulated with Rate's window, a producer held to
// 1 MB/s moved 0.65 to 1.34 MB/s over 20 s windows; with SimpleRate's, 0.95 to 1.05. controller_mutation_rate is a token bucket (KIP-599) with a
// burst of quota × samples × window: CreateTopics v6+, DeleteTopics v5+ and CreatePartitions v3+
// refuse what comes once it is empty (THROTTLING_QUOTA_EXCEEDED), older versions are throttled.
//
// Time comes from the Clock given, so the whole manager is deterministic under a ManualClock.
// Unlike the replication throttles (src/replication/quota.ts), which bound how many bytes a copy
// may move next, these record first and throttle after, because that is what clients see on Kafka.
import { ApiKey } from '../protocol/index.js';
import { ClientQuotasImage, quotaEntityKey, type QuotaEntityPart } from '../metadata/index.js';
import { QUOTA_WINDOW_DEFAULT, SampledRate, TokenBucket, limits, throttleTimeMs, type Clock, type QuotaWindow } from '../util/index.js';
import type { RequestContext } from './context.js';

export const QuotaKey = {
  ProducerByteRate: 'producer_byte_rate',
  ConsumerByteRate: 'consumer_byte_rate',
  RequestPercentage: 'request_percentage',
  ControllerMutationRate: 'controller_mutation_rate',
} as const;
export type QuotaKey = typeof QuotaKey[keyof typeof QuotaKey];

/** quota.window.num and quota.window.size.seconds of a broker config. */
export function quotaWindowOf(config: { get(name: 'quota.window.num' | 'quota.window.size.seconds'): unknown }): QuotaWindow {
  return { samples: Number(config.get('quota.window.num')), windowMs: Number(config.get('quota.window.size.seconds')) * 1000 };
}

/** The quota that applies to a client, and who shares its rate (the level it was set at). */
export interface ResolvedQuota {
  readonly limit: number;
  /** `user\0client-id` with '' for the part the level does not name. */
  readonly sensorTag: string;
}

type Level = { user: 'name' | 'default' | null; clientId: 'name' | 'default' | null };

/** DefaultQuotaCallback's order (ClientQuotaManager's class comment). */
const LEVELS: readonly Level[] = [
  { user: 'name', clientId: 'name' },
  { user: 'name', clientId: 'default' },
  { user: 'name', clientId: null },
  { user: 'default', clientId: 'name' },
  { user: 'default', clientId: 'default' },
  { user: 'default', clientId: null },
  { user: null, clientId: 'name' },
  { user: null, clientId: 'default' },
];

/**
 * The quota `key` for `user` (a principal's name) and `clientId`, or null when none is set. An
 * empty client id matches no level with a client-id part, as in Kafka.
 */
export function resolveClientQuota(image: ClientQuotasImage, key: string, user: string, clientId: string): ResolvedQuota | null {
  for (const level of LEVELS) {
    if ((level.user !== null && user === '') || (level.clientId !== null && clientId === '')) continue;
    const parts: QuotaEntityPart[] = [];
    if (level.user !== null) parts.push({ entityType: 'user', entityName: level.user === 'name' ? user : null });
    if (level.clientId !== null) parts.push({ entityType: 'client-id', entityName: level.clientId === 'name' ? clientId : null });
    const limit = image.entities.get(quotaEntityKey(parts))?.quotas.get(key);
    if (limit !== undefined) return { limit, sensorTag: `${level.user !== null ? user : ''}\0${level.clientId !== null ? clientId : ''}` };
  }
  return null;
}

interface Sensor { readonly rate: SampledRate; bucket: TokenBucket | null }

/** Throttles handed out, per quota key (Kafka's throttle-time metrics), for /metrics. */
export interface QuotaStats {
  throttledResponses: number;
  throttleTimeMsTotal: number;
  /** Bytes (or %, or partitions) recorded against a quota. */
  recorded: number;
}

export class ClientQuotaManager {
  private quotasImage = ClientQuotasImage.EMPTY;
  /** Quota keys some entity sets: the others cost one Set lookup per request. */
  private enabled: ReadonlySet<string> = new Set();
  /** By quota key, principal and client id: the quota that applies and the rate it is measured by (null: none). */
  private readonly resolved = new Map<string, { quota: ResolvedQuota; sensor: Sensor } | null>();
  private readonly sensors = new Map<string, Sensor>();
  readonly stats = new Map<QuotaKey, QuotaStats>(Object.values(QuotaKey).map((k) => [k, { throttledResponses: 0, throttleTimeMsTotal: 0, recorded: 0 }]));

  constructor(private readonly clock: Clock, readonly window: QuotaWindow = QUOTA_WINDOW_DEFAULT) {}

  /** A new image's quotas: resolutions are looked up again, measured rates stay. */
  update(image: ClientQuotasImage): void {
    if (image === this.quotasImage) return;
    this.quotasImage = image;
    this.resolved.clear();
    const keys = new Set<string>();
    for (const e of image.entities.values()) for (const k of e.quotas.keys()) keys.add(k);
    this.enabled = keys;
  }

  /** The client quotas of the latest image this manager was given. */
  get image(): ClientQuotasImage { return this.quotasImage; }

  isEnabled(key: QuotaKey): boolean { return this.enabled.has(key); }

  quota(key: QuotaKey, principal: string, clientId: string): ResolvedQuota | null {
    return this.lookup(key, principal, clientId)?.quota ?? null;
  }

  /** Resolved once per image and client: a produce pays one string and one map lookup here. */
  private lookup(key: QuotaKey, principal: string, clientId: string): { quota: ResolvedQuota; sensor: Sensor } | null {
    if (!this.enabled.has(key)) return null;
    const cacheKey = `${key}\0${principal}\0${clientId}`;
    let r = this.resolved.get(cacheKey);
    if (r === undefined) {
      const quota = resolveClientQuota(this.quotasImage, key, userOf(principal), clientId);
      r = quota === null ? null : { quota, sensor: this.sensor(key, quota) };
      if (this.resolved.size >= limits.clientQuotaSensorsMax) this.resolved.clear();
      this.resolved.set(cacheKey, r);
    }
    return r;
  }

  /**
   * The most a consumer's fetch may carry (Kafka's maxValueInQuotaWindow): quota × (samples − 1)
   * windows. A larger response could never fit the rate and would be refused every time.
   */
  maxFetchBytes(principal: string, clientId: string): number {
    const q = this.quota(QuotaKey.ConsumerByteRate, principal, clientId);
    if (q === null) return Infinity;
    return Math.max(1, Math.floor(q.limit * (this.window.samples - 1) * (this.window.windowMs / 1000)));
  }

  /** Kafka's recordAndGetThrottleTimeMs: records `value`, then answers how long to throttle (0: within quota). */
  recordAndGetThrottleTimeMs(key: QuotaKey, principal: string, clientId: string, value: number): number {
    const r = this.lookup(key, principal, clientId);
    if (r === null) return 0;
    const q = r.quota;
    const nowMs = this.clock.nowMs();
    const s = r.sensor;
    s.rate.record(value, nowMs);
    const stats = this.stats.get(key)!;
    stats.recorded += value;
    const windowMs = s.rate.windowMs(nowMs);
    let ms = throttleTimeMs(s.rate.total() / (windowMs / 1000), q.limit, windowMs);
    // request_percentage: at most one window (ClientRequestQuotaManager's bound).
    if (key === QuotaKey.RequestPercentage) ms = Math.min(ms, this.window.windowMs);
    if (ms > 0) { stats.throttledResponses++; stats.throttleTimeMsTotal += ms; }
    return ms;
  }

  /** Takes back a recorded value (a throttled fetch answers without its records, as in Kafka). */
  unrecord(key: QuotaKey, principal: string, clientId: string, value: number): void {
    const r = this.lookup(key, principal, clientId);
    if (r === null) return;
    r.sensor.rate.record(-value, this.clock.nowMs());
    this.stats.get(key)!.recorded -= value;
  }

  /**
   * controller_mutation_rate for `permits` partitions created or deleted. Strict (KIP-599 versions):
   * refused while the bucket is in debt, with how long until it is not. Permissive (older
   * versions): always taken, and throttled by the debt it leaves.
   */
  recordMutation(principal: string, clientId: string, permits: number, strict: boolean): { refused: boolean; throttleTimeMs: number } {
    const r = this.lookup(QuotaKey.ControllerMutationRate, principal, clientId);
    if (r === null) return { refused: false, throttleTimeMs: 0 };
    const q = r.quota;
    const nowMs = this.clock.nowMs();
    const s = r.sensor;
    const bucket = s.bucket ??= new TokenBucket(this.window);
    const debtMs = (tokens: number) => tokens >= 0 ? 0 : q.limit <= 0 ? limits.clientQuotaThrottleMsMax : Math.min(Math.round((-tokens / q.limit) * 1000), limits.clientQuotaThrottleMsMax);
    const stats = this.stats.get(QuotaKey.ControllerMutationRate)!;
    if (strict) {
      const waitMs = debtMs(bucket.measure(q.limit, nowMs));
      if (waitMs > 0 || q.limit <= 0) {
        stats.throttledResponses++;
        stats.throttleTimeMsTotal += waitMs;
        return { refused: true, throttleTimeMs: waitMs };
      }
    }
    bucket.record(permits, q.limit, nowMs);
    s.rate.record(permits, nowMs);
    stats.recorded += permits;
    const ms = strict ? 0 : debtMs(bucket.measure(q.limit, nowMs));
    if (ms > 0) { stats.throttledResponses++; stats.throttleTimeMsTotal += ms; }
    return { refused: false, throttleTimeMs: ms };
  }

  /** Each measured rate now (Kafka's per user/client-id byte-rate and request-time metrics); '' for a part its quota level does not name. */
  rates(): { key: QuotaKey; user: string; clientId: string; rate: number }[] {
    const nowMs = this.clock.nowMs();
    return [...this.sensors].map(([name, s]) => {
      const [key, user, clientId] = name.split('\0') as [QuotaKey, string, string];
      return { key, user, clientId, rate: s.rate.measure(nowMs) };
    });
  }

  private sensor(key: QuotaKey, q: ResolvedQuota): Sensor {
    const name = `${key}\0${q.sensorTag}`;
    let s = this.sensors.get(name);
    if (s === undefined) {
      // The oldest created goes first (Kafka expires a sensor after an hour unused; a full table is rarer than that).
      if (this.sensors.size >= limits.clientQuotaSensorsMax) {
        this.sensors.delete(this.sensors.keys().next().value!);
        // Resolutions hold their sensors: none may keep measuring on one that is gone.
        this.resolved.clear();
      }
      s = { rate: new SampledRate(this.window), bucket: null };
      this.sensors.set(name, s);
    }
    return s;
  }
}

/** `User:alice` → `alice` (the name quotas are set for). */
function userOf(principal: string): string {
  const i = principal.indexOf(':');
  return i < 0 ? principal : principal.slice(i + 1);
}

/** APIs only brokers and controllers send (Kafka's ClusterAction ones): never throttled. */
const INTER_BROKER_APIS: ReadonlySet<number> = new Set([
  ApiKey.WriteTxnMarkers, ApiKey.AlterPartition, ApiKey.BrokerRegistration, ApiKey.BrokerHeartbeat, ApiKey.AllocateProducerIds,
  ApiKey.SaslHandshake, ApiKey.SaslAuthenticate, ApiKey.ApiVersions,
]);

const EMPTY_RECORDS = Buffer.alloc(0);

/** A follower's fetch (replica id in the request up to v14, in ReplicaState from v15): replication is never client-quota'd. */
function isFollowerFetch(request: object | undefined): boolean {
  const r = request as { replicaId?: number; replicaState?: { replicaId: number } } | undefined;
  return (r?.replicaId ?? -1) >= 0 || (r?.replicaState?.replicaId ?? -1) >= 0;
}

/**
 * What the network layer asks once a request is handled, before its response is encoded: records
 * the request against the client's quotas and answers how long to mute the connection (0: not at
 * all). The response's throttle_time_ms is raised to that, and a throttled fetch loses its records
 * (they are not counted either), as Kafka's KafkaApis does.
 */
export function enforceClientQuotas(quotas: ClientQuotaManager, ctx: RequestContext<unknown>, apiKey: number, request: object | undefined,
  requestBytes: number, handlerMs: number, body: object | null): number {
  if (INTER_BROKER_APIS.has(apiKey)) return 0;
  const { principal } = ctx;
  const clientId = ctx.header.clientId ?? '';
  let bandwidthMs = 0;
  if (apiKey === ApiKey.Produce) {
    bandwidthMs = quotas.recordAndGetThrottleTimeMs(QuotaKey.ProducerByteRate, principal, clientId, requestBytes);
  } else if (apiKey === ApiKey.Fetch) {
    if (isFollowerFetch(request)) return 0;
    if (body !== null && quotas.isEnabled(QuotaKey.ConsumerByteRate)) bandwidthMs = throttleFetch(quotas, principal, clientId, body);
  }
  const requestMs = quotas.isEnabled(QuotaKey.RequestPercentage)
    // A share of one thread over one second: 10 ms of handling is 1%.
    ? quotas.recordAndGetThrottleTimeMs(QuotaKey.RequestPercentage, principal, clientId, (handlerMs * 100) / 1000)
    : 0;
  const b = body as { throttleTimeMs?: number } | null;
  const ms = Math.max(bandwidthMs, requestMs, b?.throttleTimeMs ?? 0);
  if (b !== null && typeof b.throttleTimeMs === 'number') b.throttleTimeMs = ms;
  return ms;
}

type FetchBody = { responses: { partitions: { records: Buffer | null }[] }[] };

function throttleFetch(quotas: ClientQuotaManager, principal: string, clientId: string, body: object): number {
  const f = body as FetchBody;
  let bytes = 0;
  for (const t of f.responses) for (const p of t.partitions) bytes += p.records?.length ?? 0;
  const ms = quotas.recordAndGetThrottleTimeMs(QuotaKey.ConsumerByteRate, principal, clientId, bytes);
  if (ms > 0) {
    quotas.unrecord(QuotaKey.ConsumerByteRate, principal, clientId, bytes);
    for (const t of f.responses) for (const p of t.partitions) if (p.records !== null) p.records = EMPTY_RECORDS;
  }
  return ms;
}

/**
 * One request's controller_mutation_rate (Kafka's Strict/PermissiveControllerMutationQuota):
 * strict from `strictSinceVersion` (each topic refused once the bucket is in debt), permissive
 * below it. `throttleTimeMs` is what the response carries.
 */
export class ControllerMutationQuota {
  throttleTimeMs = 0;

  constructor(private readonly quotas: ClientQuotaManager | undefined, private readonly principal: string, private readonly clientId: string,
    private readonly strict: boolean) {}

  /** Charges `partitions` created or deleted; false when refused (THROTTLING_QUOTA_EXCEEDED). */
  record(partitions: number): boolean {
    if (this.quotas === undefined || partitions <= 0) return true;
    const r = this.quotas.recordMutation(this.principal, this.clientId, partitions, this.strict);
    this.throttleTimeMs = Math.max(this.throttleTimeMs, r.throttleTimeMs);
    return !r.refused;
  }
}

/** KIP-599: from these versions a topic mutation over controller_mutation_rate is refused (THROTTLING_QUOTA_EXCEEDED); older ones are throttled. */
export const STRICT_MUTATION_QUOTA_SINCE = { createTopics: 6, deleteTopics: 5, createPartitions: 3 } as const;

export const THROTTLING_QUOTA_EXCEEDED_MESSAGE = 'The throttling quota has been exceeded.';

export function controllerMutationQuota(quotas: ClientQuotaManager | undefined, ctx: RequestContext<unknown>, strictSinceVersion: number): ControllerMutationQuota {
  return new ControllerMutationQuota(quotas, ctx.principal, ctx.header.clientId ?? '', ctx.apiVersion >= strictSinceVersion);
}
