/**
 * The strategy contract: the laws every `MemoryManagementStrategy` keeps (the invariants), checked as properties.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, FastCheck as fc, type Layer, Option, Queue } from "effect"
import { ConversationId } from "../../src/domain/ConversationId.js"
import { factsText, omissionText, summaryText } from "../../src/domain/internal/contextText.js"
import { groupTurns } from "../../src/domain/internal/turns.js"
import { type MemoryContext } from "../../src/domain/MemoryContext.js"
import type { Message, MessageInput } from "../../src/domain/Message.js"
import type { ConversationNotFoundError } from "../../src/errors/ConversationNotFoundError.js"
import type { DataValidationError } from "../../src/errors/DataValidationError.js"
import type { RepositoryError } from "../../src/errors/RepositoryError.js"
import { ChatMemoryService } from "../../src/services/ChatMemoryService.js"
import { MemoryManagementStrategy } from "../../src/services/MemoryManagementStrategy.js"
import { TokenCounter } from "../../src/services/TokenCounter.js"
import type { SummarizationOptions } from "../../src/strategies/internal/options.js"
import { conversation, type ConversationSpec, text } from "../fixtures/arbitraries.js"

type Input = typeof MessageInput.Encoded

/**
 * The knobs a run of the contract turns. Each strategy takes those it has: the sliding window
 * only the budget, the no-op strategy none.
 */
export type StrategySettings = Pick<
  SummarizationOptions,
  | "tokenBudget"
  | "kRawTurns"
  | "chunkSummarizeThreshold"
  | "summaryTokenCap"
  | "mode"
  | "lazyFallback"
  | "summaryMessages"
>

/** A strategy under test, built for one run's settings. */
export interface StrategySubject<E> {
  /** A fresh memory over the strategy, with the strategy itself and the token counter it counts with. */
  readonly layer: Layer.Layer<ChatMemoryService | MemoryManagementStrategy | TokenCounter, E>
  /** The budget its contexts report: null for a strategy without one. */
  readonly tokenBudget: number | null
  /** How many newest turns it keeps verbatim whenever they fit: a number (K), or every one that fits. */
  readonly verbatimTurns: number | "all"
}

/** One run: a conversation, how it is written, when the background is awaited and the context read. */
interface Scenario {
  readonly spec: ConversationSpec
  /** An opening assistant message before the first user message (a greeting). */
  readonly greeting: string | null
  /** Per turn: end it with a tool call whose result only comes after the next user message. */
  readonly late: ReadonlyArray<boolean>
  /** Per write: what to do after it. */
  readonly steps: ReadonlyArray<Step>
}

type Step = "none" | "idle" | "context" | "both"

const settingsArbitrary: fc.Arbitrary<StrategySettings> = fc.record({
  tokenBudget: fc.integer({ min: 150, max: 750 }),
  kRawTurns: fc.integer({ min: 1, max: 4 }),
  thresholdFactor: fc.double({ min: 0.5, max: 2.5, noNaN: true }),
  capFactor: fc.double({ min: 0.1, max: 0.4, noNaN: true }),
  mode: fc.constantFrom<StrategySettings["mode"]>("incremental", "full", "layered"),
  lazyFallback: fc.constantFrom<StrategySettings["lazyFallback"]>("window", "sync"),
  summaryMessages: fc.boolean()
}).map(({ capFactor, thresholdFactor, ...rest }) => ({
  ...rest,
  chunkSummarizeThreshold: Math.max(1, Math.floor(rest.tokenBudget * thresholdFactor)),
  summaryTokenCap: Math.max(10, Math.floor(rest.tokenBudget * capFactor))
}))

/**
 * The most turns of a scenario: with the small budgets above, enough for a few summarizations
 * (five, median, for the summarization strategy), few enough that a failing case shrinks quickly.
 */
const maxTurns = 24

