// Builds bench/rdkafka-perf.c (a librdkafka producer and consumer in C) against the librdkafka that
// @confluentinc/kafka-javascript compiled from the npm registry, and runs it. The binary goes to
// dist/bench/rdkafka-perf and is rebuilt when the source is newer.
//   node dist/bench/rdkafka-perf.js --bootstrap 127.0.0.1:9092 --topic T --records N --size 1024 [--acks 1] [--compression none]
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const SOURCE = 'bench/rdkafka-perf.c';
const BINARY = 'dist/bench/rdkafka-perf';

/** The binary's path, building it first if needed; null (with the reason on stderr) when it cannot be built. */
export function rdkafkaPerfBinary(): string | null {
  let pkg: string;
  try {
    pkg = dirname(createRequire(import.meta.url).resolve('@confluentinc/kafka-javascript/package.json'));
  } catch {
    return null;
  }
  const include = join(pkg, 'deps/librdkafka/src');
  const libDir = join(pkg, 'build/deps');
  if (!existsSync(join(include, 'rdkafka.h')) || !existsSync(join(libDir, 'librdkafka.so'))) return null;
  if (existsSync(BINARY) && statSync(BINARY).mtimeMs >= statSync(SOURCE).mtimeMs) return BINARY;
  const cc = spawnSync('cc', ['-O2', '-Wall', '-o', BINARY, SOURCE, `-I${include}`, `-L${libDir}`, '-lrdkafka', `-Wl,-rpath,${libDir}`], { encoding: 'utf8' });
  if (cc.status !== 0) {
    process.stderr.write(`rdkafka-perf: cc failed: ${cc.error?.message ?? cc.stderr}\n`);
    return null;
  }
  return BINARY;
}

/** Sends `records` values of `size` bytes; rdkafka-perf's JSON summary (cpuSeconds is the client's own CPU). */
export function runRdkafkaPerf(o: { bootstrap: string; topic: string; records: number; size: number; acks: number; compression: string; maxSeconds: number; extra?: readonly string[] }): Promise<any> {
  return run([o.bootstrap, o.topic, String(o.records), String(o.size), String(o.acks), o.compression, String(o.maxSeconds), ...(o.extra ?? [])], o.maxSeconds);
}

/** Reads `records` records of `topic` from the beginning of every partition with librdkafka's consumer; its JSON summary. */
export function runRdkafkaConsume(o: { bootstrap: string; topic: string; records: number; maxSeconds: number; extra?: readonly string[] }): Promise<any> {
  return run(['consume', o.bootstrap, o.topic, String(o.records), String(o.maxSeconds), ...(o.extra ?? [])], o.maxSeconds);
}

function run(args: string[], maxSeconds: number): Promise<any> {
  const binary = rdkafkaPerfBinary();
  if (!binary) return Promise.resolve({ error: 'rdkafka-perf could not be built' });
  return new Promise((resolve) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d) => { out += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), (maxSeconds + 60) * 1000);
    child.on('exit', (code) => { clearTimeout(timer); try { resolve(JSON.parse(out)); } catch { resolve({ error: `rdkafka-perf exited with ${code}` }); } });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const arg = (name: string, dflt: string) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1]! : dflt; };
  const r = await runRdkafkaPerf({
    bootstrap: arg('--bootstrap', '127.0.0.1:9092'), topic: arg('--topic', 'rdkafka-perf'), records: Number(arg('--records', '1000000')),
    size: Number(arg('--size', '1024')), acks: Number(arg('--acks', '1')), compression: arg('--compression', 'none'), maxSeconds: Number(arg('--max-seconds', '300')),
  });
  console.log(JSON.stringify(r));
  process.exit(r.error ? 1 : 0);
}
