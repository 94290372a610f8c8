// Why a method module did not load, in one message with the file:line and the fix.
//
// Node reports a syntax error in an ES module without its place (the place is only printed when the
// error reaches the top level), so for one the import is repeated in a child `node`, whose fatal error
// names file:line and shows the line: nothing runs there, since a module graph with a syntax error is
// never evaluated. A CommonJS file in a `"type": "module"` package, or an ES module in a
// `"type": "commonjs"` one, is a file Node cannot load as it is: the fix says which rename makes it load.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { describe } from './protocol.js';

/** The method's module could not be loaded; the message says where and how to fix it. */
export class MethodLoadError extends Error {
  constructor(message, { cause } = {}) {
    super(message, cause ? { cause } : undefined);
    this.name = 'MethodLoadError';
  }
}

/**
 * The method's methodCard() threw, or returned what is not a card: `problem` says which (as the Python SDK words a
 * method_card() that raises), `fix` how to mend it; the message names the module file first.
 */
export class MethodCardError extends Error {
  constructor(file, problem, fix) {
    super(`${file} methodCard(): ${problem}\n  fix: ${fix}`);
    this.name = 'MethodCardError';
    Object.assign(this, { file, problem, fix });
  }
}

/** A thrown value in words, with the place in the method's code it was thrown from: "Error: boom (translate.js:4)". */
export function thrownAt(error, file) {
  const message = (typeof error?.message === 'string' ? error.message : describe(error)).split('\n')[0];
  const where = firstFrame(error, dirname(file))?.where;
  const said = error instanceof Error ? `${error.name}: ${message}` : `thrown: ${describe(error)}`;
  return where ? `${said} (${where})` : said;
}

/** The package.json that decides how Node reads `file`, and its "type" ("commonjs" when absent). */
export function packageScope(file) {
  for (let directory = dirname(file); ; directory = dirname(directory)) {
    const manifest = join(directory, 'package.json');
    if (existsSync(manifest)) {
      try {
        const type = JSON.parse(readFileSync(manifest, 'utf8')).type;
        return { manifest, type: type === 'module' ? 'module' : 'commonjs' };
      } catch {
        return { manifest, type: 'commonjs' };
      }
    }
    if (dirname(directory) === directory) return { manifest: null, type: 'commonjs' };
  }
}

const shown = (path, base) => {
  const local = path.startsWith('file:') ? fileURLToPath(path) : path;
  const near = relative(base, local);
  return near && !near.startsWith('..') ? near : local;
};

// "file:line" and the offending line with its caret, from the top of a stack or a fatal error's output.
function arrow(text, base) {
  const lines = text.split('\n');
  const at = lines.findIndex((line) => /^(file:\/\/|\/|[A-Za-z]:\\).*:\d+$/.test(line));
  if (at === -1) return null;
  const [, where, line] = lines[at].match(/^(.*):(\d+)$/);
  const code = lines[at + 1] ?? '';
  const caret = /^\s*\^+\s*$/.test(lines[at + 2] ?? '') ? lines[at + 2] : '';
  return { where: `${shown(where, base)}:${line}`, excerpt: caret ? `\n    ${code}\n    ${caret}` : '' };
}

// This kit's own modules: a frame in one of them (the process.exit() that throws MethodExitError) is not the place.
const KIT = fileURLToPath(new URL('.', import.meta.url));

// The file and line of the first stack frame in a file outside this kit ({file, where: "translate.js:3"}), or null.
function firstFrame(error, base) {
  const frames = String(error?.stack ?? '').matchAll(/\((file:\/\/[^)]+?|\/[^)]+?):(\d+):\d+\)|at (file:\/\/\S+?|\/\S+?):(\d+):\d+/g);
  for (const found of frames) {
    const path = found[1] ?? found[3];
    const file = path.startsWith('file:') ? fileURLToPath(path) : path;
    if (!file.startsWith(KIT)) return { file, where: `${shown(path, base)}:${found[2] ?? found[4]}` };
  }
  return null;
}

// Whether a SyntaxError was thrown by the module's running code (JSON.parse, new RegExp): its first stack frame
// is outside Node's module loader and one is in a file; a syntax error in a module's text is the loader's.
function thrownByCode(error, base) {
  const frame = String(error?.stack ?? '').match(/^\s+at .*$/m)?.[0];
  return frame !== undefined && !frame.includes('node:internal') && firstFrame(error, base) !== null;
}

function syntaxPlace(error, file, base) {
  const inStack = arrow(String(error.stack ?? ''), base);
  if (inStack) return inStack;
  const child = spawnSync(process.execPath, ['--no-warnings', '-e', 'import(process.argv[1]).catch((e) => { throw e; })',
    pathToFileURL(file).href], { encoding: 'utf8', timeout: 10_000 });
  return arrow(child.stderr ?? '', base);
}

