// A method plugin's files, read and checked as mt_eval/loader.py's read_plugin and mt_eval/validate.py check
// them without running any code: method.json against the generated schema and its rules, the Node entry
// file, and the method card, merged as mt_eval/card.py merges it — the fields method.json supplies (those
// the Manifest and MethodCard schemas share), then method_card.json, then what the method reports when it
// runs, later sources winning field by field; fields marked x-set-by "method.json" in the card schema
// (method_id, class, dependency_class) may be repeated by a card source but not contradicted, nor given when
// method.json leaves them unset. The same plugin gets the same problems from both runtimes
// (bridge/vectors/contract/plugins.json).
import { existsSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

import { isDirectory, isFile, stats } from '../champollion/files.js';
import { parseJsonBytes, toPlain } from '../json-text.js';
import { decodeValue } from './decode.js';
import { derive } from './rules.js';
import { SET_BY, kebabCase, makeProblem, notACard } from './words.js';
import { defaults, fieldNames, fieldsMarked, schema, withoutDefaults } from './schema.js';

// ---- the method card -------------------------------------------------------------------------------

export const CARD_FILE = 'method_card.json';
export const MANIFEST_FILE = 'method.json';

let shared = null;
const manifestCardFields = () => {
  shared ??= fieldNames('method-card').filter((name) => fieldNames('method').includes(name));
  return shared;
};
export const identityFields = () => fieldsMarked('method-card', SET_BY, MANIFEST_FILE);

const present = (value) => value !== null && value !== undefined;

// What to do in method.json for a field a card gives but method.json leaves unset (mt_eval/method_card.py: UNSET_HINTS).
const UNSET_HINTS = { dependency_class: ': list the dependencies there, or write "dependencies": [] if there are none '
  + '(class S), and the class is derived from them' };

/** The card fields method.json supplies, for a decoded manifest and its resolved method id. */
export function cardFromManifest(manifest, methodId) {
  const fields = {};
  for (const name of manifestCardFields()) fields[name] = manifest[name];
  fields.method_id = methodId;
  fields.supported_pairs = [...(manifest.supported_pairs ?? [])];
  fields.dependency_class = derive(manifest.dependencies).dependencyClass ?? manifest.dependency_class;
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => present(value)));
}

/** The top-level key a problem's JSON path starts with: $.a.b and $.a[0]: a; $["open-source"]: open-source. */
function topKey(path) {
  const quoted = /^\$\[("(?:[^"\\]|\\.)*")\]/.exec(path);
  if (quoted) return JSON.parse(quoted[1]);
  return path.replace(/^\$\./, '').split('.')[0].split('[')[0];
}

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
    const notAnObject = notACard(source, data);
    if (notAnObject) {
      problems.push(notAnObject);
      continue;
    }
    for (const key of identity) {
      if (Object.hasOwn(data, key) && Object.hasOwn(base, key) && JSON.stringify(data[key]) !== JSON.stringify(base[key])) {
        problems.push(makeProblem(source, `$.${key}`, `says ${JSON.stringify(data[key])} but ${manifestFile} says ${JSON.stringify(base[key])}`,
          { hint: `remove "${key}" here or make it match; ${manifestFile} is where it is set`, code: 'card-conflict' }));
      } else if (present(data[key]) && !Object.hasOwn(base, key)) { // (only the dependency class can be left unset)
        problems.push(makeProblem(source, `$.${key}`, `says ${JSON.stringify(data[key])} but ${manifestFile} sets no "${key}"`,
          { hint: `remove "${key}" here; ${manifestFile} is where it is set${UNSET_HINTS[key] ?? ''}`, code: 'card-conflict' }));
      }
    }
    for (const [key, value] of Object.entries(data)) {
      if (identity.includes(key) && Object.hasOwn(base, key)) continue;
      merged[key] = value;
      origin.set(key, source);
    }
  }
  const { value, problems: found } = decodeValue(merged, 'method-card', { file: manifestFile });
  // a field no source gave (a required one, one a rule asks for) is for the card given last to add, if any
  const given = sources.filter(([, data]) => data !== null && typeof data === 'object' && !Array.isArray(data));
  const addsMissing = given.length ? given[given.length - 1][0] : manifestFile;
  for (const problem of found) {
    problems.push({ ...problem, file: origin.get(topKey(problem.path)) ?? addsMissing });
  }
  const errors = problems.some((p) => p.severity === 'error');
  return { card: errors ? null : withoutDefaults('method-card', value), problems };
}

// ---- a plugin's files --------------------------------------------------------------------------------

/** The plugin directory for path (a directory, or its method.json). */
export function pluginDirectory(path) {
  return basename(path) === MANIFEST_FILE && isFile(path) ? dirname(path) : path;
}

/**
 * A problem when path (a plugin's method.json or method_card.json) is there but is no file to read: a directory, a
 * FIFO, a link that loops or leads nowhere (as Python's loader.not_a_file words it); else null.
 */
