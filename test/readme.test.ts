/**
 * The README's wiring examples, kept compiling (the typecheck covers tests) and, where they need
 * no server or key, running.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import {
  ApproximateTokenCounter,
  ChatMemory,
  ChatMemoryConfig,
  ContextPrompt,
  MemoryStore,
  NoopStrategy,
  OpenAiSkill,
  PgStore,
  ScriptedSkill,
  SummarizationStrategy
} from "../src/index.js"
// The exact counter loads gpt-tokenizer: a module of its own, not re-exported by the root.
import { readFileSync } from "node:fs"
import * as ExactTokenCounter from "../src/layers/tokens/ExactTokenCounter.js"

const turn = Effect.gen(function*() {
  const memory = yield* ChatMemory.ChatMemoryService
  yield* memory.addMessages("order-4711", [
    { role: "user", content: "Ship order A-1001 to Lyon, not Paris." }
  ])
  const context = yield* memory.getContext("order-4711")
  return ContextPrompt.toPrompt(context)
})
/** Built lazily: a layer value connects nothing until provided. */
export const MemoryLive = ChatMemory.layerLive({
  strategy: "hierarchical",
  store: { _tag: "postgres", url: Redacted.make(process.env.DATABASE_URL ?? "") },
  summarizer: { _tag: "openai", model: "gpt-4o-mini", apiKey: Redacted.make("sk-...") },
  tokenizer: "exact",
  tokenBudget: 3000,
  kRawTurns: 3
})
export const MemoryLive2 = ChatMemory.layer.pipe(
  Layer.provideMerge(SummarizationStrategy.layer({ tokenBudget: 4000, kRawTurns: 4, mode: "incremental" })),
  Layer.provideMerge(OpenAiSkill.layerConfig(ChatMemoryConfig.openAi)),
  Layer.provideMerge(PgStore.layerConfig(ChatMemoryConfig.postgres)),
  Layer.provideMerge(ExactTokenCounter.layer)
)
export const WholeHistory = ChatMemory.layer.pipe(
  Layer.provideMerge(NoopStrategy.layer),
  Layer.provideMerge(MemoryStore.layer),
  Layer.provideMerge(ApproximateTokenCounter.layer)
)
describe("README examples", () => {
  it.effect("the environment-driven layer answers a turn (offline defaults: PGlite, extractive skill)", () =>
    Effect.gen(function*() {
      const prompt = yield* turn
      expect(prompt.content.map((message) => message.role)).toEqual(["user"])
    }).pipe(Effect.provide(ChatMemory.layerConfig()), Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))))

  it.effect("settings per call and per conversation", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemory.ChatMemoryService
      yield* memory.setSettings("order-4711", { tokenBudget: 8000, kRawTurns: 5, view: "stable" })
      const settings = yield* memory.getSettings("order-4711")
      expect([settings.tokenBudget, settings.kRawTurns, settings.view]).toEqual([8000, 5, "stable"])
      yield* memory.addMessages("order-4711", [{ role: "user", content: "Ship order A-1001 to Lyon, not Paris." }])
      const small = yield* memory.getContext("order-4711", { tokenBudget: 1500 })
      expect([small.tokenBudget, (yield* memory.getContext("order-4711")).tokenBudget]).toEqual([1500, 8000])
    }).pipe(Effect.provide(ChatMemory.layerTest())))

  it.effect("swapping in NoopStrategy shows the whole history", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemory.ChatMemoryService
      for (let i = 0; i < 50; i++) {
        yield* memory.addMessages("c", [{ role: "user", content: `message ${i} `.repeat(50) }])
      }
      const context = yield* memory.getContext("c")
      expect(context.recent.length).toBe(50)
    }).pipe(Effect.provide(WholeHistory)))

  it.effect("summarizes once the threshold is crossed", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemory.ChatMemoryService
      for (let i = 0; i < 20; i++) {
        yield* memory.addMessages("c1", [
          { role: "user", content: `question ${i} about order A-1001` },
          { role: "assistant", content: "an answer ".repeat(40) }
        ])
      }
      yield* memory.awaitIdle("c1")
      const calls = yield* (yield* ScriptedSkill.ScriptedSkill).calls
      expect(calls.length).toBeGreaterThan(0)
    }).pipe(Effect.provide(ChatMemory.layerTest({
      chunkSummarizeThreshold: 500,
      script: { summarize: () => Effect.succeed("The user asks about order A-1001.") }
    }))))

  it("the configuration table is ChatMemoryConfig.variables, row for row", () => {
    const readme = readFileSync(new URL("../docs/configuration.md", import.meta.url), "utf8")
    const rows = Object.values(ChatMemoryConfig.variables).map((variable) =>
      `| \`${variable.name}\` | ${variable.default} | ${variable.meaning} |`
    )
    expect(readme).toContain(["| Variable | Default | Meaning |", "| --- | --- | --- |", ...rows].join("\n") + "\n\n")
  })
})
