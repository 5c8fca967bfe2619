// `logline plan`: the standard Kafka sizing arithmetic (disk writes, network, storage, per-broker
// load and the cost of losing a broker) for a workload, as a table or JSON. `sizingPlan` is the
// arithmetic, a pure function; the command only parses flags and prints.
//
// Units are decimal, as disks and links are sold: 1 MB = 10^6 bytes, 1 TB = 10^12 bytes, so
// MB/s × seconds ÷ 10^6 is TB. Throughput lines use the PEAK rate (what the disks and links must
// absorb at the busiest moment); storage lines use the AVERAGE rate (what accumulates over the
// retention period). Every line says which one it uses.
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { table, toJson } from './output.js';

const SECONDS_PER_HOUR = 3600;
const SECONDS_PER_DAY = 86_400;
const MB_PER_TB = 1_000_000;

/**
 * What one broker is assumed to write to its disks at most (leader appends plus follower copies)
 * when --brokers is not given. A conservative figure for one broker's sustained sequential writes
 * with room left for reads, compaction and recovery; operators with measured disks pass their own.
 */
export const BROKER_WRITE_MB_PER_SEC_DEFAULT = 60;

export interface PlanInput {
  peakMbPerSec: number;
  averageMbPerSec: number;
  retentionDays: number;
  consumerGroups: number;
  replicationFactor: number;
  /** Omitted: suggested from brokerWriteMbPerSecMax. */
  brokers?: number | undefined;
  /** Tiered storage's local window (local.retention.ms), in hours; omitted: no tiered storage line. */
  localRetentionHours?: number | undefined;
  brokerWriteMbPerSecMax?: number | undefined;
}

export interface SizingPlan {
  brokers: number;
  /** Whether `brokers` was suggested (no --brokers) rather than given. */
  brokersSuggested: boolean;
  /** The rule behind a suggested broker count, else null. */
  brokersRule: string | null;
  diskWritesPeakMbPerSec: number;
  networkInPeakMbPerSec: number;
  networkReplicationPeakMbPerSec: number;
  networkOutPeakMbPerSec: number;
  storagePerCopyTb: number;
  storageAllReplicasTb: number;
  storagePerBrokerTb: number;
  localWindowTb: number | null;
  localWindowPerBrokerTb: number | null;
  writePerBrokerPeakMbPerSec: number;
  /** How much more each survivor writes when one broker is lost (its partitions move to the others), %. */
  oneBrokerLossIncreasePct: number;
  writePerBrokerAfterLossPeakMbPerSec: number;
}

/** Brokers needed so that, with one lost, the rest still absorb the peak writes within the budget (and at least RF). */
export function suggestBrokers(diskWritesPeakMbPerSec: number, replicationFactor: number, brokerWriteMbPerSecMax: number): number {
  return Math.max(replicationFactor, Math.ceil(diskWritesPeakMbPerSec / brokerWriteMbPerSecMax) + 1);
}

