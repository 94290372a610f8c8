// What startGuest accepts and what a guest declares: the host's options completed with their defaults (a value
// that does not fit is a TypeError naming the option), a guest's initialize result checked against the protocol's
// schema (one that does not fit fails the start), and its capabilities completed (a count below 1 is warned about
// and replaced by its default).
import { decodeValue } from './contract/decode.js';
import { compile, defaults, schema } from './contract/schema.js';
import { DEFAULT_MAX_LINE_BYTES, PROTOCOL_VERSION, isPlainObject } from './protocol.js';
import { DEFAULT_TOLERANCE } from './decisions.js';
import { notImplemented } from './host-failures.js';
import { completeDecisionConfig, completeRunConfig, describe } from './results.js';

const noop = () => {};
const defaultLogger = {
  debug: noop,
  info: noop,
  warn: (message) => process.stderr.write(`mt-eval-bridge: ${message}\n`),
  error: (message) => process.stderr.write(`mt-eval-bridge: ${message}\n`),
};

/** The logger a host warns with: options.logger's levels (those it lacks are silent), or stderr's. */
export function completeLogger(logger) {
  if (!logger) return defaultLogger;
  const level = (name) => (typeof logger[name] === 'function' ? (message) => logger[name](message) : noop);
  return { debug: level('debug'), info: level('info'), warn: level('warn'), error: level('error') };
}

/** completeLogger(logger) with each message after `prefix` (what it concerns: "pair en:es: ", say). */
export function prefixedLogger(logger, prefix) {
  const complete = completeLogger(logger);
  return Object.fromEntries(Object.entries(complete).map(([level, say]) => [level, (message) => say(prefix + message)]));
}

const shown = (value) => (typeof value === 'number' ? String(value) : describe(value)); // (NaN, not null)

function positive(name, value, fallback) {
  if (value === undefined || value === null) return fallback;
  if (!(typeof value === 'number' && value > 0)) throw new TypeError(`options.${name} must be a positive number, got ${shown(value)}`);
  return value;
}

const OPTIONS = ['cwd', 'env', 'startTimeoutMs', 'requestTimeoutMs', 'hardTimeoutMs', 'maxLineBytes', 'restartBudget',
  'batchSize', 'tolerance', 'closeStepMs', 'cancelGraceMs', 'config', 'goldFields', 'logger', 'signal'];

/**
 * Throws a TypeError for the first of options' names that is not one of `known` (the options of `what`), naming a
 * near one: a misspelled option would otherwise be its default in silence.
 */
export function checkOptionNames(options, known, what) {
  const unknown = Object.keys(options).find((name) => !known.includes(name));
  if (unknown === undefined) return;
  const near = known.find((name) => name.toLowerCase().startsWith(unknown.toLowerCase().slice(0, 5)));
  throw new TypeError(`options.${unknown} is not an option of ${what}${near ? ` (did you mean ${near}?)` : ''}; `
    + `the options are ${known.join(', ')}`);
}

function optional(name, value, kind, test) {
  if (value !== undefined && value !== null && !test(value)) {
    throw new TypeError(`options.${name} must be ${kind}, got ${shown(value)}`);
  }
  return value ?? undefined;
}

export function completeOptions(options) {
  if (!isPlainObject(options)) throw new TypeError(`options must be an object, got ${describe(options)}`);
  checkOptionNames(options, OPTIONS, 'startGuest');
  const budget = optional('restartBudget', options.restartBudget, 'an object ({restarts, windowMs})', isPlainObject) ?? {};
  const stray = Object.keys(budget).find((name) => name !== 'restarts' && name !== 'windowMs');
  if (stray !== undefined) {
    throw new TypeError(`options.restartBudget.${stray} is not a field of restartBudget; its fields are restarts, windowMs`);
  }
  const restarts = optional('restartBudget.restarts', budget.restarts, 'a whole number of 0 or more',
    (value) => Number.isInteger(value) && value >= 0);
  const maxLineBytes = optional('maxLineBytes', options.maxLineBytes, 'a whole number of bytes above 0',
    (value) => Number.isInteger(value) && value > 0);
  return {
    cwd: optional('cwd', options.cwd, 'a directory path (a string)', (value) => typeof value === 'string' && value !== ''),
    env: optional('env', options.env, 'an object of environment variables', isPlainObject),
    startTimeoutMs: positive('startTimeoutMs', options.startTimeoutMs, 30_000),
    requestTimeoutMs: positive('requestTimeoutMs', options.requestTimeoutMs, 120_000),
    hardTimeoutMs: positive('hardTimeoutMs', options.hardTimeoutMs, 600_000),
    maxLineBytes: maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
    restartBudget: {
      restarts: restarts ?? 3,
      windowMs: positive('restartBudget.windowMs', budget.windowMs, 60_000),
    },
    batchSize: positive('batchSize', options.batchSize, Infinity),
    tolerance: positive('tolerance', options.tolerance, DEFAULT_TOLERANCE),
    closeStepMs: positive('closeStepMs', options.closeStepMs, 2_000),
    cancelGraceMs: positive('cancelGraceMs', options.cancelGraceMs, 2_000),
    config: checkConfig(options.config, { decides: true }) ?? null, // (what the guest implements is not known yet)
    goldFields: fieldNames('goldFields', options.goldFields),
    logger: completeLogger(optional('logger', options.logger, 'an object with debug, info, warn and error methods '
      + '(console is one)', (value) => typeof value === 'object')),
    signal: optional('signal', options.signal, 'an AbortSignal', (value) => value instanceof AbortSignal) ?? null,
  };
}

