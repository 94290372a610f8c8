// A tiny app using the locale files the way i18next does: nested keys, {{name}} interpolation and
// plural keys chosen with Intl.PluralRules. `node app.js es` shows the Spanish UI once translated.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), 'locales');

function load(locale) {
  const directory = join(root, locale);
  if (!existsSync(directory)) throw new Error(`no ${locale} locale yet: run \`mt-eval-locales\` (see README.md)`);
  return Object.fromEntries(readdirSync(directory).filter((f) => f.endsWith('.json'))
    .map((f) => [f.slice(0, -5), JSON.parse(readFileSync(join(directory, f), 'utf8'))]));
}

function translator(locale) {
  const namespaces = load(locale);
  const english = load('en');
  const plural = new Intl.PluralRules(locale);
  const lookup = (tree, path) => path.reduce((node, key) => node?.[key], tree);
  return (key, values = {}) => {
    const [namespace, rest] = key.includes(':') ? key.split(':') : ['common', key];
    let path = rest.split('.');
    if (values.count !== undefined) {
      const last = path.at(-1);
      const form = [`${last}_${plural.select(values.count)}`, `${last}_other`].find((k) => lookup(namespaces[namespace], [...path.slice(0, -1), k]));
      if (form) path = [...path.slice(0, -1), form];
    }
    const text = lookup(namespaces[namespace], path) ?? lookup(english[namespace], path) ?? key;
    return text.replace(/\{\{\s*(\w+)\s*\}\}|\{(\w+)\}/g, (match, a, b) => String(values[a ?? b] ?? match));
  };
}

const t = translator(process.argv[2] ?? 'en');
console.log(t('app.title'), '—', t('app.tagline'));
console.log(t('greeting', { name: 'Ada' }));
console.log(t('inbox', { count: 1 }), '/', t('inbox', { count: 5 }));
console.log(t('recipes:count', { count: 12 }), '·', t('recipes:servings', { count: 4 }));
console.log(t('recipes:updated', { date: '2024-05-01', author: 'Ada' }));
