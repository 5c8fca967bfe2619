// What /metrics costs the produce and fetch paths, in one run: a `logline server` process with its
// HTTP listener off (http.listener empty), one with it on but not scraped (prom-client's runtime
// collectors run: event-loop delay, GC observer), and one scraped every second (fifteen times
// Prometheus's default rate), in turn, each under the same `logline bench produce` then
// `logline bench consume` load. The request and topic counters are bumped either way (they are
// plain increments in the network server and replica manager); what differs is the listener and
// the scrapes reading them. Then, the broker idle, what one scrape costs it (CPU per scrape over
// SCRAPES_TIMED sequential ones), which is the whole of what metrics add at a scrape interval.
// Broker CPU from /proc/<pid>/stat. JSON on stdout.
//   npm run bench:metrics [-- --records 300000] [-- --rounds 2]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { ServerProcesses, type ServerProcess } from './server-processes.js';

type Variant = 'off' | 'idle' | 'scraped';

const args = process.argv.slice(2);
const arg = (name: string, dflt: string) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1]! : dflt; };
const records = Number(arg('--records', '300000'));
const rounds = Number(arg('--rounds', '2'));
const RECORD_BYTES = 1024;
const SCRAPE_INTERVAL_MS = 1000;
const SCRAPES_TIMED = 200;
const CLOCK_TICKS_PER_SEC = 100; // Linux USER_HZ
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC;
}

/** `logline bench MODE ...` against the node; its JSON summary. */
function bench(node: ServerProcess, mode: string, extra: string[]): Promise<{ recordsPerSec: number; mbPerSec: number; records: number; error?: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/logline.js', 'bench', mode, '--topic', 'metrics-bench', '--num-records', String(records), '--record-size', String(RECORD_BYTES),
      ...extra, '--json', '--quiet', '--max-seconds', '600', '--bootstrap-server', `127.0.0.1:${node.brokerPort}`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('exit', (code) => {
      try {
        const summary = JSON.parse(out);
        if (code !== 0 || summary.error) reject(new Error(`bench ${mode}: exit ${code}: ${summary.error ?? out}`));
        else resolve(summary);
      } catch {
        reject(new Error(`bench ${mode}: exit ${code}: ${out}`));
      }
    });
  });
}

interface Run {
  http: Variant; round: number; produceRecordsPerSec: number; consumeRecordsPerSec: number; brokerCpuSeconds: number; scrapes: number; scrapeBytesLast: number;
  /** Idle broker, after the load: CPU ms per scrape and wall ms per scrape (sequential). */
  scrapeCpuMs?: number; scrapeWallMs?: number;
}

async function variant(http: Variant, roundNo: number): Promise<Run> {
  const cluster = await ServerProcesses.start(1, { 'http.listener': http === 'off' ? '' : '127.0.0.1:0', 'num.partitions': '6' });
  try {
    const node = cluster.nodes[0]!;
    const pid = node.child!.pid!;
    const port = http !== 'off' ? Number(/http listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(node.log)?.[1]) : 0;
    if (http !== 'off' && !(port > 0)) throw new Error(`no http listener line in: ${node.log}`);
    let scrapes = 0;
    let scrapeBytesLast = 0;
    const timer = http === 'scraped' ? setInterval(() => {
      void fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text()).then((t) => { scrapes++; scrapeBytesLast = t.length; }, () => {});
    }, SCRAPE_INTERVAL_MS) : null;
    const cpu0 = cpuSeconds(pid);
    try {
      const produced = await bench(node, 'produce', ['--acks', '1', '--partitions', '6']);
      const consumed = await bench(node, 'consume', []);
      const run: Run = {
        http, round: roundNo, produceRecordsPerSec: produced.recordsPerSec, consumeRecordsPerSec: consumed.recordsPerSec,
        brokerCpuSeconds: round(cpuSeconds(pid) - cpu0), scrapes, scrapeBytesLast,
      };
      if (http === 'scraped') {
        if (timer) clearInterval(timer);
        const c0 = cpuSeconds(pid);
        const t0 = performance.now();
        for (let i = 0; i < SCRAPES_TIMED; i++) await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        run.scrapeWallMs = round((performance.now() - t0) / SCRAPES_TIMED);
        run.scrapeCpuMs = round(((cpuSeconds(pid) - c0) * 1000) / SCRAPES_TIMED);
      }
      return run;
    } finally {
      if (timer) clearInterval(timer);
    }
  } finally {
    await cluster.close();
  }
}

const loadavgStart = readFileSync('/proc/loadavg', 'utf8').trim();
const runs: Run[] = [];
for (let r = 0; r < rounds; r++) {
  // In turn, rotated each round, so a drift in the machine's load falls on every variant.
  const order: Variant[] = ['off', 'idle', 'scraped'];
  for (const http of [...order.slice(r % 3), ...order.slice(0, r % 3)]) {
    const run = await variant(http, r);
    console.error(JSON.stringify(run));
    runs.push(run);
  }
}
const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2; };
const of = (http: Variant, pick: (r: Run) => number) => median(runs.filter((r) => r.http === http).map(pick));
const ratio = (http: Variant, pick: (r: Run) => number) => round(of(http, pick) / of('off', pick), 3);
const medians = (http: Variant) => ({
  produceRecordsPerSec: of(http, (r) => r.produceRecordsPerSec), consumeRecordsPerSec: of(http, (r) => r.consumeRecordsPerSec), brokerCpuSeconds: of(http, (r) => r.brokerCpuSeconds),
});
const overOff = (http: Variant) => ({
  produceRecordsPerSec: ratio(http, (r) => r.produceRecordsPerSec), consumeRecordsPerSec: ratio(http, (r) => r.consumeRecordsPerSec), brokerCpuSeconds: ratio(http, (r) => r.brokerCpuSeconds),
});
console.log(JSON.stringify({
  bench: 'metrics-overhead', recordBytes: RECORD_BYTES, records, rounds, scrapeIntervalMs: SCRAPE_INTERVAL_MS, runs,
  medians: { off: medians('off'), idle: medians('idle'), scraped: medians('scraped') },
  scrapeCpuMsMedian: median(runs.filter((r) => r.scrapeCpuMs !== undefined).map((r) => r.scrapeCpuMs!)),
  overOff: { idle: overOff('idle'), scraped: overOff('scraped') },
  loadavgStart, loadavgEnd: readFileSync('/proc/loadavg', 'utf8').trim(),
}, null, 2));
