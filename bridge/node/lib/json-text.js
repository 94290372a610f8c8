// Reading a user's JSON file as the Python SDK does (mt_eval/json_input.py): objects become Maps in written
// order (JSON.parse moves integer-like keys such as "404" to the front), syntax errors carry Python's
// wording, line and column, invalid UTF-8 names its byte (UTF-16 and UTF-32 are named as such), and a repeated key
// is reported. Both runtimes therefore report the same problems for the same file.
// Numbers are doubles, or, with exactNumbers (for a file whose numbers are copied rather than used:
// champollion's locale files), JsonNumbers holding each number as written.

import { jsonPath } from './contract/words.js';

/** A JSON syntax error, located by line and column (1-based, in characters). */
export class JsonSyntaxError extends SyntaxError {
  constructor(detail, text, position) {
    const before = text.slice(0, position);
    const line = before.split('\n').length;
    const column = [...before.slice(before.lastIndexOf('\n') + 1)].length + 1;
    super(`invalid JSON at line ${line}, column ${column}: ${detail.replace(/ (?:starting )?at$/, '')}`);
    this.name = 'JsonSyntaxError';
    this.detail = detail;
    this.line = line;
    this.column = column;
    this.hint = syntaxHint(detail, text, position);
  }
}

// The fix Python's reader suggests for each kind of syntax error (mt_eval/json_input.py, `_syntax_hint`): a file
// cut off (the error at its very end) is named as such, a comment (JSONC's // or /*) wherever it stands, a trailing
// comma only when a closing brace or bracket follows.
function syntaxHint(detail, text, position) {
  if (text.trim() === '') return 'the file is empty: it must hold a JSON document';
  if (text[position] === '\0') {
    return 'a NUL byte here, which no JSON text has: the file was damaged while it was written (a crash or a full '
      + 'disk leaves NUL bytes in place of its text); write it again, or restore it from a copy';
  }
  if (detail.startsWith('Unterminated string')) return 'the string that starts here has no closing double quote: the file looks cut off';
  if (position >= text.trimEnd().length) return 'the file ends before its JSON does: it looks cut off (an object or list is not closed)';
  if (text.startsWith('//', position) || text.startsWith('/*', position)) return 'JSON has no comments: remove the comment that starts here';
  const trimmed = text.slice(0, position).trimEnd();
  if (detail.startsWith('Expecting property name') && trimmed.endsWith(',') && text[position] === '}') return 'remove the trailing comma before the closing brace';
  if (detail.startsWith('Expecting value') && trimmed.endsWith(',') && text[position] === ']') return 'remove the trailing comma before the closing bracket';
  if (detail.startsWith("Expecting ',' delimiter")) return 'add a comma between the two items';
  if (detail.includes('double quotes')) return 'JSON needs double quotes around keys and strings';
  if (detail.startsWith('Invalid control character')) return 'write a tab or line break inside a string as \\t or \\n';
  if (detail.startsWith('Extra data')) return 'remove what follows the end of the JSON document (a file holds one document)';
  return 'fix the JSON syntax at that position';
}

/** Arrays and objects nested deeper are refused, at the same depth as Python's reader (json_input.MAX_DEPTH). */
export const MAX_DEPTH = 500;

/** A document nested deeper than MAX_DEPTH: refused before it is read (recursing into it would overflow the stack). */
export class JsonDepthError extends SyntaxError {
  constructor(depth) {
    super(`arrays and objects nested ${depth.toLocaleString('en-US')} levels deep: too deep to read`);
    this.name = 'JsonDepthError';
    this.hint = `nothing this file holds nests over ${MAX_DEPTH} levels deep; regenerate it, or check what wrote it`;
  }
}

// How deep arrays and objects nest in text (brackets inside strings are not counted).
function nestingDepth(text) {
  let depth = 0;
  let deepest = 0;
  for (const bracket of text.replace(/"(?:[^"\\]|\\.)*"/gs, '').matchAll(/[[\]{}]/g)) {
    if (bracket[0] === '[' || bracket[0] === '{') deepest = Math.max(deepest, ++depth);
    else depth--;
  }
  return deepest;
}

