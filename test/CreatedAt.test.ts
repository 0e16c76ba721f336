/**
 * Time from the caller: `createdAt` decoded and refused as every input is, the time of the write
 * for a message without one, and the dates of a conversation said on several days in its context
 * (the recalled turns' labels, the recent user messages), counted in its tokens. Within one day the
 * labels show times only.
 */
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Schema, TestClock } from "effect"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as Transcript from "../src/cli/Transcript.js"
import { recentLabel } from "../src/domain/internal/contextText.js"
import { MessageOverhead } from "../src/domain/internal/messageLimits.js"
import { recalledText } from "../src/domain/internal/recall.js"
import { type MemoryContext } from "../src/domain/MemoryContext.js"
import { MessageInput } from "../src/domain/Message.js"
import * as ContextPrompt from "../src/layers/ai/ContextPrompt.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { TokenCounter } from "../src/services/TokenCounter.js"
import type { SummarizationOptions } from "../src/strategies/internal/options.js"
import { summarizingMemory } from "./fixtures/layers.js"

const fixture = fileURLToPath(new URL("fixtures/dated.jsonl", import.meta.url))
const dated = readFileSync(fixture, "utf8")
/** The same conversation said within one day: every date of the fixture moved to its first. */
const oneDay = dated.replace(/2026-03-1[56]T/g, "2026-03-14T")

/** The clock of the tests that add the fixture: after it, as when a history is imported. */
const importTime = Date.parse("2026-11-25T12:00:00Z")

const decode = Schema.decodeUnknownEither(MessageInput)
const reason = (input: unknown): string | undefined => {
  const decoded = decode(input, { errors: "first", onExcessProperty: "error" })
  return decoded._tag === "Left" ? decoded.left.message : undefined
}

describe("MessageInput.createdAt", () => {
  it("takes an ISO 8601 date and time with a zone, to the millisecond, as a DateTime.Utc", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["2026-03-14T09:12:00Z", "2026-03-14T09:12:00.000Z"],
      ["2026-03-14T09:12Z", "2026-03-14T09:12:00.000Z"],
      ["2026-03-14T09:12:00.5Z", "2026-03-14T09:12:00.500Z"],
      ["2026-03-14T10:12:00.123456+01:00", "2026-03-14T09:12:00.123Z"],
      ["2024-02-29T23:59:59-05:30", "2024-03-01T05:29:59.000Z"],
      ["1000-01-01T00:00:00Z", "1000-01-01T00:00:00.000Z"]
    ]
    for (const [given, stored] of cases) {
      const decoded = decode({ role: "user", content: "hi", createdAt: given })
      assert.strictEqual(decoded._tag, "Right", given)
      if (decoded._tag === "Right") {
        assert.isTrue(decoded.right.createdAt !== undefined && DateTime.isUtc(decoded.right.createdAt))
        assert.strictEqual(decoded.right.createdAt && DateTime.formatIso(decoded.right.createdAt), stored)
      }
    }
  })

  it("refuses anything else, naming the field", () => {
    const refused: ReadonlyArray<unknown> = [
      "2026-03-14",
      "2026-03-14T09:12:00",
      "2026-03-14 09:12:00Z",
      "2026-03-14t09:12:00z",
      "March 14, 2026",
      "1773479520000",
      "2026-02-30T00:00:00Z",
      "2025-02-29T00:00:00Z",
      "2026-03-14T24:00:00Z",
      "2026-03-14T09:60:00Z",
      "2026-03-14T09:12:60Z",
      "2026-03-14T09:12:00+24:00",
      "0999-12-31T23:59:59Z",
      "1000-01-01T00:30:00+01:00",
      "",
      1773479520000,
      null
    ]
    for (const createdAt of refused) {
      const message = reason({ role: "user", content: "hi", createdAt })
      assert.isDefined(message, String(createdAt))
      assert.include(message, "[\"createdAt\"]", String(createdAt))
    }
  })

  it.effect("addMessages refuses a time more than 5 minutes ahead of the write, and stores nothing", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-03-14T09:00:00Z"))
      const memory = yield* ChatMemoryService
      const error = yield* Effect.flip(memory.addMessages("ahead", [
        { role: "user", content: "now", createdAt: "2026-03-14T09:04:59Z" },
        { role: "assistant", content: "later", createdAt: "2026-03-14T09:05:01Z" }
      ]))
      assert.strictEqual(error._tag, "DataValidationError")
      if (error._tag === "DataValidationError") {
        assert.strictEqual(error.path, "messages[1].createdAt")
        assert.include(error.reason, "must not be later than the time of the write")
      }
      assert.strictEqual((yield* Effect.flip(memory.getMessages("ahead")))._tag, "ConversationNotFoundError")
      const added = yield* memory.addMessages("ahead", [{
        role: "user",
        content: "now",
        createdAt: "2026-03-14T09:04:59Z"
      }])
      assert.strictEqual(added.length, 1)
    }).pipe(Effect.provide(summarizingMemory())))

  it.effect("an @effect/ai prompt message carries no time: it keeps the write's", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-03-14T09:00:00Z"))
      const memory = yield* ChatMemoryService
      const error = yield* Effect.flip(memory.addMessages("ai", [
        { role: "user", content: [{ type: "text", text: "hi" }], createdAt: "2026-03-14T08:00:00Z" }
      ]))
      assert.strictEqual(error._tag === "DataValidationError" && error.path, "messages[0].createdAt")
      const [added] = yield* memory.addMessages("ai", [{ role: "user", content: [{ type: "text", text: "hi" }] }])
      assert.strictEqual(added && DateTime.formatIso(added.createdAt), "2026-03-14T09:00:00.000Z")
    }).pipe(Effect.provide(summarizingMemory())))
})

