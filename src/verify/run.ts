// One `logline verify` run: start the nodes when asked to (`--cluster N`), create a fresh topic,
// run the workload with the nemesis beside it, heal the cluster, read every partition to its end,
// and check the history. Everything it started is stopped before it returns.
import type { ClusterClientOptions } from '../client/index.js';
import { check, type CheckReport } from './check/checker.js';
import { HistoryRecorder, type History } from './check/history.js';
import { LocalCluster, clusterNeeds, runNemesis, type NemesisOptions } from './nemesis.js';
import { createTopic, finalRead, runWorkload, type WorkloadOptions } from './workload.js';

export interface VerifyOptions {
  /** Where the cluster is (TLS and SASL included); ignored with `cluster`, which makes its own. */
  client: ClusterClientOptions;
  workload: Omit<WorkloadOptions, 'client' | 'topic'> & { topic?: string };
  /** Start this many `logline server` nodes and run against them. */
  cluster?: { nodes: number; dataDir?: string; settings?: string[] };
  /** Faults to inject (only with `cluster`). */
  nemesis?: NemesisOptions;
  examplesMax?: number;
  /** Told of progress: the operations so far (for a progress line). */
  onProgress?: (ops: number) => void;
  /** Stop invoking operations early (Ctrl-C); the run still heals, reads and checks. */
  stop?: () => boolean;
}

export interface VerifyResult {
  topic: string;
  bootstrap: string;
  durationMs: number;
  history: History;
  report: CheckReport;
}

export async function runVerify(o: VerifyOptions): Promise<VerifyResult> {
  const started = Date.now();
  const h = new HistoryRecorder(() => Date.now() - started);
  const cluster = o.cluster ? await LocalCluster.start({ nodes: o.cluster.nodes, ...clusterNeeds(o.nemesis), ...(o.cluster.dataDir ? { dataDir: o.cluster.dataDir } : {}), ...(o.cluster.settings ? { settings: o.cluster.settings } : {}) }) : null;
  const progress = o.onProgress ? setInterval(() => o.onProgress!(h.ops.length), 1000) : null;
  try {
    const client = cluster ? { ...o.client, bootstrap: cluster.bootstrap } : o.client;
    const topic = o.workload.topic ?? `logline-verify-${started.toString(36)}`;
    const workload: WorkloadOptions = { ...o.workload, client, topic };
    await createTopic(workload);
    let workloadDone = false;
    const nemesis = cluster && o.nemesis ? runNemesis(cluster, o.nemesis, h, () => workloadDone) : Promise.resolve();
    try {
      await runWorkload(workload, h, o.stop);
    } finally {
      workloadDone = true;
      await nemesis;
    }
    if (cluster) await cluster.heal();
    await finalRead(workload, h);
    return { topic, bootstrap: client.bootstrap, durationMs: Date.now() - started, history: h.ops, report: check(h.ops, o.examplesMax === undefined ? {} : { examplesMax: o.examplesMax }) };
  } finally {
    if (progress) clearInterval(progress);
    await cluster?.close();
  }
}
