// bench/protocol: the protocol and records codecs against this machine's own memory bandwidth.
//   npm run bench:protocol        (prints one JSON object)
// Figures are throughput of the operation named; "GB/s equivalent" divides the bytes of the
// frame by the time to decode it (records stay bytes, so this is mostly structure and headers).
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import {
  decodeRequest, encodeRequestFrame, encodeResponseFrame, decodeResponse, ZERO_UUID,
} from '../src/protocol/index.js';
import { iterateBatches, buildRecordBatchSync } from '../src/records/index.js';
import { benchRecords } from './records.js';

const GB = 1e9;

/** Runs fn repeatedly for about `ms` milliseconds; returns operations per second. */
function opsPerSecond(fn: () => void, ms = 1000): number {
  for (let i = 0; i < 3; i++) fn(); // warm up
  let ops = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    fn();
    ops++;
    if ((ops & 7) === 0) now = performance.now();
  }
  now = performance.now();
  return ops / ((now - start) / 1000);
}

function memcpyGBps(): number {
  const src = Buffer.alloc(64 * 1024 * 1024, 1);
  const dst = Buffer.alloc(src.length);
  return (opsPerSecond(() => { src.copy(dst); }) * src.length) / GB;
}

/** A Produce v9 request of about 1 MiB: 16 partitions, each one batch of 64 KiB of 1 KiB records. */
function produceRequest(): Buffer {
  const value = Buffer.alloc(1000, 0x61);
  const batch = buildRecordBatchSync({ records: Array.from({ length: 64 }, (_, i) => ({ key: Buffer.from(`k${i}`), value })) });
  const body = {
    transactionalId: null, acks: -1, timeoutMs: 30000,
    topicData: [{ name: 'bench', partitionData: Array.from({ length: 16 }, (_, index) => ({ index, records: batch })) }],
  };
  return Buffer.concat(encodeRequestFrame(0, 9, 1, 'bench', body)).subarray(4);
}

function decodeProduce(frame: Buffer): number {
  const { body } = decodeRequest(frame) as { body: any };
  let batches = 0;
  for (const t of body.topicData) {
    for (const p of t.partitionData) {
      for (const view of iterateBatches(p.records)) batches += view.recordCount > 0 ? 1 : 0;
    }
  }
  return batches;
}

function metadataResponse(partitions: number): object {
  const topics = Array.from({ length: partitions / 10 }, (_, t) => ({
    errorCode: 0, name: `topic-${t}`, topicId: ZERO_UUID, isInternal: false, topicAuthorizedOperations: -2147483648,
    partitions: Array.from({ length: 10 }, (_, p) => ({
      errorCode: 0, partitionIndex: p, leaderId: 1 + (p % 3), leaderEpoch: 5, replicaNodes: [1, 2, 3], isrNodes: [1, 2, 3], offlineReplicas: [],
    })),
  }));
  return {
    throttleTimeMs: 0, clusterId: 'bench', controllerId: 1,
    brokers: [1, 2, 3].map((nodeId) => ({ nodeId, host: `broker-${nodeId}`, port: 9092, rack: null })), topics,
  };
}

export async function benchProtocol(): Promise<Record<string, unknown>> {
  const produce = produceRequest();
  const produceOps = opsPerSecond(() => { decodeProduce(produce); });
  const md = metadataResponse(10_000);
  const mdFrame = Buffer.concat(encodeResponseFrame(3, 12, 1, md));
  const mdEncodeOps = opsPerSecond(() => { encodeResponseFrame(3, 12, 1, md); });
  const mdDecodeOps = opsPerSecond(() => { decodeResponse(3, 12, mdFrame.subarray(4)); });
  return {
    machine: { memcpyGBps: round(memcpyGBps()) },
    produceRequestDecode: {
      frameBytes: produce.length,
      requestsPerSecond: round(produceOps),
      gbpsEquivalent: round((produceOps * produce.length) / GB),
    },
    metadataResponse10kPartitions: {
      frameBytes: mdFrame.length,
      encodesPerSecond: round(mdEncodeOps),
      encodeMs: round(1000 / mdEncodeOps),
      decodesPerSecond: round(mdDecodeOps),
      decodeMs: round(1000 / mdDecodeOps),
    },
  };
}

const round = (x: number): number => Math.round(x * 1000) / 1000;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const protocol = await benchProtocol();
  const records = await benchRecords();
  console.log(JSON.stringify({ bench: 'protocol', node: process.version, ...protocol, records }, null, 2));
}
