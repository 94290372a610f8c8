// Text that is not valid Unicode — a lone surrogate, which a string can hold and JSON.stringify escapes but UTF-8
// cannot carry — found in what is about to be sent to a method, in the words of mt_eval/lone_surrogates.py
// (bridge/vectors/contract/lone-surrogates.json pins both). A guest cannot read a request holding one, so the
// entry (or decision row) that holds it fails at once, before anything is sent, and the others go on; the words
// blame the input: `the text is not valid Unicode (surrogates not allowed at position 1)` for an entry's source,
// `the entry's "note" …`, `the row's "state.text" …` or `the config's "prompt" …` for anything else.
// Text a method gives back about itself (a thrown error's message) is not refused but made writable: each lone
// surrogate written as its escape, `caf\udce9`, as mt_eval.lone_surrogates.writable does.
import { isPlainObject } from './protocol.js';

/** `WHERE is not valid Unicode (surrogates not allowed at position N)`, N counted in code points, as Python does. */
export const notValidUnicode = (where, position) => `${where} is not valid Unicode (surrogates not allowed at position ${position})`;

/** The position (in code points) of the first lone surrogate in text, or -1. */
export function firstLone(text) {
  if (text.isWellFormed()) return -1;
  let position = 0;
  for (let i = 0; i < text.length; i++, position++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++; // a pair: one code point
        continue;
      }
    }
    if (unit >= 0xd800 && unit <= 0xdfff) return position;
  }
  return -1;
}

// A lone surrogate as JSON.stringify escapes it (lowercase, and only a lone one: a pair is written as it is), after an
// even run of backslashes (an odd run makes its backslash a literal one).
const ESCAPED_LONE = /(?<=(?:^|[^\\])(?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

/**
 * JSON text as JSON.stringify wrote it, with each lone surrogate it escaped (`"\ud800"`, which no strict reader
 * accepts) written as U+FFFD instead, so that what is around it still arrives: what a guest writes is well-formed.
 */
export function wellFormedJson(text) {
  return text.includes('\\ud') ? text.replace(ESCAPED_LONE, '\ufffd') : text;
}

/** Whether every string in value (a JSON value), and every field name, is valid Unicode. */
export function wellFormed(value) {
  if (typeof value === 'string') return value.isWellFormed();
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!wellFormed(value[i])) return false;
    return true;
  }
  for (const key in value) if (!key.isWellFormed() || !wellFormed(value[key])) return false;
  return true;
}

const pathText = (path) => path.reduce((out, step) => (typeof step === 'number' ? `${out}[${step}]` : out ? `${out}.${step}` : step), '');

// Where the first lone surrogate in value is: {path, position, inName}, or null.
function found(value, path) {
  if (typeof value === 'string') {
    const position = firstLone(value);
    return position === -1 ? null : { path, position, inName: false };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const inner = found(value[i], [...path, i]);
      if (inner) return inner;
    }
  } else if (isPlainObject(value)) {
    for (const key in value) {
      const position = firstLone(key);
      if (position !== -1) return { path, position, inName: true };
      const inner = found(value[key], [...path, key]);
      if (inner) return inner;
    }
  }
  return null;
}

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

// The longest text a method's own message (a thrown error's, an error it returns) is kept as: in an entry's error, the
// card's failures, the results log and the terminal (mt_eval.lone_surrogates.MESSAGE_LIMIT).
export const MESSAGE_LIMIT = 2000;
const MARKER_ROOM = 40; // room for the marker, "… (9,999,999,999,999 characters more)" at most

const MARKER = /… \(([0-9,]+) characters more\)$/;

/**
 * text when it holds at most MESSAGE_LIMIT characters (code points, as Python counts them; text is writable, so a pair
 * is one); else its start, then how much was cut — "… (9,997,120 characters more)" — MESSAGE_LIMIT in all. Text capped
 * before, then worded ("the method failed: " before it), is cut as the whole text would be, as
 * mt_eval.lone_surrogates.capped does.
 */
export function capped(text) {
  if (text.length <= MESSAGE_LIMIT) return text;
  const cutBefore = MARKER.exec(text.slice(-MARKER_ROOM));
  const whole = cutBefore ? text.slice(0, text.length - cutBefore[0].length) : text;
  const kept = MESSAGE_LIMIT - MARKER_ROOM;
  let points = 0;
  let cut = whole.length;
  for (let i = 0; i < whole.length; i++) {
    const unit = whole.charCodeAt(i);
    if ((unit & 0xfc00) === 0xdc00 && i > 0 && (whole.charCodeAt(i - 1) & 0xfc00) === 0xd800) continue; // (a pair's 2nd)
    if (points === kept) cut = i;
    points++;
  }
  if (points + (cutBefore ? cutBefore[0].length : 0) <= MESSAGE_LIMIT) return text;
  const more = points - kept + (cutBefore ? Number(cutBefore[1].replaceAll(',', '')) : 0);
  return `${whole.slice(0, cut)}… (${String(more).replace(/\B(?=(\d{3})+$)/g, ',')} characters more)`;
}

/**
 * The last `count` UTF-16 units of text (all of it when shorter), less the second half of a pair whose first half the
 * cut left out: a tail cut inside a character begins after it, not with a lone surrogate.
 */
export function lastUnits(text, count) {
  if (text.length <= count) return text;
  const kept = text.slice(-count);
  return (kept.charCodeAt(0) & 0xfc00) === 0xdc00 ? kept.slice(1) : kept;
}

/** text with each lone surrogate written as its escape (`caf\udce9`): valid Unicode, for an error message. */
export const writable = (text) => (text.isWellFormed() ? text
  : text.replace(LONE, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`));

/** Why value (an entry, a row or a config: owner says which) cannot be sent, or null when it can. */
export function problemIn(value, owner) {
  if (wellFormed(value)) return null; // the usual case, without building paths
  const where = found(value, []);
  if (where === null) return null;
  const { path, position, inName } = where;
  if (inName) return notValidUnicode(`a field name in the ${owner}${path.length ? `'s "${pathText(path)}"` : ''}`, position);
  if (owner === 'entry' && path.length === 1 && path[0] === 'source') return notValidUnicode('the text', position);
  return notValidUnicode(`the ${owner}'s "${pathText(path)}"`, position);
}

/**
 * run(items that can be sent), with the others failed at once (fail(id, problem)); results in item order. Every
 * item fails when the config cannot be sent.
 */
export async function sendingOnlyValidText(items, config, { owner, fail }, run) {
  const configProblem = problemIn(config, 'config');
  if (configProblem !== null) return items.map((item) => fail(item.id, configProblem));
  let problems = null;
  for (let i = 0; i < items.length; i++) {
    const problem = problemIn(items[i], owner);
    if (problem !== null) (problems ??= items.map(() => null))[i] = problem;
  }
  if (problems === null) return run(items); // the usual call
  const sendable = items.filter((_, i) => problems[i] === null);
  const results = sendable.length ? await run(sendable) : [];
  let next = 0;
  return items.map((item, i) => (problems[i] === null ? results[next++] : fail(item.id, problems[i])));
}
