/**
 * The memory under load: 3 memory layers (as 3 processes of a host) on one database, 200
 * concurrent writers on 50 conversations, each adding user+assistant turns and reading the context,
 * with background summarization by the offline extractive skill behind a simulated model latency.
 * Reports what was lost, `addMessages` and `getContext` latencies, and how many contexts were served
 * with a summary that was not behind.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Exit, Layer, Option, Queue, Redacted, Ref, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { monitorEventLoopDelay } from "node:perf_hooks"
import * as ConversationId from "../src/domain/ConversationId.js"
import type { MemoryEvent } from "../src/domain/MemoryEvent.js"
import type { RepositoryError } from "../src/errors/RepositoryError.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ExtractiveSkill from "../src/layers/skills/ExtractiveSkill.js"
import * as PgStore from "../src/layers/store/PgStore.js"
import * as Store from "../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import type { RepositoryService } from "../src/services/RepositoryService.js"
import { SkillService } from "../src/services/SkillService.js"
import { SummarizationLease } from "../src/services/SummarizationLease.js"
import type { SummarizationOptions } from "../src/strategies/internal/options.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"
import { scaled, type Settings } from "./setup.js"
import { type Figure, fixed, int, ms, printTable, summarize, timed } from "./stats.js"
import { pick } from "./texts.js"

/** The load of the issue: writers, conversations and memory layers. */
const writers = 200
const conversations = 50
const instances = 3
/** The most time writers spend writing, and then waiting for the summarizers to be idle. */
const writingDeadline = Duration.seconds(75)
const idleDeadline = Duration.seconds(30)

/**
 * The strategy's defaults (the watermark trigger) with a smaller budget and summary cap (defaults
 * 3,000 and 500), so that each conversation of this short run is folded many times.
 */
const strategyOptions: Partial<SummarizationOptions> = {
  tokenBudget: 1200,
  summaryTokenCap: 200
}

/** Turn `t` of writer `w`: a user message (~90 characters) and an answer (~180), unique in the run. */
const turn = (w: number, t: number) => [
  {
    role: "user" as const,
    content: `W${w} question ${t}: where is order ORD-${w}-${t} and when does slot ${pick(9, w, t)} open?`.padEnd(
      90,
      "."
    )
  },
  {
    role: "assistant" as const,
    content: `W${w} answer ${t}: order ORD-${w}-${t} left the warehouse; we confirmed slot ${
      pick(9, w, t)
    } for delivery on Tuesday, the carrier will call before noon.`.padEnd(180, ".")
  }
]

/** The simulated main-model time of a writer between two turns: 500 to 1,500 ms. */
const thinkMillis = (w: number, t: number) => 500 + pick(1001, w, t, 7)
/** The simulated summarizer-model latency of one skill call: 200 to 500 ms. */
const modelMillis = (call: number) => 200 + pick(301, call, 11)

/** The offline extractive skill answering after a simulated model latency. */
const slowSkill = (calls: Ref.Ref<number>) =>
  Layer.effect(
    SkillService,
    Effect.gen(function*() {
      const skill = yield* ExtractiveSkill.make
      const latency = Effect.flatMap(
        Ref.getAndUpdate(calls, (n) => n + 1),
        (call) => Effect.sleep(Duration.millis(modelMillis(call)))
      )
      return SkillService.of({
        summarize: (input) => Effect.zipRight(latency, skill.summarize(input)),
        extractFacts: (input) => Effect.zipRight(latency, skill.extractFacts(input))
      })
    })
  ).pipe(Layer.provide(ApproximateTokenCounter.layer))

/** What the store of one instance did: lease outcomes and time spent holding the lease. */
interface LockCounters {
  ran: number
  busy: number
  heldMillis: Array<number>
}

