// Lint rules for the whole repository: the recommended JS and typescript-eslint sets, no unused
// code, and no import cycles. Kept modest on purpose so parallel branches merge without a flood.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX, createNodeResolver } from 'eslint-plugin-import-x';
import globals from 'globals';

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
  {
    // Redis connections, scripts and cluster keys live in @reelay/redis (packages/redis): nothing else
    // opens an ioredis client, so every one has the same timeouts, duplicates and failure handling.
    files: ['**/*.{ts,js,mjs}'],
    ignores: ['packages/redis/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'ioredis', message: 'Use @reelay/redis (tests: testRedisClient from @reelay/testkit).' }] },
      ],
    },
  },
  {
    // The web app runs in the browser, not in node.
    files: ['apps/gateway/web/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
