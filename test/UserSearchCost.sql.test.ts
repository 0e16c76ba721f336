/**
 * What keeps a search across a user's conversations cheap on the SQL stores, PGlite always and
 * PostgreSQL when `DATABASE_URL` is set:
 * - a message row is kept as written, up to a page, so that a search reads each vector without
 *   decompressing it. A long message of a user's conversation (its terms held twice, once per
 *   scope) makes a row past PostgreSQL's 2 kB compression threshold. Its content and vector are
 *   stored uncompressed;
 * - the search is one call of a function that runs without JIT compilation, whatever the planner
 *   estimates its cost at.
 */
import { SqlClient } from "@effect/sql"
import { assert, layer, type Vitest } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as UserId from "../src/domain/UserId.js"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import * as Store from "../src/layers/store/Store.js"
import { freshId, newMessage } from "./fixtures/messages.js"
import { pgliteClient } from "./fixtures/pglite.js"
import { clientLayer, describePostgres } from "./fixtures/postgres.js"

/** 60 distinct words: a vector of 60 terms in each scope, a row of about 4 kB that compresses well. */
const longText = Array.from({ length: 60 }, (_, i) => `parcel${i}`).join(" ")

const Sizes = Schema.Struct({
  content: Schema.Number,
  content_raw: Schema.Number,
  search: Schema.Number,
  search_raw: Schema.Number
})

const rowTests = (it: Vitest.MethodsNonLive<Store.Ports | SqlClient.SqlClient>) => {
  it.effect("a long message of a user's conversation is stored uncompressed", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const sql = yield* SqlClient.SqlClient
      const id = freshId("rows")
      yield* store.repository.appendMessages(id, [newMessage("user", longText)], {
        userId: UserId.UserId.make(`rows-${id}`)
      })
      // The `_raw` sizes are of values computed from the stored ones: uncompressed by construction.
      const rows = yield* sql`SELECT pg_column_size(content)::int AS content,
          pg_column_size(content || '')::int AS content_raw,
          pg_column_size(search)::int AS search, pg_column_size(search::text::tsvector)::int AS search_raw
        FROM chat_memory_messages WHERE conversation_id = ${id}`
      const [sizes] = yield* Schema.decodeUnknown(Schema.Array(Sizes))(rows)
      assert.isDefined(sizes)
      if (sizes === undefined) return
      // Past the threshold at which PostgreSQL would otherwise compress the row's largest values.
      assert.isAbove(sizes.content_raw + sizes.search_raw, 2048)
      assert.deepStrictEqual([sizes.content, sizes.search], [sizes.content_raw, sizes.search_raw])
    }))

  it.effect("the search across a user's conversations runs without JIT; it and the window read keep one plan", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const sql = yield* SqlClient.SqlClient
      const user = UserId.UserId.make(`jit-${freshId("jit")}`)
      const id = freshId("jit")
      yield* store.repository.appendMessages(id, [newMessage("user", "The parcel ORD-2024-88417 is late")], {
        userId: user
      })
      const hits = yield* store.users.searchMessages(user, { text: "ORD-2024-88417", limit: 5 })
      assert.deepStrictEqual(hits.map((hit) => [hit.conversationId, hit.seq]), [[id, 1]])
      const settingsOf = (name: string) =>
        sql`SELECT unnest(proconfig) AS setting FROM pg_proc WHERE oid = to_regproc(${name}) ORDER BY 1`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ setting: Schema.String })))),
          Effect.map((rows) => rows.map((row) => row.setting))
        )
      assert.deepStrictEqual(yield* settingsOf("chat_memory_user_search"), [
        "jit=off",
        "plan_cache_mode=force_generic_plan"
      ])
      assert.deepStrictEqual(yield* settingsOf("chat_memory_read_window"), ["plan_cache_mode=force_generic_plan"])
    }))
}

layer(SqlStore.layer({ lock: "process" }).pipe(Layer.provideMerge(pgliteClient())))(
  "user search cost on PGlite",
  rowTests
)

describePostgres("user search cost on PostgreSQL", (url) => {
  layer(SqlStore.layer().pipe(Layer.provideMerge(clientLayer(url))))("user search cost on PostgreSQL", rowTests)
})
