// Importing the method module a Node guest serves and checking it exports what it implements — translate(entries,
// config) and/or decide(rows, config), and optionally name, capabilities, methodCard() and close(); a default export
// holding them works too. Nothing here reads a plugin's files: a host that has checked them names the module
// (`moduleTarget`), and ./method-module.js resolves a plugin directory, checking its files first.
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { guardExitDuringCalls } from './champollion/method-guard.js';
import { kebabCase } from './contract/kebab-case.js';
import { got } from './contract/value-words.js';
import { GUEST_CAPABILITIES } from './guest.js';
import { describe, isPlainObject } from './protocol.js';

/** The requests a method can implement, and what each is given. */
export const REQUESTS = Object.freeze({ translate: 'entries', decide: 'rows' });

/**
 * A module file to serve: {file, name, named, methodId, implements}. Without a name (named: false) it is the
 * module's `name` export or the file's base name, without a method id the kebab-case of the name, and without
 * implements whatever the module exports.
 */
export function moduleTarget(module, { name, methodId, implements: requests } = {}) {
  const file = resolve(module);
  if (!existsSync(file)) throw new Error(`${file}: no such file`);
  if (statSync(file).isDirectory()) {
    throw new Error(`${file} is a directory, not a module: give the method's module file (its translate.js), or serve `
      + 'the plugin directory as one (`mt-eval-guest DIR`, without --module)');
  }
  const stem = name ?? basename(file, extname(file));
  return { file, name: stem, named: name !== undefined, methodId: methodId ?? kebabCase(stem), implements: requests ?? null };
}

/** The capabilities a method may declare (`export const capabilities = { max_concurrency: 2 }`). */
const DECLARABLE_CAPABILITIES = Object.freeze(['max_concurrency']);

/**
 * The capabilities a module exports, checked: {} when it exports none. Throws a TypeError naming the field and the
 * fix for one that is not an object, a field the guest does not take from a method, or a count that is not a whole
 * number of calls from 1.
 */
function declaredCapabilities(declared, file) {
  if (declared === undefined) return {};
  const fix = '\n  fix: export `capabilities = { max_concurrency: N }`, N the calls the method takes at once: a whole '
    + `number from 1 (without it, ${GUEST_CAPABILITIES.max_concurrency})`;
  if (!isPlainObject(declared)) {
    throw new TypeError(`${file} exports capabilities as ${got(declared)}, not an object${fix}`);
  }
  for (const [field, value] of Object.entries(declared)) {
    if (!DECLARABLE_CAPABILITIES.includes(field)) {
      throw new TypeError(`${file} exports capabilities.${field}, which a method does not declare (it declares `
        + `${DECLARABLE_CAPABILITIES.join(', ')})${fix}`);
    }
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new TypeError(`${file} exports capabilities.${field} = ${got(value)}: it must be a whole number of calls `
        + `from 1${fix}`);
    }
  }
  return { ...declared };
}

const exportsAny = (api) => Object.keys(REQUESTS).some((request) => typeof api?.[request] === 'function');

/**
 * Import the method's module (an ES module, or CommonJS where Node reads the file as CommonJS) and check it
 * exports what it implements (target.implements, from method.json; for a bare module, whichever of
 * translate and decide it exports). A module that does not load is a MethodLoadError with its place and fix.
 */
