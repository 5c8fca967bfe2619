// Kafka's RequestMetrics as /metrics reports them: requests and total time per API and version, and
// every error code a response carries (top level, per topic, per partition), NONE included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestMetrics, REQUEST_LATENCY_BUCKETS_MS } from '../../src/network/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';

const errorsOf = (m: RequestMetrics, apiKey: number): Map<number, number> => {
  const s = [...m.apis()].find(([k]) => k === apiKey)?.[1];
  const out = new Map<number, number>();
  s?.errors.forEach((n, i) => { if (n > 0) out.set(i - 1, n); });
  return out;
};

test('a Produce response counts each partition\'s error code; a Fetch response its top-level code too', () => {
  const m = new RequestMetrics();
  m.record(ApiKey.Produce, 9, 3, { responses: [
    { name: 'a', partitionResponses: [{ index: 0, errorCode: ErrorCode.NONE }, { index: 1, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER }] },
    { name: 'b', partitionResponses: [{ index: 0, errorCode: ErrorCode.NONE }] },
  ], throttleTimeMs: 0 });
  assert.deepEqual(errorsOf(m, ApiKey.Produce), new Map([[ErrorCode.NONE, 2], [ErrorCode.NOT_LEADER_OR_FOLLOWER, 1]]));
  m.record(ApiKey.Fetch, 12, 0.2, { errorCode: ErrorCode.NONE, responses: [{ topic: 't', partitions: [{ errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, records: Buffer.alloc(3) }] }] });
  assert.deepEqual(errorsOf(m, ApiKey.Fetch), new Map([[ErrorCode.NONE, 1], [ErrorCode.OFFSET_OUT_OF_RANGE, 1]]));
});

test('other APIs\' error codes are found at any level; an unknown code counts as UNKNOWN_SERVER_ERROR', () => {
  const m = new RequestMetrics();
  m.record(ApiKey.CreateTopics, 7, 1, { throttleTimeMs: 0, topics: [{ name: 'x', errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, configs: [] }, { name: 'y', errorCode: 9999 }] });
  assert.deepEqual(errorsOf(m, ApiKey.CreateTopics), new Map([[ErrorCode.TOPIC_ALREADY_EXISTS, 1], [ErrorCode.UNKNOWN_SERVER_ERROR, 1]]));
});

test('requests and total time per version: each request in the first bucket at or above its time, acks=0 produces counted without a response', () => {
  const m = new RequestMetrics();
  m.record(ApiKey.Produce, 9, 0.1, null);
  m.record(ApiKey.Produce, 9, 7, null);
  m.record(ApiKey.Produce, 3, 1e9, null);
  const s = [...m.apis()].find(([k]) => k === ApiKey.Produce)![1];
  assert.equal(s.requests[9], 2);
  assert.equal(s.requests[3], 1);
  assert.equal(s.latencySumMs[9], 7.1);
  const v9 = [...s.latencyBuckets[9]!];
  assert.equal(v9[0], 1, '0.1 ms in le=0.5');
  assert.equal(v9[REQUEST_LATENCY_BUCKETS_MS.indexOf(10)], 1, '7 ms in le=10');
  assert.equal(s.latencyBuckets[3]![REQUEST_LATENCY_BUCKETS_MS.length], 1, 'past the last bound: +Inf');
  assert.equal(errorsOf(m, ApiKey.Produce).size, 0);
});
