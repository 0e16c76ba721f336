/**
 * `npm run figures`: writes the generated blocks of docs/performance.md, docs/evaluation.md and
 * README.md from the committed runs (`figures/bench.json`, `figures/eval/*.json`).
 */
import { FileSystem } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { replace } from "./blocks.js"
import { documents, inRoot } from "./files.js"
import { load } from "./load.js"
import { render } from "./render.js"

const main = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const blocks = render(yield* load)
  for (const document of documents) {
    const text = yield* fs.readFileString(inRoot(document))
    const mine = new Map(blocks.filter((b) => b.document === document).map((b) => [b.name, b.text]))
    const written = yield* replace(document, text, mine)
    if (written !== text) yield* fs.writeFileString(inRoot(document), written)
    yield* Console.log(`${document}: ${mine.size} blocks${written === text ? ", unchanged" : " written"}`)
  }
})

NodeRuntime.runMain(main.pipe(Effect.provide(NodeContext.layer)))