/**
 * Throws the TypeError translate() would throw for a default config that does not fit (decide()'s, for a method that
 * decides: its config may leave the language pair out), so that a config no call could run with fails the start or
 * the load rather than every entry. Returns config.
 */
export function checkConfig(config, { decides }) {
  if (config === undefined || config === null) return config;
  const problem = (decides ? completeDecisionConfig : completeRunConfig)(config);
  if (typeof problem === 'string') throw new TypeError(problem);
  return config;
}

/**
 * The started guest, once its default config fits what it implements (checked before it started as a decision
 * config, as for a guest that decides): one that only translates is closed and a TypeError thrown as checkConfig's.
 */
export async function checkGuestConfig(guest, config) {
  try {
    checkConfig(config, { decides: !notImplemented(guest.info, 'decide') });
  } catch (error) {
    await guest.close();
    throw error;
  }
  return guest;
}

/** The startGuest options loadMethodPlugin sets itself, from the plugin: options.guest may not give them. */
const PLUGIN_GUEST_OPTIONS = ['cwd', 'config', 'signal'];

/**
 * Throws a TypeError naming the first of loadMethodPlugin's options whose value does not fit, as completeOptions does
 * for startGuest's, so that a plugin run in this process refuses what one run through a guest would (a goldFields
 * that is not a list would otherwise hide nothing from it). options.guest is checked as startGuest's options.
 */
export function checkLoadOptions(options) {
  optional('baseDir', options.baseDir, 'a directory path (a string)', (value) => typeof value === 'string' && value !== '');
  optional('mtEval', options.mtEval, 'a command: a path, or an argv (a list of strings)', (value) => typeof value === 'string'
    || (Array.isArray(value) && value.every((part) => typeof part === 'string' && part !== '')));
  optional('watchdog', options.watchdog, 'true or false', (value) => typeof value === 'boolean');
  const guest = optional('guest', options.guest, 'an object of startGuest options', isPlainObject) ?? {};
  const own = PLUGIN_GUEST_OPTIONS.find((name) => guest[name] !== undefined);
  if (own !== undefined) {
    throw new TypeError(`options.guest.${own} cannot be given: loadMethodPlugin sets the guest's ${own} from the plugin`
      + (own === 'config' ? ' (give options.config instead)' : ''));
  }
  try {
    completeOptions(guest);
  } catch (error) {
    throw new TypeError(error.message.replace(/^options\./, 'options.guest.'));
  }
  completeOptions({ goldFields: options.goldFields, tolerance: options.tolerance, logger: options.logger });
}

function fieldNames(name, value) {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((field) => typeof field === 'string' && field !== '')) {
    throw new TypeError(`options.${name} must be a list of entry field names, got ${describe(value)}`);
  }
  return [...value];
}

/**
 * The capabilities a guest declared, with the protocol's defaults (bridge-initialize-result schema) for what it
 * left out; a value that does not fit (counts are positive integers) is warned about and replaced by its default.
 */
export function completeCapabilities(declared, logger) {
  const caps = isPlainObject(declared) ? declared : {};
  const { document, definition } = capabilitySchema();
  const out = defaults(definition);
  for (const [name, node] of Object.entries(definition.properties)) {
    const value = caps[name];
    if (value === undefined || value === null) continue;
    if (compile(document, node)(value) && (typeof value !== 'number' || value > 0)) out[name] = value;
    else logger?.warn(`the guest declared capabilities.${name} = ${describe(value)}; using ${out[name] ?? 'null'}`);
  }
  return out;
}

const capabilitySchema = () => ({ document: schema('bridge-initialize-result'), definition: schema('bridge-initialize-result').$defs.Capabilities });

/**
 * What is wrong with a guest's answer to initialize, after `guest \`COMMAND\``: a result that is not an initialize
 * result (`sent an invalid initialize result: $.method: …`), or one choosing a version this host did not offer, as the
 * Python host refuses them; null when it is one.
 */
export function initializeProblem(result) {
  const [problem] = decodeValue(result, 'bridge-initialize-result', { file: 'the initialize result' }).problems
    .filter((found) => found.severity === 'error');
  if (problem) return `sent an invalid initialize result: ${problem.path}: ${problem.message}`;
  if (result.protocol_version === PROTOCOL_VERSION) return null;
  return `sent an invalid initialize result: protocol_version ${JSON.stringify(result.protocol_version)} is not one this `
    + `host offered (${PROTOCOL_VERSION})`;
}
