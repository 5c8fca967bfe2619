// A worker thread of `logline bench`: runs one producer and reports its figures to the parent
// every `reportMs` and once at the end (counts, bytes, in-flight, the latency histogram's
// snapshot, which the parent merges). The parent posts 'stop' to end it early.
import { parentPort, workerData } from 'node:worker_threads';
import { newStats, runProducer, type ProducerSpec } from './bench-load.js';

const { spec, reportMs } = workerData as { spec: ProducerSpec; reportMs: number };
const stats = newStats();
let stop = false;
const report = (type: 'progress' | 'done', error?: string) => {
  parentPort!.postMessage({ type, records: stats.records, bytes: stats.bytes, inFlight: stats.inFlight, startedMs: stats.startedMs, endedMs: stats.endedMs, latency: stats.latencyUs.snapshot(), error });
};
parentPort!.on('message', (m) => { if (m === 'stop') stop = true; });
const timer = setInterval(() => report('progress'), reportMs);
runProducer(spec, stats, () => stop).then(
  () => { clearInterval(timer); report('done'); parentPort!.close(); },
  (err: Error) => { clearInterval(timer); report('done', err.message); parentPort!.close(); },
);
