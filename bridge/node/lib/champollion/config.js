// champollion.config.json version 3: which method plugin translates each language pair. Checked as the
// Python side checks it (mt_eval.champollion.config, whose msgspec Structs are the reference): every
// problem at once, each with its JSON path, in the same order; unknown fields are warnings.
// bridge/vectors/champollion/config.json holds the cases both sides pass.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import { JsonSyntaxError, parseOrdered } from './json.js';
import { LOCALE_PATTERN, normalizeLocale } from './languages.js';

export const CONFIG_FILE = 'champollion.config.json';
export const CONFIG_VERSION = 3;
const LANGUAGE_CODE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
const PAIR_SEPARATORS = ['->', '→', ':'];

/** A problem in a file: where (file + JSON path), what, and how to fix it. */
export function renderProblem({ file, path, message, hint, severity }) {
  return `${severity}: ${path === '$' ? file : `${file} ${path}`}: ${message}${hint ? `\n    fix: ${hint}` : ''}`;
}

/** The config has errors; problems lists every one (and the warnings). */
export class ChampollionConfigError extends Error {
  constructor(file, problems) {
    const errors = problems.filter((p) => p.severity === 'error');
    super([`${file} is not a valid champollion config`, ...errors.map(renderProblem)].join('\n'));
    this.name = 'ChampollionConfigError';
    this.problems = problems;
  }
}

const IDENTIFIER = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*$/u;

/** ("a", 2, "en:es") → $.a[2]["en:es"], as the Python SDK writes JSON paths. */
export function jsonPath(parts) {
  return parts.reduce((out, part) => (typeof part === 'number' ? `${out}[${part}]`
    : IDENTIFIER.test(part) ? `${out}.${part}` : `${out}[${JSON.stringify(part)}]`), '$');
}

