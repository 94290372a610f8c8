/** A problem with a plugin's method.json, located by file and JSON path. */
export class ManifestError extends Error {
  readonly file: string;
  readonly path: string;
  readonly hint: string | undefined;
  constructor(file: string, path: string, message: string, hint?: string);
}

/** What a method plugin's method.json declares, as the Node side needs it. */
export interface MethodManifest {
  /** Absolute path of the plugin directory. */
  directory: string;
  /** Absolute path of method.json. */
  file: string;
  /** The parsed manifest, as written. */
  manifest: Record<string, unknown>;
  name: string;
  /** method_id, or the directory name in kebab-case for a seed-era manifest. */
  methodId: string;
  /** How the method runs: its translate.js in-process, its Python entry, or a bridge command. */
  runtime: 'node' | 'python' | 'command';
  /** Absolute path of the Node entry, when there is one. */
  nodeEntry: string | null;
  /** "module:Class", when there is a Python entry. */
  pythonEntry: string | null;
  /** argv of a bridge guest program, when declared. */
  command: string[] | null;
  supportedPairs: string[];
}

/** Read a plugin directory's method.json (also accepts the method.json path itself). */
export function readMethodManifest(pathToPlugin: string): MethodManifest;

/** The kebab-case form of a name ("My Method v2" → "my-method-v2"), as the Python SDK computes it. */
export function kebabCase(text: string): string;
