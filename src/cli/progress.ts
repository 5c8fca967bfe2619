// Progress of long CLI work (bench, a reassignment waited for, a big consume) on stderr: a bar
// redrawn in place when stderr is a terminal, plain lines at an interval otherwise (CI logs and
// files get a readable record, not carriage returns). Time comes in through `nowMs`, so both modes
// are testable with a fake stream.

/** The part of a stream this needs; process.stderr is one. */
export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export interface ProgressOptions {
  /** What is being done: "produce", "reassign". */
  label: string;
  /** The amount that means done, or null when unknown (a count is shown without a bar). */
  total: number | null;
  /** What is counted: "records", "partitions". */
  unit: string;
  stream?: ProgressStream;
  nowMs?: () => number;
  /** Plain mode: a line at most this often (the first once this much time has passed). */
  lineIntervalMs?: number;
  /** Terminal mode: redraws at most this often. */
  redrawMs?: number;
}

const BAR_WIDTH = 24;
const CLEAR_LINE = '\r\x1b[K';

export class Progress {
  private readonly stream: ProgressStream;
  private readonly nowMs: () => number;
  private readonly tty: boolean;
  private readonly intervalMs: number;
  private lastMs: number;
  private printed = false;
  private finished = false;

  constructor(private readonly o: ProgressOptions) {
    this.stream = o.stream ?? process.stderr;
    this.nowMs = o.nowMs ?? Date.now;
    this.tty = this.stream.isTTY === true;
    this.intervalMs = this.tty ? (o.redrawMs ?? 100) : (o.lineIntervalMs ?? 5000);
    this.lastMs = this.nowMs();
  }

  /** `done` so far; `detail` (rates, say) follows the count. Draws only when the interval has passed. */
  update(done: number, detail = ''): void {
    if (this.finished) return;
    const now = this.nowMs();
    if (now - this.lastMs < this.intervalMs) return;
    this.lastMs = now;
    this.draw(done, detail);
  }

  /**
   * The final state. A terminal's bar is drawn complete and the line ended; in plain mode a last line
   * is printed only if earlier ones were (short work stays silent).
   */
  finish(done: number, detail = ''): void {
    if (this.finished) return;
    this.finished = true;
    if (this.tty || this.printed) this.draw(done, detail);
    if (this.tty) this.stream.write('\n');
  }

  private draw(done: number, detail: string): void {
    this.printed = true;
    const { label, total, unit } = this.o;
    const count = total === null ? `${done} ${unit}` : `${done}/${total} ${unit}`;
    const pct = total !== null && total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : null;
    if (!this.tty) {
      this.stream.write(`${label}: ${count}${pct === null ? '' : ` (${pct}%)`}${detail === '' ? '' : `, ${detail}`}\n`);
      return;
    }
    const filled = pct === null ? 0 : Math.round((pct / 100) * BAR_WIDTH);
    const bar = pct === null ? '' : ` [${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(pct).padStart(3)}%`;
    const line = `${label}${bar} ${count}${detail === '' ? '' : `  ${detail}`}`;
    // A line wider than the terminal would wrap, and \r would then redraw only its last row.
    const width = this.stream.columns ?? 80;
    this.stream.write(CLEAR_LINE + (line.length >= width ? line.slice(0, width - 1) : line));
  }
}
