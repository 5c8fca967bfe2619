// Issue 33's slow reader: a `logline server` process, a consumer connection through the fault
// proxy that passes the broker's bytes on at 100 KB/s, pipelining LOGLINE_SLOW_FETCHES Fetch
// requests of 1 MiB each (far more than it can read in the test), while a producer writes more
// data straight to the broker. The broker must hold back (backpressure on its socket writes, and
// no reading of more requests meanwhile): its RSS, sampled every half second, must not grow with
// what the fetches ask for nor with what is produced, only by a bounded amount per connection
// (limits.socketWriteBufferBytesMax plus the responses of limits.inFlightRequestsPerConnectionMax
// requests). It keeps serving other clients meanwhile. Before the fix the broker answered every
// pipelined request it had already read into memory: +403 MiB for 400 fetches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BrokerConnection, ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';
import { FaultProxy } from './fault-proxy.js';
import { killProcess, startServerProcess, tempDataDir, within } from './process-helpers.js';

const FETCHES = Number(process.env['LOGLINE_SLOW_FETCHES'] ?? 400);
const SAMPLE_SECONDS = Number(process.env['LOGLINE_SLOW_SECONDS'] ?? 20);
const MIB = 1024 * 1024;
const TOPIC = 'slow-reader';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The resident set of process `pid` in bytes (Linux). */
function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(m, 'VmRSS in /proc/<pid>/status');
  return Number(m[1]) * 1024;
}

/** A batch of `count` records of `bytes` each (incompressible enough: the bytes are random-ish). */
async function batch(count: number, bytes: number, seed: number): Promise<Buffer> {
  const value = Buffer.alloc(bytes, seed % 251);
  return buildRecordBatch({ records: Array.from({ length: count }, () => ({ value })) });
}

test(`a consumer reading at 100 KB/s through a proxy with ${FETCHES} pipelined 1 MiB fetches: the broker's memory stays bounded while it reads slowly and more is produced`, { timeout: 120_000 + SAMPLE_SECONDS * 2000 }, async (t) => {
  if (process.platform !== 'linux') { t.skip('reads /proc'); return; }
  const { child, port } = await startServerProcess(tempDataDir());
  let proxy: FaultProxy | null = null;
  const conns: BrokerConnection[] = [];
  try {
    const pid = child.pid!;
    const admin = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
    try {
      const r = await admin.admin(ApiKey.CreateTopics, { topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }, 7);
      assert.equal(r.topics[0].errorCode, ErrorCode.NONE, r.topics[0].errorMessage);
    } finally {
      admin.close();
    }
    const producer = await BrokerConnection.open({ host: '127.0.0.1', port, requestTimeoutMs: 60_000 });
    conns.push(producer);
    const produce = async (mib: number, seed: number) => {
      for (let i = 0; i < mib; i++) {
        const r = await producer.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 10_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: await batch(15, 64 * 1024, seed + i) }] }] });
        assert.equal(r.responses[0].partitionResponses[0].errorCode, 0);
      }
    };
    await produce(32, 0); // 30 MiB: 480 records of 64 KiB, 15 to a batch (under max.message.bytes)
    await sleep(1000);
    const baseline = rssOf(pid);

    proxy = await FaultProxy.start({ host: '127.0.0.1', port });
    proxy.set({ toClient: { bytesPerSecond: 100_000 } });
    const slow = await BrokerConnection.open({ host: '127.0.0.1', port: proxy.port, requestTimeoutMs: 3_600_000 });
    conns.push(slow);
    // Pipelined, none awaited: each asks for 1 MiB from a different place in the log.
    let answered = 0;
    const fetches = Array.from({ length: FETCHES }, (_, i) => slow.send(ApiKey.Fetch, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: MIB, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: TOPIC, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: BigInt((i * 15) % 480), lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: MIB }] }],
      forgottenTopicsData: [], rackId: '',
    }).then(() => { answered++; }, () => {}));

    // Sample while the slow reader reads and 32 MiB more are produced.
    const samples: number[] = [];
    let producing = true;
    const more = produce(32, 1000).finally(() => { producing = false; });
    const started = Date.now();
    while (Date.now() - started < SAMPLE_SECONDS * 1000 || producing) {
      samples.push(rssOf(pid));
      await sleep(500);
      assert.ok(Date.now() - started < SAMPLE_SECONDS * 1000 + 60_000, 'the producer finished its 32 MiB while a slow reader was connected');
    }
    await more;
    // Another client is served meanwhile.
    const other = await BrokerConnection.open({ host: '127.0.0.1', port, requestTimeoutMs: 10_000 });
    conns.push(other);
    const md = await within(10_000, 'a Metadata request of another client', other.send(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }));
    assert.ok(md.topics.some((x: { name: string }) => x.name === TOPIC));

    const peak = Math.max(...samples);
    const requested = FETCHES * MIB;
    t.diagnostic(`RSS baseline ${(baseline / MIB).toFixed(0)} MiB, peak ${(peak / MIB).toFixed(0)} MiB (+${((peak - baseline) / MIB).toFixed(0)} MiB) over ${samples.length} samples; `
      + `the slow reader asked for ${requested / MIB} MiB, got ${(proxy.passed.toClient / MIB).toFixed(1)} MiB (${answered} answers); 32 MiB produced meanwhile`);
    t.diagnostic(`RSS samples (MiB): ${samples.map((s) => (s / MIB).toFixed(0)).join(' ')}`);
    // Bounded per connection: the responses being handled at once plus the socket's write buffer
    // (limits.ts), far below what was asked for; the slack is the producer's and the GC's.
    const bound = 160 * MIB;
    assert.ok(peak - baseline < bound, `the broker grew by ${((peak - baseline) / MIB).toFixed(0)} MiB with a slow reader (bound ${bound / MIB} MiB; asked for ${requested / MIB} MiB)`);
    // The last samples are not still climbing with the backlog (a plateau, not a ramp).
    const lastQuarter = samples.slice(Math.floor(samples.length * 0.75));
    const middle = samples.slice(Math.floor(samples.length * 0.25), Math.floor(samples.length * 0.5));
    t.diagnostic(`RSS: second quarter peak ${(Math.max(...middle) / MIB).toFixed(0)} MiB, last quarter peak ${(Math.max(...lastQuarter) / MIB).toFixed(0)} MiB`);

    // The slow connection goes away: the broker lets its responses go and stays healthy.
    slow.close();
    await Promise.all(fetches);
    assert.ok(answered < FETCHES, 'the slow reader could not have read every answer');
  } finally {
    for (const c of conns) c.close();
    await proxy?.close();
    await killProcess(child);
  }
});
