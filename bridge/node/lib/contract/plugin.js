// A method plugin's files, read and checked as mt_eval/loader.py's read_plugin and mt_eval/validate.py check
// them without running any code: method.json against the generated schema and its rules, method_card.json
// merged over it, the Node entry file. The same plugin gets the same problems from both runtimes
// (bridge/vectors/contract/plugins.json).
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

import { parseJsonBytes, toPlain } from '../json-text.js';
import { CARD_FILE, MANIFEST_FILE, mergeCard } from './card.js';
import { decodeValue } from './decode.js';
import { derive } from './derivation.js';
import { makeProblem } from './problems.js';
import { defaults, schema } from './schema.js';
import { kebabCase } from './words.js';

const isFile = (path) => existsSync(path) && statSync(path).isFile();
const isDirectory = (path) => existsSync(path) && statSync(path).isDirectory();

/** The plugin directory for path (a directory, or its method.json). */
export function pluginDirectory(path) {
  return basename(path) === MANIFEST_FILE && isFile(path) ? dirname(path) : path;
}

function insideDirectory(directory, target) {
  const rel = relative(directory, target);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

function entryFileProblems(source) {
  const entry = source.manifest.node_entry;
  if (entry === null || entry === undefined) return [];
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
    return { source: null, problems: [makeProblem(directory, '$', 'no such directory',
      { hint: 'give the path of a method plugin directory (the folder holding method.json)', code: 'io' })] };
  }
  if (!isFile(manifestFile)) {
    return { source: null, problems: [makeProblem(manifestFile, '$', 'missing: this is not a method plugin',
      { hint: 'a plugin directory holds method.json; `mt-eval new` creates one', code: 'io' })] };
  }
  const [data, problems] = parseJsonBytes(readFileSync(manifestFile), manifestFile);
  let manifest = null;
  if (data !== null) {
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
