// A directed graph over operation indexes with labelled edges (Adya's dependencies: ww, wr), its
// strongly connected components (Tarjan's algorithm, iterative so a long history cannot overflow the
// stack) and a shortest cycle through a given edge, which is what a reader needs as an example.

export type EdgeKind = 'ww' | 'wr';

export class DepGraph {
  /** from → to → the kinds of dependency between them. */
  readonly out = new Map<number, Map<number, Set<EdgeKind>>>();

  add(from: number, to: number, kind: EdgeKind): void {
    if (from === to) return;
    let targets = this.out.get(from);
    if (!targets) this.out.set(from, targets = new Map());
    let kinds = targets.get(to);
    if (!kinds) targets.set(to, kinds = new Set());
    kinds.add(kind);
    if (!this.out.has(to)) this.out.set(to, new Map());
  }

  /** The same graph with only edges of the given kinds. */
  only(kinds: readonly EdgeKind[]): DepGraph {
    const g = new DepGraph();
    for (const [from, targets] of this.out) {
      for (const [to, ks] of targets) for (const k of ks) if (kinds.includes(k)) g.add(from, to, k);
    }
    return g;
  }

  /** Strongly connected components of more than one vertex (there are no self-loops). */
  components(): number[][] {
    const index = new Map<number, number>();
    const low = new Map<number, number>();
    const onStack = new Set<number>();
    const stack: number[] = [];
    const out: number[][] = [];
    let counter = 0;
    for (const root of this.out.keys()) {
      if (index.has(root)) continue;
      // Each frame: a vertex and the iterator over its successors (the recursion, unrolled).
      const frames: { v: number; next: Iterator<number> }[] = [];
      const enter = (v: number) => {
        index.set(v, counter);
        low.set(v, counter++);
        stack.push(v);
        onStack.add(v);
        frames.push({ v, next: this.out.get(v)!.keys() });
      };
      enter(root);
      while (frames.length > 0) {
        const frame = frames[frames.length - 1]!;
        const step = frame.next.next();
        if (!step.done) {
          const w = step.value;
          if (!index.has(w)) enter(w);
          else if (onStack.has(w)) low.set(frame.v, Math.min(low.get(frame.v)!, index.get(w)!));
          continue;
        }
        frames.pop();
        const parent = frames[frames.length - 1];
        if (parent) low.set(parent.v, Math.min(low.get(parent.v)!, low.get(frame.v)!));
        if (low.get(frame.v) !== index.get(frame.v)) continue;
        const component: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== frame.v);
        if (component.length > 1) out.push(component.sort((a, b) => a - b));
      }
    }
    return out;
  }

  /**
   * A shortest cycle that takes the edge from → to and stays inside `within` (breadth-first from
   * `to` back to `from`), as [vertex, kinds of the edge leaving it] steps; null when there is none.
   */
  cycleThrough(from: number, to: number, within: ReadonlySet<number>): { op: number; then: EdgeKind[] }[] | null {
    const parent = new Map<number, number>([[to, to]]);
    const queue = [to];
    for (let head = 0; head < queue.length && !parent.has(from); head++) {
      const v = queue[head]!;
      for (const w of this.out.get(v)?.keys() ?? []) {
        if (!within.has(w) || parent.has(w)) continue;
        parent.set(w, v);
        queue.push(w);
      }
    }
    if (!parent.has(from)) return null;
    const path = [from];
    while (path[path.length - 1] !== to) path.push(parent.get(path[path.length - 1]!)!);
    path.reverse(); // to ... from
    const cycle = [from, ...path];
    return cycle.slice(0, -1).map((v, i) => ({ op: v, then: [...this.out.get(v)!.get(cycle[i + 1]!)!].sort() }));
  }
}