/** A MethodLoadError for `error`, thrown while importing the method module `file`. */
export function explainLoadError(error, file) {
  const base = dirname(file);
  const name = basename(file);
  const scope = packageScope(file);
  const message = (typeof error?.message === 'string' ? error.message : describe(error)).split('\n')[0];
  if (error instanceof SyntaxError && !thrownByCode(error, base)) {
    const place = syntaxPlace(error, file, base);
    const where = place ? `${place.where}: ` : '';
    let text = `${where}SyntaxError: ${message}${place?.excerpt ?? ''}`;
    const readAs = extname(name) === '.cjs' ? 'commonjs' : extname(name) === '.mjs' ? 'module' : scope.type;
    if (/Cannot use import statement|Unexpected token 'export'/.test(message) && readAs === 'commonjs') {
      const rename = `rename it to ${basename(name, extname(name))}.mjs (and node_entry in method.json)`;
      text += extname(name) === '.cjs' // (whatever its package.json says)
        ? `\n  fix: ${name} is an ES module, but Node reads a .cjs file as CommonJS: ${rename}`
        : `\n  fix: ${name} is an ES module, but Node reads it as CommonJS`
          + `${scope.manifest ? ` (${scope.manifest} has no "type": "module")` : ''}: ${rename}, or add "type": "module" `
          + 'to the package.json';
    } else {
      text += '\n  fix: correct the syntax there (`node --check FILE` checks a file)';
    }
    return new MethodLoadError(text, { cause: error });
  }
  if (error instanceof ReferenceError && /(require|module|exports) is not defined in ES module scope/.test(message)) {
    const frame = firstFrame(error, base);
    const culprit = frame?.file ?? file; // the entry, or a module it loads
    const own = packageScope(culprit);
    const entry = culprit === file ? ' (and node_entry in method.json)' : '';
    const loadedAs = extname(culprit) === '.mjs' ? 'a .mjs file as an ES module' // (whatever its package.json says)
      : `it as an ES module because ${own.manifest ?? 'its package.json'} has "type": "module"`;
    return new MethodLoadError(`${frame ? `${frame.where}: ` : ''}${basename(culprit)} is CommonJS (it uses require or `
      + `module.exports), but Node loads ${loadedAs}\n  fix: rename it to ${basename(culprit, extname(culprit))}.cjs`
      + `${entry}, or write it as an ES module (import ... from, export ...)`, { cause: error });
  }
  if (error?.code === 'ERR_UNSUPPORTED_DIR_IMPORT') { // (`import './lib'`: an ES module names the file)
    const directory = message.match(/Directory import '([^']+)'/)?.[1];
    const importer = message.match(/imported from (.+)$/)?.[1];
    const near = directory && importer === file ? shown(directory, base) : null; // (as the entry would write it)
    const example = near && !near.startsWith('/') ? ` (e.g. './${near}/index.js')` : '';
    return new MethodLoadError(`${message}\n  fix: import the module file, not its directory: an ES module does not `
      + `resolve a directory to its index.js${example}`, { cause: error });
  }
  if (error?.code === 'ERR_IMPORT_ATTRIBUTE_MISSING' || error?.code === 'ERR_IMPORT_ASSERTION_TYPE_MISSING') {
    const json = message.match(/Module "([^"]+)"/)?.[1];
    const near = json ? shown(json, base) : 'data.json';
    return new MethodLoadError(`${message}\n  fix: import a JSON file with its type — import data from `
      + `'./${near.startsWith('/') ? basename(near) : near}' with { type: 'json' } — or read it with readFileSync and JSON.parse`,
    { cause: error });
  }
  if (error?.code === 'ERR_UNKNOWN_FILE_EXTENSION') {
    const culprit = message.match(/ for (.+)$/)?.[1] ?? file;
    const extension = extname(culprit);
    const typescript = ['.ts', '.mts', '.cts'].includes(extension);
    const advice = typescript ? 'compile it to JavaScript (tsc) and name the .js file'
      : culprit !== file ? 'import JavaScript modules (.js, .mjs or .cjs), or read other files with readFileSync'
        : extension === '.py' ? 'a Python method is named by entry_point in method.json and served by `mt-eval serve`'
          : 'name a JavaScript module (.js, .mjs or .cjs)';
    const what = culprit === file ? `${basename(file)} is not a JavaScript module Node can load (node_entry, or --module)`
      : `${basename(culprit)} is not a module Node can load (imported by the method)`;
    return new MethodLoadError(`${message}\n  fix: ${what}: ${advice}`, { cause: error });
  }
  if (error?.code === 'ERR_MODULE_NOT_FOUND' || error?.code === 'MODULE_NOT_FOUND') {
    return new MethodLoadError(`${message}\n  fix: install the package the plugin needs, or correct the import path`,
      { cause: error });
  }
  const where = firstFrame(error, base)?.where;
  const type = error instanceof Error ? error.name : 'thrown';
  const fix = type === 'MethodExitError' ? `remove the process.exit() that ${name} calls while it is being loaded: throw an `
    + 'Error there if it cannot load' : `${name} threw while it was being loaded; fix the code that runs at load time`;
  return new MethodLoadError(`${where ? `${where}: ` : ''}${type}: ${message}\n  fix: ${fix}`, { cause: error });
}
