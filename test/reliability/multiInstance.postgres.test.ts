/**
 * Several memory layers on one PostgreSQL database, as several processes of a host: each with its
 * own pool, strategy and scripted skill that counts its calls. Replaying one conversation through
 * them, and concurrent writers on several conversations: nothing lost (seqs 1..N, every message
 * once, each call's messages together), no summarization applied twice (records of disjoint
 * ranges, one version each, one applied event each, as many skill calls as records), the cursor
 * never moves back, and no layer summarizes more conversations at once than it is allowed. The
 * summarization lease between them: it holds no connection, keeps others out while in force, is
 * taken over once it lapses, is renewed while its holder runs, and stops a holder that lost it.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import {
  Cause,
  Context,
  Deferred,
  Effect,
  Exit,
  Fiber,
  Layer,
  Logger,
  LogLevel,
  Option,
  Queue,
  Redacted,
  Ref,
  Schema,
  TestClock
} from "effect"
import * as ConversationId from "../../src/domain/ConversationId.js"
import type { MemoryEvent } from "../../src/domain/MemoryEvent.js"
import * as ChatMemory from "../../src/layers/ChatMemory.js"
import { defaultSummary } from "../../src/layers/skills/internal/scripted.js"
import * as ScriptedSkill from "../../src/layers/skills/ScriptedSkill.js"
import * as PgStore from "../../src/layers/store/PgStore.js"
import * as Store from "../../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../../src/layers/tokens/ApproximateTokenCounter.js"
import * as ChatMemoryService from "../../src/services/ChatMemoryService.js"
import type { SummaryStore } from "../../src/services/SummaryStore.js"
import type { SummarizationOptions } from "../../src/strategies/internal/options.js"
import * as SummarizationStrategy from "../../src/strategies/SummarizationStrategy.js"
import { newMessage } from "../fixtures/messages.js"
import { describePostgres, freshSchemaUrl } from "../fixtures/postgres.js"
import { type SharedRepository, sharedSchema } from "../fixtures/postgresShared.js"

const options: Partial<SummarizationOptions> = {
  kRawTurns: 2,
  tokenBudget: 400,
  chunkSummarizeThreshold: 450,
  summaryTokenCap: 80,
  retries: 0,
  summarizationConcurrency: 2
}

/** Summarizations running now and at most, per conversation, across every instance. */
interface Overlap {
  readonly running: Map<string, number>
  most: number
}

/** Summarizations of one instance running now and at most, across its conversations. */
interface InFlight {
  now: number
  most: number
}

/**
 * A summarize skill that takes a few milliseconds, so that instances contend, and records overlaps
 * (per conversation across instances, and per instance across conversations).
 */
const slowSkill = (overlap: Overlap, inFlight: InFlight): ScriptedSkill.ScriptedSkill.Script => ({
  summarize: (input) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const now = (overlap.running.get(input.conversationId) ?? 0) + 1
        overlap.running.set(input.conversationId, now)
        overlap.most = Math.max(overlap.most, now)
        inFlight.now += 1
        inFlight.most = Math.max(inFlight.most, inFlight.now)
      }),
      () => Effect.as(Effect.sleep("4 millis"), defaultSummary(input)),
      () =>
        Effect.sync(() => {
          overlap.running.set(input.conversationId, (overlap.running.get(input.conversationId) ?? 1) - 1)
          inFlight.now -= 1
        })
    )
})

