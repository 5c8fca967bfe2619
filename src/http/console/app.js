// The Logline web console: a single page over the node's /v1 JSON API. Plain browser JavaScript
// (an ES module, no framework, no build step); every text from the cluster goes in through
// textContent, never as HTML. Views: overview, topics, topic (partitions, messages, configs),
// create topic, consumer groups, group (members, lag per partition, lag over time), schema
// registry subjects, subject (versions, two side by side with their differences), the mirror
// (MirrorMaker 2's engine in this node: flows, per-partition lag and latency, checkpoints), cluster
// links (their mirror topics, per-partition lag of the partitions this node leads). Above
// every view, a banner when one of this node's log directories is low on space, below its floor
// (produce refused) or offline.

const main = document.getElementById('view');
/** Timers of the current view, stopped when the view changes. */
let timers = [];

// ---- small helpers ---------------------------------------------------------------------------

/** An element: h('td', { class: 'num' }, 'text', childNode, ...). Attributes starting with "on" are listeners. */
function h(tag, attrs, ...children) {
  const el = tag === 'svg' || SVG_TAGS.has(tag) ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
const SVG_TAGS = new Set(['polyline', 'line', 'text', 'circle', 'rect', 'g', 'path']);

/** Admin credentials for writes on a listener off loopback: asked for once, kept for this tab only. */
const CREDENTIALS = 'logline.admin';

async function api(method, path, body, retried = false) {
  const init = { method, headers: {} };
  if (body !== undefined) { init.headers['content-type'] = 'application/json'; init.body = JSON.stringify(body); }
  const saved = sessionStorage.getItem(CREDENTIALS);
  if (method !== 'GET' && saved !== null) init.headers.authorization = `Basic ${saved}`;
  const res = await fetch(path, init);
  const text = await res.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  if (res.status === 403 && !retried && /HTTP Basic|wrong admin credentials/.test(json?.reason ?? '')) {
    const user = prompt('Admin user name (http.admin.username)');
    const password = user === null ? null : prompt('Admin password (http.admin.password)');
    if (user !== null && password !== null) {
      sessionStorage.setItem(CREDENTIALS, btoa(String.fromCharCode(...new TextEncoder().encode(`${user}:${password}`))));
      return api(method, path, body, true);
    }
  }
  if (!res.ok) throw new Error(json ? [json.error, json.detail ?? json.reason].filter(Boolean).join(': ') : `${res.status} ${text}`);
  return json;
}

const enc = encodeURIComponent;
const fmtBytes = (n) => n === null || n === undefined ? '–' : n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : n < 1073741824 ? `${(n / 1048576).toFixed(1)} MiB` : `${(n / 1073741824).toFixed(2)} GiB`;
const fmtNum = (n) => n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US');
const badge = (kind, text) => h('span', { class: `badge ${kind}` }, text);
const errorBox = (e) => h('div', { class: 'error', role: 'alert' }, e instanceof Error ? e.message : String(e));
const table = (head, rows) => h('table', {}, h('thead', {}, h('tr', {}, head.map((c) => h('th', typeof c === 'string' ? {} : c[1], typeof c === 'string' ? c : c[0])))), h('tbody', {}, rows));
const card = (label, value, bad) => h('div', { class: `card${bad ? ' bad' : ''}`, 'data-card': label }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value));

function every(ms, f) {
  const id = setInterval(f, ms);
  timers.push(id);
}

// ---- router ------------------------------------------------------------------------------------

const views = [
  [/^\/?$/, overview, 'overview'],
  [/^\/topics$/, topicsView, 'topics'],
  [/^\/topics\/new$/, createTopicView, 'topics'],
  [/^\/topics\/([^/]+)(?:\/(partitions|messages|configs))?$/, topicView, 'topics'],
  [/^\/groups$/, groupsView, 'groups'],
  [/^\/groups\/([^/]+)$/, groupView, 'groups'],
  [/^\/schemas$/, schemasView, 'schemas'],
  [/^\/schemas\/ids\/(\d+)$/, schemaIdView, 'schemas'],
  [/^\/schemas\/([^/]+)$/, schemaView, 'schemas'],
  [/^\/mirror$/, mirrorView, 'mirror'],
  [/^\/links$/, linksPage, 'links'],
];

async function render() {
  for (const t of timers) clearInterval(t);
  timers = [];
  const [path, qs] = location.hash.replace(/^#/, '').split('?');
  const params = new URLSearchParams(qs ?? '');
  for (const [re, view, nav] of views) {
    const m = re.exec(path || '/');
    if (!m) continue;
    for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.nav === nav);
    const root = h('div', {});
    main.replaceChildren(root);
    try {
      await view(root, m.slice(1).map((x) => (x === undefined ? x : decodeURIComponent(x))), params);
    } catch (e) {
      root.append(errorBox(e));
    }
    return;
  }
  main.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/' }, 'Overview')));
}

window.addEventListener('hashchange', render);
api('GET', '/v1/health').then((hl) => {
  document.getElementById('node').textContent = `node ${hl.nodeId} · ${hl.roles.join(', ')}`;
}, () => {});
render();

// ---- disk banner -------------------------------------------------------------------------------

/** This node's log directories from /v1/node: a banner for any that is low, full (produce refused) or offline. */
async function diskBanner() {
  const el = document.getElementById('banner');
  let dirs = [];
  try { dirs = (await api('GET', '/v1/node')).logDirs ?? []; } catch { return; }
  const lines = dirs.filter((d) => d.state !== 'ok').map((d) => {
    // Exact bytes where one decimal would show usable and floor alike.
    const near = fmtBytes(d.usableBytes) === fmtBytes(d.minFreeBytes) || fmtBytes(d.usableBytes) === fmtBytes(d.alertFreeBytes);
    const usable = `${near ? `${fmtNum(d.usableBytes)} bytes` : fmtBytes(d.usableBytes)} usable of ${fmtBytes(d.totalBytes)}`;
    if (d.state === 'offline') return ['bad', `Log directory ${d.path} is offline after an I/O error: this broker is shutting down; its partitions are led elsewhere.`];
    if (d.state === 'full') return ['bad', `Disk full: ${d.path} has ${usable}, below log.dir.min.free.bytes (${fmtBytes(d.minFreeBytes)}). Produce to its partitions is refused (NOT_ENOUGH_REPLICAS, clients retry) until space is freed: lower retention, delete records or topics, or grow the volume. Reads and consumer commits go on.`];
    return ['warn', `Disk low: ${d.path} has ${usable}, below log.dir.free.bytes.alert.threshold (${fmtBytes(d.alertFreeBytes)}); produce will be refused below ${fmtBytes(d.minFreeBytes)}.`];
  });
  el.replaceChildren(...lines.map(([kind, text]) => h('div', { class: `banner ${kind}`, role: 'alert', 'data-disk': kind }, text)));
  el.hidden = lines.length === 0;
}
diskBanner();
setInterval(diskBanner, 5000);

