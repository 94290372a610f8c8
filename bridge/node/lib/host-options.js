// What startGuest accepts and what a guest declares: the host's options completed with their defaults (a value
// that does not fit is a TypeError naming the option), and a guest's capabilities checked against the protocol's
// schema (a value that does not fit is warned about and replaced by its default).
import { compile, defaults, schema } from './contract/schema.js';
import { DEFAULT_MAX_LINE_BYTES, isPlainObject } from './protocol.js';
import { DEFAULT_TOLERANCE } from './decisions.js';
import { describe } from './results.js';

const noop = () => {};
const defaultLogger = {
  debug: noop,
  info: noop,
  warn: (message) => process.stderr.write(`mt-eval-bridge: ${message}\n`),
  error: (message) => process.stderr.write(`mt-eval-bridge: ${message}\n`),
};

function completeLogger(logger) {
  if (!logger) return defaultLogger;
  const level = (name) => (typeof logger[name] === 'function' ? (message) => logger[name](message) : noop);
  return { debug: level('debug'), info: level('info'), warn: level('warn'), error: level('error') };
}

function positive(name, value, fallback) {
  if (value === undefined || value === null) return fallback;
  if (!(typeof value === 'number' && value > 0)) throw new TypeError(`options.${name} must be a positive number, got ${describe(value)}`);
  return value;
}

export function completeOptions(options) {
  if (!isPlainObject(options)) throw new TypeError(`options must be an object, got ${describe(options)}`);
  const budget = options.restartBudget ?? {};
  return {
    cwd: options.cwd,
    env: options.env,
    startTimeoutMs: positive('startTimeoutMs', options.startTimeoutMs, 30_000),
    requestTimeoutMs: positive('requestTimeoutMs', options.requestTimeoutMs, 120_000),
    hardTimeoutMs: positive('hardTimeoutMs', options.hardTimeoutMs, 600_000),
    maxLineBytes: positive('maxLineBytes', options.maxLineBytes, DEFAULT_MAX_LINE_BYTES),
    restartBudget: {
      restarts: budget.restarts ?? 3,
      windowMs: positive('restartBudget.windowMs', budget.windowMs, 60_000),
    },
    batchSize: positive('batchSize', options.batchSize, Infinity),
    tolerance: positive('tolerance', options.tolerance, DEFAULT_TOLERANCE),
    closeStepMs: positive('closeStepMs', options.closeStepMs, 2_000),
    cancelGraceMs: positive('cancelGraceMs', options.cancelGraceMs, 2_000),
    config: options.config ?? null,
    goldFields: fieldNames('goldFields', options.goldFields),
    logger: completeLogger(options.logger),
  };
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
