/**
 * The previous version's root names point to the new ones: each deprecated alias's note says
 * "Use `Name`", and `Name` is a root export of the same module, not itself deprecated.
 */
import { assert, describe, it } from "@effect/vitest"
import ts from "typescript"
import { rootModule } from "./fixtures/rootModule.js"

/** The root's exports: each one's module, and its deprecation note if it has one. */
const rootExports = () => {
  const { checker, module } = rootModule()
  if (module === undefined) return new Map<string, { readonly target: ts.Symbol; readonly note?: string }>()
  return new Map(
    checker.getExportsOfModule(module).map((symbol) => {
      const tag = (symbol.declarations ?? []).flatMap((declaration) => ts.getJSDocTags(declaration))
        .find((tag) => tag.tagName.text === "deprecated")
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
      return [
        symbol.name,
        tag === undefined ? { target } : { target, note: ts.getTextOfJSDocComment(tag.comment) ?? "" }
      ]
    })
  )
}

describe("the previous version's names", () => {
  it("each deprecated root name says to use a root name of the same module", () => {
    const exports = rootExports()
    const pointers = [...exports].flatMap(([name, { note, target }]) => {
      if (note === undefined) return []
      const use = /^Use `([A-Za-z]+)`/.exec(note)?.[1]
      const replacement = use === undefined ? undefined : exports.get(use)
      return [{
        name,
        use,
        sameModule: replacement?.target === target,
        replacementDeprecated: replacement?.note !== undefined
      }]
    })
    for (const pointer of pointers) {
      assert.deepStrictEqual(
        pointer,
        { name: pointer.name, use: pointer.use ?? "(none)", sameModule: true, replacementDeprecated: false }
      )
    }
    assert.deepStrictEqual(
      Object.fromEntries(pointers.map(({ name, use }) => [name, use])),
      {
        ChatMemoryVariables: "ChatMemoryConfig",
        MemoryRepository: "MemoryStore",
        PgRepository: "PgStore",
        SettingsRepository: "SettingsStore",
        SqlRepository: "SqlStore",
        Storage: "Store",
        SummarizationOptions: "SummarizationStrategy",
        SummaryRepository: "SummaryStore"
      }
    )
  })
})
