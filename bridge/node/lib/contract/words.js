// Problems and their words, as the Python SDK writes them (mt_eval/problems.py, mt_eval/strict.py,
// mt_eval/field_words.py): where a problem is (file + JSON path) and how it is printed, what a value is, what a
// schema node expects, the named suggestions a schema's x-suggest refers to, and "did you mean" suggestions
// exactly as Python's difflib.get_close_matches makes them (the Ratcliff/Obershelp ratio of SequenceMatcher,
// with its autojunk rule), so both runtimes suggest the same names.

import { kebabCase } from './kebab-case.js';
import { got, jsString } from './value-words.js';

export const WHAT = 'x-what';
export const PATTERN_MEANS = 'x-pattern-means';
export const HINT = 'x-hint';
export const SUGGEST = 'x-suggest';
export const SET_BY = 'x-set-by';
export const UNKNOWN_FIELDS = 'x-unknown-fields';

export { got, jsString, kebabCase };

/** "eng-spa", "ENG:spa", "eng -> spa" → "eng>spa". */
export function languagePair(text) {
  return text.trim().toLowerCase().replace(/\s*(?:->|→|:|-|>|\/|_)\s*/, '>');
}

export const SUGGESTIONS = Object.freeze({ 'kebab-case': kebabCase, 'language-pair': languagePair });


/** A literal value as the Python side quotes it in a list of choices. */
export const jsValue = (value) => (value === null ? 'null' : typeof value === 'string' ? jsString(value) : String(value));

const isObject = (value) => value instanceof Map || (value !== null && typeof value === 'object' && !Array.isArray(value));

/** Why a whole number past Number.MAX_SAFE_INTEGER is no integer (mt_eval/js_text.py INEXACT_INTEGER). */
export const INEXACT_INTEGER = `too large to be exact in JSON (integers run from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER})`;


const PLURALS = {
  'a string': 'strings', 'an integer': 'integers', 'a number': 'numbers', 'an object': 'objects', 'true or false': 'booleans',
};

/** What a schema node expects, in words ("an array of strings", "one of \"a\", \"b\""). */
export function describe(node) {
  if ('$ref' in node) return 'an object';
  if ('anyOf' in node) return node.anyOf.filter((member) => member.type !== 'null').map(describe).join(' or ');
  if ('enum' in node) return `one of ${node.enum.map(jsValue).join(', ')}`;
  switch (node.type) {
    case 'string': return 'a string';
    case 'boolean': return 'true or false';
    case 'integer': return 'an integer';
    case 'number': return 'a number';
    case 'null': return 'null';
    case 'array': {
      const item = describe(node.items ?? {});
      return `an array of ${PLURALS[item] ?? item}`;
    }
    case 'object': return 'an object';
    default: return 'a value';
  }
}

/** Whether value has the JSON shape of a schema node (constraints aside). */
export function matches(value, node) {
  if ('$ref' in node) return isObject(value);
  if ('anyOf' in node) return node.anyOf.some((member) => matches(value, member));
  if ('enum' in node) return node.enum.includes(value);
  switch (node.type) {
    case 'string': return typeof value === 'string';
    case 'boolean': return typeof value === 'boolean';
    case 'integer': return Number.isSafeInteger(value);
    case 'number': return typeof value === 'number';
    case 'null': return value === null;
    case 'array': return Array.isArray(value);
    case 'object': return isObject(value);
    default: return true;
  }
}

/** A node's own words for a wrong value: its x-hint, else its description (said with a missing field). */
export const nodeHint = (node) => node?.[HINT] ?? node?.description ?? undefined;

// ---- fixes worded as instructions, from a node's type and constraints (mt_eval/field_words.py) ---------------

const OWN_WORDS = new Set(['description', 'title', 'examples']);
/** Whether a node carries words of its own (a field's Metadata in Python): a description, an x- keyword, ... */
export const hasWords = (node) => Object.keys(node).some((key) => key.startsWith('x-') || OWN_WORDS.has(key));

/** How to fix a value that does not fit: the node's own x-hint, else instruction with its description as context. */
export function fix(meta, instruction) {
  const own = meta?.[HINT];
  const described = meta?.description;
  return own ? String(own) : described ? `${instruction} (${described})` : instruction;
}

const within = (value, node) => (node.minimum === undefined || value >= node.minimum)
  && (node.exclusiveMinimum === undefined || value > node.exclusiveMinimum)
  && (node.maximum === undefined || value <= node.maximum)
  && (node.exclusiveMaximum === undefined || value < node.exclusiveMaximum);

