// The config half of a link's topic sync as a property: whatever a source topic and its mirror set,
// applying mirrorConfigChanges leaves the mirror with the source's own values of the synced keys
// (and none the source does not set) while every other key of the mirror, link.name and
// link.epoch.base included, stays as it was; a second round changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SYNCED_TOPIC_CONFIGS, mirrorConfigChanges } from '../../src/link/index.js';

const OWN_KEYS = ['link.name', 'link.epoch.base', 'min.insync.replicas', 'segment.ms', 'remote.storage.enable'];
const configs = fc.dictionary(fc.constantFrom(...SYNCED_TOPIC_CONFIGS, ...OWN_KEYS), fc.constantFrom('1', '2', 'compact', 'delete', '3600000'))
  .map((d) => new Map<string, string>(Object.entries(d)));

test('mirrorConfigChanges: synced keys follow the source (set, changed, removed); the mirror\'s own keys are never touched', () => {
  fc.assert(fc.property(configs, configs, (source, mirror) => {
    const changes = mirrorConfigChanges(source, mirror);
    const after = new Map(mirror);
    for (const c of changes) {
      assert.ok(SYNCED_TOPIC_CONFIGS.includes(c.name), `${c.name} is not a synced key`);
      if (c.configOperation === 0) after.set(c.name, c.value!);
      else after.delete(c.name);
    }
    for (const key of SYNCED_TOPIC_CONFIGS) assert.equal(after.get(key), source.get(key), key);
    for (const key of OWN_KEYS) assert.equal(after.get(key), mirror.get(key), key);
    assert.deepEqual(mirrorConfigChanges(source, after), [], 'a second round changes nothing');
  }), { numRuns: 500 });
});
