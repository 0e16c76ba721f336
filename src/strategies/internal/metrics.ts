/**
 * The summarizing strategies' metrics: summarizations and their cost, failures, and contexts
 * served without a fresh summary.
 */
import { Metric, MetricBoundaries } from "effect"

const tokenBoundaries = MetricBoundaries.exponential({ start: 16, factor: 2, count: 14 })

/** Summarizations applied. */
export const summarizations = Metric.counter("chat_memory_summarizations_total", {
  description: "Summarizations applied to a conversation's summary state",
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
