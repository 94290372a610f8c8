// The cross-field rules a JSON Schema cannot express — the findings() of mt_eval/manifest.py (Manifest,
// Dependency) and mt_eval/card.py (MethodCard), and the dependency classes of mt_eval/dependency_classes.py
// (S < O < A1 < A2 < X; the README's table states each rule, and bridge/vectors/contract/dependency-matrix.json
// pins every access × licence × flag combination) — keyed by schema definition name. Each rule returns
// findings {at, message, hint, severity, code} located inside the object it checks. Other modules add
// theirs with registerRules (champollion's config rules live with the config). The shared vectors in
// bridge/vectors/contract/ hold both runtimes to the same findings, word for word.
import { NONE, PROPRIETARY, checkLicence } from './licences.js';
import { fieldsMarked } from './schema.js';

// ---- dependency classes ----------------------------------------------------------------------------

export const CLASS_ORDER = ['S', 'O', 'A1', 'A2', 'X'];
export const CLASS_MEANING = Object.freeze({
  S: 'self-contained', O: 'open external artifacts', A1: 'substitutable API', A2: 'specific external API', X: 'closed',
});

export const mostRestrictive = (classes) => classes.reduce((worst, c) => (CLASS_ORDER.indexOf(c) > CLASS_ORDER.indexOf(worst) ? c : worst), 'S');

/** The class one dependency (a decoded Dependency) contributes: {index, path, dependencyId, dependencyClass, reason}. */
export function contribution(index, dep) {
  let cls;
  let reason;
  if (dep.access === 'bundled') {
    const missing = ['redistributable', 'transferable'].filter((flag) => !dep[flag]);
    if (dep.license === NONE) [cls, reason] = ['X', 'bundled without a licence'];
    else if (!missing.length) [cls, reason] = ['S', `bundled, ${dep.license} lets it be redistributed and transferred with the method`];
    else [cls, reason] = ['X', `bundled, but not ${missing.join(' nor ')}: others cannot receive it with the method`];
  } else if (dep.access === 'mirrored') {
    if (!checkLicence(dep.license).isOpen) [cls, reason] = ['X', `mirrored, but ${dep.license} is not an open licence`];
    else if (!dep.redistributable) [cls, reason] = ['X', 'mirrored, but not redistributable: no one else can obtain the pinned copy'];
    else [cls, reason] = ['O', `mirrored, open licence ${dep.license}`];
  } else if (dep.access === 'gateway') {
    [cls, reason] = dep.substitutable ? ['A1', 'gateway, substitutable'] : ['A2', 'gateway, not substitutable'];
  } else {
    [cls, reason] = ['A2', 'external API'];
  }
  return { index, path: `$.dependencies[${index}]`, dependencyId: dep.id, dependencyClass: cls, reason };
}

/** {dependencyClass, contributions} of a dependency list; null (no list) stays undeclared. */
export function derive(dependencies) {
  if (dependencies === null || dependencies === undefined) return { dependencyClass: null, contributions: [] };
  const contributions = dependencies.map((dep, i) => contribution(i, dep));
  return { dependencyClass: mostRestrictive(contributions.map((c) => c.dependencyClass)), contributions };
}

// ---- rules -------------------------------------------------------------------------------------------

export const RULES = {};

/** Add the rules of one schema definition (name as in the schema's $defs). */
export function registerRules(name, rules) {
  RULES[name] = rules;
}

const finding = (at, message, hint, { severity = 'error', code = 'rule' } = {}) => ({ at, message, hint, severity, code });
const ENTRY_POINT = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$/;
const SHA256_PIN = /^sha256:[0-9a-f]{64}$/i; // (SHA256:HEX is the same pin)

