// TLS against PLAINTEXT produce throughput in the same run: one broker (in this process, on a
// temporary data directory) with both listeners, and librdkafka's producer in C (bench/rdkafka-perf.c)
// sending 1 KiB records over each in turn, alternating, so both see the same machine load. The
// ratio is the target (TLS >= 60% of plaintext at 1 KiB records). JSON on stdout.
//   node dist/bench/tls.js [--records 300000] [--rounds 2] [--acks 1]
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startServer } from '../src/broker/index.js';
import { parseBrokerConfig } from '../src/config/index.js';
import { writeDevCerts } from '../src/security/index.js';
import { runRdkafkaPerf } from './rdkafka-perf.js';

const args = process.argv.slice(2);
const arg = (name: string, dflt: string) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1]! : dflt; };
const records = Number(arg('--records', '300000'));
const rounds = Number(arg('--rounds', '2'));
const acks = Number(arg('--acks', '1'));
const size = 1024;

const dir = mkdtempSync(join(tmpdir(), 'logline-bench-tls-'));
try {
  const certs = writeDevCerts(join(dir, 'certs'));
  const server = await startServer({
    dataDir: join(dir, 'data'),
    config: parseBrokerConfig({
      'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0', 'num.partitions': '6',
      'ssl.keystore.type': 'PEM', 'ssl.keystore.location': join(certs.dir, 'broker.pem'),
      'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs.caCert,
    }),
  });
  const port = (name: string) => server.listeners.find((l) => l.name === name)!.port;
  const runs: { protocol: string; recordsPerSec: number; mbPerSec: number; seconds: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const protocol of ['PLAINTEXT', 'SSL']) {
      const extra = protocol === 'SSL' ? ['security.protocol=SSL', `ssl.ca.location=${certs.caCert}`] : [];
      const r = await runRdkafkaPerf({ bootstrap: `127.0.0.1:${port(protocol)}`, topic: `tls-bench-${protocol.toLowerCase()}`, records, size, acks, compression: 'none', maxSeconds: 300, extra });
      if (r.error) throw new Error(`${protocol}: ${r.error}`);
      runs.push({ protocol, ...r });
    }
  }
  await server.close();
  const best = (p: string) => Math.max(...runs.filter((r) => r.protocol === p).map((r) => r.recordsPerSec));
  console.log(JSON.stringify({
    bench: 'tls-vs-plaintext-produce', recordBytes: size, records, acks, rounds, runs,
    plaintextRecordsPerSecBest: best('PLAINTEXT'), sslRecordsPerSecBest: best('SSL'),
    sslShareOfPlaintext: Number((best('SSL') / best('PLAINTEXT')).toFixed(3)), target: 0.6,
  }, null, 2));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
