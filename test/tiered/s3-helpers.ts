// Starts and stops the S3 API server (s3-server.ts, @20minutes/s3rver) as its own process on
// 127.0.0.1, for the tests of the S3 backend and of tiering against it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export const ACCESS_KEY = 'LOGLINETESTKEY';
export const SECRET = 'logline-test-secret';
export const BUCKET = 'logline-tiered';

export interface RunningServer { child: ChildProcess; port: number; dir: string }

/** A new server over a new directory, or with `again` the same directory and port as a server killed before. */
export async function startS3Server(again?: { dir: string; port: number }): Promise<RunningServer> {
  const dir = again?.dir ?? mkdtempSync(join(tmpdir(), 'logline-s3rver-'));
  const script = join(dirname(fileURLToPath(import.meta.url)), 's3-server.js');
  const child = spawn(process.execPath, [script, dir, ACCESS_KEY, SECRET, BUCKET, ...(again === undefined ? [] : [String(again.port)])], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', (l) => { rl.close(); resolve(l); });
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code} before it was ready`)));
  });
  return { child, port: (JSON.parse(line) as { port: number }).port, dir };
}

/** SIGKILLs the server (its directory stays, for startS3Server(again)). */
export async function killS3Server(s: RunningServer): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGKILL');
  await exited;
}

/** Where s3rver keeps the parts of multipart uploads not completed yet (one folder per upload id). */
export function s3UploadsDir(s: RunningServer): string {
  return join(s.dir, BUCKET, '._S3rver_uploads');
}

export async function stopS3Server(s: RunningServer): Promise<void> {
  // A stopped (SIGSTOP) server must go on to see the SIGTERM.
  if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGCONT');
  if (s.child.exitCode === null && s.child.signalCode === null) {
    const exited = new Promise((r) => s.child.once('exit', r));
    s.child.kill('SIGTERM');
    await exited;
  }
  rmSync(s.dir, { recursive: true, force: true });
}