export function sizingPlan(input: PlanInput): SizingPlan {
  const { peakMbPerSec: peak, averageMbPerSec: average, retentionDays, consumerGroups, replicationFactor: rf } = input;
  const budget = input.brokerWriteMbPerSecMax ?? BROKER_WRITE_MB_PER_SEC_DEFAULT;
  const diskWritesPeak = peak * rf;
  const brokers = input.brokers ?? suggestBrokers(diskWritesPeak, rf, budget);
  const storagePerCopy = (average * SECONDS_PER_DAY * retentionDays) / MB_PER_TB;
  const localWindow = input.localRetentionHours === undefined ? null : (average * SECONDS_PER_HOUR * input.localRetentionHours * rf) / MB_PER_TB;
  const writePerBroker = diskWritesPeak / brokers;
  // A lost broker's share spreads over the others: each now carries brokers/(brokers-1) of its load.
  const afterLoss = brokers > 1 ? diskWritesPeak / (brokers - 1) : Infinity;
  return {
    brokers,
    brokersSuggested: input.brokers === undefined,
    brokersRule: input.brokers === undefined
      ? `the fewest brokers (at least RF ${rf}) that still write the peak ${fmt(diskWritesPeak)} MB/s within ${fmt(budget)} MB/s each with one broker lost: ceil(${fmt(diskWritesPeak)} / ${fmt(budget)}) + 1`
      : null,
    diskWritesPeakMbPerSec: diskWritesPeak,
    networkInPeakMbPerSec: peak,
    networkReplicationPeakMbPerSec: peak * (rf - 1),
    networkOutPeakMbPerSec: peak * consumerGroups,
    storagePerCopyTb: storagePerCopy,
    storageAllReplicasTb: storagePerCopy * rf,
    storagePerBrokerTb: (storagePerCopy * rf) / brokers,
    localWindowTb: localWindow,
    localWindowPerBrokerTb: localWindow === null ? null : localWindow / brokers,
    writePerBrokerPeakMbPerSec: writePerBroker,
    oneBrokerLossIncreasePct: brokers > 1 ? (afterLoss / writePerBroker - 1) * 100 : Infinity,
    writePerBrokerAfterLossPeakMbPerSec: afterLoss,
  };
}

/** At most one decimal, none when it is zero: 450, 36.3, 12.5. */
function fmt(n: number): string {
  if (!Number.isFinite(n)) return 'n/a';
  const s = n.toFixed(1);
  return s.endsWith('.0') ? s.slice(0, -2) : s;
}

export interface PlanRow { item: string; value: string; basis: string }

/** The plan as the table's rows: what, how much, and which rate and arithmetic it comes from. */
export function planRows(input: PlanInput, p: SizingPlan): PlanRow[] {
  const { retentionDays: days, replicationFactor: rf, consumerGroups: groups } = input;
  const peak = `peak ${fmt(input.peakMbPerSec)} MB/s`;
  const average = `average ${fmt(input.averageMbPerSec)} MB/s`;
  const n = p.brokers;
  const rows: PlanRow[] = [
    { item: 'brokers', value: String(n), basis: p.brokersSuggested ? `suggested: ${p.brokersRule}` : 'given' },
    { item: 'disk writes at peak (cluster)', value: `${fmt(p.diskWritesPeakMbPerSec)} MB/s`, basis: `${peak} × RF ${rf}` },
    { item: 'network in (producers)', value: `${fmt(p.networkInPeakMbPerSec)} MB/s`, basis: peak },
    { item: 'network replication', value: `${fmt(p.networkReplicationPeakMbPerSec)} MB/s`, basis: `${peak} × (RF ${rf} - 1)` },
    { item: 'network out to consumers', value: `${fmt(p.networkOutPeakMbPerSec)} MB/s`, basis: `${peak} × ${groups} consumer group${groups === 1 ? '' : 's'}` },
    { item: 'storage per replica copy', value: `${fmt(p.storagePerCopyTb)} TB`, basis: `${average} × 86400 s × ${fmt(days)} days` },
    { item: 'storage with all replicas', value: `${fmt(p.storageAllReplicasTb)} TB`, basis: `per copy × RF ${rf}` },
    { item: 'storage per broker', value: `${fmt(p.storagePerBrokerTb)} TB`, basis: `all replicas ÷ ${n} brokers` },
  ];
  if (p.localWindowTb !== null && p.localWindowPerBrokerTb !== null) {
    rows.push(
      { item: 'local window (tiered storage)', value: `${fmt(p.localWindowTb)} TB`, basis: `${average} × 3600 s × ${fmt(input.localRetentionHours!)} h × RF ${rf}` },
      { item: 'local window per broker', value: `${fmt(p.localWindowPerBrokerTb)} TB`, basis: `local window ÷ ${n} brokers` },
    );
  }
  rows.push(
    { item: 'write load per broker at peak', value: `${fmt(p.writePerBrokerPeakMbPerSec)} MB/s`, basis: `disk writes at peak ÷ ${n} brokers` },
    { item: 'one broker lost', value: `+${fmt(p.oneBrokerLossIncreasePct)}%`, basis: `each of ${n - 1} others writes ${fmt(p.writePerBrokerAfterLossPeakMbPerSec)} MB/s at peak (${n} ÷ ${n - 1})` },
  );
  return rows;
}

