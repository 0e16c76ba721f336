/**
 * Proof that each message is tokenized once: the token counter wrapped in a layer that records
 * every text it is asked to count, then a conversation run through `addMessages`, `getContext`
 * and background summarization. Every stored message's content must have been counted exactly
 * once; the other texts counted (the summary as the memory shows it) are reported apart.
 */
import { Effect, Layer, MutableHashMap, Option } from "effect"
import type { Message } from "../src/domain/Message.js"
import { defaultSummary } from "../src/layers/skills/internal/scripted.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService, MaxPageSize } from "../src/services/ChatMemoryService.js"
import type { SkillService } from "../src/services/SkillService.js"
import * as TokenCounter from "../src/services/TokenCounter.js"
import { hierarchicalMemory, scaled, type Settings, summarizingMemory } from "./setup.js"
import { int, printTable } from "./stats.js"
import { generatedTurn } from "./texts.js"

/** What the counting layer saw. */
interface CountLog {
  /** How many times each text was passed to `count`. */
  readonly counts: MutableHashMap.MutableHashMap<string, number>
  calls: number
  truncates: number
  /** When set, every text counted is also appended here. */
  probe: Array<string> | null
}

/** Wraps `inner` so that every `count` and `truncate` call is recorded in `log`. */
const counting = (inner: TokenCounter.TokenCounter.Service, log: CountLog): TokenCounter.TokenCounter.Service =>
  TokenCounter.make({
    name: inner.name,
    count: (text) =>
      Effect.suspend(() => {
        log.calls += 1
        log.probe?.push(text)
        MutableHashMap.set(log.counts, text, Option.getOrElse(MutableHashMap.get(log.counts, text), () => 0) + 1)
        return inner.count(text)
      }),
    truncate: (text, maxTokens) =>
      Effect.suspend(() => {
        log.truncates += 1
        return inner.truncate(text, maxTokens)
      })
  })

/** Every stored message, oldest first, page by page. */
const allMessages = (id: string) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const pages: Array<ReadonlyArray<Message>> = []
    let before: number | undefined = undefined
    while (true) {
      const page: ReadonlyArray<Message> = yield* memory.getMessages(id, { limit: MaxPageSize, before })
      const first = page[0]
      if (first === undefined) break
      pages.unshift(page)
      before = first.seq
      if (page.length < MaxPageSize) break
    }
    return pages.flat()
  })

/** The scripted fact extraction: keeps the facts it was given and sets one of five keys each call. */
const extractFacts = (input: SkillService.ExtractFactsInput, call: number) =>
  Effect.succeed({
    facts: [
      ...input.existingFacts.filter((fact) => fact.key !== `fact_${call % 5}`),
      { key: `fact_${call % 5}`, value: `value set by call ${call}`, category: "STATE" as const }
    ],
    narrative: defaultSummary(input)
  })

