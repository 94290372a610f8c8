// Method plugins from Node: which directory a methodPlugin value names, and loading it.
//
// A value with a slash (or starting with ".") is a path relative to the base directory (the config's);
// anything else is a name looked up in <base>/.champollion/methods/*/method.json by manifest name,
// method_id or directory name. An unknown or ambiguous name is an error listing the plugins found, and the
// entries that cannot be plugins with why (a symlink to a missing target, a directory without method.json).
// loadMethodPlugin runs the plugin's translate.js in this process when it has one, otherwise its Python
// entry through the bridge (`mt-eval serve DIR`), or its declared bridge command. In this process, a call
// gets the config's timeout_s per item and one that throws or times out is split until the items it fails
// on are found; a translate.js that blocks the event loop for longer than a batch may take ends the
// process with a message (nothing else can stop it). A plugin that cannot start (its translate.js does not
// load, its guest does not answer initialize) fails at start(), and every later call, at once.
import { setMaxListeners } from 'node:events';
import { existsSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

import { callIsolating } from '../calls.js';
import { LONGEST_DELAY } from '../child.js';
import { describe, isPlainObject } from '../protocol.js';
import { DEFAULT_TOLERANCE, decisionError, matchDecisions, rowsProblem } from '../decisions.js';
import { methodView } from '../gold.js';
import { CLOSED, GuestStartError, checkEntries, startGuest } from '../host.js';
import { Slots } from '../host-gates.js';
import { checkConfig, checkLoadOptions, checkOptionNames, completeLogger } from '../host-options.js';
import { sendingOnlyValidText } from '../lone-surrogates.js';
import { mergeCard } from '../contract/plugin.js';
import { makeProblem } from '../contract/words.js';
import { ManifestError, kebabCase, readMethodManifest } from '../manifest.js';
import { reportedCard } from '../method-load.js';
import { resolveMethod, useMethodModule } from '../method-module.js';
import { ResultNotes, completeDecisionConfig, completeRunConfig, errorResult, matchResults, resultsFor } from '../results.js';
import { sayStrays } from '../unmatched.js';
import { LoopWatchdog, nextTurn } from '../watchdog.js';
import { FileProblem, isDirectory, isFile, readJson, stats } from './files.js';
import { guardExitDuringCalls } from './method-guard.js';
import { byCodeUnits } from './json.js';

/** What the calls close() ended fail with, in this process or through a guest. */
const PLUGIN_CLOSED = 'the method plugin was closed';

export const METHODS_DIR = '.champollion/methods';

/** methodPlugin names no plugin; available lists what .champollion/methods holds. */
export class MethodPluginNotFoundError extends Error {
  constructor(message, available) {
    super(message);
    this.name = 'MethodPluginNotFoundError';
    this.available = available;
  }
}

const isPath = (value) => value.includes('/') || value.includes('\\') || value.startsWith('.');

function describePlugin(plugin) {
  const where = `${METHODS_DIR}/${basename(plugin.directory)}`;
  return plugin.problem ? `${where} (unusable: ${plugin.problem})`
    : `${JSON.stringify(plugin.name)} (method_id ${plugin.methodId}) in ${where}`;
}

/** Why entry is not a plugin directory, before its method.json is read (null: it may be one). */
export function entryProblem(entry) {
  if (stats(entry, false)?.isSymbolicLink() && stats(entry) === null) {
    const target = readlinkSync(entry);
    return `a symlink to ${target} (${resolve(dirname(entry), target)}), which does not exist`;
  }
  if (stats(entry) === null) return 'no such directory';
  if (!isDirectory(entry)) return 'not a directory';
  if (!isFile(join(entry, 'method.json'))) return 'a directory without method.json';
  return null;
}

/**
 * Every entry of <base>/.champollion/methods (hidden ones aside), in name order: a plugin directory, or an
 * entry that cannot be one, with why: {directory, name, methodId, problem}.
 */
export function findMethodPlugins(baseDir = process.cwd()) {
  const root = join(baseDir, METHODS_DIR);
  if (!isDirectory(root)) return [];
  return readdirSync(root).filter((name) => !name.startsWith('.')).sort(byCodeUnits)
    .map((name) => {
      const directory = join(root, name);
      const problem = entryProblem(directory);
      if (problem) return { directory, name: null, methodId: null, problem };
      let data;
      try {
        data = readJson(join(directory, 'method.json'));
      } catch (error) {
        if (!(error instanceof FileProblem)) throw error;
        return { directory, name: null, methodId: null, problem: `method.json cannot be read: ${error.what}` };
      }
      if (!(data instanceof Map) || typeof data.get('name') !== 'string') {
        return { directory, name: null, methodId: null, problem: 'method.json has no "name"' };
      }
      const declared = data.get('method_id');
      const methodId = typeof declared === 'string' && declared ? declared : kebabCase(basename(realpathSync(directory)));
      return { directory, name: data.get('name'), methodId, problem: null };
    });
}

/** The plugin directory a methodPlugin value names, for a config in baseDir; pair, the config's pair whose
 * methodPlugin it is, is named in the error (a config may name several plugins). */
export function resolveMethodPlugin(value, { baseDir = process.cwd(), pair = null } = {}) {
  try {
    return resolvePlugin(value, baseDir);
  } catch (error) {
    if (pair === null || !(error instanceof MethodPluginNotFoundError)) throw error;
    throw new MethodPluginNotFoundError(`pair ${JSON.stringify(pair)}: ${error.message}`, error.available);
  }
}

function resolvePlugin(value, baseDir) {
  if (isPath(value)) {
    const directory = resolve(baseDir, value);
    const problem = entryProblem(directory);
    if (problem) throw new MethodPluginNotFoundError(`methodPlugin ${JSON.stringify(value)}: ${directory}: ${problem}`, []);
    return directory;
  }
  const available = findMethodPlugins(baseDir);
  const matches = available.filter((p) => !p.problem && [p.name, p.methodId, basename(p.directory)].includes(value));
  if (matches.length === 1) return matches[0].directory;
  const root = join(baseDir, METHODS_DIR);
  const listing = available.map((p) => `  - ${describePlugin(p)}`).join('\n') || '  (none)';
  if (matches.length > 1) {
    throw new MethodPluginNotFoundError(`methodPlugin ${JSON.stringify(value)} is ambiguous: it names ${matches.length} plugins; `
      + `use a path or a method_id instead. Plugins in ${root}:\n${listing}`, available);
  }
  const unusable = available.find((p) => p.problem && basename(p.directory) === value);
  if (unusable) {
    throw new MethodPluginNotFoundError(`methodPlugin ${JSON.stringify(value)} names ${METHODS_DIR}/${value}, which cannot be used: `
      + `${unusable.problem}. Fix: ${unusable.problem.startsWith('method.json') ? 'correct its method.json (mt-eval validate '
        + `${join(root, value)} says what is wrong)` : "make it the plugin's directory (or a symlink to it), or set methodPlugin "
        + "to the plugin's path"}. `
      + `Plugins in ${root}:\n${listing}`, available);
  }
  throw new MethodPluginNotFoundError(`methodPlugin ${JSON.stringify(value)} names no plugin in ${root}. Available plugins:\n${listing}`, available);
}

