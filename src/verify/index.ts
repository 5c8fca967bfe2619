// The verify room's door: histories of Kafka operations, the checker of the published Kafka
// analyses' anomaly classes (pure), the timeline picture, and the recorded workload and fault
// schedule behind `logline verify`.
export {
  HistoryRecorder, NEMESIS, FAULT_KINDS, partitionOf, pollsOf, sendsOf,
  type History, type Op, type OpType, type OpKind, type FaultKind, type Mop, type Send, type Poll, type PartitionRead, type Isolation,
} from './check/history.js';
export { check, ANOMALY_CLASSES, type AnomalyName, type CheckReport, type ClassReport, type CheckStats, type CheckOptions } from './check/checker.js';
export { DepGraph, type EdgeKind } from './check/graph.js';
export { runVerify, type VerifyOptions, type VerifyResult } from './run.js';
export { WORKLOAD_DEFAULTS, type WorkloadOptions } from './workload.js';
export { LocalCluster, LOGLINE_BIN, NEMESIS_FAULTS, runNemesis, type NemesisOptions, type NemesisFault } from './nemesis.js';
export { timelineSvg, type TimelineOptions } from './timeline.js';
