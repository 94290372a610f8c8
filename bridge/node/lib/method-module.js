// The method module a Node guest serves: where it is (a plugin's node_entry, or a bare file) and what it
// exports — translate(entries, config) and/or decide(rows, config), as its method.json "implements", and
// optionally name, methodCard() and close(); a default export holding them works too.
import { readMethodManifest } from './manifest.js';
import { moduleTarget } from './method-load.js';
import { serveResolved } from './guest-process.js';

export { REQUESTS, loadMethod, moduleTarget, useMethodModule } from './method-load.js';

/**
 * Where the method lives: {directory} for a plugin (its method.json names node_entry, and its files are checked
 * as Python checks them) or {module} for a bare file. Throws ManifestError or Error with a fix when it cannot run
 * here.
 */
export function resolveMethod({ directory, module }) {
  if (module) return moduleTarget(module);
  const manifest = readMethodManifest(directory);
  if (!manifest.nodeEntry) {
    throw new Error(`${manifest.file}: no "node_entry": this plugin does not run on Node`
      + (manifest.pythonEntry ? '\n    fix: serve it with `mt-eval serve DIR`' : ''));
  }
  return { file: manifest.nodeEntry, name: manifest.name, named: true, methodId: manifest.methodId,
    implements: manifest.implements };
}

/**
 * Serve a method on process stdin/stdout until stdin closes, then exit. `target` is {directory} or {module}, as
 * for resolveMethod, or what resolveMethod returns.
 */
export function serveProcess(target, options) {
  return serveResolved(target.file ? target : resolveMethod(target), options);
}
