// What a method returned, in words, where it is not what a result or a list of results needs (as mt_eval.results
// and mt_eval.records say it): something other than an array, and a result that names its translation otherwise.

import { got } from './contract/words.js';
import { isPlainObject } from './protocol.js';

// Fields a method may have meant as "predicted" (an unknown field is moved into metadata before the result is checked:
// mt_eval.records.PREDICTED_LOOKALIKES).
const PREDICTED_LOOKALIKES = ['translation', 'text', 'output', 'target', 'prediction'];

/** '; it has "translation": did you mean "predicted"?' when a result without "predicted" holds a likely misnaming of it. */
export function predictedLookalike(metadata) {
  const name = isPlainObject(metadata) ? PREDICTED_LOOKALIKES.find((key) => typeof metadata[key] === 'string') : undefined;
  return name === undefined ? '' : `; it has "${name}": did you mean "predicted"?`;
}

/**
 * The error of every entry when `label` returned something other than an array: what it was, in the words a
 * JavaScript author knows, and how to return an array instead (mt_eval.results.not_a_list says it for Python).
 */
export function notAList(label, returned) {
  const kind = Object.prototype.toString.call(returned).slice(8, -1);
  const iterates = returned !== null && typeof returned === 'object' && typeof returned.next === 'function';
  let what = got(returned);
  let fix = '';
  if (kind === 'AsyncGenerator') [what, fix] = ['an async generator', ': return an array, collecting it with for await'];
  else if (kind === 'Generator' || iterates) {
    [what, fix] = [kind === 'Generator' ? 'a generator' : 'an iterator', ': return an array, e.g. [...results] or Array.from(...)'];
  } else if (returned instanceof Map) [what, fix] = ['a Map', ': return an array of result objects, one per entry'];
  else if (returned instanceof Set) [what, fix] = ['a Set', ': return an array, e.g. [...set]'];
  else if (isPlainObject(returned)) fix = ': return an array of result objects, one per entry';
  return `${label} returned ${what}, not a list of results${fix}`;
}
