/**
 * What the benchmarks run on: their settings (read with Effect `Config` from the environment),
 * the stores (in memory, PGlite, and PostgreSQL when `DATABASE_URL` is set, in a schema of its
 * own dropped afterwards) and the memory layers over them.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import type { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import type { SqlError } from "@effect/sql/SqlError"
import { Config, type ConfigError, Effect, Layer, Option, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import type * as ConversationId from "../src/domain/ConversationId.js"
import type { DataValidationError } from "../src/errors/DataValidationError.js"
import type { RepositoryError } from "../src/errors/RepositoryError.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as PgliteClient from "../src/layers/store/PgliteClient.js"
import * as PgStore from "../src/layers/store/PgStore.js"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import type * as Store from "../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import type * as ChatMemoryService from "../src/services/ChatMemoryService.js"
import type { MemoryManagementStrategy } from "../src/services/MemoryManagementStrategy.js"
import type { SkillService } from "../src/services/SkillService.js"
import type { TokenCounter } from "../src/services/TokenCounter.js"
import * as HierarchicalStrategy from "../src/strategies/HierarchicalStrategy.js"
import type { SummarizationOptions } from "../src/strategies/internal/options.js"
import * as SlidingWindowStrategy from "../src/strategies/SlidingWindowStrategy.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"

/** The sections, in the order they run. */
export const sectionNames = [
  "turn",
  "history",
  "recall",
  "recallcost",
  "hybrid",
  "throughput",
  "summarizer",
  "policy",
  "tokens",
  "load",
  "open",
  "users"
] as const

/** The benchmark settings. */
export interface Settings {
  /** `BENCH_QUICK=1`: about a fifth of the runs, for a smoke run. */
  readonly quick: boolean
  /** Multiplies run counts (`BENCH_SCALE`, default 1; 0.2 with `BENCH_QUICK`). */
  readonly scale: number
  /** `BENCH_SECTIONS=turn,history,...`: the sections to run (default all). */
  readonly sections: ReadonlyArray<string>
  /** `BENCH_OUT`: where the JSON results go. */
  readonly out: string
  /** `DATABASE_URL`: the PostgreSQL server, when set and not empty. */
  readonly databaseUrl: Option.Option<Redacted.Redacted>
}

/** Reads the settings from the environment. */
export const settings: Effect.Effect<Settings, ConfigError.ConfigError> = Effect.gen(function*() {
  const quick = yield* Config.boolean("BENCH_QUICK").pipe(Config.withDefault(false))
  const scale = yield* Config.number("BENCH_SCALE").pipe(Config.withDefault(quick ? 0.2 : 1))
  const sections = yield* Config.array(Config.string(), "BENCH_SECTIONS").pipe(Config.withDefault(sectionNames))
  const out = yield* Config.string("BENCH_OUT").pipe(Config.withDefault("bench/results/latest.json"))
  const url = yield* Config.option(Config.redacted("DATABASE_URL"))
  return {
    quick,
    scale,
    sections: sections.map((s) => s.trim()).filter((s) => s.length > 0),
    out,
    databaseUrl: Option.filter(url, (u) => Redacted.value(u).trim() !== "")
  }
})

/** `n` runs scaled by the settings, at least `min`. */
export const scaled = (settings: Settings, n: number, min = 1): number => Math.max(min, Math.round(n * settings.scale))

/** What a store layer may fail with while it is built. */
export type StoreError = RepositoryError | SqlError | ConfigError.ConfigError

/** A store the benchmarks run on; `layer` builds a fresh, empty one each time it is provided. */
export interface BenchStore {
  readonly name: string
  readonly layer: Layer.Layer<Store.Ports, StoreError>
  /**
   * For a SQL store: the store over whatever `SqlClient` is given (a fresh database or schema
   * each time), so that a bench can put a client of its own in between (`roundTrips.ts`).
   */
  readonly over?: (
    wrap: (client: Layer.Layer<SqlClient.SqlClient, StoreError>) => Layer.Layer<SqlClient.SqlClient, StoreError>
  ) => Layer.Layer<Store.Ports, StoreError>
}

const withSearchPath = (base: string, schema: string): string => {
  const parsed = new URL(base)
  parsed.searchParams.set("options", `-c search_path=${schema}`)
  return parsed.toString()
}

/** A `SqlClient` on a fresh schema of the PostgreSQL server, created with the layer and dropped when it closes. */
const postgresClient = (url: Redacted.Redacted): Layer.Layer<SqlClient.SqlClient, StoreError> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const schema = `bench_${randomUUID().replaceAll("-", "")}`
    const admin = yield* PgClient.make({ url, maxConnections: 1 })
    yield* Effect.acquireRelease(
      admin`CREATE SCHEMA ${admin(schema)}`,
      () => Effect.orDie(admin`DROP SCHEMA ${admin(schema)} CASCADE`)
    )
    return PgClient.layer({
      url: Redacted.make(withSearchPath(Redacted.value(url), schema)),
      // As many connections as PgStore opens by default.
      maxConnections: 10
    })
  })).pipe(Layer.provide(Reactivity.layer))

