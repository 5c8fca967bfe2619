// librdkafka 2.15.1's share consumer as a test driver: rdkafka-share.c built against the
// librdkafka that @confluentinc/kafka-javascript compiles (as bench/rdkafka-perf.c is), one
// process per consumer, each delivery printed as a line and parsed here. Without the package the
// tests that use it skip with a message, except in CI, where they fail.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

const PACKAGE = '@confluentinc/kafka-javascript';
const INSTALL = `CKJS_LINKING=dynamic npm_config_build_from_source=true npm install --no-save ${PACKAGE}@1.10.1`;
const SOURCE = 'test/broker/rdkafka-share.c';
const BINARY = 'dist/test/broker/rdkafka-share';
/** Set SHARE_DEBUG=1 for librdkafka's group and fetch debug log on stderr. */
const DEBUG = process.env.SHARE_DEBUG ? ['rd.debug=cgrp,fetch,protocol'] : [];

/** The driver's path, built when missing or older than its source; or why it cannot be. */
function driver(): { binary: string | null; skip: string | false } {
  let pkg: string;
  try {
    pkg = dirname(createRequire(import.meta.url).resolve(`${PACKAGE}/package.json`));
  } catch {
    const why = `${PACKAGE} is not installed (${INSTALL})`;
    if (process.env.CI) throw new Error(why);
    return { binary: null, skip: why };
  }
  const include = join(pkg, 'deps/librdkafka/src');
  const libDir = join(pkg, 'build/deps');
  if (!existsSync(join(include, 'rdkafka.h')) || !existsSync(join(libDir, 'librdkafka.so'))) {
    const why = `${PACKAGE} has no librdkafka.so to link against (${INSTALL})`;
    if (process.env.CI) throw new Error(why);
    return { binary: null, skip: why };
  }
  if (!existsSync(BINARY) || statSync(BINARY).mtimeMs < statSync(SOURCE).mtimeMs) {
    const cc = spawnSync('cc', ['-O1', '-Wall', '-o', BINARY, SOURCE, `-I${include}`, `-L${libDir}`, '-lrdkafka', `-Wl,-rpath,${libDir}`], { encoding: 'utf8' });
    if (cc.status !== 0) throw new Error(`cc failed: ${cc.error?.message ?? cc.stderr}`);
  }
  return { binary: BINARY, skip: false };
}
export const { binary, skip } = driver();

export interface Delivery { partition: number; offset: number; deliveryCount: number; value: string }

/** One share consumer process and what it printed. */
export class ShareConsumer {
  readonly records: Delivery[] = [];
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  constructor(bootstrap: string, group: string, topic: string, options: string[]) {
    this.child = spawn(binary!, [bootstrap, group, topic, ...options, ...DEBUG], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buffered = '';
    this.child.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        this.lines.push(line);
        const m = /^R (\d+) (\d+) (\d+) (.*)$/.exec(line);
        if (m) this.records.push({ partition: Number(m[1]), offset: Number(m[2]), deliveryCount: Number(m[3]), value: m[4]! });
      }
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  async waitFor(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await ok())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; printed: ${this.lines.slice(-20).join(' | ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  kill(): void { this.child.kill('SIGKILL'); }
}

