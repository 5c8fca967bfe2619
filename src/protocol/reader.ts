// Bounds-checked reads over one frame. Every length is checked against the bytes that remain before
// anything is allocated, so a hostile length field costs nothing but a ProtocolError.
import { ProtocolError } from './errors.js';

export class Reader {
  pos: number;
  readonly end: number;

  constructor(readonly buf: Buffer, offset = 0, end = buf.length) {
    this.pos = offset;
    this.end = end;
  }

  get remaining(): number { return this.end - this.pos; }

  need(n: number): void {
    if (n < 0 || this.pos + n > this.end) {
      throw new ProtocolError(`need ${n} bytes at offset ${this.pos}, ${this.end - this.pos} remain`);
    }
  }

  int8(): number { this.need(1); return this.buf.readInt8(this.pos++); }
  bool(): boolean { return this.int8() !== 0; }
  int16(): number { this.need(2); const v = this.buf.readInt16BE(this.pos); this.pos += 2; return v; }
  uint16(): number { this.need(2); const v = this.buf.readUInt16BE(this.pos); this.pos += 2; return v; }
  int32(): number { this.need(4); const v = this.buf.readInt32BE(this.pos); this.pos += 4; return v; }
  uint32(): number { this.need(4); const v = this.buf.readUInt32BE(this.pos); this.pos += 4; return v; }
  int64(): bigint { this.need(8); const v = this.buf.readBigInt64BE(this.pos); this.pos += 8; return v; }
  float64(): number { this.need(8); const v = this.buf.readDoubleBE(this.pos); this.pos += 8; return v; }

  /** Unsigned LEB128, at most 5 bytes (a uint32). */
  unsignedVarint(): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= this.end) throw new ProtocolError('truncated varint');
      const b = this.buf[this.pos++]!;
      value += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) {
        if (value > 0xffffffff) throw new ProtocolError('varint overflows 32 bits');
        return value;
      }
    }
    throw new ProtocolError('varint longer than 5 bytes');
  }

  /** Zigzag-encoded signed int32. */
  varint(): number {
    const u = this.unsignedVarint();
    return (u >>> 1) ^ -(u & 1);
  }

  /** Zigzag-encoded signed int64, at most 10 bytes. */
  varlong(): bigint {
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) throw new ProtocolError('truncated varlong');
      const b = this.buf[this.pos++]!;
      value |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) {
        if (value > 0xffffffffffffffffn) throw new ProtocolError('varlong overflows 64 bits');
        return (value >> 1n) ^ -(value & 1n);
      }
    }
    throw new ProtocolError('varlong longer than 10 bytes');
  }

  uuid(): string {
    this.need(16);
    const s = this.buf.toString('base64url', this.pos, this.pos + 16);
    this.pos += 16;
    return s;
  }

  /** A slice of the frame (no copy). */
  slice(n: number): Buffer {
    this.need(n);
    const s = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  utf8(n: number): string {
    this.need(n);
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  /** Length of a string/bytes/array: int16/int32 classic or unsigned varint (n+1) compact; -1 is null. */
  stringLength(compact: boolean): number {
    return compact ? this.unsignedVarint() - 1 : this.int16();
  }
  bytesLength(compact: boolean): number {
    return compact ? this.unsignedVarint() - 1 : this.int32();
  }
}
