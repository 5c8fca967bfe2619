// The .properties parser against text that trips naive parsers, and a round-trip property.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseProperties, serializeProperties } from '../../src/config/index.js';

test('comments, separators, continuations and escapes follow java.util.Properties', () => {
  const text = [
    '# a comment',
    '   ! another comment',
    '',
    'a=1',
    'b : 2',
    'c 3',
    '  d\t=\t  4  ',
    'e=first \\',
    '    second \\',
    '\tthird',
    'f=\\u00e9t\\u00E9\\ttab\\nnewline',
    'key\\ with\\ spaces = v',
    'g\\=h=eq',
    'i=ends with backslash\\\\',
    'j=',
    'k',
    '# comment ending in backslash \\',
    'l=not continued',
    'a=last wins',
    'm=value:with=separators # not a comment',
    'n\\:colon=x',
  ].join('\r\n');
  const p = parseProperties(text);
  assert.equal(p.get('a'), 'last wins');
  assert.equal(p.get('b'), '2');
  assert.equal(p.get('c'), '3');
  assert.equal(p.get('d'), '4  ');
  assert.equal(p.get('e'), 'first second third');
  assert.equal(p.get('f'), 'été\ttab\nnewline');
  assert.equal(p.get('key with spaces'), 'v');
  assert.equal(p.get('g=h'), 'eq');
  assert.equal(p.get('i'), 'ends with backslash\\');
  assert.equal(p.get('j'), '');
  assert.equal(p.get('k'), '');
  assert.equal(p.get('l'), 'not continued');
  assert.equal(p.get('m'), 'value:with=separators # not a comment');
  assert.equal(p.get('n:colon'), 'x');
  assert.equal(p.size, 14);
});

test('a continuation at end of file keeps what it has, and mixed line endings split lines', () => {
  const p = parseProperties('x=1\ry=2\nz=3 \\');
  assert.deepEqual([...p], [['x', '1'], ['y', '2'], ['z', '3 ']]);
});

test('a malformed \\u escape is rejected', () => {
  assert.throws(() => parseProperties('a=\\u12'), /Malformed/);
});

test('serialising any map to properties text and parsing it back gives the same map', () => {
  const str = fc.string({ unit: fc.oneof(fc.constantFrom(' ', '=', ':', '#', '!', '\\', '\t', '\n', '\r', '\f', 'é', '😀'), fc.string({ minLength: 1, maxLength: 1, unit: 'binary' })), maxLength: 12 });
  fc.assert(fc.property(fc.dictionary(str, str), (dict) => {
    const map = new Map(Object.entries(dict));
    assert.deepEqual(parseProperties(serializeProperties(map)), map);
  }), { numRuns: 500 });
});