// The `stable` view leaves the room of the summarized turns free, which the recalled block takes.
const options = {
  kRawTurns: 2,
  tokenBudget: 600,
  summaryTokenCap: 80,
  view: "stable",
  retries: 0
} satisfies Partial<SummarizationOptions>

/** Replays a transcript's text turn by turn, as `replay` does, and asks for a context with `query`. */
const replay = (text: string, query: string) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(importTime)
    const memory = yield* ChatMemoryService
    for (const turn of Transcript.turnsOf(yield* Transcript.parse("dated.jsonl", text))) {
      yield* memory.addMessages("bikes", turn.map(Transcript.toInput))
      yield* memory.awaitIdle("bikes")
    }
    return yield* memory.getContext("bikes", { query })
  })

/** Every text of a context's prompt, in order. */
const promptText = (context: MemoryContext): string =>
  ContextPrompt.toPromptMessages(context).map((message) =>
    typeof message.content === "string"
      ? message.content
      : message.content.map((part) => (part.type === "text" ? part.text : "")).join(" ")
  ).join("\n")

/**
 * The tokens of a context's prompt as sent: each message's text parts counted one by one, plus
 * `MessageOverhead` per message (the fixture holds no tool calls).
 */
const sentTokens = (context: MemoryContext) =>
  Effect.gen(function*() {
    const counter = yield* TokenCounter
    let tokens = 0
    for (const message of ContextPrompt.toPromptMessages(context)) {
      const texts = typeof message.content === "string"
        ? [message.content]
        : message.content.map((part) => (part.type === "text" ? part.text : ""))
      tokens += MessageOverhead
      for (const text of texts) tokens += yield* counter.count(text)
    }
    return tokens
  })

const query = "Which extras were added, the mudguards and the rear rack?"

