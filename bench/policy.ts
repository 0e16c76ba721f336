/**
 * What each context policy costs and shows on a long generated conversation: the `full` and
 * `stable` views under the watermark defaults, and the explicit `chunkSummarizeThreshold` of the
 * chunked-summary design. Per policy: summarizer calls and tokens read, turns left out unsummarized,
 * and how often the rendered prompt stops being an append-only extension of the one before (a miss
 * of a provider's prefix cache).
 */
import { Effect } from "effect"
import type { MemoryContext } from "../src/domain/MemoryContext.js"
import { isAppendOnly } from "../src/layers/ai/internal/prefix.js"
import { ScriptedSkill } from "../src/layers/skills/ScriptedSkill.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { defaults, type SummarizationOptions } from "../src/strategies/internal/options.js"
import { budget, scaled, type Settings, summarizingMemory } from "./setup.js"
import { fixed, int, printTable, ratio, timed } from "./stats.js"
import { generatedTurn } from "./texts.js"

interface Policy {
  readonly name: string
  readonly options: Partial<SummarizationOptions>
}

const threshold = 6000

const policies: ReadonlyArray<Policy> = [
  { name: "watermarks, full view", options: { view: "full" } },
  { name: "watermarks, stable view", options: { view: "stable" } },
  { name: `threshold ${threshold} (full view)`, options: { chunkSummarizeThreshold: threshold } }
]

interface Row {
  readonly policy: string
  readonly turns: number
  readonly conversationTokens: number
  readonly summarizations: number
  readonly calls: number
  readonly inputTokens: number
  readonly inputTokensPerStoredToken: number
  /** The sum over all turns of `turnsOmitted`. */
  readonly turnsOmittedSum: number
  /** The turns whose context omitted at least one turn. */
  readonly turnsWithOmission: number
  readonly turnsOmittedAtEnd: number
  /** Consecutive contexts whose prompt is not an append-only extension of the one before. */
  readonly prefixChanges: number
  /** Of those, the ones where the summary's cursor moved (a fold was applied in between). */
  readonly prefixChangesAtFold: number
  readonly pairs: number
  /** The turns (0-based) whose context broke the prefix of the one before, when no fold was applied. */
  readonly prefixChangesWithoutFoldAt: ReadonlyArray<number>
  readonly meanContextTokens: number
  readonly maxContextTokens: number
  readonly seconds: number
}

const conversation = (policy: Policy, turns: number) =>
  Effect.provide(
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const skill = yield* ScriptedSkill
      const id = `policy-${turns}`
      let previous: MemoryContext | undefined
      let omittedSum = 0
      let withOmission = 0
      let omittedAtEnd = 0
      let changes = 0
      let changesAtFold = 0
      const withoutFold: Array<number> = []
      let contextTokens = 0
      let maxContextTokens = 0
      const [elapsed] = yield* timed(Effect.gen(function*() {
        for (let i = 0; i < turns; i++) {
          yield* memory.addMessages(id, generatedTurn(i))
          yield* memory.awaitIdle(id)
          const context = yield* memory.getContext(id)
          omittedSum += context.turnsOmitted
          if (context.turnsOmitted > 0) withOmission++
          omittedAtEnd = context.turnsOmitted
          contextTokens += context.tokenCount
          maxContextTokens = Math.max(maxContextTokens, context.tokenCount)
          if (previous !== undefined && !isAppendOnly(previous, context)) {
            changes++
            if (context.summarizedUpTo !== previous.summarizedUpTo) changesAtFold++
            else withoutFold.push(i)
          }
          previous = context
        }
      }))
      const stats = yield* memory.stats(id)
      const calls = yield* skill.calls
      const row: Row = {
        policy: policy.name,
        turns,
        conversationTokens: stats.tokensStored,
        summarizations: stats.summarizations,
        calls: calls.length,
        inputTokens: stats.summarizerInputTokens,
        inputTokensPerStoredToken: ratio(stats.summarizerInputTokens, stats.tokensStored),
        turnsOmittedSum: omittedSum,
        turnsWithOmission: withOmission,
        turnsOmittedAtEnd: omittedAtEnd,
        prefixChanges: changes,
        prefixChangesAtFold: changesAtFold,
        pairs: Math.max(0, turns - 1),
        prefixChangesWithoutFoldAt: withoutFold,
        meanContextTokens: ratio(contextTokens, turns),
        maxContextTokens,
        seconds: elapsed / 1000
      }
      return row
    }),
    summarizingMemory(MemoryStore.layer, policy.options)
  )

const percent = (part: number, whole: number): string => `${fixed(100 * ratio(part, whole), 0)} %`

/** Runs the context-policy benchmark, prints it, and returns its JSON. */
export const policyBench = (settings: Settings) =>
  Effect.gen(function*() {
    const turns = scaled(settings, 400, 60)
    const rows: Array<Row> = []
    for (const policy of policies) rows.push(yield* conversation(policy, turns))
    const method = `one conversation of ${turns} generated turns per row (user 15-60 words, answer 30-180), ` +
      `each added with addMessages then awaitIdle and getContext; budget ${budget}, kRawTurns ` +
      `${defaults.kRawTurns}, watermarks ${defaults.highWater} / ${defaults.lowWater}, cap ` +
      `${defaults.summaryTokenCap}, mode ${defaults.mode}; scripted skill, usage = characters / 4; in-memory ` +
      "store; counts are exact, one run per row"
    yield* printTable(
      "Context policies on a long conversation",
      method,
      [
        "policy",
        "calls",
        "input/stored tok",
        "omitted (sum)",
        "turns omitting",
        "omitted at end",
        "prefix changes",
        "prefix kept",
        "mean ctx tok",
        "time"
      ],
      rows.map((r) => [
        r.policy,
        int(r.calls),
        fixed(r.inputTokensPerStoredToken, 2),
        int(r.turnsOmittedSum),
        int(r.turnsWithOmission),
        int(r.turnsOmittedAtEnd),
        int(r.prefixChanges),
        `${int(r.pairs - r.prefixChanges)} of ${int(r.pairs)} (${percent(r.pairs - r.prefixChanges, r.pairs)})`,
        int(r.meanContextTokens),
        `${r.seconds.toFixed(1)} s`
      ]),
      [
        "calls: summarizer skill calls; input/stored tok: summarizer input tokens per token stored",
        "omitted: turns neither shown nor summarized (sum over all turns, turns where any was, value at the end)",
        "prefix changes: consecutive contexts whose rendered prompt is not the previous one with messages " +
        "appended (isAppendOnly)",
        ...rows.map((r) =>
          `  ${r.policy}: ${int(r.prefixChangesAtFold)} of the changes at a fold, ` +
          `${int(r.prefixChanges - r.prefixChangesAtFold)} without; context tokens max ${int(r.maxContextTokens)} ` +
          `of ${int(budget)}`
        )
      ]
    )
    return { method, turns, budget, kRawTurns: defaults.kRawTurns, threshold, rows }
  })