// ---- overview ----------------------------------------------------------------------------------

async function overview(root) {
  root.append(h('h1', {}, 'Overview'));
  const [b, q, t] = await Promise.all([api('GET', '/v1/brokers'), api('GET', '/v1/quorum').catch(() => null), api('GET', '/v1/topics?sizes=false')]);
  const parts = t.topics.flatMap((x) => x.partitions);
  const under = parts.filter((p) => p.underReplicated).length;
  const offline = parts.filter((p) => p.offline).length;
  const fenced = b.brokers.filter((x) => x.fenced).length;
  root.append(h('div', { class: 'cards' },
    card('Brokers', `${b.brokers.length - fenced} / ${b.brokers.length}`, fenced > 0),
    card('Controller', b.controllerId ?? '–', b.controllerId === null),
    card('Topics', t.topics.filter((x) => !x.internal).length),
    card('Partitions', parts.length),
    card('Under-replicated', under, under > 0),
    card('Offline', offline, offline > 0)));

  root.append(h('h2', {}, 'Brokers'));
  root.append(table(['ID', 'Address', 'Rack', 'Status', 'Epoch'], b.brokers.map((x) => {
    const status = [
      x.fenced ? badge('bad', 'fenced') : badge('good', 'unfenced'),
      x.alive === null ? null : x.alive ? badge('good', 'alive') : badge('bad', 'no heartbeat'),
      x.inControlledShutdown ? badge('warn', 'shutting down') : null,
      x.id === b.controllerId ? badge('info', 'controller') : null,
    ];
    return h('tr', { class: x.fenced ? 'bad' : '', 'data-broker': x.id }, h('td', {}, x.id), h('td', {}, x.endpoints.map((e) => `${e.name} ${e.host}:${e.port}`).join(', ')), h('td', {}, x.rack ?? '–'), h('td', {}, status), h('td', { class: 'num' }, x.brokerEpoch));
  })));

  if (q !== null) {
    root.append(h('h2', {}, 'Controller quorum'));
    root.append(h('p', { class: 'muted' }, `leader ${q.leaderId ?? 'none'} · epoch ${q.leaderEpoch} · high watermark ${fmtNum(q.highWatermark)} · this node: ${q.role}`));
    const rows = [...q.voters.map((v) => ['voter', v]), ...q.observers.map((o) => ['observer', o])];
    root.append(table(['Node', 'Kind', ['Log end offset', { class: 'num' }], ['Lag', { class: 'num' }], ['Last fetch', { class: 'num' }]], rows.map(([kind, r]) =>
      // A voter that has not fetched for a few fetch timeouts (2 s by default) is likely down.
      h('tr', { class: r.lag > 0 || r.lastFetchMsAgo > 5000 ? 'warn' : '', 'data-voter': r.id }, h('td', {}, r.id, r.id === q.leaderId ? [' ', badge('info', 'leader')] : null, r.id !== q.leaderId && r.lastFetchMsAgo > 5000 ? [' ', badge('bad', 'not fetching')] : null), h('td', {}, kind),
        h('td', { class: 'num' }, fmtNum(r.logEndOffset)), h('td', { class: 'num' }, fmtNum(r.lag)), h('td', { class: 'num' }, r.lastFetchMsAgo === null ? '–' : `${r.lastFetchMsAgo} ms ago`)))));
    if (q.role !== 'leader') root.append(h('p', { class: 'muted' }, 'Replicas\' progress is known to the quorum leader; open its console for lag.'));
  }
}

// ---- topics ------------------------------------------------------------------------------------

async function topicsView(root, _m, params) {
  const showInternal = params.get('internal') === 'true';
  root.append(h('h1', {}, 'Topics'));
  root.append(h('div', { class: 'toolbar' },
    h('a', { href: '#/topics/new' }, h('button', { type: 'button', id: 'create-topic' }, 'Create topic')),
    h('a', { href: showInternal ? '#/topics' : '#/topics?internal=true' }, showInternal ? 'Hide internal topics' : 'Show internal topics')));
  const t = await api('GET', '/v1/topics');
  const topics = t.topics.filter((x) => showInternal || !x.internal);
  if (topics.length === 0) { root.append(h('p', { class: 'muted' }, 'No topics yet.')); return; }
  root.append(table(['Name', ['Partitions', { class: 'num' }], ['Replicas', { class: 'num' }], 'Health', ['Messages', { class: 'num' }], ['Size', { class: 'num' }]], topics.map((x) => {
    const under = x.partitions.filter((p) => p.underReplicated).length;
    const offline = x.partitions.filter((p) => p.offline).length;
    const known = x.partitions.every((p) => p.highWatermark !== null);
    const messages = known ? x.partitions.reduce((n, p) => n + (p.highWatermark - p.logStartOffset), 0) : null;
    const size = x.partitions.every((p) => p.sizeBytes !== null) ? x.partitions.reduce((n, p) => n + p.sizeBytes, 0) : null;
    return h('tr', { class: offline > 0 ? 'bad' : under > 0 ? 'warn' : '', 'data-topic': x.name },
      h('td', {}, h('a', { href: `#/topics/${enc(x.name)}` }, x.name), x.internal ? [' ', badge('info', 'internal')] : null),
      h('td', { class: 'num' }, x.partitions.length), h('td', { class: 'num' }, x.partitions[0]?.replicas.length ?? 0),
      h('td', {}, offline > 0 ? badge('bad', `${offline} offline`) : null, under > 0 ? badge('warn', `${under} under-replicated`) : null, offline + under === 0 ? badge('good', 'healthy') : null),
      h('td', { class: 'num' }, known ? fmtNum(messages) : '–'), h('td', { class: 'num' }, fmtBytes(size)));
  })));
}

function pairs(text) {
  const out = {};
  for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`expected name=value, got "${line}"`);
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

