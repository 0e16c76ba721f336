/**
 * The package's interface, checked in: the names the root exports (each namespace's members, and
 * the deprecated aliases as one name each) are those of `PublicApi.names.txt`, and `package.json`
 * lists its subpaths by name. A name that appears or goes away fails here until the list is
 * updated with it, on purpose.
 */
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { rootModule } from "./fixtures/rootModule.js"

const root = fileURLToPath(new URL("..", import.meta.url))

/** The root's names, sorted: `Namespace.member`, or `Alias (deprecated)`. */
const rootNames = (): ReadonlyArray<string> => {
  const { checker, module } = rootModule()
  if (module === undefined) return []
  const names: Array<string> = []
  for (const symbol of checker.getExportsOfModule(module)) {
    const deprecated = (symbol.declarations ?? []).some((declaration) =>
      ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === "deprecated")
    )
    if (deprecated) {
      names.push(`${symbol.name} (deprecated)`)
      continue
    }
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
    for (const member of checker.getExportsOfModule(target)) names.push(`${symbol.name}.${member.name}`)
  }
  return names.sort()
}

const listed = readFileSync(new URL("./PublicApi.names.txt", import.meta.url), "utf8").split("\n")
  .filter((line) => line.length > 0)

describe("the public interface", () => {
  it("the root exports the names of PublicApi.names.txt, no more, no fewer, at most 150", () => {
    const names = rootNames()
    const added = names.filter((name) => !listed.includes(name))
    const removed = listed.filter((name) => !names.includes(name))
    assert.deepStrictEqual({ added, removed }, { added: [], removed: [] })
    assert.isAtMost(names.length, 150)
  })

  it("package.json lists its subpaths by name: no folder wildcard, one per root module", () => {
    const manifest: unknown = JSON.parse(readFileSync(`${root}package.json`, "utf8"))
    const exports = typeof manifest === "object" && manifest !== null && "exports" in manifest &&
        typeof manifest.exports === "object" && manifest.exports !== null
      ? Object.keys(manifest.exports)
      : []
    assert.isEmpty(exports.filter((path) => path.includes("*")))
    const modules = [
      ...new Set(rootNames().filter((name) => !name.endsWith("(deprecated)")).map((name) => name.split(".")[0]))
    ]
    for (const module of modules) assert.include(exports, `./${module}`, module)
  })
})
