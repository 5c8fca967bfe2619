// The history as a picture a person can read: faults as bands across the whole width (a killed
// node red, a paused one amber, an isolated one cyan, a filled disk brown; one row per node), completed operations per second by kind, and
// each operation's latency (invocation to completion, log scale) as a dot, crossed out when it did
// not complete ok. Plain SVG text, no dependencies; a pure function of the history.
import type { History, Op, OpKind } from './check/history.js';

export interface TimelineOptions { title?: string; widthPx?: number }

const KIND_COLORS: Partial<Record<OpKind, string>> = { send: '#1f77b4', txn: '#9467bd', poll: '#2ca02c', final: '#7f7f7f' };
type BandKind = 'kill' | 'pause' | 'isolate' | 'fill-disk';
const FAULT_COLORS: Record<BandKind, string> = { kill: '#d62728', pause: '#ff9f1a', isolate: '#17becf', 'fill-disk': '#8c564b' };
/** The step that ends each kind of band. */
const ENDED_BY: Partial<Record<OpKind, BandKind>> = { restart: 'kill', resume: 'pause', rejoin: 'isolate', 'free-disk': 'fill-disk' };
const KINDS: OpKind[] = ['send', 'txn', 'poll'];

interface Band { kind: BandKind; node: number; fromMs: number; toMs: number }
interface Done { f: OpKind; type: Op['type']; startMs: number; endMs: number }

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (n: number) => (Math.round(n * 10) / 10).toString();

/** Fault intervals: a kill until its restart, a pause until its resume (or the end of the history). */
function bands(history: History, endMs: number): Band[] {
  const open = new Map<string, number>();
  const out: Band[] = [];
  for (const op of history) {
    if (op.type !== 'invoke' || op.node === undefined) continue;
    if (op.f in FAULT_COLORS) open.set(`${op.f}:${op.node}`, op.timeMs);
    const starts = ENDED_BY[op.f];
    if (starts === undefined) continue;
    const from = open.get(`${starts}:${op.node}`);
    if (from === undefined) continue;
    open.delete(`${starts}:${op.node}`);
    out.push({ kind: starts, node: op.node, fromMs: from, toMs: op.timeMs });
  }
  for (const [key, from] of open) {
    const [kind, node] = key.split(':') as [BandKind, string];
    out.push({ kind, node: Number(node), fromMs: from, toMs: endMs });
  }
  return out;
}

/** Each client operation's invocation paired with its completion (same process, next op of it). */
function completed(history: History): Done[] {
  const open = new Map<number, Op>();
  const out: Done[] = [];
  for (const op of history) {
    if (op.process < 0 && op.f !== 'final') continue;
    if (op.type === 'invoke') { open.set(op.process, op); continue; }
    const inv = open.get(op.process);
    if (!inv) continue;
    open.delete(op.process);
    out.push({ f: op.f, type: op.type, startMs: inv.timeMs, endMs: op.timeMs });
  }
  return out;
}