async function createTopicView(root) {
  root.append(h('h1', {}, 'Create topic'));
  const status = h('div', {});
  const form = h('form', { class: 'panel', id: 'create-topic-form' },
    h('label', {}, 'Name', h('input', { name: 'name', required: true, autofocus: true, pattern: '[a-zA-Z0-9._-]+', maxlength: 249 })),
    h('div', { class: 'row' },
      h('label', {}, 'Partitions', h('input', { name: 'partitions', type: 'number', min: 1, placeholder: 'broker default' })),
      h('label', {}, 'Replication factor', h('input', { name: 'replicationFactor', type: 'number', min: 1, placeholder: 'broker default' }))),
    h('label', {}, 'Configs (one name=value a line)', h('textarea', { name: 'configs', rows: 4, placeholder: 'cleanup.policy=compact\nretention.ms=604800000' })),
    h('div', {}, h('button', { type: 'submit' }, 'Create')),
    status);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const f = new FormData(form);
    try {
      const body = { name: f.get('name'), configs: pairs(String(f.get('configs') ?? '')) };
      if (f.get('partitions')) body.partitions = Number(f.get('partitions'));
      if (f.get('replicationFactor')) body.replicationFactor = Number(f.get('replicationFactor'));
      const r = await api('POST', '/v1/topics', body);
      location.hash = `#/topics/${enc(r.name)}`;
    } catch (e) {
      status.replaceChildren(errorBox(e));
    }
  });
  root.append(form);
}

async function topicView(root, [name, tab = 'partitions'], params) {
  const t = await api('GET', `/v1/topics/${enc(name)}`);
  const del = h('button', { type: 'button', class: 'danger', id: 'delete-topic', onclick: async () => {
    if (!confirm(`Delete topic ${name} and all its records?`)) return;
    try { await api('DELETE', `/v1/topics/${enc(name)}`); location.hash = '#/topics'; } catch (e) { root.append(errorBox(e)); }
  } }, 'Delete topic');
  root.append(h('div', { class: 'toolbar title' }, h('h1', {}, name), t.internal ? badge('info', 'internal') : null, h('span', { class: 'muted' }, `id ${t.topicId}`), t.internal ? null : del));
  root.append(h('div', { class: 'tabs' }, ['partitions', 'messages', 'configs'].map((x) =>
    h('a', { href: `#/topics/${enc(name)}/${x}`, class: x === tab ? 'active' : '' }, x[0].toUpperCase() + x.slice(1)))));
  const body = h('div', {});
  root.append(body);
  if (tab === 'partitions') partitionsTab(body, t);
  else if (tab === 'messages') await messagesTab(body, name, t, params);
  else await configsTab(body, name);
}

function partitionsTab(root, t) {
  root.append(table([['Partition', { class: 'num' }], ['Leader', { class: 'num' }], 'Replicas', 'ISR', 'Status', ['Log start', { class: 'num' }], ['High watermark', { class: 'num' }], ['Log end', { class: 'num' }], ['Messages', { class: 'num' }], ['Size', { class: 'num' }]],
    t.partitions.map((p) => h('tr', { class: p.offline ? 'bad' : p.underReplicated ? 'warn' : '', 'data-partition': p.partition },
      h('td', { class: 'num' }, p.partition), h('td', { class: 'num' }, p.leader < 0 ? 'none' : p.leader),
      h('td', {}, p.replicas.map((r) => h('span', { class: `badge ${p.offlineReplicas.includes(r) ? 'bad' : p.isr.includes(r) ? 'good' : 'warn'}` }, r))),
      h('td', {}, p.isr.join(', ')),
      h('td', {}, p.offline ? badge('bad', 'offline') : p.underReplicated ? badge('warn', 'under-replicated') : badge('good', 'in sync')),
      h('td', { class: 'num' }, fmtNum(p.logStartOffset)), h('td', { class: 'num' }, fmtNum(p.highWatermark)), h('td', { class: 'num' }, fmtNum(p.logEndOffset)),
      h('td', { class: 'num' }, p.highWatermark === null ? '–' : fmtNum(p.highWatermark - p.logStartOffset)), h('td', { class: 'num' }, fmtBytes(p.sizeBytes))))));
  if (t.partitions.some((p) => p.tiered)) tieredTable(root, t);
  if (t.partitions.some((p) => p.offsetsFrom !== 'leader')) root.append(h('p', { class: 'muted' }, 'Offsets come from the replica on this node; a partition led elsewhere shows its follower\'s view or none.'));
}

/** A tiered topic (remote.storage.enable): per partition, what is on local disk and what is in the remote tier. */
function tieredTable(root, t) {
  root.append(h('h2', {}, 'Tiered storage'));
  root.append(table([['Partition', { class: 'num' }], ['Remote log start', { class: 'num' }], ['Highest copied', { class: 'num' }], ['Local log start', { class: 'num' }], ['Remote size', { class: 'num' }], ['Local size', { class: 'num' }]],
    t.partitions.map((p) => h('tr', { 'data-tiered-partition': p.partition },
      h('td', { class: 'num' }, p.partition),
      h('td', { class: 'num' }, p.tiered ? fmtNum(p.tiered.remoteLogStartOffset) : '–'),
      h('td', { class: 'num' }, p.tiered && p.tiered.highestOffsetInRemoteStorage >= 0 ? fmtNum(p.tiered.highestOffsetInRemoteStorage) : '–'),
      h('td', { class: 'num' }, p.tiered ? fmtNum(p.tiered.localLogStartOffset) : '–'),
      h('td', { class: 'num' }, p.tiered ? fmtBytes(p.tiered.remoteSizeBytes) : '–'),
      h('td', { class: 'num' }, fmtBytes(p.sizeBytes))))));
  root.append(h('p', { class: 'muted' }, 'Offsets from the remote log start up to the local log start are read from remote storage; the local log keeps local.retention.bytes / local.retention.ms of copied segments.'));
}

// ---- messages ----------------------------------------------------------------------------------

const utf8 = new TextDecoder('utf-8', { fatal: true });
const fromBase64 = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(' ');

