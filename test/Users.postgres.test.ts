/**
 * Users on PostgreSQL shared by two instances (each with a pool of its own, as two processes):
 * concurrent merges of one user's facts lose no update, and appends that race the binding of a
 * conversation to its user leave every message of it the user's, with no seq lost.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { assert, it } from "@effect/vitest"
import { Array, DateTime, Effect, Either, Layer, Redacted } from "effect"
import { UserFact } from "../src/domain/UserFact.js"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import * as Store from "../src/layers/store/Store.js"
import { freshUser } from "./contracts/UserStoreContract.js"
import { freshId, newMessage } from "./fixtures/messages.js"
import { describePostgres, freshSchemaUrl } from "./fixtures/postgres.js"

/** Two stores on one schema, each with its own pool, and a client of the first for raw reads. */
const twoInstances = (base: string) =>
  Effect.gen(function*() {
    const url = Redacted.make(yield* freshSchemaUrl(base))
    const instance = Effect.flatMap(
      Layer.build(SqlStore.layer().pipe(Layer.provideMerge(PgClient.layer({ url, maxConnections: 5 })))),
      (context) => Effect.provide(Effect.all([Store.get, SqlClient.SqlClient]), context)
    )
    const [a, sql] = yield* instance
    const [b] = yield* instance
    return { a, b, sql }
  })

const fact = (key: string, value: string, second: number) =>
  new UserFact({
    key,
    value,
    category: "GENERAL",
    saidAt: DateTime.unsafeMake(Date.UTC(2026, 2, 1, 0, 0, second)),
    source: null
  })

describePostgres("users on PostgreSQL, two instances", (base) => {
  it.scoped("concurrent merges of one user's facts, in any key order, lose no update", () =>
    Effect.gen(function*() {
      const { a, b } = yield* twoInstances(base)
      const user = freshUser("concurrent")
      const keys = Array.makeBy(8, (k) => `key-${k}`)
      // 48 merges, each of every key in its own order; each statement said at its own second, in
      // another order than the merges'.
      const merges = Array.makeBy(48, (m) => {
        const order = Array.makeBy(keys.length, (k) => keys[(k * (m % 2 === 0 ? 3 : 5) + m) % keys.length] ?? "")
        return order.map((key, k) => fact(key, `merge ${m}`, ((m * 37) % 48) * keys.length + k))
      })
      yield* Effect.forEach(
        merges,
        (facts, m) => (m % 2 === 0 ? a : b).users.mergeFacts(user, facts),
        { concurrency: "unbounded", discard: true }
      )
      // Each key holds its latest statement, as if the merges had run one after another.
      const latest = new Map<string, UserFact>()
      for (const f of merges.flat()) {
        const held = latest.get(f.key)
        if (held === undefined || DateTime.greaterThan(f.saidAt, held.saidAt)) latest.set(f.key, f)
      }
      const facts = yield* a.users.getFacts(user)
      assert.deepStrictEqual(
        facts.map((f) => [f.key, f.value]).sort(),
        [...latest.values()].map((f) => [f.key, f.value]).sort()
      )
    }))

  it.scoped("appends racing the binding of a conversation leave every message the user's, and refuse another", () =>
    Effect.gen(function*() {
      const { a, b, sql } = yield* twoInstances(base)
      const [user, other] = [freshUser("racer"), freshUser("other")]
      const id = freshId("race")
      yield* a.repository.appendMessages(id, Array.makeBy(20, (i) => newMessage("user", `before binding ${i}`)))
      const calls = Array.makeBy(60, (i) => {
        const store = i % 2 === 0 ? a : b
        const messages = [newMessage(i % 3 === 0 ? "user" : "assistant", `racing message ${i}`)]
        return Effect.either(
          store.repository.appendMessages(id, messages, i % 5 === 0 ? { userId: i % 10 === 0 ? user : other } : {})
        )
      })
      const results = yield* Effect.all(calls, { concurrency: "unbounded" })
      const refused = results.filter(Either.isLeft)
      assert.isTrue(refused.every((result) => result.left._tag === "DataValidationError"))
      const info = yield* a.repository.getConversation(id)
      const owner = info.userId
      assert.isTrue(owner === user || owner === other)
      // Every accepted append stored its message; the refused ones nothing.
      assert.strictEqual(info.messageCount, 20 + 60 - refused.length)
      assert.strictEqual(info.lastSeq, info.messageCount)
      const [unbound] = yield* sql<{ readonly n: string | number }>`
        SELECT count(*) AS n FROM chat_memory_messages WHERE conversation_id = ${id} AND user_id IS DISTINCT FROM ${owner}`
      assert.strictEqual(Number(unbound?.n), 0)
      // Found by a search of the owner's conversations, earlier messages and racing ones alike.
      const hits = owner === null ? [] : yield* b.users.searchMessages(owner, { text: "binding racing", limit: 100 })
      assert.strictEqual(hits.length, 20 + 60 - refused.length)
    }))
})
