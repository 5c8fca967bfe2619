// CRC32C (Castagnoli), the checksum of RecordBatch v2. Native via @node-rs/crc32, with a table-driven
// pure-JS fallback for platforms where the native package cannot load.
import { createRequire } from 'node:module';

type Crc32cFn = (input: Uint8Array, initialState?: number | null) => number;

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

function loadNative(): Crc32cFn | null {
  try {
    // A synchronous load is needed here: crc32c is called on the produce path without awaiting.
    const require = createRequire(import.meta.url);
    const mod = require('@node-rs/crc32') as { crc32c: Crc32cFn };
    return typeof mod.crc32c === 'function' ? mod.crc32c : null;
  } catch {
    return null;
  }
}

const native = loadNative();

/** True when the native implementation is in use (reported by the benchmark). */
export const crc32cIsNative = native !== null;

/** CRC32C of `buf`; `initial` continues a previous result, so crc(a+b) == crc32c(b, crc32c(a)). */
export function crc32c(buf: Uint8Array, initial = 0): number {
  if (native !== null) return native(buf, initial) >>> 0;
  return crc32cJs(buf, initial);
}