/** Bytes as the chosen format: text, JSON pretty-printed, or hex; "auto" picks JSON, then text, then hex. */
function showBytes(b64, format, tag = 'pre') {
  if (b64 === null) return h('span', { class: 'muted' }, 'null');
  const bytes = fromBase64(b64);
  let text = null;
  try { text = utf8.decode(bytes); } catch { text = null; }
  if (format === 'hex' || (format !== 'text' && text === null)) return h(tag, { class: 'hex' }, hex(bytes));
  if (format === 'json' || format === 'auto') {
    try {
      const trimmed = text.trim();
      if (trimmed.startsWith('{') || trimmed.startsWith('[') || format === 'json') return h(tag, { class: 'json' }, JSON.stringify(JSON.parse(text), null, tag === 'pre' ? 2 : 0));
    } catch { if (format === 'json') return h(tag, { class: 'text' }, text ?? hex(bytes)); }
  }
  return h(tag, { class: 'text' }, text ?? new TextDecoder().decode(bytes));
}

/**
 * A key or value its serializer framed with a registered schema (the node decoded it): the schema's
 * id and type, then the data as JSON; "auto" and "schema" show it so, the other formats the bytes.
 */
function showData(b64, decoded, format) {
  if (!decoded || (format !== 'auto' && format !== 'schema')) return showBytes(b64, format === 'schema' ? 'auto' : format);
  const tag = h('div', {}, h('a', { href: `#/schemas/ids/${decoded.schemaId}`, class: 'badge info', 'data-schema-id': decoded.schemaId }, `schema ${decoded.schemaId}${decoded.schemaType ? ` · ${decoded.schemaType}` : ''}`));
  if (decoded.error !== undefined) return h('div', { class: 'decoded' }, tag, h('div', { class: 'error' }, `does not decode: ${decoded.error}`), showBytes(b64, 'hex'));
  return h('div', { class: 'decoded' }, tag, h('pre', { class: 'json' }, JSON.stringify(decoded.value, null, 2)));
}

async function messagesTab(root, name, t, params) {
  const mode = params.get('mode') ?? 'newest';
  const format = params.get('format') ?? 'auto';
  const form = h('form', { class: 'toolbar', id: 'browse-form' },
    h('label', {}, 'Partition', h('select', { name: 'partition' }, h('option', { value: '' }, 'all'),
      t.partitions.map((p) => h('option', { value: p.partition, selected: params.get('partition') === String(p.partition) }, p.partition)))),
    h('label', {}, 'Start', h('select', { name: 'mode' }, [['newest', 'Newest'], ['oldest', 'Oldest'], ['offset', 'From offset'], ['timestamp', 'From time']].map(([v, l]) => h('option', { value: v, selected: mode === v }, l)))),
    h('label', {}, 'Offset', h('input', { name: 'offset', type: 'number', min: 0, value: params.get('offset') ?? '' })),
    h('label', {}, 'Time', h('input', { name: 'time', type: 'datetime-local', step: 1, value: params.get('time') ?? '' })),
    h('label', {}, 'Max messages', h('input', { name: 'count', type: 'number', min: 1, max: 500, value: params.get('count') ?? 50 })),
    h('label', {}, 'Show as', h('select', { name: 'format' }, ['auto', 'schema', 'text', 'json', 'hex'].map((v) => h('option', { value: v, selected: format === v }, v)))),
    h('label', {}, 'Containing', h('input', { name: 'contains', placeholder: 'text in key, value or headers', value: params.get('contains') ?? '' })),
    h('button', { type: 'submit' }, 'Search'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const f = new FormData(form);
    const q = new URLSearchParams();
    for (const k of ['partition', 'mode', 'offset', 'time', 'count', 'format', 'contains']) if (f.get(k)) q.set(k, String(f.get(k)));
    location.hash = `#/topics/${enc(name)}/messages?${q}`;
  });
  root.append(form);

  const q = new URLSearchParams({ count: params.get('count') ?? '50' });
  if (params.get('partition')) q.set('partition', params.get('partition'));
  if (mode === 'offset' && params.get('offset')) q.set('offset', params.get('offset'));
  if (mode === 'oldest') q.set('offset', '0');
  if (mode === 'timestamp' && params.get('time')) q.set('timestamp', String(new Date(params.get('time')).getTime()));
  const list = h('div', { id: 'messages' });
  root.append(list);
  try {
    const page = await api('GET', `/v1/topics/${enc(name)}/messages?${q}`);
    // The text filter applies to the page read (as kafka-ui's quick search does), not to the whole topic.
    const needle = params.get('contains') ?? '';
    const decoded = (b64) => (b64 === null ? '' : new TextDecoder().decode(fromBase64(b64)));
    const data = (d) => (d && d.value !== undefined ? JSON.stringify(d.value) : '');
    const shown = needle === '' ? page.messages : page.messages.filter((m) => [decoded(m.key), decoded(m.value), data(m.decodedKey), data(m.decodedValue), ...m.headers.flatMap((hd) => [hd.key, decoded(hd.value)])].some((t) => t.includes(needle)));
    list.append(h('p', { class: 'muted' }, `${shown.length} message(s)${needle ? ` containing "${needle}" of ${page.messages.length} read` : ''}, newest first`));
    list.append(table([['Partition', { class: 'num' }], ['Offset', { class: 'num' }], 'Timestamp', 'Key', 'Value', 'Headers'], shown.map((m) =>
      h('tr', { 'data-offset': m.offset, 'data-partition': m.partition },
        h('td', { class: 'num' }, m.partition), h('td', { class: 'num' }, m.offset), h('td', {}, new Date(m.timestamp).toISOString()),
        h('td', { class: 'key' }, showData(m.key, m.decodedKey, format)), h('td', { class: 'value' }, showData(m.value, m.decodedValue, format)),
        h('td', { class: 'headers' }, m.headers.map((hd) => h('div', {}, h('b', {}, hd.key), ': ', showBytes(hd.value, format === 'json' ? 'auto' : format, 'code'))))))));
  } catch (e) {
    list.append(errorBox(e));
  }
  root.append(h('h2', {}, 'Produce a test message'));
  root.append(produceForm(name, t));
}

