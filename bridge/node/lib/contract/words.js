// The words of problem messages, as the Python SDK writes them (mt_eval/strict.py, mt_eval/field_words.py):
// what a value is, what a schema node expects, and the named suggestions a schema's x-suggest refers to.

export const WHAT = 'x-what';
export const PATTERN_MEANS = 'x-pattern-means';
export const HINT = 'x-hint';
export const SUGGEST = 'x-suggest';
export const SET_BY = 'x-set-by';
export const UNKNOWN_FIELDS = 'x-unknown-fields';

/** A best-effort kebab-case form of text ("My Método v2" → "my-metodo-v2"); bridge/vectors/method-ids.json. */
export function kebabCase(text) {
  const ascii = String(text).normalize('NFKD').replace(/[^\x00-\x7f]/g, '');
  const split = ascii.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
  return (split.match(/[a-z0-9]+/g) ?? []).join('-');
}

/** "eng-spa", "ENG:spa", "eng -> spa" → "eng>spa". */
export function languagePair(text) {
  return text.trim().toLowerCase().replace(/\s*(?:->|→|:|-|>|\/|_)\s*/, '>');
}

export const SUGGESTIONS = Object.freeze({ 'kebab-case': kebabCase, 'language-pair': languagePair });

/** A string literal as JSON.stringify writes it (lone surrogates escaped, as Python's js_string does). */
export const jsString = (text) => JSON.stringify(text);

/** A literal value as the Python side quotes it in a list of choices. */
export const jsValue = (value) => (value === null ? 'null' : typeof value === 'string' ? jsString(value) : String(value));

const isObject = (value) => value instanceof Map || (value !== null && typeof value === 'object' && !Array.isArray(value));

/** The actual JSON value in words. */
export function got(value) {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return `the number ${Number.isFinite(value) ? String(value) : 'null'}`;
  if (typeof value === 'string') {
    const points = [...value];
    return `the string ${jsString(points.length <= 40 ? value : `${points.slice(0, 37).join('')}...`)}`;
  }
  if (Array.isArray(value)) return 'an array';
  return isObject(value) ? 'an object' : 'a value';
}

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

/** The fix a node suggests for a wrong value: its x-hint, else its description. */
export const nodeHint = (node) => node?.[HINT] ?? node?.description ?? undefined;