/** A Python plugin's guest could not be started because the mt-eval command is missing: said once, with the fix. */
function mtEvalNotFound(error, command, manifest) {
  const what = command[0] === 'mt-eval' ? `the mt-eval command is not on PATH (${error.spawnError})`
    : `MT_EVAL is ${JSON.stringify(command[0])}, which cannot be run (${error.spawnError})`;
  const message = `${what}: the Python method plugin ${manifest.methodId} runs through \`mt-eval serve\`. Install the `
    + 'mt-eval SDK (in a checkout of its repository, `nox -s demo` installs it into .venv; elsewhere '
    + '`pip install mt_eval_sdk-VERSION-py3-none-any.whl`, built by `nox -s build`), then point Node at it with the '
    + 'environment variable MT_EVAL (MT_EVAL=/path/to/mt-eval/.venv/bin/mt-eval npx mt-eval-locales) or put mt-eval '
    + `on PATH; tried: ${command.join(' ')}`;
  return new GuestStartError(message, { spawnError: error.spawnError, cause: error });
}

/**
 * The argv that serves a Python plugin: options.mtEval (string or argv), $MT_EVAL, or `mt-eval` on PATH (an empty
 * string or argv counts as not given, as an empty variable does in a shell).
 */
function pythonCommand(directory, mtEval) {
  const given = (value) => (value === '' || (Array.isArray(value) && value.length === 0) ? undefined : value);
  const base = given(mtEval) ?? given(process.env.MT_EVAL) ?? 'mt-eval';
  return [...(Array.isArray(base) ? base : [base]), 'serve', directory];
}