function produceForm(name, t) {
  const status = h('div', {});
  const form = h('form', { class: 'panel', id: 'produce-form' },
    h('div', { class: 'row' },
      h('label', {}, 'Partition', h('select', { name: 'partition' }, h('option', { value: '' }, 'by key (partition 0 without one)'), t.partitions.map((p) => h('option', { value: p.partition }, p.partition)))),
      h('label', {}, 'Key', h('input', { name: 'key', placeholder: 'none' }))),
    h('label', {}, 'Value', h('textarea', { name: 'value', rows: 4, placeholder: '{"hello": "world"}' })),
    h('label', {}, 'Headers (one name=value a line)', h('textarea', { name: 'headers', rows: 2 })),
    h('div', {}, h('button', { type: 'submit' }, 'Produce')),
    status);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const f = new FormData(form);
    try {
      const body = { value: String(f.get('value') ?? ''), key: f.get('key') ? String(f.get('key')) : null, headers: Object.entries(pairs(String(f.get('headers') ?? ''))).map(([key, value]) => ({ key, value })) };
      if (f.get('partition') !== '') body.partition = Number(f.get('partition'));
      const r = await api('POST', `/v1/topics/${enc(name)}/messages`, body);
      status.replaceChildren(h('div', { class: 'notice', role: 'status' }, `Produced to partition ${r.partition} at offset ${r.offset}`));
      location.hash = `#/topics/${enc(name)}/messages?partition=${r.partition}&t=${Date.now()}`;
    } catch (e) {
      status.replaceChildren(errorBox(e));
    }
  });
  return form;
}

// ---- configs -----------------------------------------------------------------------------------

async function configsTab(root, name) {
  const { configs } = await api('GET', `/v1/topics/${enc(name)}/configs`);
  const status = h('div', {});
  root.append(status);
  root.append(table(['Name', 'Value', 'Source', ''], configs.map((c) => {
    const value = h('td', { class: 'config-value' }, c.sensitive ? '******' : c.value ?? h('span', { class: 'muted' }, 'null'));
    const actions = h('td', {});
    if (!c.readOnly) {
      actions.append(h('button', { type: 'button', class: 'secondary', 'data-edit': c.name, onclick: () => {
        const input = h('input', { value: c.value ?? '', name: c.name, 'aria-label': c.name });
        const save = h('button', { type: 'button', 'data-save': c.name, onclick: async () => {
          try { await api('PUT', `/v1/topics/${enc(name)}/configs`, { set: { [c.name]: input.value } }); render(); } catch (e) { status.replaceChildren(errorBox(e)); }
        } }, 'Save');
        value.replaceChildren(input, ' ', save);
        input.focus();
      } }, 'Edit'));
      if (c.source === 'DYNAMIC_TOPIC_CONFIG') {
        actions.append(' ', h('button', { type: 'button', class: 'secondary', onclick: async () => {
          try { await api('PUT', `/v1/topics/${enc(name)}/configs`, { delete: [c.name] }); render(); } catch (e) { status.replaceChildren(errorBox(e)); }
        } }, 'Reset'));
      }
    }
    return h('tr', { 'data-config': c.name, class: c.source === 'DYNAMIC_TOPIC_CONFIG' ? 'set' : '' }, h('td', {}, c.name), value,
      h('td', {}, c.source === 'DYNAMIC_TOPIC_CONFIG' ? badge('info', 'topic') : h('span', { class: 'muted' }, c.source.toLowerCase().replace(/_/g, ' '))), actions);
  })));
}

// ---- consumer groups ---------------------------------------------------------------------------

async function groupsView(root) {
  root.append(h('h1', {}, 'Groups'));
  const { groups } = await api('GET', '/v1/groups');
  if (groups.length === 0) { root.append(h('p', { class: 'muted' }, 'No consumer or share groups.')); return; }
  root.append(table(['Group', 'State', 'Type', ['Members', { class: 'num' }], ['Lag', { class: 'num' }], ['Coordinator', { class: 'num' }]], groups.map((g) =>
    h('tr', { 'data-group': g.groupId, class: g.totalLag > 0 ? 'warn' : '' },
      h('td', {}, h('a', { href: `#/groups/${enc(g.groupId)}` }, g.groupId)), h('td', {}, stateBadge(g.state)), h('td', {}, g.type),
      h('td', { class: 'num' }, g.members), h('td', { class: 'num lag' }, fmtNum(g.totalLag)), h('td', { class: 'num' }, g.coordinator)))));
}

const stateBadge = (s) => badge(s === 'Stable' ? 'good' : s === 'Empty' ? 'info' : s === 'Dead' ? 'bad' : 'warn', s || 'unknown');

async function groupView(root, [id]) {
  root.append(h('div', { class: 'toolbar title' }, h('h1', {}, id), h('a', { href: '#/groups' }, 'All groups')));
  const body = h('div', {});
  const chartBox = h('div', {});
  root.append(body, h('h2', {}, 'Lag over time'), chartBox);
  const samples = [];
  const draw = async () => {
    let g;
    try { g = await api('GET', `/v1/groups/${enc(id)}`); } catch (e) { body.replaceChildren(errorBox(e)); return; }
    samples.push({ t: Date.now(), lag: g.totalLag });
    if (samples.length > 120) samples.shift();
    body.replaceChildren(groupDetails(g));
    chartBox.replaceChildren(lagChart(samples));
  };
  await draw();
  every(Number(new URLSearchParams(location.hash.split('?')[1] ?? '').get('poll') ?? 5000), draw);
}

function groupDetails(g) {
  return h('div', {},
    h('div', { class: 'cards' }, card('State', g.state), card('Members', g.members.length), card('Total lag', fmtNum(g.totalLag), false), card('Protocol', g.protocol || g.protocolType || '–')),
    h('h2', {}, 'Members'),
    g.members.length === 0 ? h('p', { class: 'muted' }, 'No active members.') : table(['Member', 'Client id', 'Host', 'Assignment'], g.members.map((m) =>
      h('tr', {}, h('td', {}, m.memberId, m.instanceId ? [' ', badge('info', `static ${m.instanceId}`)] : null), h('td', {}, m.clientId), h('td', {}, m.host),
        h('td', {}, m.assignment.map((a) => `${a.topic}-${a.partition}`).join(', '))))),
    h('h2', {}, 'Lag per partition'),
    g.type === 'share' ? sharePartitions(g) : table(['Topic', ['Partition', { class: 'num' }], ['Committed offset', { class: 'num' }], ['Log end offset', { class: 'num' }], ['Lag', { class: 'num' }], 'Member'], g.partitions.map((p) =>
      h('tr', { class: p.lag > 0 ? 'warn' : '', 'data-lag-partition': `${p.topic}-${p.partition}` },
        h('td', {}, h('a', { href: `#/topics/${enc(p.topic)}` }, p.topic)), h('td', { class: 'num' }, p.partition), h('td', { class: 'num' }, fmtNum(p.committedOffset)),
        h('td', { class: 'num' }, fmtNum(p.logEndOffset)), h('td', { class: 'num lag' }, fmtNum(p.lag)), h('td', {}, p.clientId ?? h('span', { class: 'muted' }, '–'))))));
}

