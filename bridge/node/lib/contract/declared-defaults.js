// The defaults one definition of a schema declares: lib/generated/defaults.json, which `mt-eval schemas` writes
// with the schemas and which is small, so that a guest answers initialize without reading them (./schema.js) at all.
import { readFileSync } from 'node:fs';

let declared = null;

/** The defaults of definition ``name`` of schema ``stem``, as fresh values (read once, on first use). */
export function declaredDefaults(stem, name) {
  declared ??= JSON.parse(readFileSync(new URL('../generated/defaults.json', import.meta.url), 'utf8')).defaults;
  const found = declared[stem]?.[name];
  if (!found) throw new Error(`no defaults of "${name}" in schema "${stem}"`);
  return structuredClone(found);
}
