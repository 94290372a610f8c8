// What a locale needs, per target file (as mt_eval.champollion.plan): keys up to date, keys due (new,
// source changed, now read as ICU or no longer read as ICU (lockfile.js), method changed, forced), values adopted
// (present but unknown to the lock: kept and recorded; not sent again when only their reading changes: they were
// written for the file's format; and values edited since the method wrote them, which a change of the method does not
// replace) and keys removed (no longer in the source). A target file that is a source file (a
// symbolic link to it, or into the source folder) is an error, neither read nor written. A file with keys due that
// could not be written (a directory in its place, a file where its directory should be, a directory that is not
// writable) or that its user made read-only is an error at once, and none of its keys is sent. A source file that
// holds an ICU plural, select or selectordinal message is written in ICU: its other texts are ICU messages too (icu).
import { join } from 'node:path';

import { FileProblem, isFile, parseJsonFile, readBytes, readOnly, sourceInPlace, unwritable } from './files.js';
import { layout, slots, stringValues } from './locales.js';
import { editedSince, hashText } from './lockfile.js';
import { holdsIcuMessage, readAsIcuForItsFile } from './placeholders.js';

/**
 * The key of a due text among the texts a locale sends (sync.js): its source, marked read as ICU or not (one text of
 * a file with ICU messages and of a file without is protected, and restored, apart); sourceOf gives the source back.
 */
const textKey = (source, icu) => `${icu ? 'icu' : 'text'}:${source}`;
export const sourceOf = (key) => key.slice(key.indexOf(':') + 1);

/**
 * A locale file's JSON object (a Map; read from bytes when given), its numbers as written (JsonNumbers, copied
 * to the target as they are); throws FileProblem saying what is wrong.
 */
export function readTree(path, bytes = readBytes(path), repeated = null) {
  const tree = parseJsonFile(bytes, path, { exactNumbers: true, repeated });
  if (!(tree instanceof Map)) throw new FileProblem(path, 'expected a JSON object of translation keys');
  return tree;
}

/**
 * The values of the target file that differ from those it was planned from: edited by a person while its keys were
 * translated, they are kept when it is written. Throws FileProblem when it can no longer be read.
 */
export function editedSinceRead(plan) {
  if (!isFile(plan.path)) return new Map();
  const bytes = readBytes(plan.path);
  if (plan.previousText !== null && bytes.equals(Buffer.from(plan.previousText, 'utf8'))) return new Map();
  return new Map([...stringValues(readTree(plan.path, bytes))].filter(([key, text]) => plan.previous.get(key) !== text));
}

/**
 * The plan of one target file. Its readOnly is the FileProblem of a read-only target (files.js, with leaveOut as the
 * other fix: how to stop translating it), which is not written even when only keys removed would change it.
 */
export function planFile(files, name, localesDir, inputLocale, locale, lock, fingerprint, { force = false, leaveOut = null } = {}) {
  const targetName = files.targetName(locale, name);
  const plan = {
    name: targetName,
    path: join(localesDir, targetName),
    shape: null,
    previous: new Map(),
    previousText: null,
    keep: new Map(), // lock entries of previous values kept
    due: [], // {slot, reason, text: its key (textKey), sourceHash: the SOURCE its lock entry records (lockfile.js)}
    icu: false, // the source file holds an ICU plural, select or selectordinal message (placeholders.js's protect)
    collisions: [],
    upToDate: 0,
    adopted: [],
    removed: [],
    repeated: [], // keys written twice in one object of the target: the last kept
    readOnly: null,
    error: null,
  };
  let source;
  const repeated = [];
  try {
    const sourcePath = files.sourcePath(localesDir, inputLocale, name);
    const sourceFolder = files.directoryLayout ? join(localesDir, inputLocale) : null;
    const aliased = sourceInPlace(plan.path, localesDir, sourcePath, sourceFolder, inputLocale);
    if (aliased) throw aliased; // (its values are not adopted, nor a translation written over a source file)
    source = readTree(sourcePath, readBytes(sourcePath), repeated);
    if (isFile(plan.path)) {
      const bytes = readBytes(plan.path);
      plan.previous = stringValues(readTree(plan.path, bytes, plan.repeated));
      plan.previousText = bytes.toString('utf8');
    }
  } catch (error) {
    if (!(error instanceof FileProblem)) throw error;
    plan.error = error.message;
    return plan;
  }
  plan.shape = layout(source, locale);
  const entries = lock.files.get(targetName) ?? new Map();
  const keys = new Set();
  const allSlots = slots(plan.shape);
  plan.icu = allSlots.some((slot) => holdsIcuMessage(slot.source));
  for (const slot of allSlots) {
    keys.add(slot.key);
    const writtenTwice = repeated.find((path) => slot.key === path || slot.key.startsWith(`${path}.`));
    if (writtenTwice !== undefined) {
      slot.collision = `${JSON.stringify(writtenTwice)} is written more than once in one object of the source `
        + 'file, so it is not translated; keep one of them (JSON readers keep the last)';
    }
    if (slot.collision) {
      plan.collisions.push(slot);
      continue;
    }
    const previous = plan.previous.get(slot.key);
    const entry = entries.get(slot.key);
    const readAsIcu = plan.icu && readAsIcuForItsFile(slot.source);
    const sourceHash = hashText(slot.source, { readAsIcu });
    let reason = null;
    if (previous === undefined) reason = 'new';
    else if (force) reason = 'forced';
    else if (entry === undefined) {
      plan.adopted.push(slot.key);
      plan.keep.set(slot.key, { source: sourceHash, method: null });
    } else if (entry.source !== sourceHash && entry.source !== hashText(slot.source, { readAsIcu: !readAsIcu })) {
      reason = 'source changed';
    } else if (editedSince(entry, previous)) { // a person fixed the method's translation: kept as adopted
      plan.adopted.push(slot.key);
      plan.keep.set(slot.key, { source: sourceHash, method: null });
    } else if (entry.source !== sourceHash && entry.method !== null) {
      reason = readAsIcu ? 'now read as ICU' : 'no longer read as ICU';
    } else if (entry.method !== null && entry.method !== fingerprint) reason = 'method changed';
    else {
      plan.upToDate++;
      plan.keep.set(slot.key, { source: sourceHash, method: entry.method }); // (adopted: kept however it is read)
    }
    if (reason !== null) plan.due.push({ slot, reason, text: textKey(slot.source, plan.icu), sourceHash });
    // Still true of the previous value, which is kept if the translation fails.
    if (previous !== undefined && entry !== undefined && !plan.keep.has(slot.key)) plan.keep.set(slot.key, entry);
  }
  plan.removed = [...plan.previous.keys()].filter((key) => !keys.has(key));
  plan.readOnly = readOnly(plan.path, leaveOut);
  const problem = plan.due.length ? unwritable(plan.path) ?? plan.readOnly : null;
  if (problem) {
    plan.error = problem.message; // said now, so that nothing is sent for a file that cannot be written
    plan.due = [];
  }
  return plan;
}