/** The PostgreSQL store as `PgStore.layer` builds it, in a fresh schema. */
const postgresLayer = (url: Redacted.Redacted): Layer.Layer<Store.Ports, StoreError> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const schema = `bench_${randomUUID().replaceAll("-", "")}`
    const admin = yield* PgClient.make({ url, maxConnections: 1 })
    yield* Effect.acquireRelease(
      admin`CREATE SCHEMA ${admin(schema)}`,
      () => Effect.orDie(admin`DROP SCHEMA ${admin(schema)} CASCADE`)
    )
    return PgStore.layer({ url: Redacted.make(withSearchPath(Redacted.value(url), schema)) })
  })).pipe(Layer.provide(Reactivity.layer))

const pglite: BenchStore = {
  name: "PGlite (in memory)",
  layer: PgStore.layerPglite(),
  over: (wrap) => SqlStore.layer({ lock: "process" }).pipe(Layer.provide(wrap(PgliteClient.layer())))
}

const postgres = (url: Redacted.Redacted): BenchStore => ({
  name: "PostgreSQL",
  layer: postgresLayer(url),
  over: (wrap) => SqlStore.layer({ lock: "lease" }).pipe(Layer.provide(wrap(postgresClient(url))))
})

/** The stores to run on, and why PostgreSQL was left out when it was. */
export const stores = (
  settings: Settings
): { readonly stores: ReadonlyArray<BenchStore>; readonly skipped: string | null } =>
  Option.match(settings.databaseUrl, {
    onNone: () => ({
      stores: [
        { name: "in-memory", layer: MemoryStore.layer },
        pglite
      ],
      skipped: "PostgreSQL skipped: DATABASE_URL is not set"
    }),
    onSome: (url) => ({
      stores: [
        { name: "in-memory", layer: MemoryStore.layer },
        pglite,
        postgres(url)
      ],
      skipped: null
    })
  })

/** The prompt budget of every benchmark (the default of the strategies). */
export const budget = 3000

/** The memory with a sliding window over `store`. */
export const slidingMemory = (
  store: Layer.Layer<Store.Ports, StoreError>,
  counter: Layer.Layer<TokenCounter> = ApproximateTokenCounter.layer
) =>
  ChatMemory.layer.pipe(
    Layer.provideMerge(SlidingWindowStrategy.layer({ tokenBudget: budget })),
    Layer.provideMerge(store),
    Layer.provideMerge(counter)
  )

/** The memory with a summarizing strategy over `store` and the scripted skill (answers at once). */
const skilledMemory = (
  store: Layer.Layer<Store.Ports, StoreError>,
  strategy: Layer.Layer<MemoryManagementStrategy, DataValidationError, Store.Ports | SkillService | TokenCounter>,
  counter: Layer.Layer<TokenCounter>,
  script: ScriptedSkill.ScriptedSkill.Script
): Layer.Layer<
  ChatMemoryService.ChatMemoryService | Store.Ports | TokenCounter | ScriptedSkill.ScriptedSkill,
  StoreError | DataValidationError
> =>
  ChatMemory.layer.pipe(
    Layer.provideMerge(strategy),
    Layer.provideMerge(ScriptedSkill.layer(script)),
    Layer.provideMerge(store),
    Layer.provideMerge(counter)
  )

/** The memory with the summarization strategy over `store` and the scripted skill. */
export const summarizingMemory = (
  store: Layer.Layer<Store.Ports, StoreError>,
  options: Partial<SummarizationOptions>,
  counter: Layer.Layer<TokenCounter> = ApproximateTokenCounter.layer
) => skilledMemory(store, SummarizationStrategy.layer({ tokenBudget: budget, ...options }), counter, {})

/** The memory with the hierarchical strategy (facts and narrative) over `store` and the scripted skill. */
export const hierarchicalMemory = (
  store: Layer.Layer<Store.Ports, StoreError>,
  counter: Layer.Layer<TokenCounter>,
  script: ScriptedSkill.ScriptedSkill.Script
) => skilledMemory(store, HierarchicalStrategy.layer({ tokenBudget: budget }), counter, script)

/**
 * Commits a first summary that covers messages 1 to `cursor`, as a summarizer that keeps up would
 * leave it, so that a context reads its window and recall, not a history that is behind.
 */
export const seedSummary = (
  summaries: Store.Store["summaries"],
  conversationId: ConversationId.ConversationId,
  cursor: number,
  narrative: string
) =>
  summaries.commitSummary({
    conversationId,
    expected: { cursor: 0, version: 0 },
    narrative,
    facts: [],
    layers: [],
    cursor,
    record: {
      fromSeq: 1,
      toSeq: cursor,
      summary: "seeded",
      summaryTruncated: false,
      mode: "incremental",
      skillId: "bench/seed",
      model: null,
      inputTokens: 0,
      outputTokens: 0,
      durationMs: 0
    }
  })
