/**
 * Token counting, approximate (characters / 4) against exact (o200k): the cost of counting a
 * megabyte of chat messages, the tokens each finds, and what the exact counter costs
 * `addMessages` (the only hot path that counts message text) and `getContext` on a summarized
 * conversation. The two counters are timed in alternation, round after round, so that their
 * ratios hold on a noisy machine. Then the exact counter on pathological text (no whitespace,
 * one repeated character, random base64) at 10 KB, 100 KB and 1 MB: its time per KB must not
 * grow with the length, where plain gpt-tokenizer's grows with it.
 */
import { Context, Effect, Layer } from "effect"
import { clearMergeCache, encode } from "gpt-tokenizer/encoding/o200k_base"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import * as ExactTokenCounter from "../src/layers/tokens/ExactTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { TokenCounter } from "../src/services/TokenCounter.js"
import { scaled, type Settings, slidingMemory, summarizingMemory } from "./setup.js"
import { type Figure, fixed, int, interleaved, ms, printTable, ratio, timed, times } from "./stats.js"
import { corpus, generatedTurn, utf8Bytes } from "./texts.js"

const approximate = ApproximateTokenCounter.make
const exact = ExactTokenCounter.make

const countAll = (counter: TokenCounter.Service, messages: ReadonlyArray<string>) =>
  Effect.reduce(messages, 0, (n, content) => Effect.map(counter.countMessage({ content }), (t) => n + t))

const timeOf = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.map(timed(effect), ([t]) => t)

/** One memory per counter (approximate, exact), alive together for `use`. */
const withMemories = <A, E, R, E2>(
  memory: (counter: Layer.Layer<TokenCounter>) => Layer.Layer<ChatMemoryService, E2>,
  use: (memories: readonly [ChatMemoryService.Service, ChatMemoryService.Service]) => Effect.Effect<A, E, R>
) =>
  Effect.scoped(Effect.gen(function*() {
    const build = (counter: TokenCounter.Service) =>
      Effect.map(
        Layer.build(memory(Layer.succeed(TokenCounter, counter))),
        (ctx) => Context.get(ctx, ChatMemoryService)
      )
    return yield* use([yield* build(approximate), yield* build(exact)])
  }))

/** Batches of 100 corpus messages added by each memory in turn. */
const addMessages = (messages: ReadonlyArray<string>, warmup: number, runs: number) =>
  withMemories(
    (counter) => slidingMemory(MemoryStore.layer, counter),
    (memories) => {
      const page = (i: number) =>
        Array.from({ length: 100 }, (_, k) => ({
          role: k % 2 === 0 ? "user" as const : "assistant" as const,
          content: messages[(i * 100 + k) % messages.length] ?? ""
        }))
      return interleaved(
        warmup,
        runs,
        memories.map((memory) => (i: number) => timeOf(memory.addMessages("t", page(i))))
      )
    }
  )

/** A conversation of 300 generated turns summarized as they came, in each memory; then `getContext` on each in turn. */
const summarizedContext = (warmup: number, runs: number) =>
  withMemories(
    (counter) => summarizingMemory(MemoryStore.layer, { mode: "incremental" }, counter),
    (memories) =>
      Effect.gen(function*() {
        for (const memory of memories) {
          for (let i = 0; i < 300; i++) {
            yield* memory.addMessages("summarized", generatedTurn(i))
            yield* memory.awaitIdle("summarized")
          }
        }
        const summaries = yield* Effect.forEach(
          memories,
          (memory) => Effect.map(memory.getContext("summarized"), (context) => context.summary?.length ?? 0)
        )
        const figures = yield* interleaved(
          warmup,
          runs,
          memories.map((memory) => () => timeOf(memory.getContext("summarized")))
        )
        return figures.map((figure, k) => ({ ...figure, summaryCharacters: summaries[k] ?? 0 }))
      })
  )

