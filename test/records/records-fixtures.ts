// Shared by tests that read captured record batches: decodes every batch of a file (or of bytes),
// checking each one the way a broker does on produce.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  RecordBatchView, iterateBatches, readRecords, validateBatch, type Record,
} from '../../src/records/index.js';

export const recordsFixtureDir = join(process.cwd(), 'test', 'fixtures', 'records');

export interface DecodedBatch { view: RecordBatchView; records: Record[] }

/** Every batch of a file of concatenated RecordBatch v2 bytes, validated and decoded. */
export async function decodeFixtureBatches(pathOrBytes: string | Buffer, opts: { validate?: boolean } = {}): Promise<DecodedBatch[]> {
  const buf = typeof pathOrBytes === 'string' ? readFileSync(pathOrBytes) : pathOrBytes;
  const out: DecodedBatch[] = [];
  for (const view of iterateBatches(buf)) {
    if (opts.validate ?? true) validateBatch(view);
    out.push({ view, records: await readRecords(view) });
  }
  return out;
}