function bridgeCommand(manifest, options) {
  if (manifest.runtime === 'python') return { command: pythonCommand(manifest.directory, options.mtEval), cwd: undefined };
  const command = [...manifest.command];
  const program = join(manifest.directory, command[0]);
  if (/[\\/]/.test(command[0]) && !isAbsolute(command[0]) && existsSync(program)) command[0] = program;
  return { command, cwd: manifest.directory };
}

const LOAD_OPTIONS = ['baseDir', 'config', 'mtEval', 'guest', 'tolerance', 'logger', 'goldFields', 'watchdog'];

const isTimed = (result) => result === null || typeof result !== 'object' || result.latency_s !== undefined;

/**
 * Load a method plugin by name (under <baseDir>/.champollion/methods) or path. Nothing runs until the
 * first translate(): then translate.js is imported, or the guest process started.
 * options: baseDir, config (the RunConfig translate() and decide() use when given none, e.g.
 * resolvePair(...).runConfig), mtEval (the command serving Python plugins), guest (startGuest options),
 * tolerance (for decide()'s probability sums), logger, goldFields (entry fields translate() must not hand
 * the method besides reference and references: they are removed, as lib/gold.js says), watchdog (false: do
 * not end the process when an in-process translate.js blocks the event loop). An unknown option is a TypeError
 * naming it, as startGuest's are.
 */