/**
 * A share group's share-partitions (KIP-932): where delivery starts, the records in flight and
 * those a consumer holds now (known where this node leads the partition), the lag, and the members
 * sharing the partition.
 */
function sharePartitions(g) {
  const known = (v) => v === null || v === undefined ? h('span', { class: 'muted', title: 'known to the partition leader; this node does not lead it' }, '–') : fmtNum(v);
  return table(['Topic', ['Partition', { class: 'num' }], ['Start offset', { class: 'num' }], ['Log end offset', { class: 'num' }], ['In flight', { class: 'num' }], ['Acquired', { class: 'num' }], ['Lag', { class: 'num' }], 'Members'], g.partitions.map((p) =>
    h('tr', { class: p.lag > 0 ? 'warn' : '', 'data-lag-partition': `${p.topic}-${p.partition}` },
      h('td', {}, h('a', { href: `#/topics/${enc(p.topic)}` }, p.topic)), h('td', { class: 'num' }, p.partition), h('td', { class: 'num' }, p.startOffset === null ? h('span', { class: 'muted' }, '–') : fmtNum(p.startOffset)),
      h('td', { class: 'num' }, fmtNum(p.logEndOffset)), h('td', { class: 'num in-flight' }, known(p.inFlight)), h('td', { class: 'num acquired' }, known(p.acquired)), h('td', { class: 'num lag' }, fmtNum(p.lag)),
      h('td', {}, p.clientIds.length === 0 ? h('span', { class: 'muted' }, '–') : p.clientIds.join(', ')))));
}

/** Total lag against time as an inline SVG line chart (the samples this page has polled). */
function lagChart(samples) {
  const W = 640, H = 180, L = 56, R = 12, T = 12, B = 24;
  const max = Math.max(1, ...samples.map((s) => s.lag));
  const t0 = samples[0].t, t1 = Math.max(samples[samples.length - 1].t, t0 + 1);
  const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
  const y = (v) => T + (1 - v / max) * (H - T - B);
  const points = samples.map((s) => `${x(s.t).toFixed(1)},${y(s.lag).toFixed(1)}`).join(' ');
  return h('svg', { class: 'chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'total lag over time' },
    h('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#c9ced8' }), h('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#c9ced8' }),
    h('text', { x: L - 6, y: T + 4, 'text-anchor': 'end' }, fmtNum(max)), h('text', { x: L - 6, y: H - B, 'text-anchor': 'end' }, '0'),
    h('text', { x: L, y: H - 6 }, new Date(t0).toLocaleTimeString()), h('text', { x: W - R, y: H - 6, 'text-anchor': 'end' }, new Date(t1).toLocaleTimeString()),
    samples.length > 1 ? h('polyline', { points, fill: 'none', stroke: '#2f5bd3', 'stroke-width': 2 }) : null,
    samples.map((s) => h('circle', { cx: x(s.t).toFixed(1), cy: y(s.lag).toFixed(1), r: 2.5, fill: '#2f5bd3' })));
}

// ---- schema registry ---------------------------------------------------------------------------

const levelText = (level, own) => own ? level : `${level} (global)`;

async function schemasView(root) {
  root.append(h('h1', {}, 'Schema registry'));
  const r = await api('GET', '/v1/schemas');
  const live = r.subjects.filter((s) => !s.deleted);
  root.append(h('div', { class: 'cards' }, card('Subjects', live.length), card('Compatibility', r.compatibility), card('Mode', r.mode)));
  if (r.subjects.length === 0) {
    root.append(h('p', { class: 'muted' }, 'No subjects yet: a serializer registers one with its first record, or `logline schema register`.'));
    return;
  }
  root.append(table(['Subject', 'Type', ['Latest version', { class: 'num' }], ['Id', { class: 'num' }], ['Versions', { class: 'num' }], 'Compatibility', 'Mode'], r.subjects.map((s) =>
    h('tr', { 'data-subject': s.subject, class: s.deleted ? 'muted' : '' },
      h('td', {}, h('a', { href: `#/schemas/${enc(s.subject)}` }, s.subject), s.deleted ? [' ', badge('warn', 'soft-deleted')] : null),
      h('td', {}, s.schemaType), h('td', { class: 'num' }, s.latestVersion), h('td', { class: 'num' }, s.latestId), h('td', { class: 'num' }, s.versions),
      h('td', {}, s.compatibility ?? h('span', { class: 'muted' }, `${r.compatibility} (global)`)),
      h('td', {}, s.mode ?? h('span', { class: 'muted' }, `${r.mode} (global)`))))));
}

/** A schema's text to compare: Avro and JSON Schema indented (one field a line), .proto as stored. */
function schemaLines(v) {
  if (v.schemaType === 'PROTOBUF') return v.schema.replace(/\n$/, '').split('\n');
  try { return JSON.stringify(JSON.parse(v.schema), null, 2).split('\n'); } catch { return v.schema.split('\n'); }
}

/**
 * The rows of a side-by-side line diff: [left line | null, right line | null, kind] with kind
 * 'same', 'del' (left only), 'add' (right only) or 'change' (a deleted line beside an added one).
 * A longest common subsequence of lines; over 1,500 lines a side it shows the two texts unmatched.
 */
function lineDiff(a, b) {
  const ops = [];
  if (a.length > 1500 || b.length > 1500) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) ops.push([a[i] ?? null, b[i] ?? null, a[i] === b[i] ? 'same' : 'change']);
    return ops;
  }
  const n = a.length, m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  let i = 0, j = 0;
  const dels = [], adds = [];
  const flush = () => {
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) ops.push([dels[k] ?? null, adds[k] ?? null, k < dels.length && k < adds.length ? 'change' : k < dels.length ? 'del' : 'add']);
    dels.length = 0; adds.length = 0;
  };
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { flush(); ops.push([a[i], b[j], 'same']); i++; j++; }
    else if (j >= m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1])) dels.push(a[i++]);
    else adds.push(b[j++]);
  }
  flush();
  return ops;
}

