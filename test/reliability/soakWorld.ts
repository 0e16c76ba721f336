/**
 * The fault soak's world: one store, the memory layer of the current generation over a faulty view
 * of it, the conversations' models, and the calls a step makes, each returning the check of its
 * outcome.
 */
import { assert } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Fiber, Layer, Option, type Ref, Scope, TestClock } from "effect"
import type { Message, MessageInput } from "../../src/domain/Message.js"
import type { ConversationNotFoundError } from "../../src/errors/ConversationNotFoundError.js"
import type { DataValidationError } from "../../src/errors/DataValidationError.js"
import type { RepositoryError } from "../../src/errors/RepositoryError.js"
import type * as Store from "../../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../../src/services/ChatMemoryService.js"
import type { FaultyStore } from "./faultyStore.js"
import { isInjected } from "./faultyStore.js"
import { checkContext, checkStore, type ConversationModel, snapshot } from "./soakChecks.js"
import { memoryLayer, script, type SoakConfig } from "./soakConfig.js"

export interface World {
  readonly config: SoakConfig
  /** The store itself, read by the checks. */
  readonly store: Store.Store
  /** The store as the memory sees it: with injected failures. */
  readonly faulty: FaultyStore
  /** While set, nothing fails. */
  readonly calm: Ref.Ref<boolean>
  readonly models: ReadonlyArray<ConversationModel>
  /** Error-level log lines (a background fiber that died logs one). */
  readonly errors: Array<string>
  readonly tally: Tally
  memory: ChatMemoryService.Service
  scope: Scope.CloseableScope
  generation: number
  /** Clears this seed may still make. */
  clearsLeft: number
}

/** What the soak did, to check that it exercised what it claims. */
export interface Tally {
  seeds: number
  steps: number
  adds: number
  failedAdds: number
  interruptedAdds: number
  contexts: number
  shutdowns: number
  clears: number
  summarizations: number
  storeFaults: number
  commitFaults: number
  skillHangs: number
  hangsEnded: number
  skillFailures: number
}

export const counter = ApproximateTokenCounter.make

/** Builds the memory of the next generation over the world's faulty store. */
export const buildMemory = (
  config: SoakConfig,
  faulty: FaultyStore,
  calm: Ref.Ref<boolean>,
  tally: Tally,
  generation: number
) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      memoryLayer(config, faulty.store, script(config, generation, calm, tally)),
      scope
    )
    return { scope, memory: Context.get(context, ChatMemoryService) }
  })

/**
 * Runs `effect` to its end, advancing the test clock while it waits (for a hung skill call's
 * timeout, or a retry's backoff). A call that never ends is a defect of the memory.
 */
export const settle = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<Exit.Exit<A, E>> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    for (let i = 0; i < 400; i++) {
      const exit = yield* Fiber.poll(fiber)
      if (Option.isSome(exit)) return exit.value
      if (i < 8) yield* Effect.yieldNow()
      else yield* TestClock.adjust("1 minute")
    }
    yield* Fiber.interrupt(fiber)
    return yield* Effect.dieMessage("a call did not end within 6 hours of test time")
  })

/** The typed failure of an exit; a defect or an interruption fails the check. */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>, what: string): E => {
  if (Exit.isSuccess(exit)) return assert.fail(`${what} succeeded`)
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure) || Cause.isDie(exit.cause)) {
    return assert.fail(`${what} ended with a defect or an interruption:\n${Cause.pretty(exit.cause)}`)
  }
  return failure.value
}

/** A store failure is allowed only when injected; a missing conversation only when the model has none. */
const assertAllowed = (
  error: DataValidationError | ConversationNotFoundError | RepositoryError,
  model: ConversationModel,
  what: string
) => {
  if (error._tag === "RepositoryError") {
    assert.isTrue(isInjected(error), `${what}: a store failure nobody injected`)
  } else if (error._tag === "ConversationNotFoundError") {
    assert.isFalse(model.exists, `${what}: the conversation exists`)
  } else {
    assert.fail(`${what} failed with ${error._tag}`)
  }
}

/** The check of a step's call, run after every call of the step has ended. */
export type Check = Effect.Effect<void>

const sameInput = (stored: ReadonlyArray<Message>, input: ReadonlyArray<typeof MessageInput.Encoded>) =>
  assert.deepStrictEqual(
    stored.map((m) => ({ role: m.role, content: m.content, metadata: m.metadata })),
    input.map((m) => ({ role: m.role, content: m.content, metadata: m.metadata ?? {} })),
    "the stored messages are not the ones added"
  )

const added = (model: ConversationModel, stored: ReadonlyArray<Message>) => {
  const input = model.inputs[model.next] ?? []
  sameInput(stored, input)
  const last = model.messages.at(-1)?.seq ?? 0
  stored.forEach((m, i) => assert.isAbove(m.seq, i === 0 ? last : (stored[i - 1]?.seq ?? 0), "seqs not increasing"))
  model.messages.push(...stored)
  model.next += 1
  model.exists = true
}

/** Whether the model has another input to add. */
export const hasInput = (model: ConversationModel) => model.next < model.inputs.length

