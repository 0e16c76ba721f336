/**
 * Erasing a user on the SQL stores leaves nothing of the user in any table: after two users'
 * conversations are written (messages, settings, a summary commit with its record, summary message
 * and prune, vectors, facts) and one user is erased, every row of every table of the schema (listed
 * from `information_schema`, so that a table added later is read too) is free of the erased user's
 * ids and texts, and the other user's data is intact. PGlite always; PostgreSQL when `DATABASE_URL`
 * is set.
 */
import { SqlClient } from "@effect/sql"
import { assert, layer, type Vitest } from "@effect/vitest"
import { DateTime, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import type { ConversationId } from "../src/domain/ConversationId.js"
import { ConversationSettings } from "../src/domain/ConversationSettings.js"
import type { Role } from "../src/domain/Message.js"
import { UserFact } from "../src/domain/UserFact.js"
import * as UserId from "../src/domain/UserId.js"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import * as Store from "../src/layers/store/Store.js"
import { freshId, newMessage, testRecord } from "./fixtures/messages.js"
import { pgliteClient } from "./fixtures/pglite.js"
import { clientLayer, describePostgres } from "./fixtures/postgres.js"

/** A message said at `minute` past midnight on the test's day. */
const said = (role: Role, content: string, minute = 0) => ({
  ...newMessage(role, content),
  createdAt: DateTime.unsafeMake(Date.UTC(2026, 1, 2, 0, minute))
})

/** Everything one user writes: its ids and texts, each unique to this user and this run. */
const userData = (name: string) => {
  const mark = `${name}${randomUUID().slice(0, 8)}`
  return {
    mark,
    userId: UserId.UserId.make(`${name}-user-${randomUUID()}`),
    /** A conversation with a user from its first write; one bound later; one with settings first. */
    conversations: [freshId(`${name}-a`), freshId(`${name}-b`), freshId(`${name}-c`)] as const,
    texts: [
      `My locker code is ${mark}-4471`,
      `Noted: ${mark}-4471`,
      `The parcel ${mark}-PKG goes to 12 Rua ${mark}`,
      `Summary: the locker code ${mark}-4471`,
      `fact-${mark}`
    ] as const
  }
}

type UserData = ReturnType<typeof userData>

/** Writes one user's conversations through every port. */
const write = (store: Store.Store, data: UserData) =>
  Effect.gen(function*() {
    const { conversations: [a, b, c], texts, userId } = data
    yield* store.repository.appendMessages(a, [
      said("system", "You are a concierge."),
      said("user", texts[0], 1),
      said("assistant", texts[1], 2),
      said("user", "and the parcel?", 3),
      said("assistant", texts[2], 4)
    ], { userId })
    // Written without a user, then bound by a write that names one.
    yield* store.repository.appendMessages(b, [said("user", texts[2], 5)])
    yield* store.settings.setSettings(b, new ConversationSettings({ tokenBudget: 700 }))
    yield* store.index.storeEmbeddings(b, "test-model", [{ seq: 1, vector: [0.6, 0.8] }])
    yield* store.repository.appendMessages(b, [said("assistant", texts[1], 6)], { userId })
    // Settings before the first message.
    yield* store.settings.setSettings(c, new ConversationSettings({ tokenBudget: 800, view: "stable" }))
    yield* store.repository.appendMessages(c, [said("user", texts[0], 7)], { userId })

    const committed = yield* store.summaries.commitSummary({
      conversationId: a,
      expected: { cursor: 0, version: 0 },
      narrative: texts[3],
      facts: [{ key: "locker", value: texts[0], category: "ENTITY" }],
      cursor: 3,
      record: testRecord(2, 3, texts[3]),
      summaryMessage: { content: texts[3], tokenCount: 9 },
      prune: true
    })
    assert.strictEqual(committed._tag, "Committed")
    yield* store.settings.setSettings(a, new ConversationSettings({ tokenBudget: 900 }))
    yield* store.index.storeEmbeddings(a, "test-model", [{ seq: 4, vector: [1, 0] }, { seq: 5, vector: [0, 1] }])
    const fact = (key: string, value: string | null, minute: number) =>
      new UserFact({
        key,
        value,
        category: "ENTITY",
        saidAt: DateTime.unsafeMake(Date.UTC(2026, 1, 2, 0, minute)),
        source: { conversationId: a, seq: 2 }
      })
    yield* store.users.mergeFacts(userId, [fact("locker", texts[4], 1), fact(`old-${data.mark}`, null, 2)], {
      conversationId: a,
      expected: 0,
      next: 5
    })
  })

/** Every row of every table of the store's schema, as text. */
const everyRow = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ readonly name: string }>`
    SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = current_schema() ORDER BY table_name`
  const rows: Array<{ readonly table: string; readonly text: string }> = []
  for (const { name } of tables) {
    for (const row of yield* sql<{ readonly text: string }>`SELECT t::text AS text FROM ${sql(name)} t`) {
      rows.push({ table: name, text: row.text.toLowerCase() })
    }
  }
  return { tables: tables.map((table) => table.name), rows }
})

