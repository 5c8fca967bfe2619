// ops/: the Grafana dashboard and the Prometheus alert rules and scrape config. Every metric they
// query must be one a live node exposes (a renamed metric would leave a panel empty and an alert
// silent); kafka_consumergroup_* is allowed by name (the group-lag exporter's family). The five
// alerts of the checklist are there, and the dashboard shows them and throughput.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startServer } from '../../src/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { exposedNames } from './scrape.js';

const DASHBOARD = 'ops/grafana/logline.json';
const ALERTS = 'ops/prometheus/alerts.yml';
const PROMETHEUS = 'ops/prometheus/prometheus.yml';

/** PromQL's functions, aggregations and keywords: the identifiers in an expression that are not metric names. */
const PROMQL_WORDS = new Set([
  'sum', 'min', 'max', 'avg', 'count', 'stddev', 'stdvar', 'topk', 'bottomk', 'quantile', 'count_values', 'group',
  'rate', 'irate', 'increase', 'delta', 'idelta', 'deriv', 'predict_linear', 'histogram_quantile', 'abs', 'absent', 'ceil', 'floor', 'round',
  'clamp_min', 'clamp_max', 'changes', 'resets', 'vector', 'scalar', 'time', 'sort', 'sort_desc', 'label_replace', 'label_join',
  'avg_over_time', 'min_over_time', 'max_over_time', 'sum_over_time', 'count_over_time', 'quantile_over_time', 'last_over_time',
  'and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan',
]);

/** The metric names a PromQL expression reads. */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // label values
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // ranges ([5m], [$__rate_interval])
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '') // label lists
    .replace(/\$\w+/g, ''); // dashboard variables
  return [...bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0]).filter((w) => !PROMQL_WORDS.has(w.toLowerCase()) && !/^\d/.test(w));
}

/** A YAML file as JSON, read by Debian's python3-yaml (no YAML parser among the project's dependencies). */
function readYaml(path: string): unknown | null {
  for (const python of ['/usr/bin/python3', 'python3']) {
    const r = spawnSync(python, ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))', path], { encoding: 'utf8' });
    if (r.status === 0) return JSON.parse(r.stdout);
  }
  return null;
}

function dashboardExprs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const x of node) dashboardExprs(x, out);
  else if (typeof node === 'object' && node !== null) {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'expr' && typeof v === 'string') out.push(v);
      else dashboardExprs(v, out);
    }
  }
  return out;
}

async function liveNames(): Promise<Set<string>> {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config: parseBrokerConfig({ 'node.id': '1', listeners: 'PLAINTEXT://127.0.0.1:0', 'http.listener': '127.0.0.1:0' }) });
  try {
    return exposedNames(await (await fetch(`http://127.0.0.1:${server.http!.port}/metrics`)).text());
  } finally {
    await server.close();
  }
}

function unknownNames(exprs: string[], exposed: Set<string>): string[] {
  return [...new Set(exprs.flatMap(metricNames))].filter((n) => !exposed.has(n) && !n.startsWith('kafka_consumergroup_'));
}

test('metricNames finds the metrics of an expression and nothing else', () => {
  assert.deepEqual(metricNames('histogram_quantile(0.99, sum by (request, le) (rate(kafka_network_requestmetrics_totaltimems_bucket{request!~"Fetch|Join"}[5m]))) > 500'),
    ['kafka_network_requestmetrics_totaltimems_bucket']);
  assert.deepEqual(metricNames('sum(rate(a_total[$__rate_interval])) / (sum(rate(a_total[1m])) + sum by (instance) (b))'), ['a_total', 'a_total', 'b']);
});

