// Reading a method plugin's method.json from Node. The Python SDK (`mt-eval validate`) is the full
// validator; this reader checks what a Node host relies on and fails with the same file + JSON path
// + fix style.
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

export class ManifestError extends Error {
  constructor(file, path, message, hint) {
    super(`${file}${path === '$' ? '' : ` ${path}`}: ${message}${hint ? `\n    fix: ${hint}` : ''}`);
    this.name = 'ManifestError';
    this.file = file;
    this.path = path;
    this.hint = hint;
  }
}

const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const JS_ENTRY = /\.(c|m)?js$/;

export function kebabCase(text) {
  const ascii = String(text).normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  const split = ascii.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
  return (split.match(/[a-z0-9]+/g) ?? []).join('-');
}

function lineAndColumn(text, position) {
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  return { line, column: position - before.lastIndexOf('\n') };
}

function parseJson(file, text) {
  try {
    return JSON.parse(text);
  } catch (error) {
    const found = /position (\d+)/.exec(error.message);
    const where = found ? lineAndColumn(text, Number(found[1])) : null;
    const detail = error.message.replace(/ in JSON at position \d+.*$/s, '');
    throw new ManifestError(file, '$',
      `invalid JSON${where ? ` at line ${where.line}, column ${where.column}` : ''}: ${detail}`,
      'fix the JSON syntax at that position');
  }
}

function optionalString(file, manifest, key) {
  const value = manifest[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value === '') {
    throw new ManifestError(file, `$.${key}`, `expected a non-empty string, got ${JSON.stringify(value)}`);
  }
  return value;
}

function insideDirectory(directory, target) {
  const rel = relative(directory, target);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

function resolveNodeEntry(file, directory, entry) {
  if (isAbsolute(entry) || entry.split(/[\\/]/).includes('..')) {
    throw new ManifestError(file, '$.node_entry', `"${entry}" leaves the plugin directory`,
      'give a path relative to the plugin directory');
  }
  if (!JS_ENTRY.test(entry)) {
    throw new ManifestError(file, '$.node_entry', `"${entry}" is not a JavaScript file`,
      'name a file ending in .js, .mjs or .cjs');
  }
  const target = join(directory, entry);
  if (!existsSync(target)) {
    throw new ManifestError(file, '$.node_entry', `"${entry}" does not exist in the plugin directory`,
      'create it, or correct the file name');
  }
  const real = realpathSync(target);
  if (!insideDirectory(realpathSync(directory), real)) {
    throw new ManifestError(file, '$.node_entry', `"${entry}" resolves outside the plugin directory`,
      "keep the plugin's code inside its directory");
  }
  return real;
}

export function readMethodManifest(pathToPlugin) {
  let directory = resolve(pathToPlugin);
  if (basename(directory) === 'method.json' && existsSync(directory) && statSync(directory).isFile()) {
    directory = dirname(directory);
  }
  const file = join(directory, 'method.json');
  if (!existsSync(directory) || !statSync(directory).isDirectory()) {
    throw new ManifestError(directory, '$', 'no such directory',
      'give the path of a method plugin directory (the folder holding method.json)');
  }
  if (!existsSync(file)) {
    throw new ManifestError(file, '$', 'missing: this is not a method plugin',
      'a plugin directory holds method.json; `mt-eval new` creates one');
  }
  const manifest = parseJson(file, readFileSync(file, 'utf8').replace(/^\uFEFF/, ''));
  if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) {
    throw new ManifestError(file, '$', `expected an object, got ${Array.isArray(manifest) ? 'an array' : JSON.stringify(manifest)}`);
  }
  const name = optionalString(file, manifest, 'name');
  if (name === null) {
    throw new ManifestError(file, '$.name', 'required field "name" is missing', 'add "name": a string');
  }
  const declaredId = optionalString(file, manifest, 'method_id');
  if (declaredId !== null && !KEBAB.test(declaredId)) {
    throw new ManifestError(file, '$.method_id', `"${declaredId}" is not kebab-case`,
      `use lowercase words joined by hyphens; for example "${kebabCase(declaredId)}"`);
  }
  const pythonEntry = optionalString(file, manifest, 'entry_point');
  const nodeEntryName = optionalString(file, manifest, 'node_entry');
  const command = manifest.command ?? null;
  if (command !== null && (!Array.isArray(command) || command.length === 0
      || !command.every((part) => typeof part === 'string' && part !== ''))) {
    throw new ManifestError(file, '$.command', 'expected a non-empty array of non-empty strings',
      'write the program and its arguments, e.g. ["./translator", "--serve"]');
  }
  if (!pythonEntry && !nodeEntryName && !command) {
    throw new ManifestError(file, '$', 'no entry point: the method cannot run',
      'add "node_entry": "translate.js" (Node), "entry_point": "pipeline:MyMethod" (Python) or "command": [...]');
  }
  const nodeEntry = nodeEntryName ? resolveNodeEntry(file, directory, nodeEntryName) : null;
  const implemented = manifest.implements ?? ['translate'];
  if (!Array.isArray(implemented) || implemented.length === 0
      || !implemented.every((request) => request === 'translate' || request === 'decide')) {
    throw new ManifestError(file, '$.implements', `expected a non-empty array of "translate" and "decide", got ${JSON.stringify(implemented)}`,
      'list what the method answers, e.g. ["translate"], ["decide"] or ["translate", "decide"]');
  }
  const pairs = manifest.supported_pairs ?? [];
  if (!Array.isArray(pairs) || !pairs.every((p) => typeof p === 'string')) {
    throw new ManifestError(file, '$.supported_pairs', 'expected an array of strings', 'e.g. ["eng>spa"]');
  }
  return {
    directory,
    file,
    manifest,
    name,
    methodId: declaredId ?? kebabCase(basename(directory.split(sep).join('/'))),
    runtime: nodeEntry ? 'node' : pythonEntry ? 'python' : 'command',
    nodeEntry,
    pythonEntry,
    command,
    supportedPairs: pairs,
    implements: [...new Set(implemented)],
  };
}
