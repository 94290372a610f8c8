// Locale files: where they are, their keys, and i18next plurals (as mt_eval.champollion.locales).
// Layouts: a directory per locale (locales/en/**/*.json → locales/es/…) or a file per locale
// (locales/en.json → locales/es.json). Keys are dotted paths of strings ("nav.home", "list.0"); a dotted path
// naming more than one string ({"a.b": …, "a": {"b": …}}) is a collision, and none of those strings is
// translated. A target has the source's shape and key order; numbers (as written), booleans and nulls are
// copied. Plural groups (i18next JSON v4: key_one, key_other, …;
// key_ordinal_* for ordinals; a group needs its _other) get the target language's CLDR categories,
// each from the same source category or else from _other; a source _zero is kept.
import { existsSync, lstatSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { FileProblem, isFile, strerror } from './files.js';
import { byCodeUnits } from './json.js';
import { PLURAL_ORDER, pluralCategories } from './languages.js';

const PLURAL_KEY = /^(.+)_(zero|one|two|few|many|other)$/s;

/** One string the target needs: its dotted key and the source text it is translated from. */
export class Slot {
  constructor(key, source) {
    this.key = key;
    this.source = source;
    this.collision = null; // why it is not translated: another path of the file has this dotted key
  }
}

/** The input locale's files and where each target goes. */
export function findLocaleFiles(localesDir, inputLocale) {
  const directory = join(localesDir, inputLocale);
  const single = join(localesDir, `${inputLocale}.json`);
  const isFolder = existsSync(directory) && statSync(directory).isDirectory();
  const isFile = existsSync(single) && statSync(single).isFile();
  const inFolder = isFolder ? sourceFiles(directory).sort(byCodeUnits) : [];
  if (inFolder.length && isFile) { // (one of them would be left out without a word)
    throw new Error(`both ${directory}/ and ${single} hold source strings, and only one layout is read: `
      + `move the keys of ${inputLocale}.json into a file in ${directory}/, or remove one of them`);
  }
  if (inFolder.length) return localeFiles(true, inFolder);
  if (isFile) return localeFiles(false, [`${inputLocale}.json`]); // (an empty folder beside it holds nothing)
  if (isFolder) {
    throw new Error(`no source locale files: ${directory}/ holds no .json file (hidden names are skipped): `
      + `put the ${inputLocale} strings in ${directory}/*.json, or in ${single}`);
  }
  throw new Error(`no source locale files: expected ${directory}/*.json or ${single}`);
}

/**
 * The *.json files under directory (hidden names aside), relative to it. A symlinked file is read, a symlinked
 * folder is not entered (as Python's Path.rglob). A folder that cannot be listed, or a .json name that leads
 * nowhere (a dangling or looping link), is a FileProblem: its strings would otherwise be left out without a
 * word, and its targets' lock entries dropped (not strict: it is left out).
 */
function sourceFiles(directory, strict = true) {
  const found = [];
  const walk = (folder, relative) => {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true, encoding: 'buffer' }); // (a name's bytes, to check them)
    } catch (error) {
      if (!error.code) throw error;
      if (!strict) return;
      throw new FileProblem(folder, `cannot read this folder of source strings: ${strerror(error)}`,
        'make it readable, or move it out of the locales directory');
    }
    for (const entry of entries) {
      const base = entry.name.toString('utf8'); // (an invalid byte reads as U+FFFD)
      if (base.startsWith('.')) continue;
      const name = relative ? `${relative}/${base}` : base;
      if (!Buffer.from(base, 'utf8').equals(entry.name) && (entry.isDirectory() || base.endsWith('.json'))) {
        if (!strict) continue;
        throw new FileProblem(join(folder, base), 'its name is not valid UTF-8',
          'rename it in UTF-8 (its target files and lock entries are named after it)');
      }
      if (entry.isDirectory()) walk(join(folder, base), name);
      else if (base.endsWith('.json') && isSourceFile(join(folder, base), strict)) found.push(name);
    }
  };
  walk(directory, '');
  return found;
}

/**
 * Whether a .json entry is a file to read (not a folder, or a link to one); FileProblem when that cannot be told
 * (not strict: false).
 */
function isSourceFile(path, strict = true) {
  try {
    return statSync(path).isFile();
  } catch (error) {
    if (!error.code) throw error;
    if (!strict) return false;
    if (!lstatSync(path).isSymbolicLink()) throw new FileProblem(path, `cannot read it: ${strerror(error)}`, 'make it readable');
    const target = readlinkSync(path);
    throw new FileProblem(path, error.code === 'ENOENT' ? `a symlink to ${target}, which does not exist`
      : `a symlink to ${target}, which cannot be followed: ${strerror(error)}`, 'fix the link, or remove it');
  }
}

function localeFiles(directoryLayout, sources) {
  return {
    directoryLayout,
    sources,
    sourcePath: (localesDir, inputLocale, name) => (directoryLayout ? join(localesDir, inputLocale, name) : join(localesDir, name)),
    /** The target file relative to the locales directory (also its name in the lock file). */
    targetName: (locale, name) => (directoryLayout ? `${locale}/${name}` : `${locale}.json`),
    /**
     * The *.json files in the locale's folder (directory layout), named as targetName names them, whether or not
     * the lock file knows them; what cannot be read is left out.
     */
    targetsOnDisk(localesDir, locale) {
      const folder = join(localesDir, locale);
      if (!directoryLayout || !existsSync(folder) || !statSync(folder).isDirectory()) return [];
      return sourceFiles(folder, false).map((name) => this.targetName(locale, name));
    },
  };
}

