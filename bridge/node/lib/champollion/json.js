// JSON that keeps key order as written. JSON.parse moves integer-like keys ("404", "10") to the front
// of an object, so locale files are read with this small parser into Maps, and written back as
// JSON.stringify(value, null, 2) would (plus a newline). The Python side (mt_eval.champollion.jsonfmt)
// writes the same bytes; bridge/vectors/champollion/json.json pins the format.

/** A JSON syntax error, located by line and column (1-based, in characters). */
export class JsonSyntaxError extends SyntaxError {
  constructor(message, text, position) {
    const before = text.slice(0, position);
    const line = before.split('\n').length;
    const column = [...before.slice(before.lastIndexOf('\n') + 1)].length + 1;
    super(`invalid JSON at line ${line}, column ${column}: ${message}`);
    this.name = 'JsonSyntaxError';
    this.line = line;
    this.column = column;
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;

/**
 * Parse JSON text (a leading BOM is skipped); objects become Maps in written order. A repeated key
 * keeps its first place and takes the last value (as JSON.parse and Python do); onDuplicate(key, path)
 * hears of each repetition.
 */
export function parseOrdered(text, { onDuplicate } = {}) {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  let at = 0;
  const fail = (message) => { throw new JsonSyntaxError(message, source, at); };
  const skip = () => {
    WHITESPACE.lastIndex = at;
    WHITESPACE.exec(source);
    at = WHITESPACE.lastIndex;
  };
  const string = () => {
    const start = at;
    at++;
    for (;;) {
      const code = source.charCodeAt(at);
      if (Number.isNaN(code)) { at = start; fail('Unterminated string'); }
      if (code === 0x22) break;
      if (code < 0x20) fail('Invalid control character');
      at += code === 0x5c ? 2 : 1;
    }
    at++;
    try {
      return JSON.parse(source.slice(start, at));
    } catch {
      at = start;
      return fail('Invalid \\escape');
    }
  };
  const value = (path) => {
    skip();
    const char = source[at];
    if (char === '{') return object(path);
    if (char === '[') return array(path);
    if (char === '"') return string();
    for (const [word, result] of [['true', true], ['false', false], ['null', null]]) {
      if (source.startsWith(word, at)) {
        at += word.length;
        return result;
      }
    }
    NUMBER.lastIndex = at;
    const found = NUMBER.exec(source);
    if (!found) fail('Expecting value');
    at = NUMBER.lastIndex;
    return Number(found[0]);
  };
  const object = (path) => {
    const out = new Map();
    at++;
    skip();
    if (source[at] === '}') {
      at++;
      return out;
    }
    for (;;) {
      skip();
      if (source[at] !== '"') fail('Expecting property name enclosed in double quotes');
      const key = string();
      skip();
      if (source[at] !== ':') fail("Expecting ':' delimiter");
      at++;
      const item = value([...path, key]);
      if (out.has(key)) onDuplicate?.(key, path);
      out.set(key, item);
      skip();
      if (source[at] === ',') { at++; continue; }
      if (source[at] === '}') { at++; return out; }
      fail("Expecting ',' delimiter");
    }
  };
  const array = (path) => {
    const out = [];
    at++;
    skip();
    if (source[at] === ']') {
      at++;
      return out;
    }
    for (;;) {
      out.push(value([...path, out.length]));
      skip();
      if (source[at] === ',') { at++; continue; }
      if (source[at] === ']') { at++; return out; }
      fail("Expecting ',' delimiter");
    }
  };
  const result = value([]);
  skip();
  if (at < source.length) fail('Extra data');
  return result;
}

/** Maps (and plain objects) as JSON.stringify(value, null, 2) writes objects, plus a newline. */
export function formatJson(value) {
  return `${write(value, '')}\n`;
}

function write(value, indent) {
  if (value instanceof Map) return members([...value], indent);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const inner = `${indent}  `;
    return `[\n${value.map((item) => inner + write(item, inner)).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') return members(Object.entries(value), indent);
  return JSON.stringify(value) ?? 'null';
}

function members(entries, indent) {
  if (entries.length === 0) return '{}';
  const inner = `${indent}  `;
  return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${write(item, inner)}`).join(',\n')}\n${indent}}`;
}

/** Maps to plain objects, recursively (for callers that want ordinary JSON values). */
export function toPlain(value) {
  if (value instanceof Map) return Object.fromEntries([...value].map(([key, item]) => [key, toPlain(item)]));
  if (Array.isArray(value)) return value.map(toPlain);
  return value;
}

/** Compare strings by UTF-16 code units (the default sort order), for sorted listings. */
export const byCodeUnits = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