/** A short valid value of a node as JSON, or null when none says more than the type's name does. */
export function example(node) {
  if ('$ref' in node) return null;
  if ('anyOf' in node) return node.anyOf.map(example).find((sample) => sample !== null) ?? null;
  if ('enum' in node) return jsValue(node.enum[0]);
  switch (node.type) {
    case 'boolean': return 'true';
    case 'integer':
    case 'number': {
      const candidates = node.type === 'integer' ? [1, 0, node.minimum, node.maximum] : [1, 0.5, 0, node.minimum, node.maximum];
      const fits = candidates.find((candidate) => candidate !== undefined && within(candidate, node));
      return fits === undefined ? null : String(fits);
    }
    case 'array': {
      const item = example(node.items ?? {});
      return item !== null ? `[${item}]` : !node.minItems ? '[]' : null;
    }
    default: return null;
  }
}

/** How to fix a value of the wrong type: 'give "min_scored" as an integer, e.g. "min_scored": 1'. */
export function give(node, key) {
  const expected = describe(node);
  const field = key === null ? null : `"${key}"`;
  const said = field === null ? `give ${expected}` : `give ${field} as ${expected}`;
  const sample = example(node);
  if (sample !== null) return `${said}, e.g. ${field === null ? '' : `${field}: `}${sample}`;
  return said + (expected === 'a string' ? ', in double quotes' : '');
}

/** A number node's range in words: "from 0 to 1", "of at least 1", "greater than 0 and at most 2". */
export function boundsWords(node) {
  const { minimum: ge, exclusiveMinimum: gt, maximum: le, exclusiveMaximum: lt } = node;
  if (ge !== undefined && le !== undefined) return `from ${ge} to ${le}`;
  const low = ge !== undefined ? `at least ${ge}` : gt !== undefined ? `greater than ${gt}` : null;
  const high = le !== undefined ? `at most ${le}` : lt !== undefined ? `less than ${lt}` : null;
  const text = [low, high].filter(Boolean).join(' and ');
  return text.startsWith('at ') ? `of ${text}` : text;
}

// ---- problems: where, what, and how to fix it ----------------------------------------------------

const IDENTIFIER = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*$/u;
// (an ASCII name is tested without the Unicode classes, whose first use costs a guest's start-up a millisecond)
const ASCII_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const isIdentifier = (part) => ASCII_IDENTIFIER.test(part) || IDENTIFIER.test(part);

/** ("a", 2, "en:es") → $.a[2]["en:es"], as the Python SDK writes JSON paths. */
export function jsonPath(parts) {
  return parts.reduce((out, part) => (typeof part === 'number' ? `${out}[${part}]`
    : isIdentifier(part) ? `${out}.${part}` : `${out}[${JSON.stringify(part)}]`), '$');
}

/** A problem as one or two lines: "error: FILE PATH: message" and "    fix: hint". */
export function renderProblem({ file, path, message, hint, severity }) {
  return `${severity}: ${path === '$' ? file : `${file} ${path}`}: ${message}${hint ? `\n    fix: ${hint}` : ''}`;
}

export const errorsOf = (problems) => problems.filter((p) => p.severity === 'error');

/** A problem object as mt_eval.problems.Problem has it. */
export const makeProblem = (file, path, message, { hint = null, severity = 'error', code = 'invalid' } = {}) => ({
  file, path, message, hint, severity, code,
});

/** A file or plugin has errors; problems lists every one (and the warnings). */
export class ProblemsError extends Error {
  constructor(problems, summary) {
    const errors = errorsOf(problems);
    super([summary ?? `${errors.length} problem${errors.length !== 1 ? 's' : ''} found`, ...errors.map(renderProblem)].join('\n'));
    this.name = 'ProblemsError';
    this.problems = problems;
  }
}

// ---- did you mean: Python's difflib.get_close_matches ---------------------------------------------

function b2jOf(b) {
  const b2j = new Map();
  b.forEach((item, i) => {
    if (!b2j.has(item)) b2j.set(item, []);
    b2j.get(item).push(i);
  });
  const popular = new Set();
  if (b.length >= 200) {
    const ntest = Math.floor(b.length / 100) + 1;
    for (const [item, indices] of b2j) if (indices.length > ntest) popular.add(item);
    for (const item of popular) b2j.delete(item);
  }
  return { b2j, popular };
}

