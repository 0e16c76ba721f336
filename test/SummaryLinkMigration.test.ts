/**
 * The migration that links each summarization record to its summary message, on a database
 * written before it: the records whose run appended a summary message get its seq, the others
 * stay null.
 */
import { SqlClient } from "@effect/sql"
import { assert, layer } from "@effect/vitest"
import { Array, Effect, Layer } from "effect"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import * as Store from "../src/layers/store/Store.js"
import { freshId, newMessage } from "./fixtures/messages.js"
import { pgliteClient } from "./fixtures/pglite.js"

const record = (fromSeq: number, toSeq: number) => ({
  fromSeq,
  toSeq,
  summary: `summary of ${fromSeq}..${toSeq}`,
  summaryTruncated: false,
  mode: "incremental",
  skillId: "test/summarize@1",
  model: null,
  inputTokens: 1,
  outputTokens: 1,
  durationMs: 1
})

layer(
  SqlStore.layer({ lock: "process" }).pipe(Layer.provideMerge(pgliteClient()))
)("SqlStore summary-message link migration", (it) => {
  it.effect("records written before the link existed are linked to the summary messages that name them", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const sql = yield* SqlClient.SqlClient
      const linked = freshId("before-link")
      const unlinked = freshId("before-link")
      for (const id of [linked, unlinked]) {
        yield* store.repository.appendMessages(id, [
          newMessage("system", "You are helpful."),
          ...Array.makeBy(8, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `m${i}`))
        ])
      }
      // `linked`: a summary message at seq 10, a run without one, then one at 11, pruning.
      yield* store.summaries.commitSummary({
        conversationId: linked,
        expected: { cursor: 0, version: 0 },
        narrative: "one",
        facts: [],
        cursor: 3,
        record: record(2, 3),
        summaryMessage: { content: "one", tokenCount: 2 }
      })
      yield* store.summaries.commitSummary({
        conversationId: linked,
        expected: { cursor: 3, version: 1 },
        narrative: "two",
        facts: [],
        cursor: 5,
        record: record(4, 5)
      })
      yield* store.summaries.commitSummary({
        conversationId: linked,
        expected: { cursor: 5, version: 2 },
        narrative: "three",
        facts: [],
        cursor: 7,
        record: record(6, 7),
        summaryMessage: { content: "three", tokenCount: 2 },
        prune: true
      })
      yield* store.summaries.commitSummary({
        conversationId: unlinked,
        expected: { cursor: 0, version: 0 },
        narrative: "plain",
        facts: [],
        cursor: 3,
        record: record(2, 3)
      })
      const links = Effect.forEach(
        [linked, unlinked],
        (id) => Effect.map(store.summaries.listSummarizations(id), (records) => records.map((r) => r.summaryMessageSeq))
      )
      const written = yield* links
      assert.deepStrictEqual(written, [[10, null, 11], [null]])

      // The database as the version before the link left it: no link column, migration 6 and those
      // after it not applied.
      yield* sql`ALTER TABLE chat_memory_summarizations DROP COLUMN summary_message_seq`
      // The window read function came with migration 7, and changed shape with migration 8.
      yield* sql`DROP FUNCTION IF EXISTS chat_memory_read_window(text, boolean, float8, boolean)`
      yield* sql`DELETE FROM chat_memory_migrations WHERE migration_id >= 6`
      yield* SqlStore.migrate
      assert.deepStrictEqual(yield* links, written)
      // From the message back to its record, too.
      const messages = yield* store.repository.listMessages(linked, {})
      assert.deepStrictEqual(
        messages.filter((m) => m.role === "summary").map((m) => [m.seq, m.metadata.summaryMetadataId]),
        [[10, 1], [11, 3]]
      )
    }))
})
