/**
 * Every public export carries `@since` and a `@category` of the fixed set (the API reference groups
 * by category; `npm run docs` runs the same check, then docgen, which enforces `@since` and a
 * description and typechecks and runs the examples). Public: the files of `src/` outside
 * `internal/` folders and the command line.
 */
import { describe, expect, it } from "@effect/vitest"
import { fileURLToPath } from "node:url"
import { check, problems } from "../scripts/docgen/tags.js"

const root = fileURLToPath(new URL("..", import.meta.url))

describe("doc tags", () => {
  it("sees an export without its tags, or with a category outside the set", () => {
    const source = [
      "/**\n * @since 0.1.0\n */\nexport const a = 1",
      "export type B = string",
      "/**\n * @since 0.1.0\n * @category things\n */\nexport interface C {}",
      "/**\n * @since 0.1.0\n * @category models\n */\nexport declare namespace D {\n  export interface E {}\n}",
      "export {\n  /**\n   * @since 0.1.0\n   */\n  F\n} from \"./f.js\""
    ].join("\n\n")
    expect(problems("m.ts", source)).toEqual([
      "a: no @category",
      "B: no @since",
      "B: no @category",
      "C: @category things is not one of constructors, layers, tags, models, schemas, errors, config, constants, conversions, utils, deprecated",
      "D.E: no @since",
      "D.E: no @category",
      "F: no @category"
    ])
  })

  it("sees a re-export whose doc docgen would take from the module's comment", () => {
    const source = "/**\n * A module.\n *\n * @since 0.1.0\n */\n\n/** @since 0.1.0 */\nexport * as A from \"./a.js\"\n"
    expect(problems("index.ts", source)).toEqual(["\"./a.js\": docgen reads the module's comment as its doc"])
  })

  it("sees an @example docgen never checks: on a class, on a re-export", () => {
    const example = " * @example\n * ```ts\n * const x = 1\n * ```\n *\n"
    const source = [
      `/**\n${example} * @since 0.1.0\n * @category tags\n */\nexport class A {}`,
      `export {\n  /**\n${
        example.replaceAll(" * ", "   * ")
      }   * @since 0.1.0\n   * @category tags\n   */\n  B\n} from "./b.js"`,
      `/**\n${example} * @since 0.1.0\n * @category constants\n */\nexport const c = 1`
    ].join("\n\n")
    expect(problems("m.ts", source)).toEqual([
      "A: docgen neither typechecks nor runs an @example here",
      "B: docgen neither typechecks nor runs an @example here"
    ])
  })

  it("every public export has @since and a @category of the set", () => {
    expect(check(root)).toEqual([])
  })
})