function dependencyRules(dep) {
  const out = [];
  const licence = checkLicence(dep.license);
  if (!licence.ok) out.push(finding(['license'], licence.message ?? 'invalid licence', licence.hint, { code: 'licence' }));
  if (dep.access === 'mirrored' && !dep.pin) {
    out.push(finding(['pin'], 'a "mirrored" dependency needs "pin"',
      'add "pin": the exact version, commit or sha256:HEX of the copy you mirror', { code: 'missing-pin' }));
  }
  if (dep.pin && dep.pin.toLowerCase().startsWith('sha256:') && !SHA256_PIN.test(dep.pin)) {
    out.push(finding(['pin'], `"${dep.pin}" is not a SHA-256 pin`,
      'write "sha256:" and the 64 hex digits of the artifact\'s SHA-256', { code: 'pin-format' }));
  }
  if (dep.access === 'gateway' && (dep.substitutable ?? null) === null) {
    out.push(finding(['substitutable'], 'a "gateway" dependency needs "substitutable"',
      'add "substitutable": true if any equivalent endpoint can serve it, else false', { code: 'missing-substitutable' }));
  }
  if (dep.redistributable && (dep.license === NONE || dep.license === PROPRIETARY)) {
    out.push(finding(['redistributable'], `"redistributable": true contradicts licence "${dep.license}"`,
      'give the SPDX licence that allows redistribution, or set redistributable to false', { code: 'contradiction' }));
  } else if (dep.redistributable && licence.restriction && (dep.access === 'bundled' || dep.access === 'mirrored')) {
    out.push(finding(['redistributable'], `"redistributable": true contradicts licence "${dep.license}": a `
      + `${licence.restriction} licence does not let everyone redistribute it, which a "${dep.access}" dependency relies on`,
    'set redistributable to false (the dependency then contributes X), or use a licence that allows redistribution',
    { code: 'contradiction' }));
  }
  if (dep.transferable && dep.license === NONE) {
    out.push(finding(['transferable'], '"transferable": true contradicts licence "none"',
      'give the licence that allows handing it over, or set transferable to false', { code: 'contradiction' }));
  }
  if (dep.pin && dep.access !== 'mirrored') {
    out.push(finding(['pin'], `"pin" has no effect on a "${dep.access}" dependency`,
      'remove "pin", or set "access": "mirrored"', { severity: 'warning', code: 'unused' }));
  }
  if ((dep.substitutable ?? null) !== null && (dep.access === 'bundled' || dep.access === 'mirrored')) {
    out.push(finding(['substitutable'], `"substitutable" has no effect on a "${dep.access}" dependency`,
      'remove "substitutable"', { severity: 'warning', code: 'unused' }));
  }
  return out;
}

function entryPointRules(entryPoint) {
  const module = entryPoint.split(':')[0];
  if (module.includes('..') || module.includes('/') || module.includes('\\')) {
    return [finding(['entry_point'], `entry point "${entryPoint}" leaves the plugin directory`,
      'name a module inside the plugin directory, as "module:Class" or "package.module:Class"', { code: 'entry-escapes' })];
  }
  if (!ENTRY_POINT.test(entryPoint)) {
    return [finding(['entry_point'], `"${entryPoint}" is not of the form "module:Class"`,
      'write the Python module (dotted, without ".py") and class, e.g. "pipeline:MyMethod"', { code: 'entry-format' })];
  }
  return [];
}

function relativeFileRules(at, path, suffixes) {
  const parts = path.split(/[\\/]/);
  if (path.startsWith('/') || path.startsWith('\\') || /^[A-Za-z]:/.test(path) || parts.includes('..')) {
    return [finding(at, `"${path}" leaves the plugin directory`, 'give a path relative to the plugin directory', { code: 'entry-escapes' })];
  }
  if (!suffixes.some((suffix) => path.endsWith(suffix))) {
    return [finding(at, `"${path}" is not a JavaScript file`, `name a file ending in ${suffixes.join(', ')}`, { code: 'entry-format' })];
  }
  return [];
}

