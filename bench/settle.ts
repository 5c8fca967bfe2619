// Waiting for the machine to be quiet between benchmark scenarios: deleted topics' directories
// gone, dirty pages written back, the data disk idle (bench/single-node, bench/cluster).
import { readFileSync, readdirSync, statSync } from 'node:fs';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * Waits (up to 30 s each) until the broker has removed the directories of the topics earlier
 * scenarios deleted (it does so off its event loop, but the kernel work of freeing gigabytes
 * competes for the same two cores) and the kernel has written back what they left dirty in the
 * page cache (Dirty + Writeback under 64 MiB), so a scenario is not measured against the tail of
 * the previous one. Returns the MiB still dirty when it stopped waiting. (Brokers given several data
 * directories, as a cluster on one machine, share one disk: the first one's device is watched.)
 */
export async function settleDirtyPages(...dataDirs: string[]): Promise<number> {
  const deleting = () => dataDirs.some((d) => readdirSync(d).some((n) => n.endsWith('-delete')));
  for (let waited = 0; waited < 30_000 && deleting(); waited += 250) await sleep(250);
  const dirtyMiB = () => {
    const info = readFileSync('/proc/meminfo', 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(info)?.[1] ?? 0);
    return (kb('Dirty') + kb('Writeback')) / 1024;
  };
  for (let waited = 0; waited < 30_000 && dirtyMiB() > 64; waited += 250) await sleep(250);
  await settleDisk(dataDirs[0]!);
  return round(dirtyMiB());
}

/**
 * Waits (up to 30 s) until the data directory's block device has had no request in flight and
 * has completed no write or discard for six seconds. Freed gigabytes are discarded when the journal
 * commits them (ext4 mounted with `discard`, as here), seconds after the files are gone; a write
 * that needs the journal meanwhile waits for it (stalls of 100+ ms in the latency scenario).
 */
export async function settleDisk(dataDir: string): Promise<void> {
  const dev = statSync(dataDir).dev;
  const major = (dev >> 8) & 0xfff;
  const minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);
  // Fields after the name: writes completed (5), in flight (9), discards completed (12).
  const sample = (): [number, number, number] | null => {
    for (const line of readFileSync('/proc/diskstats', 'utf8').split('\n')) {
      const f = line.trim().split(/\s+/);
      if (Number(f[0]) === major && Number(f[1]) === minor) return [Number(f[7]), Number(f[11]), Number(f[14] ?? 0)];
    }
    return null;
  };
  let last = sample();
  if (last === null) return; // not a block device (tmpfs, overlay): nothing to wait for
  // Longer than ext4's journal commit interval (5 s): the discards come with the commit after the unlink.
  let quietMs = 0;
  for (let waited = 0; waited < 30_000 && quietMs < 6_000; waited += 250) {
    await sleep(250);
    const now = sample()!;
    quietMs = now[1] === 0 && now[0] === last[0] && now[2] === last[2] ? quietMs + 250 : 0;
    last = now;
  }
}

