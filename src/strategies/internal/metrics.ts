/**
 * The summarizing strategies' metrics: summarizations and their cost, failures and the breaker,
 * and contexts served without a fresh summary.
 */
import { Metric, MetricBoundaries } from "effect"

const tokenBoundaries = MetricBoundaries.exponential({ start: 16, factor: 2, count: 14 })

/** Summarizations applied. */
export const summarizations = Metric.counter("chat_memory_summarizations_total", {
  description: "Summarizations applied to a conversation's summary state",
  incremental: true
})

/** Summaries cut to their cap. */
export const summariesTruncated = Metric.counter("chat_memory_summaries_truncated_total", {
  description: "Summaries over their cap even when asked again, cut at a sentence boundary",
  incremental: true
})

/** Summarizations that failed after their retries. */
export const summarizationFailures = Metric.counter("chat_memory_summarization_failures_total", {
  description: "Summarizations that failed after their retries (state unchanged)",
  incremental: true
})

/** Tokens sent to the summarizer per summarization. */
export const summarizerInputTokens = Metric.histogram(
  "chat_memory_summarizer_input_tokens",
  tokenBoundaries,
  "Tokens sent to the summarizer per summarization"
)

/** Tokens the summarizer answered with per summarization. */
export const summarizerOutputTokens = Metric.histogram(
  "chat_memory_summarizer_output_tokens",
  tokenBoundaries,
  "Tokens the summarizer produced per summarization"
)

/** Wall time of a summarization, skill calls and commit included. */
export const summarizationDuration = Metric.histogram(
  "chat_memory_summarization_duration_ms",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 18 }),
  "Duration of a summarization in milliseconds"
)

/** Times the summarizer's breaker opened. */
export const summarizerBreakerOpened = Metric.counter("chat_memory_summarizer_breaker_opened_total", {
  description: "Times the summarizer's breaker opened after summarizations failed in a row",
  incremental: true
})

/** Summarizations due but not run because the summarizer's breaker was open. */
export const summarizationsSkipped = Metric.counter("chat_memory_summarizations_skipped_total", {
  description: "Summarizations due but not run because the summarizer's breaker was open (nothing lost)",
  incremental: true
})

/** Contexts served without a fresh summary. */
export const fallbacks = Metric.counter("chat_memory_context_fallbacks_total", {
  description: "Contexts served without a fresh summary (summary behind, or a failure)",
  incremental: true
})

/** Characters of model output (summaries, facts) replaced because no store can hold them. */
export const modelOutputReplaced = Metric.counter("chat_memory_model_output_characters_replaced_total", {
  description: "Characters of model output (NUL, unpaired surrogates) replaced before commit",
  incremental: true
})

/** Turns recalled per context built with a query. */
export const recalledTurns = Metric.histogram(
  "chat_memory_recalled_turns",
  MetricBoundaries.linear({ start: 0, width: 1, count: 11 }),
  "Turns recalled per context built with a query"
)

/** How long a context built with a query took: its build, the search and the turn reads. */
export const recallLatency = Metric.histogram(
  "chat_memory_recall_duration_ms",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 14 }),
  "Milliseconds to build a context with a query, its recall included"
)

/** Messages given a vector for hybrid recall. */
export const messagesEmbedded = Metric.counter("chat_memory_messages_embedded_total", {
  description: "Messages given a vector for hybrid recall",
  incremental: true
})

/**
 * Embedding faults, one per call: a call that failed, died, was interrupted or timed out, or
 * answered unusable vectors. `stage` is `index` for a background batch: retried on the next
 * write, or its bad vectors left out. It is `query` for a context served with lexical recall alone.
 */
export const embeddingFailures = Metric.counter("chat_memory_embedding_failures_total", {
  description: "Embedding calls that failed, timed out or answered unusable vectors (stage: index or query); " +
    "recall went on lexically",
  incremental: true
})

/** Extractions of what is known about a user that failed: their turns stay pending, read again by a later write. */
export const userFactsFailures = Metric.counter("chat_memory_user_facts_failures_total", {
  description: "Extractions of what is known about a user that failed; their turns stay pending",
  incremental: true
})
