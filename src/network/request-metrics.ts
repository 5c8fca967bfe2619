// Kafka's RequestMetrics (kafka.network:type=RequestMetrics): requests, total time and error codes
// per API. Counted into preallocated typed arrays indexed by API key and version, so recording a
// request allocates nothing; the HTTP room reads them when /metrics is scraped.
import { limits } from '../util/index.js';

/** Upper bounds (ms) of the total-time histogram's buckets; the last bucket is +Inf. */
export const REQUEST_LATENCY_BUCKETS_MS: readonly number[] = Object.freeze([0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000]);

/** Error codes are -1 (UNKNOWN_SERVER_ERROR) up to this bound; anything past it is counted as -1. */
const ERROR_CODE_BOUND = 160;

export interface ApiRequestStats {
  /** Requests per version (index = version). */
  readonly requests: Float64Array;
  /** Per version: REQUEST_LATENCY_BUCKETS_MS.length + 1 non-cumulative bucket counts. */
  readonly latencyBuckets: Float64Array[];
  /** Per version: total time, ms. */
  readonly latencySumMs: Float64Array;
  /** Responses' error codes (index = code + 1), top level and per resource, NONE included (Kafka's ErrorsPerSec). */
  readonly errors: Float64Array;
}

export class RequestMetrics {
  private readonly byApi: (ApiRequestStats | undefined)[] = [];

  /** Counts one answered request: its time from dispatch to encoded response, and every error code in its response. */
  record(apiKey: number, version: number, totalMs: number, response: object | null): void {
    if (apiKey < 0 || apiKey >= limits.apiKeyBound || version < 0 || version >= limits.apiVersionBound) return;
    const s = this.byApi[apiKey] ??= newStats();
    s.requests[version]!++;
    s.latencySumMs[version]! += totalMs;
    const buckets = s.latencyBuckets[version]!;
    let b = 0;
    while (b < REQUEST_LATENCY_BUCKETS_MS.length && totalMs > REQUEST_LATENCY_BUCKETS_MS[b]!) b++;
    buckets[b]!++;
    if (response === null) return;
    // The hot paths' shapes are walked directly; a generic walk costs several times more.
    if (apiKey === PRODUCE) countNested(response as ProduceShape, 'responses', 'partitionResponses', s.errors);
    else if (apiKey === FETCH) {
      count((response as { errorCode?: number }).errorCode, s.errors);
      countNested(response as FetchShape, 'responses', 'partitions', s.errors);
    } else countErrors(response, s.errors, 0);
  }

  /** Each API key with requests so far. */
  *apis(): IterableIterator<[number, ApiRequestStats]> {
    for (let k = 0; k < this.byApi.length; k++) {
      const s = this.byApi[k];
      if (s !== undefined) yield [k, s];
    }
  }
}

const PRODUCE = 0;
const FETCH = 1;
type ProduceShape = { responses?: { partitionResponses?: { errorCode: number }[] }[] };
type FetchShape = { responses?: { partitions?: { errorCode: number }[] }[] };

function count(code: number | undefined, errors: Float64Array): void {
  if (code === undefined) return;
  errors[code >= -1 && code < ERROR_CODE_BOUND ? code + 1 : 0]!++;
}

function countNested<K1 extends string, K2 extends string>(o: { [k in K1]?: { [j in K2]?: { errorCode: number }[] }[] }, outer: K1, inner: K2, errors: Float64Array): void {
  const topics = o[outer];
  if (topics === undefined) return;
  for (let i = 0; i < topics.length; i++) {
    const partitions = topics[i]![inner];
    if (partitions === undefined) continue;
    for (let j = 0; j < partitions.length; j++) count(partitions[j]!.errorCode, errors);
  }
}

function newStats(): ApiRequestStats {
  const versions = limits.apiVersionBound;
  return {
    requests: new Float64Array(versions),
    latencyBuckets: Array.from({ length: versions }, () => new Float64Array(REQUEST_LATENCY_BUCKETS_MS.length + 1)),
    latencySumMs: new Float64Array(versions),
    errors: new Float64Array(ERROR_CODE_BOUND + 1),
  };
}

/**
 * Kafka's AbstractResponse.errorCounts: the top-level error code and each topic's and partition's.
 * Walks `errorCode` fields down to three levels of arrays (Fetch: responses, partitions) without
 * allocating: for..in over plain decoded objects.
 */
function countErrors(o: object, errors: Float64Array, depth: number): void {
  const rec = o as Record<string, unknown>;
  for (const k in rec) {
    const v = rec[k];
    if (k === 'errorCode' && typeof v === 'number') count(v, errors);
    else if (depth < 3 && Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const e = v[i];
        if (typeof e === 'object' && e !== null && !Buffer.isBuffer(e)) countErrors(e, errors, depth + 1);
      }
    }
  }
}