export async function loadMethodPlugin(nameOrPath, options = {}) {
  if (typeof nameOrPath !== 'string' || !nameOrPath.trim()) {
    throw new TypeError(`loadMethodPlugin needs a plugin's name or path (a string), got ${describe(nameOrPath)}`);
  }
  if (!isPlainObject(options)) throw new TypeError(`options must be an object, got ${describe(options)}`);
  checkOptionNames(options, LOAD_OPTIONS, 'loadMethodPlugin');
  checkLoadOptions(options); // (whatever the plugin's runtime: in this process as through a guest)
  const directory = resolveMethodPlugin(nameOrPath, { baseDir: options.baseDir ?? process.cwd() });
  const manifest = readMethodManifest(directory);
  checkConfig(options.config, { decides: manifest.implements.includes('decide') });
  let inProcess = null;
  let moduleUse = null; // this load's share of translate.js (useMethodModule): released at close
  let guest = null;
  let watchdog = null;
  let closed = false;
  let inProcessSlots = null; // an in-process method's calls at once: no more than its capabilities.max_concurrency
  const closing = new AbortController(); // abandons a guest still starting, and calls in flight, at close
  setMaxListeners(0, closing.signal); // (each call in flight listens to it: hundreds at once are no leak to warn of)
  const resultNotes = new ResultNotes();

  // translate.js, shared with the other open loads of it in this process (useMethodModule)
  const inProcessMethod = () => (moduleUse = useMethodModule(resolveMethod({ directory }))).method;
  // What every call after close() does (its module may have released for good what it held, its guest is gone).
  const refuseClosed = () => {
    if (closed) throw new Error('the method plugin is closed');
  };

  // Load translate.js or start the guest once; a failure is kept, so every later call fails alike at once.
  const start = async (config) => {
    if (manifest.runtime === 'node') {
      inProcess ??= inProcessMethod();
      await inProcess;
      return;
    }
    if (!guest) {
      const { command, cwd } = bridgeCommand(manifest, options);
      guest = startGuest(command, {
        logger: options.logger, tolerance: options.tolerance, goldFields: options.goldFields, ...options.guest, cwd, config,
        signal: closing.signal,
      }).catch((error) => {
        throw manifest.runtime === 'python' && error.spawnError ? mtEvalNotFound(error, command, manifest) : error;
      });
      guest.catch(() => {}); // kept: a guest that did not start is not started again
    }
    await guest;
  };

  // translate(entries) or decide(rows): one call of the method, in this process or through its guest.
  const KINDS = {
    translate: { owner: 'entry', fail: errorResult, match: matchResults },
    decide: {
      owner: 'row', fail: decisionError,
      match: (rows, results, opts) => matchDecisions(rows, results, { ...opts, tolerance: options.tolerance ?? DEFAULT_TOLERANCE }),
    },
  };
  const runBatch = async (kind, items, config) => {
    if (manifest.runtime !== 'node') {
      const hosted = await guest;
      // (a batch not yet sent when close() began fails as an in-process method's unsent batches do: no rejection)
      if (closed) return items.map((item) => KINDS[kind].fail(String(item.id), PLUGIN_CLOSED));
      const results = await hosted[kind](items, config);
      // (the guest was closed by close(): said as an in-process method's calls say it)
      return closed ? results.map((r) => (r.error?.startsWith(CLOSED) ? { ...r, error: PLUGIN_CLOSED } : r)) : results;
    }
    const method = await inProcess;
    const { owner, fail, match } = KINDS[kind];
    if (options.watchdog !== false) {
      watchdog ??= new LoopWatchdog(`mt-eval-bridge: the method ${manifest.methodId} (${directory}) blocked the `
        + 'event loop for {seconds} s in a call of the method: a synchronous loop or call in an async function. '
        + 'Nothing else could stop it, so the process ends; what was saved stays saved. Fix: make its translate() '
        + 'or decide() asynchronous (await its I/O; move long computations to a worker thread).');
    }
    // (a limit past 2^31 − 1 ms, 24.8 days, would wrap in the watchdog's 32-bit slot: it is cut to that, practically never)
    const disarm = watchdog?.arm(Math.min(config.timeout_s * 1000 * Math.max(items.length, config.batch_size), LONGEST_DELAY));
    const unguard = guardExitDuringCalls(directory); // (its process.exit() fails the call, not this program)
    // translate() never hands the method the gold (lib/gold.js); decision rows go as they are.
    const hand = (batch) => (kind === 'translate' ? methodView(batch, options.goldFields ?? []) : batch.map((item) => ({ ...item })));
    const call = (batch, { signal }) => method[kind](hand(batch), config, { signal });
    inProcessSlots ??= new Slots(method.capabilities.max_concurrency ?? Infinity);
    try {
      // Text that is not valid Unicode fails its item before the method sees it: the input is to blame, not a result.
      return await sendingOnlyValidText(hand(items), config, KINDS[kind], (sendable) => callIsolating(call, sendable, {
        timeoutS: config.timeout_s,
        stop: closing.signal,
        // (each call holds a slot: the items of a call that timed out, sent alone, share them with the other batches)
        slots: inProcessSlots,
        atOnce: Math.min(config.concurrency, inProcessSlots.limit),
        unit: owner,
        fail,
        match: (batch, results, seconds) => {
          if (kind === 'translate') {
            const strays = []; // (dropped, and said as a guest's host says it)
            const matched = resultsFor(batch, results, { notes: resultNotes, elapsedS: seconds, onUnknown: (raw) => strays.push(raw) });
            sayStrays(resultNotes, strays, (text) => completeLogger(options.logger).warn(text));
            return matched;
          }
          // A decision without its own latency gets its share of the call's time, as the guests give it.
          const share = seconds / Math.max(1, batch.length);
          const timed = results.map((r) => (isTimed(r) ? r : { ...r, latency_s: share }));
          return match(batch, timed, { source: 'the method' });
        },
      }));
    } finally {
      disarm?.();
      unguard();
    }
  };

  // Batches of config.batch_size, config.concurrency at once; results in item order.
  const runAll = async (kind, items, config) => {
    await start(config);
    const size = config.batch_size;
    const batches = [];
    for (let i = 0; i < items.length; i += size) batches.push(items.slice(i, i + size));
    const out = new Array(batches.length);
    let next = 0;
    const worker = async () => {
      while (next < batches.length) {
        const index = next++;
        out[index] = await runBatch(kind, batches[index], config);
        await nextTurn(); // (a method that answers without I/O would otherwise keep signals and timers out)
      }
    };
    await Promise.all(Array.from({ length: Math.min(config.concurrency, batches.length) }, worker));
    return out.flat();
  };

  return {
    name: manifest.name,
    methodId: manifest.methodId,
    directory,
    runtime: manifest.runtime,
    manifest,
    implements: manifest.implements,
    /** One full result per entry, in entry order; batches of config.batch_size, config.concurrency at once. */
    async translate(entries, config = options.config) {
      refuseClosed();
      if (!manifest.implements.includes('translate')) throw new TypeError(`${manifest.name} does not translate (it implements ${manifest.implements.join(', ')})`);
      checkEntries(entries); // (in this process as through a guest)
      const runConfig = completeRunConfig(config);
      if (typeof runConfig === 'string') throw new TypeError(runConfig);
      return runAll('translate', entries, runConfig);
    },
    /** One checked decision per row, in row order (options.tolerance for the probability sums). */
    async decide(rows, config = options.config ?? {}) {
      refuseClosed();
      if (!manifest.implements.includes('decide')) throw new TypeError(`${manifest.name} does not decide (it implements ${manifest.implements.join(', ')})`);
      const problem = rowsProblem(rows);
      if (problem) throw new TypeError(problem);
      const decisionConfig = completeDecisionConfig(config);
      if (typeof decisionConfig === 'string') throw new TypeError(decisionConfig);
      return runAll('decide', rows, decisionConfig);
    },
    /**
     * Load translate.js, or start the guest, now: rejects (MethodLoadError, GuestStartError) with the
     * reason and the fix when the plugin cannot start, and so will every later call.
     */
    async start(config = options.config) {
      refuseClosed();
      // (a plugin that decides starts with the config decide() takes, the language pair left out too, as the load does)
      const complete = manifest.implements.includes('decide') ? completeDecisionConfig : completeRunConfig;
      const runConfig = config === null || config === undefined ? null : complete(config);
      if (typeof runConfig === 'string') throw new TypeError(runConfig);
      await start(runConfig);
    },
    /**
     * The method card, merged as the Python SDK merges it: method.json, method_card.json, then what the method
     * reports when it runs (methodCard() of translate.js, or the card the guest sent at initialize). Throws
     * ManifestError when the method's own card contradicts method.json or is not a valid card. After close(), it
     * throws as translate() does.
     */
    async methodCard() {
      refuseClosed();
      let runtime;
      let label;
      if (manifest.runtime === 'node') {
        inProcess ??= inProcessMethod();
        const method = await inProcess;
        label = `${manifest.manifest.node_entry} methodCard()`;
        runtime = await reportedCard(method).catch((error) => { // (what it raised, with the place and the fix)
          if (error?.name !== 'MethodCardError') throw error;
          throw new ManifestError([makeProblem(label, '$', error.problem, { hint: error.fix, code: 'method-card' })],
            `the method card of ${directory} is not valid`);
        });
      } else {
        await start(null);
        runtime = (await guest).info?.card ?? null;
        label = `the card guest ${manifest.methodId} sent at initialize`;
      }
      const { card, problems } = mergeCard(manifest.manifest, manifest.methodId, [[manifest.cardFile, manifest.cardData], [label, runtime]],
        { manifestFile: manifest.file });
      if (card === null) throw new ManifestError(problems, `the method card of ${directory} is not valid`);
      return card;
    },
    /** Release the method: close() of translate.js, or stop the guest process. */
    async close() {
      if (closed) return;
      closed = true;
      closing.abort(new Error(PLUGIN_CLOSED)); // (in-process calls in flight fail at once; a guest answers its own first)
      watchdog?.close();
      await moduleUse?.release(); // (translate.js's close() runs once no other open load of it is left)
      if (guest) await (await guest.catch(() => null))?.close();
    },
  };
}
