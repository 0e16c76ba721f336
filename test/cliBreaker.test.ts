/**
 * The command line with a summarizer it cannot use: a server that refuses connections ends
 * `replay` (the breaker opens) with the cause named and every message stored, and a summarizer
 * model with nothing to reach it is refused before anything runs.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { bundled, cli, errorLines, tempDir } from "./fixtures/cli.js"

const messages = readFileSync(bundled, "utf8").split("\n").filter((line) => line.trim().length > 0).length

const Inspected = Schema.parseJson(Schema.Struct({
  conversation: Schema.Struct({ messageCount: Schema.Int, lastSeq: Schema.Int }),
  summaryState: Schema.Struct({ cursor: Schema.Int })
}))

describe("CLI: a summarizer that keeps failing", () => {
  it.scoped(
    "replay ends, naming the server and the cause, and stores every message",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const dataDir = join(dir, "db")
        // Nothing listens on port 1: every call is refused at once.
        const url = "http://127.0.0.1:1/v1"
        const run = yield* cli(["replay", "--data-dir", dataDir, "--conversation", "refused"], {
          env: { OPENAI_BASE_URL: url }
        })
        assert.notStrictEqual(run.code, 0)
        assert.strictEqual(run.stdout, "")
        const [error, ...more] = errorLines(run)
        assert.deepStrictEqual(more, [], run.stderr)
        for (
          const mention of [
            "replay stopped",
            url,
            "connection refused",
            "5 summarizations in a row",
            `all ${messages} messages are stored`,
            "OPENAI_BASE_URL"
          ]
        ) assert.include(error, mention)
        assert.notMatch(run.stderr, /\n\s+at /)

        // Nothing lost: the store holds the whole transcript, nothing summarized.
        const inspect = yield* cli(["inspect", "refused", "--data-dir", dataDir, "--json"])
        assert.strictEqual(inspect.code, 0, inspect.stderr)
        const state = Schema.decodeUnknownSync(Inspected)(inspect.stdout)
        assert.deepStrictEqual([state.conversation.messageCount, state.conversation.lastSeq], [messages, messages])
        assert.strictEqual(state.summaryState.cursor, 0)
      })
  )
})

describe("CLI: a summarizer model with nothing to reach it", () => {
  for (
    const [label, args, env] of [
      ["by flag", ["--summarizer-model", "llama3.1"], {}],
      ["by variable", [], { MEMORY_SUMMARIZER_MODEL: "llama3.1" }]
    ] as const
  ) {
    it.live(`${label}: a configuration error naming it and what to set`, () =>
      Effect.gen(function*() {
        const run = yield* cli(["replay", "--store", "memory", ...args], { env })
        assert.notStrictEqual(run.code, 0)
        assert.strictEqual(run.stdout, "")
        const lines = run.stderr.split("\n").filter((line) => line.trim().length > 0)
        assert.strictEqual(lines.length, 1, run.stderr)
        for (
          const mention of ["MEMORY_SUMMARIZER_MODEL (--summarizer-model)", "OPENAI_API_KEY", "OPENAI_BASE_URL"]
        ) assert.include(lines[0], mention)
      }))
  }
})
