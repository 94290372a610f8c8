// What `mt-eval-guest DIR` remembers of the plugins whose files it checked (./method-module.js resolveMethod), so
// that a guest started again on the same, unchanged files — a host restarting it, one run after another — starts
// without checking them again. One small file per plugin directory, under $XDG_CACHE_HOME (else ~/.cache), in
// mt-eval/checked-plugins/, holds the text of method.json and method_card.json as they were checked, the real paths
// of the directory and of the entry file, and a stamp of this package's own files. It is used only while every one
// of these is unchanged; otherwise the files are checked as usual (and remembered again). A cache that cannot be
// read or written costs nothing but the check.
import {
  existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, statSync, writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const MANIFEST_FILE = 'method.json';
const CARD_FILE = 'method_card.json';
const PACKAGE = fileURLToPath(new URL('..', import.meta.url));
// The package's files that check a plugin: any change to them and what was remembered no longer counts.
const CHECKER_FILES = ['package.json', 'lib/manifest.js', 'lib/method-module.js', 'lib/json-text.js'];
const CHECKER_DIRECTORIES = ['lib/contract', 'lib/generated', 'lib/generated/schemas'];

// The home directory as os.homedir() finds it: $HOME when set (os.homedir() returns it then too), so that node:os
// loads only when it is not. Throws when there is none: nothing is remembered then.
function home() {
  const found = process.env.HOME || process.getBuiltinModule?.('node:os').homedir();
  if (!found) throw new Error('no home directory');
  return found;
}

function cacheDirectory() {
  const base = process.env.XDG_CACHE_HOME || join(home(), '.cache');
  return join(base, 'mt-eval', 'checked-plugins');
}

// FNV-1a of the plugin's path: a file name only (the record holds the path itself, so a collision is a miss).
function fileNameFor(path) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < path.length; i++) hash = Math.imul(hash ^ path.charCodeAt(i), 0x01000193) >>> 0;
  return `${hash.toString(16).padStart(8, '0')}.json`;
}

function checkerStamp() {
  const files = [...CHECKER_FILES];
  for (const directory of CHECKER_DIRECTORIES) {
    for (const name of readdirSync(join(PACKAGE, directory))) files.push(`${directory}/${name}`);
  }
  return files.sort().map((file) => {
    const stat = statSync(join(PACKAGE, file));
    return `${file}:${stat.size}:${stat.mtimeMs}`;
  }).join(',');
}

// A file's text; it stands for the file's bytes unless it holds U+FFFD, which stands for any bytes that are not UTF-8
// (such a file is not remembered: it is checked every time).
function text(file) {
  if (!statSync(file).isFile()) throw new Error(`${file}: not a file`); // (reading a FIFO would wait for a writer)
  const read = readFileSync(file, 'utf8');
  if (read.includes('\uFFFD')) throw new Error(`${file}: U+FFFD`);
  return read;
}

// The plugin's files as the checks read them — their text and the directory's real path; null when they cannot be
// read so.
export function pluginFiles(path) {
  try {
    const given = resolve(path);
    const directory = basename(given) === MANIFEST_FILE ? dirname(given) : given;
    const cardFile = join(directory, CARD_FILE);
    // (a card that is there but no file to read — a directory, a FIFO, a link leading nowhere — throws: null)
    const card = lstatSync(cardFile, { throwIfNoEntry: false }) ? text(cardFile) : null;
    const manifest = text(join(directory, MANIFEST_FILE));
    return { given, directory, real: realpathSync.native(directory), manifest, card };
  } catch {
    return null;
  }
}

// The real path of the entry file the manifest names (the target's `file`), or null when it is not a file. (Real paths
// here come from one system call each; one that the checks would spell otherwise is only a miss.)
function entryFile(files) {
  const entry = JSON.parse(files.manifest).node_entry;
  const file = realpathSync.native(join(files.directory, entry));
  return statSync(file).isFile() ? file : null;
}

// At most KEPT records (plugin directories come and go, temporary ones especially): the least recently written go.
const KEPT = 256;
function prune(directory) {
  const names = readdirSync(directory);
  if (names.length <= KEPT) return;
  const records = names.map((name) => {
    const file = join(directory, name);
    try {
      return { file, written: statSync(file).mtimeMs };
    } catch {
      return null; // removed meanwhile
    }
  }).filter(Boolean).sort((a, b) => a.written - b.written);
  for (const { file } of records.slice(0, records.length - KEPT)) rmSync(file, { force: true });
}

/** What resolveMethod returned for plugin `path` when its files, as they are now, were last checked; else null. */
export function recall(path) {
  try {
    const files = pluginFiles(path);
    if (files === null) return null;
    const record = JSON.parse(readFileSync(join(cacheDirectory(), fileNameFor(files.given)), 'utf8'));
    if (record.checker !== checkerStamp() || JSON.stringify(record.files) !== JSON.stringify(files)) return null;
    return entryFile(files) === record.target.file ? record.target : null;
  } catch {
    return null; // nothing remembered, or the files changed meanwhile: they are checked
  }
}

/**
 * Remember that the plugin whose files were `files` (pluginFiles, read before they were checked) passed the checks
 * with `target` (what resolveMethod returned). Never throws.
 */
export function remember(files, target) {
  try {
    if (files === null || entryFile(files) !== target.file) return;
    const directory = cacheDirectory();
    mkdirSync(directory, { recursive: true });
    const file = join(directory, fileNameFor(files.given));
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, JSON.stringify({ checker: checkerStamp(), files, target }));
    renameSync(partial, file); // whole or not at all, whoever reads it meanwhile
    prune(directory);
  } catch {
    // a read-only or full cache: the next start checks the files again
  }
}
