// An append-only writer that produces a list of chunks. Large byte fields (record batches) are
// added as their own chunk without copying, so a Fetch response can be written with writev.

/** Growth stops doubling here: larger messages become several chunks. */
const CHUNK_BYTES_MAX = 1024 * 1024;
/** Byte fields at least this large are referenced, not copied. */
const ZERO_COPY_BYTES_MIN = 4096;

export class Writer {
  private chunks: Buffer[] = [];
  private buf: Buffer;
  private pos = 0;
  private start = 0;
  private flushedBytes = 0;

  constructor(initialBytes = 1024) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  get length(): number { return this.flushedBytes + this.pos - this.start; }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.cut();
    this.buf = Buffer.allocUnsafe(Math.max(n, Math.min(this.buf.length * 2, CHUNK_BYTES_MAX)));
    this.pos = 0;
    this.start = 0;
  }

  /** Moves the bytes written so far in the current buffer into the chunk list. */
  private cut(): void {
    if (this.pos > this.start) {
      this.chunks.push(this.buf.subarray(this.start, this.pos));
      this.flushedBytes += this.pos - this.start;
    }
    this.start = this.pos;
  }

  int8(v: number): void { this.ensure(1); this.buf.writeInt8(v, this.pos); this.pos += 1; }
  bool(v: boolean): void { this.int8(v ? 1 : 0); }
  int16(v: number): void { this.ensure(2); this.buf.writeInt16BE(v, this.pos); this.pos += 2; }
  uint16(v: number): void { this.ensure(2); this.buf.writeUInt16BE(v, this.pos); this.pos += 2; }
  int32(v: number): void { this.ensure(4); this.buf.writeInt32BE(v, this.pos); this.pos += 4; }
  uint32(v: number): void { this.ensure(4); this.buf.writeUInt32BE(v, this.pos); this.pos += 4; }
  int64(v: bigint): void { this.ensure(8); this.buf.writeBigInt64BE(v, this.pos); this.pos += 8; }
  float64(v: number): void { this.ensure(8); this.buf.writeDoubleBE(v, this.pos); this.pos += 8; }

  unsignedVarint(v: number): void {
    this.ensure(5);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }

  varint(v: number): void { this.unsignedVarint(((v << 1) ^ (v >> 31)) >>> 0); }

  varlong(v: bigint): void {
    let u = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
    this.ensure(10);
    while (u >= 0x80n) {
      this.buf[this.pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    this.buf[this.pos++] = Number(u);
  }

  bytes(b: Uint8Array): void {
    if (b.length >= ZERO_COPY_BYTES_MIN) {
      this.cut();
      this.chunks.push(Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.length));
      this.flushedBytes += b.length;
      return;
    }
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  utf8(s: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    this.ensure(n);
    this.buf.write(s, this.pos, n, 'utf8');
    this.pos += n;
  }

  /** Reserves n bytes to be filled later (e.g. a frame size); returns a view onto them. */
  reserve(n: number): Buffer {
    this.ensure(n);
    const view = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return view;
  }

  chunksOut(): Buffer[] {
    this.cut();
    return this.chunks;
  }

  toBuffer(): Buffer {
    const chunks = this.chunksOut();
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.flushedBytes);
  }
}