export async function loadMethod(target) {
  let loaded;
  const url = pathToFileURL(target.file).href;
  // (a process.exit() the module's code calls while it loads fails the load, as one in a call fails the call: it
  // does not end the program that loads it in its own process)
  const unguard = guardExitDuringCalls(dirname(target.file));
  try {
    if (target.afresh) delete createRequire(import.meta.url).cache[target.file]; // (a CommonJS module run again too)
    loaded = await import(target.afresh ? `${url}?instance=${target.afresh}` : url);
  } catch (error) {
    const { explainLoadError } = await import('./load-errors.js'); // (only a module that fails to load needs it)
    throw explainLoadError(error, target.file);
  } finally {
    unguard();
  }
  const api = exportsAny(loaded) ? loaded : isPlainObject(loaded.default) && exportsAny(loaded.default) ? loaded.default : loaded;
  const implemented = target.implements ?? Object.keys(REQUESTS).filter((request) => typeof api[request] === 'function');
  const requests = implemented.length ? implemented : ['translate'];
  for (const request of requests) {
    if (typeof api[request] !== 'function') {
      const found = Object.keys(loaded).filter((key) => key !== 'default');
      const value = api[request] ?? (isPlainObject(loaded.default) ? loaded.default[request] : undefined);
      const what = value !== undefined
        ? `exports ${request}, but it is not a function: it is ${describe(value)}`
        : typeof loaded.default === 'function' // (module.exports = function …, or export default function …)
          ? `does not export ${request} (its default export is the function ${loaded.default.name || '(anonymous)'}: `
            + `export it by the name ${request})`
          : `does not export ${request}${found.length ? ` (it exports ${found.join(', ')})` : ''}`;
      const other = Object.keys(REQUESTS).find((name) => name !== request && typeof api[name] === 'function');
      throw new TypeError(`${target.file} ${what}`
        + `\n  fix: write \`export async function ${request}(${REQUESTS[request]}, config) { ... }\` in an ES module, `
        + `or \`module.exports = { ${request} }\` in a CommonJS one${other // (a decision method that did not say so)
          ? `, or, if it only ${other}s, set "implements": ["${other}"] in method.json` : ''}`);
    }
  }
  return {
    translate: requests.includes('translate') ? api.translate : null,
    decide: requests.includes('decide') ? api.decide : null,
    implements: requests,
    capabilities: declaredCapabilities(api.capabilities, target.file),
    methodCard: typeof api.methodCard === 'function' ? api.methodCard : null,
    close: typeof api.close === 'function' ? api.close : null,
    // a name given (method.json's, --name) comes first, as for a Python method; else the module's own, if it has one
    name: !target.named && typeof api.name === 'string' && api.name !== '' ? api.name : target.name,
    methodId: target.methodId,
    file: target.file,
  };
}

/**
 * What the loaded method reports with methodCard(): null without one; when it throws, a MethodCardError naming
 * the module, what was thrown and the fix. (What it returns is the caller's to check: `notACard`.)
 */
export async function reportedCard(method) {
  if (!method.methodCard) return null;
  try {
    return (await method.methodCard()) ?? null;
  } catch (error) {
    const { MethodCardError, thrownAt } = await import('./load-errors.js');
    throw new MethodCardError(method.file, `raised ${thrownAt(error, method.file)}`, CARD_FIX);
  }
}

export const CARD_FIX = 'make methodCard() return an object of card fields';

const sharedModules = new Map(); // module file → { loading, users }: the instance open loads share
const closedInstances = new Map(); // module file → how many of its instances were closed

/**
 * The method module of `target` for one user in this process (a loaded plugin), as a Python plugin's module serves
 * every instance of its method: the users open at once share one instance of the module, its close() runs when the
 * last of them releases it, and a later user imports the module afresh (its close() may have released for good what
 * it holds; modules it imports in turn are still shared). Returns { method: Promise, release(): Promise }.
 */
export function useMethodModule(target) {
  let shared = sharedModules.get(target.file);
  if (!shared) {
    shared = { loading: loadMethod({ ...target, afresh: closedInstances.get(target.file) ?? 0 }), users: 0 };
    shared.loading.catch(() => {}); // (each user awaits it and sees the failure)
    sharedModules.set(target.file, shared);
  }
  shared.users += 1;
  let released = false;
  return {
    method: shared.loading,
    async release() {
      if (released) return;
      released = true;
      shared.users -= 1;
      if (shared.users > 0) return;
      sharedModules.delete(target.file);
      closedInstances.set(target.file, (closedInstances.get(target.file) ?? 0) + 1);
      const method = await shared.loading.catch(() => null);
      await method?.close?.();
    },
  };
}
