/**
 * What the summarizer costs on a long generated conversation, in `incremental` and `full` modes,
 * at N and 2N turns: skill calls, input and output tokens, tokens read per conversation token, and
 * how each grows when the conversation doubles. The skill is the scripted one (answers at once,
 * reports usage as characters / 4), so the figures are the memory's own: what it sends and asks.
 */
import { Effect } from "effect"
import { ScriptedSkill } from "../src/layers/skills/ScriptedSkill.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { defaults } from "../src/strategies/internal/options.js"
import { budget, scaled, type Settings, summarizingMemory } from "./setup.js"
import { fixed, int, printTable, ratio, timed, times } from "./stats.js"
import { generatedTurn } from "./texts.js"

interface Row {
  readonly mode: "incremental" | "full"
  readonly turns: number
  readonly conversationTokens: number
  readonly runs: number
  readonly calls: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly tokensReadPerConversationToken: number
  readonly contextTokens: number
  readonly seconds: number
}

const conversation = (mode: "incremental" | "full", turns: number) =>
  Effect.provide(
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const skill = yield* ScriptedSkill
      const id = `summarizer-${mode}-${turns}`
      const [elapsed] = yield* timed(Effect.gen(function*() {
        for (let i = 0; i < turns; i++) {
          yield* memory.addMessages(id, generatedTurn(i))
          yield* memory.getContext(id)
          yield* memory.awaitIdle(id)
        }
      }))
      const stats = yield* memory.stats(id)
      const calls = yield* skill.calls
      const row: Row = {
        mode,
        turns,
        conversationTokens: stats.tokensStored,
        runs: stats.summarizations,
        calls: calls.length,
        inputTokens: stats.summarizerInputTokens,
        outputTokens: stats.summarizerOutputTokens,
        tokensReadPerConversationToken: ratio(stats.summarizerInputTokens, stats.tokensStored),
        contextTokens: stats.contextTokens,
        seconds: elapsed / 1000
      }
      return row
    }),
    summarizingMemory(MemoryStore.layer, { mode })
  )

type GrowthKey = "calls" | "inputTokens" | "outputTokens" | "tokensReadPerConversationToken"

/** Runs the summarizer-cost benchmark, prints it, and returns its JSON. */
export const summarizerBench = (settings: Settings) =>
  Effect.gen(function*() {
    const n = scaled(settings, 400, 60)
    const rows: Array<Row> = []
    for (const mode of ["incremental", "full"] as const) {
      for (const turns of [n, 2 * n]) rows.push(yield* conversation(mode, turns))
    }
    const growth = (["incremental", "full"] as const).map((mode) => {
      const small = rows.find((r) => r.mode === mode && r.turns === n)
      const large = rows.find((r) => r.mode === mode && r.turns === 2 * n)
      const grown = (key: GrowthKey) => ratio(large?.[key], small?.[key])
      return {
        mode,
        calls: grown("calls"),
        inputTokens: grown("inputTokens"),
        outputTokens: grown("outputTokens"),
        tokensReadPerConversationToken: grown("tokensReadPerConversationToken")
      }
    })
    const method = `one conversation per row, generated turns (user 15-60 words, answer 30-180), each added ` +
      `with addMessages then getContext and awaitIdle; summarization defaults (budget ${budget}, threshold ` +
      `${defaults.chunkSummarizeThreshold}, cap ${defaults.summaryTokenCap}, input limit ` +
      `${defaults.summarizerInputLimit}, kRawTurns ${defaults.kRawTurns}); scripted skill, usage = characters / 4; ` +
      "in-memory store (the counts do not depend on the store); counts are exact, one run per row"
    yield* printTable(
      "Summarizer cost on a long conversation",
      method,
      ["mode", "turns", "conv. tokens", "runs", "calls", "input tok", "output tok", "read/conv tok", "time"],
      rows.map((r) => [
        r.mode,
        int(r.turns),
        int(r.conversationTokens),
        int(r.runs),
        int(r.calls),
        int(r.inputTokens),
        int(r.outputTokens),
        fixed(r.tokensReadPerConversationToken, 2),
        `${r.seconds.toFixed(1)} s`
      ]),
      [
        `growth when the conversation doubles (${int(2 * n)} / ${int(n)} turns):`,
        ...growth.map((g) =>
          `  ${g.mode.padEnd(11)} calls ${times(g.calls)}, input ${times(g.inputTokens)}, output ` +
          `${times(g.outputTokens)}, read/conv tok ${times(g.tokensReadPerConversationToken)}`
        ),
        "runs: summaries committed; calls: skill calls (full mode cuts input above the limit into several calls)"
      ]
    )
    return { method, turns: { n, twoN: 2 * n }, rows, growthWhenDoubled: growth }
  })