interface Row {
  readonly counter: string
  /** Time to count the corpus message by message (countMessage). */
  readonly corpus: Figure
  readonly msPerMB: number
  /** The same with the tokenizer's word cache emptied before each run (exact counter only). */
  readonly corpusColdCache: Figure | null
  readonly msPerMBColdCache: number
  readonly tokens: number
  readonly tokensPerMB: number
  /** addMessages of 100 corpus messages, in-memory store. */
  readonly addMessagesBatch100: Figure | undefined
  readonly addMessagesPerSecond: number
  /** getContext on a summarized conversation (summarization strategy, in-memory store). */
  readonly getContextSummarized: (Figure & { readonly summaryCharacters: number }) | undefined
}

/** `n` pseudo-random integers below 256 (a fixed 32-bit linear congruential generator). */
const randomBytes = (n: number, seed: number): Uint8Array => {
  const bytes = new Uint8Array(n)
  let state = seed >>> 0
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0
    bytes[i] = state >>> 24
  }
  return bytes
}

/** The pathological texts: no split point for the pre-tokenizer, or none but the ones base64 has. */
const pathologicalTexts: ReadonlyArray<readonly [name: string, make: (n: number) => string]> = [
  [
    "no whitespace (random a-z)",
    (n) => Array.from(randomBytes(n, 1), (b) => String.fromCharCode(97 + (b % 26))).join("")
  ],
  ["one repeated character", (n) => "a".repeat(n)],
  ["random base64", (n) => Buffer.from(randomBytes(n, 2)).toString("base64").slice(0, n)]
]

/** Lengths counted, in characters (one byte each in these texts); KB = 1,000 bytes. */
const pathologicalSizes = [10_000, 100_000, 1_000_000] as const

interface PathologicalRow {
  readonly text: string
  /** One figure per size: milliseconds to count 1 MB as texts of that size (1 MB / size counts per run). */
  readonly bySize: ReadonlyArray<Figure & { readonly bytes: number; readonly msPerKB: number }>
  /** Time per KB at 1 MB over time per KB at 10 KB: 1 for linear time, 100 for quadratic. */
  readonly perKB1MBOver10KB: number
  readonly tokensPerKB: number
  /** Plain gpt-tokenizer `encode` (the counter before), at 10 KB and 20 KB only: it is quadratic. */
  readonly plainMsPerKB10KB: number
  readonly plainMsPerKB20KB: number
  readonly plainPerKB20KBOver10KB: number
  readonly speedupAt10KB: number
}

/**
 * The exact counter on pathological text. Every run counts one megabyte: a 10 KB text 100 times,
 * a 100 KB text 10 times, a 1 MB text once, each time with gpt-tokenizer's merge cache emptied
 * (a text never seen before); the three sizes alternate round after round.
 */
