/**
 * The strategy that wrote a conversation is recorded with it: `context` and `inspect` read a
 * stored conversation with that strategy, unless `--strategy` says otherwise.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { bundled, cli, tempDir } from "./fixtures/cli.js"

const Context = Schema.parseJson(Schema.Struct({
  strategy: Schema.String,
  facts: Schema.Array(Schema.Struct({ key: Schema.String, value: Schema.String }))
}))

describe("CLI: the strategy that wrote a conversation", () => {
  it.scoped(
    "after replay --strategy hierarchical, context and inspect show its facts; --strategy overrides it",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const dataDir = join(dir, "db")
        const path = join(dir, "short.jsonl")
        writeFileSync(path, readFileSync(bundled, "utf8").split("\n").slice(0, 60).join("\n"))
        const replay = yield* cli([
          "replay",
          path,
          "--strategy",
          "hierarchical",
          "--data-dir",
          dataDir,
          "--conversation",
          "h"
        ])
        assert.strictEqual(replay.code, 0, replay.stderr)

        // No --strategy (the default would be summarization): the recorded one.
        const context = yield* cli(["context", "h", "--data-dir", dataDir, "--json"])
        assert.strictEqual(context.code, 0, context.stderr)
        const recorded = Schema.decodeUnknownSync(Context)(context.stdout)
        assert.strictEqual(recorded.strategy, "hierarchical")
        assert.isAbove(recorded.facts.length, 0)

        const shown = yield* cli(["context", "h", "--data-dir", dataDir])
        assert.strictEqual(shown.code, 0, shown.stderr)
        assert.match(shown.stdout, /\(hierarchical, [^)]*, [1-9]\d* facts,/)
        for (const fact of recorded.facts) assert.include(shown.stdout, fact.value)

        const inspect = yield* cli(["inspect", "h", "--data-dir", dataDir])
        assert.strictEqual(inspect.code, 0, inspect.stderr)
        assert.include(inspect.stdout, "hierarchical (recorded by the writer of the conversation)")
        // The state's facts: those the context shows, and those it leaves to the turns it shows.
        const stored = Number(/Facts \((\d+)\):/.exec(inspect.stdout)?.[1] ?? "0")
        assert.isAtLeast(stored, recorded.facts.length)
        for (const fact of recorded.facts) assert.include(inspect.stdout, fact.value)

        // Told otherwise, by flag or by variable.
        const told = yield* cli(["context", "h", "--data-dir", dataDir, "--strategy", "summarization", "--json"])
        assert.strictEqual(told.code, 0, told.stderr)
        const overridden = Schema.decodeUnknownSync(Context)(told.stdout)
        assert.deepStrictEqual([overridden.strategy, overridden.facts.length], ["summarization", 0])
        const byVariable = yield* cli(["context", "h", "--data-dir", dataDir, "--json"], {
          env: { MEMORY_STRATEGY: "sliding-window" }
        })
        assert.strictEqual(byVariable.code, 0, byVariable.stderr)
        assert.strictEqual(Schema.decodeUnknownSync(Context)(byVariable.stdout).strategy, "sliding-window")
      })
  )
})
