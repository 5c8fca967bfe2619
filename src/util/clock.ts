// Time and randomness are ports, so state machines can be driven by simulations.

export interface Clock {
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

export class ManualClock implements Clock {
  constructor(private ms = 0) {}
  nowMs(): number { return this.ms; }
  advance(ms: number): void { this.ms += ms; }
}

/** A small seeded PRNG (mulberry32): deterministic, fast, good enough for simulation. */
export class Prng {
  private state: number;
  constructor(readonly seed: number) { this.state = seed >>> 0; }
  nextUint32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number { return this.nextUint32() / 0x100000000; }
  /** Uniform integer in [0, n). */
  int(n: number): number { return Math.floor(this.next() * n); }
}