/** The ids and texts of a user, as they may appear in a row (the search terms are lowercased). */
const traces = (data: UserData): ReadonlyArray<string> =>
  [data.userId, ...data.conversations, data.mark].map((trace) => trace.toLowerCase())

const erasureTests = (it: Vitest.MethodsNonLive<Store.Ports | SqlClient.SqlClient>) => {
  it.effect("erasing a user leaves none of the user's ids or texts in any table, and the other user intact", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const [erased, kept] = [userData("erased"), userData("kept")]
      yield* write(store, erased)
      yield* write(store, kept)

      const before = yield* everyRow
      // Both users' data is everywhere it should be, and the tables of users are among those read.
      for (const table of ["chat_memory_user_facts", "chat_memory_embeddings", "chat_memory_settings"]) {
        assert.include(before.tables, table)
      }
      for (const data of [erased, kept]) {
        const found = new Set(
          before.rows.filter((row) => row.text.includes(data.mark.toLowerCase())).map((r) => r.table)
        )
        assert.includeMembers([...found], [
          "chat_memory_messages",
          "chat_memory_summarizations",
          "chat_memory_conversations",
          "chat_memory_user_facts"
        ])
      }

      const erasure = yield* store.users.erase(erased.userId)
      assert.deepStrictEqual(
        [erasure.conversations, erasure.messages, erasure.facts],
        // a: 5 messages, 2 pruned, 1 summary message; b: 2; c: 1.
        [3, 7, 1]
      )

      const after = yield* everyRow
      for (const trace of traces(erased)) {
        const left = after.rows.filter((row) => row.text.includes(trace))
        assert.deepStrictEqual(left, [], `${trace} is still stored`)
      }
      // Nothing of the other user's is gone.
      for (const trace of traces(kept)) {
        const count = (rows: ReadonlyArray<{ readonly text: string }>) =>
          rows.filter((r) => r.text.includes(trace)).length
        assert.strictEqual(count(after.rows), count(before.rows), trace)
      }
      const { conversations: [a, b, c], userId } = kept
      assert.deepStrictEqual((yield* store.repository.listMessages(a, {})).map((m) => m.seq), [1, 4, 5, 6])
      assert.strictEqual((yield* store.summaries.listSummarizations(a)).length, 1)
      assert.deepStrictEqual({ ...(yield* store.settings.getSettings(b)) }, { tokenBudget: 700 })
      assert.deepStrictEqual({ ...(yield* store.settings.getSettings(c)) }, { tokenBudget: 800, view: "stable" })
      const nearest = yield* store.index.searchEmbeddings(a, {
        model: "test-model",
        vector: [1, 0],
        before: 10,
        limit: 5
      })
      assert.deepStrictEqual(nearest.map((hit) => hit.seq), [4, 5])
      assert.deepStrictEqual((yield* store.users.getFacts(userId)).map((f) => f.value), [kept.texts[4]])
      const listed = yield* store.users.listConversations(userId, { limit: 10 })
      assert.deepStrictEqual(listed.map((entry) => entry.conversationId).sort(), [a, b, c].sort())
      const hits = yield* store.users.searchMessages(userId, { text: `${kept.mark}-4471`, limit: 10 })
      assert.isAbove(hits.length, 0)
      // The erased user is a user without anything.
      assert.isEmpty(yield* store.users.searchMessages(erased.userId, { text: `${erased.mark}-4471`, limit: 10 }))
      for (const id of erased.conversations) {
        assert.isEmpty(yield* store.index.searchMessages(id, { text: `${erased.mark}-4471`, before: 100, limit: 10 }))
        const deleted: ConversationId = id
        assert.strictEqual(
          (yield* Effect.flip(store.repository.getConversation(deleted)))._tag,
          "ConversationNotFoundError"
        )
      }
    }))
}

layer(SqlStore.layer({ lock: "process" }).pipe(Layer.provideMerge(pgliteClient())))(
  "user erasure on PGlite",
  erasureTests
)

describePostgres("user erasure on PostgreSQL", (url) => {
  layer(SqlStore.layer().pipe(Layer.provideMerge(clientLayer(url))))("user erasure on PostgreSQL", erasureTests)
})
