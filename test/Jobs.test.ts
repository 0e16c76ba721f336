/**
 * The background jobs of the strategies: one run at a time per conversation, requests made during
 * a run coalesced into one rerun, `awaitIdle` waiting for reruns too, a bounded number of runs at
 * once, and a closed scope that stops the jobs without failing the request that triggers one.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, FastCheck as fc, Fiber, Ref, Scope } from "effect"
import { ConversationId } from "../src/domain/ConversationId.js"
import { makeJobs, Pending } from "../src/strategies/internal/summarizer/jobs.js"

const a = ConversationId.make("a")
const b = ConversationId.make("b")

describe("background jobs", () => {
  it.scoped("requests made during a run coalesce into one rerun, and awaitIdle waits for it", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const gate = yield* Deferred.make<undefined>()
      const jobs = yield* makeJobs(() => Effect.zipRight(Ref.update(runs, (n) => n + 1), Deferred.await(gate)))
      yield* jobs.trigger(a)
      // Let the first run start and block on the gate.
      yield* Effect.yieldNow()
      assert.isTrue(yield* jobs.isRunning(a))
      yield* jobs.trigger(a)
      yield* jobs.trigger(a)
      yield* jobs.trigger(a)
      yield* Deferred.succeed(gate, undefined)
      yield* jobs.awaitIdle(a)
      assert.strictEqual(yield* Ref.get(runs), 2)
      assert.isFalse(yield* jobs.isRunning(a))
    }))

  it.scoped("busy counts the runs that found work due, until they end or are cancelled", () =>
    Effect.gen(function*() {
      const looked = yield* Deferred.make<undefined>()
      const found = yield* Deferred.make<undefined>()
      const done = yield* Deferred.make<undefined>()
      const jobs = yield* makeJobs((id, due) =>
        Effect.gen(function*() {
          yield* Deferred.await(looked)
          if (id === b) return
          yield* due
          yield* Deferred.succeed(found, undefined)
          yield* Deferred.await(done)
        })
      )
      yield* jobs.trigger(a)
      yield* jobs.trigger(b)
      yield* Effect.yieldNow()
      // Both run; neither has found work yet.
      assert.deepStrictEqual([yield* jobs.size, yield* jobs.busy], [2, 0])
      yield* Deferred.succeed(looked, undefined)
      yield* Deferred.await(found)
      yield* jobs.awaitIdle(b)
      assert.deepStrictEqual([yield* jobs.size, yield* jobs.busy], [1, 1])
      yield* Deferred.succeed(done, undefined)
      yield* jobs.awaitIdle(a)
      assert.strictEqual(yield* jobs.busy, 0)
      // A cancelled run is no longer busy.
      const again = yield* Deferred.make<undefined>()
      const other = yield* makeJobs((_, due) => Effect.zipRight(due, Deferred.await(again)))
      yield* other.trigger(a)
      yield* Effect.yieldNow()
      assert.strictEqual(yield* other.busy, 1)
      yield* other.cancel(a)
      assert.strictEqual(yield* other.busy, 0)
    }))

  it.scoped("a run that leaves work pending runs again, until it leaves none; awaitIdle waits for it", () =>
    Effect.gen(function*() {
      const order = yield* Ref.make<ReadonlyArray<string>>([])
      const jobs = yield* makeJobs(
        (id) =>
          Ref.modify(order, (seen) => {
            const next = [...seen, id]
            // "a" has three runs of work, "b" one.
            return [id === a && next.filter((x) => x === a).length < 3 ? Pending : undefined, next]
          }),
        { concurrency: 1 }
      )
      yield* jobs.trigger(a)
      yield* jobs.trigger(b)
      yield* jobs.awaitIdle()
      const seen = yield* Ref.get(order)
      assert.deepStrictEqual([seen.filter((x) => x === a).length, seen.filter((x) => x === b).length], [3, 1])
    }))

  it.scoped("a request made as a run finishes is never dropped", () =>
    Effect.gen(function*() {
      // Each trigger counts a request; every request made before a run starts must be seen by a
      // run: after idle, the last run saw the last request. The fibers yield after a few steps (fewer
      // than 16 stall the runtime), so that requests land at every point of a run, its end too.
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.array(fc.nat(3), { minLength: 1, maxLength: 30 }),
            fc.integer({ min: 16, max: 64 }),
            (pauses, steps) =>
              Effect.runPromise(Effect.scoped(
                Effect.gen(function*() {
                  const requested = yield* Ref.make(0)
                  const seen = yield* Ref.make(0)
                  const jobs = yield* makeJobs(() =>
                    Effect.flatMap(Ref.get(requested), (n) => Effect.zipRight(Effect.yieldNow(), Ref.set(seen, n)))
                  )
                  for (const pause of pauses) {
                    yield* Ref.update(requested, (n) => n + 1)
                    yield* jobs.trigger(a)
                    for (let i = 0; i < pause; i++) yield* Effect.yieldNow()
                  }
                  yield* jobs.awaitIdle()
                  assert.strictEqual(yield* Ref.get(seen), pauses.length)
                }).pipe(Effect.withMaxOpsBeforeYield(steps))
              ))
          ),
          { numRuns: 200 }
        )
      )
    }))

  it.scoped("at most `concurrency` conversations run at once; awaitIdle() waits for all", () =>
    Effect.gen(function*() {
      const active = yield* Ref.make(0)
      const peak = yield* Ref.make(0)
      const jobs = yield* makeJobs(() =>
        Effect.acquireUseRelease(
          Effect.flatMap(Ref.updateAndGet(active, (n) => n + 1), (n) => Ref.update(peak, (p) => Math.max(p, n))),
          () => Effect.repeatN(Effect.yieldNow(), 5),
          () => Ref.update(active, (n) => n - 1)
        ), { concurrency: 1 })
      yield* jobs.trigger(a)
      yield* jobs.trigger(b)
      yield* jobs.awaitIdle()
      assert.strictEqual(yield* Ref.get(peak), 1)
      assert.strictEqual(yield* Ref.get(active), 0)
    }))

  it.effect("closing the scope interrupts the runs; a request after it neither runs nor fails", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const started = yield* Deferred.make<undefined>()
      const interrupted = yield* Deferred.make<undefined>()
      const runs = yield* Ref.make(0)
      const jobs = yield* Scope.extend(
        makeJobs(() =>
          Effect.zipRight(
            Ref.update(runs, (n) => n + 1),
            Effect.onInterrupt(Effect.zipRight(Deferred.succeed(started, undefined), Effect.never), () =>
              Deferred.succeed(interrupted, undefined))
          )
        ),
        scope
      )
      yield* jobs.trigger(a)
      yield* Deferred.await(started)
      yield* Scope.close(scope, Exit.void)
      yield* Deferred.await(interrupted)
      const late = yield* Effect.fork(jobs.trigger(b))
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(late)))
      yield* jobs.awaitIdle()
      assert.strictEqual(yield* Ref.get(runs), 1)
    }))

  it.scoped("a run interrupted from within finishes: the conversation runs again on its next request", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      // The first run joins a child fiber that was interrupted, as a race's loser is.
      const jobs = yield* makeJobs(() =>
        Effect.flatMap(
          Ref.updateAndGet(runs, (n) => n + 1),
          (n) =>
            n > 1 ?
              Effect.void :
              Effect.flatMap(
                Effect.fork(Effect.never),
                (child) => Effect.zipRight(Fiber.interrupt(child), Fiber.join(child))
              )
        )
      )
      yield* jobs.trigger(a)
      yield* jobs.awaitIdle(a)
      assert.isFalse(yield* jobs.isRunning(a))
      yield* jobs.trigger(a)
      yield* jobs.awaitIdle(a)
      assert.strictEqual(yield* Ref.get(runs), 2)
      assert.isFalse(yield* jobs.isRunning(a))
    }))

  it.scoped("cancel interrupts the run and drops its rerun", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const jobs = yield* makeJobs(() => Effect.zipRight(Ref.update(runs, (n) => n + 1), Effect.never))
      yield* jobs.trigger(a)
      yield* Effect.yieldNow()
      yield* jobs.trigger(a)
      yield* jobs.cancel(a)
      yield* jobs.awaitIdle(a)
      assert.isFalse(yield* jobs.isRunning(a))
      assert.strictEqual(yield* Ref.get(runs), 1)
    }))
})