const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  spec: conversation({ minTurns: 8, maxTurns }),
  // Leading system messages of up to ~125 tokens each: sometimes they take most of a small budget, or more.
  bigSystem: fc.array(text(500), { maxLength: 2 }),
  useBigSystem: fc.boolean(),
  greeting: fc.option(text(100), { nil: null }),
  late: fc.array(fc.integer({ min: 0, max: 7 }).map((n) => n === 0), { minLength: maxTurns, maxLength: maxTurns }),
  // One step per write: the system messages, the greeting, then each turn.
  steps: fc.array(fc.constantFrom<Step>("none", "idle", "context", "both"), {
    minLength: maxTurns + 2,
    maxLength: maxTurns + 2
  })
}).map(({ bigSystem, useBigSystem, ...rest }) => ({
  ...rest,
  spec: useBigSystem
    ? { ...rest.spec, system: bigSystem.map((content): Input => ({ role: "system", content })) }
    : rest.spec
}))

/** The `addMessages` calls of a scenario, in order: system messages, greeting, then one per turn. */
const writesOf = (scenario: Scenario): ReadonlyArray<ReadonlyArray<Input>> => {
  const turns = scenario.spec.turns.map((turn) => [...turn])
  turns.forEach((turn, t) => {
    if (scenario.late[t] !== true) return
    const id = `late_${t}`
    turn.push({ role: "assistant", content: "", metadata: { toolCalls: [{ id, name: "slow", params: {} }] } })
    // The result arrives after the user's next message (when there is one): still the same turn.
    turns[t + 1]?.splice(1, 0, { role: "tool", content: `result ${t}`, metadata: { toolCallId: id, toolName: "slow" } })
  })
  return [
    ...(scenario.spec.system.length > 0 ? [scenario.spec.system] : []),
    ...(scenario.greeting === null ? [] : [[{ role: "assistant", content: scenario.greeting } satisfies Input]]),
    ...turns
  ]
}

const conversationId = "contract"

const tokens = (messages: ReadonlyArray<Message>) => messages.reduce((n, m) => n + m.tokenCount, 0)

/** A context, and the conversation it was built from. */
interface Observation {
  readonly context: MemoryContext
  /** Every stored message but the library's `summary` records, in seq order. */
  readonly stored: ReadonlyArray<Message>
  /** The leading system messages of `stored`. */
  readonly system: ReadonlyArray<Message>
  /** The messages after them. */
  readonly rest: ReadonlyArray<Message>
  /** Tokens of the facts and summary blocks, as the counter counts the messages that carry them. */
  readonly factTokens: number
  readonly summaryTokens: number
}

const observe = Effect.gen(function*() {
  const memory = yield* ChatMemoryService
  const counter = yield* TokenCounter
  const context = yield* memory.getContext(conversationId)
  // Read after the context: nothing is pruned, so the messages it was built from are all here.
  const stored = (yield* memory.getMessages(conversationId)).filter((m) => m.role !== "summary")
  let prefix = 0
  while (stored[prefix]?.role === "system") prefix += 1
  const factTokens = context.facts.length === 0
    ? 0
    : yield* counter.countMessage({ content: factsText(context.facts) })
  // The notice of omitted turns, when the context carries one, goes with the summary's tokens.
  const summaryTokens = (context.summary === null
    ? 0
    : yield* counter.countMessage({ content: summaryText(context.summary) })) +
    (context.omissionAnnounced ? yield* counter.countMessage({ content: omissionText(context.turnsOmitted) }) : 0)
  return {
    context,
    stored,
    system: stored.slice(0, prefix),
    rest: stored.slice(prefix),
    factTokens,
    summaryTokens
  } satisfies Observation
})

/**
 * Writes the scenario, awaiting the background and checking the context at the steps it says
 * (behind and fresh summaries both), then once more when the background is idle.
 */
