/**
 * Every fault names its cause in one line: a refused connection (the store over the app's own
 * `SqlClient` as the `postgres` store), a missing optional peer (its install line, on every layer
 * that loads it), and a `Prompt` given where messages are expected (pass `prompt.content`) or as
 * `ChatTurn`'s user message (pass its text).
 */
import { LanguageModel, Prompt } from "@effect/ai"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Stream } from "effect"
import { describe as oneLine } from "../src/cli/Errors.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ChatTurn from "../src/layers/ChatTurn.js"
import { spawnCli, spawnScript } from "./fixtures/cli.js"

const refused = "postgres://memory:memory@127.0.0.1:1/memory"

/** What building `layer` fails with, as its message and as the command line prints it. */
const failureOf = <A, E extends { readonly message: string }>(layer: Layer.Layer<A, E>) =>
  Effect.map(Effect.flip(Effect.scoped(Layer.build(layer))), (error) => ({
    message: error.message,
    printed: oneLine(error)
  }))

/** The lines the fixture prints with `peers` hidden, by layer. */
const withHidden = (peers: ReadonlyArray<string>) =>
  Effect.map(
    spawnScript("test/fixtures/missingPeers.ts", [], {
      env: { HIDE_PEERS: peers.join(",") },
      node: ["--import", "./test/fixtures/hidePeers.mjs"]
    }),
    (run) =>
      new Map(
        run.stdout.trim().split("\n").map((line) => {
          const at = line.indexOf(": ")
          return [line.slice(0, at), line.slice(at + 2)] as const
        })
      )
  )

/** The service as a JavaScript caller sees it: any value goes in (method parameters are bivariant). */
interface Untyped {
  addMessages(conversationId: string, messages: unknown): Effect.Effect<unknown, { readonly message: string }>
}

/** `ChatTurn` as a JavaScript caller sees it. */
interface UntypedTurn {
  generateText(
    conversationId: string,
    options: { readonly prompt: unknown; readonly system?: unknown }
  ): Effect.Effect<unknown, { readonly message: string }, LanguageModel.LanguageModel | ChatMemory.ChatMemoryService>
}

/** A model that must not be called: the turns below are refused before any call. */
const NoModel = Layer.effect(
  LanguageModel.LanguageModel,
  LanguageModel.make({
    generateText: () => Effect.dieMessage("no model call expected"),
    streamText: () => Stream.dieMessage("no model call expected")
  })
)

describe("fault messages", () => {
  it.effect(
    "a refused connection names the driver's reason, with the app's SqlClient as with the postgres store",
    () =>
      Effect.gen(function*() {
        const line = "Store failure during connect: connection refused (connect ECONNREFUSED 127.0.0.1:1)"
        const sql = yield* failureOf(ChatMemory.layerLive({
          store: { _tag: "sql", layer: PgClient.layer({ url: Redacted.make(refused) }) }
        }))
        const postgres = yield* failureOf(
          ChatMemory.layerLive({ store: { _tag: "postgres", url: Redacted.make(refused) } })
        )
        assert.deepStrictEqual(sql, { message: line, printed: line })
        assert.deepStrictEqual(postgres, { message: line, printed: line })
      }),
    30_000
  )

  it.effect(
    "a missing optional peer gives its install line on every layer that loads it",
    () =>
      Effect.gen(function*() {
        const pglite = yield* withHidden(["@electric-sql/pglite"])
        const install = "@electric-sql/pglite could not be loaded: install it beside effect-chat-memory " +
          "(npm install @electric-sql/pglite@^0.5.14) to use this layer"
        for (
          const name of [
            "layerLive pglite",
            "layerLive sql over PgliteClient",
            "layerConfig MEMORY_STORE=pglite",
            "PgStore.layerPglite"
          ]
        ) {
          assert.strictEqual(pglite.get(name), `Store failure during connect: ${install}`, name)
        }
        assert.strictEqual(pglite.get("PgliteClient.layer"), install)
        assert.strictEqual(pglite.get("layerLive exact tokenizer"), "built")
        // The command line, whose default store is PGlite: the same line, and nothing else said.
        const replay = yield* spawnCli(["replay"], {
          env: { HIDE_PEERS: "@electric-sql/pglite" },
          node: ["--import", "./test/fixtures/hidePeers.mjs"]
        })
        assert.deepStrictEqual([replay.code, replay.stderr.trim()], [
          1,
          `error: Store failure during connect: ${install}`
        ])

        const others = yield* withHidden(["@effect/sql-pg", "gpt-tokenizer"])
        const sqlPg = "@effect/sql-pg could not be loaded: install it beside effect-chat-memory " +
          "(npm install @effect/sql-pg@^0.53.0) to use this layer"
        for (const name of ["layerLive postgres", "layerConfig MEMORY_STORE=postgres", "PgStore.layer"]) {
          assert.strictEqual(others.get(name), `Store failure during connect: ${sqlPg}`, name)
        }
        const tokenizer = "gpt-tokenizer could not be loaded: install it beside effect-chat-memory " +
          "(npm install gpt-tokenizer@^2.9.0) to use this layer"
        assert.strictEqual(others.get("layerLive exact tokenizer"), tokenizer)
        assert.strictEqual(others.get("layerConfig MEMORY_TOKENIZER=exact"), tokenizer)
      }),
    120_000
  )

  it.effect("a Prompt given as the messages, or as one of them, says to pass prompt.content; nothing is stored", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemory.ChatMemoryService
      const untyped: Untyped = memory
      const prompt = Prompt.make([{ role: "user", content: "hi" }])
      const whole = yield* Effect.flip(untyped.addMessages("c", prompt))
      assert.strictEqual(
        whole.message,
        "ChatMemoryService.addMessages: invalid messages: must be a list of messages, not an @effect/ai Prompt: " +
          "pass prompt.content (the messages not stored yet)"
      )
      const one = yield* Effect.flip(untyped.addMessages("c", [prompt]))
      assert.strictEqual(
        one.message,
        "ChatMemoryService.addMessages: invalid messages[0]: must be a message, not an @effect/ai Prompt: " +
          "pass its messages, ...prompt.content (the messages not stored yet)"
      )
      assert.strictEqual((yield* Effect.flip(memory.getMessages("c")))._tag, "ConversationNotFoundError")
      // Its content is what to pass.
      assert.lengthOf(yield* memory.addMessages("c", prompt.content), 1)
    }).pipe(Effect.provide(ChatMemory.layerTest())))

  it.effect("a Prompt given to ChatTurn as the user's message or the system prompt says what to pass", () =>
    Effect.gen(function*() {
      const turns: UntypedTurn = ChatTurn
      const prompt = Prompt.make([{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }])
      const asPrompt = yield* Effect.flip(turns.generateText("t", { prompt }))
      assert.strictEqual(
        asPrompt.message,
        "ChatTurn.generateText: invalid options.prompt: must be the user's message as a string, not an " +
          "@effect/ai Prompt: pass the text of its last user message (the memory brings the history)"
      )
      const asSystem = yield* Effect.flip(turns.generateText("t", { prompt: "hi", system: prompt }))
      assert.strictEqual(
        asSystem.message,
        "ChatTurn.generateText: invalid options.system: must be a string, not an @effect/ai Prompt: " +
          "pass the text of its system message"
      )
      const memory = yield* ChatMemory.ChatMemoryService
      assert.strictEqual((yield* Effect.flip(memory.getMessages("t")))._tag, "ConversationNotFoundError")
    }).pipe(Effect.provide(Layer.merge(ChatMemory.layerTest(), NoModel))))
})