function longestMatch(a, b, b2j, isJunk, alo, ahi, blo, bhi) {
  let [besti, bestj, bestsize] = [alo, blo, 0];
  let j2len = new Map();
  for (let i = alo; i < ahi; i++) {
    const next = new Map();
    for (const j of b2j.get(a[i]) ?? []) {
      if (j < blo) continue;
      if (j >= bhi) break;
      const k = (j2len.get(j - 1) ?? 0) + 1;
      next.set(j, k);
      if (k > bestsize) [besti, bestj, bestsize] = [i - k + 1, j - k + 1, k];
    }
    j2len = next;
  }
  for (const junk of [false, true]) {
    while (besti > alo && bestj > blo && isJunk(b[bestj - 1]) === junk && a[besti - 1] === b[bestj - 1]) {
      besti--; bestj--; bestsize++;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && isJunk(b[bestj + bestsize]) === junk
      && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
  }
  return [besti, bestj, bestsize];
}

/** SequenceMatcher(None, a, b) with a, b strings: ratio() and its two cheaper upper bounds. */
class SequenceMatcher {
  constructor(b) {
    this.b = Array.from(b);
    ({ b2j: this.b2j, popular: this.popular } = b2jOf(this.b));
    this.fullBCount = null;
  }

  setA(a) {
    this.a = Array.from(a);
  }

  realQuickRatio() {
    const [la, lb] = [this.a.length, this.b.length];
    return ratio(Math.min(la, lb), la + lb);
  }

  quickRatio() {
    if (this.fullBCount === null) {
      this.fullBCount = new Map();
      for (const item of this.b) this.fullBCount.set(item, (this.fullBCount.get(item) ?? 0) + 1);
    }
    const avail = new Map();
    let matches = 0;
    for (const item of this.a) {
      const left = avail.has(item) ? avail.get(item) : (this.fullBCount.get(item) ?? 0);
      avail.set(item, left - 1);
      if (left > 0) matches++;
    }
    return ratio(matches, this.a.length + this.b.length);
  }

  ratio() {
    const { a, b, b2j } = this;
    const isJunk = () => false; // no junk function; popular elements are left out of b2j, not junk
    const queue = [[0, a.length, 0, b.length]];
    const blocks = [];
    while (queue.length) {
      const [alo, ahi, blo, bhi] = queue.pop();
      const [i, j, k] = longestMatch(a, b, b2j, isJunk, alo, ahi, blo, bhi);
      if (k) {
        blocks.push([i, j, k]);
        if (alo < i && blo < j) queue.push([alo, i, blo, j]);
        if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
      }
    }
    const matches = blocks.reduce((sum, [, , size]) => sum + size, 0);
    return ratio(matches, a.length + b.length);
  }
}

const ratio = (matches, length) => (length ? (2.0 * matches) / length : 1.0);

/** difflib.get_close_matches(word, possibilities, n, cutoff): best first, ties by the larger string. */
export function getCloseMatches(word, possibilities, n = 3, cutoff = 0.6) {
  const matcher = new SequenceMatcher(word);
  const found = [];
  for (const candidate of possibilities) {
    matcher.setA(candidate);
    if (matcher.realQuickRatio() >= cutoff && matcher.quickRatio() >= cutoff) {
      const score = matcher.ratio();
      if (score >= cutoff) found.push([score, candidate]);
    }
  }
  const byCodePoints = (x, y) => {
    const [p, q] = [Array.from(x), Array.from(y)];
    for (let i = 0; i < Math.min(p.length, q.length); i++) {
      const diff = p[i].codePointAt(0) - q[i].codePointAt(0);
      if (diff) return diff;
    }
    return p.length - q.length;
  };
  found.sort(([s1, x1], [s2, x2]) => (s2 - s1) || byCodePoints(x2, x1));
  return found.slice(0, n).map(([, candidate]) => candidate);
}

// Python's name for the type of a value a card source returned instead of an object.
const pythonType = (value) => (Array.isArray(value) ? 'list' : typeof value === 'string' ? 'str'
  : typeof value === 'boolean' ? 'bool' : Number.isInteger(value) ? 'int' : typeof value === 'number' ? 'float' : 'NoneType');

/** The problem with a card source (`source` names it) that is not an object, or null when it is one (or none). */
export function notACard(source, data) {
  if (data === null || data === undefined || (typeof data === 'object' && !Array.isArray(data))) return null;
  return makeProblem(source, '$', `a method card must be an object, got ${pythonType(data)}`,
    { hint: 'return or write a JSON object', code: 'type' });
}