const FLAGS: Record<string, FlagSpec> = {
  'peak-mb-per-sec': { type: 'number', help: 'producer throughput at the busiest moment, MB/s (required)' },
  'average-mb-per-sec': { type: 'number', help: 'producer throughput averaged over a day, MB/s (required)' },
  'retention-days': { type: 'number', help: 'retention.ms in days (required)' },
  'consumer-groups': { type: 'number', help: 'consumer groups reading everything (default 1)' },
  'replication-factor': { type: 'number', help: 'replication factor (default 3)' },
  brokers: { type: 'number', help: 'brokers (default: suggested, leaving room to lose one at peak)' },
  'local-retention-hours': { type: 'number', help: 'tiered storage: hours kept on local disks (local.retention.ms)' },
  'broker-write-mb-per-sec': { type: 'number', help: `the most one broker should write, MB/s, for the suggested broker count (default ${BROKER_WRITE_MB_PER_SEC_DEFAULT})` },
  json: { type: 'boolean', help: 'print JSON instead of a table' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

function positive(flags: Record<string, unknown>, name: string, fallback?: number, integer = false): number {
  const v = flags[name] ?? fallback;
  if (v === undefined) throw new UsageError(`--${name} is required`);
  if (typeof v !== 'number' || !(v > 0) || (integer && !Number.isInteger(v))) throw new UsageError(`--${name}: expected a positive ${integer ? 'integer' : 'number'}, got ${String(v)}`);
  return v;
}

export async function planCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  if (flags.help) {
    console.log(helpText('logline plan --peak-mb-per-sec N --average-mb-per-sec N --retention-days N [options]',
      'Sizes a cluster: disk writes and network at the peak rate, storage at the average rate (decimal units: 1 TB = 10^12 bytes), load per broker and the cost of losing one.', FLAGS));
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`logline plan: unexpected argument ${positionals[0]}`);
  const consumerGroups = flags['consumer-groups'] ?? 1;
  if (typeof consumerGroups !== 'number' || !Number.isInteger(consumerGroups) || consumerGroups < 0) throw new UsageError('--consumer-groups: expected a whole number');
  const input: PlanInput = {
    peakMbPerSec: positive(flags, 'peak-mb-per-sec'),
    averageMbPerSec: positive(flags, 'average-mb-per-sec'),
    retentionDays: positive(flags, 'retention-days'),
    consumerGroups,
    replicationFactor: positive(flags, 'replication-factor', 3, true),
    brokers: flags.brokers === undefined ? undefined : positive(flags, 'brokers', undefined, true),
    localRetentionHours: flags['local-retention-hours'] === undefined ? undefined : positive(flags, 'local-retention-hours'),
    brokerWriteMbPerSecMax: positive(flags, 'broker-write-mb-per-sec', BROKER_WRITE_MB_PER_SEC_DEFAULT),
  };
  if (input.averageMbPerSec > input.peakMbPerSec) throw new UsageError('--average-mb-per-sec cannot exceed --peak-mb-per-sec');
  if (input.brokers !== undefined && input.brokers < input.replicationFactor) throw new UsageError(`--brokers ${input.brokers}: fewer than --replication-factor ${input.replicationFactor}`);
  const p = sizingPlan(input);
  console.log(flags.json ? toJson({ input, ...p }) : table(planRows(input, p) as unknown as Record<string, unknown>[]));
  return 0;
}
