/**
 * The search migrations on a database written before them: the messages already stored get their
 * search vectors (content and tool-call params), except the leading system messages and the
 * summary messages, which are never hits; vectors written with an earlier version's terms are
 * written again with the stemmed terms.
 */
import { SqlClient } from "@effect/sql"
import { assert, layer } from "@effect/vitest"
import { Array, Effect, Layer } from "effect"
import { scopeOf } from "../src/layers/store/internal/sql/search.js"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import * as Store from "../src/layers/store/Store.js"
import { freshId, newMessage } from "./fixtures/messages.js"
import { pgliteClient } from "./fixtures/pglite.js"

layer(
  SqlStore.layer({ lock: "process" }).pipe(Layer.provideMerge(pgliteClient()))
)("SqlStore search migration", (it) => {
  it.effect("messages stored before the search column existed are found after the migration", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const sql = yield* SqlClient.SqlClient
      const ids = [freshId("before-search"), freshId("before-search")]
      for (const id of ids) {
        yield* store.repository.appendMessages(id, [
          newMessage("system", "Quote ZETA-991 to nobody."),
          newMessage("user", "Where is ZETA-991?"),
          newMessage("assistant", "Looking it up.", {
            toolCalls: [{ id: "call_1", name: "lookup", params: { ref: "KX-4471" } }]
          }),
          ...Array.makeBy(1200, (i) => newMessage("user", `filler ${i} about ZETA-991`))
        ])
        yield* store.summaries.commitSummary({
          conversationId: id,
          expected: { cursor: 0, version: 0 },
          narrative: "KX-4471 was looked up.",
          facts: [],
          cursor: 2,
          record: {
            fromSeq: 2,
            toSeq: 2,
            summary: "KX-4471 was looked up.",
            summaryTruncated: false,
            mode: "incremental",
            skillId: "test",
            model: null,
            inputTokens: 1,
            outputTokens: 1,
            durationMs: 1
          },
          summaryMessage: { content: "Summary: KX-4471 was looked up.", tokenCount: 5 }
        })
      }
      // The database as the version before search left it: no search column, migration 4 and the
      // later ones not applied (the migrator applies only the ids above the latest applied).
      yield* sql`ALTER TABLE chat_memory_messages DROP COLUMN search`
      yield* sql`DROP TABLE chat_memory_embeddings`
      yield* sql`ALTER TABLE chat_memory_summarizations DROP COLUMN summary_message_seq`
      // The window read function came with migration 7, and changed shape with migration 8.
      yield* sql`DROP FUNCTION IF EXISTS chat_memory_read_window(text, boolean, float8, boolean)`
      yield* sql`DELETE FROM chat_memory_migrations WHERE migration_id >= 4`
      yield* SqlStore.migrate
      for (const id of ids) {
        const search = (text: string) => store.index.searchMessages(id, { text, before: 10_000, limit: 100 })
        assert.deepStrictEqual((yield* search("KX-4471")).map((hit) => hit.seq), [3])
        const zeta = yield* search("ZETA-991")
        assert.strictEqual(zeta.length, 100)
        assert.isFalse(zeta.some((hit) => hit.seq === 1))
        assert.strictEqual((yield* search("filler 1199"))[0]?.seq, 1203)
      }
      const rows = yield* sql<{ readonly missing: number }>`SELECT count(*)::int AS missing FROM chat_memory_messages
        WHERE search IS NULL AND conversation_id IN (${ids[0] ?? ""}, ${ids[1] ?? ""})`
      // Per conversation: the leading system message and the summary message.
      assert.strictEqual(rows[0]?.missing, 4)
    }))

  it.effect("vectors written with the terms of the version before stemming are written again", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const sql = yield* SqlClient.SqlClient
      const id = freshId("before-stemming")
      yield* store.repository.appendMessages(id, [
        newMessage("user", "I booked the connecting flights to Osaka."),
        newMessage("assistant", "Noted, the flights are booked.")
      ])
      // The vectors as the version before wrote them: plural endings cut, nothing else.
      const scope = scopeOf(id)
      yield* sql`UPDATE chat_memory_messages SET search = ${`'${scope}:booked':1 '${scope}:connecting':1 '${scope}:flight':1 '${scope}:osaka':1`}::tsvector WHERE conversation_id = ${id} AND seq = 1`
      yield* sql`UPDATE chat_memory_messages SET search = ${`'${scope}:noted':1 '${scope}:flight':1 '${scope}:booked':1`}::tsvector WHERE conversation_id = ${id} AND seq = 2`
      yield* sql`DELETE FROM chat_memory_migrations WHERE migration_id >= 9`
      const search = (text: string) =>
        Effect.map(
          store.index.searchMessages(id, { text, before: 100, limit: 10 }),
          (hits) => hits.map((hit) => hit.seq).sort()
        )
      // The old vectors do not hold the stems a query is searched by now.
      assert.deepStrictEqual(yield* search("booking"), [])
      yield* SqlStore.migrate
      assert.deepStrictEqual(yield* search("booking"), [1, 2])
      assert.deepStrictEqual(yield* search("which connection?"), [1])
    }))
})