const drive = (scenario: Scenario, check: (observation: Observation) => void) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    for (const [i, write] of writesOf(scenario).entries()) {
      yield* memory.addMessages(conversationId, write)
      const step = scenario.steps[i] ?? "none"
      if (step === "idle" || step === "both") yield* memory.awaitIdle(conversationId)
      if (step === "context" || step === "both") check(yield* observe)
    }
    yield* memory.awaitIdle(conversationId)
    check(yield* observe)
  })

const seqsOf = (messages: ReadonlyArray<Message>) => messages.map((m) => m.seq)

/** Runs of a law: bounded by their number and by the size of the scenarios, never by time. */
const fastCheck = { numRuns: 20 }

/** The settings of the example-based tests. */
const fixedSettings: StrategySettings = {
  tokenBudget: 600,
  kRawTurns: 2,
  chunkSummarizeThreshold: 400,
  summaryTokenCap: 100,
  mode: "incremental",
  lazyFallback: "window",
  summaryMessages: false
}

/** The conversation id of a `ConversationNotFoundError` failure, or a description of what else happened. */
const notFound = (
  exit: Exit.Exit<unknown, DataValidationError | ConversationNotFoundError | RepositoryError>
): string => {
  if (Exit.isSuccess(exit)) return "succeeded"
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) return `died: ${Cause.pretty(exit.cause)}`
  if (failure.value._tag !== "ConversationNotFoundError") return `failed with ${failure.value._tag}`
  return failure.value.conversationId
}

/**
 * Registers the contract for one strategy. `makeLayer` builds a fresh memory over the strategy
 * for the settings of each run.
 */
