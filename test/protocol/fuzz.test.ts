// Mutated frames for every API and version: the decoder returns a value or throws ProtocolError,
// nothing else, and memory stays bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ProtocolError, decodeFromBuffer, encodeToBuffer, allApis } from '../../src/protocol/index.js';
import { Prng } from '../../src/util/index.js';
import { messageArb } from './arbitrary-helpers.js';

const MUTATIONS_PER_SAMPLE = 25;

function mutate(prng: Prng, frame: Buffer): Buffer {
  const b = Buffer.from(frame);
  switch (prng.int(6)) {
    case 0: { // bit flips
      const flips = 1 + prng.int(4);
      for (let i = 0; i < flips && b.length > 0; i++) b[prng.int(b.length)]! ^= 1 << prng.int(8);
      return b;
    }
    case 1: return b.subarray(0, prng.int(b.length + 1)); // truncation
    case 2: { // a length-like field set huge
      if (b.length < 4) return b;
      const at = prng.int(b.length - 3);
      b.writeInt32BE(0x7fffffff - prng.int(16), at);
      return b;
    }
    case 3: { // negative lengths
      if (b.length < 2) return b;
      const at = prng.int(b.length - 1);
      b.writeInt16BE(-2 - prng.int(100), at);
      return b;
    }
    case 4: { // overlong varint
      const at = prng.int(b.length + 1);
      return Buffer.concat([b.subarray(0, at), Buffer.from([0xff, 0xff, 0xff, 0xff, 0x7f]), b.subarray(at)]);
    }
    default: { // random bytes appended or spliced
      const at = prng.int(b.length + 1);
      const junk = Buffer.alloc(1 + prng.int(8));
      for (let i = 0; i < junk.length; i++) junk[i] = prng.int(256);
      return Buffer.concat([b.subarray(0, at), junk, b.subarray(at)]);
    }
  }
}

test('100,000 mutated request and response frames decode or throw ProtocolError only', () => {
  const prng = new Prng(20261202);
  const targets: { name: string; version: number }[] = [];
  for (const api of allApis()) {
    for (let v = api.validVersions[0]; v <= api.validVersions[1]; v++) {
      targets.push({ name: api.request.name, version: v }, { name: api.response.name, version: v });
    }
  }
  const samplesPerTarget = Math.ceil(100_000 / MUTATIONS_PER_SAMPLE / targets.length);
  const rssBefore = process.memoryUsage().rss;
  let frames = 0;
  let decoded = 0;
  for (const { name, version } of targets) {
    const samples = fc.sample(messageArb(name, version), { numRuns: samplesPerTarget, seed: version * 7919 + name.length });
    for (const value of samples) {
      const frame = encodeToBuffer(name, version, value);
      for (let i = 0; i < MUTATIONS_PER_SAMPLE; i++) {
        const m = mutate(prng, frame);
        frames++;
        try {
          decodeFromBuffer(name, version, m);
          decoded++;
        } catch (err) {
          if (!(err instanceof ProtocolError)) {
            assert.fail(`${name} v${version}: ${String(err)} on frame ${m.toString('hex')}`);
          }
        }
      }
    }
  }
  assert.ok(frames >= 100_000, `only ${frames} frames`);
  assert.ok(decoded > 0 && decoded < frames, `decoded ${decoded} of ${frames}`);
  const growth = process.memoryUsage().rss - rssBefore;
  assert.ok(growth < 512 * 1024 * 1024, `rss grew by ${growth} bytes`);
});
