/**
 * The documents' figures come from the committed runs: every generated block of
 * docs/performance.md, docs/evaluation.md and README.md is what `npm run figures` writes from
 * `figures/bench.json` and `figures/eval/*.json`, so a table edited by hand, or a run committed
 * without the script, fails here. The headline's links lead to headings that exist.
 */
import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Blocks from "../scripts/figures/blocks.js"
import { documents, inRoot } from "../scripts/figures/files.js"
import { load } from "../scripts/figures/load.js"
import { render } from "../scripts/figures/render.js"

/** GitHub's anchor of a heading: lower case, punctuation but hyphens dropped, spaces as hyphens. */
const anchor = (heading: string): string =>
  heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s-]/gu, "").replace(/\s/g, "-")

describe("generated figures", () => {
  it.effect("every generated block is what npm run figures writes from the committed runs", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const blocks = render(yield* load)
      for (const document of documents) {
        const found = Blocks.read(yield* fs.readFileString(inRoot(document)))
        const written = blocks.filter((block) => block.document === document)
        assert.deepStrictEqual(
          [...found.keys()].sort(),
          written.map((block) => block.name).sort(),
          `${document}: its generated blocks`
        )
        for (const block of written) {
          assert.strictEqual(
            found.get(block.name),
            block.text,
            `${document}, block ${block.name}: not what npm run figures writes from figures/ (run it)`
          )
        }
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("the headline's links lead to a page and a heading that exist", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const headline = render(yield* load).find((block) => block.name === "headline")?.text ?? ""
      const links = [...headline.matchAll(/\]\((docs\/[^)#]+)#([^)]+)\)/g)]
      assert.isAbove(links.length, 0)
      for (const [, page = "", heading = ""] of links) {
        const text = yield* fs.readFileString(inRoot(page))
        const anchors = [...text.matchAll(/^#+ (.+)$/gm)].map(([, title = ""]) => anchor(title))
        assert.include(anchors, heading, `${page}#${heading}`)
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  it("replaces each block between its markers, and refuses a block nothing writes or one without markers", () => {
    const text = "a\n<!-- generated:one -->\nold\n<!-- /generated:one -->\nb\n<!-- generated:two -->\n" +
      "<!-- /generated:two -->\n"
    const replaced = Blocks.replace("doc.md", text, new Map([["one", "new\ntable"], ["two", "x"]]))
    assert.deepStrictEqual(
      replaced,
      Either.right(
        "a\n<!-- generated:one -->\nnew\ntable\n<!-- /generated:one -->\nb\n<!-- generated:two -->\nx\n" +
          "<!-- /generated:two -->\n"
      )
    )
    assert.deepStrictEqual(
      Either.map(replaced, Blocks.read),
      Either.right(new Map([["one", "new\ntable"], ["two", "x"]]))
    )
    const stale = Blocks.replace("doc.md", text, new Map([["one", "new"]]))
    assert.deepStrictEqual(
      Either.map(Either.flip(stale), (e) => e.message),
      Either.right("doc.md: blocks nothing writes: two")
    )
    const missing = Blocks.replace("doc.md", text, new Map([["one", ""], ["two", ""], ["three", ""]]))
    assert.deepStrictEqual(
      Either.map(Either.flip(missing), (e) => e.message),
      Either.right("doc.md: no markers for three")
    )
  })
})