function got(value) {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return `the number ${value}`;
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length <= 40 ? value : `${value.slice(0, 37)}...`)}`;
  return Array.isArray(value) ? 'an array' : 'an object';
}

// Field rules in the Structs' declaration order (the order problems are reported in).
const string = ({ required = false, optional = false, nonEmpty = false, pattern = null, means = '', hint } = {}) =>
  ({ kind: 'string', required, optional, nonEmpty, pattern, means, hint, expected: 'a string' });
const number = ({ integer = false, optional = false, required = false, ge = null, le = null } = {}) =>
  ({ kind: 'number', integer, optional, required, ge, le, expected: integer ? 'an integer' : 'a number' });
const PAIR_FIELDS = [
  ['methodPlugin', string({ required: true, nonEmpty: true })],
  ['model', string({ optional: true })],
  ['temperature', number({ optional: true, ge: 0, le: 2 })],
  ['batchSize', number({ integer: true, ge: 1 })],
  ['sourceLanguage', string({ optional: true, pattern: LANGUAGE_CODE, means: 'a language code', hint: 'use an ISO 639 code such as "eng" or "es"' })],
  ['targetLanguage', string({ optional: true, pattern: LANGUAGE_CODE, means: 'a language code', hint: 'use an ISO 639 code such as "eng" or "es"' })],
];
const CONFIG_FIELDS = [
  ['version', number({ integer: true, required: true })],
  ['inputLocale', string({ required: true, pattern: LOCALE_PATTERN, means: 'a locale code', hint: 'use a locale code such as "en", "es" or "pt-BR"' })],
  ['pairs', { kind: 'pairs', required: true, expected: 'an object' }],
  ['localesDir', string({ nonEmpty: true })],
  ['$schema', string({ optional: true })],
];

/** Parse and check a config's text: [value (plain fields, pairs as a Map) or null, problems]. */
export function decodeConfig(text, file) {
  const problems = [];
  const add = (at, message, hint, code, severity = 'error') => problems.push({ file, path: jsonPath(at), message, hint, severity, code });
  let data;
  const duplicates = [];
  try {
    data = parseOrdered(text, { onDuplicate: (key) => { if (!duplicates.includes(key)) duplicates.push(key); } });
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    add([], error.message, 'fix the JSON syntax at that position', 'syntax');
    return [null, problems];
  }
  for (const key of duplicates) {
    add([], `key "${key}" appears more than once in an object`, 'keep one of them; JSON readers silently drop all but the last', 'duplicate-key');
  }
  const checkValue = (value, rule, at) => {
    if (value === null && rule.optional) return true;
    if (rule.kind === 'string') {
      if (typeof value !== 'string') return add(at, `expected a string, got ${got(value)}`, rule.hint, 'type'), false;
      if (rule.nonEmpty && value === '') return add(at, 'must not be empty', rule.hint, 'length'), false;
      if (rule.pattern && !rule.pattern.test(value)) return add(at, `${JSON.stringify(value)} is not ${rule.means}`, rule.hint, 'pattern'), false;
      return true;
    }
    if (rule.kind === 'number') {
      if (typeof value !== 'number' || (rule.integer && !Number.isInteger(value))) {
        return add(at, `expected ${rule.expected}, got ${got(value)}`, undefined, 'type'), false;
      }
      if (rule.ge !== null && value < rule.ge) return add(at, `must be >= ${rule.ge}, got ${value}`, undefined, 'range'), false;
      if (rule.le !== null && value > rule.le) return add(at, `must be <= ${rule.le}, got ${value}`, undefined, 'range'), false;
      return true;
    }
    if (!(value instanceof Map)) return add(at, `expected an object, got ${got(value)}`, undefined, 'type'), false;
    let ok = true;
    for (const [key, pair] of value) ok = checkStruct(pair, PAIR_FIELDS, [...at, key]) && ok;
    return ok;
  };
  const checkStruct = (value, fields, at) => {
    if (!(value instanceof Map)) return add(at, `expected an object, got ${got(value)}`, undefined, 'type'), false;
    let ok = true;
    for (const [name, rule] of fields) {
      if (value.has(name)) ok = checkValue(value.get(name), rule, [...at, name]) && ok;
      else if (rule.required) {
        add([...at, name], `required field "${name}" is missing`, `add "${name}": ${rule.expected}`, 'missing');
        ok = false;
      }
    }
    return ok;
  };
  const clean = checkStruct(data, CONFIG_FIELDS, []);
  if (clean) findings(data, add);
  if (data instanceof Map) {
    unknownFields(data, CONFIG_FIELDS, [], add);
    if (data.get('pairs') instanceof Map) {
      for (const [key, pair] of data.get('pairs')) if (pair instanceof Map) unknownFields(pair, PAIR_FIELDS, ['pairs', key], add);
    }
  }
  return [clean ? data : null, problems];
}

function findings(data, add) {
  const version = data.get('version');
  if (version !== CONFIG_VERSION) {
    add(['version'], `version ${version} is not supported: this reader understands champollion.config.json version ${CONFIG_VERSION}`,
      'write the file in the version 3 format (see the README)', 'version');
  }
  const pairs = data.get('pairs');
  if (pairs.size === 0) add(['pairs'], 'no pairs: nothing will be translated', 'add one, e.g. "en:es": {"methodPlugin": "my-method"}', 'empty', 'warning');
  const input = data.get('inputLocale');
  const seen = new Map();
  for (const key of pairs.keys()) {
    const parsed = splitPairKey(key);
    if (parsed === null) {
      add(['pairs', key], `${JSON.stringify(key)} is not a language pair`, 'write it as "src:tgt" (also "src->tgt" or "src→tgt"), e.g. "en:es"', 'pair-key');
      continue;
    }
    const [source, target] = parsed.map(normalizeLocale);
    const id = `${source}\n${target}`;
    if (source !== normalizeLocale(input)) {
      add(['pairs', key], `translates from ${parsed[0]}, but inputLocale is ${input}`, `every pair starts from the input locale: "${input}:${parsed[1]}"`, 'pair-source');
    } else if (target === source) {
      add(['pairs', key], 'source and target locales are the same', 'name a target locale other than the input locale', 'pair-target');
    } else if (seen.has(id)) {
      add(['pairs', key], `the same pair as ${JSON.stringify(seen.get(id))}`, 'keep one of them', 'pair-duplicate');
    } else {
      seen.set(id, key);
    }
  }
}

// Edit distance, for "did you mean" hints.
function distance(a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}

function unknownFields(value, fields, at, add) {
  const known = fields.map(([name]) => name);
  for (const key of value.keys()) {
    if (known.includes(key)) continue;
    const close = known.find((name) => name.toLowerCase() === key.toLowerCase())
      ?? known.find((name) => distance(name, key) <= Math.max(1, Math.floor(name.length / 4)));
    add([...at, key], `unknown field "${key}"`, `${close ? `did you mean "${close}"?` : 'remove it.'} Known fields: ${known.join(', ')}`,
      'unknown-field', 'warning');
  }
}

/** "en:es", "en->es" or "en→es" → ["en", "es"]; null when it is not a pair of locales. */
export function splitPairKey(key) {
  for (const separator of PAIR_SEPARATORS) {
    if (!key.includes(separator)) continue;
    const parts = key.split(separator).map((part) => part.trim());
    return parts.length === 2 && parts.every((part) => LOCALE_PATTERN.test(part)) ? parts : null;
  }
  return null;
}

/** The config file for path: the file itself, or champollion.config.json in a directory. */
export function configPath(path) {
  const chosen = path ?? CONFIG_FILE;
  try {
    if (statSync(chosen).isDirectory()) return join(chosen, CONFIG_FILE);
  } catch { /* reported when it is read */ }
  return chosen;
}

/**
 * Read a config: {file, directory, inputLocale, localesDir, pairs: [{key, source, target, methodPlugin,
 * model, temperature, batchSize, sourceLanguage, targetLanguage}], warnings}. Throws
 * ChampollionConfigError listing every error.
 */
export function readChampollionConfig(path) {
  const given = configPath(path);
  const file = resolve(given);
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ChampollionConfigError(given, [{ file: given, path: '$', message: `cannot read file: ${error.code === 'ENOENT' ? 'No such file or directory' : error.message}`,
      hint: 'give the path of champollion.config.json with --config', severity: 'error', code: 'io' }]);
  }
  const [data, problems] = decodeConfig(text, given);
  if (data === null || problems.some((p) => p.severity === 'error')) throw new ChampollionConfigError(given, problems);
  const pairs = [...data.get('pairs')].map(([key, settings]) => {
    const [source, target] = splitPairKey(key);
    const get = (name, fallback = null) => (settings.has(name) ? settings.get(name) : fallback);
    return {
      key, source, target,
      methodPlugin: get('methodPlugin'),
      model: get('model'),
      temperature: get('temperature'),
      batchSize: get('batchSize', 16),
      sourceLanguage: get('sourceLanguage'),
      targetLanguage: get('targetLanguage'),
    };
  });
  return {
    file,
    directory: dirname(file),
    inputLocale: data.get('inputLocale'),
    localesDir: resolve(dirname(file), data.get('localesDir') ?? 'locales'),
    pairs,
    warnings: problems.filter((p) => p.severity === 'warning'),
  };
}
