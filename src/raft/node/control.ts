// The runnable node's control channel on stdin/stdout (node-main.ts), for tests and benches. Most
// commands are JSON lines; a proposal, the one command sent a thousand times a second under load,
// has a binary frame so that the leader neither parses JSON nor decodes its values to strings and
// back (JSON was ~12% of a leader's CPU at 50,000 records/s), and its acknowledgement is a short
// text line.
//
// Propose frame (big-endian): 'P' (0x50), u32 body length, then the body: u32 request id,
// u32 value count, one u32 byte length per value, the values' bytes.
// Acknowledgement line: `r<id> <epoch> <baseOffset> <lastOffset>`; a refusal is a JSON line.
// Every other input line starts with '{' (a JSON object) and ends with '\n'.

/** Limits of the control channel (a bench or test talks to it, but a bad frame must not crash the node). */
export const controlLimits = {
  /** A propose frame's body; larger ones close the channel. */
  proposeFrameBytesMax: 64 << 20,
  /** Values in one proposal. */
  proposeValuesMax: 1 << 20,
  /** A JSON line. */
  lineBytesMax: 1 << 20,
} as const;

export const PROPOSE_FRAME_TAG = 0x50;

export type ControlInput =
  | { readonly kind: 'line'; readonly line: string }
  | { readonly kind: 'propose'; readonly id: number; readonly values: Uint8Array[] };

export class ControlError extends Error {
  override name = 'ControlError';
}

/** Encodes a proposal of UTF-8 strings as one propose frame. */
export function encodeProposeFrame(id: number, values: readonly string[]): Buffer {
  let bytes = 0;
  for (const v of values) bytes += Buffer.byteLength(v);
  const body = 8 + 4 * values.length + bytes;
  const buf = Buffer.allocUnsafe(5 + body);
  buf[0] = PROPOSE_FRAME_TAG;
  buf.writeUInt32BE(body, 1);
  buf.writeUInt32BE(id, 5);
  buf.writeUInt32BE(values.length, 9);
  let lengthAt = 13;
  let at = 13 + 4 * values.length;
  for (const v of values) {
    const n = buf.write(v, at);
    buf.writeUInt32BE(n, lengthAt);
    lengthAt += 4;
    at += n;
  }
  return buf;
}

export function proposeAckLine(id: number, epoch: number, baseOffset: number, lastOffset: number): string {
  return `r${id} ${epoch} ${baseOffset} ${lastOffset}\n`;
}

/** `r<id> <epoch> <base> <last>` → its fields; undefined for any other line. */
export function parseProposeAck(line: string): { id: number; epoch: number; baseOffset: number; lastOffset: number } | undefined {
  if (line.charCodeAt(0) !== 0x72) return undefined;
  const parts = line.slice(1).split(' ');
  if (parts.length !== 4) return undefined;
  const [id, epoch, baseOffset, lastOffset] = parts.map(Number) as [number, number, number, number];
  if (![id, epoch, baseOffset, lastOffset].every(Number.isSafeInteger)) return undefined;
  return { id, epoch, baseOffset, lastOffset };
}

/**
 * Splits the bytes of stdin into JSON lines and propose frames, whatever the chunking. A propose
 * frame's values are copied into one buffer of their own (the core keeps them until a snapshot;
 * they must not pin the read buffers). Throws ControlError on a malformed frame or an overlong line.
 */
export class ControlReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  push(chunk: Buffer): ControlInput[] {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const buf = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    const out: ControlInput[] = [];
    let at = 0;
    while (at < buf.length) {
      const used = buf[at] === PROPOSE_FRAME_TAG ? this.readFrame(buf, at, out) : this.readLine(buf, at, out);
      if (used === 0) break;
      at += used;
    }
    const rest = at === buf.length ? undefined : buf.subarray(at);
    this.pending = rest === undefined ? [] : [rest];
    this.pendingBytes = rest?.length ?? 0;
    return out;
  }

  private readLine(buf: Buffer, at: number, out: ControlInput[]): number {
    const nl = buf.indexOf(0x0a, at);
    if (nl < 0) {
      if (buf.length - at > controlLimits.lineBytesMax) throw new ControlError(`a control line longer than ${controlLimits.lineBytesMax} bytes`);
      return 0;
    }
    const end = nl > at && buf[nl - 1] === 0x0d ? nl - 1 : nl;
    if (end > at) out.push({ kind: 'line', line: buf.toString('utf8', at, end) });
    return nl + 1 - at;
  }

  private readFrame(buf: Buffer, at: number, out: ControlInput[]): number {
    if (buf.length - at < 5) return 0;
    const body = buf.readUInt32BE(at + 1);
    if (body > controlLimits.proposeFrameBytesMax || body < 8) throw new ControlError(`propose frame of ${body} bytes`);
    if (buf.length - at < 5 + body) return 0;
    const start = at + 5;
    const end = start + body;
    const id = buf.readUInt32BE(start);
    const count = buf.readUInt32BE(start + 4);
    if (count === 0 || count > controlLimits.proposeValuesMax || 8 + 4 * count > body) throw new ControlError(`propose frame with ${count} values`);
    const dataAt = start + 8 + 4 * count;
    const data = Buffer.allocUnsafeSlow(end - dataAt);
    buf.copy(data, 0, dataAt, end);
    const values: Uint8Array[] = new Array<Uint8Array>(count);
    let v = 0;
    for (let i = 0; i < count; i++) {
      const n = buf.readUInt32BE(start + 8 + 4 * i);
      if (n > data.length - v) throw new ControlError('propose frame value lengths exceed the frame');
      values[i] = data.subarray(v, v + n);
      v += n;
    }
    if (v !== data.length) throw new ControlError('propose frame value lengths do not fill the frame');
    out.push({ kind: 'propose', id, values });
    return 5 + body;
  }
}
