// A JSON value in words, as the Python SDK says it (mt_eval/strict.py value_in_words, mt_eval/js_text.py
// js_string): small and on its own, so that a guest answering initialize loads it without the rest of ./words.js.

/** A string literal as JSON.stringify writes it (lone surrogates escaped, as Python's js_string does). */
export const jsString = (text) => JSON.stringify(text);

const isObject = (value) => value instanceof Map || (value !== null && typeof value === 'object' && !Array.isArray(value));

/** The actual JSON value in words. */
export function got(value) {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return `the number ${String(value)}`; // (1e400 reads as Infinity; NaN is no JSON number)
  if (typeof value === 'string') {
    const points = [...value];
    return `the string ${jsString(points.length <= 40 ? value : `${points.slice(0, 37).join('')}...`)}`;
  }
  if (Array.isArray(value)) return 'an array';
  return isObject(value) ? 'an object' : 'a value';
}

/** A number past any double in words, as written (mt_eval/json_input.py too_large_words): its first digits when long. */
export function tooLarge(text) {
  if (text.length <= 24) return `a number too large to hold: ${text}`;
  const body = text.replace(/^-+/, '');
  const unit = /^[0-9]+$/.test(body) ? 'digits' : 'characters';
  return `a number too large to hold: ${text.slice(0, 20)}… (${body.length.toLocaleString('en-US')} ${unit})`;
}
