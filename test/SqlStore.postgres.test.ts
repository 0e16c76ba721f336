/**
 * The SQL store on a PostgreSQL server (`DATABASE_URL`): the contracts of every storage port with
 * a pool of 10 connections, writers that go through the public service, hostile content, the
 * in-memory reference's answers, and the summarization lease between two instances that share the
 * database.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Array, Effect, Exit, Layer, Option, Redacted } from "effect"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as PgStore from "../src/layers/store/PgStore.js"
import * as Store from "../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import * as ChatMemoryService from "../src/services/ChatMemoryService.js"
import * as NoopStrategy from "../src/strategies/NoopStrategy.js"
import { contextSettingsContract } from "./contracts/ContextSettingsContract.js"
import { recallContract } from "./contracts/RecallContract.js"
import { storeContract } from "./contracts/StoreContract.js"
import { differentialTests } from "./fixtures/differential.js"
import { hostileContentTests } from "./fixtures/hostile.js"
import { freshId, newMessage } from "./fixtures/messages.js"
import { describePostgres, repositoryLayer } from "./fixtures/postgres.js"

describePostgres("SqlStore on PostgreSQL", (url) => {
  storeContract("postgresql (pool of 10)", repositoryLayer(url, { maxConnections: 10 }))
  contextSettingsContract("postgresql", repositoryLayer(url))
  recallContract("postgresql", repositoryLayer(url))

  const MemoryLive = ChatMemory.layer.pipe(
    Layer.provideMerge(NoopStrategy.layer),
    Layer.provideMerge(repositoryLayer(url, { maxConnections: 10 })),
    Layer.provideMerge(ApproximateTokenCounter.layer)
  )

  layer(MemoryLive)("ChatMemoryService on PostgreSQL", (it) => {
    it.effect("100 concurrent addMessages on one conversation, pool of 10: seqs 1..N, nothing lost", () =>
      Effect.gen(function*() {
        const memory = yield* ChatMemoryService.ChatMemoryService
        const id = freshId("pg-concurrent")
        const calls = Array.makeBy(100, (i) =>
          Array.makeBy(1 + (i % 4), (j) => ({
            role: j % 2 === 0 ? "user" as const : "assistant" as const,
            content: `call ${i} message ${j}`
          })))
        const results = yield* Effect.forEach(calls, (messages) => memory.addMessages(id, messages), {
          concurrency: "unbounded"
        })
        const total = calls.reduce((n, messages) => n + messages.length, 0)
        for (const [stored, sent] of Array.zip(results, calls)) {
          const seqs = stored.map((m) => m.seq)
          assert.deepStrictEqual(seqs, Array.makeBy(seqs.length, (k) => (seqs[0] ?? 0) + k))
          assert.deepStrictEqual(stored.map((m) => m.content), sent.map((m) => m.content))
        }
        const all = yield* memory.getMessages(id, { limit: 1000 })
        assert.deepStrictEqual(all.map((m) => m.seq), Array.range(1, total))
        assert.deepStrictEqual(all.map((m) => m.content).sort(), calls.flat().map((m) => m.content).sort())
      }))
  })

  layer(repositoryLayer(url))("SqlStore on PostgreSQL", (it) => {
    hostileContentTests(it)
    differentialTests(it)
  })

  describe("two instances on one database", () => {
    /** A store with a pool of its own, as another process would have. */
    const instance = (maxLockConnections: number) =>
      Effect.flatMap(
        Layer.build(repositoryLayer(url, { maxConnections: 3, maxLockConnections })),
        (context) => Effect.provide(Store.get, context)
      )

    it.scoped("the summarization lease admits one instance at a time, and is released on failure", () =>
      Effect.gen(function*() {
        const a = yield* instance(2)
        const b = yield* instance(2)
        const id = freshId("pg-lock")
        const other = freshId("pg-lock")
        const whileAHolds = yield* a.lease.withLease(
          id,
          Effect.all([
            b.lease.withLease(id, Effect.succeed("b")),
            b.lease.withLease(other, Effect.succeed("other")),
            // The holder's own statements run while it holds the lease.
            a.repository.appendMessages(id, [newMessage("user", "written under the lock")]),
            a.repository.readWindow(id, { after: "cursor", tokenLimit: 100 })
          ])
        )
        assert.isTrue(Option.isSome(whileAHolds))
        if (Option.isSome(whileAHolds)) {
          const [fromB, otherFromB, appended, window] = whileAHolds.value
          assert.deepStrictEqual([fromB, otherFromB], [Option.none(), Option.some("other")])
          assert.deepStrictEqual(appended.messages.map((m) => m.seq), [1])
          assert.deepStrictEqual(window.recent.map((m) => m.seq), [1])
        }
        assert.deepStrictEqual(yield* b.lease.withLease(id, Effect.succeed("b")), Option.some("b"))
        const failed = yield* Effect.exit(a.lease.withLease(id, Effect.fail("boom")))
        assert.isTrue(Exit.isFailure(failed))
        assert.deepStrictEqual(yield* b.lease.withLease(id, Effect.succeed(1)), Option.some(1))
      }))

    it.scoped("beyond maxLockConnections holders the lease answers None instead of draining the pool", () =>
      Effect.gen(function*() {
        const a = yield* instance(1)
        const nested = yield* a.lease.withLease(
          freshId("pg-lock"),
          a.lease.withLease(freshId("pg-lock"), Effect.succeed("second"))
        )
        assert.deepStrictEqual(nested, Option.some(Option.none()))
      }))
  })
})

/** The message a failed connection to `url` ends in, as the caller sees it. */
const connectFailure = (url: string) =>
  Effect.scoped(Layer.build(PgStore.layer({ url: Redacted.make(url), maxConnections: 1 }))).pipe(
    Effect.flip,
    Effect.map((error) => ({ tag: error._tag, message: error.message }))
  )

describe("PgStore: a connection that fails says why", () => {
  it.live("refused: nothing listens on the port", () =>
    Effect.gen(function*() {
      const failure = yield* connectFailure("postgres://memory:memory@127.0.0.1:1/memory")
      assert.strictEqual(failure.tag, "RepositoryError")
      assert.include(failure.message, "connect")
      assert.include(failure.message, "connection refused")
    }))
})

describePostgres("PgStore on PostgreSQL: a connection that fails says why", (base) => {
  const withUrl = (change: (url: URL) => void) => {
    const url = new URL(base)
    change(url)
    return url.toString()
  }

  it.live(
    "authentication failed, unknown database: each named, the password never shown",
    () =>
      Effect.gen(function*() {
        const password = yield* connectFailure(withUrl((url) => {
          url.password = "wrong-secret"
        }))
        assert.include(password.message, "authentication failed")
        assert.notInclude(password.message, "wrong-secret")
        const database = yield* connectFailure(withUrl((url) => {
          url.pathname = "/no_such_database"
        }))
        assert.include(database.message, "unknown database")
      })
  )
})
