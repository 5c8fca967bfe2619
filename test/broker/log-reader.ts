// Reads a whole partition back over the wire with Fetch, for tests that check what a log holds.
import assert from 'node:assert/strict';
import type { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { decompressBatchBody, iterateBatches, iterateRecords } from '../../src/records/index.js';

/** Every record value of a partition, in offset order, checking offsets are contiguous from the start. */
export async function consumeAll(client: ClusterClient, topic: string, partition: number): Promise<string[]> {
  const conn = await client.leaderFor(topic, partition);
  const out: string[] = [];
  let offset = 0n;
  for (let round = 0; round < 10_000; round++) {
    const r = await conn.send(ApiKey.Fetch, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 52428800, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1048576 }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const p = r.responses[0].partitions[0];
    assert.equal(p.errorCode, 0);
    if (!p.records || p.records.length === 0) return out;
    for (const batch of iterateBatches(p.records)) {
      for (const rec of iterateRecords(batch, await decompressBatchBody(batch))) {
        if (BigInt(rec.offset) < offset) continue;
        assert.equal(BigInt(rec.offset), offset, 'offsets are contiguous');
        out.push(rec.value!.toString());
        offset++;
      }
    }
  }
  throw new Error('partition did not end');
}