function notAFile(path) {
  if (isFile(path) || stats(path, false) === null) return null;
  const target = stats(path);
  const message = target === null ? `a link to ${readlinkSync(path)}, which is not a file`
    : target.isDirectory() ? 'a directory, not a file' : 'not a regular file (a FIFO, socket or device)';
  const hint = `${target === null ? 'point the link at a file, or ' : ''}put the plugin's ${basename(path)} (a JSON file) itself in its place`;
  return makeProblem(path, '$', message, { hint, code: 'io' });
}

function insideDirectory(directory, target) {
  const rel = relative(directory, target);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

function entryFileProblems(source) {
  const entry = source.manifest.node_entry;
  if (!entry) return []; // (none, or "": its own problems are the manifest's)
  const file = resolve(source.directory, entry);
  if (!isFile(file)) {
    return [makeProblem(source.manifestFile, '$.node_entry', `"${entry}" does not exist in the plugin directory`,
      { hint: 'create it, or correct the file name', code: 'missing-file' })];
  }
  if (!insideDirectory(realpathSync(source.directory), realpathSync(file))) {
    return [makeProblem(source.manifestFile, '$.node_entry', `"${entry}" resolves outside the plugin directory`,
      { hint: "keep the plugin's code inside its directory", code: 'entry-escapes' })];
  }
  return [];
}

/**
 * Read and check a plugin's files without running its code: {source, problems}. source (null when
 * method.json cannot be decoded) is {directory, manifestFile, cardFile, manifest (decoded, defaults filled
 * in), methodId, cardData, runtime ("python" | "node" | "command", as the Python loader chooses)}.
 */
export function readPlugin(path) {
  const directory = pluginDirectory(path);
  const manifestFile = join(directory, MANIFEST_FILE);
  if (!isDirectory(directory)) {
    const what = existsSync(directory) ? 'a file, not a directory' : 'no such directory';
    return { source: null, problems: [makeProblem(directory, '$', what,
      { hint: 'give the path of a method plugin directory (the folder holding method.json)', code: 'io' })] };
  }
  if (!isFile(manifestFile)) {
    const unreadable = notAFile(manifestFile);
    if (unreadable) return { source: null, problems: [unreadable] };
    return { source: null, problems: [makeProblem(manifestFile, '$', 'missing: this is not a method plugin',
      { hint: 'a plugin directory holds method.json; `mt-eval new` creates one', code: 'io' })] };
  }
  const [data, problems] = parseJsonBytes(readFileSync(manifestFile), manifestFile);
  let manifest = null;
  if (data !== null || !problems.length) { // (null with no problem: the file holds null, which is no manifest)
    const decoded = decodeValue(data, 'method', { file: manifestFile });
    problems.push(...decoded.problems);
    manifest = decoded.value;
  }
  const cardFile = join(directory, CARD_FILE);
  let cardData = null;
  if (isFile(cardFile)) {
    const [parsed, cardProblems] = parseJsonBytes(readFileSync(cardFile), cardFile);
    problems.push(...cardProblems);
    if (parsed instanceof Map) cardData = toPlain(parsed);
    else if (parsed !== null) problems.push(makeProblem(cardFile, '$', 'a method card must be a JSON object', { code: 'type' }));
  } else {
    const unreadable = notAFile(cardFile); // (there, but no file: not to be taken for no card)
    if (unreadable) problems.push(unreadable);
  }
  if (manifest === null) return { source: null, problems };
  const methodId = manifest.method_id ?? kebabCase(basename(realpathSync(directory)));
  const runtime = manifest.entry_point ? 'python' : manifest.node_entry ? 'node' : 'command';
  const source = { directory, manifestFile, cardFile, manifest, methodId, cardData, runtime };
  problems.push(...entryFileProblems(source));
  return { source, problems };
}

/** The files-only report `mt-eval validate --no-import` gives (PluginReport of bridge/schemas/validate-report.schema.json). */
export function validatePluginFiles(path) {
  const { source, problems } = readPlugin(path);
  const report = { directory: String(path), ...defaults(schema('validate-report').$defs.PluginReport), problems };
  if (source === null) return report;
  const { manifest } = source;
  Object.assign(report, { method_id: source.methodId, name: manifest.name, class: manifest.class, runtime: source.runtime,
    declared_class: manifest.dependency_class ?? null });
  if (!problems.some((p) => p.path.startsWith('$.dependencies') && p.severity === 'error')) {
    const derived = derive(manifest.dependencies);
    report.derived_class = derived.dependencyClass;
    report.contributions = derived.contributions.map((c) => ({ path: c.path, id: c.dependencyId, class: c.dependencyClass, reason: c.reason }));
  }
  const { problems: cardProblems } = mergeCard(manifest, source.methodId, [[source.cardFile, source.cardData]],
    { manifestFile: source.manifestFile });
  for (const problem of cardProblems) {
    if (!problems.some((p) => JSON.stringify(p) === JSON.stringify(problem))) problems.push(problem);
  }
  return report;
}
