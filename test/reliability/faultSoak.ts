/**
 * The seeded fault soak: for each seed, conversations written through the memory under random
 * interleavings of adds, context reads, stats, background completion, interrupted calls, clears
 * and layer shutdowns, while the skill fails and hangs and the store fails, as the seed says.
 * After every step the the invariants invariants hold; once the faults stop, the background catches up.
 *
 * One test file per variant (`faultSoak.<variant>.test.ts`), so that the four run in parallel. A
 * failing seed names itself: `SOAK_SEED=<seed> npx vitest run test/reliability/faultSoak` replays it
 * alone. `SOAK_SEEDS=<n>` runs seeds 1..n (240 by default, a quarter per variant).
 */
import { assert, describe, it } from "@effect/vitest"
import {
  Cause,
  Config,
  Effect,
  Exit,
  HashMap,
  Layer,
  Logger,
  LogLevel,
  Option,
  Ref,
  Scope,
  TestClock,
  TestContext
} from "effect"
import * as ConversationId from "../../src/domain/ConversationId.js"
import * as MemoryStore from "../../src/layers/store/MemoryStore.js"
import * as SummarizationOptions from "../../src/strategies/internal/options.js"
import * as FaultyStore from "./faultyStore.js"
import { draw, random } from "./random.js"
import { checkCaughtUp, type ConversationModel, snapshot } from "./soakChecks.js"
import { configFor, type Variant, variantOf } from "./soakConfig.js"
import * as World from "./soakWorld.js"

const defaultSeeds = 240
const maxSteps = 160

const closingTurn = [
  { role: "user" as const, content: "One last question before we stop." },
  { role: "assistant" as const, content: "Here is the last answer of this conversation." }
]

/**
 * Every invariant of every conversation (its store, and a context read now), and no error logged
 * (a background fiber that died logs one).
 */
const checkAll = (world: World.World) =>
  Effect.gen(function*() {
    for (const model of world.models) {
      yield* Effect.flatten(Effect.flatMap(World.settle(World.context(world, model)), Effect.orDie))
    }
    if (world.errors.length > 0) assert.fail(`errors were logged:\n${world.errors.join("\n")}`)
  })

/** One step: a call, a few concurrent calls on distinct conversations, or a fault of the world. */
const step = (world: World.World, r: ReturnType<typeof random>) =>
  Effect.gen(function*() {
    const { rates } = world.config
    const x = r.next()
    const pending = world.models.filter(World.hasInput)
    const model = r.pick(pending.length > 0 ? pending : world.models)
    const run = (call: Effect.Effect<World.Check>) =>
      Effect.flatMap(Effect.flatMap(World.settle(call), Effect.orDie), (c) => c)
    if (x < rates.shutdown) {
      // Close the layer wherever its jobs are: right after an add triggered one, a few yields in.
      if (World.hasInput(model) && r.chance(0.7)) yield* run(World.add(world, model))
      for (let i = r.int(0, 30); i > 0; i--) yield* Effect.yieldNow()
      return yield* World.shutdown(world)
    }
    if (x < rates.shutdown + rates.interrupt && World.hasInput(model)) {
      return yield* Effect.flatten(World.interruptedAdd(world, model, r.int(0, 6)))
    }
    if (x < rates.shutdown + rates.interrupt + rates.clear && world.clearsLeft > 0) {
      return yield* run(World.clear(world, model))
    }
    const single = (target: ConversationModel): Effect.Effect<World.Check> => {
      const y = r.next()
      if (y < 0.55 && World.hasInput(target)) return World.add(world, target)
      if (y < 0.75) return World.context(world, target)
      if (y < 0.9) return World.idle(world, r.chance(0.3) ? undefined : target)
      return World.stats(world, target)
    }
    if (x < rates.shutdown + rates.interrupt + rates.clear + rates.batch && world.models.length > 1) {
      // Concurrent calls, one per conversation: their interleaving is the scheduler's.
      const targets = world.models.filter(() => r.chance(0.8))
      const calls = targets.map(single)
      const checks = yield* Effect.flatMap(
        World.settle(Effect.all(calls, { concurrency: "unbounded" })),
        Effect.orDie
      )
      for (const check of checks) yield* check
      return
    }
    yield* run(single(model))
  })

