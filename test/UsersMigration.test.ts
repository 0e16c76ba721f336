/**
 * A database of the version before users (migrations 1 to 9) opened by this version: the
 * migrations bring it up in place, and its conversation reads, extends and summarizes as before
 * (no user; `last_said_at` backfilled from its messages), then can be bound to a user: its earlier
 * messages, settings, vectors and records are the user's, and found by a search of the user's
 * conversations. A process of that version keeps writing to the migrated database (a rolling
 * deploy), and erasing a user removes what it wrote to the user's conversations. PGlite always;
 * PostgreSQL when `DATABASE_URL` is set.
 */
import { Migrator, SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Layer } from "effect"
import { ConversationSettings } from "../src/domain/ConversationSettings.js"
import * as UserId from "../src/domain/UserId.js"
import { migrations, migrationsTable } from "../src/layers/store/internal/sql/migrations.js"
import { vectorText } from "../src/layers/store/internal/sql/search.js"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import { freshId, newMessage, testRecord } from "./fixtures/messages.js"
import { pgliteClient } from "./fixtures/pglite.js"
import { clientLayer, describePostgres } from "./fixtures/postgres.js"

/** The migrations of the version before users. */
const previousVersion = Migrator.make({})({
  loader: Migrator.fromRecord(
    Object.fromEntries(Object.entries(migrations).filter(([id]) => Number.parseInt(id, 10) <= 9))
  ),
  table: migrationsTable
})

/** When message `i` of the old conversation was said. */
const saidAt = (i: number) => new Date(Date.UTC(2025, 5, 1, 9, i))

/** The old conversation's messages: a system prompt, then two turns. */
const oldMessages = [
  { role: "system", content: "You are a travel agent." },
  { role: "user", content: "Book the Lisbon flight TP-1357 for May." },
  { role: "assistant", content: "Booked TP-1357." },
  { role: "user", content: "And a hotel near Rossio." },
  { role: "assistant", content: "Hotel Avenida, three nights." }
] as const

/**
 * Writes a conversation as the version before users stored it: its counters row, its messages with
 * their search vectors (none for the leading system message), and its settings.
 */
const writeOldConversation = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tokens = oldMessages.length * 10
    yield* sql`INSERT INTO chat_memory_conversations (conversation_id, last_seq, message_count, system_count,
        user_count, assistant_count, token_count, system_prefix_seq, first_turn_role, created_at, updated_at)
      VALUES (${id}, ${oldMessages.length}, ${oldMessages.length}, 1, 2, 2, ${tokens}, 1, 'user', ${saidAt(1)},
        ${saidAt(oldMessages.length)})`
    for (const [i, message] of oldMessages.entries()) {
      yield* sql`INSERT INTO chat_memory_messages (conversation_id, seq, role, content, metadata, token_count,
          created_at, search)
        VALUES (${id}, ${i + 1}, ${message.role}, ${message.content}, '{}'::jsonb, 10, ${saidAt(i + 1)},
          ${i === 0 ? null : vectorText(id, { content: message.content, metadata: {} })}::tsvector)`
    }
    yield* sql`INSERT INTO chat_memory_settings (conversation_id, settings, updated_at)
      VALUES (${id}, ${JSON.stringify({ tokenBudget: 600 })}::jsonb, ${saidAt(1)})`
  })

const upgradeTest = <E>(client: Layer.Layer<SqlClient.SqlClient, E>) =>
  it.scoped("a conversation of the version before users reads, extends, summarizes, then is bound to a user", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(client)
      const id = freshId("before-users")
      yield* Effect.provide(Effect.zipRight(previousVersion, writeOldConversation(id)), context)
      const store = yield* Effect.provide(Effect.zipRight(SqlStore.migrate, SqlStore.make()), context)
      const sql = yield* Effect.provide(SqlClient.SqlClient, context)

      // It reads as before: no user, its counters, its window and settings, its search.
      const info = yield* store.repository.getConversation(id)
      assert.deepStrictEqual([info.userId, info.factsCursor, info.lastSeq, info.messageCount], [null, 0, 5, 5])
      const window = yield* store.repository.readWindow(id, { after: "cursor", tokenLimit: 1000, digest: 5 })
      assert.deepStrictEqual(window.recent.map((m) => m.seq), [2, 3, 4, 5])
      assert.deepStrictEqual({ ...window.settings }, { tokenBudget: 600 })
      assert.isNull(window.user)
      const search = (text: string) =>
        Effect.map(store.index.searchMessages(id, { text, before: 100, limit: 5 }), (hits) => hits.map((h) => h.seq))
      assert.deepStrictEqual((yield* search("TP-1357")).sort(), [2, 3])
      const [backfilled] = yield* sql<{ readonly last: Date }>`
        SELECT last_said_at AS last FROM chat_memory_conversations WHERE conversation_id = ${id}`
      assert.strictEqual(backfilled?.last.getTime(), saidAt(5).getTime())

      // It extends and summarizes as before.
      const appended = yield* store.repository.appendMessages(id, [
        { ...newMessage("user", "Can you add travel insurance?"), createdAt: DateTime.unsafeMake(saidAt(6)) }
      ])
      assert.deepStrictEqual(appended.messages.map((m) => m.seq), [6])
      const committed = yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 0, version: 0 },
        narrative: "Booked flight TP-1357 and Hotel Avenida.",
        facts: [],
        cursor: 3,
        record: testRecord(2, 3, "Booked flight TP-1357."),
        summaryMessage: { content: "Booked flight TP-1357.", tokenCount: 5 },
        prune: true
      })
      assert.strictEqual(committed._tag, "Committed")
      yield* store.index.storeEmbeddings(id, "test-model", [{ seq: 4, vector: [1, 0] }])
      assert.deepStrictEqual((yield* store.repository.listMessages(id, {})).map((m) => m.seq), [1, 4, 5, 6, 7])

      // Then a write that names a user binds it, and everything of it is the user's.
      const user = UserId.UserId.make(`traveller-${id}`)
      yield* store.repository.appendMessages(id, [
        { ...newMessage("assistant", "Insurance added."), createdAt: DateTime.unsafeMake(saidAt(8)) }
      ], { userId: user })
      assert.strictEqual((yield* store.repository.getConversation(id)).userId, user)
      const [listed] = yield* store.users.listConversations(user, { limit: 5 })
      assert.deepStrictEqual(
        [listed?.conversationId, listed?.messageCount, listed?.lastSaidAt.epochMillis, listed?.about],
        [id, 6, saidAt(8).getTime(), "And a hotel near Rossio."]
      )
      const hits = yield* store.users.searchMessages(user, { text: "Rossio hotel", limit: 5 })
      assert.deepStrictEqual(hits.map((hit) => [hit.conversationId, hit.seq]), [[id, 4], [id, 5]])
      // The conversation's own search ranks as before.
      assert.deepStrictEqual((yield* search("hotel")).sort(), [4, 5])
      const unbound = yield* sql<{ readonly n: number }>`
        SELECT (SELECT count(*) FROM chat_memory_messages WHERE conversation_id = ${id} AND user_id IS NULL)
          + (SELECT count(*) FROM chat_memory_summarizations WHERE conversation_id = ${id} AND user_id IS NULL)
          + (SELECT count(*) FROM chat_memory_settings WHERE conversation_id = ${id} AND user_id IS NULL)
          + (SELECT count(*) FROM chat_memory_embeddings WHERE conversation_id = ${id} AND user_id IS NULL)
          AS n`
      assert.strictEqual(Number(unbound[0]?.n), 0)
      yield* store.settings.setSettings(id, new ConversationSettings({ tokenBudget: 650 }))
      const erased = yield* store.users.erase(user)
      assert.deepStrictEqual([erased.conversations, erased.messages], [1, 6])
    }))