// Forget lock entries of this locale's target files whose source file is gone — once the target file is gone too:
// while it stays, its entries say what its values translate, so a source file of that name coming back with other
// texts has them translated again (forgotten, the old translations were adopted as written by hand). Returns the
// target files whose source file is gone, orphaned (sorted), the lock knowing them or not: the report names them.
export function dropStaleFiles(lock, files, locale, plans, localesDir) {
  const current = new Set(plans.map((plan) => plan.name));
  const prefix = files.targetName(locale, '');
  const orphaned = new Set(files.targetsOnDisk(localesDir, locale).filter((name) => !current.has(name)));
  for (const name of [...lock.files.keys()]) {
    const mine = files.directoryLayout ? name.startsWith(prefix) : name === prefix;
    if (!mine || current.has(name)) continue;
    if (isFile(join(localesDir, name))) orphaned.add(name);
    else lock.files.delete(name);
  }
  return [...orphaned].sort(byCodeUnits);
}

/**
 * The target's shape: the source with each string a Slot and plural groups expanded for `locale`. Every
 * slot of a dotted key that names more than one string gets its collision: none of them is translated, as
 * no one of them is the key.
 */
export function layout(tree, targetLocale) {
  const shape = layoutNode(tree, [], targetLocale);
  const counts = new Map();
  for (const { key } of slots(shape)) counts.set(key, (counts.get(key) ?? 0) + 1);
  for (const slot of slots(shape)) {
    if (counts.get(slot.key) > 1) slot.collision = collision(slot.key, counts.get(slot.key));
  }
  return shape;
}

// Why the `count` strings whose dotted key is `key` are not translated.
function collision(key, count) {
  const none = count === 2 ? 'neither is translated; rename one of them' : 'none is translated; rename all but one';
  return `${JSON.stringify(key)} names ${count} strings in this file (a key with dots and nested keys), so ${none}`;
}

function layoutNode(node, path, locale) {
  if (typeof node === 'string') return new Slot(path.join('.'), node);
  if (Array.isArray(node)) return node.map((item, i) => layoutNode(item, [...path, String(i)], locale));
  if (!(node instanceof Map)) return node;
  const groups = pluralGroups(node);
  const out = new Map();
  const expanded = new Set();
  for (const [key, value] of node) {
    const group = groups.get(key);
    if (!group) {
      out.set(key, layoutNode(value, [...path, key], locale));
      continue;
    }
    const { base, forms } = group;
    if (expanded.has(base)) continue;
    expanded.add(base);
    const wanted = pluralCategories(locale, base.endsWith('_ordinal') ? 'ordinal' : 'cardinal');
    const categories = wanted === null ? [...forms.keys()]
      : PLURAL_ORDER.filter((c) => wanted.includes(c) || (c === 'zero' && forms.has('zero')));
    for (const category of categories) {
      const name = `${base}_${category}`;
      out.set(name, new Slot([...path, name].join('.'), forms.get(category) ?? forms.get('other')));
    }
  }
  return out;
}

// key → {base, forms: Map(category → text)} for the keys of an object in a plural group.
function pluralGroups(node) {
  const forms = new Map();
  for (const [key, value] of node) {
    const match = PLURAL_KEY.exec(key);
    if (match && typeof value === 'string') {
      if (!forms.has(match[1])) forms.set(match[1], new Map());
      forms.get(match[1]).set(match[2], value);
    }
  }
  const groups = new Map();
  for (const [base, found] of forms) {
    if (!found.has('other')) continue;
    for (const category of found.keys()) groups.set(`${base}_${category}`, { base, forms: found });
  }
  return groups;
}

/** The slots of a layout, in file order. */
export function slots(shape) {
  const out = [];
  const walk = (node) => {
    if (node instanceof Slot) out.push(node);
    else if (Array.isArray(node)) node.forEach(walk);
    else if (node instanceof Map) for (const item of node.values()) walk(item);
  };
  walk(shape);
  return out;
}

/**
 * The target file from values (Map: dotted key → text). A slot without a value (or whose key
 * collides) is left out of its object, and an object left empty goes too; in an array it keeps its
 * source text, so indexes do not shift.
 */
export function fill(shape, values) {
  const value = (item) => (item.collision ? undefined : values.get(item.key));
  if (shape instanceof Slot) return value(shape);
  if (Array.isArray(shape)) {
    return shape.map((item) => (item instanceof Slot ? value(item) ?? item.source : fill(item, values)));
  }
  if (!(shape instanceof Map)) return shape;
  const out = new Map();
  for (const [key, item] of shape) {
    if (item instanceof Slot) {
      const text = value(item);
      if (text !== undefined) out.set(key, text);
      continue;
    }
    const filled = fill(item, values);
    if (filled instanceof Map && filled.size === 0 && item.size > 0) continue;
    out.set(key, filled);
  }
  return out;
}

/** Dotted key → string for every string of a (target) file; the first of colliding keys wins. */
export function stringValues(tree) {
  const out = new Map();
  const walk = (node, path) => {
    if (typeof node === 'string') {
      const key = path.join('.');
      if (!out.has(key)) out.set(key, node);
    } else if (Array.isArray(node)) node.forEach((item, i) => walk(item, [...path, String(i)]));
    else if (node instanceof Map) for (const [key, item] of node) walk(item, [...path, key]);
  };
  walk(tree, []);
  return out;
}
