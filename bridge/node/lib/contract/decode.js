// Strict decoding of a parsed JSON document against a generated schema, reporting every problem at once —
// the Node twin of mt_eval/strict.py's walker, driven by the schema instead of restating it:
//
// 1. walk the value against the schema: unknown fields (with the closest known name), missing fields,
//    wrong types, values outside an enum, patterns, lengths and ranges, worded as the Python side words them;
// 2. build every object whose part of the document is type-clean (schema defaults filled in) and run the
//    cross-field rules of its definition (./rules.js), each finding located by its JSON path.
//
// Problems come out in the same order as in Python, so bridge/vectors/contract/ can pin them for both.
import { writtenNumber } from '../json-text.js';
import { firstLone, notValidUnicode, writable } from '../lone-surrogates.js';
import { RULES } from './rules.js';
import { defaults, resolve, root } from './schema.js';
import { tooLarge } from './value-words.js';
import {
  INEXACT_INTEGER, PATTERN_MEANS, SUGGEST, SUGGESTIONS, UNKNOWN_FIELDS, WHAT, boundsWords, describe, fix, getCloseMatches, give, got,
  hasWords, jsonPath, jsString, jsValue, matches, nodeHint,
} from './words.js';

const LONE_SURROGATE_HINT = 'write the character itself (one beyond U+FFFF escaped as its pair, as \\ud83d\\ude00)';
const entriesOf = (value) => (value instanceof Map ? [...value] : Object.entries(value));
const keysOf = (value) => (value instanceof Map ? [...value.keys()] : Object.keys(value));
const has = (value, key) => (value instanceof Map ? value.has(key) : Object.hasOwn(value, key));
const get = (value, key) => (value instanceof Map ? value.get(key) : value[key]);
const RANGES = [['minimum', '>=', (a, b) => a >= b], ['exclusiveMinimum', '>', (a, b) => a > b],
  ['maximum', '<=', (a, b) => a <= b], ['exclusiveMaximum', '<', (a, b) => a < b]];
const patterns = new Map();
const compiled = (pattern) => {
  if (!patterns.has(pattern)) patterns.set(pattern, new RegExp(pattern, 'u'));
  return patterns.get(pattern);
};

class Walker {
  constructor(document, file) {
    this.document = document;
    this.file = file;
    this.problems = [];
    this.structs = []; // [at, name, ok] in the order their checks finish (children first)
  }

  /** The value at `at` in words; a number past any double as the document writes it. */
  got(value, at) {
    const written = typeof value === 'number' && !Number.isFinite(value) ? writtenNumber(this.data, at) : undefined;
    return written !== undefined ? tooLarge(written) : got(value);
  }

  add(at, message, hint, code = 'invalid', severity = 'error') {
    this.problems.push({ file: this.file, path: jsonPath(at), message, hint: hint ?? null, severity, code });
  }

  // meta: the node whose words (description, x-hint, ...) the problems use: its own, else those of the anyOf
  // it is a member of (an optional Struct's description is on the anyOf, not on its $ref), as Python's Metadata.
  check(value, node, at, inherited = undefined) {
    const meta = hasWords(node) ? node : inherited;
    if ('anyOf' in node) {
      const fitting = node.anyOf.filter((member) => matches(value, member));
      if (fitting.length) return this.check(value, fitting[0], at, meta);
      const others = node.anyOf.filter((member) => member.type !== 'null');
      if (others.length !== 1) return this.wrongType(value, node, at, meta);
      return this.check(value, others[0], at, meta); // an optional value: reported as the one real type would be
    }
    if ('enum' in node) return this.checkEnum(value, node, at, meta);
    if (!matches(value, node)) return this.wrongType(value, node, at, meta);
    if ('$ref' in node) return this.checkStruct(value, resolve(this.document, node), at);
    switch (node.type) {
      case 'array': {
        const ok = this.checkLength(value.length, node.minItems, node.maxItems, at, 'item', meta);
        return value.map((item, i) => this.check(item, node.items ?? {}, [...at, i])).every(Boolean) && ok;
      }
      case 'object':
        if (typeof node.additionalProperties !== 'object') return true;
        return entriesOf(value).map(([key, item]) => this.check(item, node.additionalProperties, [...at, key])).every(Boolean);
      case 'string': return this.checkString(value, node, at, meta);
      case 'integer':
      case 'number': return this.checkRange(value, node, at, meta);
      default: return true;
    }
  }

