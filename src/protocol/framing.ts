// Sans-I/O framing: bytes in, whole frames out. Each Kafka frame is an int32 size and that many
// bytes. A size above the limit (or negative) is reported once and the splitter stops, since the
// stream can no longer be trusted; the caller closes the connection.
import { ProtocolError } from './errors.js';

export class FrameSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private failed = false;

  constructor(private readonly frameBytesMax: number) {}

  /** Bytes buffered that do not yet form a whole frame. */
  get bufferedBytes(): number { return this.pendingBytes; }

  /**
   * Adds bytes and returns the whole frames they complete (without size prefixes). Frames are
   * slices of the input where possible. Throws ProtocolError on a bad size.
   */
  push(chunk: Buffer): Buffer[] {
    if (this.failed) throw new ProtocolError('frame splitter already failed');
    let buf: Buffer;
    if (this.pendingBytes === 0) buf = chunk;
    else {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      // A large frame arrives in many chunks: join them once, when the frame is complete, not on
      // every chunk (that copied the growing prefix again each time: quadratic in the frame size).
      if (this.pendingBytes >= 4) {
        if (this.pending[0]!.length < 4) this.pending = [Buffer.concat(this.pending, this.pendingBytes)];
        const size = this.checkedSize(this.pending[0]!, 0);
        if (this.pendingBytes < 4 + size) return [];
      } else {
        return [];
      }
      buf = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
      this.pending = [];
      this.pendingBytes = 0;
    }
    const frames: Buffer[] = [];
    let pos = 0;
    while (buf.length - pos >= 4) {
      const size = this.checkedSize(buf, pos);
      if (buf.length - pos - 4 < size) break;
      frames.push(buf.subarray(pos + 4, pos + 4 + size));
      pos += 4 + size;
    }
    if (pos < buf.length) {
      // Keep the partial frame; a copy detaches it from a large input buffer.
      const rest = buf.subarray(pos);
      this.pending.push(pos === 0 && this.pending.length === 0 ? rest : Buffer.from(rest));
      this.pendingBytes = rest.length;
    }
    return frames;
  }

  private checkedSize(buf: Buffer, pos: number): number {
    const size = buf.readInt32BE(pos);
    if (size < 0 || size > this.frameBytesMax) {
      this.failed = true;
      throw new ProtocolError(`frame size ${size} outside 0..${this.frameBytesMax}`);
    }
    return size;
  }
}
