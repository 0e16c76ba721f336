// Lint and format rules: typescript-eslint plus Effect's dprint formatting rule, as in the Effect monorepo.
import effectPlugin from "@effect/eslint-plugin"
import js from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["dist/**", "api/**", "node_modules/**", "bench/results/**", ".readme-snippets-*/**", "**/*.mjs", "**/*.cjs"] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    files: ["**/*.ts"],
    plugins: { "@effect": effectPlugin },
    languageOptions: { parser: tseslint.parser },
    rules: {
      "no-unused-vars": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-empty-object-type": "off",
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/ban-ts-comment": "error",
      "@typescript-eslint/consistent-type-assertions": ["error", { assertionStyle: "never" }],
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.object.name='Effect'][callee.property.name=/^run(Promise|Sync|Fork|Callback)/]",
          message: "Effects are run only at entry points (src/cli) and in tests."
        }
      ],
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }]
    }
  },
  {
    files: ["src/cli/**/*.ts", "test/**/*.ts", "bench/**/*.ts", "examples/**/*.ts"],
    rules: { "no-restricted-syntax": "off" }
  }
)
