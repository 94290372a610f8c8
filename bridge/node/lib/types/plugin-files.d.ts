/// <reference types="node" />
// The types of mt-eval-bridge's plugin files (lib/manifest.js, lib/method-module.js, lib/code-hash.js, lib/contract/); index.d.ts exports them all.

import type { Manifest, MethodCard, PluginReport, Problem } from '../generated/contract.js';

/** A problem in a user's file: where (file + JSON path), what, and how to fix it. */
export type FileProblem = Problem;

/** A file or plugin has errors; problems lists every one (and the warnings). */
export class ProblemsError extends Error {
  readonly problems: Problem[];
  constructor(problems: Problem[], summary?: string);
}

/** A plugin cannot be loaded: every problem, as the Python SDK's PluginLoadError lists them. */
export class ManifestError extends Error {
  readonly problems: Problem[];
  /** File, JSON path and fix of the first error. */
  readonly file: string | null;
  readonly path: string;
  readonly hint: string | null;
  constructor(problems: Problem[], summary: string);
}

/** What a method plugin's files declare, checked as the Python SDK checks them. */
export interface MethodManifest {
  /** Absolute path of the plugin directory. */
  directory: string;
  /** Absolute path of method.json. */
  file: string;
  /** method.json, decoded, with the schema's defaults filled in. */
  manifest: Required<Manifest>;
  name: string;
  /** method_id, or the directory name in kebab-case for a seed-era manifest. */
  methodId: string;
  /** How the method runs from Node: its translate.js in-process, its Python entry, or a bridge command. */
  runtime: 'node' | 'python' | 'command';
  /** Absolute path of the Node entry, when there is one. */
  nodeEntry: string | null;
  /** "module:Class", when there is a Python entry. */
  pythonEntry: string | null;
  /** argv of a bridge guest program, when declared. */
  command: string[] | null;
  supportedPairs: string[];
  /** The card the plugin's files give (method.json, then method_card.json). */
  card: MethodCard;
  cardFile: string;
  cardData: Record<string, unknown> | null;
  /** Warnings about the files (errors are thrown as ManifestError). */
  warnings: Problem[];
  /** What the method answers (method.json "implements"; default ["translate"]). */
  implements: Array<'translate' | 'decide'>;
}

/**
 * Read and check a plugin directory's files (also accepts the method.json path itself); throws ManifestError, its
 * message headed by summary (by default "cannot load method plugin <directory>").
 */
export function readMethodManifest(pathToPlugin: string, summary?: string): MethodManifest;

/** The files-only report of `mt-eval validate --no-import`, problem for problem the same as Python's (every field present). */
export function validatePluginFiles(pathToPlugin: string): Required<PluginReport>;

/** A licence string checked as the Python SDK checks it (SPDX expression, "proprietary" or "none"). */
export function checkLicence(text: string): {
  ok: boolean; normalized?: string; isOpen: boolean; restriction: string | null; message?: string; hint?: string;
};

/** The SHA-256 of a plugin directory's files, as the run card's code_sha256 and the lock file's fingerprint use it. */
export function codeSha256(directory: string): string;

/** The kebab-case form of a name ("My Method v2" → "my-method-v2"), as the Python SDK computes it. */
export function kebabCase(text: string): string;