  wrongType(value, node, at, meta) {
    const expected = describe(node);
    const key = typeof at.at(-1) === 'string' ? writable(at.at(-1)) : null;
    let hint = fix(meta, give(node, key));
    const wraps = node.type === 'array' && matches(value, node.items ?? {});
    if (typeof value === 'string' && (expected.startsWith('an array of strings') || wraps)) {
      hint = `wrap it in brackets: [${jsString(value)}]`;
    } else if (typeof value === 'string' && ['true or false', 'an integer', 'a number'].includes(expected)) {
      const bare = bareFits(value, node);
      if (bare) hint = `write the value without quotes: ${value}`;
      else if (expected === 'true or false') hint = 'write true or false, without quotes';
    }
    const inexact = expected === 'an integer' && Number.isInteger(value);
    this.add(at, `expected ${expected}, got ${this.got(value, at)}${inexact ? `, ${INEXACT_INTEGER}` : ''}`, hint, 'type');
    return false;
  }

  checkEnum(value, node, at, meta) {
    if (node.enum.includes(value)) return true;
    const allowed = node.enum.map(jsValue).join(', ');
    let hint = `use one of ${allowed}`;
    if (typeof value === 'string') {
      const [close] = getCloseMatches(value, node.enum.map(String), 1, 0.6);
      if (close !== undefined) hint = `did you mean "${close}"? Allowed: ${allowed}`;
    }
    this.add(at, `${this.got(value, at)} is not a valid ${meta?.[WHAT] || 'value'}`, hint, 'enum');
    return false;
  }

  checkStruct(value, { name, definition }, at) {
    const fields = Object.keys(definition.properties);
    const required = new Set(definition.required ?? []);
    const unknown = definition.additionalProperties === false ? 'error' : definition[UNKNOWN_FIELDS] ?? 'allowed';
    let ok = true;
    for (const key of keysOf(value)) {
      if (fields.includes(key) || unknown === 'allowed') continue;
      const [close] = getCloseMatches(key, fields, 1, 0.6);
      this.add([...at, key], `unknown field "${writable(key)}"`,
        `${close !== undefined ? `did you mean "${close}"?` : 'remove it.'} Known fields: ${fields.join(', ')}`,
        'unknown-field', unknown === 'warning' ? 'warning' : 'error');
      ok = ok && unknown === 'warning';
    }
    for (const field of fields) {
      const node = definition.properties[field];
      if (has(value, field)) {
        ok = this.check(get(value, field), node, [...at, field]) && ok;
      } else if (required.has(field)) {
        const hint = nodeHint(node);
        this.add([...at, field], `required field "${field}" is missing`,
          `add "${field}": ${describe(node)}${hint ? ` (${hint})` : ''}`, 'missing');
        ok = false;
      }
    }
    this.structs.push([at, name, ok]);
    return ok;
  }

  checkLength(length, min, max, at, unit, meta) {
    if (min !== undefined && length < min) {
      const units = `${min} ${unit}${min !== 1 ? 's' : ''}`;
      this.add(at, `needs at least ${units}`, fix(meta, `give at least ${units}`), 'length');
      return false;
    }
    if (max !== undefined && length > max) {
      this.add(at, `allows at most ${max} ${unit}s, got ${length}`, fix(meta, `shorten it to at most ${max} ${unit}s`), 'length');
      return false;
    }
    return true;
  }

  checkString(value, node, at, meta) {
    const lone = firstLone(value);
    if (lone >= 0) { // ("\ud800": JSON escapes it, UTF-8 cannot hold it)
      this.add(at, notValidUnicode('the text', lone), LONE_SURROGATE_HINT, 'encoding');
      return false;
    }
    if (node.minLength && value === '') {
      this.add(at, 'must not be empty', fix(meta, 'write something in it'), 'length');
      return false;
    }
    if (!this.checkLength([...value].length, node.minLength, node.maxLength, at, 'character', meta)) return false;
    if (node.pattern !== undefined && !compiled(node.pattern).test(value)) {
      const means = meta?.[PATTERN_MEANS];
      let hint = fix(meta, means ? `write it as ${means}` : `write it to match ${node.pattern}`);
      const suggestion = SUGGESTIONS[meta?.[SUGGEST]]?.(value);
      // only a suggestion that is itself valid ("nonsense" is no pair, so it is not offered back), and not the
      // example the fix gives already
      if (suggestion && compiled(node.pattern).test(suggestion) && !hint.includes(`"${suggestion}"`)) {
        hint = `${hint}; for example "${suggestion}"`;
      }
      this.add(at, `${jsString(value)} is not ${means || `matching ${node.pattern}`}`, hint, 'pattern');
      return false;
    }
    return true;
  }

