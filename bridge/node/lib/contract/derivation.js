// Dependency classes (S < O < A1 < A2 < X), derived as mt_eval/dependency_classes.py derives them; the
// README's "Dependency classes" table states each rule and bridge/vectors/contract/dependency-matrix.json
// pins every access × licence × flag combination for both runtimes.
import { NONE, checkLicence } from './licences.js';

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