function dependencyListRules(manifest) {
  const list = manifest.dependencies;
  const fix = 'list the dependencies, or write "dependencies": [] if there are none (class S)';
  if (list === null || list === undefined) {
    if (manifest.dependency_class !== null && manifest.dependency_class !== undefined) {
      return [finding(['dependency_class'], `declares "${manifest.dependency_class}" but has no "dependencies" list to derive it from`,
        fix, { code: 'undeclared-dependencies' })];
    }
    return [finding([], 'dependency class undeclared: method.json has no "dependencies" list', fix,
      { severity: 'warning', code: 'undeclared-dependencies' })];
  }
  const out = [];
  const seen = new Map();
  list.forEach((dep, i) => {
    if (seen.has(dep.id)) {
      out.push(finding(['dependencies', i, 'id'], `dependency id ${JSON.stringify(dep.id)} is already used by $.dependencies[${seen.get(dep.id)}]`,
        'give each dependency its own id', { code: 'duplicate' }));
    } else {
      seen.set(dep.id, i);
    }
  });
  if (list.some((dep) => dependencyRules(dep).some((f) => f.severity === 'error'))) return out;
  const derived = derive(list);
  const declared = manifest.dependency_class ?? null;
  if (declared === null) {
    out.push(finding(['dependency_class'], `dependency class not declared; derived "${derived.dependencyClass}"`,
      `add "dependency_class": "${derived.dependencyClass}"`, { severity: 'warning', code: 'undeclared-class' }));
  } else if (declared !== derived.dependencyClass) {
    const offending = derived.contributions.filter((c) => CLASS_ORDER.indexOf(c.dependencyClass) > CLASS_ORDER.indexOf(declared));
    const shown = offending.length ? offending : derived.contributions;
    out.push(finding(['dependency_class'], `declared "${declared}" but the dependencies make it "${derived.dependencyClass}": `
      + (shown.map((c) => `${c.path} (${c.dependencyId}) contributes ${c.dependencyClass}: ${c.reason}`).join('; ')
        || '"dependencies": [] says the method needs nothing but its own files'),
    `set "dependency_class": "${derived.dependencyClass}", or change the dependencies listed`, { code: 'class-mismatch' }));
  }
  return out;
}

function manifestRules(manifest) {
  const out = [];
  if (!(manifest.entry_point || manifest.node_entry || manifest.command)) {
    out.push(finding([], 'no entry point: the method cannot run',
      'add "entry_point": "pipeline:MyMethod" (Python), "node_entry": "translate.js" (Node) or "command": [...] '
      + '(any program speaking the bridge protocol)', { code: 'no-entry' }));
  }
  if ((manifest.entry_point ?? null) !== null) out.push(...entryPointRules(manifest.entry_point));
  if ((manifest.node_entry ?? null) !== null) out.push(...relativeFileRules(['node_entry'], manifest.node_entry, ['.js', '.mjs', '.cjs']));
  const implementsList = manifest.implements ?? ['translate'];
  out.push(...duplicates(['implements'], implementsList, 'request'));
  if ((manifest.decide ?? null) !== null && !implementsList.includes('decide')) {
    out.push(finding(['decide'], '"decide" settings, but "implements" does not list "decide"',
      'add "decide" to "implements", or remove "decide"', { code: 'unused' }));
  }
  out.push(...duplicates(['supported_pairs'], manifest.supported_pairs ?? [], 'pair'));
  out.push(...dependencyListRules(manifest));
  return out;
}

/** A warning for each item listed more than once: `"x" is listed 2 times`, "list each WHAT once". */
function duplicates(at, items, what) {
  const counts = new Map();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return [...counts].filter(([, count]) => count > 1).map(([item, count]) => finding(at, `"${item}" is listed ${count} times`,
    `list each ${what} once`, { severity: 'warning', code: 'duplicate' }));
}

function decideSpecRules(spec) {
  return duplicates(['question_types'], spec.question_types ?? [], 'type');
}

function methodCardRules(card) {
  const out = [];
  if ((card.license ?? null) !== null) {
    const licence = checkLicence(card.license);
    if (!licence.ok) out.push(finding(['license'], licence.message ?? 'invalid licence', licence.hint, { code: 'licence' }));
  }
  for (const field of fieldsMarked('method-card', 'format', 'uri')) {
    const url = card[field] ?? null;
    if (url !== null && !url.startsWith('https://') && !url.startsWith('http://')) {
      out.push(finding([field], `"${url}" is not a web address`, 'give an http:// or https:// URL', { code: 'url' }));
    }
  }
  if (card.open_source && !card.open_source_url) {
    out.push(finding(['open_source_url'], 'open_source is true but no open_source_url is given', 'add the public address of the code',
      { severity: 'warning', code: 'missing' }));
  }
  return out;
}

registerRules('Dependency', dependencyRules);
registerRules('Manifest', manifestRules);
registerRules('DecideSpec', decideSpecRules);
registerRules('MethodCard', methodCardRules);
