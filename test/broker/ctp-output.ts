// What an exactly-once consume-transform-produce run must leave: the output topic, read with
// read_committed by test/broker/python/ctp_processor.py, holds each input record transformed
// exactly once and nothing else.
import assert from 'node:assert/strict';
import { runProcess } from './process-helpers.js';

export const PYTHON = '/usr/bin/python3';
export const CTP_SCRIPT = 'test/broker/python/ctp_processor.py';

/** Reads `topic` to its end (read_committed) and checks it holds out-in-0 .. out-in-(inputs-1), each once. */
export async function assertExactlyOnceOutput(bootstrap: string, topic: string, inputs: number): Promise<void> {
  const r = await runProcess(PYTHON, [CTP_SCRIPT, 'read', bootstrap, topic], null, 180_000);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { values: string[]; complete: boolean };
  assert.ok(out.complete, 'the reader reached the end of every partition');
  const counts = new Map<string, number>();
  for (const v of out.values) counts.set(v, (counts.get(v) ?? 0) + 1);
  const duplicates = [...counts].filter(([, n]) => n > 1);
  assert.deepEqual(duplicates.slice(0, 5), [], `${duplicates.length} input records appear more than once`);
  const missing: string[] = [];
  for (let i = 0; i < inputs; i++) if (!counts.has(`out-in-${i}`)) missing.push(`out-in-${i}`);
  assert.deepEqual(missing.slice(0, 5), [], `${missing.length} input records are missing`);
  assert.equal(out.values.length, inputs, 'nothing but the transformed input');
}
