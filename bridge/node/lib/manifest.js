// Reading a method plugin from Node: its files are checked exactly as the Python SDK checks them
// (lib/contract/: the generated schemas, the same rules, the same messages), so a plugin Python refuses
// to load is refused here with the same problems.
import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { mergeCard, pluginDirectory, readPlugin } from './contract/plugin.js';
import { errorsOf, renderProblem } from './contract/words.js';

export { kebabCase } from './contract/words.js';

/** A plugin cannot be loaded; problems lists every problem (errors and warnings), as Python's PluginLoadError. */
export class ManifestError extends Error {
  constructor(problems, summary) {
    const errors = errorsOf(problems);
    super([summary, ...errors.map(renderProblem)].join('\n'));
    this.name = 'ManifestError';
    this.problems = problems;
    const [first] = errors;
    this.file = first?.file ?? null;
    this.path = first?.path ?? '$';
    this.hint = first?.hint ?? null;
  }
}

/**
 * Read and check a method plugin's files (method.json, method_card.json, the Node entry) without running
 * its code. Returns {directory, file, manifest, name, methodId, runtime, nodeEntry, pythonEntry, command,
 * supportedPairs, card, warnings}: `card` is the card its files give (the method may add to it when it
 * runs), `runtime` the one a Node host uses ("node" when there is a node_entry, else "python", else
 * "command"). Throws ManifestError listing every error, under `summary` (by default "cannot load method plugin …").
 */
export function readMethodManifest(pathToPlugin, summary = `cannot load method plugin ${pluginDirectory(pathToPlugin)}`) {
  const { source, problems } = readPlugin(pathToPlugin);
  if (source === null || errorsOf(problems).length) throw new ManifestError(problems, summary);
  const { manifest, directory } = source;
  const { card, problems: cardProblems } = mergeCard(manifest, source.methodId, [[source.cardFile, source.cardData]],
    { manifestFile: source.manifestFile });
  const all = [...problems, ...cardProblems];
  if (card === null) throw new ManifestError(all, summary);
  return {
    directory: resolve(directory),
    file: resolve(source.manifestFile),
    manifest,
    name: manifest.name,
    methodId: source.methodId,
    runtime: manifest.node_entry ? 'node' : manifest.entry_point ? 'python' : 'command',
    nodeEntry: manifest.node_entry ? realpathSync(join(directory, manifest.node_entry)) : null,
    pythonEntry: manifest.entry_point ?? null,
    command: manifest.command ?? null,
    supportedPairs: manifest.supported_pairs,
    card,
    cardFile: source.cardFile,
    cardData: source.cardData,
    implements: [...new Set(manifest.implements)],
    warnings: all.filter((p) => p.severity === 'warning'),
  };
}
