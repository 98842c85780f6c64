// The clerk's page runs in the county offices' old browsers: Chromium 86 (360 Secure Browser 13)
// and 109 (Windows 7's last Chrome). The build lowers newer syntax (vite target chrome86); built-in
// functions it cannot lower, so these rules refuse any that Chromium 86 lacks, in the browser's
// code and in the shared modules it bundles. Prototype methods (`.at()`, `.findLast()`) are told
// apart by their receiver's type (type-aware lint). docs/decisions/old-chromium.md says why.
import esX from 'eslint-plugin-es-x';

const NEWER_THAN_CHROMIUM_86 = [
  'flat/no-new-in-es2022',
  'flat/no-new-in-es2022-intl-api',
  'flat/no-new-in-es2023',
  'flat/no-new-in-es2023-intl-api',
  'flat/no-new-in-es2024',
  'flat/no-new-in-es2024-intl-api',
  'flat/no-new-in-es2025',
  'flat/no-new-in-es2025-intl-api',
  'flat/no-new-in-es2026',
  'flat/no-new-in-es2026-intl-api',
  'flat/no-new-in-esnext',
  'flat/no-new-in-esnext-intl-api',
];

/** Syntax the build lowers for Chromium 86, so the code may use it. */
const LOWERED_BY_THE_BUILD = [
  'es-x/no-class-instance-fields',
  'es-x/no-class-private-fields',
  'es-x/no-class-private-methods',
  'es-x/no-class-static-block',
  'es-x/no-class-static-fields',
  'es-x/no-private-in',
];

const OLD_BROWSER = 'Chromium 86 (the county offices’ browsers) lacks it: see docs/decisions/old-chromium.md';

export const oldBrowserConfig = {
  files: ['client/src/**/*.{ts,tsx}', 'shared/**/*.ts'],
  ignores: ['**/*.test.ts'],
  plugins: { 'es-x': esX },
  rules: {
    ...Object.assign({}, ...NEWER_THAN_CHROMIUM_86.map((name) => esX.configs[name].rules)),
    ...Object.fromEntries(LOWERED_BY_THE_BUILD.map((rule) => [rule, 'off'])),
    // Web APIs that are no part of ECMAScript.
    'no-restricted-globals': [
      'error',
      { name: 'structuredClone', message: `structuredClone (Chromium 98): ${OLD_BROWSER}` },
      { name: 'reportError', message: `reportError (Chromium 95): ${OLD_BROWSER}` },
    ],
    'no-restricted-properties': [
      'error',
      { object: 'crypto', property: 'randomUUID', message: `crypto.randomUUID (Chromium 92): ${OLD_BROWSER}` },
      { object: 'AbortSignal', property: 'timeout', message: `AbortSignal.timeout (Chromium 103): ${OLD_BROWSER}` },
      { object: 'AbortSignal', property: 'any', message: `AbortSignal.any (Chromium 116): ${OLD_BROWSER}` },
    ],
  },
};
