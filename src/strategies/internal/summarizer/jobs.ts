/**
 * Background jobs per conversation: at most one per conversation, and at most `concurrency` in
 * all. They run as daemons in a `FiberMap` owned by the caller's scope. Requests during a job
 * coalesce into one rerun after it. Closing the scope may wait for them (`interruptOnClose`)
 * before it interrupts them.
 */
import { Cause, Duration, Effect, Fiber, FiberMap, HashMap, HashSet, Option, Ref, type Scope } from "effect"
import type { ConversationId } from "../../../domain/ConversationId.js"

/** Whether a conversation's job runs, and whether another run was asked for meanwhile. */
type Status = "running" | "rerun"

/** What a run answers when it left work for a later run. */
export const Pending = "pending"

/** The jobs of a strategy. */
export interface Jobs {
  /** Starts the job of a conversation, or asks the running one to run once more. Never waits. */
  readonly trigger: (conversationId: ConversationId) => Effect.Effect<void>
  /** Waits until no job of the conversation, or of any without one, runs or is due to rerun. */
  readonly awaitIdle: (conversationId?: ConversationId) => Effect.Effect<void>
  /** Interrupts the job of a conversation, dropping any rerun asked for. */
  readonly cancel: (conversationId: ConversationId) => Effect.Effect<void>
  /** Whether a job of the conversation runs now. */
  readonly isRunning: (conversationId: ConversationId) => Effect.Effect<boolean>
  /** How many conversations have a job now, running or waiting for its turn. */
  readonly size: Effect.Effect<number>
  /** How many of them run work they found due (see `makeJobs`), rather than look for it. */
  readonly busy: Effect.Effect<number>
}

/**
 * Makes the jobs that run `run` per conversation, `concurrency` conversations at a time, or all
 * at once without it. The others wait their turn holding nothing. So many due conversations
 * neither flood the model and the store, nor find them busy and give up. A run that answers
 * `Pending` left work for later: it runs again after the others' turn. `run` must handle its
 * own failures, as nobody joins a daemon fiber. A defect is logged here, so the conversation can
 * be triggered again. A run calls its `due` once it has found work to do (a summary to fold, turns
 * to learn from); before that, it only looks. Closing the scope interrupts every job.
 */