function diffTable(left, right) {
  let ln = 0, rn = 0;
  const rows = lineDiff(schemaLines(left), schemaLines(right)).map(([l, r, kind]) => h('tr', { class: `diff-${kind}` },
    h('td', { class: 'num lineno' }, l === null ? '' : ++ln), h('td', { class: 'code left' }, l ?? ''),
    h('td', { class: 'num lineno' }, r === null ? '' : ++rn), h('td', { class: 'code right' }, r ?? '')));
  return h('table', { class: 'diff', 'data-diff': `${left.version}-${right.version}` },
    h('colgroup', {}, h('col', { class: 'lineno' }), h('col', {}), h('col', { class: 'lineno' }), h('col', {})),
    h('thead', {}, h('tr', {}, h('th', { colspan: 2 }, `version ${left.version} (id ${left.id})`), h('th', { colspan: 2 }, `version ${right.version} (id ${right.id})`))),
    h('tbody', {}, rows));
}

async function schemaView(root, [subject], params) {
  root.append(h('div', { class: 'toolbar title' }, h('h1', {}, subject), h('a', { href: '#/schemas' }, 'All subjects')));
  const s = await api('GET', `/v1/schemas/${enc(subject)}`);
  const live = s.versions.filter((v) => !v.deleted);
  root.append(h('div', { class: 'cards' },
    card('Compatibility', levelText(s.compatibility, s.compatibilitySource === 'subject')), card('Mode', levelText(s.mode, s.modeSource === 'subject')),
    card('Versions', live.length), card('Type', s.versions.at(-1).schemaType)));
  root.append(h('h2', {}, 'Versions'));
  root.append(table([['Version', { class: 'num' }], ['Id', { class: 'num' }], 'Type', 'References', 'Status'], s.versions.map((v) =>
    h('tr', { 'data-version': v.version, class: v.deleted ? 'muted' : '' },
      h('td', { class: 'num' }, v.version), h('td', { class: 'num' }, v.id), h('td', {}, v.schemaType),
      h('td', {}, v.references.length === 0 ? '–' : v.references.flatMap((x, k) => [k > 0 ? ', ' : null, h('a', { href: `#/schemas/${enc(x.subject)}` }, `${x.name} → ${x.subject} v${x.version}`)])),
      h('td', {}, v.deleted ? badge('warn', 'soft-deleted') : badge('good', 'live'))))));

  // Two versions side by side: by default the newest (or the one asked for) and the live one before it.
  const byVersion = new Map(s.versions.map((v) => [String(v.version), v]));
  const newest = live.at(-1) ?? s.versions.at(-1);
  const right = byVersion.get(params.get('right') ?? '') ?? newest;
  const older = [...s.versions].reverse().filter((v) => v.version < right.version);
  const left = byVersion.get(params.get('left') ?? '') ?? older.find((v) => !v.deleted) ?? older[0] ?? right;
  const choose = (name, current) => h('label', {}, name === 'left' ? 'Left' : 'Right', h('select', {
    'data-pick': name,
    onchange: (e) => {
      const q = new URLSearchParams({ left: String(left.version), right: String(right.version), [name]: e.target.value });
      location.hash = `#/schemas/${enc(subject)}?${q}`;
    },
  }, s.versions.map((v) => h('option', { value: v.version, selected: v.version === current.version }, `version ${v.version}${v.deleted ? ' (soft-deleted)' : ''}`))));
  root.append(h('h2', {}, s.versions.length > 1 ? 'Compare versions' : 'Schema'),
    h('div', { class: 'toolbar' }, choose('left', left), choose('right', right)),
    diffTable(left, right));
}

async function schemaIdView(root, [id]) {
  root.append(h('div', { class: 'toolbar title' }, h('h1', {}, `Schema ${id}`), h('a', { href: '#/schemas' }, 'All subjects')));
  const s = await api('GET', `/v1/schemas/ids/${enc(id)}`);
  root.append(h('div', { class: 'cards' }, card('Type', s.schemaType), card('Used by', s.usages.filter((u) => !u.deleted).length)));
  root.append(h('h2', {}, 'Subjects and versions'), table(['Subject', ['Version', { class: 'num' }], 'Status'], s.usages.map((u) =>
    h('tr', { 'data-usage': `${u.subject}-${u.version}`, class: u.deleted ? 'muted' : '' },
      h('td', {}, h('a', { href: `#/schemas/${enc(u.subject)}?right=${u.version}` }, u.subject)), h('td', { class: 'num' }, u.version),
      h('td', {}, u.deleted ? badge('warn', 'soft-deleted') : badge('good', 'live'))))));
  if (s.references.length > 0) root.append(h('p', {}, 'References: ', s.references.flatMap((x, k) => [k > 0 ? ', ' : null, h('a', { href: `#/schemas/${enc(x.subject)}?right=${x.version}` }, `${x.name} → ${x.subject} v${x.version}`)])));
  root.append(h('h2', {}, 'Schema'), h('pre', { class: 'schema' }, schemaLines(s).join('\n')));
}

// ---- mirror ------------------------------------------------------------------------------------

const fmtMs = (ms) => ms === null || ms === undefined ? '–' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
const fmtAgo = (t) => t === null || t === undefined ? '–' : `${fmtMs(Math.max(0, Date.now() - t))} ago`;

