// The JSON Schemas of bridge/schemas/, as `mt-eval schemas` copies them into lib/generated/contract.json.
// They are read once, on first use, and never changed.
import { readFileSync } from 'node:fs';

let bundle = null;

function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

/** stem ("method", "translation-result", "champollion-config", ...) → schema document. */
export function schemas() {
  bundle ??= deepFreeze(JSON.parse(readFileSync(new URL('../generated/contract.json', import.meta.url), 'utf8')).schemas);
  return bundle;
}

/** The schema document generated from one Struct; throws for an unknown stem. */
export function schema(stem) {
  const found = schemas()[stem];
  if (!found) throw new Error(`no schema "${stem}"; known: ${Object.keys(schemas()).join(', ')}`);
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
