// CRC32C (Castagnoli), the checksum of RecordBatch v2. Three implementations, best first:
// - "sse4.2": our addon (src/records/native/crc32c.c, built at install into build/crc32c.node), three
//   interleaved chains of the crc32 instruction: ~15 GB/s on 16 KiB batches here;
// - "@node-rs/crc32": the native package, one chain: ~3-5 GB/s;
// - "js": table-driven, for platforms where neither loads.
// LOGLINE_CRC32C=sse4.2|@node-rs/crc32|js picks one (benchmarks compare them; tests check they agree).
import { createRequire } from 'node:module';

type Crc32cFn = (input: Uint8Array, initial?: number) => number;

const TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[n] = c;
  }
  return t;
})();

/** Pure-JS CRC32C; `initial` continues a previous result (pass the earlier return value). */
export function crc32cJs(buf: Uint8Array, initial = 0): number {
  let c = ~initial;
  for (let i = 0; i < buf.length; i++) c = TABLE[(c ^ buf[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

export type Crc32cImplementationName = 'sse4.2' | '@node-rs/crc32' | 'js';

// A synchronous load is needed: crc32c is called on the produce path without awaiting.
const require = createRequire(import.meta.url);

function loadFunction(specifier: string): Crc32cFn | null {
  try {
    const mod = require(specifier) as { crc32c?: Crc32cFn };
    return typeof mod.crc32c === 'function' ? mod.crc32c : null;
  } catch {
    return null;
  }
}

/** Every implementation that loads here, best first (the addon exports nothing without SSE4.2). */
export function crc32cImplementations(): { name: Crc32cImplementationName; crc32c: Crc32cFn }[] {
  const found: { name: Crc32cImplementationName; crc32c: Crc32cFn }[] = [];
  // From dist/src/records/ (and src/records/) up to the package root's build/.
  const addon = loadFunction(new URL('../../../build/crc32c.node', import.meta.url).pathname) ??
    loadFunction(new URL('../../build/crc32c.node', import.meta.url).pathname);
  if (addon !== null) found.push({ name: 'sse4.2', crc32c: addon });
  const nodeRs = loadFunction('@node-rs/crc32');
  if (nodeRs !== null) found.push({ name: '@node-rs/crc32', crc32c: nodeRs });
  found.push({ name: 'js', crc32c: crc32cJs });
  return found;
}

function choose(): { name: Crc32cImplementationName; crc32c: Crc32cFn } {
  const available = crc32cImplementations();
  const wanted = process.env.LOGLINE_CRC32C;
  if (wanted === undefined || wanted === '') return available[0]!;
  const match = available.find((i) => i.name === wanted);
  if (match === undefined) throw new Error(`LOGLINE_CRC32C=${wanted}: not available here (have ${available.map((i) => i.name).join(', ')})`);
  return match;
}

const chosen = choose();
const native: Crc32cFn | null = chosen.name === 'js' ? null : chosen.crc32c;

/** Which implementation crc32c uses (reported by the benchmarks). */
export const crc32cImplementation: Crc32cImplementationName = chosen.name;

/** True when a native implementation is in use (reported by the benchmarks). */
export const crc32cIsNative = native !== null;

/** CRC32C of `buf`; `initial` continues a previous result, so crc(a+b) == crc32c(b, crc32c(a)). */
export function crc32c(buf: Uint8Array, initial = 0): number {
  if (native !== null) return native(buf, initial) >>> 0;
  return crc32cJs(buf, initial);
}

// Combining CRCs. CRC32C is linear over GF(2): the register after a run of zero bytes is a fixed
// 32x32 bit matrix times the register before it, and crc(A || B) = Z(len B) · crc(A) xor crc(B),
// where Z(n) is that matrix for n zero bytes (the initial and final inversions cancel out). So a
// batch whose header changes but whose records do not (a producer's sequence stamped into a
// reused batch) needs a CRC over 40 header bytes plus one matrix application, not over its body.

/** A 32x32 matrix over GF(2) as 32 columns: column i is the image of register bit i. */
type BitMatrix = Uint32Array;

function applyMatrix(m: BitMatrix, v: number): number {
  let out = 0;
  for (let i = 0; v !== 0; i++, v >>>= 1) if (v & 1) out ^= m[i]!;
  return out >>> 0;
}

function multiplyMatrices(a: BitMatrix, b: BitMatrix): BitMatrix {
  const out = new Uint32Array(32);
  for (let i = 0; i < 32; i++) out[i] = applyMatrix(a, b[i]!);
  return out;
}

/** The matrix that advances the CRC register over `bytes` zero bytes. */
export function crc32cZerosOperator(bytes: number): Uint32Array {
  // One zero bit: the register shifts right, and the polynomial comes in when bit 0 falls out.
  let step: BitMatrix = new Uint32Array(32);
  step[0] = 0x82f63b78;
  for (let i = 1; i < 32; i++) step[i] = 1 << (i - 1);
  for (let k = 0; k < 3; k++) step = multiplyMatrices(step, step); // 8 bits: one byte
  let result: BitMatrix | null = null;
  for (let n = bytes; n > 0; n = Math.floor(n / 2)) {
    if (n % 2 === 1) result = result === null ? step : multiplyMatrices(step, result);
    if (n > 1) step = multiplyMatrices(step, step);
  }
  if (result === null) {
    result = new Uint32Array(32);
    for (let i = 0; i < 32; i++) result[i] = (1 << i) >>> 0;
  }
  return result;
}

/**
 * crc32c(A || B) from crc32c(A), crc32c(B) and B's length (pass `zeros`, crc32cZerosOperator of
 * that length, when combining many times with one length).
 */
export function crc32cCombine(crcA: number, crcB: number, lengthB: number, zeros: Uint32Array = crc32cZerosOperator(lengthB)): number {
  return (applyMatrix(zeros, crcA >>> 0) ^ crcB) >>> 0;
}
