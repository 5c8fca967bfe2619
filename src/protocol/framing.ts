// Sans-I/O framing: bytes in, whole frames out. Each Kafka frame is an int32 size and that many
// bytes. A size above the limit (or negative) is reported once and the splitter stops, since the
// stream can no longer be trusted; the caller closes the connection.
//
// Frames that arrive whole inside one chunk are slices of it (no copy). A frame that spans chunks
// gets its own buffer of exactly its size as soon as its size is known, and each chunk is copied
// into it on arrival (while the chunk is still in the CPU cache; the chunk itself becomes garbage at
// once instead of being kept until the frame is complete). A socket that can read into a buffer of
// our choosing (net.connect's `onread`) can skip even that copy: `readBuffer()` names the buffer
// the next read should land in (the unfilled rest of a large frame, else a reused scratch buffer)
// and `pushRead(n)` takes the result.
//
// Where a frame's buffer comes from is the caller's choice (`allocate`): a client that handles
// each large response before asking for the next can read them all into one reused buffer.
//
// Allocating a frame's buffer from its announced size lets a peer make us hold memory it has not
// sent; that is bounded by `preallocateBytesMax` (a server passes a small figure, a client reading
// its broker's responses the whole frame limit). Larger frames keep their chunks and are joined
// once, when complete.
import { ProtocolError } from './errors.js';

/** A frame at least this much larger than what has arrived is read straight into its own buffer. */
const DIRECT_READ_BYTES_MIN = 16 * 1024;
const SCRATCH_BYTES = 64 * 1024;

export class FrameSplitter {
  /** Up to 4 bytes of a size prefix split across chunks. */
  private readonly head = Buffer.alloc(4);
  private headBytes = 0;
  /** The body of a frame that spans chunks, allocated at its full size, and how much is filled. */
  private partial: Buffer | null = null;
  private partialFilled = 0;
  /** A frame above `preallocateBytesMax`: its size, and the chunks received so far. */
  private bigSize = -1;
  private bigChunks: Buffer[] = [];
  private bigFilled = 0;
  private scratch: Buffer | null = null;
  private lastReadDirect = false;
  private failed = false;

  /**
   * `allocate` gives the buffer of a frame that spans reads (a server passes its frame pool, so
   * the buffers of finished requests are reused rather than left for the GC).
   */
  constructor(
    private frameBytesMax: number,
    private readonly preallocateBytesMax = frameBytesMax,
    private readonly allocate: (size: number) => Buffer = Buffer.allocUnsafe,
  ) {}

  /**
   * A new largest frame size for the frames whose size prefix is read from now on (a SASL
   * listener accepts only small tokens until the connection has authenticated).
   */
  limitFrameBytes(frameBytesMax: number): void {
    this.frameBytesMax = frameBytesMax;
  }

  /** Bytes buffered that do not yet form a whole frame. */
  get bufferedBytes(): number { return this.headBytes + this.partialFilled + this.bigFilled; }

  /**
   * Adds bytes and returns the whole frames they complete (without size prefixes). Frames are
   * slices of the input where possible. Throws ProtocolError on a bad size.
   */
  push(chunk: Buffer): Buffer[] {
    return this.split(chunk, false);
  }

  /** `transient`: `chunk` is reused after this call, so what outlives it is copied out. */
  private split(chunk: Buffer, transient: boolean): Buffer[] {
    if (this.failed) throw new ProtocolError('frame splitter already failed');
    const frames: Buffer[] = [];
    let pos = 0;
    while (pos < chunk.length) {
      if (this.bigSize >= 0) {
        const n = Math.min(this.bigSize - this.bigFilled, chunk.length - pos);
        this.bigChunks.push(transient ? Buffer.from(chunk.subarray(pos, pos + n)) : chunk.subarray(pos, pos + n));
        this.bigFilled += n;
        pos += n;
        if (this.bigFilled === this.bigSize) {
          frames.push(Buffer.concat(this.bigChunks, this.bigSize));
          this.bigSize = -1;
          this.bigChunks = [];
          this.bigFilled = 0;
        }
        continue;
      }
      if (this.partial) {
        const n = Math.min(this.partial.length - this.partialFilled, chunk.length - pos);
        chunk.copy(this.partial, this.partialFilled, pos, pos + n);
        this.partialFilled += n;
        pos += n;
        if (this.partialFilled === this.partial.length) this.completePartial(frames);
        continue;
      }
      if (this.headBytes > 0 || chunk.length - pos < 4) {
        const n = Math.min(4 - this.headBytes, chunk.length - pos);
        chunk.copy(this.head, this.headBytes, pos, pos + n);
        this.headBytes += n;
        pos += n;
        if (this.headBytes === 4) {
          this.headBytes = 0;
          this.startPartial(this.checkedSize(this.head, 0), frames);
        }
        continue;
      }
      const size = this.checkedSize(chunk, pos);
      if (chunk.length - pos - 4 >= size) {
        frames.push(transient ? this.copyOf(chunk, pos + 4, size) : chunk.subarray(pos + 4, pos + 4 + size));
        pos += 4 + size;
        continue;
      }
      pos += 4;
      this.startPartial(size, frames);
    }
    return frames;
  }

  /** Where the next socket read should go: the rest of a large frame, or a reused scratch buffer. */
  readBuffer(): Buffer {
    if (!this.failed && this.partial && this.partial.length - this.partialFilled >= DIRECT_READ_BYTES_MIN) {
      this.lastReadDirect = true;
      return this.partial.subarray(this.partialFilled);
    }
    this.lastReadDirect = false;
    return (this.scratch ??= Buffer.allocUnsafe(SCRATCH_BYTES));
  }

  /** `n` bytes were read into the buffer the last `readBuffer()` returned; the frames they complete. */
  pushRead(n: number): Buffer[] {
    if (this.failed) throw new ProtocolError('frame splitter already failed');
    // The scratch buffer is split in place: only whole frames in it are copied out (partial ones
    // are copied into their own buffers anyway), so a read allocates nothing it does not keep.
    if (!this.lastReadDirect) return n > 0 ? this.split(this.scratch!.subarray(0, n), true) : [];
    this.partialFilled += n;
    const frames: Buffer[] = [];
    if (this.partialFilled === this.partial!.length) this.completePartial(frames);
    return frames;
  }

  private copyOf(chunk: Buffer, start: number, size: number): Buffer {
    const frame = size > this.preallocateBytesMax ? Buffer.allocUnsafe(size) : this.allocate(size);
    chunk.copy(frame, 0, start, start + size);
    return frame;
  }

  private startPartial(size: number, frames: Buffer[]): void {
    if (size > this.preallocateBytesMax) {
      this.bigSize = size;
      return;
    }
    this.partial = this.allocate(size);
    this.partialFilled = 0;
    if (size === 0) this.completePartial(frames);
  }

  private completePartial(frames: Buffer[]): void {
    frames.push(this.partial!);
    this.partial = null;
    this.partialFilled = 0;
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
