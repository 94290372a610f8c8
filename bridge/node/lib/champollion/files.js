// A champollion project's files on disk, read and written as the Python side does
// (mt_eval.champollion.files). JSON files — locale files, the lock file, a plugin's method.json — are read by
// the shared reader (../json-text.js, Python's mt_eval.json_input): a syntax error names its line and column
// and the fix, an invalid byte its offset, in the same words on both sides. A target file is written
// atomically (a temporary file beside it, renamed over it) and keeps the mode of the file it replaces; a
// failed write leaves no temporary file. unwritable() says, before anything is translated for a file, why it
// could not be written; readOnly() refuses a target file its user made read-only, which a rename would replace.
// OS errors are worded as the C library's strerror, as Python words them.
import { accessSync, closeSync, constants, fchmodSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, readlinkSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';

import { parseJsonBytes } from '../json-text.js';

const STRERROR = {
  EACCES: 'Permission denied',
  EPERM: 'Operation not permitted',
  ENOENT: 'No such file or directory',
  ENOTDIR: 'Not a directory',
  EISDIR: 'Is a directory',
  EEXIST: 'File exists',
  ENOSPC: 'No space left on device',
  EROFS: 'Read-only file system',
  EDQUOT: 'Disk quota exceeded',
  ENAMETOOLONG: 'File name too long',
  EIO: 'Input/output error',
  ELOOP: 'Too many levels of symbolic links',
  EMFILE: 'Too many open files',
  EBUSY: 'Device or resource busy',
  EXDEV: 'Invalid cross-device link',
};

// The fix for a write that failed, by error code.
const WRITE_FIXES = {
  EACCES: 'make its directory writable',
  EPERM: 'make its directory writable',
  EROFS: 'put the locales on a writable file system',
  ENOSPC: 'free some disk space',
  EDQUOT: 'free some disk space',
};

/** An OS error in the words of Python's strerror ("Permission denied"). */
export const strerror = (error) => STRERROR[error.code] ?? error.message;

/** A file that cannot be read or written: the message names it, says what is wrong and, when known, the fix. */
export class FileProblem extends Error {
  constructor(path, what, fix = null) {
    super(`${path}: ${what}${fix ? `; ${fix}` : ''}`);
    this.name = 'FileProblem';
    this.path = path;
    this.what = what;
    this.fix = fix;
  }
}

export function readBytes(path) {
  try {
    return readFileSync(path);
  } catch (error) {
    if (!error.code) throw error;
    throw new FileProblem(path, `cannot read it: ${strerror(error)}`);
  }
}

/**
 * The JSON value of a file's bytes (objects as Maps, in written order); FileProblem for a syntax error or
 * invalid UTF-8. A repeated key keeps its first place and its last value, as JSON.parse and Python do;
 * repeated (an array) hears of its dotted path (nav.title; array items by index).
 * With exactNumbers, numbers are JsonNumbers, as written.
 */
export function parseJsonFile(bytes, path, { exactNumbers = false, repeated = null } = {}) {
  const [value, problems] = parseJsonBytes(bytes, path, { exactNumbers, repeated });
  const errors = problems.filter((problem) => problem.code !== 'duplicate-key');
  if (errors.length) throw new FileProblem(path, errors[0].message, errors[0].hint);
  return value;
}

export const readJson = (path) => parseJsonFile(readBytes(path), path);

/** A path's stats, following symlinks (follow false: of a link itself); null when there is nothing there. */
export function stats(path, follow = true) {
  try {
    return (follow ? statSync : lstatSync)(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null; // a file where a directory should be (ENOTDIR), and the like: nothing there to use
  }
}

export const isFile = (path) => stats(path)?.isFile() ?? false;
export const isDirectory = (path) => stats(path)?.isDirectory() ?? false;

/** Why the file at path could not be written (null: it can, as far as can be told beforehand). */
export function unwritable(path) {
  if (isDirectory(path)) return new FileProblem(path, 'cannot write it: a directory is in its place', 'move or remove that directory');
  let directory = dirname(path);
  while (stats(directory, false) === null && dirname(directory) !== directory) directory = dirname(directory);
  if (!isDirectory(directory)) {
    return new FileProblem(path, `cannot create its directory: ${directory} is not a directory`, `move or remove ${directory}`);
  }
  try {
    accessSync(directory, constants.W_OK | constants.X_OK);
  } catch (error) {
    if (error.code === 'EROFS') { // (no chmod helps)
      return new FileProblem(path, `cannot write it: ${directory} is on a file system mounted read-only`, WRITE_FIXES.EROFS);
    }
    return new FileProblem(path, `cannot write it: ${directory} is not writable`, `make it writable (chmod u+wx ${directory})`);
  }
  return null;
}

/**
 * A FileProblem when the file at path (following links, as writeAtomic does) is there and read-only — no write
 * permission at all (mode 0444; root, whom the permission does not stop, included), or none for this user — else
 * null. Whoever made it read-only does not want it replaced, though a rename over it would: it is left as it is.
 * orElse is the other fix, besides making it writable ("remove … from the pairs").
 */
export function readOnly(path, orElse = null) {
  const found = stats(path);
  if (!found?.isFile()) return null;
  const mode = (found.mode & 0o7777).toString(8).padStart(4, '0');
  let what = (found.mode & 0o222) === 0 ? `the file is read-only (mode ${mode})` : null;
  if (what === null) {
    try {
      accessSync(path, constants.W_OK);
      return null;
    } catch (error) {
      if (error.code !== 'EACCES' && error.code !== 'EPERM') return null; // (a read-only file system: said by the write)
      what = `the file is read-only to this user (mode ${mode})`;
    }
  }
  return new FileProblem(path, `cannot write it: ${what}, so it is left as it is`,
    `make it writable (chmod u+w ${path}) to have it written${orElse ? `, or ${orElse}` : ''}`);
}

/**
 * A FileProblem when the target file at target (in localesDir) is a source file — source, or anything under
 * sourceFolder (a link to that folder or into it) — else null: its values would be adopted as translations of
 * themselves, and a write would put translations in place of the source strings.
 */
export function sourceInPlace(target, localesDir, source, sourceFolder, inputLocale) {
  const real = realPath(target);
  const isSource = real === realPath(source) || sameFile(target, source);
  const inside = sourceFolder !== null && (real + sep).startsWith(realPath(sourceFolder) + sep);
  if (!isSource && !inside) return null;
  let link = null; // (the links in the locales directory, not those above it)
  for (let at = target; link === null && at !== localesDir && dirname(at) !== at; at = dirname(at)) {
    if (stats(at, false)?.isSymbolicLink()) link = at;
  }
  const where = isSource ? `the source file ${source}` : `in the source folder ${sourceFolder}`;
  const how = link !== null ? `${link} is a symbolic link to ${readlinkSync(link)}` : 'a hard link';
  return new FileProblem(target, `cannot write it: it is ${where} (${how}), so its translations would be written over `
    + `the ${inputLocale} strings`, `remove ${link ?? target}: the next run writes the translations in its place`);
}

function sameFile(a, b) {
  const [first, second] = [a, b].map((path) => {
    try {
      return statSync(path, { bigint: true });
    } catch {
      return null;
    }
  });
  return Boolean(first?.isFile() && second?.isFile() && first.dev === second.dev && first.ino === second.ino);
}

/** path with every symbolic link resolved, as far as it exists (as Python's os.path.realpath). */
function realPath(path) {
  let hops = 0;
  const walk = (start, rest) => {
    let at = start;
    for (const part of rest.split('/')) {
      if (part === '' || part === '.') continue;
      if (part === '..') {
        at = dirname(at);
        continue;
      }
      const next = join(at, part);
      let text = null;
      if (hops < 40 && stats(next, false)?.isSymbolicLink()) {
        try {
          text = readlinkSync(next);
        } catch { /* left as it is */ }
      }
      if (text === null) at = next;
      else {
        hops++;
        at = walk(text.startsWith('/') ? '/' : at, text);
      }
    }
    return at;
  };
  return walk('/', resolve(path));
}

/**
 * Write text to path through a temporary file renamed over it, keeping an existing file's mode; FileProblem
 * when it cannot be written (no temporary file is left behind).
 */
export function writeAtomic(shown, text) {
  const path = linkedFile(shown);
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  let created = false;
  try {
    mkdirSync(dirname(path), { recursive: true });
    const mode = isFile(path) ? statSync(path).mode & 0o7777 : null;
    const fd = openSync(temporary, 'w', mode ?? 0o666);
    created = true;
    try {
      if (mode !== null) fchmodSync(fd, mode); // exactly the old mode, whatever the umask
      writeFileSync(fd, text);
      fsyncSync(fd); // (on disk before it replaces the old file: a power cut leaves one of the two, never an empty one)
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    if (created) {
      try { unlinkSync(temporary); } catch { /* already gone */ }
    }
    if (!error.code) throw error;
    throw new FileProblem(shown, `cannot write it: ${strerror(error)}`, WRITE_FIXES[error.code] ?? null);
  }
}

/** The file a chain of symbolic links at path ends at (path itself when it is no link). */
function linkedFile(path) {
  for (let i = 0; i < 40; i++) { // (the kernel's own limit: a loop is left for the write to report)
    if (!stats(path, false)?.isSymbolicLink()) break;
    path = resolve(dirname(path), readlinkSync(path));
  }
  return path;
}