test('the dashboard and the alert rules query only metrics a live node exposes; the five checklist alerts and the throughput panels are there', async () => {
  const exposed = await liveNames();
  assert.ok(exposed.has('kafka_server_replicamanager_underreplicatedpartitions') && exposed.has('process_resident_memory_bytes'), 'the scrape was read');

  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
  const exprs = dashboardExprs(dashboard);
  assert.deepEqual(unknownNames(exprs, exposed), [], 'dashboard metrics');
  // Importable anywhere: the data source is a variable, every panel and query uses it.
  assert.deepEqual(dashboard.templating.list.find((v: { type: string }) => v.type === 'datasource'), {
    name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {}, hide: 0, refresh: 1, regex: '', options: [],
  });
  for (const p of dashboard.panels.filter((x: { type: string }) => x.type !== 'row')) {
    assert.equal(p.datasource.uid, '${datasource}', p.title);
    for (const t of p.targets) assert.equal(t.datasource.uid, '${datasource}', p.title);
  }
  const ids = dashboard.panels.map((p: { id: number }) => p.id);
  assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
  const used = new Set(exprs.flatMap(metricNames));
  for (const name of ['kafka_server_replicamanager_underreplicatedpartitions', 'kafka_controller_kafkacontroller_offlinepartitionscount', 'kafka_server_replicamanager_isrshrinks_total',
    'kafka_consumergroup_lag', 'kafka_network_requestmetrics_totaltimems_bucket', 'kafka_server_brokertopicmetrics_bytesin_total', 'kafka_server_brokertopicmetrics_bytesout_total',
    'kafka_server_brokertopicmetrics_messagesin_total']) {
    assert.ok(used.has(name), `the dashboard shows ${name}`);
  }

  const alerts = readYaml(ALERTS) as { groups: { name: string; rules: { alert: string; expr: string; for: string; labels: { severity: string }; annotations: { summary: string } }[] }[] } | null;
  const config = readYaml(PROMETHEUS) as { rule_files: string[]; scrape_configs: { job_name: string; metrics_path: string; static_configs: { targets: string[] }[] }[] } | null;
  if (alerts === null || config === null) { test.skip('python3 with yaml is not installed: the Prometheus files are not checked'); return; }
  const rules = alerts.groups.flatMap((g) => g.rules);
  assert.deepEqual(unknownNames(rules.map((r) => r.expr), exposed), [], 'alert rule metrics');
  for (const r of rules) {
    assert.ok(/^\d+[smh]$/.test(r.for) && ['warning', 'critical'].includes(r.labels.severity) && r.annotations.summary.length > 0, `${r.alert}: for, severity and summary`);
  }
  const byMetric = (metric: string) => rules.filter((r) => metricNames(r.expr).includes(metric)).map((r) => r.alert);
  assert.deepEqual(byMetric('kafka_server_replicamanager_underreplicatedpartitions'), ['LoglineUnderReplicatedPartitions']);
  assert.deepEqual(byMetric('kafka_controller_kafkacontroller_offlinepartitionscount'), ['LoglineOfflinePartitions']);
  assert.deepEqual(byMetric('kafka_server_replicamanager_isrshrinks_total'), ['LoglineIsrShrinking']);
  assert.deepEqual(byMetric('kafka_consumergroup_lag'), ['LoglineConsumerLag']);
  assert.deepEqual(byMetric('kafka_network_requestmetrics_totaltimems_bucket'), ['LoglineRequestLatencyP99']);

  assert.deepEqual(config.rule_files, ['alerts.yml']);
  const job = config.scrape_configs.find((j) => j.job_name === 'logline')!;
  assert.equal(job.metrics_path, '/metrics');
  assert.ok(job.static_configs[0]!.targets.every((t) => t.endsWith(':9644')), 'the http.listener port');

  // Prometheus's own checker, where it is installed (not in CI: Debian's prometheus package is large).
  const promtool = spawnSync('promtool', ['check', 'rules', ALERTS], { encoding: 'utf8' });
  if (promtool.error === undefined) {
    assert.equal(promtool.status, 0, promtool.stdout + promtool.stderr);
    const checked = spawnSync('promtool', ['check', 'config', PROMETHEUS], { encoding: 'utf8' });
    assert.equal(checked.status, 0, checked.stdout + checked.stderr);
  }
});
