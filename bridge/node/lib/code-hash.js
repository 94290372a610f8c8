// A plugin's code hash, as mt_eval/code_hash.py computes it: SHA-256 over "relative/path\0content\0" of each
// file, sorted by path components (code points), leaving out __pycache__, .git, node_modules and tool caches;
// a symlinked folder is not entered, a symlinked file counts with its target's content.
// bridge/vectors/champollion/hashing.json holds both runtimes to the same hashes.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const SKIPPED = new Set(['__pycache__', '.git', 'node_modules', '.pytest_cache', '.mypy_cache', '.ruff_cache']);

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
      if (SKIPPED.has(entry.name)) continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path, [...parts, entry.name]);
      else if (entry.isFile() || (entry.isSymbolicLink() && isFile(path))) files.push([...parts, entry.name]);
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
