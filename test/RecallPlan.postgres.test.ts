/**
 * Recall on PostgreSQL (the search of one conversation, then the turns of its hits) reads a bounded
 * number of messages whatever the planner's statistics say of the conversation: none yet,
 * statistics taken when it held a third of its messages, statistics that have never seen it, and
 * fresh ones. Each statement is run again under `EXPLAIN (ANALYZE, FORMAT JSON)` and the rows its
 * scans of the messages read are counted; the hits and turns are the same, to the last bit of the
 * scores, with stale statistics and with fresh ones.
 */
import { SqlClient, Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { assert, it } from "@effect/vitest"
import { Array, Effect, Layer, Redacted, Ref, Schema } from "effect"
import type * as ConversationId from "../src/domain/ConversationId.js"
import * as UserId from "../src/domain/UserId.js"
import { candidateBudget, recentCandidates, recentWindow } from "../src/layers/store/internal/search.js"
import { sampleSize } from "../src/layers/store/internal/sql/search.js"
import { turnReach } from "../src/layers/store/internal/sql/statements.js"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import * as Store from "../src/layers/store/Store.js"
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
 * Runs `effect`, then each statement it sent again under `EXPLAIN (ANALYZE, FORMAT JSON)`, with the
 * scans of `relation`.
 */
const explained = <A, E, R>(
  sql: SqlClient.SqlClient,
  effect: Effect.Effect<A, E, R>,
  relation = "chat_memory_messages"
) =>
  Effect.gen(function*() {
    const compiled = yield* Ref.make<ReadonlyArray<readonly [string, ReadonlyArray<unknown>]>>([])
    const result = yield* effect.pipe(
      Statement.withTransformer((statement) =>
        Effect.as(Ref.update(compiled, (all) => [...all, statement.compile()]), statement)
      )
    )
    const plans = yield* Effect.forEach(yield* Ref.get(compiled), ([statement, params]) =>
      Effect.map(
        Effect.flatMap(sql.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`, params), decodeExplain),
        ([{ "QUERY PLAN": [{ Plan }] }]) => Plan
      ))
    return { result, scans: plans.flatMap(nodes).filter((node) => node["Relation Name"] === relation) }
  })

/**
 * The messages a search reads by seq at most: the sample, the window of recent candidates, and one
 * row per candidate. A plan that reads the whole conversation, or the table, reads more.
 */
const bySeqBound = sampleSize + recentWindow + candidateBudget + recentCandidates

/** The hits whose turns are read, as recall reads them. */
const limit = 10

/**
 * The messages the turns read reads at most: for each hit, the hit, the walks to the user messages
 * around it (within `turnReach` each way) and the messages of its turn.
 */
const turnsBound = limit * (4 * turnReach + 2)

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

describePostgres("recall's plans on PostgreSQL", (base) => {
  it.scoped(
    "recall reads the same bounded rows whatever the statistics say of the conversation, and finds alike",
    () =>
      Effect.gen(function*() {
        const url = Redacted.make(yield* freshSchemaUrl(base))
        const context = yield* Layer.build(SqlStore.layer().pipe(Layer.provideMerge(PgClient.layer({ url }))))
        const [store, sql] = yield* Effect.provide(Effect.all([Store.get, SqlClient.SqlClient]), context)
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

        /** The hits of each query and the turns that hold them, with the rows their plans read. */
        const measure = (id: ConversationId.ConversationId, length: number, state: string) =>
          Effect.forEach(queries(length), (text) =>
            Effect.gen(function*() {
              const label = `${state}, ${length} messages, "${text}"`
              const search = yield* explained(sql, store.index.searchMessages(id, { text, before: length + 1, limit }))
              assert.deepStrictEqual(search.scans.filter((node) => node["Node Type"] === "Seq Scan"), [], label)
              // The posting lists of the query's terms (each read up to `frequencyCap` rows) aside.
              const bySeq = search.scans.filter((node) => !(node["Recheck Cond"] ?? "").includes("search @@"))
              assert.isAtMost(bySeq.reduce((sum, node) => sum + rowsRead(node), 0), bySeqBound, label)
              assert.isAbove(search.result.length, 0, label)
              const turns = yield* explained(
                sql,
                store.repository.readTurns(id, { seqs: search.result.map((hit) => hit.seq), before: length + 1 })
              )
              assert.deepStrictEqual(turns.scans.filter((node) => node["Node Type"] === "Seq Scan"), [], label)
              assert.isAtMost(turns.scans.reduce((sum, node) => sum + rowsRead(node), 0), turnsBound, label)
              assert.strictEqual(
                turns.result.length,
                new Set(search.result.map((hit) => (hit.seq - 1) >> 1)).size,
                label
              )
              return { hits: search.result, turns: turns.result }
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

  it.scoped(
    "a search by meaning across a user's conversations reads the vectors of the scan limit, no more",
    () =>
      Effect.gen(function*() {
        const url = Redacted.make(yield* freshSchemaUrl(base))
        const context = yield* Layer.build(SqlStore.layer().pipe(Layer.provideMerge(PgClient.layer({ url }))))
        const [store, sql] = yield* Effect.provide(Effect.all([Store.get, SqlClient.SqlClient]), context)
        const userId = UserId.UserId.make("plan-user")
        const [conversations, length, scanLimit] = [12, 100, 250]
        for (let c = 0; c < conversations; c++) {
          const id = freshId(`plan-user-${c}`)
          yield* store.repository.appendMessages(id, Array.range(0, length - 1).map(message), { userId })
          yield* store.index.storeEmbeddings(
            id,
            "plan-model",
            Array.range(1, length).map((seq) => ({ seq, vector: [1, (seq % 7) / 7, c / conversations, 0.5] }))
          )
        }
        yield* sql`ANALYZE`
        const search = yield* explained(
          sql,
          store.users.searchEmbeddings(userId, { model: "plan-model", vector: [1, 0, 0, 0], limit, scanLimit }),
          "chat_memory_embeddings"
        )
        assert.lengthOf(search.result, limit)
        assert.deepStrictEqual(search.scans.filter((node) => node["Node Type"] === "Seq Scan"), [])
        assert.isAtMost(search.scans.reduce((sum, node) => sum + rowsRead(node), 0), scanLimit)
        // Every vector is read when the limit covers them all.
        const all = yield* explained(
          sql,
          store.users.searchEmbeddings(userId, {
            model: "plan-model",
            vector: [1, 0, 0, 0],
            limit,
            scanLimit: conversations * length
          }),
          "chat_memory_embeddings"
        )
        assert.strictEqual(all.scans.reduce((sum, node) => sum + rowsRead(node), 0), conversations * length)
      }),
    60_000
  )
})
