// A champollion project's files on disk, read as the Python side reads them (mt_eval.champollion.files).
// JSON files — locale files, the lock file, a plugin's method.json — are read by the shared reader
// (../json-text.js, Python's mt_eval.json_input): a syntax error names its line and column and the fix, an
// invalid byte its offset, in the same words on both sides. OS errors are worded as the C library's
// strerror, as Python words them.
import { lstatSync, readFileSync, statSync } from 'node:fs';

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
 * invalid UTF-8. A repeated key keeps its first place and its last value, as JSON.parse and Python do.
 */
export function parseJsonFile(bytes, path) {
  const [value, problems] = parseJsonBytes(bytes, path);
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