const runSeed = (seed: number, tally: World.Tally) =>
  Effect.gen(function*() {
    const config = configFor(seed)
    const r = random(seed ^ 0x5eed)
    const errors: Array<string> = []
    const calm = yield* Ref.make(false)
    const store = yield* MemoryStore.make
    const faulty = yield* FaultyStore.make(store, (operation, n) =>
      Effect.map(Ref.get(calm), (quiet) => !quiet && draw(seed, operation, n) < config.rates.store))
    const first = yield* World.buildMemory(config, faulty, calm, tally, 0)
    const world: World.World = {
      config,
      store,
      faulty,
      calm,
      errors,
      tally,
      models: config.conversations.map((spec, i) => ({
        id: ConversationId.make(`soak-${seed}-${i}`),
        inputs: spec.system.length > 0 ? [spec.system, ...spec.turns] : spec.turns,
        next: 0,
        messages: [],
        exists: false,
        cursor: 0,
        version: 0
      })),
      memory: first.memory,
      scope: first.scope,
      generation: 0,
      clearsLeft: 1
    }
    tally.seeds += 1
    let steps = 0
    const failed = (cause: Cause.Cause<unknown>) =>
      Effect.die(
        new Error(
          `fault soak seed ${seed} (${config.variant}) failed at step ${steps}; replay it with ` +
            `SOAK_SEED=${seed} npx vitest run test/reliability/faultSoak.${config.variant}.test.ts\n${
              Cause.pretty(cause)
            }`
        )
      )
    yield* Effect.gen(function*() {
      for (; steps < maxSteps && world.models.some(World.hasInput); steps++) {
        tally.steps += 1
        yield* step(world, r)
        yield* checkAll(world)
      }
      // The faults stop and the summarizer's breaker, which a run of failures may have opened, cools
      // down: a last turn everywhere, and the background catches up.
      yield* Ref.set(calm, true)
      yield* TestClock.adjust(SummarizationOptions.defaults.breakerCooldown)
      for (const model of world.models) {
        const exit = yield* World.settle(world.memory.addMessages(model.id, closingTurn))
        assert.isTrue(Exit.isSuccess(exit), "the closing add failed")
        if (Exit.isSuccess(exit)) {
          model.messages.push(...exit.value)
        }
        model.exists = true
      }
      assert.isTrue(Exit.isSuccess(yield* World.settle(world.memory.awaitIdle())))
      yield* checkAll(world)
      for (const model of world.models) {
        yield* checkCaughtUp(World.counter, model, yield* snapshot(store, model.id), config.settings)
        tally.summarizations += (yield* snapshot(store, model.id))?.records.length ?? 0
      }
      const failures = yield* faulty.failures
      tally.storeFaults += HashMap.reduce(failures, 0, (n, count) =>
        n + count)
      tally.commitFaults += Option.getOrElse(HashMap.get(failures, "commitSummary"), () => 0)
      yield* Scope.close(world.scope, Exit.void)
      // Every hung skill call ended: none outlived its timeout or its layer.
      assert.strictEqual(tally.hangsEnded, tally.skillHangs, "a hung skill call outlived its layer")
    }).pipe(
      Effect.catchAllCause(failed),
      Effect.provide(Layer.merge(
        TestContext.TestContext,
        Logger.add(Logger.make(({ cause, logLevel, message }) => {
          if (LogLevel.greaterThanEqual(logLevel, LogLevel.Error)) errors.push(`${message} ${Cause.pretty(cause)}`)
        }))
      ))
    )
  })

/** The seeds of a variant: `SOAK_SEED` alone when set, else 1..`SOAK_SEEDS`. */
const seedsOf = (variant: Variant) =>
  Effect.gen(function*() {
    const only = yield* Config.option(Config.integer("SOAK_SEED"))
    const count = yield* Config.integer("SOAK_SEEDS").pipe(Config.withDefault(defaultSeeds))
    const seeds = Option.isSome(only) ? [only.value] : Array.from({ length: count }, (_, i) => i + 1)
    return { seeds: seeds.filter((seed) => variantOf(seed) === variant), replaying: Option.isSome(only) }
  }).pipe(Effect.orDie)

/**
 * The soak of one variant: its seeds among 1..`SOAK_SEEDS` (or `SOAK_SEED` alone), each checked
 * after every step, and a check that the seeds together exercised every kind of fault.
 */
export const faultSoak = (variant: Variant) =>
  describe(`fault soak: ${variant}`, () => {
    it.effect(
      `${variant}: the invariants hold after every step under store and skill faults, hangs and shutdowns`,
      () =>
        Effect.gen(function*() {
          const { replaying, seeds } = yield* seedsOf(variant)
          const tally: World.Tally = {
            seeds: 0,
            steps: 0,
            adds: 0,
            failedAdds: 0,
            interruptedAdds: 0,
            contexts: 0,
            shutdowns: 0,
            clears: 0,
            summarizations: 0,
            storeFaults: 0,
            commitFaults: 0,
            skillHangs: 0,
            hangsEnded: 0,
            skillFailures: 0
          }
          for (const seed of seeds) yield* runSeed(seed, tally)
          console.info(`fault soak (${variant}): ${JSON.stringify(tally)}`)
          if (replaying) return
          // The soak exercised what it claims: every fault happened, and summaries were applied.
          assert.strictEqual(tally.seeds, seeds.length)
          for (
            const key of [
              "failedAdds",
              "interruptedAdds",
              "shutdowns",
              "summarizations",
              "commitFaults",
              "skillHangs",
              "skillFailures"
            ] as const
          ) {
            assert.isAbove(tally[key], 0, `no ${key} in ${seeds.length} seeds`)
          }
        })
    )
  })
