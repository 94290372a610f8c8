// The method module a Node guest serves: where it is (a plugin's node_entry, or a bare file) and what it
// exports — translate(entries, config) and/or decide(rows, config), as its method.json "implements", and
// optionally name, methodCard() and close(); a default export holding them works too.
import { existsSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { explainLoadError } from './load-errors.js';
import { kebabCase, readMethodManifest } from './manifest.js';
import { isPlainObject } from './protocol.js';

/** The requests a method can implement, and what each is given. */
export const REQUESTS = Object.freeze({ translate: 'entries', decide: 'rows' });

/**
 * Where the method lives: {directory} for a plugin (its method.json names node_entry) or {module}
 * for a bare file. Throws ManifestError or Error with a fix when it cannot run here.
 */
export function resolveMethod({ directory, module }) {
  if (module) {
    const file = resolve(module);
    if (!existsSync(file)) throw new Error(`${file}: no such file`);
    const stem = basename(file, extname(file));
    return { file, name: stem, methodId: kebabCase(stem), implements: null };
  }
  const manifest = readMethodManifest(directory);
  if (!manifest.nodeEntry) {
    throw new Error(`${manifest.file}: no "node_entry": this plugin does not run on Node`
      + (manifest.pythonEntry ? '\n    fix: serve it with `mt-eval serve DIR`' : ''));
  }
  return { file: manifest.nodeEntry, name: manifest.name, methodId: manifest.methodId, implements: manifest.implements };
}

const exportsAny = (api) => Object.keys(REQUESTS).some((request) => typeof api?.[request] === 'function');

/**
 * Import the method's module (an ES module, or CommonJS where Node reads the file as CommonJS) and check it
 * exports what it implements (target.implements, from method.json; for a bare module, whichever of
 * translate and decide it exports). A module that does not load is a MethodLoadError with its place and fix.
 */
export async function loadMethod(target) {
  let loaded;
  try {
    loaded = await import(pathToFileURL(target.file).href);
  } catch (error) {
    throw explainLoadError(error, target.file);
  }
  const api = exportsAny(loaded) ? loaded : isPlainObject(loaded.default) && exportsAny(loaded.default) ? loaded.default : loaded;
  const implemented = target.implements ?? Object.keys(REQUESTS).filter((request) => typeof api[request] === 'function');
  const requests = implemented.length ? implemented : ['translate'];
  for (const request of requests) {
    if (typeof api[request] !== 'function') {
      const found = Object.keys(loaded).filter((key) => key !== 'default');
      throw new TypeError(`${target.file} does not export ${request}${found.length ? ` (it exports ${found.join(', ')})` : ''}`
        + `\n  fix: write \`export async function ${request}(${REQUESTS[request]}, config) { ... }\` in an ES module, `
        + `or \`module.exports = { ${request} }\` in a CommonJS one`);
    }
  }
  return {
    translate: requests.includes('translate') ? api.translate : null,
    decide: requests.includes('decide') ? api.decide : null,
    implements: requests,
    methodCard: typeof api.methodCard === 'function' ? api.methodCard : null,
    close: typeof api.close === 'function' ? api.close : null,
    name: typeof api.name === 'string' && api.name !== '' ? api.name : target.name,
    methodId: target.methodId,
  };
}
