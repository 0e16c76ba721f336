/**
 * Every public export carries `@since` and `@category` (the API reference groups by category;
 * `npm run docs` enforces `@since` and typechecks the examples). Public: the files of `src/`
 * outside `internal/` folders and the command line.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { root } from "./fixtures/cli.js"

const publicFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "internal" || entry.name === "cli" ? [] : publicFiles(path)
    return entry.name.endsWith(".ts") ? [path] : []
  })

/** The exported declarations of `source` whose doc comment lacks `@since` or `@category`. */
export const untagged = (source: string): Array<string> => {
  const found: Array<string> = []
  for (
    const match of source.matchAll(/^export (?:declare )?(?:const|class|interface|type|function|namespace) (\w+)/gm)
  ) {
    const before = source.slice(0, match.index).trimEnd()
    const doc = before.endsWith("*/") ? before.slice(before.lastIndexOf("/**")) : ""
    const missing = ["@since", "@category"].filter((tag) => !doc.includes(tag))
    if (missing.length > 0) found.push(`${match[1]}: no ${missing.join(", ")}`)
  }
  return found
}

describe("doc tags", () => {
  it("sees an export without its tags", () => {
    expect(untagged("/**\n * @since 0.1.0\n */\nexport const a = 1\n\nexport type B = string\n")).toEqual([
      "a: no @category",
      "B: no @since, @category"
    ])
  })

  it("every public export has @since and @category", () => {
    const problems = publicFiles(join(root, "src")).flatMap((file) =>
      untagged(readFileSync(file, "utf8")).map((problem) => `${relative(root, file)}: ${problem}`)
    )
    expect(problems).toEqual([])
  })
})