/** One instance: the memory over a pool of its own, and the summaries it applied (from its events). */
const instance = (repository: SharedRepository, overlap: Overlap) =>
  Effect.gen(function*() {
    const inFlight: InFlight = { now: 0, most: 0 }
    const context = yield* Layer.build(
      ChatMemory.layer.pipe(
        Layer.provideMerge(SummarizationStrategy.layer(options)),
        Layer.provideMerge(ScriptedSkill.layer(slowSkill(overlap, inFlight))),
        Layer.provideMerge(ApproximateTokenCounter.layer),
        Layer.provideMerge(repository({ maxConnections: 4, maxLockConnections: 2 }))
      )
    )
    const memory = Context.get(context, ChatMemoryService.ChatMemoryService)
    const applied = yield* Ref.make<ReadonlyArray<{ readonly conversationId: string; readonly version: number }>>([])
    const events: Queue.Dequeue<MemoryEvent> = yield* memory.subscribe
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(events), (event) =>
      event._tag === "Summarized"
        ? Ref.update(applied, (all) => [...all, { conversationId: event.conversationId, version: event.version }])
        : Effect.void)))
    const skill = Context.get(context, ScriptedSkill.ScriptedSkill)
    return {
      memory,
      store: yield* Effect.provide(Store.get, context),
      applied: Ref.get(applied),
      skillCalls: Effect.map(skill.calls, (calls) => calls.length),
      mostInFlight: Effect.sync(() => inFlight.most)
    }
  })

type Instance = Effect.Effect.Success<ReturnType<typeof instance>>

const turn = (label: string, i: number) => [
  { role: "user" as const, content: `${label} question ${i}: where is order ORD-${1000 + i}?`.padEnd(90, ".") },
  { role: "assistant" as const, content: `${label} answer ${i}: it left the warehouse.`.padEnd(180, ".") }
]

/** Samples the summary state of `ids` until `done`, and fails if a cursor or version ever goes back. */
const sampleMonotone = (
  summaries: SummaryStore.Service,
  ids: ReadonlyArray<string>,
  done: Deferred.Deferred<boolean>
) =>
  Effect.gen(function*() {
    const last = new Map<string, { cursor: number; version: number }>()
    let samples = 0
    while (!(yield* Deferred.isDone(done))) {
      for (const id of ids) {
        const state = yield* Effect.option(summaries.getSummaryState(ConversationId.make(id)))
        if (state._tag === "None") continue
        const before = last.get(id) ?? { cursor: 0, version: 0 }
        assert.isAtLeast(state.value.cursor, before.cursor, `${id}: the cursor moved back`)
        assert.isAtLeast(state.value.version, before.version, `${id}: the version moved back`)
        last.set(id, { cursor: state.value.cursor, version: state.value.version })
        samples += 1
      }
      yield* Effect.sleep("2 millis")
    }
    return samples
  })

/**
 * The store after the instances are idle: every message of every call once, in one piece; the
 * records of disjoint ranges, one version each; each version applied (by one instance) once.
 */
const checkConversation = (
  instances: ReadonlyArray<Instance>,
  id: string,
  calls: ReadonlyArray<ReadonlyArray<{ readonly content: string }>>
) =>
  Effect.gen(function*() {
    const [first] = instances
    if (first === undefined) return assert.fail("no instance")
    const conversationId = ConversationId.make(id)
    const stored = yield* first.store.repository.listMessages(conversationId, {})
    const total = calls.reduce((n, call) => n + call.length, 0)
    assert.deepStrictEqual(stored.map((m) => m.seq), Array.from({ length: total }, (_, i) => i + 1), `${id}: seqs`)
    const seqOf = new Map(stored.map((m) => [m.content, m.seq]))
    assert.strictEqual(seqOf.size, total, `${id}: a message is missing or stored twice`)
    for (const call of calls) {
      const seqs = call.map((m) => seqOf.get(m.content) ?? -1)
      assert.deepStrictEqual(seqs, seqs.map((_, k) => (seqs[0] ?? 0) + k), `${id}: a call was split`)
    }
    const state = yield* first.store.summaries.getSummaryState(conversationId)
    const records = yield* first.store.summaries.listSummarizations(conversationId)
    assert.deepStrictEqual(records.map((r) => r.version), Array.from({ length: state.version }, (_, i) => i + 1))
    records.forEach((r, i) => assert.isAbove(r.fromSeq, records[i - 1]?.toSeq ?? 0, `${id}: ranges overlap`))
    assert.strictEqual(state.cursor, records.at(-1)?.toSeq ?? 0)
    const applied = (yield* Effect.forEach(instances, (x) => x.applied)).flat().filter((a) => a.conversationId === id)
    assert.deepStrictEqual(applied.map((a) => a.version).sort((a, b) => a - b), records.map((r) => r.version))
    return records.length
  })

