/**
 * The SQL store on PGlite: the contracts of every storage port, hostile content, the in-memory
 * reference's answers, and a restart on the same data directory.
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ConversationSettings } from "../src/domain/ConversationSettings.js"
import * as PgStore from "../src/layers/store/PgStore.js"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import * as Store from "../src/layers/store/Store.js"
import { contextSettingsContract } from "./contracts/ContextSettingsContract.js"
import { recallContract } from "./contracts/RecallContract.js"
import { storeContract } from "./contracts/StoreContract.js"
import { differentialTests } from "./fixtures/differential.js"
import { hostileContentTests } from "./fixtures/hostile.js"
import { freshId, newMessage } from "./fixtures/messages.js"
import { pgliteClient, pgliteRepository } from "./fixtures/pglite.js"

storeContract("pglite", pgliteRepository())
contextSettingsContract("pglite", pgliteRepository())
recallContract("pglite", pgliteRepository())

layer(pgliteRepository())("SqlStore on PGlite", (it) => {
  hostileContentTests(it)
  differentialTests(it)
})

/** Runs `f` with a store on `dataDir`, closing the database afterwards. */
const withRepository = <A, E>(
  dataDir: string,
  f: (store: Store.Store) => Effect.Effect<A, E>
) =>
  Effect.scoped(
    Effect.flatMap(
      Layer.build(PgStore.layerPglite({ dataDir })),
      (context) => Effect.flatMap(Effect.provide(Store.get, context), f)
    )
  )

describe("PGlite with a data directory", () => {
  it.scoped(
    "a new layer on the same directory reads everything back, summary state included",
    () =>
      Effect.gen(function*() {
        const dataDir = mkdtempSync(join(tmpdir(), "chat-memory-pglite-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
        const id = freshId("restart")
        const written = yield* withRepository(dataDir, (store) =>
          Effect.gen(function*() {
            yield* store.repository.appendMessages(id, [
              newMessage("system", "You are terse.", {}, 5),
              newMessage("assistant", "Hi! Order number?", { modelVariant: "mini" }, 6),
              newMessage("user", "ORD-2024-10042", {}, 7),
              newMessage("assistant", "Found it.", {}, 4),
              newMessage("user", "Move it to Friday", { attributes: { slot: { day: "fri", dock: 3 } } }, 8),
              newMessage("assistant", "Moved.", {}, 3)
            ])
            const committed = yield* store.summaries.commitSummary({
              conversationId: id,
              expected: { cursor: 0, version: 0 },
              narrative: "The user asked about order ORD-2024-10042.",
              facts: [{ key: "order", value: "ORD-2024-10042", category: "ENTITY", confidence: 0.9, sourceSeqs: [3] }],
              layers: [{ fromSeq: 2, toSeq: 4, text: "order lookup", tokenCount: 3 }],
              cursor: 4,
              record: {
                fromSeq: 2,
                toSeq: 4,
                summary: "order lookup",
                mode: "incremental",
                skillId: "test/summarize@1",
                model: "mini",
                inputTokens: 17,
                outputTokens: 3,
                durationMs: 12,
                summaryTruncated: true
              },
              summaryMessage: { content: "The user asked about order ORD-2024-10042.", tokenCount: 9 },
              prune: true
            })
            assert.strictEqual(committed._tag, "Committed")
            return {
              info: yield* store.repository.getConversation(id),
              messages: yield* store.repository.listMessages(id, {}),
              state: yield* store.summaries.getSummaryState(id),
              records: yield* store.summaries.listSummarizations(id),
              window: yield* store.repository.readWindow(id, { after: "cursor", tokenLimit: 100 })
            }
          }))
        assert.deepStrictEqual(written.messages.map((m) => m.seq), [1, 5, 6, 7])
        const reread = yield* withRepository(dataDir, (store) =>
          Effect.gen(function*() {
            return {
              info: yield* store.repository.getConversation(id),
              messages: yield* store.repository.listMessages(id, {}),
              state: yield* store.summaries.getSummaryState(id),
              records: yield* store.summaries.listSummarizations(id),
              window: yield* store.repository.readWindow(id, { after: "cursor", tokenLimit: 100 })
            }
          }))
        assert.deepStrictEqual(reread, written)
        assert.deepStrictEqual([reread.state.cursor, reread.state.version], [4, 1])
        assert.strictEqual(reread.state.facts[0]?.value, "ORD-2024-10042")
        assert.deepStrictEqual(reread.window.recent.map((m) => m.seq), [5, 6, 7])
        // Writing continues where the first layer stopped.
        const next = yield* withRepository(dataDir, (store) =>
          store.repository.appendMessages(id, [newMessage("user", "thanks")]))
        assert.deepStrictEqual(
          next.messages.map((m) =>
            m.seq
          ),
          [8]
        )
      })
  )
})

layer(
  SqlStore.layer({ lock: "process" }).pipe(Layer.provideMerge(pgliteClient()))
)("SqlStore settings rows", (it) => {
  it.effect("a stored settings row that does not decode is a RepositoryError naming the settings", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const sql = yield* SqlClient.SqlClient
      const id = freshId("corrupt")
      yield* sql`INSERT INTO chat_memory_settings (conversation_id, settings, updated_at)
        VALUES (${id}, ${JSON.stringify({ tokenBudget: -5, view: "sideways" })}::jsonb, now())`
      const error = yield* Effect.flip(store.settings.getSettings(id))
      assert.strictEqual(error._tag, "RepositoryError")
      assert.strictEqual(error.operation, "getSettings")
      assert.strictEqual(error.conversationId, id)
      assert.isTrue(error.detail?.startsWith("the stored settings do not decode"))
      // The row can still be replaced and deleted.
      yield* store.settings.setSettings(id, new ConversationSettings({ view: "full" }))
      assert.deepStrictEqual({ ...(yield* store.settings.getSettings(id)) }, { view: "full" })
      yield* store.repository.deleteConversation(id)
      assert.strictEqual(
        (yield* Effect.flip(store.repository.deleteConversation(id)))._tag,
        "ConversationNotFoundError"
      )
    }))
})
