/**
 * The summarization strategy's invariants after each step of random adds, context reads (asked with
 * a query drawn for each, or none: recall on) and background completions, and a 400-turn replay
 * with the explicit threshold.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import { summaryText } from "../src/domain/internal/contextText.js"
import type { MemoryContext } from "../src/domain/MemoryContext.js"
import type { Message } from "../src/domain/Message.js"
import { ScriptedSkill } from "../src/layers/skills/ScriptedSkill.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { SummaryStore } from "../src/services/SummaryStore.js"
import { TokenCounter } from "../src/services/TokenCounter.js"
import { conversation } from "./fixtures/arbitraries.js"
import { summarizingMemory } from "./fixtures/layers.js"

const tokens = (messages: ReadonlyArray<Message>) => messages.reduce((n, m) => n + m.tokenCount, 0)
const id = ConversationId.make("prop")

/** Checks the invariants on a context, given every message stored and the turns as written. */
const checkContext = (
  context: MemoryContext,
  stored: ReadonlyArray<Message>,
  systemCount: number,
  turns: ReadonlyArray<ReadonlyArray<Message>>,
  settings: { readonly budget: number; readonly k: number }
) => {
  const system = stored.slice(0, systemCount)
  const systemTokens = tokens(system)
  // 4. Leading system messages are never trimmed.
  assert.deepStrictEqual(context.system, system)
  // 1. The budget holds whenever the protected part fits.
  if (systemTokens <= settings.budget) assert.isAtMost(context.tokenCount, settings.budget)
  // 2. The last K turns are there, verbatim, whenever they fit.
  const newestK = turns.slice(Math.max(0, turns.length - settings.k)).flat()
  if (systemTokens + tokens(newestK) <= settings.budget) {
    assert.deepStrictEqual(context.recent.slice(context.recent.length - newestK.length), newestK)
  }
  // The recent part is whole turns: a suffix of the conversation.
  assert.deepStrictEqual(context.recent, stored.slice(stored.length - context.recent.length))
  // 4. No tool call is separated from its result.
  const calls = new Set(context.recent.flatMap((m) => (m.metadata.toolCalls ?? []).map((c) => c.id)))
  const results = new Set(context.recent.flatMap((m) => m.metadata.toolCallId ?? []))
  assert.deepStrictEqual([...results].filter((x) => !calls.has(x)), [])
  assert.deepStrictEqual([...calls].filter((x) => !results.has(x)), [])
  // 3. Every message is covered by the summary, shown, or counted as omitted.
  const shown = new Set([...context.system, ...context.recent].map((m) => m.seq))
  const uncovered = stored.filter((m) => m.seq > context.summarizedUpTo && !shown.has(m.seq))
  assert.strictEqual(context.messagesOmitted, uncovered.length)
  // Recalled turns: stored messages older than those shown, each once, within the block's tokens.
  const firstShown = context.recent[0]?.seq ?? Number.POSITIVE_INFINITY
  const recalled = context.recalled.flatMap((turn) => turn.messages.map((m) => m.seq))
  assert.strictEqual(new Set(recalled).size, recalled.length)
  assert.isTrue(recalled.every((seq) => seq < firstShown && stored.some((m) => m.seq === seq)))
  assert.strictEqual(context.recalledTokens === 0, context.recalled.length === 0)
}

/** A context's query: the first words of a message written so far, or none. */
const queryOf = (pick: number | undefined, stored: ReadonlyArray<Message>): string | undefined => {
  if (pick === undefined || stored.length === 0) return undefined
  const words = (stored[pick % stored.length]?.content ?? "").split(/\s+/).slice(0, 1 + (pick % 6)).join(" ")
  return words.trim().length === 0 ? undefined : words
}

/** The explicit trigger of the chunked-summary design, as the defaults had it before the watermarks. */
const threshold = 6000

/**
 * The most turns of a run: at the small budgets below, enough for a few summarizations, few enough
 * that a failing case shrinks quickly. The long replay is the 400-turn example below.
 */
const maxTurns = 24

