/**
 * Background jobs per conversation: at most one at a time per conversation and at most
 * `concurrency` at a time in all, started with `Effect.forkDaemon` and registered in a `FiberMap`
 * owned by the caller's scope, with requests that arrive during a job coalesced into one re-run
 * after it.
 */
import { Cause, Effect, Fiber, FiberMap, HashMap, Option, Ref } from "effect"
import type { ConversationId } from "../../../domain/ConversationId.js"

/** Whether a conversation's job runs, and whether another run was asked for meanwhile. */
type Status = "running" | "rerun"

/** The jobs of a strategy. */
export interface Jobs {
  /** Starts the job of a conversation, or asks the running one to run once more. Never waits. */
  readonly trigger: (conversationId: ConversationId) => Effect.Effect<void>
  /** Waits until no job of the conversation (of any, without one) runs or is due to rerun. */
  readonly awaitIdle: (conversationId?: ConversationId) => Effect.Effect<void>
  /** Interrupts the job of a conversation, dropping any rerun asked for. */
  readonly cancel: (conversationId: ConversationId) => Effect.Effect<void>
  /** Whether a job of the conversation runs now. */
  readonly isRunning: (conversationId: ConversationId) => Effect.Effect<boolean>
}

/**
 * Makes the jobs running `run` for a conversation, `concurrency` conversations at a time (all at
 * once without it): the others wait for a turn, holding nothing meanwhile, so that many
 * conversations due at once neither flood the model and the store nor find them busy and give up.
 * `run` must handle its own failures (nobody joins a daemon fiber); a defect is logged here so
 * that the conversation can be triggered again. Closing the scope interrupts every job.
 */
export const makeJobs = (
  run: (conversationId: ConversationId) => Effect.Effect<void>,
  options: { readonly concurrency?: number | undefined } = {}
) =>
  Effect.gen(function*() {
    const fibers = yield* FiberMap.make<ConversationId, unknown, never>()
    const status = yield* Ref.make(HashMap.empty<ConversationId, Status>())
    const limit = options.concurrency
    const turns = limit === undefined ? undefined : yield* Effect.makeSemaphore(Math.max(1, Math.floor(limit)))
    const inTurn = <A>(effect: Effect.Effect<A>): Effect.Effect<A> =>
      turns === undefined ? effect : turns.withPermits(1)(effect)

    /** Ends one run: true when another run was asked for meanwhile (the status stays running). */
    const finishRun = (conversationId: ConversationId) =>
      Ref.modify(status, (current): readonly [boolean, HashMap.HashMap<ConversationId, Status>] =>
        Option.getOrUndefined(HashMap.get(current, conversationId)) === "rerun"
          ? [true, HashMap.set(current, conversationId, "running")]
          : [false, HashMap.remove(current, conversationId)])

    const safeRun = (conversationId: ConversationId) =>
      run(conversationId).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logError("background job died", cause).pipe(Effect.annotateLogs({ conversationId }))
        )
      )

    // A run sees everything written before it starts: requests made until then (while it waited
    // for its turn, too) are absorbed by it, and only those made while it runs ask for another run.
    const startRun = (conversationId: ConversationId) =>
      Ref.update(status, (current) =>
        HashMap.has(current, conversationId) ? HashMap.set(current, conversationId, "running") : current)

    // The turn is given back between runs, so that a conversation asked to run again queues
    // behind the others instead of keeping its turn.
    const loop = (conversationId: ConversationId): Effect.Effect<void> =>
      Effect.flatMap(
        startRun(conversationId).pipe(
          Effect.zipRight(safeRun(conversationId)),
          Effect.zipRight(finishRun(conversationId)),
          inTurn
        ),
        (again) => (again ? loop(conversationId) : Effect.void)
      )

    const trigger = (conversationId: ConversationId) =>
      Effect.uninterruptible(Effect.gen(function*() {
        const start = yield* Ref.modify(
          status,
          (current): readonly [boolean, HashMap.HashMap<ConversationId, Status>] =>
            HashMap.has(current, conversationId)
              ? [false, HashMap.set(current, conversationId, "rerun")]
              : [true, HashMap.set(current, conversationId, "running")]
        )
        if (!start) {
          return
        }
        // A daemon: the job outlives the request that triggered it; the FiberMap, owned by the
        // layer's scope, is what interrupts it (on cancel or when the layer closes).
        // (Explicitly interruptible: a fiber inherits the uninterruptible region it is forked in.)
        const fiber = yield* Effect.forkDaemon(
          Effect.interruptible(loop(conversationId)).pipe(
            Effect.onInterrupt(() =>
              Ref.update(status, HashMap.remove(conversationId))
            )
          )
        )
        yield* FiberMap.set(fibers, conversationId, fiber)
      }))

    const awaitOne = (conversationId: ConversationId): Effect.Effect<void> =>
      Effect.gen(function*() {
        while (HashMap.has(yield* Ref.get(status), conversationId)) {
          const fiber = yield* Effect.option(FiberMap.get(fibers, conversationId))
          if (Option.isSome(fiber)) {
            yield* Fiber.await(fiber.value)
          } else yield* Effect.yieldNow()
        }
      })

    const awaitAll: Effect.Effect<void> = Effect.gen(function*() {
      while (HashMap.size(yield* Ref.get(status)) > 0) {
        yield* FiberMap.awaitEmpty(fibers)
        yield* Effect.yieldNow()
      }
    })

    return {
      trigger,
      awaitIdle: (conversationId) => (conversationId === undefined ? awaitAll : awaitOne(conversationId)),
      cancel: (conversationId) =>
        Effect.zipRight(
          FiberMap.remove(fibers, conversationId),
          Ref.update(status, HashMap.remove(conversationId))
        ),
      isRunning: (conversationId) =>
        Effect.map(Ref.get(status), HashMap.has(conversationId))
    } satisfies Jobs
  })