const pathologicalBench = (settings: Settings) =>
  Effect.gen(function*() {
    const runs = scaled(settings, 7, 3)
    const warmup = 1
    const countCold = (count: (text: string) => Effect.Effect<unknown>, text: string, bytes: number) =>
      Effect.gen(function*() {
        let elapsed = 0
        for (let k = 0; k < bytes / text.length; k++) {
          clearMergeCache()
          elapsed += yield* timeOf(count(text))
        }
        return elapsed
      })
    const plain = (text: string) => Effect.sync(() => encode(text))
    const rows: Array<PathologicalRow> = []
    for (const [name, make] of pathologicalTexts) {
      const texts = pathologicalSizes.map((n) => make(n))
      const plainTexts = [make(10_000), make(20_000)]
      // Every body counts 1 MB (the plain ones 100 KB), so that each round weighs them alike.
      const figures = yield* interleaved(warmup, runs, [
        ...texts.map((text) => () => countCold(exact.count, text, 1_000_000)),
        ...plainTexts.map((text) => () => countCold(plain, text, 100_000))
      ])
      const tokens = yield* exact.count(texts[2] ?? "")
      const bySize = pathologicalSizes.map((bytes, k) => {
        const figure = figures[k]
        return {
          median: figure?.median ?? Number.NaN,
          p99: figure?.p99 ?? Number.NaN,
          runs: figure?.runs ?? 0,
          warmup: figure?.warmup ?? 0,
          bytes,
          msPerKB: (figure?.median ?? Number.NaN) / 1000
        }
      })
      const plainMsPerKB10KB = (figures[3]?.median ?? Number.NaN) / 100
      const plainMsPerKB20KB = (figures[4]?.median ?? Number.NaN) / 100
      rows.push({
        text: name,
        bySize,
        perKB1MBOver10KB: ratio(bySize[2]?.msPerKB, bySize[0]?.msPerKB),
        tokensPerKB: tokens / 1000,
        plainMsPerKB10KB,
        plainMsPerKB20KB,
        plainPerKB20KBOver10KB: ratio(plainMsPerKB20KB, plainMsPerKB10KB),
        speedupAt10KB: ratio(plainMsPerKB10KB, bySize[0]?.msPerKB)
      })
    }
    const method = `exact counter (o200k) on texts of 10 KB, 100 KB and 1 MB (KB = 1,000 bytes); a run counts ` +
      "1 MB (10 KB x 100, 100 KB x 10, 1 MB x 1), gpt-tokenizer's merge cache emptied before each count; plain " +
      "gpt-tokenizer encode (the counter before) counts 100 KB (10 KB x 10, 20 KB x 5): it is quadratic, 100 KB " +
      `of one character takes seconds; ${runs} runs after ${warmup} warm-up, all five alternating; medians in ms per KB`
    yield* printTable(
      "Exact token counting on pathological text",
      method,
      [
        "text",
        "runs/warm-up",
        "10 KB",
        "100 KB",
        "1 MB",
        "1 MB / 10 KB",
        "tokens per KB",
        "plain 10 KB",
        "plain 20 KB",
        "plain 20/10"
      ],
      rows.map((r) => [
        r.text,
        `${r.bySize[0]?.runs ?? 0}/${r.bySize[0]?.warmup ?? 0}`,
        fixed(r.bySize[0]?.msPerKB ?? Number.NaN, 3),
        fixed(r.bySize[1]?.msPerKB ?? Number.NaN, 3),
        fixed(r.bySize[2]?.msPerKB ?? Number.NaN, 3),
        times(r.perKB1MBOver10KB),
        int(r.tokensPerKB),
        fixed(r.plainMsPerKB10KB, 3),
        fixed(r.plainMsPerKB20KB, 3),
        times(r.plainPerKB20KBOver10KB)
      ]),
      [
        "goal: time per KB at 1 MB at most 1.5x the time per KB at 10 KB; " +
        `worst here ${times(Math.max(...rows.map((r) => r.perKB1MBOver10KB)))}`,
        `at 10 KB plain gpt-tokenizer takes ${
          rows.map((r) => `${times(r.speedupAt10KB)} the counter's time on ${r.text}`).join(", ")
        }`
      ]
    )
    return { method, sizes: pathologicalSizes, rows }
  })

/** Runs the token-counting benchmark, prints it, and returns its JSON. */
export const tokensBench = (settings: Settings) =>
  Effect.gen(function*() {
    const messages = corpus(1_000_000)
    const bytes = utf8Bytes(messages)
    const megabytes = bytes / 1_000_000
    const corpusRuns = scaled(settings, 7, 3)
    const addRuns = scaled(settings, 60, 10)
    const addWarmup = Math.max(2, Math.round(addRuns / 10))
    const contextRuns = scaled(settings, 300, 30)
    const contextWarmup = Math.max(2, Math.round(contextRuns / 10))

    const tokens = [yield* countAll(approximate, messages), yield* countAll(exact, messages)]
    // gpt-tokenizer keeps a per-word merge cache for the life of the process: time it cold too.
    const [approxCorpus, exactCorpus, exactCold] = yield* interleaved(2, corpusRuns, [
      () => timeOf(countAll(approximate, messages)),
      () => timeOf(countAll(exact, messages)),
      () => Effect.zipRight(Effect.sync(clearMergeCache), timeOf(countAll(exact, messages)))
    ])
    const add = yield* addMessages(messages, addWarmup, addRuns)
    const context = yield* summarizedContext(contextWarmup, contextRuns)

    const perMB = (figure: Figure | undefined) => (figure === undefined ? Number.NaN : figure.median / megabytes)
    const perSecond = (figure: Figure | undefined) => (figure === undefined ? Number.NaN : 100 / (figure.median / 1000))
    const rows: ReadonlyArray<Row> = (
      [["approximate", approxCorpus, null], ["exact (o200k)", exactCorpus, exactCold ?? null]] as const
    ).flatMap(([counter, figure, cold], k) =>
      figure === undefined ? [] : [{
        counter,
        corpus: figure,
        msPerMB: perMB(figure),
        corpusColdCache: cold,
        msPerMBColdCache: cold === null ? Number.NaN : perMB(cold),
        tokens: tokens[k] ?? Number.NaN,
        tokensPerMB: (tokens[k] ?? Number.NaN) / megabytes,
        addMessagesBatch100: add[k],
        addMessagesPerSecond: perSecond(add[k]),
        getContextSummarized: context[k]
      }]
    )
    const [a, e] = rows
    const comparison = {
      exactCostPerMBOverApproximate: ratio(e?.msPerMB, a?.msPerMB),
      exactColdCacheOverWarm: ratio(e?.msPerMBColdCache, e?.msPerMB),
      approximateTokensOverExact: ratio(a?.tokens, e?.tokens),
      addMessagesApproximateOverExact: ratio(a?.addMessagesPerSecond, e?.addMessagesPerSecond),
      getContextSummarizedExactOverApproximate: ratio(e?.getContextSummarized?.median, a?.getContextSummarized?.median)
    }
    const method = `corpus: ${int(messages.length)} chat messages, ${int(bytes)} bytes of UTF-8 (prose, code, JSON, ` +
      `French/Japanese/emoji); countMessage on each, ${corpusRuns} runs after 2 warm-up; addMessages: batches of ` +
      `100 corpus messages into the in-memory store, ${addRuns} calls after ${addWarmup} warm-up; getContext: a ` +
      `conversation of 300 generated turns summarized as they came (incremental), ${contextRuns} calls after ` +
      `${contextWarmup} warm-up; the counters alternate in every round; MB = 10^6 bytes`
    yield* printTable(
      "Token counting: approximate vs exact",
      method,
      [
        "counter",
        "runs/warm-up",
        "median / corpus",
        "ms per MB",
        "cold cache",
        "tokens per MB",
        "addMessages msg/s",
        "getContext (summarized)"
      ],
      rows.map((r) => [
        r.counter,
        `${r.corpus.runs}/${r.corpus.warmup}`,
        ms(r.corpus.median),
        fixed(r.msPerMB, 1),
        fixed(r.msPerMBColdCache, 1),
        int(r.tokensPerMB),
        int(r.addMessagesPerSecond),
        ms(r.getContextSummarized?.median ?? Number.NaN)
      ]),
      [
        `exact costs ${times(comparison.exactCostPerMBOverApproximate)} the approximate per MB ` +
        `(${times(comparison.exactColdCacheOverWarm)} more with its word cache emptied before each run); ` +
        `the approximate count is ${times(comparison.approximateTokensOverExact)} the exact one on this corpus`,
        `addMessages (batch 100, in memory): approximate ${times(comparison.addMessagesApproximateOverExact)} ` +
        "the messages per second of exact",
        `getContext with a summary of ${int(e?.getContextSummarized?.summaryCharacters ?? Number.NaN)} ` +
        `characters: exact takes ${times(comparison.getContextSummarizedExactOverApproximate)} the approximate ` +
        "(the summary and facts are counted once per text, not once per call)"
      ]
    )
    const pathological = yield* pathologicalBench(settings)
    return { method, bytes, messages: messages.length, rows, comparison, pathological }
  })