describe("SummarizationStrategy properties", () => {
  it.effect.prop(
    "every invariant holds after each step of random adds, context reads and background completions",
    {
      spec: conversation({ minTurns: 8, maxTurns }),
      steps: fc.array(fc.constantFrom("none", "idle", "context", "both"), { minLength: maxTurns, maxLength: maxTurns }),
      queries: fc.array(fc.option(fc.nat(), { nil: undefined }), { minLength: maxTurns, maxLength: maxTurns }),
      budget: fc.integer({ min: 75, max: 1250 }),
      k: fc.integer({ min: 1, max: 4 }),
      thresholdFactor: fc.double({ min: 1, max: 3, noNaN: true }),
      mode: fc.constantFrom("incremental" as const, "full" as const, "layered" as const)
    },
    ({ budget, k, mode, queries, spec, steps, thresholdFactor }) => {
      const summaryTokenCap = Math.max(10, Math.floor(budget / 5))
      const options = {
        kRawTurns: k,
        tokenBudget: budget,
        chunkSummarizeThreshold: Math.floor(budget * thresholdFactor),
        summaryTokenCap,
        mode,
        retries: 0
      }
      return Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        const repository = yield* SummaryStore
        const system = spec.system.length > 0 ? yield* memory.addMessages("prop", spec.system) : []
        const turns: Array<ReadonlyArray<Message>> = []
        let cursor = 0
        let version = 0
        for (const [i, turn] of spec.turns.entries()) {
          turns.push(yield* memory.addMessages("prop", turn))
          const step = steps[i] ?? "none"
          if (step === "idle" || step === "both") yield* memory.awaitIdle("prop")
          if (step === "context" || step === "both") {
            const stored = yield* memory.getMessages("prop")
            const query = queryOf(queries[i], stored)
            const context = yield* memory.getContext("prop", query === undefined ? undefined : { query })
            checkContext(context, stored, system.length, turns, { budget, k })
          }
          // 5. The cursor only moves forward.
          const state = yield* repository.getSummaryState(id)
          assert.isAtLeast(state.cursor, cursor)
          assert.isAtLeast(state.version, version)
          cursor = state.cursor
          version = state.version
        }
        yield* memory.awaitIdle()
        const stored = yield* memory.getMessages("prop")
        // 7. Nothing added is lost.
        assert.strictEqual(stored.length, system.length + turns.flat().length)
        checkContext(yield* memory.getContext("prop"), stored, system.length, turns, { budget, k })
        // 6. Applied summarizations cover disjoint, increasing ranges, each a run of whole turns.
        const records = yield* repository.listSummarizations(id)
        if (mode !== "full") records.forEach((r, i) => assert.isAbove(r.fromSeq, records[i - 1]?.toSeq ?? 0))
        for (const record of records) assert.isAtMost(record.toSeq, stored.length)
      }).pipe(Effect.provide(summarizingMemory(options)))
    },
    { fastCheck: { numRuns: 100 } }
  )

  it.effect("explicit threshold 6000: a 400-turn replay calls the summarizer only past it, reading at most 1.5x the conversation", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const repository = yield* SummaryStore
      const counter = yield* TokenCounter
      const skill = yield* ScriptedSkill
      let seed = 42
      const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
      const words = (n: number) => Array.from({ length: n }, (_, i) => `w${Math.floor(random() * 1000)}${i}`).join(" ")
      for (let i = 1; i <= 400; i++) {
        // Whether a summarization is due once this turn is added (the trigger).
        const turn = [
          { role: "user" as const, content: `Turn ${i}: ${words(5 + Math.floor(random() * 40))}` },
          { role: "assistant" as const, content: words(10 + Math.floor(random() * 120)) }
        ]
        const before = (yield* skill.calls).length
        const state = yield* repository.getSummaryState(id).pipe(Effect.orElseSucceed(() => undefined))
        const stored = yield* memory.addMessages("prop", turn)
        const buffer = yield* memory.getMessages("prop", { limit: 10_000 })
        const pending = buffer.filter((m) => m.seq > (state?.cursor ?? 0))
        const summary = state === undefined || state.narrative.length === 0
          ? 0
          : yield* counter.countMessage({ content: summaryText(state.narrative) })
        const due = summary + tokens(pending) > threshold
        yield* memory.awaitIdle("prop")
        const after = (yield* skill.calls).length
        assert.strictEqual(after > before, due, `turn ${i} (seqs up to ${stored.at(-1)?.seq})`)
      }
      const stats = yield* memory.stats("prop")
      assert.isAbove(stats.summarizations, 5)
      assert.isAtMost(stats.summarizerInputTokens, 1.5 * stats.tokensStored)
    }).pipe(Effect.provide(summarizingMemory({ chunkSummarizeThreshold: threshold }))))
})
