// A generated schema compiled into a plain predicate: does a value fit, constraints included? It answers
// yes or no quickly (results are checked by the thousand); when the answer is no, ./decode.js says why.
import { resolve } from './schema.js';

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