export function timelineSvg(history: History, options: TimelineOptions = {}): string {
  const width = options.widthPx ?? 1000;
  const left = 70;
  const right = 20;
  const plotWidth = width - left - right;
  const endMs = Math.max(1, ...history.map((op) => op.timeMs));
  const faults = bands(history, endMs);
  const ops = completed(history).filter((d) => d.f !== 'final');
  const nodes = [...new Set(faults.map((b) => b.node))].sort((a, b) => a - b);
  const x = (ms: number) => left + (ms / endMs) * plotWidth;
  const parts: string[] = [];
  let y = 30;
  parts.push(`<text x="${left}" y="20" font-size="15" font-weight="bold">${esc(options.title ?? 'logline verify')}</text>`);

  // Faults: one row per node that had any.
  const faultTop = y + 10;
  const rowPx = 16;
  const faultHeight = Math.max(1, nodes.length) * rowPx;
  parts.push(label(faultTop + faultHeight / 2, 'faults'));
  nodes.forEach((node, i) => parts.push(`<text x="${left - 6}" y="${faultTop + i * rowPx + 12}" font-size="10" text-anchor="end">node ${node}</text>`));
  if (nodes.length === 0) parts.push(`<text x="${left + 6}" y="${faultTop + 12}" font-size="11" fill="#666">none</text>`);
  for (const b of faults) {
    const row = nodes.indexOf(b.node);
    parts.push(`<rect x="${fmt(x(b.fromMs))}" y="${faultTop + row * rowPx + 2}" width="${fmt(Math.max(1, x(b.toMs) - x(b.fromMs)))}" height="${rowPx - 4}" fill="${FAULT_COLORS[b.kind]}"><title>${b.kind} node ${b.node}: ${fmt(b.fromMs / 1000)}-${fmt(b.toMs / 1000)} s</title></rect>`);
  }
  y = faultTop + faultHeight + 20;

  // Throughput: ok completions per second by kind, in about sixty buckets (whole seconds for a
  // minute or more, finer for a short run, so a two-second run still draws lines).
  const throughputTop = y;
  const throughputHeight = 150;
  const bucketMs = endMs >= 60_000 ? Math.ceil(endMs / 60_000) * 1000 : Math.max(50, niceStep(endMs / 6000) * 1000);
  const buckets = Math.max(1, Math.ceil(endMs / bucketMs));
  const perSecond = new Map<OpKind, number[]>(KINDS.map((k) => [k, new Array<number>(buckets).fill(0)]));
  for (const d of ops) if (d.type === 'ok') { const s = perSecond.get(d.f); if (s) s[Math.min(buckets - 1, Math.floor(d.endMs / bucketMs))]! += 1000 / bucketMs; }
  const maxRate = Math.max(1, ...[...perSecond.values()].flat());
  const ty = (v: number) => throughputTop + throughputHeight - (v / maxRate) * throughputHeight;
  parts.push(frame(left, throughputTop, plotWidth, throughputHeight), label(throughputTop + throughputHeight / 2, 'ok ops/s'));
  parts.push(`<text x="${left - 6}" y="${throughputTop + 10}" font-size="10" text-anchor="end">${Math.round(maxRate)}</text><text x="${left - 6}" y="${throughputTop + throughputHeight}" font-size="10" text-anchor="end">0</text>`);
  for (const [kind, counts] of perSecond) {
    if (counts.every((c) => c === 0)) continue;
    const points = counts.map((c, b) => `${fmt(x(Math.min(endMs, (b + 0.5) * bucketMs)))},${fmt(ty(c))}`).join(' ');
    parts.push(`<polyline points="${points}" fill="none" stroke="${KIND_COLORS[kind]}" stroke-width="2"/>`);
  }
  y = throughputTop + throughputHeight + 20;

  // Latency: log scale from 1 ms to the slowest operation.
  const latencyTop = y;
  const latencyHeight = 180;
  const maxLatency = Math.max(10, ...ops.map((d) => d.endMs - d.startMs));
  const decades = Math.ceil(Math.log10(maxLatency));
  const ly = (ms: number) => latencyTop + latencyHeight - (Math.log10(Math.max(1, ms)) / decades) * latencyHeight;
  parts.push(frame(left, latencyTop, plotWidth, latencyHeight), label(latencyTop + latencyHeight / 2, 'latency ms'));
  for (let d = 0; d <= decades; d++) {
    parts.push(`<line x1="${left}" x2="${left + plotWidth}" y1="${fmt(ly(10 ** d))}" y2="${fmt(ly(10 ** d))}" stroke="#eee"/>`,
      `<text x="${left - 6}" y="${fmt(ly(10 ** d) + 4)}" font-size="10" text-anchor="end">${10 ** d}</text>`);
  }
  for (const d of ops) {
    const cx = fmt(x(d.endMs));
    const cy = fmt(ly(d.endMs - d.startMs));
    const color = KIND_COLORS[d.f] ?? '#333';
    parts.push(d.type === 'ok'
      ? `<circle cx="${cx}" cy="${cy}" r="1.6" fill="${color}" fill-opacity="0.6"/>`
      : `<text x="${cx}" y="${cy}" font-size="10" fill="${d.type === 'info' ? '#000' : color}" text-anchor="middle" dominant-baseline="middle">×</text>`);
  }
  y = latencyTop + latencyHeight;

  // Fault bands behind the two charts, so a reader can line effects up with their causes.
  for (const b of faults) {
    parts.push(`<rect x="${fmt(x(b.fromMs))}" y="${throughputTop}" width="${fmt(Math.max(1, x(b.toMs) - x(b.fromMs)))}" height="${y - throughputTop}" fill="${FAULT_COLORS[b.kind]}" fill-opacity="0.12"/>`);
  }
  // Time axis.
  const step = niceStep(endMs / 1000);
  for (let s = 0; s <= endMs / 1000 + 1e-9; s += step) {
    parts.push(`<line x1="${fmt(x(s * 1000))}" x2="${fmt(x(s * 1000))}" y1="${y}" y2="${y + 4}" stroke="#000"/>`,
      `<text x="${fmt(x(s * 1000))}" y="${y + 16}" font-size="10" text-anchor="middle">${fmt(s)}</text>`);
  }
  parts.push(`<text x="${left + plotWidth / 2}" y="${y + 30}" font-size="11" text-anchor="middle">seconds since the start of the run</text>`);
  y += 48;
  parts.push(legend(left, y));
  const height = y + 20;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">\n`
    + `<rect width="100%" height="100%" fill="#fff"/>\n${parts.join('\n')}\n</svg>\n`;
}

function frame(x: number, y: number, w: number, h: number): string {
  return `<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="none" stroke="#999"/>`;
}

function label(y: number, text: string): string {
  return `<text x="14" y="${fmt(y)}" font-size="11" transform="rotate(-90 14 ${fmt(y)})" text-anchor="middle">${esc(text)}</text>`;
}

function legend(x: number, y: number): string {
  const items: [string, string, string][] = [
    ...KINDS.map((k): [string, string, string] => ['line', KIND_COLORS[k]!, k]),
    ['cross', '#000', 'fail / info (unknown)'], ['band', FAULT_COLORS.kill, 'node killed'], ['band', FAULT_COLORS.pause, 'node paused'],
    ['band', FAULT_COLORS.isolate, 'node isolated'], ['band', FAULT_COLORS['fill-disk'], 'disk filled'],
  ];
  let at = x;
  const out: string[] = [];
  for (const [shape, color, text] of items) {
    if (shape === 'line') out.push(`<line x1="${at}" x2="${at + 18}" y1="${y - 4}" y2="${y - 4}" stroke="${color}" stroke-width="3"/>`);
    else if (shape === 'band') out.push(`<rect x="${at}" y="${y - 10}" width="18" height="10" fill="${color}"/>`);
    else out.push(`<text x="${at + 9}" y="${y - 4}" font-size="12" text-anchor="middle" dominant-baseline="middle">×</text>`);
    out.push(`<text x="${at + 24}" y="${y}" font-size="11">${esc(text)}</text>`);
    at += 34 + text.length * 6.2;
  }
  return out.join('\n');
}

/** 1, 2 or 5 times a power of ten, for about ten ticks. */
function niceStep(span: number): number {
  const raw = Math.max(span / 10, 0.1);
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw)!;
}
