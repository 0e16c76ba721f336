/**
 * Token counting, approximate (characters / 4) against exact (o200k): the cost of counting a
 * megabyte of chat messages, the tokens each finds, and what the exact counter costs
 * `addMessages` (the only hot path that counts message text) and `getContext` on a summarized
 * conversation. The two counters are timed in alternation, round after round, so that their
 * ratios hold on a noisy machine.
 */
import { Context, Effect, Layer } from "effect"
import { clearMergeCache } from "gpt-tokenizer/encoding/o200k_base"
import * as MemoryRepository from "../src/layers/store/MemoryRepository.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import * as ExactTokenCounter from "../src/layers/tokens/ExactTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { TokenCounter } from "../src/services/TokenCounter.js"
import { scaled, type Settings, slidingMemory, summarizingMemory } from "./setup.js"
import { type Figure, fixed, int, interleaved, ms, printTable, ratio, timed, times } from "./stats.js"
import { corpus, generatedTurn, utf8Bytes } from "./texts.js"

const approximate = ApproximateTokenCounter.make
const exact = ExactTokenCounter.fromTokenizer(ExactTokenCounter.o200kTokenizer, "o200k_base")

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
    (counter) => slidingMemory(MemoryRepository.layer, counter),
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
    (counter) => summarizingMemory(MemoryRepository.layer, { mode: "incremental" }, counter),
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
    return { method, bytes, messages: messages.length, rows, comparison }
  })
