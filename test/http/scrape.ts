// Reading a Prometheus text scrape the way a user's query would: one sample by name and labels.

/** The value of one sample in a Prometheus text scrape (labels must match exactly, in any order), or undefined. */
export function sample(scrape: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).sort().join(',');
  for (const line of scrape.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const got = (m[2] ?? '').split(/,(?=[a-zA-Z_]+=")/).filter((x) => x !== '').sort().join(',');
    if (got === want) return Number(m[3]);
  }
  return undefined;
}

/** Every metric family name a scrape declares (its `# TYPE` lines), with the sample names each may use. */
export function exposedNames(scrape: string): Set<string> {
  const names = new Set<string>();
  for (const line of scrape.split('\n')) {
    const m = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (m === null) continue;
    names.add(m[1]!);
    if (m[2] === 'histogram' || m[2] === 'summary') for (const s of ['_bucket', '_sum', '_count']) names.add(m[1]! + s);
  }
  return names;
}
