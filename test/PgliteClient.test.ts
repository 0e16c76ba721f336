/**
 * The PGlite client in a process that does other work: PGlite runs each statement synchronously, so
 * the client lets the event loop turn between statements of a long run.
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import { pgliteClient } from "./fixtures/pglite.js"

describe("PgliteClient", () => {
  it.effect("a long run of statements in one fiber lets the event loop turn: timers and I/O are not held up", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      let turned = false
      // A callback for the event loop's next turn: it runs only when no fiber keeps the loop busy.
      setImmediate(() => {
        turned = true
      })
      const seen: Array<boolean> = []
      for (let i = 0; i < 64; i++) {
        yield* sql`SELECT ${i}::int AS n`
        seen.push(turned)
      }
      // It ran during the run, not after it: at most a few statements went by without a turn.
      assert.isTrue(turned)
      assert.isAtMost(seen.indexOf(true), 16, JSON.stringify(seen))
    }).pipe(Effect.provide(pgliteClient())))

  it.effect("a statement waiting behind a transaction can be interrupted; the transaction goes on", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [inside, release] = [yield* Deferred.make<boolean>(), yield* Deferred.make<boolean>()]
      const transaction = yield* sql.withTransaction(
        Effect.zipRight(
          Deferred.succeed(inside, true),
          Effect.zipRight(Deferred.await(release), sql`SELECT 1 AS n`)
        )
      ).pipe(Effect.fork)
      yield* Deferred.await(inside)
      const waiting = yield* Effect.fork(sql`SELECT 2 AS n`)
      yield* Effect.yieldNow()
      // Interrupted while the transaction holds the connection: it returns now, not when the transaction ends.
      yield* Fiber.interrupt(waiting)
      assert.isTrue(Option.isNone(yield* Fiber.poll(transaction)))
      yield* Deferred.succeed(release, true)
      assert.deepStrictEqual(yield* Fiber.join(transaction), [{ n: 1 }])
      assert.deepStrictEqual(yield* sql`SELECT 3 AS n`, [{ n: 3 }])
    }).pipe(Effect.provide(pgliteClient())))
})
