// The method card, merged as mt_eval/card.py merges it: the fields method.json supplies (those the Manifest
// and MethodCard schemas share), then method_card.json, then what the method reports at run time, later
// sources winning field by field. Fields marked x-set-by "method.json" in the card schema (method_id,
// class, dependency_class) may be repeated by a card source but not contradicted.
import { decodeValue } from './decode.js';
import { derive } from './derivation.js';
import { makeProblem } from './problems.js';
import { fieldNames, fieldsMarked, withoutDefaults } from './schema.js';
import { SET_BY } from './words.js';

export const CARD_FILE = 'method_card.json';
export const MANIFEST_FILE = 'method.json';

let shared = null;
const manifestCardFields = () => {
  shared ??= fieldNames('method-card').filter((name) => fieldNames('method').includes(name));
  return shared;
};
export const identityFields = () => fieldsMarked('method-card', SET_BY, MANIFEST_FILE);

const present = (value) => value !== null && value !== undefined;

/** The card fields method.json supplies, for a decoded manifest and its resolved method id. */
export function cardFromManifest(manifest, methodId) {
  const fields = {};
  for (const name of manifestCardFields()) fields[name] = manifest[name];
  fields.method_id = methodId;
  fields.supported_pairs = [...(manifest.supported_pairs ?? [])];
  fields.dependency_class = derive(manifest.dependencies).dependencyClass ?? manifest.dependency_class;
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => present(value)));
}

// Python's name for the type of a value a card source returned instead of an object.
const pythonType = (value) => (Array.isArray(value) ? 'list' : typeof value === 'string' ? 'str'
  : typeof value === 'boolean' ? 'bool' : Number.isInteger(value) ? 'int' : typeof value === 'number' ? 'float' : 'NoneType');

/**
 * Merge card sources ([name, parsed object] pairs, in precedence order) over the manifest's fields:
 * {card (null when there are errors), problems}. Each problem names the source of the offending field.
 */
export function mergeCard(manifest, methodId, sources, { manifestFile = MANIFEST_FILE } = {}) {
  const base = cardFromManifest(manifest, methodId);
  const merged = { ...base };
  const origin = new Map(Object.keys(base).map((key) => [key, manifestFile]));
  const problems = [];
  const identity = identityFields();
  for (const [source, data] of sources) {
    if (data === null || data === undefined) continue;
    if (typeof data !== 'object' || Array.isArray(data)) {
      problems.push(makeProblem(source, '$', `a method card must be an object, got ${pythonType(data)}`,
        { hint: 'return or write a JSON object', code: 'type' }));
      continue;
    }
    for (const key of identity) {
      if (Object.hasOwn(data, key) && Object.hasOwn(base, key) && JSON.stringify(data[key]) !== JSON.stringify(base[key])) {
        problems.push(makeProblem(source, `$.${key}`, `says ${JSON.stringify(data[key])} but ${manifestFile} says ${JSON.stringify(base[key])}`,
          { hint: `remove "${key}" here or make it match; ${manifestFile} is where it is set`, code: 'card-conflict' }));
      }
    }
    for (const [key, value] of Object.entries(data)) {
      if (identity.includes(key) && Object.hasOwn(base, key)) continue;
      merged[key] = value;
      origin.set(key, source);
    }
  }
  const { value, problems: found } = decodeValue(merged, 'method-card', { file: manifestFile });
  for (const problem of found) {
    const top = problem.path.replace(/^\$\./, '').split('.')[0].split('[')[0];
    problems.push({ ...problem, file: origin.get(top) ?? manifestFile });
  }
  const errors = problems.some((p) => p.severity === 'error');
  return { card: errors ? null : withoutDefaults('method-card', value), problems };
}
