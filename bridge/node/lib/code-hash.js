// A plugin's code hash, as mt_eval/code_hash.py computes it: SHA-256 over "relative/path\0content\0" of each
// file, sorted by path components (code points). It covers the method's code and data and leaves out version
// control, caches and tool environments, editor settings, run outputs (runs/ at the plugin's top) and the
// leftovers of editors, patches and the OS (the lists below, the same as Python's); a symlinked folder is not
// entered, a symlinked file counts with its target's content.
// bridge/vectors/champollion/hashing.json holds both runtimes to the same hashes.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const SKIPPED = new Set(['.git', '.hg', '.svn', '.bzr', '__pycache__', 'node_modules', '.venv', '.pytest_cache',
  '.mypy_cache', '.ruff_cache', '.tox', '.nox', '.idea', '.vscode']);
const SKIPPED_AT_TOP = new Set(['runs']);
const SKIPPED_FILES = new Set(['.DS_Store', 'Thumbs.db', 'desktop.ini']);
const SKIPPED_SUFFIXES = ['~', '.swp', '.swo', '.swx', '.bak', '.orig', '.pyc', '.pyo'];

/** Whether a file of this name is an editor's, a patch's or the OS's leftover, not the method's. */
export function skippedFile(name) {
  return SKIPPED_FILES.has(name) || SKIPPED_SUFFIXES.some((suffix) => name.endsWith(suffix)) || name.startsWith('.#')
    || (name.length > 1 && name.startsWith('#') && name.endsWith('#'));
}

const byCodePoints = (a, b) => {
  const [x, y] = [[...a], [...b]];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i].codePointAt(0) - y[i].codePointAt(0);
  }
  return x.length - y.length;
};

const byParts = (a, b) => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const order = byCodePoints(a[i], b[i]);
    if (order) return order;
  }
  return a.length - b.length;
};

function isFile(path) {
  try {
    return statSync(path).isFile();
  } catch {
    return false; // a broken link
  }
}

/** The SHA-256 (hex) of a plugin directory's files (see above). */
export function codeSha256(directory) {
  const root = realpathSync(directory);
  const files = [];
  const walk = (folder, parts) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (SKIPPED.has(entry.name)) continue; // a folder, or a file such as a worktree's .git
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!(parts.length === 0 && SKIPPED_AT_TOP.has(entry.name))) walk(path, [...parts, entry.name]);
      } else if (skippedFile(entry.name)) {
        continue;
      } else if (entry.isFile() || (entry.isSymbolicLink() && isFile(path))) {
        files.push([...parts, entry.name]);
      }
    }
  };
  walk(root, []);
  const digest = createHash('sha256');
  for (const parts of files.sort(byParts)) {
    digest.update(`${parts.join('/')}\0`);
    digest.update(readFileSync(join(root, ...parts)));
    digest.update('\0');
  }
  return digest.digest('hex');
}
