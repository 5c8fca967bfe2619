// Zigzag varints as RecordBatch v2 records use them (protobuf's encoding). Values are JS numbers:
// varints are int32; varlongs are limited to |v| < 2^52 on write and to safe integers on read.

const TWO_28 = 0x1000_0000;
const VARLONG_ABS_MAX = 2 ** 52;

/** Encoded size of a zigzag varint (int32). */
export function sizeOfVarint(v: number): number {
  let raw = ((v << 1) ^ (v >> 31)) >>> 0;
  let n = 1;
  while (raw >= 0x80) { raw >>>= 7; n++; }
  return n;
}

/** Writes a zigzag varint (int32) at `at`; returns the position after it. */
export function writeVarint(buf: Uint8Array, at: number, v: number): number {
  let raw = ((v << 1) ^ (v >> 31)) >>> 0;
  while (raw >= 0x80) { buf[at++] = (raw & 0x7f) | 0x80; raw >>>= 7; }
  buf[at++] = raw;
  return at;
}

function zigzagLong(v: number): number {
  if (!Number.isInteger(v) || Math.abs(v) >= VARLONG_ABS_MAX) throw new RangeError(`varlong ${v} is out of range`);
  return v >= 0 ? v * 2 : -v * 2 - 1;
}

/** Encoded size of a zigzag varlong. */
export function sizeOfVarlong(v: number): number {
  let raw = zigzagLong(v);
  let n = 1;
  while (raw >= 0x80) { raw = Math.floor(raw / 128); n++; }
  return n;
}

/** Writes a zigzag varlong at `at`; returns the position after it. */
export function writeVarlong(buf: Uint8Array, at: number, v: number): number {
  let raw = zigzagLong(v);
  while (raw >= 0x80) { buf[at++] = (raw % 128) | 0x80; raw = Math.floor(raw / 128); }
  buf[at++] = raw;
  return at;
}

/**
 * Decodes a zigzag varlong whose first four bytes (28 bits, `low28`) are already read, continuing at
 * `at` up to `end`. Returns the value, or NaN when it is malformed, truncated or not a safe integer.
 * Kept apart from the int32 fast path because timestamps deltas are almost always short.
 */
export function readVarlongTail(buf: Uint8Array, at: number, end: number, low28: number, out: { pos: number }): number {
  let hi = 0;
  let scale = 1;
  for (let i = 0; i < 6; i++) {
    if (at >= end) return NaN;
    const b = buf[at++]!;
    hi += (b & 0x7f) * scale;
    scale *= 128;
    if (b < 0x80) {
      out.pos = at;
      if (hi >= 2 ** 26) return NaN; // |value| would reach 2^53
      const half = (low28 >>> 1) + hi * (TWO_28 / 2);
      return low28 & 1 ? -(half + 1) : half;
    }
  }
  return NaN;
}