async function mirrorView(root) {
  root.append(h('h1', {}, 'Mirror'));
  const body = h('div', {});
  root.append(body);
  const draw = async () => {
    let m;
    try {
      m = await api('GET', '/v1/mirror');
    } catch (e) {
      body.replaceChildren(/runs no mirror/.test(String(e.message))
        ? h('p', { class: 'muted', 'data-no-mirror': '' }, 'This node runs no mirror. Set mirror.enable=true and mirror.config.file (MirrorMaker 2\'s properties) on it, or run `logline mirror --config FILE` as its own process.')
        : errorBox(e));
      return;
    }
    const lag = m.partitions.reduce((n, p) => n + p.lagRecords, 0);
    const failing = m.flows.filter((f) => f.lastError !== null);
    body.replaceChildren(...[
      h('div', { class: 'cards' }, card('Flows', m.flows.filter((f) => f.enabled).length), card('Partitions', m.partitions.length), card('Lag (records)', fmtNum(lag)), card('Checkpointed groups', new Set(m.checkpoints.map((c) => c.group)).size)),
      h('h2', {}, 'Flows'),
      table(['Flow', 'Enabled', 'Last heartbeat', 'Last error'], m.flows.map((f) => h('tr', { 'data-flow': `${f.source}->${f.target}`, class: f.lastError !== null ? 'warn' : '' },
        h('td', {}, `${f.source} → ${f.target}`), h('td', {}, f.enabled ? badge('good', 'enabled') : badge('info', 'heartbeats only')),
        h('td', {}, fmtAgo(f.lastHeartbeatMs)), h('td', {}, f.lastError === null ? '–' : `${f.lastError} (${fmtAgo(f.lastErrorAtMs)})`)))),
      h('h2', {}, 'Partitions'),
      m.partitions.length === 0 ? h('p', { class: 'muted' }, failing.length > 0 ? 'No partition mirrored yet (see the errors above).' : 'No partition mirrored yet.') :
        table(['Flow', 'Topic', ['Partition', { class: 'num' }], 'Remote topic', ['Position', { class: 'num' }], ['Lag', { class: 'num' }], ['Lag (time)', { class: 'num' }], ['Records', { class: 'num' }], ['Replication latency', { class: 'num' }], ['Max', { class: 'num' }]],
          m.partitions.map((p) => h('tr', { 'data-partition': `${p.topic}-${p.partition}`, class: p.lagRecords > 0 ? 'warn' : '' },
            h('td', {}, `${p.source} → ${p.target}`), h('td', {}, p.topic), h('td', { class: 'num' }, p.partition), h('td', {}, p.remoteTopic),
            h('td', { class: 'num' }, fmtNum(p.position)), h('td', { class: 'num lag' }, fmtNum(p.lagRecords)), h('td', { class: 'num' }, fmtMs(p.lagMs)),
            h('td', { class: 'num' }, fmtNum(p.recordCount)), h('td', { class: 'num' }, fmtMs(p.replicationLatencyMs)), h('td', { class: 'num' }, fmtMs(p.replicationLatencyMsMax))))),
      m.checkpoints.length === 0 ? null : [h('h2', {}, 'Checkpoints'),
        table(['Flow', 'Group', 'Topic', ['Partition', { class: 'num' }], ['Upstream offset', { class: 'num' }], ['Downstream offset', { class: 'num' }], ['Latency', { class: 'num' }]],
          m.checkpoints.map((c) => h('tr', { 'data-checkpoint': `${c.group}/${c.topic}-${c.partition}` },
            h('td', {}, `${c.source} → ${c.target}`), h('td', {}, c.group), h('td', {}, c.topic), h('td', { class: 'num' }, c.partition),
            h('td', { class: 'num' }, fmtNum(c.upstreamOffset)), h('td', { class: 'num' }, fmtNum(c.downstreamOffset)), h('td', { class: 'num' }, fmtMs(c.checkpointLatencyMs)))))],
    ].flat().filter((x) => x !== null));
  };
  await draw();
  every(2000, draw);
}

// ---- cluster links -----------------------------------------------------------------------------

/** Links and mirror topics from /v1/links: every link and mirror topic of the cluster; the lag of the partitions this node leads (the others' on their leader's console). */
async function linksPage(root) {
  root.append(h('h1', {}, 'Cluster links'));
  const body = h('div', {});
  root.append(body);
  const draw = async () => {
    let v;
    try {
      v = await api('GET', '/v1/links');
    } catch (e) {
      body.replaceChildren(errorBox(e));
      return;
    }
    const rows = v.topics.flatMap((t) => t.partitions.map((p) => ({ ...p, topic: t.topic, link: t.link, linkExists: t.linkExists })));
    const led = rows.filter((r) => r.lag !== null || r.logEndOffset !== null);
    const lag = led.reduce((n, r) => n + (r.lag ?? 0), 0);
    if (v.links.length === 0 && v.topics.length === 0) {
      body.replaceChildren(h('p', { class: 'muted', 'data-no-links': '' }, 'No cluster links. Create one on this (target) cluster with `logline link create NAME --source BOOTSTRAP`, then `logline link mirror NAME TOPIC`.'));
      return;
    }
    body.replaceChildren(...[
      h('div', { class: 'cards' }, card('Links', v.links.length), card('Mirror topics', v.topics.length), card('Partitions led here', led.length), card('Lag (records)', fmtNum(lag), lag > 0)),
      h('h2', {}, 'Links'),
      v.links.length === 0 ? h('p', { class: 'muted' }, 'No link (the mirror topics below lost theirs: promote them).') :
        table(['Link', 'Source', 'Security', 'Mirror topics'], v.links.map((l) => h('tr', { 'data-link': l.name },
          h('td', {}, l.name), h('td', {}, l.bootstrapServers), h('td', {}, l.securityProtocol), h('td', {}, l.mirrorTopics.length === 0 ? '–' : l.mirrorTopics.join(', '))))),
      h('h2', {}, 'Mirror topics'),
      rows.length === 0 ? h('p', { class: 'muted' }, 'No mirror topic (logline link mirror NAME TOPIC).') :
        table(['Link', 'Topic', ['Partition', { class: 'num' }], ['Leader', { class: 'num' }], ['Source high watermark', { class: 'num' }], ['Log end', { class: 'num' }], ['Lag', { class: 'num' }], 'State'],
          rows.map((r) => {
            const here = r.logEndOffset !== null;
            const state = !r.linkExists ? badge('warn', 'link deleted: read-only until promoted')
              : r.lastError !== null ? badge('bad', r.lastError)
              : !here ? badge('info', `led by node ${r.leader}`)
              : r.lag === null ? badge('info', 'starting') : r.lag > 0 ? badge('warn', 'catching up') : badge('good', 'in sync');
            return h('tr', { 'data-partition': `${r.topic}-${r.partition}`, class: (r.lag ?? 0) > 0 || r.lastError !== null ? 'warn' : '' },
              h('td', {}, r.link), h('td', {}, h('a', { href: `#/topics/${enc(r.topic)}` }, r.topic)), h('td', { class: 'num' }, r.partition), h('td', { class: 'num' }, r.leader),
              h('td', { class: 'num' }, here && r.sourceHighWatermark >= 0 ? fmtNum(r.sourceHighWatermark) : '–'), h('td', { class: 'num' }, here ? fmtNum(r.logEndOffset) : '–'),
              h('td', { class: 'num lag' }, r.lag === null ? '–' : fmtNum(r.lag)), h('td', {}, state));
          })),
    ]);
  };
  await draw();
  every(2000, draw);
}
