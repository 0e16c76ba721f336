/**
 * Round trips to the database per operation: the SQL stores' repository over a `SqlClient` that
 * wraps the store's own and counts every statement its connections execute (a transaction's
 * BEGIN and COMMIT included), a turn at a time.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import type { Connection } from "@effect/sql/SqlConnection"
import { Context, Effect, Equal, type FiberId, Layer, Stream } from "effect"
import { randomUUID } from "node:crypto"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import * as Store from "../src/layers/store/Store.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import type { TokenCounter } from "../src/services/TokenCounter.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"
import { type BenchStore, budget, slidingMemory, type StoreError, summarizingMemory } from "./setup.js"
import { printTable } from "./stats.js"
import { text } from "./texts.js"

/**
 * A count of the statements run by one fiber (the turn's): a background summarization, forked
 * from it, runs on a fiber of its own and is not counted.
 */
export interface Counter {
  value: number
  fiber: FiberId.FiberId | undefined
}

const counted = (counter: Counter, connection: Connection): Connection => {
  const tick = Effect.fiberIdWith((id) =>
    Effect.sync(() => {
      if (counter.fiber !== undefined && Equal.equals(id, counter.fiber)) counter.value += 1
    })
  )
  return {
    execute: (sql, params, transformRows) => Effect.zipRight(tick, connection.execute(sql, params, transformRows)),
    executeRaw: (sql, params) => Effect.zipRight(tick, connection.executeRaw(sql, params)),
    executeStream: (sql, params, transformRows) =>
      Stream.zipRight(Stream.fromEffect(tick), connection.executeStream(sql, params, transformRows)),
    executeValues: (sql, params) => Effect.zipRight(tick, connection.executeValues(sql, params)),
    executeUnprepared: (sql, params, transformRows) =>
      Effect.zipRight(tick, connection.executeUnprepared(sql, params, transformRows))
  }
}

/** A `SqlClient` over `inner`'s connections that counts the statements they execute. */
export const counting = (counter: Counter) =>
(
  inner: Layer.Layer<SqlClient.SqlClient, StoreError>
): Layer.Layer<SqlClient.SqlClient, StoreError> =>
  Layer.effect(
    SqlClient.SqlClient,
    Effect.gen(function*() {
      const client = yield* SqlClient.SqlClient
      const acquirer = Effect.map(client.reserve, (connection) => counted(counter, connection))
      return yield* SqlClient.make({ acquirer, compiler: PgClient.makeCompiler(), spanAttributes: [] })
    })
  ).pipe(Layer.provide(inner), Layer.provide(Reactivity.layer))

/**
 * The summarizing memory (scripted skill) over a fresh store of `store`'s kind and `tokens`, built
 * in the caller's scope: the service, its store, and the statements its SQL connections run.
 */
export const countedMemory = (store: BenchStore, tokens: Layer.Layer<TokenCounter>) =>
  Effect.gen(function*() {
    const statements: Counter = { value: 0, fiber: undefined }
    const storeLayer = store.over === undefined ? store.layer : store.over(counting(statements))
    const built = yield* Layer.build(
      ChatMemory.layer.pipe(
        Layer.provideMerge(SummarizationStrategy.layer({ tokenBudget: budget })),
        Layer.provideMerge(ScriptedSkill.layer()),
        Layer.provideMerge(storeLayer),
        Layer.provideMerge(tokens)
      )
    )
    return {
      memory: Context.get(built, ChatMemoryService),
      storage: yield* Effect.provide(Store.get, built),
      statements
    }
  })

interface Row {
  readonly store: string
  readonly strategy: string
  readonly turns: number
  /** Statements per call: the most any turn took, and the total over the turns divided by them. */
  readonly addMessages: { readonly max: number; readonly mean: number }
  readonly getContext: { readonly max: number; readonly mean: number }
}

const countTurns = (counter: Counter, turns: number, waitIdle: boolean) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const id = `round-trips-${randomUUID()}`
    counter.fiber = yield* Effect.fiberId
    const add: Array<number> = []
    const context: Array<number> = []
    for (let i = 0; i < turns; i++) {
      if (waitIdle) yield* memory.awaitIdle(id)
      const before = counter.value
      yield* memory.addMessages(id, [{ role: "user", content: text(2 * i) }, {
        role: "assistant",
        content: text(2 * i + 1)
      }])
      const added = counter.value
      yield* memory.getContext(id)
      add.push(added - before)
      context.push(counter.value - added)
    }
    const figures = (xs: ReadonlyArray<number>) => ({
      max: Math.max(...xs),
      mean: xs.reduce((a, b) => a + b, 0) / xs.length
    })
    return { addMessages: figures(add), getContext: figures(context) }
  })

/** Counts the round trips of turns on every SQL store, prints them, and returns their JSON. */
export const roundTripsBench = (stores: ReadonlyArray<BenchStore>, turns: number) =>
  Effect.gen(function*() {
    const rows: Array<Row> = []
    for (const store of stores) {
      if (store.over === undefined) continue
      for (const strategy of ["sliding window", "summarization"] as const) {
        const counter: Counter = { value: 0, fiber: undefined }
        const repository = store.over(counting(counter))
        const figures = strategy === "sliding window"
          ? yield* Effect.provide(countTurns(counter, turns, false), slidingMemory(repository))
          : yield* Effect.provide(
            countTurns(counter, turns, true),
            summarizingMemory(repository, { mode: "incremental" })
          )
        rows.push({ store: store.name, strategy, turns, ...figures })
      }
    }
    yield* printTable(
      "Round trips per call (statements sent to the database)",
      `${turns} turns of addMessages(user, assistant) + getContext per row, counted by a SqlClient that wraps ` +
        "the store's connections; background summarizations are awaited between turns and not counted",
      ["store", "strategy", "addMessages max", "mean", "getContext max", "mean"],
      rows.map((r) => [
        r.store,
        r.strategy,
        String(r.addMessages.max),
        r.addMessages.mean.toFixed(2),
        String(r.getContext.max),
        r.getContext.mean.toFixed(2)
      ])
    )
    return rows
  })