/** The store with its summarization lease counted (runs, busy answers, time held). */
const countedLease = (counters: LockCounters) =>
  Store.layer(
    Effect.map(Store.get, (inner) => ({
      ...inner,
      lease: SummarizationLease.of({
        withLease: <A, E, R>(
          conversationId: ConversationId.ConversationId,
          effect: Effect.Effect<A, E, R>
        ) =>
          Effect.tap(
            inner.lease.withLease(
              conversationId,
              Effect.tap(timed(effect), ([t]) => Effect.sync(() => counters.heldMillis.push(t))).pipe(
                Effect.map(([, a]) => a)
              )
            ),
            (outcome) =>
              Effect.sync(() => {
                if (Option.isSome(outcome)) counters.ran += 1
                else counters.busy += 1
              })
          )
      })
    }))
  )

const withSearchPath = (base: string, schema: string): string => {
  const parsed = new URL(base)
  parsed.searchParams.set("options", `-c search_path=${schema}`)
  return parsed.toString()
}

/** Sessions of the run's pools, sampled on the server. */
const SessionsRow = Schema.Struct({
  total: Schema.NumberFromString,
  active: Schema.NumberFromString,
  idle_in_transaction: Schema.NumberFromString,
  waiting_on_lock: Schema.NumberFromString
})

interface SessionSamples {
  readonly rows: Array<typeof SessionsRow.Type>
}

/**
 * The repositories of the instances: on PostgreSQL, one pool per instance (as one per process) over
 * a fresh schema, dropped afterwards, and a sampler of the server's sessions; on PGlite, one
 * in-memory database shared by the three instances (a PGlite database has one owner).
 */
