// bench/rdkafka-load: a librdkafka producer (through @confluentinc/kafka-javascript's node-rdkafka
// API) as a load generator, so that a broker figure is not a figure of our own client.
//   node dist/bench/rdkafka-load.js --bootstrap 127.0.0.1:9092 --topic T --records N --size 1024 \
//        [--acks 1] [--compression none] [--max-seconds 300]
// Sends N records of `size` bytes round-robin (partition unassigned, no key: librdkafka's sticky
// partitioner), counts delivery reports, prints one JSON object. Exit 1 on any delivery error,
// exit 3 when the package is not installed.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export interface RdkafkaResult { records: number; seconds: number; recordsPerSec: number; mbPerSec: number; errors: number; error?: string }

export function rdkafkaAvailable(): boolean {
  try {
    createRequire(import.meta.url)('@confluentinc/kafka-javascript');
    return true;
  } catch {
    return false;
  }
}

export async function rdkafkaProduce(o: { bootstrap: string; topic: string; records: number; size: number; acks: number; compression: string; maxSeconds: number }): Promise<RdkafkaResult> {
  const kafka = createRequire(import.meta.url)('@confluentinc/kafka-javascript');
  const producer = new kafka.Producer({
    'metadata.broker.list': o.bootstrap, 'client.id': 'logline-bench-rdkafka', dr_cb: true, acks: o.acks,
    'compression.codec': o.compression, 'linger.ms': 5, 'batch.size': 1_000_000, 'batch.num.messages': 10_000,
    'queue.buffering.max.messages': 200_000, 'queue.buffering.max.kbytes': 1_048_576, 'enable.idempotence': false,
  });
  await new Promise<void>((resolve, reject) => {
    producer.once('ready', () => resolve());
    producer.once('event.error', reject);
    producer.connect({}, (err: Error | null) => { if (err) reject(err); });
  });
  const value = Buffer.alloc(o.size);
  for (let i = 0; i < o.size; i++) value[i] = 97 + ((i * 31 + (i >> 5)) % 26);
  let delivered = 0;
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  producer.setPollInterval(5);
  const done = new Promise<void>((resolve) => {
    producer.on('delivery-report', (err: Error | null) => {
      if (err) { errors++; firstError ??= err.message; }
      if (++delivered === o.records) resolve();
    });
  });
  let sent = 0;
  const deadline = started + o.maxSeconds * 1000;
  while (sent < o.records && performance.now() < deadline && errors === 0) {
    try {
      producer.produce(o.topic, null, value, null);
      sent++;
    } catch (err) {
      if ((err as { code?: number }).code !== -184) throw err; // ERR__QUEUE_FULL: let librdkafka drain
      await new Promise((r) => setTimeout(r, 1));
    }
  }
  await Promise.race([done, new Promise((r) => setTimeout(r, Math.max(0, deadline - performance.now())))]);
  const seconds = (performance.now() - started) / 1000;
  await new Promise<void>((resolve) => producer.disconnect(5000, () => resolve()));
  const result: RdkafkaResult = {
    records: delivered - errors, seconds: Math.round(seconds * 1000) / 1000, recordsPerSec: Math.round((delivered - errors) / seconds),
    mbPerSec: Math.round(((delivered - errors) * o.size) / seconds / 1e4) / 100, errors,
  };
  if (firstError || delivered < o.records) result.error = firstError ?? `only ${delivered} of ${o.records} delivered in ${o.maxSeconds} s`;
  return result;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const arg = (name: string, fallback: string) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1]! : fallback; };
  if (!rdkafkaAvailable()) { console.error('@confluentinc/kafka-javascript is not installed'); process.exit(3); }
  const r = await rdkafkaProduce({
    bootstrap: arg('--bootstrap', '127.0.0.1:9092'), topic: arg('--topic', 'logline-bench'), records: Number(arg('--records', '1000000')),
    size: Number(arg('--size', '1024')), acks: Number(arg('--acks', '1')), compression: arg('--compression', 'none'), maxSeconds: Number(arg('--max-seconds', '300')),
  });
  console.log(JSON.stringify({ bench: 'rdkafka-load', ...r }));
  process.exit(r.error ? 1 : 0);
}
