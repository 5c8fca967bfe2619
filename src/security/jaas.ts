// Kafka's `sasl.jaas.config` value: one JAAS login module entry,
//   <LoginModuleClass> <required|requisite|sufficient|optional> key="value" key2=value2 ... ;
// parsed as Kafka's JaasConfig does (a StreamTokenizer: words, double-quoted strings with
// backslash escapes, `/* */` and `//` comments). Kafka allows exactly one entry in the property.
import { limits } from '../util/index.js';

export interface JaasEntry {
  readonly loginModule: string;
  readonly flag: 'required' | 'requisite' | 'sufficient' | 'optional';
  readonly options: ReadonlyMap<string, string>;
}

export class JaasError extends Error {}

type Token = { kind: 'word' | 'quoted'; text: string } | { kind: 'punct'; text: '=' | ';' };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) { i++; continue; }
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw new JaasError('unterminated comment');
      i = end + 2;
      continue;
    }
    if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '=' || c === ';') { tokens.push({ kind: 'punct', text: c }); i++; continue; }
    if (c === '"' || c === '\'') {
      let out = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new JaasError('unterminated quoted value');
        const d = text[i]!;
        if (d === c) { i++; break; }
        if (d === '\\' && i + 1 < text.length) {
          const e = text[i + 1]!;
          out += e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e;
          i += 2;
          continue;
        }
        out += d;
        i++;
      }
      tokens.push({ kind: 'quoted', text: out });
      continue;
    }
    let j = i;
    while (j < text.length && !/[\s=;"']/.test(text[j]!)) j++;
    tokens.push({ kind: 'word', text: text.slice(i, j) });
    i = j;
  }
  return tokens;
}

const FLAGS = new Set(['required', 'requisite', 'sufficient', 'optional']);

/** Parses one `sasl.jaas.config` value; throws JaasError naming what is wrong. */
export function parseJaasConfig(text: string): JaasEntry {
  if (text.length > limits.saslJaasConfigCharsMax) throw new JaasError(`sasl.jaas.config longer than ${limits.saslJaasConfigCharsMax} characters`);
  const tokens = tokenize(text);
  let at = 0;
  const next = (): Token | undefined => tokens[at++];
  const module = next();
  if (module?.kind !== 'word') throw new JaasError('sasl.jaas.config must start with a login module class name');
  const flag = next();
  if (flag?.kind !== 'word' || !FLAGS.has(flag.text.toLowerCase())) {
    throw new JaasError(`login module ${module.text}: control flag must be one of required, requisite, sufficient, optional`);
  }
  const options = new Map<string, string>();
  for (;;) {
    const t = next();
    if (t === undefined) throw new JaasError('sasl.jaas.config must end with ";"');
    if (t.kind === 'punct' && t.text === ';') break;
    if (t.kind !== 'word') throw new JaasError(`expected an option name, got ${JSON.stringify(t.text)}`);
    const eq = next();
    if (eq?.kind !== 'punct' || eq.text !== '=') throw new JaasError(`option ${t.text}: expected "="`);
    const value = next();
    if (value === undefined || value.kind === 'punct') throw new JaasError(`option ${t.text}: missing value`);
    options.set(t.text, value.text);
  }
  if (at !== tokens.length) throw new JaasError('sasl.jaas.config must contain exactly one login module');
  return Object.freeze({ loginModule: module.text, flag: flag.text.toLowerCase() as JaasEntry['flag'], options });
}