/**
 * Appends as the version before users does: the counters row by upsert, without `last_said_at` or
 * `user_id`, then the messages without `user_id`.
 */
const writeAsPreviousVersion = (id: string, content: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = new Date()
    const [reserved] = yield* sql<{ readonly last_seq: number }>`
      INSERT INTO chat_memory_conversations AS c (conversation_id, last_seq, message_count, system_count,
        user_count, assistant_count, tool_count, summary_count, token_count, system_prefix_seq, first_turn_role,
        created_at, updated_at)
      VALUES (${id}, 1, 1, 0, 1, 0, 0, 0, 10, 0, 'user', ${now}, ${now})
      ON CONFLICT (conversation_id) DO UPDATE SET
        last_seq = c.last_seq + 1, message_count = c.message_count + 1, user_count = c.user_count + 1,
        token_count = c.token_count + 10, updated_at = EXCLUDED.updated_at
      RETURNING last_seq`
    yield* sql`INSERT INTO chat_memory_messages (conversation_id, seq, role, content, metadata, token_count,
        created_at, search)
      VALUES (${id}, ${Number(reserved?.last_seq)}, 'user', ${content}, '{}'::jsonb, 10, ${now},
        ${vectorText(id, { content, metadata: {} })}::tsvector)`
  })

const rollingDeployTest = <E>(client: Layer.Layer<SqlClient.SqlClient, E>) =>
  it.scoped("a process of the version before users keeps writing; erasing a user removes what it wrote", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(client)
      const store = yield* Effect.provide(Effect.zipRight(SqlStore.migrate, SqlStore.make()), context)
      const sql = yield* Effect.provide(SqlClient.SqlClient, context)
      const user = UserId.UserId.make(`user-${freshId("rolling")}`)
      const [started, joined] = [freshId("rolling-new"), freshId("rolling-user")]
      yield* store.repository.appendMessages(joined, [newMessage("user", "My locker is 12.")], { userId: user })

      // The previous version starts a conversation and writes to the user's.
      yield* Effect.provide(
        Effect.zipRight(
          writeAsPreviousVersion(started, "Hello from before."),
          writeAsPreviousVersion(joined, "My locker code is 4471.")
        ),
        context
      )
      const window = yield* store.repository.readWindow(started, { after: "cursor", tokenLimit: 1000, digest: 5 })
      assert.deepStrictEqual(window.recent.map((m) => m.content), ["Hello from before."])
      const read = yield* store.repository.listMessages(joined, {})
      assert.deepStrictEqual(read.map((m) => m.content), ["My locker is 12.", "My locker code is 4471."])

      const erased = yield* store.users.erase(user)
      assert.deepStrictEqual([erased.conversations, erased.messages], [1, 2])
      const left = yield* sql<{ readonly n: number }>`
        SELECT count(*) AS n FROM chat_memory_messages WHERE conversation_id = ${joined}`
      assert.strictEqual(Number(left[0]?.n), 0)
      assert.strictEqual((yield* store.repository.getConversation(started)).messageCount, 1)
    }))

describe("SqlStore users migration on PGlite", () => {
  upgradeTest(pgliteClient())
  rollingDeployTest(pgliteClient())
})

describePostgres("SqlStore users migration on PostgreSQL", (url) => {
  describe("SqlStore users migration on PostgreSQL", () => {
    upgradeTest(clientLayer(url))
    rollingDeployTest(clientLayer(url))
  })
})