export const strategyContract = <E>(
  name: string,
  makeLayer: (settings: StrategySettings) => StrategySubject<E>
) =>
  describe(`MemoryManagementStrategy contract: ${name}`, () => {
    const law = (
      title: string,
      check: (observation: Observation, subject: StrategySubject<E>) => void
    ) =>
      it.effect.prop(
        title,
        { settings: settingsArbitrary, scenario: scenarioArbitrary },
        ({ scenario, settings }) => {
          const subject = makeLayer(settings)
          return drive(scenario, (observation) => check(observation, subject)).pipe(Effect.provide(subject.layer))
        },
        { fastCheck }
      )

    law("1. the context fits the budget whenever its protected part does, and counts what it shows", (o, subject) => {
      const { context } = o
      assert.strictEqual(context.tokenBudget, subject.tokenBudget, "tokenBudget")
      assert.strictEqual(
        context.tokenCount,
        tokens(context.system) + o.factTokens + o.summaryTokens + tokens(context.recent),
        "tokenCount is not the sum of system, facts, summary and recent"
      )
      // The protected part (the invariants.1): the leading system messages and the facts, which the
      // strategies never truncate. A summary, however long, must make room.
      if (context.tokenBudget !== null && tokens(o.system) + o.factTokens <= context.tokenBudget) {
        assert.isAtMost(context.tokenCount, context.tokenBudget, "over budget")
      }
    })

    law("2. the newest K turns are in recent, verbatim and in order, whenever they fit", (o, subject) => {
      const { context } = o
      const turns = groupTurns(o.rest).turns
      const k = subject.verbatimTurns === "all" ? turns.length : Math.min(subject.verbatimTurns, turns.length)
      // The protected part: system messages, and facts (never truncated, unlike the summary).
      const room = context.tokenBudget === null
        ? Number.POSITIVE_INFINITY
        : context.tokenBudget - tokens(o.system) - o.factTokens
      // The newest j turns fit for every j up to some bound; the law asks for them up to K.
      let fitting = 0
      while (fitting < k && tokens(turns.slice(turns.length - fitting - 1).flatMap((t) => t.messages)) <= room) {
        fitting += 1
      }
      if (subject.verbatimTurns !== "all" && fitting < k) return
      const newest = turns.slice(turns.length - fitting).flatMap((t) => t.messages)
      assert.deepStrictEqual(
        seqsOf(context.recent.slice(Math.max(0, context.recent.length - newest.length))),
        seqsOf(newest),
        `the newest ${fitting} turns are not all shown`
      )
      assert.deepStrictEqual(context.recent.slice(context.recent.length - newest.length), newest, "not verbatim")
    })

    law("3. a tool call and its result are never split: by recent, nor by the summary cursor", (o) => {
      const { context } = o
      const calls = new Map<string, number>()
      for (const m of o.stored) for (const call of m.metadata.toolCalls ?? []) calls.set(call.id, m.seq)
      const inRecent = new Set(seqsOf(context.recent))
      for (const m of o.stored) {
        const call = m.metadata.toolCallId === undefined ? undefined : calls.get(m.metadata.toolCallId)
        if (call === undefined) continue
        assert.strictEqual(inRecent.has(call), inRecent.has(m.seq), `call ${call} and result ${m.seq} split by recent`)
        assert.strictEqual(
          call <= context.summarizedUpTo,
          m.seq <= context.summarizedUpTo,
          `call ${call} and result ${m.seq} split by the cursor ${context.summarizedUpTo}`
        )
      }
    })

    law("4. the leading system messages are always in system, whole, and nowhere else", (o) => {
      const { context } = o
      assert.deepStrictEqual(context.system, o.system, "system is not the leading system messages")
      const leading = new Set(seqsOf(o.system))
      assert.isFalse(context.recent.some((m) => leading.has(m.seq)), "a leading system message is in recent")
    })

    law("5. every message is covered by the summary, shown or counted as omitted; turnsShown counts recent", (o) => {
      const { context } = o
      // Recent is whole turns: the newest messages of the conversation, starting where a turn starts.
      assert.deepStrictEqual(seqsOf(context.recent), seqsOf(o.rest.slice(o.rest.length - context.recent.length)))
      const turns = groupTurns(o.rest).turns
      const first = context.recent[0]
      if (first !== undefined) assert.isTrue(turns.some((t) => t.firstSeq === first.seq), "recent starts mid-turn")
      const shown = new Set(seqsOf([...context.system, ...context.recent]))
      const uncovered = o.stored.filter((m) => m.seq > context.summarizedUpTo && !shown.has(m.seq))
      assert.strictEqual(context.messagesOmitted, uncovered.length, "messagesOmitted")
      assert.strictEqual(context.turnsShown, groupTurns(context.recent).turns.length, "turnsShown")
      // `turnsOmitted` is checked only where every turn holds one user message: the strategies count
      // user messages, and a tool result that arrives after the next user message merges two turns.
      if (turns.every((t) => t.messages.filter((m) => m.role === "user").length <= 1)) {
        const omitted = turns.filter((t) => t.firstSeq > context.summarizedUpTo && !shown.has(t.firstSeq))
        assert.strictEqual(context.turnsOmitted, omitted.length, "turnsOmitted")
      }
      assert.isAtMost(context.summarizedUpTo, o.stored.at(-1)?.seq ?? 0)
    })

    it.effect("an unknown conversation has an empty context, and asking for it creates nothing", () => {
      const subject = makeLayer(fixedSettings)
      return Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        const empty = (context: MemoryContext) => {
          assert.deepStrictEqual(
            [context.system, context.recent, context.facts, context.summary, context.recalled],
            [[], [], [], null, []]
          )
          assert.deepStrictEqual(
            [
              context.tokenCount,
              context.turnsShown,
              context.turnsOmitted,
              context.messagesOmitted,
              context.tokenBudget
            ],
            [0, 0, 0, 0, subject.tokenBudget]
          )
        }
        empty(yield* memory.getContext("never-written"))
        empty(yield* memory.getContext("never-written", { query: "anything at all" }))
        assert.deepStrictEqual(notFound(yield* Effect.exit(memory.stats("never-written"))), "never-written")
        // An empty write creates nothing.
        assert.deepStrictEqual(yield* memory.addMessages("empty", []), [])
        empty(yield* memory.getContext("empty"))
        // A cleared conversation is empty again.
        yield* memory.addMessages("cleared", [{ role: "user", content: "hello" }, { role: "assistant", content: "hi" }])
        yield* memory.clearMessages("cleared")
        yield* memory.awaitIdle()
        empty(yield* memory.getContext("cleared"))
        assert.deepStrictEqual(notFound(yield* Effect.exit(memory.stats("cleared"))), "cleared")
      }).pipe(Effect.provide(subject.layer))
    })

    it.effect("the context names the conversation's user, and a read naming another user is refused", () => {
      const subject = makeLayer(fixedSettings)
      return Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        const strategy = yield* MemoryManagementStrategy
        yield* memory.addMessages("theirs", [
          { role: "user", content: "My passport number is XP-998877." },
          { role: "assistant", content: "Noted." }
        ], { userId: "ana" })
        yield* memory.addMessages("nobody's", [{ role: "user", content: "hello" }])
        assert.strictEqual((yield* strategy.buildContext(ConversationId.make("theirs"))).userId, "ana")
        assert.strictEqual((yield* strategy.buildContext(ConversationId.make("nobody's"))).userId, null)
        assert.strictEqual((yield* memory.getContext("theirs", { userId: "ana" })).userId, "ana")
        const refused = yield* Effect.flip(memory.getContext("theirs", { userId: "bob" }))
        assert.strictEqual(
          refused.message,
          "ChatMemoryService.getContext: invalid options.userId: the conversation belongs to another user"
        )
      }).pipe(Effect.provide(subject.layer))
    })

    it.effect("a conversation of system messages only: all of them, and nothing else", () => {
      const subject = makeLayer(fixedSettings)
      return Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        const system = yield* memory.addMessages("rules", [
          { role: "system", content: "You are a shipping assistant." },
          { role: "system", content: "Answer briefly." }
        ])
        yield* memory.awaitIdle("rules")
        const context = yield* memory.getContext("rules")
        assert.deepStrictEqual(context.system, system)
        assert.deepStrictEqual(
          [context.facts, context.summary, context.recent, context.tokenCount, context.tokenBudget],
          [[], null, [], tokens(system), subject.tokenBudget]
        )
        assert.deepStrictEqual(
          [context.turnsShown, context.turnsOmitted, context.messagesOmitted, context.summarizedUpTo],
          [0, 0, 0, 0]
        )
        assert.isFalse(context.summaryTruncated)
      }).pipe(Effect.provide(subject.layer))
    })

    it.effect.prop(
      "reads are idempotent: once idle, getContext and awaitIdle change nothing until a message is added",
      { settings: settingsArbitrary, scenario: scenarioArbitrary },
      ({ scenario, settings }) => {
        const subject = makeLayer(settings)
        return Effect.gen(function*() {
          const memory = yield* ChatMemoryService
          yield* drive(scenario, () => undefined)
          const messages = yield* memory.getMessages(conversationId)
          // The strategy publishes before `buildContext` returns: what the reads caused is queued by then.
          const events = yield* (yield* MemoryManagementStrategy).subscribe
          const first = yield* memory.getContext(conversationId)
          yield* memory.awaitIdle(conversationId)
          const second = yield* memory.getContext(conversationId)
          const third = yield* memory.getContext(conversationId)
          yield* memory.awaitIdle()
          assert.deepStrictEqual(second, first)
          assert.deepStrictEqual(third, first)
          assert.deepStrictEqual(yield* memory.getMessages(conversationId), messages)
          // Once idle, no read finds the summary behind: no fallback, no summarization started.
          assert.deepStrictEqual(Chunk.toReadonlyArray(yield* Queue.takeAll(events)).map((e) => e._tag), [])
        }).pipe(Effect.scoped, Effect.provide(subject.layer))
      },
      { fastCheck: { ...fastCheck, numRuns: 12 } }
    )
  })
