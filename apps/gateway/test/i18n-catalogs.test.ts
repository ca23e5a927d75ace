// The web app's message catalogs (apps/gateway/web/locales/<language>/<namespace>.json) hold together:
// every language has English's namespaces and keys (plurals in the forms its own grammar needs), no
// empty strings, the same {{placeholders}} and <0>tags</0>; and every key the pages name exists.
import { describe, expect, test } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import { WEB_DIR } from '../src/routes/web.js';

const LOCALES = path.join(WEB_DIR, 'locales');
const PLURAL = /_(zero|one|two|few|many|other)$/;

type Catalog = Record<string, string>;

function languages(): string[] {
  return fs
    .readdirSync(LOCALES)
    .filter((name) => fs.statSync(path.join(LOCALES, name)).isDirectory())
    .sort();
}

function catalogs(language: string): Record<string, Catalog> {
  const dir = path.join(LOCALES, language);
  return Object.fromEntries(
    fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => [f.replace(/\.json$/, ''), JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Catalog]),
  );
}

/** Keys without their plural suffix, each with the plural forms it has (none for a plain key). */
function baseKeys(catalog: Catalog): Map<string, Set<string>> {
  const keys = new Map<string, Set<string>>();
  for (const key of Object.keys(catalog)) {
    const form = PLURAL.exec(key);
    const base = form ? key.slice(0, form.index) : key;
    if (!keys.has(base)) keys.set(base, new Set());
    if (form) keys.get(base)!.add(form[1]);
  }
  return keys;
}

/** What a translation must keep: its {{placeholders}} and <n> tags (count is the plural's, optional). */
function markers(text: string): string[] {
  const found = [...text.matchAll(/\{\{\s*(\w+)\s*\}\}|<(\d+)\/?>/g)].map((m) => (m[1] ? `{{${m[1]}}}` : `<${m[2]}>`));
  return [...new Set(found)].filter((m) => m !== '{{count}}').sort();
}

/** Every 'ns:key' a page names: string literals in the scripts, data-i18n and data-i18n-attr in the HTML. */
function usedKeys(): Map<string, string[]> {
  const used = new Map<string, string[]>();
  const add = (key: string, file: string) => used.set(key, [...(used.get(key) ?? []), file]);
  // The pages, their scripts and the partials the gateway puts into every page (the top bar).
  const files = [
    ...fs.readdirSync(WEB_DIR),
    ...fs.readdirSync(path.join(WEB_DIR, 'partials')).map((f) => `partials/${f}`),
  ];
  for (const file of files.filter((f) => /\.(js|html)$/.test(f))) {
    const text = fs.readFileSync(path.join(WEB_DIR, file), 'utf8');
    for (const m of text.matchAll(/['"`]((?:common|front|playground|settings):[A-Za-z0-9_.-]+)['"`]/g)) add(m[1], file);
    for (const m of text.matchAll(/data-i18n-attr="([^"]+)"/g)) {
      for (const pair of m[1].split(';')) {
        const key = pair.trim().split(':').slice(1).join(':');
        if (/^(?:common|front|playground|settings):/.test(key)) add(key, file); // (not the doc comments' "ns:key")
      }
    }
  }
  return used;
}

describe('the web app catalogs', () => {
  const english = catalogs('en');

  test('there is English and at least one more language, and i18n.js and shell.js offer exactly those', () => {
    const all = languages();
    expect(all).toContain('en');
    expect(all.length).toBeGreaterThan(1);
    const offered = (file: string, pattern: RegExp) =>
      JSON.parse(pattern.exec(fs.readFileSync(path.join(WEB_DIR, file), 'utf8'))![1].replace(/'/g, '"')) as string[];
    expect(offered('i18n.js', /export const LANGUAGES = (\[[^\]]*\])/).sort()).toEqual(all);
    expect(offered('shell.js', /const ours = (\[[^\]]*\])/).sort()).toEqual(all);
    for (const lng of all) expect(english.common[`language.${lng}`]).toBeTruthy();
  });

  test.each(languages().filter((lng) => lng !== 'en'))(
    '%s has every namespace and key of English, in its own plural forms',
    (lng) => {
      const other = catalogs(lng);
      expect(Object.keys(other).sort()).toEqual(Object.keys(english).sort());
      const forms = new Intl.PluralRules(lng).resolvedOptions().pluralCategories;
      for (const [ns, catalog] of Object.entries(english)) {
        const mine = baseKeys(other[ns]);
        const theirs = baseKeys(catalog);
        expect({ ns, keys: [...mine.keys()].sort() }).toEqual({ ns, keys: [...theirs.keys()].sort() });
        for (const [key, plural] of theirs) {
          if (plural.size)
            expect({ key: `${ns}:${key}`, forms: [...mine.get(key)!].sort() }).toEqual({
              key: `${ns}:${key}`,
              forms: [...forms].sort(),
            });
          else expect(mine.get(key)!.size).toBe(0);
        }
      }
    },
  );

  test.each(languages())('%s has no empty strings, and keeps the placeholders and tags of English', (lng) => {
    for (const [ns, catalog] of Object.entries(catalogs(lng))) {
      for (const [key, text] of Object.entries(catalog)) {
        expect({ key: `${ns}:${key}`, type: typeof text, empty: String(text).trim() === '' }).toEqual({
          key: `${ns}:${key}`,
          type: 'string',
          empty: false,
        });
        const base = key.replace(PLURAL, '');
        const source = english[ns][key] ?? english[ns][`${base}_other`] ?? english[ns][base];
        expect({ key: `${ns}:${key}`, markers: markers(text) }).toEqual({
          key: `${ns}:${key}`,
          markers: markers(source),
        });
      }
    }
  });

  test('every key named in the pages and scripts is in the catalogs', () => {
    const missing: string[] = [];
    for (const [key, files] of usedKeys()) {
      const [ns, name] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
      const catalog = english[ns] ?? {};
      if (!(name in catalog) && !(`${name}_other` in catalog))
        missing.push(`${key} (${[...new Set(files)].join(', ')})`);
    }
    expect(missing).toEqual([]);
    // The scan finds the keys at all (a broken pattern would pass vacuously).
    expect(usedKeys().size).toBeGreaterThan(100);
  });
});

describe('what the pages call themselves', () => {
  test('More options has one name: no catalog calls it "the playground" ("Spielwiese"), nor says "freiwillig" for optional', () => {
    const words = (lng: string) =>
      Object.entries(catalogs(lng)).flatMap(([ns, catalog]) =>
        Object.entries(catalog).map(([key, text]) => [`${lng}/${ns}:${key}`, text] as const),
      );
    const stale = [...words('en'), ...words('de')].filter(([, text]) => /playground|spielwiese|freiwillig/i.test(text));
    expect(stale).toEqual([]);
    for (const lng of ['en', 'de']) {
      expect(catalogs(lng).common['nav.more']).toBe(catalogs(lng).playground.heading);
    }
  });

  test("the web app's docs call it More options too (the word playground only as code: /api/playground)", () => {
    const docs = path.resolve(WEB_DIR, '../../../docs');
    const stale = ['web-app.md', 'README.md'].flatMap((file) =>
      fs
        .readFileSync(path.join(docs, file), 'utf8')
        .split('\n')
        .filter((line) => /playground/i.test(line.replace(/`[^`]*`/g, '')))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(stale).toEqual([]);
  });
});
