/**
 * The summarizer's circuit breaker. After `breakerFailures` failed skill calls in a row, it stops
 * calling the skill for `breakerCooldown`. Then it lets one call through (half-open), and closes
 * on its success. A strategy has one, for its skill: its summaries and what it learns about users
 * go through it.
 */
import { Cause, Clock, Duration, Effect, Exit, Option, Ref } from "effect"
import type { ConversationId } from "../../../domain/ConversationId.js"
import { type MemoryEvent, SummarizerRecovered, SummarizerUnavailable } from "../../../domain/MemoryEvent.js"
import { SkillExecutionError } from "../../../errors/SkillExecutionError.js"
import * as Metrics from "../metrics.js"

/**
 * Where the breaker stands: `closed`, with `failures` in a row so far; `open`, with no call until
 * `until` (clock millis); or `half-open`, while one call finds out.
 */
type BreakerState =
  | { readonly _tag: "closed"; readonly failures: number }
  | {
    readonly _tag: "open"
    readonly failures: number
    readonly until: number
    readonly last: SkillExecutionError
  }
  | { readonly _tag: "half-open"; readonly failures: number; readonly last: SkillExecutionError }

/** Why a call was held back: the failures that opened the breaker, and when the next may go. */
export interface Held {
  readonly failures: number
  readonly retryInMillis: number
  readonly last: SkillExecutionError
}

/** The breaker of a summarizer. */
export interface Breaker {
  /**
   * Runs `call` if the breaker lets it through, and records how it ended. A success closes the
   * breaker, and a `SkillExecutionError` counts as a failure. Anything else, like a store error,
   * tells nothing of the skill. `None` when the call was held back.
   */
  readonly guard: <A, E, R>(
    conversationId: ConversationId,
    call: Effect.Effect<A, E, R>
  ) => Effect.Effect<Option.Option<A>, E, R>
  /**
   * Why calls are held back now, if they are. It claims nothing, so a later call may still be held
   * if another takes a half-open breaker's one call.
   */
  readonly held: Effect.Effect<Option.Option<Held>>
}

/** How a call was let through: as usual, as a half-open breaker's one call, or not at all. */
type Ticket = "closed" | "probe" | "held"

const isSkillError = (error: unknown): error is SkillExecutionError => error instanceof SkillExecutionError

/**
 * Makes a breaker that opens after `breakerFailures` failed calls in a row, for `breakerCooldown`.
 * Its transitions are published as `SummarizerUnavailable` and `SummarizerRecovered`, and logged.
 */
export const make = (
  settings: { readonly breakerFailures: number; readonly breakerCooldown: Duration.Duration },
  publish: (event: MemoryEvent) => Effect.Effect<void>
): Effect.Effect<Breaker> =>
  Effect.gen(function*() {
    const cooldownMillis = Duration.toMillis(settings.breakerCooldown)
    const state = yield* Ref.make<BreakerState>({ _tag: "closed", failures: 0 })

    const claim = (now: number) =>
      Ref.modify(state, (current): readonly [Ticket, BreakerState] => {
        switch (current._tag) {
          case "closed":
            return ["closed", current]
          case "half-open":
            return ["held", current]
          case "open":
            return now < current.until
              ? ["held", current]
              : ["probe", { _tag: "half-open", failures: current.failures, last: current.last }]
        }
      })

    const opened = (conversationId: ConversationId, failures: number, last: SkillExecutionError) =>
      Effect.zipRight(
        Effect.logWarning("summarizer unavailable: summarizations paused").pipe(
          Effect.annotateLogs({
            conversationId,
            failuresInARow: failures,
            retryInMillis: cooldownMillis,
            detail: last.message
          })
        ),
        Effect.zipRight(
          Metrics.summarizerBreakerOpened(Effect.succeed(1)),
          publish(
            new SummarizerUnavailable({
              conversationId,
              skillId: last.skillId,
              failures,
              detail: last.message,
              retryInMillis: cooldownMillis
            })
          )
        )
      )

    const recovered = (conversationId: ConversationId) =>
      Effect.zipRight(
        Effect.logDebug("summarizer available again").pipe(Effect.annotateLogs({ conversationId })),
        publish(new SummarizerRecovered({ conversationId }))
      )

    /** Records how a call ended, and announces the transition it caused, if any. */
    const settle = <A, E>(conversationId: ConversationId, ticket: Ticket, exit: Exit.Exit<A, E>) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const failure = Exit.isFailure(exit)
          ? Option.filter(Cause.failureOption(exit.cause), isSkillError)
          : Option.none()
        const announce = yield* Ref.modify(state, (current): readonly [Effect.Effect<void>, BreakerState] => {
          if (Exit.isSuccess(exit)) {
            // A success proves the skill answers, whichever way the call was let through.
            return [current._tag === "closed" ? Effect.void : recovered(conversationId), {
              _tag: "closed",
              failures: 0
            }]
          }
          if (Option.isNone(failure)) {
            // Nothing learned of the skill, so a probe gives its turn to the next call.
            return ticket === "probe" && current._tag === "half-open"
              ? [Effect.void, { _tag: "open", failures: current.failures, until: now, last: current.last }]
              : [Effect.void, current]
          }
          const last = failure.value
          const failures = current.failures + 1
          switch (current._tag) {
            case "closed":
              return failures >= settings.breakerFailures
                ? [opened(conversationId, failures, last), {
                  _tag: "open",
                  failures,
                  until: now + cooldownMillis,
                  last
                }]
                : [Effect.void, { _tag: "closed", failures }]
            case "half-open":
              return [opened(conversationId, failures, last), {
                _tag: "open",
                failures,
                until: now + cooldownMillis,
                last
              }]
            case "open":
              // A call let through before the breaker opened ends after it: the cool-down stands.
              return [Effect.void, { ...current, failures, last }]
          }
        })
        yield* announce
      })

    const guard = <A, E, R>(conversationId: ConversationId, call: Effect.Effect<A, E, R>) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const ticket = yield* claim(yield* Clock.currentTimeMillis)
          if (ticket === "held") return Option.none<A>()
          // Settled even on interruption, so a probe never stays claimed.
          const exit = yield* Effect.exit(restore(call))
          yield* settle(conversationId, ticket, exit)
          return Option.some(yield* exit)
        })
      )

    const held = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const current = yield* Ref.get(state)
      switch (current._tag) {
        case "closed":
          return Option.none()
        case "half-open":
          return Option.some<Held>({ failures: current.failures, retryInMillis: 0, last: current.last })
        case "open":
          return now < current.until
            ? Option.some<Held>({ failures: current.failures, retryInMillis: current.until - now, last: current.last })
            : Option.none()
      }
    })

    return { guard, held }
  })