const idle = (instances: ReadonlyArray<Instance>) =>
  Effect.forEach(instances, (x) => x.memory.awaitIdle(), { discard: true, concurrency: "unbounded" })

describePostgres("several memory layers on one PostgreSQL database", (url) => {
  describe("multi-instance", () => {
    it.scopedLive(
      "two layers replaying one conversation: nothing lost, nothing applied twice, cursor monotone",
      () =>
        Effect.gen(function*() {
          const repository = yield* sharedSchema(url)
          const overlap: Overlap = { running: new Map(), most: 0 }
          // Started together, as two processes would: both run the migrations on the new schema.
          const instances = yield* Effect.all([instance(repository, overlap), instance(repository, overlap)], {
            concurrency: "unbounded"
          })
          const [a, b] = instances
          if (a === undefined || b === undefined) return assert.fail("two instances")
          const id = "replay"
          const calls = Array.from({ length: 80 }, (_, i) => turn("replay", i + 1))
          let last = { cursor: 0, version: 0 }
          for (const [i, call] of calls.entries()) {
            const [writer, other] = i % 2 === 0 ? [a, b] : [b, a]
            yield* writer.memory.addMessages(id, call)
            // The other instance reads the context (and triggers its own job when the summary is behind).
            if (i % 3 === 0) yield* other.memory.getContext(id)
            const state = yield* other.store.summaries.getSummaryState(ConversationId.make(id))
            assert.isAtLeast(state.cursor, last.cursor, "the cursor moved back")
            assert.isAtLeast(state.version, last.version, "the version moved back")
            last = { cursor: state.cursor, version: state.version }
          }
          yield* idle(instances)
          const records = yield* checkConversation(instances, id, calls)
          assert.isAtLeast(records, 5)
          // Every skill call was applied: none was wasted on a summarization another instance made.
          const skillCalls = yield* Effect.forEach(instances, (x) => x.skillCalls)
          assert.strictEqual(skillCalls.reduce((n, k) => n + k, 0), records, "a skill call was not applied")
          assert.strictEqual(overlap.most, 1, "two instances summarized the conversation at once")
          for (const calls of skillCalls) assert.isAbove(calls, 0, "an instance never summarized")
        }).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
    )

    it.scopedLive("three layers under concurrent writers on four conversations", () =>
      Effect.gen(function*() {
        const repository = yield* sharedSchema(url)
        const overlap: Overlap = { running: new Map(), most: 0 }
        const instances = yield* Effect.all([1, 2, 3].map(() => instance(repository, overlap)), {
          concurrency: "unbounded"
        })
        const [first] = instances
        if (first === undefined) return assert.fail("three instances")
        const ids = ["w-0", "w-1", "w-2", "w-3"]
        // Each conversation gets 20 turns from a writer on each instance, all at once.
        const plan = ids.flatMap((id) =>
          instances.map((x, w) => ({ id, x, calls: Array.from({ length: 20 }, (_, i) => turn(`${id}/${w}`, i)) }))
        )
        const done = yield* Deferred.make<boolean>()
        const samplers = yield* Effect.forEach(instances, (x) =>
          Effect.fork(sampleMonotone(x.store.summaries, ids, done)))
        yield* Effect.forEach(
          plan,
          ({ calls, id, x }) =>
            Effect.forEach(calls, (call) => x.memory.addMessages(id, call), { discard: true }),
          { concurrency: "unbounded", discard: true }
        )
        yield* idle(instances)
        yield* Deferred.succeed(done, true)
        const samples = yield* Effect.forEach(samplers, Fiber.join)
        assert.isAbove(samples.reduce((n, k) => n + k, 0), 0)
        let records = 0
        for (const id of ids) {
          const calls = plan.filter((p) => p.id === id).flatMap((p) => p.calls)
          records += yield* checkConversation(instances, id, calls)
          // Each writer's turns are stored in the order it wrote them.
          const stored = yield* first.store.repository.listMessages(ConversationId.make(id), {})
          for (const { calls: writer } of plan.filter((p) => p.id === id)) {
            const order = writer.map((call) => stored.findIndex((m) => m.content === call[0]?.content))
            assert.deepStrictEqual(order, [...order].sort((x, y) => x - y), `${id}: a writer's turns were reordered`)
          }
        }
        assert.isAtLeast(records, ids.length)
        const skillCalls = yield* Effect.forEach(instances, (x) => x.skillCalls)
        assert.strictEqual(skillCalls.reduce((n, k) => n + k, 0), records, "a skill call was not applied")
        assert.strictEqual(overlap.most, 1, "two instances summarized one conversation at once")
        for (const x of instances) {
          assert.isAtMost(yield* x.mostInFlight, 2, "an instance summarized more conversations at once than allowed")
        }
      }).pipe(Logger.withMinimumLogLevel(LogLevel.Warning)))
  })

  describe("the summarization lease", () => {
    const LeaseRow = Schema.Struct({ lease_owner: Schema.String, lease_until: Schema.DateFromSelf })

    /** A store over a fresh schema, as one process would open it, and a client on that schema. */
    const processOn = (schemaUrl: string, options: Omit<PgStore.Options, "url">) =>
      Effect.flatMap(
        Layer.build(PgStore.layer({ ...options, url: Redacted.make(schemaUrl) })),
        (context) => Effect.provide(Store.get, context)
      )

    const fixture = (options: Omit<PgStore.Options, "url"> = {}) =>
      Effect.gen(function*() {
        const schemaUrl = yield* freshSchemaUrl(url)
        const store = yield* processOn(schemaUrl, options)
        const sql = yield* PgClient.make({ url: Redacted.make(schemaUrl), maxConnections: 1 })
        const lease = (id: string) =>
          Effect.flatMap(
            sql`SELECT lease_owner, lease_until FROM chat_memory_leases WHERE conversation_id = ${id}`,
            Schema.decodeUnknown(Schema.Array(LeaseRow))
          )
        return { schemaUrl, store, sql, lease }
      }).pipe(Effect.provide(Reactivity.layer))

    it.scoped("a holder keeps no connection: more holders than the pool has connections, and writers, all go on", () =>
      Effect.gen(function*() {
        // One connection: a lease that kept one while its effect ran would leave none to the others.
        const { store } = yield* fixture({ maxConnections: 1, maxLockConnections: 4 })
        const ids = ["held-0", "held-1", "held-2"].map((id) => ConversationId.make(id))
        const gate = yield* Deferred.make<undefined>()
        const holding = yield* Effect.forEach(ids, () => Deferred.make<undefined>())
        const holders = yield* Effect.forEach(ids, (id, i) => {
          const started = holding[i]
          return started === undefined ? Effect.die("no deferred") : Effect.fork(
            store.lease.withLease(
              id,
              Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(gate))
            )
          )
        })
        yield* Effect.forEach(holding, Deferred.await, { discard: true })
        // While every holder waits (for its model), writes and reads go through the one connection.
        for (const id of ids) {
          const appended = yield* store.repository.appendMessages(id, [newMessage("user", "written while held")])
          assert.deepStrictEqual(appended.messages.map((m) => m.seq), [1])
          const window = yield* store.repository.readWindow(id, { after: "cursor", tokenLimit: 100 })
          assert.deepStrictEqual(window.recent.map((m) => m.seq), [1])
        }
        yield* Deferred.succeed(gate, undefined)
        const outcomes = yield* Effect.forEach(holders, Fiber.join)
        assert.isTrue(outcomes.every(Option.isSome))
      }))

    it.scoped("a lease in force keeps others out; one that lapsed (its process died) is taken over and released", () =>
      Effect.gen(function*() {
        const { lease, sql, store } = yield* fixture()
        yield* sql`INSERT INTO chat_memory_leases (conversation_id, lease_owner, lease_until) VALUES
          ('alive', 'another-process', clock_timestamp() + interval '1 hour'),
          ('dead', 'a-dead-process', clock_timestamp() - interval '1 second')`
        const alive = ConversationId.make("alive")
        const dead = ConversationId.make("dead")
        assert.deepStrictEqual(yield* store.lease.withLease(alive, Effect.succeed("ran")), Option.none())
        const taken = yield* store.lease.withLease(
          dead,
          Effect.map(lease("dead"), (rows) => rows.map((row) => row.lease_owner))
        )
        assert.isTrue(Option.isSome(taken))
        if (Option.isSome(taken)) {
          assert.strictEqual(taken.value.length, 1)
          assert.notStrictEqual(taken.value[0], "a-dead-process")
        }
        // Released when its holder is done; the other process's lease is untouched.
        assert.deepStrictEqual(yield* lease("dead"), [])
        assert.deepStrictEqual((yield* lease("alive")).map((row) => row.lease_owner), ["another-process"])
      }).pipe(Effect.provide(Reactivity.layer)))

    // Not the default lease (30 s), so that a length not passed through fails the test; the
    // deprecated `leaseMillis` still sets it while it is kept.
    const spellings: ReadonlyArray<readonly [string, Omit<PgStore.Options, "url">]> = [
      ["lease", { lease: "15 seconds" }],
      ["leaseMillis", { leaseMillis: 15_000 }]
    ]
    for (const [spelling, options] of spellings) {
      it.scoped(`a holder renews its lease while it runs, and is stopped with an error when it lost it (${spelling})`, () =>
        Effect.gen(function*() {
          const { lease, sql, store } = yield* fixture(options)
          const id = ConversationId.make("renewed")
          const holding = yield* Deferred.make<undefined>()
          const interrupted = yield* Deferred.make<undefined>()
          const holder = yield* Effect.fork(store.lease.withLease(
            id,
            Effect.zipRight(Deferred.succeed(holding, undefined), Effect.never).pipe(
              Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
            )
          ))
          yield* Deferred.await(holding)
          const [first] = yield* lease("renewed")
          if (first === undefined) return assert.fail("no lease in force")
          // The renewal is due a third of the lease later (by the test clock); the lease's end is
          // the server's time, so it moves on as soon as the renewal has run.
          yield* TestClock.adjust("5001 millis")
          let renewed = first
          for (let i = 0; i < 500 && renewed.lease_until.getTime() <= first.lease_until.getTime(); i++) {
            renewed = (yield* lease("renewed"))[0] ?? renewed
          }
          assert.isAbove(renewed.lease_until.getTime(), first.lease_until.getTime(), "the lease was not renewed")
          // Another process takes the lease over (as it could once it lapsed): the next renewal
          // finds it gone, stops the holder's effect and fails.
          yield* sql`UPDATE chat_memory_leases SET lease_owner = 'another-process' WHERE conversation_id = 'renewed'`
          yield* TestClock.adjust("5001 millis")
          const exit = yield* Fiber.await(holder)
          assert.isTrue(Exit.isFailure(exit))
          if (Exit.isFailure(exit)) {
            const failure = Cause.failureOption(exit.cause)
            assert.isTrue(Option.isSome(failure) && failure.value._tag === "RepositoryError")
          }
          assert.isTrue(yield* Deferred.isDone(interrupted), "the holder's effect was not stopped")
          // The other process's lease is left alone.
          assert.deepStrictEqual((yield* lease("renewed")).map((row) => row.lease_owner), ["another-process"])
        }))
    }
  })
})