  checkRange(value, node, at, meta) {
    for (const [keyword, sign, test] of RANGES) {
      if (node[keyword] !== undefined && !test(value, node[keyword])) {
        // (NaN and the infinities have no JSON spelling: not "null")
        const shown = this.got(value, at).replace('the number ', '');
        this.add(at, `must be ${sign} ${node[keyword]}, got ${shown}`, fix(meta, `give ${describe(node)} ${boundsWords(node)}`), 'range');
        return false;
      }
    }
    return true;
  }

  /** The type-clean value at `at` as plain data with defaults filled in, then the rules run on it. */
  build(value, node, at) {
    const built = this.plain(value, node);
    this.runRules(built, node, at);
    return built;
  }

  plain(value, node) {
    if (value instanceof Map || (value !== null && typeof value === 'object' && !Array.isArray(value))) {
      if ('$ref' in node) { // fields in declaration order, defaults filled in, unknown fields left out
        const { definition } = resolve(this.document, node);
        const fallback = defaults(definition);
        const out = {};
        for (const [key, fieldNode] of Object.entries(definition.properties)) {
          if (has(value, key)) out[key] = this.plain(get(value, key), fieldNode);
          else if (key in fallback) out[key] = fallback[key];
        }
        return out;
      }
      if ('anyOf' in node) return this.plain(value, node.anyOf.find((member) => matches(value, member)) ?? {});
      const items = typeof node.additionalProperties === 'object' ? node.additionalProperties : {};
      return Object.fromEntries(entriesOf(value).map(([key, item]) => [key, this.plain(item, items)]));
    }
    if (Array.isArray(value)) {
      const items = 'anyOf' in node ? node.anyOf.find((member) => member.type === 'array')?.items : node.items;
      return value.map((item) => this.plain(item, items ?? {}));
    }
    return value;
  }

  runRules(value, node, at) {
    if (value === null || typeof value !== 'object') return;
    if ('anyOf' in node) {
      const member = node.anyOf.find((candidate) => matches(value, candidate));
      if (member) this.runRules(value, member, at);
      return;
    }
    if ('$ref' in node) {
      const { name, definition } = resolve(this.document, node);
      for (const [field, fieldNode] of Object.entries(definition.properties)) {
        if (field in value) this.runRules(value[field], fieldNode, [...at, field]);
      }
      for (const finding of RULES[name]?.(value) ?? []) {
        this.add([...at, ...finding.at], finding.message, finding.hint, finding.code ?? 'rule', finding.severity ?? 'error');
      }
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => this.runRules(item, node.items ?? {}, [...at, i]));
    } else if (typeof node.additionalProperties === 'object') {
      for (const [key, item] of Object.entries(value)) this.runRules(item, node.additionalProperties, [...at, key]);
    }
  }
}

// Does a quoted value ("true", "3") have the expected type once the quotes are gone?
function bareFits(value, node) {
  try {
    return matches(JSON.parse(value), node);
  } catch {
    return false;
  }
}

const nodeAt = (walker, at) => {
  let node = walker.rootNode;
  for (const part of at) {
    if ('anyOf' in node) node = node.anyOf.find((member) => member.type !== 'null' && (typeof part === 'number' ? member.type === 'array' : true));
    if ('$ref' in node) node = resolve(walker.document, node).definition.properties[part];
    else if (typeof part === 'number') node = node.items;
    else node = node.additionalProperties;
  }
  return node;
};

const valueAt = (data, at) => at.reduce((value, part) => get(value, part), data);

/**
 * Decode a parsed document (Maps or plain objects) against the schema `stem` ("method", "method-card", ...):
 * {value, problems}. value is the document as plain data with defaults filled in when the whole document is
 * type-clean, else null; rules still run on every type-clean object, so their problems are reported too.
 */
export function decodeValue(data, stem, { file }) {
  const { document } = root(stem);
  const walker = new Walker(document, file);
  walker.data = data;
  walker.rootNode = { $ref: document.$ref };
  if (walker.check(data, walker.rootNode, [])) {
    return { value: walker.build(data, walker.rootNode, []), problems: walker.problems };
  }
  const clean = walker.structs.filter(([, , ok]) => ok).map(([at]) => at);
  const isAncestor = (outer, inner) => outer.length < inner.length && outer.every((part, i) => inner[i] === part);
  for (const at of clean) {
    if (clean.some((other) => isAncestor(other, at))) continue;
    const node = nodeAt(walker, at);
    walker.build(valueAt(data, at), '$ref' in node ? node : node.anyOf.find((member) => '$ref' in member), at);
  }
  return { value: null, problems: walker.problems };
}