export const makeJobs = (
  run: (conversationId: ConversationId, due: Effect.Effect<void>) => Effect.Effect<unknown>,
  options: { readonly concurrency?: number | undefined } = {}
) =>
  Effect.gen(function*() {
    const fibers = yield* FiberMap.make<ConversationId, unknown, never>()
    const status = yield* Ref.make(HashMap.empty<ConversationId, Status>())
    // The conversations whose run found work due; cleared when the run ends.
    const busy = yield* Ref.make(HashSet.empty<ConversationId>())
    const limit = options.concurrency
    const turns = limit === undefined ? undefined : yield* Effect.makeSemaphore(Math.max(1, Math.floor(limit)))
    const inTurn = <A>(effect: Effect.Effect<A>): Effect.Effect<A> =>
      turns === undefined ? effect : turns.withPermits(1)(effect)

    /** Ends one run. True when another run was asked for meanwhile; the status stays running. */
    const finishRun = (conversationId: ConversationId) =>
      Ref.modify(status, (current): readonly [boolean, HashMap.HashMap<ConversationId, Status>] =>
        Option.getOrUndefined(HashMap.get(current, conversationId)) === "rerun"
          ? [true, HashMap.set(current, conversationId, "running")]
          : [false, HashMap.remove(current, conversationId)])

    const safeRun = (conversationId: ConversationId) =>
      run(conversationId, Ref.update(busy, HashSet.add(conversationId))).pipe(
        Effect.flatMap((outcome) =>
          outcome === Pending
            ? Ref.update(status, HashMap.set<ConversationId, Status>(conversationId, "rerun"))
            : Effect.void
        ),
        // The fiber's own interruption (cancel, close) skips this handler. An interruption from
        // within the run, such as a child fiber's, ends the run like a defect does: the run
        // finishes, so the conversation can run again.
        Effect.catchAllCause((cause) =>
          (Cause.isInterruptedOnly(cause)
            ? Effect.logWarning("background job interrupted from within", cause)
            : Effect.logError("background job died", cause)).pipe(Effect.annotateLogs({ conversationId }))
        ),
        Effect.ensuring(Ref.update(busy, HashSet.remove(conversationId)))
      )

    // A run sees everything written before it starts, so it absorbs requests made until then.
    // Only requests made while it runs ask for another run.
    const startRun = (conversationId: ConversationId) =>
      Ref.update(status, (current) =>
        HashMap.has(current, conversationId) ? HashMap.set(current, conversationId, "running") : current)

    // The turn is given back between runs, so a conversation asked to run again queues behind
    // the others.
    const loop = (conversationId: ConversationId): Effect.Effect<void> =>
      Effect.flatMap(
        startRun(conversationId).pipe(
          Effect.zipRight(safeRun(conversationId)),
          Effect.zipRight(finishRun(conversationId)),
          inTurn
        ),
        (again) => (again ? loop(conversationId) : Effect.void)
      )

    // The status decides, in one atomic step, whether a request starts a run or joins the running
    // one. The fiber map only holds the fibers. A run that has just decided to finish may still be
    // in it, so a new run replaces it; `onlyIfMissing` would drop the request.
    const trigger = (conversationId: ConversationId) =>
      Ref.modify(
        status,
        (current): readonly [boolean, HashMap.HashMap<ConversationId, Status>] =>
          HashMap.has(current, conversationId)
            ? [false, HashMap.set(current, conversationId, "rerun")]
            : [true, HashMap.set(current, conversationId, "running")]
      ).pipe(
        // A daemon: `FiberMap.run` forks outside the request's scope. The map, owned by the
        // layer's scope, interrupts it on cancel or close. A closed map refuses the fork by
        // interrupting, which must not reach the request.
        Effect.flatMap((start) =>
          start ? Effect.exit(FiberMap.run(fibers, conversationId, loop(conversationId))) : Effect.void
        ),
        Effect.asVoid,
        Effect.uninterruptible
      )

    // Waits for the fiber of the conversation, then for any run that replaced it.
    const awaitOne = (conversationId: ConversationId): Effect.Effect<void> =>
      Effect.flatMap(
        Effect.option(FiberMap.get(fibers, conversationId)),
        Option.match({
          onNone: () =>
            Effect.void,
          onSome: (fiber) =>
            Effect.zipRight(Fiber.await(fiber), awaitOne(conversationId))
        })
      )

    const jobs: Jobs = {
      trigger,
      awaitIdle: (conversationId) =>
        conversationId === undefined ? FiberMap.awaitEmpty(fibers) : awaitOne(conversationId),
      cancel: (conversationId) =>
        Effect.zipRight(
          FiberMap.remove(fibers, conversationId),
          Ref.update(status, HashMap.remove(conversationId))
        ),
      isRunning: (conversationId) =>
        Effect.map(Ref.get(status), HashMap.has(conversationId)),
      size: FiberMap.size(fibers),
      busy: Effect.map(Ref.get(busy), HashSet.size)
    }
    return jobs
  })

/** "1 background summarization", "2 background summarizations". */
const counted = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/**
 * Registers what closing the scope does to `summaries` and `userFacts`. They are made in this
 * scope before, so this runs first. It waits up to `drain` for their jobs to end. Then it logs at
 * Info how many of those left to interrupt had found work due, and that it resumes on the next
 * write (of any of the user's conversations, for what is known about a user). Nothing is logged
 * when none had.
 */
export const interruptOnClose = (
  drain: Duration.Duration,
  jobs: { readonly summaries: Jobs; readonly userFacts: Jobs }
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.addFinalizer(() =>
    Effect.gen(function*() {
      if (Duration.greaterThan(drain, Duration.zero)) {
        // A finalizer runs uninterruptibly, so the wait must be interruptible for the timeout.
        yield* Effect.timeoutOption(
          Effect.interruptible(Effect.zipRight(jobs.summaries.awaitIdle(), jobs.userFacts.awaitIdle())),
          drain
        )
      }
      // A job that has not found work due yet only looks for it: the next write looks again.
      const summaries = yield* jobs.summaries.busy
      const userFacts = yield* jobs.userFacts.busy
      if (summaries + userFacts === 0) return
      const what = [
        ...(summaries > 0 ? [counted(summaries, "background summarization", "background summarizations")] : []),
        ...(userFacts > 0 ? [counted(userFacts, "extraction of user facts", "extractions of user facts")] : [])
      ].join(" and ")
      // A summary resumes on its conversation's next write; learning about a user, on the user's.
      const resume = userFacts === 0
        ? summaries === 1
          ? "it resumes on the conversation's next write"
          : "they resume on each conversation's next write"
        : summaries === 0
        ? userFacts === 1 ? "it resumes on its user's next write" : "they resume on their user's next write"
        : "summaries resume on their conversation's next write, extractions on their user's next write"
      yield* Effect.logInfo(`closing the memory interrupted ${what}; ${resume}`).pipe(
        Effect.annotateLogs({ summarizations: summaries, userFacts, shutdownDrain: Duration.format(drain) })
      )
    })
  )
