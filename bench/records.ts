// Records room benchmark: CRC32C throughput, record iteration rate, and each codec's speed on 1 MiB
// batches of JSON-like records. Prints JSON when run directly (node dist/bench/records.js).
import { pathToFileURL } from 'node:url';
import {
  Compression, RecordBatchView, buildRecordBatchSync, compress, crc32c, decompress, forEachRecord, iterateRecords,
  type RecordCursor,
} from '../src/records/index.js';
import { crc32cImplementation, crc32cIsNative } from '../src/records/crc32c.js';
import { Prng } from '../src/util/index.js';

function seconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** Runs fn repeatedly for at least minSeconds; returns calls per second. */
async function rate(fn: () => unknown, minSeconds = 0.5): Promise<number> {
  for (let i = 0; i < 3; i++) await fn();
  let calls = 0;
  const start = process.hrtime.bigint();
  do { await fn(); calls++; } while (seconds(start) < minSeconds);
  return calls / seconds(start);
}

function jsonRecords(prng: Prng, targetBytes: number): { key: Buffer; value: Buffer }[] {
  const events = ['page_view', 'add_to_cart', 'checkout', 'search', 'login'];
  const out: { key: Buffer; value: Buffer }[] = [];
  let bytes = 0;
  for (let i = 0; bytes < targetBytes; i++) {
    const value = Buffer.from(JSON.stringify({
      id: i, user: `user-${prng.int(5000)}`, event: events[prng.int(events.length)], ts: 1_700_000_000_000 + i * 13,
      path: `/products/${prng.int(100000)}`, price: Math.round(prng.next() * 100000) / 100, session: prng.nextUint32().toString(16),
    }));
    out.push({ key: Buffer.from(`user-${prng.int(5000)}`), value });
    bytes += value.length + 20;
  }
  return out;
}

export async function benchRecords(): Promise<object> {
  const prng = new Prng(1);
  const big = Buffer.alloc(16 << 20);
  for (let i = 0; i < big.length; i += 4) big.writeUInt32LE(prng.nextUint32(), i);
  const crcPerSec = await rate(() => crc32c(big));

  // 1000 records of 100 value bytes per batch, 100 batches.
  const batches = Array.from({ length: 100 }, (_, b) => new RecordBatchView(buildRecordBatchSync({
    baseOffset: b * 1000,
    records: Array.from({ length: 1000 }, (_, i) => ({ key: Buffer.from(`key-${i % 100}`), value: Buffer.alloc(100, 97 + (i % 26)) })),
  })));
  const bodies = batches.map((v) => v.body());
  let sink = 0;
  const visit = (c: RecordCursor): void => { sink += c.valueLength; };
  const cursorRate = await rate(() => { for (let i = 0; i < batches.length; i++) forEachRecord(batches[i]!, bodies[i]!, visit); });
  const generatorRate = await rate(() => {
    for (let i = 0; i < batches.length; i++) for (const r of iterateRecords(batches[i]!, bodies[i]!)) sink += r.value!.length;
  });

  const body = new RecordBatchView(buildRecordBatchSync({ records: jsonRecords(prng, 1 << 20) })).body();
  const mb = body.length / (1 << 20);
  const codecs: Record<string, { ratio: number; compressMBps: number; decompressMBps: number }> = {};
  for (const codec of [Compression.Gzip, Compression.Snappy, Compression.Lz4, Compression.Zstd]) {
    const packed = await compress(codec, body);
    codecs[Compression[codec].toLowerCase()] = {
      ratio: Math.round((body.length / packed.length) * 100) / 100,
      compressMBps: Math.round(mb * (await rate(() => compress(codec, body)))),
      decompressMBps: Math.round(mb * (await rate(() => decompress(codec, packed)))),
    };
  }
  const records = batches.length * 1000;
  return {
    node: process.version,
    crc32c: { native: crc32cIsNative, implementation: crc32cImplementation, bufferBytes: big.length, GBps: Math.round(crcPerSec * big.length / 1e9 * 100) / 100 },
    iteration: {
      recordValueBytes: 100,
      cursorRecordsPerSec: Math.round(cursorRate * records),
      generatorRecordsPerSec: Math.round(generatorRate * records),
      sink: sink > 0,
    },
    codecs: { batchBytes: body.length, ...codecs },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(JSON.stringify(await benchRecords(), null, 2));
}
