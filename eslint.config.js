// Lint rules for the whole repository: the recommended JS and typescript-eslint sets, no unused
// code, and no import cycles. Kept modest on purpose so parallel branches merge without a flood.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX, createNodeResolver } from 'eslint-plugin-import-x';
import globals from 'globals';

// Parsers (and builders) of XML, HLS, DASH and feeds on npm, as import patterns (gitignore syntax).
const XML_AND_PLAYLIST_PARSERS = [
  'fast-xml-parser',
  'fast-xml-builder',
  'hls-parser',
  'm3u8-parser',
  'mpd-parser',
  'm3u8',
  '@eyevinn/hls-*',
  'xml2js',
  'xml-js',
  'xmlbuilder',
  'xmlbuilder2',
  'sax',
  'saxes',
  'txml',
  'xmldom',
  '@xmldom/*',
  'libxmljs*',
  'rss-parser',
  'feedparser',
  '@rowanmanning/feed-parser',
  '@extractus/feed-extractor',
];
/** The same names for a dynamic import(), as an esquery regular expression (which cannot hold a '/'). */
const PARSER_NAMES = `/^(${XML_AND_PLAYLIST_PARSERS.map((name) =>
  name
    .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\//g, '.'),
).join('|')})(\\W|$)/`;
const SOLE_READER =
  'Manifests, playlists and feeds are read (and XML is built) only in @reelay/manifests: import its reader instead.';

/**
 * Libraries one package owns: nothing outside its folder imports them. @reelay/manifests is the one
 * reader of HLS playlists, DASH manifests and feeds, under one set of limits (its limits.ts), and the
 * one place XML is built; @reelay/redis opens every Redis connection, so each has the same timeouts,
 * duplicates and failure handling.
 */
const OWNED_IMPORTS = [
  {
    owner: 'packages/manifests/**',
    restriction: { patterns: [{ group: XML_AND_PLAYLIST_PARSERS, message: SOLE_READER }] },
  },
  {
    owner: 'packages/redis/**',
    restriction: {
      paths: [{ name: 'ioredis', message: 'Use @reelay/redis (tests: testRedisClient from @reelay/testkit).' }],
    },
  },
];

/**
 * One `no-restricted-imports` per scope (a later block would replace an earlier one's rule, not add
 * to it): each owner's folder is held to the others' restrictions, everything else to all of them.
 */
function ownedImportBlocks() {
  const rule = (entries) => ({
    'no-restricted-imports': [
      'error',
      {
        paths: entries.flatMap((e) => e.restriction.paths ?? []),
        patterns: entries.flatMap((e) => e.restriction.patterns ?? []),
      },
    ],
  });
  return [
    { files: ['**/*.{ts,js,mjs}'], ignores: OWNED_IMPORTS.map((e) => e.owner), rules: rule(OWNED_IMPORTS) },
    ...OWNED_IMPORTS.map((own) => ({
      files: [`${own.owner.replace(/\*\*$/, '')}**/*.{ts,js,mjs}`],
      rules: rule(OWNED_IMPORTS.filter((e) => e !== own)),
    })),
  ];
}

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'coverage/**', 'data/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    languageOptions: { globals: { ...globals.node } },
    settings: {
      // import-x only reads modules whose extension it knows; TypeScript sources must be listed.
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      // Sources import './x.js' that is really './x.ts' (NodeNext); the alias lets no-cycle follow them.
      'import-x/resolver-next': [
        createNodeResolver({ extensions: ['.ts', '.js', '.mjs', '.json'], extensionAlias: { '.js': ['.ts', '.js'] } }),
      ],
    },
    rules: {
      // Skips `import type` by design: packages/egress/test/import-cycles.test.ts covers type-only circles.
      'import-x/no-cycle': 'error',
      // Several sanitizers strip control characters on purpose (headers, filenames, yt-dlp output).
      'no-control-regex': 'off',
      // `declare global { namespace Express … }` is how Express's Request type is augmented.
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  // Each sole owner's imports, refused everywhere else (see OWNED_IMPORTS).
  ...ownedImportBlocks(),
  {
    // @reelay/manifests is the one reader of HLS playlists, DASH manifests and feeds, under one set
    // of limits (its limits.ts): nor may another package load a parser by import() or run htmlparser2
    // as one. Tested by packages/manifests/test/sole-reader.test.ts.
    files: ['**/*.{ts,js,mjs}'],
    ignores: ['packages/manifests/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: `ImportExpression[source.value=${PARSER_NAMES}]`, message: SOLE_READER },
        { selector: "Property[key.name='xmlMode']", message: SOLE_READER },
      ],
    },
  },
  {
    // The web app runs in the browser, not in node.
    files: ['apps/gateway/web/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
