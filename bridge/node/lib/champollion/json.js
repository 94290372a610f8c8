// JSON that keeps key order as written. JSON.parse moves integer-like keys ("404", "10") to the front
// of an object, so locale files are read with an order-keeping parser (../json-text.js) into Maps, and
// written back as JSON.stringify(value, null, 2) would (plus a newline), except that a JsonNumber (a locale
// file's number, read as written) is written as it was read ("1.50", "-0", "12345678901234567890"). The
// Python side (mt_eval.champollion.jsonfmt) writes the same bytes; bridge/vectors/champollion/json.json pins
// the format.
import { JsonNumber } from '../json-text.js';

export { JsonNumber, JsonSyntaxError, parseOrdered, toPlain } from '../json-text.js';

/**
 * Maps (and plain objects) as JSON.stringify(value, null, 2) writes objects, plus a newline; a JsonNumber
 * as it was read.
 */
export function formatJson(value) {
  return `${write(value, '')}\n`;
}

function write(value, indent) {
  if (value instanceof JsonNumber) return value.text;
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

/** Compare strings by UTF-16 code units (the default sort order), for sorted listings. */
export const byCodeUnits = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
