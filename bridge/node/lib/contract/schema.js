// The JSON Schemas of bridge/schemas/, as `mt-eval schemas` copies them into lib/generated/schemas/STEM.json: each
// read when it is first needed (a starting guest reads the two or three it uses), never changed; and compiled into
// plain predicates (does a value fit, constraints included?) that answer quickly — results are checked by the
// thousand — while ./decode.js says why not.
import { readdirSync, readFileSync } from 'node:fs';

const FOLDER = new URL('../generated/schemas/', import.meta.url);
const loaded = new Map();

/** The stems of every schema ("method", "translation-result", "champollion-config", ...). */
export function stems() {
  return readdirSync(FOLDER).filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -5)).sort();
}

/** stem → schema document, for every schema (shared: never change them). */
export function schemas() {
  return Object.fromEntries(stems().map((stem) => [stem, schema(stem)]));
}

export { declaredDefaults } from './declared-defaults.js';

/** The schema document generated from one Struct (shared: never change it); throws for an unknown stem. */
export function schema(stem) {
  let found = loaded.get(stem);
  if (found) return found;
  let text;
  try {
    if (!/^[a-z][a-z-]*$/.test(stem)) throw Object.assign(new Error(stem), { code: 'ENOENT' });
    text = readFileSync(new URL(`${stem}.json`, FOLDER), 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') throw new Error(`no schema "${stem}"; known: ${stems().join(', ')}`);
    throw error;
  }
  found = Object.freeze(JSON.parse(text));
  loaded.set(stem, found);
  return found;
}

/** The definition a {$ref} node points at, with its name: {name, definition}. */
export function resolve(document, node) {
  const name = node.$ref.replace('#/$defs/', '');
  return { name, definition: document.$defs[name] };
}

/** The top-level definition of a schema document: {name, definition}. */
export function root(stem) {
  const document = schema(stem);
  return { document, ...resolve(document, document) };
}

/** The default of every property of a definition that has one, as fresh values. */
export function defaults(definition) {
  const out = {};
  for (const [name, node] of Object.entries(definition.properties ?? {})) {
    if ('default' in node) out[name] = structuredClone(node.default);
  }
  return out;
}

/** The property names of a definition, in declaration order. */
export function fieldNames(stem, name = root(stem).name) {
  return Object.keys(schema(stem).$defs[name].properties);
}

/** Properties of a schema's top-level definition whose node (or an anyOf member) has keyword: value. */
export function fieldsMarked(stem, keyword, value) {
  const { definition } = root(stem);
  const marked = (node) => node[keyword] === value || (node.anyOf ?? []).some(marked);
  return Object.entries(definition.properties).filter(([, node]) => marked(node)).map(([name]) => name);
}

/** A decoded value of a schema's top-level definition without the fields at their default, as msgspec writes
 * a Struct declared with omit_defaults (the method card, the manifest). */
export function withoutDefaults(stem, value) {
  const { definition } = root(stem);
  return Object.fromEntries(Object.entries(value).filter(([name, item]) => {
    const node = definition.properties[name];
    return !(node && 'default' in node && JSON.stringify(node.default) === JSON.stringify(item));
  }));
}

// ---- compiled predicates ---------------------------------------------------------------------------

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/** value => boolean for a schema node of `document`. */
export function compile(document, node, cache = new Map()) {
  if ('$ref' in node) {
    if (cache.has(node.$ref)) return (value) => cache.get(node.$ref)(value);
    cache.set(node.$ref, () => false);
    const { definition } = resolve(document, node);
    const fields = Object.entries(definition.properties).map(([name, field]) => [name, compile(document, field, cache)]);
    const known = new Set(fields.map(([name]) => name));
    const required = definition.required ?? [];
    const closed = definition.additionalProperties === false;
    const check = (value) => {
      if (!isObject(value)) return false;
      for (const name of required) if (!Object.hasOwn(value, name)) return false;
      for (const key in value) if (closed && !known.has(key)) return false;
      for (const [name, fits] of fields) if (Object.hasOwn(value, name) && !fits(value[name])) return false;
      return true;
    };
    cache.set(node.$ref, check);
    return check;
  }
  if ('anyOf' in node) {
    const members = node.anyOf.map((member) => compile(document, member, cache));
    return (value) => members.some((fits) => fits(value));
  }
  if ('enum' in node) return (value) => node.enum.includes(value);
  const min = node.minimum ?? -Infinity;
  const max = node.maximum ?? Infinity;
  const above = node.exclusiveMinimum ?? -Infinity;
  const below = node.exclusiveMaximum ?? Infinity;
  switch (node.type) {
    case 'string': {
      const pattern = node.pattern === undefined ? null : new RegExp(node.pattern, 'u');
      const minLength = node.minLength ?? 0;
      return (value) => typeof value === 'string' && (minLength === 0 || [...value].length >= minLength)
        && (pattern === null || pattern.test(value));
    }
    case 'integer':
      return (value) => Number.isSafeInteger(value) && value >= min && value <= max && value > above && value < below;
    case 'number':
      return (value) => typeof value === 'number' && value >= min && value <= max && value > above && value < below;
    case 'boolean': return (value) => typeof value === 'boolean';
    case 'null': return (value) => value === null;
    case 'array': {
      const item = compile(document, node.items ?? {}, cache);
      return (value) => Array.isArray(value) && value.length >= (node.minItems ?? 0) && value.length <= (node.maxItems ?? Infinity)
        && value.every(item);
    }
    case 'object': {
      if (typeof node.additionalProperties !== 'object') return isObject;
      const item = compile(document, node.additionalProperties, cache);
      return (value) => isObject(value) && Object.values(value).every(item);
    }
    default: return () => true;
  }
}
