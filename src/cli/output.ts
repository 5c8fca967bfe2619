// Human tables by default, JSON for scripts; the flags every client command shares.
import type { FlagSpec } from './args.js';
import type { ClusterClientOptions } from '../client/index.js';
import { commandConfig } from './command-config.js';

export function table(rows: Record<string, unknown>[], columns?: string[]): string {
  if (rows.length === 0) return '(none)';
  const cols = columns ?? Object.keys(rows[0]!);
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(',') : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(cols.map((c) => c.toUpperCase())), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n');
}

/** JSON that can carry bigints (as numbers when safe, strings otherwise). */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? (v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString()) : v));
}

/** Where a client command connects when -b/--bootstrap-server is absent, before localhost:9092. */
export const BOOTSTRAP_ENV = 'LOGLINE_BOOTSTRAP_SERVERS';

export const COMMON_FLAGS = {
  'bootstrap-server': { type: 'string', short: 'b', help: `host:port[,host:port] of brokers (default $${BOOTSTRAP_ENV}, else localhost:9092)` },
  'command-config': { type: 'string', help: 'Kafka client properties (security.protocol, sasl.mechanism, sasl.jaas.config or sasl.username/sasl.password, ssl.truststore.*, ssl.keystore.*)' },
  json: { type: 'boolean', help: 'print JSON instead of a table' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
} satisfies Record<string, FlagSpec>;

/** The brokers to bootstrap from: the flag, else the environment, else a local broker. */
export function bootstrapServers(flags: Record<string, unknown>): string {
  const flag = flags['bootstrap-server'];
  if (typeof flag === 'string') return flag;
  return process.env[BOOTSTRAP_ENV] || 'localhost:9092';
}

/** Where and how a client command connects: the brokers, and TLS/SASL from --command-config. */
export function clientOptions(flags: Record<string, unknown>): ClusterClientOptions {
  return { bootstrap: bootstrapServers(flags), ...commandConfig(flags) };
}
