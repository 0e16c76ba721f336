/**
 * The search of one conversation on PostgreSQL reads a bounded number of messages whatever the
 * planner's statistics say of the conversation: none yet, statistics taken when it held a third of
 * its messages, statistics that have never seen it, and fresh ones. The statement is run under
 * `EXPLAIN (ANALYZE, FORMAT JSON)` and the rows its scans of the messages read are counted; its
 * hits are the same, to the last bit of their scores, with stale statistics and with fresh ones.
 */
import { SqlClient, Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { assert, it } from "@effect/vitest"
import { Array, Effect, Layer, Option, Redacted, Ref, Schema } from "effect"
import type * as ConversationId from "../src/domain/ConversationId.js"
import { candidateBudget, recentCandidates, recentWindow } from "../src/layers/store/internal/search.js"
import { makeSearch, sampleSize } from "../src/layers/store/internal/sql/search.js"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import * as Store from "../src/layers/store/Store.js"
import type { MessageIndex } from "../src/services/MessageIndex.js"
import { freshId, newMessage } from "./fixtures/messages.js"
import { describePostgres, freshSchemaUrl } from "./fixtures/postgres.js"

/** A node of a plan as `EXPLAIN (ANALYZE, FORMAT JSON)` gives it: the fields counted here. */
interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string | undefined
  readonly "Recheck Cond"?: string | undefined
  readonly "Actual Rows": number
  readonly "Actual Loops": number
  readonly "Rows Removed by Filter"?: number | undefined
  readonly "Rows Removed by Index Recheck"?: number | undefined
  readonly Plans?: ReadonlyArray<PlanNode> | undefined
}

const PlanNode: Schema.Schema<PlanNode> = Schema.Struct({
  "Node Type": Schema.String,
  "Relation Name": Schema.optional(Schema.String),
  "Recheck Cond": Schema.optional(Schema.String),
  "Actual Rows": Schema.Number,
  "Actual Loops": Schema.Number,
  "Rows Removed by Filter": Schema.optional(Schema.Number),
  "Rows Removed by Index Recheck": Schema.optional(Schema.Number),
  Plans: Schema.optional(Schema.Array(Schema.suspend(() => PlanNode)))
})

const decodeExplain = Schema.decodeUnknown(
  Schema.Tuple(Schema.Struct({ "QUERY PLAN": Schema.Tuple(Schema.Struct({ Plan: PlanNode })) }))
)

/** Every node of a plan, its subplans and init plans included. */
const nodes = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodes)]

/** Rows a scan read: those it returned and those its filters dropped, over all its loops. */
const rowsRead = (node: PlanNode): number =>
  Math.round(
    (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0) + (node["Rows Removed by Index Recheck"] ?? 0)) *
      node["Actual Loops"]
  )

/**
 * The messages a search reads by seq at most: the sample, the window of recent candidates, and one
 * row per candidate. A plan that reads the whole conversation, or the table, reads more.
 */
const bySeqBound = sampleSize + recentWindow + candidateBudget + recentCandidates

const words = ["delivery", "dock", "slot", "carrier", "invoice", "pallet", "route", "driver"]

/** Message `i` of a generated conversation: common words, and an order id in every fifth. */
const message = (i: number) =>
  newMessage(
    i % 2 === 0 ? "user" : "assistant",
    `Turn ${i}: the ${words[i % words.length]} and the ${words[(3 * i + 1) % words.length]} for ${
      i % 5 === 0 ? `order ORD-${100_000 + 7 * i}` : "the warehouse"
    } move to slot ${i % 7}.`
  )

const queries = (length: number): ReadonlyArray<string> => [
  `ORD-${100_000 + 7 * 5 * Math.floor(length / 15)}`,
  `when does order ORD-${100_000 + 7 * 5 * Math.floor(length / 3)} move, and to which dock?`,
  "what did we say about the pallet route and the driver?"
]

/** Seeded the long conversations' lengths: well past what one search may read by seq. */
const long = 6 * bySeqBound

describePostgres("the search's plan on PostgreSQL", (base) => {
  it.scoped(
    "reads the same bounded rows whatever the statistics say of the conversation, and ranks alike",
    () =>
      Effect.gen(function*() {
        const url = Redacted.make(yield* freshSchemaUrl(base))
        const context = yield* Layer.build(SqlStore.layer().pipe(Layer.provideMerge(PgClient.layer({ url }))))
        const [store, sql] = yield* Effect.provide(Effect.all([Store.get, SqlClient.SqlClient]), context)
        const search = makeSearch(sql)
        // The statistics are the ones this test takes, not autovacuum's.
        yield* sql`ALTER TABLE chat_memory_messages SET (autovacuum_enabled = false)`
        yield* sql`ALTER TABLE chat_memory_conversations SET (autovacuum_enabled = false)`
        const analyze = Effect.zipRight(sql`ANALYZE chat_memory_messages`, sql`ANALYZE chat_memory_conversations`)
        const append = (id: ConversationId.ConversationId, from: number, to: number) =>
          Effect.forEach(
            Array.chunksOf(Array.range(from, to - 1), 2000),
            (chunk) => store.repository.appendMessages(id, chunk.map(message)),
            { discard: true }
          )

        /** The hits of each query and the rows its plan read by seq, with no sequential scan. */
        const measure = (id: ConversationId.ConversationId, length: number, state: string) =>
          Effect.forEach(queries(length), (text) =>
            Effect.gen(function*() {
              const query: MessageIndex.SearchQuery = { text, before: length + 1, limit: 10 }
              const compiled = yield* Ref.make(Option.none<readonly [string, ReadonlyArray<unknown>]>())
              const hits = yield* search(id, query).pipe(
                Statement.withTransformer((statement) =>
                  Effect.as(Ref.set(compiled, Option.some(statement.compile())), statement)
                )
              )
              const [statement, params] = Option.getOrThrow(yield* Ref.get(compiled))
              const [{ "QUERY PLAN": [{ Plan }] }] = yield* decodeExplain(
                yield* sql.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`, params)
              )
              const scans = nodes(Plan).filter((node) => node["Relation Name"] === "chat_memory_messages")
              const label = `${state}, ${length} messages, "${text}"`
              assert.deepStrictEqual(scans.filter((node) => node["Node Type"] === "Seq Scan"), [], label)
              // The posting lists of the query's terms (each read up to `frequencyCap` rows) aside.
              const bySeq = scans.filter((node) => !(node["Recheck Cond"] ?? "").includes("search @@"))
              const read = bySeq.reduce((sum, node) => sum + rowsRead(node), 0)
              assert.isAtMost(read, bySeqBound, label)
              assert.isAbove(hits.length, 0, label)
              return hits
            }))

        const short = freshId("plan-short")
        const seenEarly = freshId("plan-seen-early")
        const unseen = freshId("plan-unseen")
        yield* append(short, 0, 300)
        yield* append(seenEarly, 0, long / 3)
        yield* measure(seenEarly, long / 3, "no statistics")
        // Statistics of a third of one conversation; the other is not stored yet.
        yield* analyze
        yield* append(seenEarly, long / 3, long)
        yield* append(unseen, 0, long)
        const stale = yield* Effect.all([
          measure(seenEarly, long, "statistics of a third of it"),
          measure(unseen, long, "statistics that never saw it"),
          measure(short, 300, "stale statistics")
        ])
        yield* analyze
        const fresh = yield* Effect.all([
          measure(seenEarly, long, "fresh statistics"),
          measure(unseen, long, "fresh statistics"),
          measure(short, 300, "fresh statistics")
        ])
        assert.deepStrictEqual(fresh, stale)
      }),
    120_000
  )
})