function countOf(text, char) {
  let count = 0;
  for (let at = text.indexOf(char); at !== -1; at = text.indexOf(char, at + 1)) count++;
  return count;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;
const LITERALS = [['true', true], ['false', false], ['null', null], ['NaN', NaN], ['Infinity', Infinity],
  ['-Infinity', -Infinity]];
const ESCAPES = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

const WRITTEN = new WeakMap(); // a parsed document → how each of its numbers past any double was written, by path

/**
 * How the number at `at` (keys and indexes) of the document `root` was written, when it was past any double and
 * read as ±Infinity ("1e400", an integer of 400 digits); else undefined. Python's parse_json keeps it so too.
 */
export function writtenNumber(root, at) {
  return root !== null && typeof root === 'object' ? WRITTEN.get(root)?.get(JSON.stringify(at)) : undefined;
}

/**
 * A number exactly as the file writes it ("1.50", "-0", "12345678901234567890"): its JSON token, which a
 * writer copies as it is. Python's reader (mt_eval.json_input) has the same class.
 */
export class JsonNumber {
  constructor(text) {
    this.text = text;
  }
}

/**
 * Parse JSON text (a leading BOM is skipped); objects become Maps in written order; JsonDepthError when it nests
 * deeper than MAX_DEPTH. A repeated key
 * keeps its first place and takes the last value (as JSON.parse and Python do); onDuplicate(key, path)
 * hears of each repetition. With exactNumbers, each number is a JsonNumber (NaN and Infinity, not JSON,
 * stay numbers).
 */
export function parseOrdered(text, { onDuplicate, exactNumbers = false } = {}) {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (countOf(source, '{') + countOf(source, '[') > MAX_DEPTH) {
    const depth = nestingDepth(source);
    if (depth > MAX_DEPTH) throw new JsonDepthError(depth);
  }
  let at = 0;
  const tooLarge = new Map();
  const fail = (message, position = at) => { throw new JsonSyntaxError(message, source, position); };
  const skip = () => {
    WHITESPACE.lastIndex = at;
    WHITESPACE.exec(source);
    at = WHITESPACE.lastIndex;
  };
  const string = () => {
    const start = at;
    let out = '';
    at++;
    for (;;) {
      const code = source.charCodeAt(at);
      if (Number.isNaN(code)) fail('Unterminated string starting at', start);
      if (code === 0x22) break;
      if (code < 0x20) fail('Invalid control character at');
      if (code !== 0x5c) {
        out += source[at++];
        continue;
      }
      const escape = source[at + 1];
      if (escape === undefined) fail('Unterminated string starting at', start);
      if (escape === 'u') {
        const hex = source.slice(at + 2, at + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('Invalid \\uXXXX escape', at + 1);
        out += String.fromCharCode(parseInt(hex, 16));
        at += 6;
      } else if (escape in ESCAPES) {
        out += ESCAPES[escape];
        at += 2;
      } else {
        fail('Invalid \\escape');
      }
    }
    at++;
    return out;
  };
  const value = (path) => {
    const char = source[at];
    if (char === '{') return object(path);
    if (char === '[') return array(path);
    if (char === '"') return string();
    for (const [word, result] of LITERALS) {
      if (source.startsWith(word, at)) {
        at += word.length;
        return result;
      }
    }
    NUMBER.lastIndex = at;
    const found = NUMBER.exec(source);
    if (!found) fail('Expecting value');
    at = NUMBER.lastIndex;
    if (exactNumbers) return new JsonNumber(found[0]);
    const number = Number(found[0]);
    if (!Number.isFinite(number)) tooLarge.set(JSON.stringify(path), found[0]);
    return number;
  };
  const object = (path) => {
    const out = new Map();
    const repeated = []; // reported once the object is complete, inner objects first (as Python does)
    const done = () => {
      for (const key of repeated) onDuplicate?.(key, path);
      return out;
    };
    at++;
    skip();
    if (source[at] === '}') {
      at++;
      return out;
    }
    for (;;) {
      if (source[at] !== '"') fail('Expecting property name enclosed in double quotes');
      const key = string();
      skip();
      if (source[at] !== ':') fail("Expecting ':' delimiter");
      at++;
      skip();
      const item = value([...path, key]);
      if (out.has(key)) repeated.push(key);
      out.set(key, item);
      skip();
      if (source[at] === '}') { at++; return done(); }
      if (source[at] !== ',') fail("Expecting ',' delimiter");
      at++;
      skip();
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
      if (source[at] === ']') { at++; return out; }
      if (source[at] !== ',') fail("Expecting ',' delimiter");
      at++;
      skip();
    }
  };
  skip();
  const result = value([]);
  skip();
  if (at < source.length) fail('Extra data');
  if (tooLarge.size && result !== null && typeof result === 'object') WRITTEN.set(result, tooLarge);
  return result;
}

/** Offset of the first byte that is not part of valid UTF-8 (as Python's decoder reports it), or -1. */
export function invalidUtf8Offset(bytes) {
  for (let i = 0; i < bytes.length;) {
    const lead = bytes[i];
    let size;
    let min;
    if (lead < 0x80) { i++; continue; }
    if (lead >= 0xc2 && lead <= 0xdf) [size, min] = [2, 0x80];
    else if (lead >= 0xe0 && lead <= 0xef) [size, min] = [3, 0x800];
    else if (lead >= 0xf0 && lead <= 0xf4) [size, min] = [4, 0x10000];
    else return i;
    let code = lead & (0xff >> (size + 1));
    for (let k = 1; k < size; k++) {
      const next = bytes[i + k];
      if (next === undefined || (next & 0xc0) !== 0x80) return i;
      code = (code << 6) | (next & 0x3f);
    }
    if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return i;
    i += size;
  }
  return -1;
}

const problem = (file, message, hint, code, path = '$') => ({ file, path, message, hint, severity: 'error', code });

// Byte-order marks of the encodings a JSON file is sometimes saved in instead of UTF-8 (UTF-32's first: UTF-32LE's
// begins with UTF-16LE's), as json_input.py knows them.
const OTHER_ENCODINGS = [[[0xff, 0xfe, 0, 0], 'UTF-32'], [[0, 0, 0xfe, 0xff], 'UTF-32'], [[0xff, 0xfe], 'UTF-16'],
  [[0xfe, 0xff], 'UTF-16']];

/** A word for a POSIX shell, quoted when it has to be, as Python's shlex.quote does. */
const shellWord = (word) => (/[^\w@%+=:,./-]/.test(word) ? `'${word.replaceAll("'", `'"'"'`)}'` : word);

// Without a byte-order mark: JSON text starts with two ASCII characters, so which of its first four bytes are NUL
// says the encoding (RFC 4627, section 3); in UTF-8 none is.
const BY_NUL_BYTES = { '1110': 'UTF-32BE', '0111': 'UTF-32LE', '1010': 'UTF-16BE', '0101': 'UTF-16LE' };

const hexBytes = (bytes) => Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0').toUpperCase()).join(' ');

/** The problem of UTF-16 or UTF-32 bytes (a file saved as "Unicode"): they start with the byte-order mark of one,
 * or without one, with the NUL bytes of ASCII in one; else null. */
function otherEncoding(bytes, file) {
  for (const [mark, encoding] of OTHER_ENCODINGS) {
    if (mark.every((byte, index) => bytes[index] === byte)) {
      return encodingProblem(file, encoding, `it starts with the byte-order mark ${hexBytes(mark)}`);
    }
  }
  const nulBytes = Array.from(bytes.subarray(0, 4), (byte) => +(byte === 0)).join('');
  const unmarked = bytes.length >= 4 ? BY_NUL_BYTES[nulBytes] : undefined;
  if (unmarked) {
    return encodingProblem(file, unmarked, `it starts with ${hexBytes(bytes.subarray(0, 4))}, ASCII in ${unmarked} `
      + 'without a byte-order mark');
  }
  return null;
}

function encodingProblem(file, encoding, evidence) {
  const name = file ? shellWord(file) : 'FILE';
  const converted = file ? shellWord(`${file}.utf8`) : 'FILE.utf8';
  return problem(file, `${encoding} text, not UTF-8 (${evidence})`,
    `save it as UTF-8, e.g. iconv -f ${encoding} -t UTF-8 ${name} > ${converted} && mv ${converted} ${name}`, 'encoding');
}

/**
 * Parse a file's bytes as mt_eval.json_input.parse_json does: [value (Maps for objects) or null, problems].
 * Problems: invalid UTF-8 (its byte and line), a syntax error (line, column, fix), repeated keys.
 * exactNumbers: numbers as JsonNumbers (see parseOrdered); repeated (an array): each repeated key's dotted path.
 */
export function parseJsonBytes(bytes, file, { exactNumbers = false, repeated = null } = {}) {
  const encoding = otherEncoding(bytes, file);
  if (encoding) return [null, [encoding]];
  const bad = invalidUtf8Offset(bytes);
  if (bad !== -1) {
    const line = bytes.subarray(0, bad).reduce((count, byte) => count + (byte === 0x0a), 1);
    return [null, [problem(file, `not valid UTF-8: byte 0x${bytes[bad].toString(16).padStart(2, '0')} at line ${line} (offset ${bad})`,
      'save the file as UTF-8', 'encoding')]];
  }
  const duplicates = []; // [path of the object, key], each once
  let value;
  try {
    value = parseOrdered(Buffer.from(bytes).toString('utf8'), {
      exactNumbers,
      onDuplicate: (key, path) => {
        const where = jsonPath(path);
        if (!duplicates.some(([at, seen]) => at === where && seen === key)) duplicates.push([where, key]);
        const dotted = [...path, key].join('.');
        if (repeated && !repeated.includes(dotted)) repeated.push(dotted);
      },
    });
  } catch (error) {
    if (!(error instanceof JsonSyntaxError || error instanceof JsonDepthError)) throw error;
    return [null, [problem(file, error.message, error.hint, 'syntax')]];
  }
  return [value, duplicates.map(([where, key]) => problem(file, `key "${key}" appears more than once in an object`,
    'keep one of them; JSON readers silently drop all but the last', 'duplicate-key', where))];
}

/** Maps to plain objects, recursively (for callers that want ordinary JSON values). */
export function toPlain(value) {
  if (value instanceof Map) return Object.fromEntries([...value].map(([key, item]) => [key, toPlain(item)]));
  if (Array.isArray(value)) return value.map(toPlain);
  return value;
}
