/**
 * A conversation said over several days, through the hierarchical strategy and the offline skill:
 * the caller's `createdAt` reaches the summarizer, the summary shown keeps each line under the day
 * it was said on, and the facts and the narrative together keep within their shared room.
 */
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, TestClock } from "effect"
import { factsText, summaryText } from "../src/domain/internal/contextText.js"
import { datePart } from "../src/domain/internal/transcript.js"
import * as ChatMemoryLive from "../src/layers/ChatMemoryLive.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { TokenCounter } from "../src/services/TokenCounter.js"

const topics = ["boiler", "dog", "race", "wedding", "car", "garden"]

/** Turn `i`, said on day `i / 4` (four turns a day) from 2025-01-05. */
const turn = (i: number) => {
  const at = DateTime.unsafeMake(Date.UTC(2025, 0, 5 + Math.floor(i / 4), 18, i % 60))
  const topic = topics[i % topics.length] ?? "boiler"
  return [
    {
      role: "user" as const,
      content: `About the ${topic}: reference REF-${7000 + i} costs £${i + 10}.00, due on March ${1 + (i % 28)}.`,
      createdAt: DateTime.formatIso(at)
    },
    {
      role: "assistant" as const,
      content: `Noted the ${topic} reference REF-${7000 + i}.`,
      createdAt: DateTime.formatIso(at)
    }
  ]
}

describe("a summary of several days", () => {
  it.effect("keeps the day each line was said on, within the room the facts leave", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 0, 1))
      const memory = yield* ChatMemoryService
      const counter = yield* TokenCounter
      for (let i = 0; i < 80; i++) {
        yield* memory.addMessages("days", turn(i))
        yield* memory.awaitIdle("days")
      }
      const context = yield* memory.getContext("days")
      const summary = context.summary ?? ""
      const headings = summary.split("\n").filter((line) => /^\[\d{4}-\d{2}-\d{2}\]$/.test(line))
      assert.isAbove(headings.length, 1, summary)
      // Each heading dates the lines under it: the first of them says a reference of that day.
      for (const heading of headings) {
        const date = heading.slice(1, -1)
        const lines = summary.split(`${heading}\n`)[1]?.split("\n") ?? []
        const ref = /REF-(\d+)/.exec(lines[0] ?? "")?.[1]
        assert.isDefined(ref, `${heading} has no line under it`)
        const said = Math.floor((Number(ref) - 7000) / 4)
        assert.strictEqual(datePart(DateTime.unsafeMake(Date.UTC(2025, 0, 5 + said))), date)
      }
      // The two blocks share the preamble's room (200 + 200 tokens).
      const preamble = (yield* counter.countMessage({ content: summaryText(summary) })) +
        (context.facts.length === 0 ? 0 : yield* counter.countMessage({ content: factsText(context.facts) }))
      assert.isAtMost(preamble, 400)
      assert.isAtMost(context.tokenCount, 1500)
    }).pipe(
      Effect.provide(
        ChatMemoryLive.layer({
          strategy: "hierarchical",
          store: { _tag: "memory" },
          tokenBudget: 1500,
          summaryTokenCap: 200
        })
      )
    ))
})
