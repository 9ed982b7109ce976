// ESLint over the JavaScript and TypeScript the repository writes: the package (js/), the JS and
// end-to-end tests, the benchmarks and the type-usage check. Recommended rules only, plus a few
// that catch real mistakes; formatting is prettier's (`make lint` runs both).
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default [
  {
    ignores: [
      "**/node_modules/",
      "pkg/",
      "pkg-embed/",
      "pkg-edit/",
      "npm/",
      "npm-embed/pkg-embed/",
      "npm-embed/models/",
      "target/",
      "fuzz/",
      "models/",
      "bench/out/",
      "tests/data/",
    ],
  },
  {
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    ...js.configs.recommended,
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: "module",
      globals: { ...globals.node, Bun: "readonly" },
    },
    rules: {
      ...js.configs.recommended.rules,
      // `_name` marks a parameter a host's callback signature forces on us.
      "no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true },
      ],
      eqeqeq: ["error", "always", { null: "ignore" }],
      "no-var": "error",
      "prefer-const": ["error", { destructuring: "all" }],
    },
  },
  ...tseslint.configs.recommended.map((c) => ({ ...c, files: ["**/*.ts"] })),
];