/** Adds the model's next input; all of it is stored when the call succeeds, none when it fails. */
export const add = (world: World, model: ConversationModel): Effect.Effect<Check> =>
  Effect.map(
    Effect.exit(world.memory.addMessages(model.id, model.inputs[model.next] ?? [])),
    (exit) =>
      Effect.sync(() => {
        world.tally.adds += 1
        if (Exit.isSuccess(exit)) return added(model, exit.value)
        world.tally.failedAdds += 1
        const error = failureOf(exit, "addMessages")
        assert.strictEqual(error._tag, "RepositoryError", `addMessages failed with ${error._tag}`)
        assertAllowed(error, model, "addMessages")
      })
  )

/** Adds the next input and interrupts the call after a few yields: all of it is stored, or none. */
export const interruptedAdd = (world: World, model: ConversationModel, yields: number): Effect.Effect<Check> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(world.memory.addMessages(model.id, model.inputs[model.next] ?? []))
    for (let i = 0; i < yields; i++) yield* Effect.yieldNow()
    const exit = yield* Fiber.interrupt(fiber)
    world.tally.interruptedAdds += 1
    if (Exit.isSuccess(exit)) return Effect.sync(() => added(model, exit.value))
    if (!Cause.isInterruptedOnly(exit.cause)) {
      const error = failureOf(exit, "interrupted addMessages")
      return Effect.sync(() => assertAllowed(error, model, "interrupted addMessages"))
    }
    return Effect.gen(function*() {
      const snap = yield* snapshot(world.store, model.id)
      const last = model.messages.at(-1)?.seq ?? 0
      const fresh = (snap?.messages ?? []).filter((m) => m.role !== "summary" && m.seq > last)
      if (fresh.length > 0) added(model, fresh)
    })
  })

/**
 * Reads the context, then checks the store; on success, checks the context against the model
 * and the cursors seen around it.
 */
export const context = (world: World, model: ConversationModel): Effect.Effect<Check> => {
  const before = model.cursor
  return Effect.map(Effect.exit(world.memory.getContext(model.id)), (exit) =>
    Effect.gen(function*() {
      world.tally.contexts += 1
      checkStore(model, yield* snapshot(world.store, model.id), world.config.settings)
      if (Exit.isFailure(exit)) return assertAllowed(failureOf(exit, "getContext"), model, "getContext")
      if (!model.exists) {
        // Never written, or cleared: an empty context, and asking for it created nothing.
        const empty = exit.value
        assert.deepStrictEqual(
          [empty.system.length, empty.recent.length, empty.tokenCount, empty.turnsOmitted, empty.summary],
          [0, 0, 0, 0, null],
          "the context of a conversation never written is empty"
        )
        return
      }
      yield* checkContext(counter, exit.value, model, world.config.settings, { before, after: model.cursor })
    }))
}

/** Reads the stats; on success, checks what they report against the cursors seen around them. */
export const stats = (world: World, model: ConversationModel): Effect.Effect<Check> => {
  const before = { cursor: model.cursor, version: model.version }
  return Effect.map(Effect.exit(world.memory.stats(model.id)), (exit) =>
    Effect.gen(function*() {
      if (Exit.isFailure(exit)) return assertAllowed(failureOf(exit, "stats"), model, "stats")
      checkStore(model, yield* snapshot(world.store, model.id), world.config.settings)
      assert.isAtLeast(exit.value.summarizedUpTo, before.cursor)
      assert.isAtMost(exit.value.summarizedUpTo, model.cursor)
      assert.isAtLeast(exit.value.summarizations, before.version)
      assert.isAtMost(exit.value.summarizations, model.version)
    }))
}

/** Waits for background work (of one conversation, or of all); it never fails. */
export const idle = (world: World, model: ConversationModel | undefined): Effect.Effect<Check> =>
  Effect.map(
    Effect.exit(world.memory.awaitIdle(model?.id)),
    (exit) => Effect.sync(() => assert.isTrue(Exit.isSuccess(exit), "awaitIdle failed"))
  )

/** Clears a conversation: on success it is gone, with its summary state; on failure nothing changed. */
export const clear = (world: World, model: ConversationModel): Effect.Effect<Check> =>
  Effect.map(Effect.exit(world.memory.clearMessages(model.id)), (exit) =>
    Effect.sync(() => {
      if (Exit.isFailure(exit)) return assertAllowed(failureOf(exit, "clearMessages"), model, "clearMessages")
      world.tally.clears += 1
      world.clearsLeft -= 1
      model.messages = []
      model.next = 0
      model.exists = false
      model.cursor = 0
      model.version = 0
    }))

/** Closes the memory layer (interrupting its jobs wherever they are) and builds the next one. */
export const shutdown = (world: World) =>
  Effect.gen(function*() {
    yield* Scope.close(world.scope, Exit.void)
    world.generation += 1
    world.tally.shutdowns += 1
    const next = yield* buildMemory(world.config, world.faulty, world.calm, world.tally, world.generation)
    world.scope = next.scope
    world.memory = next.memory
  })