const repositories = (settings: Settings, samples: SessionSamples) =>
  Effect.gen(function*() {
    if (Option.isNone(settings.databaseUrl)) {
      const shared = yield* Layer.memoize(PgStore.layerPglite())
      return {
        store: "PGlite (in memory, shared by the 3 layers)",
        layers: Array.from({ length: instances }, () => shared)
      }
    }
    const url = settings.databaseUrl.value
    const schema = `bench_load_${randomUUID().replaceAll("-", "")}`
    const admin = yield* PgClient.make({ url, maxConnections: 1 })
    yield* Effect.acquireRelease(
      admin`CREATE SCHEMA ${admin(schema)}`,
      () => Effect.orDie(admin`DROP SCHEMA ${admin(schema)} CASCADE`)
    )
    const application = `bench-load-${schema.slice(-8)}`
    const sample = admin`SELECT count(*) AS total,
        count(*) FILTER (WHERE state = 'active') AS active,
        count(*) FILTER (WHERE state = 'idle in transaction') AS idle_in_transaction,
        count(*) FILTER (WHERE wait_event_type = 'Lock') AS waiting_on_lock
      FROM pg_stat_activity WHERE application_name = ${application}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(SessionsRow))),
      Effect.tap((rows) => Effect.sync(() => samples.rows.push(...rows))),
      Effect.catchAll((error) => Effect.logWarning("session sample failed", error))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(sample, Effect.sleep("200 millis"))))
    const layer = PgStore.layer({
      url: Redacted.make(withSearchPath(Redacted.value(url), schema)),
      applicationName: application
    })
    return {
      store: "PostgreSQL (a pool per layer, default options)",
      layers: Array.from({ length: instances }, () => layer)
    }
  }).pipe(Effect.provide(Reactivity.layer))

/** What the events of one instance said. */
interface EventCounts {
  contexts: number
  behind: number
  failure: number
  summarized: number
  summarizationFailed: number
}

/** One memory layer: the service over its store, the slow skill and the strategy. */
const instance = (
  repository: Layer.Layer<Store.Ports, RepositoryError>,
  skillCalls: Ref.Ref<number>
) =>
  Effect.gen(function*() {
    const lock: LockCounters = { ran: 0, busy: 0, heldMillis: [] }
    const context = yield* Layer.build(
      ChatMemory.layer.pipe(
        Layer.provideMerge(SummarizationStrategy.layer(strategyOptions)),
        Layer.provideMerge(slowSkill(skillCalls)),
        Layer.provideMerge(ApproximateTokenCounter.layer),
        Layer.provideMerge(Layer.provide(countedLease(lock), repository))
      )
    )
    const memory = Context.get(context, ChatMemoryService)
    const counts: EventCounts = { contexts: 0, behind: 0, failure: 0, summarized: 0, summarizationFailed: 0 }
    const events: Queue.Dequeue<MemoryEvent> = yield* memory.subscribe
    const count = (event: MemoryEvent) => {
      switch (event._tag) {
        case "ContextBuilt":
          counts.contexts += 1
          break
        case "FallbackUsed":
          if (event.reason === "summary-behind") counts.behind += 1
          else counts.failure += 1
          break
        case "Summarized":
          counts.summarized += 1
          break
        case "SummarizationFailed":
          counts.summarizationFailed += 1
          break
      }
    }
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(
          Queue.takeBetween(events, 1, 1024),
          (chunk) => Effect.sync(() => Array.from(chunk).forEach(count))
        )
      )
    )
    return { memory, store: yield* Effect.provide(Store.get, context), lock, counts }
  })

/** What the writers did: latencies, failures, and every call that succeeded. */
interface WriterLog {
  readonly add: Array<number>
  readonly context: Array<number>
  addFailures: number
  contextFailures: number
  turns: number
  readonly calls: Map<string, Array<ReadonlyArray<string>>>
}

/** Writer `w`: on conversation `w % 50`, through layer `w % 3`, until its turns or the deadline run out. */
const writer = (
  w: number,
  turns: number,
  deadline: number,
  memories: ReadonlyArray<ChatMemoryService.Service>,
  log: WriterLog
) =>
  Effect.gen(function*() {
    const memory = memories[w % memories.length]
    if (memory === undefined) return
    const id = `load-${w % conversations}`
    yield* Effect.sleep(Duration.millis(pick(1000, w, 3)))
    for (let t = 0; t < turns && performance.now() < deadline; t++) {
      const messages = turn(w, t)
      const [addMillis, added] = yield* timed(Effect.exit(memory.addMessages(id, messages)))
      if (Exit.isSuccess(added)) {
        log.add.push(addMillis)
        const calls = log.calls.get(id) ?? []
        calls.push(messages.map((m) => m.content))
        log.calls.set(id, calls)
        log.turns += 1
      } else log.addFailures += 1
      const [contextMillis, context] = yield* timed(Effect.exit(memory.getContext(id)))
      if (Exit.isSuccess(context)) log.context.push(contextMillis)
      else log.contextFailures += 1
      yield* Effect.sleep(Duration.millis(thinkMillis(w, t)))
    }
  })

/** Compares what the writers added with what is stored: lost, duplicated, split, and seq gaps. */
const verify = (repository: RepositoryService.Service, calls: WriterLog["calls"]) =>
  Effect.gen(function*() {
    let lost = 0
    let duplicated = 0
    let split = 0
    let gaps = 0
    let stored = 0
    for (const [id, written] of calls) {
      const messages = yield* repository.listMessages(ConversationId.make(id), {})
      stored += messages.length
      const seqOf = new Map<string, number>()
      messages.forEach((m, i) => {
        if (seqOf.has(m.content)) duplicated += 1
        seqOf.set(m.content, m.seq)
        if (m.seq !== i + 1) gaps += 1
      })
      for (const call of written) {
        const seqs = call.map((content) => seqOf.get(content))
        lost += seqs.filter((seq) => seq === undefined).length
        const first = seqs[0]
        if (first !== undefined && seqs.some((seq, k) => seq !== undefined && seq !== first + k)) split += 1
      }
    }
    return { lost, duplicated, split, gaps, stored }
  })

const mean = (xs: ReadonlyArray<number>) => xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length
const max = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => Math.max(a, b), 0)

/** Runs the load on PostgreSQL (with `DATABASE_URL`) or PGlite, prints it, and returns its JSON. */
export const loadBench = (settings: Settings) =>
  Effect.scoped(Effect.gen(function*() {
    const turnsPerWriter = scaled(settings, 25, 5)
    const sessions: SessionSamples = { rows: [] }
    const { layers, store } = yield* repositories(settings, sessions)
    const skillCalls = yield* Ref.make(0)
    const running = yield* Effect.all(layers.map((layer) => instance(layer, skillCalls)), { concurrency: "unbounded" })
    const log: WriterLog = {
      add: [],
      context: [],
      addFailures: 0,
      contextFailures: 0,
      turns: 0,
      calls: new Map()
    }
    const memories = running.map((x) => x.memory)
    // Where the process itself spends the time: its CPU, and how late its event loop runs callbacks.
    const loopDelay = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const histogram = monitorEventLoopDelay({ resolution: 10 })
        histogram.enable()
        return histogram
      }),
      (histogram) => Effect.sync(() => histogram.disable())
    )
    const cpuBefore = process.cpuUsage()
    const started = performance.now()
    const deadline = started + Duration.toMillis(writingDeadline)
    const finished = yield* Effect.forEach(
      Array.from({ length: writers }, (_, w) => w),
      (w) => writer(w, turnsPerWriter, deadline, memories, log),
      { concurrency: "unbounded", discard: true }
    ).pipe(
      // A call stuck past the deadline must not keep the run going: the writers are interrupted.
      Effect.timeoutOption(Duration.sum(writingDeadline, idleDeadline))
    )
    const writingSeconds = (performance.now() - started) / 1000
    const cpu = process.cpuUsage(cpuBefore)
    const processCpuSeconds = (cpu.user + cpu.system) / 1e6
    const eventLoopDelay = {
      median: loopDelay.percentile(50) / 1e6,
      p99: loopDelay.percentile(99) / 1e6,
      runs: loopDelay.count,
      warmup: 0
    }
    loopDelay.disable()
    const [idleMillis, idle] = yield* timed(
      Effect.forEach(running, (x) => x.memory.awaitIdle(), { concurrency: "unbounded", discard: true }).pipe(
        Effect.timeout(idleDeadline),
        Effect.option
      )
    )
    // Let the event readers drain what was published last.
    yield* Effect.sleep("100 millis")
    const first = running[0]
    if (first === undefined) return yield* Effect.dieMessage("no instance")
    const check = yield* verify(first.store.repository, log.calls)
    const summarizations = yield* Effect.forEach(
      Array.from({ length: conversations }, (_, c) => ConversationId.make(`load-${c}`)),
      (id) =>
        Effect.map(
          Effect.option(first.store.summaries.listSummarizations(id)),
          Option.match({ onNone: () => 0, onSome: (r) => r.length })
        )
    )
    const events = running.map((x) => x.counts)
    const sum = (f: (counts: EventCounts) => number) => events.reduce((n, counts) => n + f(counts), 0)
    const contexts = log.context.length
    const behind = sum((c) => c.behind)
    const add: Figure = summarize(log.add, 0)
    const context: Figure = summarize(log.context, 0)
    const lockHeld = running.flatMap((x) => x.lock.heldMillis)
    const row = {
      store,
      writers,
      conversations,
      instances,
      turnsPerWriter,
      turnsAdded: log.turns,
      writingSeconds,
      writersInterrupted: Option.isNone(finished),
      turnsPerSecond: log.turns / writingSeconds,
      processCpuSeconds,
      processCpuMillisPerTurn: (1000 * processCpuSeconds) / Math.max(1, log.turns),
      eventLoopDelay,
      idleAfterWritingMillis: Option.isSome(idle) ? idleMillis : Number.NaN,
      lost: check.lost,
      duplicated: check.duplicated,
      split: check.split,
      seqGaps: check.gaps,
      addFailures: log.addFailures,
      contextFailures: log.contextFailures,
      addMessages: add,
      getContext: context,
      contexts,
      contextsSeenByEvents: sum((c) => c.contexts),
      servedBehind: behind,
      fallbackFailures: sum((c) => c.failure),
      freshShare: contexts === 0 ? Number.NaN : 1 - behind / contexts,
      summarizations: summarizations.reduce((a, b) => a + b, 0),
      summarizedEvents: sum((c) => c.summarized),
      summarizationFailures: sum((c) => c.summarizationFailed),
      skillCalls: yield* Ref.get(skillCalls),
      lockRuns: running.reduce((n, x) => n + x.lock.ran, 0),
      lockBusy: running.reduce((n, x) => n + x.lock.busy, 0),
      lockHeld: summarize(lockHeld, 0),
      sessions: sessions.rows.length === 0 ? null : {
        samples: sessions.rows.length,
        meanTotal: mean(sessions.rows.map((r) => r.total)),
        meanActive: mean(sessions.rows.map((r) => r.active)),
        meanIdleInTransaction: mean(sessions.rows.map((r) => r.idle_in_transaction)),
        maxIdleInTransaction: max(sessions.rows.map((r) => r.idle_in_transaction)),
        meanWaitingOnLock: mean(sessions.rows.map((r) => r.waiting_on_lock)),
        maxWaitingOnLock: max(sessions.rows.map((r) => r.waiting_on_lock))
      }
    }
    const method = `${writers} writers on ${conversations} conversations through ${instances} memory layers ` +
      `(summarization strategy with its defaults but budget ${strategyOptions.tokenBudget} and summary cap ` +
      `${strategyOptions.summaryTokenCap}) on one database; ` +
      `each writer adds ${turnsPerWriter} user+assistant turns (~70 tokens), reading the context after each and ` +
      `waiting 0.5-1.5 s between turns (the main model); the summarizer is the extractive skill behind a ` +
      `simulated model latency of 200-500 ms per call; writing stops after ${Duration.format(writingDeadline)} at most`
    yield* printTable("memory under load", method, ["figure", "value"], [
      ["store", row.store],
      ["turns added (failed calls)", `${int(row.turnsAdded)} (${int(row.addFailures)})`],
      [
        "writing time, turns/s",
        `${fixed(row.writingSeconds, 1)} s, ${fixed(row.turnsPerSecond, 1)}${
          row.writersInterrupted ? " (writers interrupted)" : ""
        }`
      ],
      [
        "process CPU while writing (per turn)",
        `${fixed(row.processCpuSeconds, 1)} s (${ms(row.processCpuMillisPerTurn)})`
      ],
      ["event loop delay median / p99", `${ms(eventLoopDelay.median)} / ${ms(eventLoopDelay.p99)}`],
      ["lost / duplicated / split / seq gaps", `${row.lost} / ${row.duplicated} / ${row.split} / ${row.seqGaps}`],
      ["addMessages median / p99", `${ms(add.median)} / ${ms(add.p99)}`],
      ["getContext median / p99 (failed)", `${ms(context.median)} / ${ms(context.p99)} (${row.contextFailures})`],
      [
        "contexts with a summary not behind",
        `${fixed(100 * row.freshShare, 1)} % (${int(contexts - behind)} of ${int(contexts)})`
      ],
      [
        "summarizations (failed), skill calls",
        `${row.summarizations} (${row.summarizationFailures}), ${row.skillCalls}`
      ],
      [
        "lock runs / busy; held median / p99",
        `${row.lockRuns} / ${row.lockBusy}; ${ms(row.lockHeld.median)} / ${ms(row.lockHeld.p99)}`
      ],
      ["idle after writing", ms(row.idleAfterWritingMillis)],
      ...(row.sessions === null ? [] : [
        [
          "server sessions: mean total / active",
          `${fixed(row.sessions.meanTotal, 1)} / ${fixed(row.sessions.meanActive, 1)}`
        ],
        [
          "idle in transaction: mean / max",
          `${fixed(row.sessions.meanIdleInTransaction, 1)} / ${row.sessions.maxIdleInTransaction}`
        ],
        [
          "waiting on a lock: mean / max",
          `${fixed(row.sessions.meanWaitingOnLock, 1)} / ${row.sessions.maxWaitingOnLock}`
        ]
      ])
    ], [
      "lost: messages of a successful addMessages that are not stored; split: a call's messages not adjacent",
      "a summary not behind: getContext did not emit FallbackUsed(summary-behind), i.e. it was not served as a plain",
      "  window because a due summarization had not happened (omitting turns between folds is by design and not counted)",
      "lock held: time inside withLease (plan, model call, commit); busy: the lease answered None"
    ])
    return { method, row }
  }))