describe("the dates of a conversation in its context", () => {
  it.effect("a history said on several days shows its dates: recalled labels, recent user messages", () =>
    Effect.gen(function*() {
      const context = yield* replay(dated, query)
      assert.isTrue(context.dated)
      const recalled = context.recalled.find((turn) => turn.fromSeq === 4)
      assert.deepStrictEqual([recalled?.fromSeq, recalled?.toSeq], [4, 5])
      // The caller's times, not the import's.
      const text = promptText(context)
      assert.include(text, "[seq 4-5, 2026-03-14 09:20 UTC]")
      assert.include(recalledText(context.recalled, { dated: true }), "[seq 4-5, 2026-03-14 09:20 UTC]")
      assert.include(text, "[2026-03-16 17:58 UTC] Thanks. Could you also send the invoice by email?")
      assert.notInclude(text, "2026-11-25")
      // Each recent user message is labelled, no other message.
      const prompt = ContextPrompt.toPromptMessages(context)
      for (const [i, message] of context.recent.entries()) {
        const rendered = prompt.find((m) =>
          typeof m.content !== "string" &&
          m.content.some((part) => part.type === "text" && part.text === message.content)
        )
        const parts = rendered === undefined || typeof rendered.content === "string" ? [] : rendered.content
        assert.strictEqual(parts.length, message.role === "user" ? 2 : 1, `recent[${i}]`)
      }
      // Counted: what is sent, labels included, is within the context's count, and that within the budget.
      assert.isAtMost(yield* sentTokens(context), context.tokenCount)
      assert.isAtMost(context.tokenCount, options.tokenBudget)
      const counter = yield* TokenCounter
      let labels = 0
      for (const message of context.recent) {
        if (message.role === "user") labels += yield* counter.count(recentLabel(message))
      }
      const stored = [...context.system, ...context.recent].reduce((n, m) => n + m.tokenCount, 0)
      assert.isAtLeast(context.tokenCount - context.recalledTokens, stored + labels)
    }).pipe(Effect.provide(summarizingMemory(options))))

  it.effect("within one day, the labels show times only and recent messages are not labelled", () =>
    Effect.gen(function*() {
      const context = yield* replay(oneDay, query)
      assert.isFalse(context.dated)
      const recalled = context.recalled.find((turn) => turn.fromSeq === 4)
      assert.deepStrictEqual([recalled?.fromSeq, recalled?.toSeq], [4, 5])
      const text = promptText(context)
      assert.include(text, "[seq 4-5, 09:20 UTC]")
      assert.notMatch(text, /\d{4}-\d{2}-\d{2}/)
      assert.isAtMost(context.tokenCount, options.tokenBudget)
    }).pipe(Effect.provide(summarizingMemory(options))))

  it.effect("the labels' tokens keep a dated context within its budget, at every budget", () =>
    Effect.gen(function*() {
      for (const view of ["full", "stable"] as const) {
        for (const tokenBudget of [150, 250, 400, 500, 600, 800]) {
          const at = `${view} view, budget ${tokenBudget}`
          const context = yield* replay(dated, query).pipe(
            Effect.provide(summarizingMemory({ ...options, view, tokenBudget, summaryTokenCap: tokenBudget / 5 }))
          )
          assert.isTrue(context.dated, at)
          assert.isAtMost(context.tokenCount, tokenBudget, at)
          // What is counted covers what is sent.
          assert.isAtMost(yield* sentTokens(context), context.tokenCount, at)
        }
      }
    }).pipe(Effect.provide(summarizingMemory(options))))
  it.effect("a dated conversation of short turns omits nothing: the summarizer's watermarks count the labels", () =>
    Effect.gen(function*() {
      for (const view of ["full", "stable"] as const) {
        for (const tokenBudget of [200, 400]) {
          const at = `${view} view, budget ${tokenBudget}`
          yield* Effect.gen(function*() {
            yield* TestClock.setTime(importTime)
            const memory = yield* ChatMemoryService
            for (let i = 0; i < 90; i++) {
              // 30 turns a day, on three days: labels add a third to turns this short.
              const createdAt = `2026-03-0${1 + Math.floor(i / 30)}T10:${String(i % 30).padStart(2, "0")}:00Z`
              yield* memory.addMessages("short", [
                { role: "user", content: `ok ${i}`, createdAt },
                { role: "assistant", content: `sure ${i}`, createdAt }
              ])
              yield* memory.awaitIdle("short")
              const context = yield* memory.getContext("short", i % 10 === 9 ? { query: "ok 3" } : undefined)
              assert.strictEqual(context.turnsOmitted, 0, `${at}, turn ${i + 1}`)
              assert.isAtMost(context.tokenCount, tokenBudget, `${at}, turn ${i + 1}`)
              assert.strictEqual(context.dated, i >= 30, `${at}, turn ${i + 1}`)
            }
          }).pipe(
            Effect.provide(summarizingMemory({ kRawTurns: 2, tokenBudget, summaryTokenCap: 40, view, retries: 0 }))
          )
        }
      }
    }))
})
