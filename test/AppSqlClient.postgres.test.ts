/**
 * The memory in the app's own database: the app builds its `SqlClient` layer (`PgClient.layer` on
 * PostgreSQL at `DATABASE_URL`, or PGlite) for its own tables, and hands that layer to
 * `ChatMemoryLive.layer` (`store: { _tag: "sql", layer }`): the memory works, summaries included,
 * and its tables sit in that database beside the app's. A layer that cannot be built is a
 * `RepositoryError`.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as ChatMemoryLive from "../src/layers/ChatMemoryLive.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { pgliteClient } from "./fixtures/pglite.js"
import { describePostgres, freshSchemaUrl } from "./fixtures/postgres.js"

/** Knobs under which eight turns summarize in the background. */
const knobs = { kRawTurns: 2, tokenBudget: 200, chunkSummarizeThreshold: 300, summaryTokenCap: 60 } as const

const turn = (i: number) => [
  { role: "user" as const, content: `Question ${i} about order ORD-${1000 + i}.`.padEnd(36, ".") },
  { role: "assistant" as const, content: `Answer ${i}.`.padEnd(100, ".") }
]

/** The app: its own table, then a conversation in the memory; what the database holds afterwards. */
const app = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE app_orders (id text PRIMARY KEY, status text NOT NULL)`
  yield* sql`INSERT INTO app_orders (id, status) VALUES ('ORD-1001', 'shipped')`

  const memory = yield* ChatMemoryService
  for (let i = 1; i <= 8; i++) yield* memory.addMessages("c", turn(i))
  yield* memory.awaitIdle("c")
  const context = yield* memory.getContext("c")

  const tables = yield* sql<{ readonly name: string }>`
    SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = current_schema() ORDER BY table_name`
  const [messages] = yield* sql<{ readonly n: number }>`
    SELECT count(*)::int AS n FROM chat_memory_messages WHERE conversation_id = 'c'`
  const [summaries] = yield* sql<{ readonly n: number }>`
    SELECT count(*)::int AS n FROM chat_memory_summarizations WHERE conversation_id = 'c'`
  const orders = yield* sql<{ readonly id: string }>`SELECT id FROM app_orders`
  return {
    tables: tables.map((table) => table.name),
    messages: messages?.n,
    summaries: summaries?.n ?? 0,
    orders: orders.map((order) => order.id),
    summarized: context.summary !== null && context.summarizedUpTo > 0
  }
})

/** Runs the app over its database layer, handed to the memory as well. */
const runOver = <E>(database: Layer.Layer<SqlClient.SqlClient, E>) =>
  app.pipe(
    Effect.provide(
      ChatMemoryLive.layer({ ...knobs, store: { _tag: "sql", layer: database } }).pipe(Layer.provideMerge(database))
    )
  )

const check = (result: Effect.Effect.Success<typeof app>) => {
  assert.strictEqual(result.messages, 16)
  assert.isAbove(result.summaries, 0)
  assert.isTrue(result.summarized)
  assert.deepStrictEqual(result.orders, ["ORD-1001"])
  // The app's table, and the memory's, all named chat_memory_*.
  assert.include(result.tables, "app_orders")
  assert.include(result.tables, "chat_memory_messages")
  assert.include(result.tables, "chat_memory_migrations")
  assert.deepStrictEqual(result.tables.filter((name) => !name.startsWith("chat_memory_")), ["app_orders"])
}

describe("the memory over the app's SqlClient", () => {
  it.effect(
    "PGlite: the app's client, the memory's tables beside the app's",
    () => Effect.map(runOver(pgliteClient()), check)
  )

  it.effect("a database layer that fails to build fails the memory's with a RepositoryError (connect)", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Layer.build(ChatMemoryLive.layer({
          store: { _tag: "sql", layer: Layer.fail("the database is down") }
        })).pipe(Effect.scoped)
      )
      assert.deepStrictEqual(
        error._tag === "RepositoryError" ? [error._tag, error.operation, error.cause] : [error._tag],
        ["RepositoryError", "connect", "the database is down"]
      )
    }))
})

describePostgres("the memory over the app's PgClient", (url) => {
  it.scoped("PostgreSQL: the app's PgClient.layer, handed to ChatMemoryLive.layer", () =>
    Effect.gen(function*() {
      // A schema of its own on the test server, as an app's database would be.
      const database = PgClient.layer({
        url: Redacted.make(yield* freshSchemaUrl(url)),
        maxConnections: 4,
        applicationName: "the-app"
      })
      check(yield* runOver(database))
    }))
})