const proof = (mode: "incremental" | "full" | "hierarchical", turns: number) => {
  const log: CountLog = { counts: MutableHashMap.empty(), calls: 0, truncates: 0, probe: null }
  const counter = Layer.succeed(TokenCounter.TokenCounter, counting(ApproximateTokenCounter.make, log))
  return Effect.provide(
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const id = `tokenized-once-${mode}`
      for (let i = 0; i < turns; i++) {
        yield* memory.addMessages(id, generatedTurn(i))
        yield* memory.getContext(id)
        yield* memory.awaitIdle(id)
      }
      const stats = yield* memory.stats(id)
      const messages = yield* allMessages(id)
      const perMessage = messages.map((m) => Option.getOrElse(MutableHashMap.get(log.counts, m.content), () => 0))
      const messageCalls = perMessage.reduce((n, c) => n + c, 0)
      const notOnce = messages.filter((_, k) => perMessage[k] !== 1).map((m) => m.seq)
      // A message counted again inside a larger text (a prompt, a summary input) would show here.
      const contents = new Set(messages.map((m) => m.content))
      const others = Array.from(MutableHashMap.keys(log.counts)).filter((text) => !contents.has(text))
      const othersWithAMessage = others.filter((text) => messages.some((m) => text.includes(m.content))).length
      const callsBefore = log.calls
      const probes = 100
      const probed: Array<string> = []
      log.probe = probed
      for (let i = 0; i < probes; i++) yield* memory.getContext(id)
      log.probe = null
      const probeCalls = log.calls - callsBefore
      const context = yield* memory.getContext(id)
      return {
        mode,
        turns,
        messagesStored: messages.length,
        summarizations: stats.summarizations,
        messageCountCalls: messageCalls,
        countCallsPerMessage: { min: Math.min(...perMessage), max: Math.max(...perMessage) },
        messagesNotCountedOnce: notOnce,
        otherCountCalls: callsBefore - messageCalls,
        otherTextsCounted: others.length,
        otherTextsContainingAMessage: othersWithAMessage,
        largestOtherText: Math.max(0, ...others.map((text) => text.length)),
        truncateCalls: log.truncates,
        countCallsPerGetContext: probeCalls / probes,
        distinctTextsCountedByGetContext: new Set(probed).size,
        charactersCountedPerGetContext: probed.reduce((n, t) => n + t.length, 0) / probes,
        summaryCharacters: context.summary?.length ?? 0
      }
    }),
    mode === "hierarchical"
      ? hierarchicalMemory(MemoryStore.layer, counter, { extractFacts })
      : summarizingMemory(MemoryStore.layer, { mode }, counter)
  )
}

/** Runs the proof in both summarization modes, prints it, and returns its JSON. */
export const tokenizedOnceBench = (settings: Settings) =>
  Effect.gen(function*() {
    const turns = scaled(settings, 300, 80)
    const rows = [
      yield* proof("incremental", turns),
      yield* proof("full", turns),
      yield* proof("hierarchical", turns)
    ]
    const method = `a counting TokenCounter layer records every text counted; ${turns} generated turns, each ` +
      "addMessages + getContext + awaitIdle (summarizing strategies with the scripted skill; hierarchical extracts facts); then every stored message's " +
      "content is looked up in the record, and 100 more getContext calls are counted"
    const ok = rows.every((r) => r.messagesNotCountedOnce.length === 0 && r.otherTextsContainingAMessage === 0)
    yield* printTable(
      "Each message is tokenized once",
      method,
      [
        "mode",
        "messages",
        "summaries",
        "count calls",
        "per message",
        "not once",
        "inside other texts",
        "other calls",
        "per getContext"
      ],
      rows.map((r) => [
        r.mode,
        int(r.messagesStored),
        int(r.summarizations),
        int(r.messageCountCalls),
        r.countCallsPerMessage.min === r.countCallsPerMessage.max
          ? `${r.countCallsPerMessage.min}`
          : `${r.countCallsPerMessage.min}..${r.countCallsPerMessage.max}`,
        int(r.messagesNotCountedOnce.length),
        int(r.otherTextsContainingAMessage),
        int(r.otherCountCalls),
        r.countCallsPerGetContext.toFixed(1)
      ]),
      [
        ok
          ? "every stored message was counted exactly once (when it was added), and no other text counted " +
            "contained one"
          : `FAILED: messages counted other than once (by seq), or other texts holding a message: ${
            rows.map((r) =>
              `${r.mode}: ${r.messagesNotCountedOnce.slice(0, 20).join(", ")} (${r.otherTextsContainingAMessage})`
            ).join("; ")
          }`,
        "other calls: texts the memory adds (the summary, and facts, as system messages), counted when contexts are " +
        "built and summaries committed",
        ...rows.map((r) =>
          `${r.mode}: each getContext counted ${r.countCallsPerGetContext.toFixed(1)} texts ` +
          `(${r.distinctTextsCountedByGetContext} distinct over 100 calls, ` +
          `${int(r.charactersCountedPerGetContext)} characters; summary ${int(r.summaryCharacters)} characters)`
        )
      ]
    )
    return { method, everyMessageCountedOnce: ok, rows }
  })
