/**
 * Hybrid recall: message vectors from an `@effect/ai` `EmbeddingModel`, computed in the background
 * after writes (batched, never on the add path), and a search that fuses the store's lexical
 * ranking with the nearest messages by meaning (reciprocal rank fusion). An embedding call that
 * fails or is slow never fails a write or a context: the messages stay pending, the context gets
 * lexical hits, and the failure is counted.
 */
import type { EmbeddingModel } from "@effect/ai"
import { Duration, Effect, Either, Metric } from "effect"
import type { ConversationId } from "../../../domain/ConversationId.js"
import { searchableText } from "../../../domain/Recall.js"
import type { RepositoryError } from "../../../errors/RepositoryError.js"
import type { MessageIndex } from "../../../services/MessageIndex.js"
import * as Metrics from "../metrics.js"

/** Messages embedded per call to the model. */
export const batchSize = 64

/**
 * The most characters of one message embedded: its beginning stands for it (embedding models take
 * a few thousand tokens at most, and a call over the limit fails for the whole batch).
 */
export const maxEmbeddedChars = 8000

/** The longest one background embedding call may take before the batch counts as failed. */
const indexTimeout = Duration.seconds(60)

/** The constant of reciprocal rank fusion: a hit at rank r (from 1) adds 1 / (k + r). */
export const fusionK = 60

const failures = (stage: "index" | "query") => Metric.tagged(Metrics.embeddingFailures, "stage", stage)

/**
 * Reciprocal rank fusion of rankings, best first: a message's score is the sum over the rankings
 * that hold it of `1 / (fusionK + rank)`; ties go to the newer message.
 */
export const fuse = (
  rankings: ReadonlyArray<ReadonlyArray<MessageIndex.SearchHit>>,
  limit: number
): Array<MessageIndex.SearchHit> => {
  const scores = new Map<number, number>()
  for (const ranking of rankings) {
    ranking.forEach((hit, i) => scores.set(hit.seq, (scores.get(hit.seq) ?? 0) + 1 / (fusionK + i + 1)))
  }
  return [...scores].map(([seq, score]) => ({ seq, score }))
    .sort((a, b) => b.score - a.score || b.seq - a.seq)
    .slice(0, limit)
}

/** Hybrid recall over one store and one embedding model. */
export interface Hybrid {
  /**
   * Embeds the conversation's pending messages, a batch at a time, until none is pending. A
   * failed or slow batch ends the run (counted and logged): its messages stay pending for the next.
   */
  readonly index: (conversationId: ConversationId) => Effect.Effect<void>
  /** The lexical hits fused with the nearest by meaning; lexical alone when that search fails or is slow. */
  readonly search: (
    conversationId: ConversationId,
    query: MessageIndex.SearchQuery
  ) => Effect.Effect<ReadonlyArray<MessageIndex.SearchHit>, RepositoryError>
}

/** Hybrid recall with vectors stored under `options.model`. */
export const makeHybrid = (
  messageIndex: MessageIndex.Service,
  embedder: EmbeddingModel.Service,
  options: { readonly model: string; readonly queryTimeoutMillis: number }
): Hybrid => {
  const model = options.model

  /** One batch: true when there may be more to embed. */
  const indexBatch = (conversationId: ConversationId) =>
    Effect.gen(function*() {
      const pending = yield* messageIndex.pendingEmbeddings(conversationId, { model, limit: batchSize })
      if (pending.length === 0) return false
      const texts = pending.map((message) => searchableText(message).slice(0, maxEmbeddedChars))
      const wanted = texts.flatMap((text, i) => (text.trim().length > 0 ? [i] : []))
      const vectors = wanted.length === 0
        ? []
        : yield* embedder.embedMany(wanted.map((i) => texts[i] ?? "")).pipe(
          // `EmbeddingModel`'s batched requests cannot be interrupted while their call is in
          // flight: disconnected, an interrupted job (the layer closing, a cleared conversation)
          // ends at once, and the call ends in the background with its connection.
          Effect.disconnect,
          Effect.timeoutFail({
            duration: indexTimeout,
            onTimeout: () => `no answer in ${Duration.format(indexTimeout)}`
          })
        )
      if (vectors.length !== wanted.length) {
        return yield* Effect.fail(`${vectors.length} vectors for ${wanted.length} texts`)
      }
      // A message with nothing to embed is stored without a vector: done, never found.
      const byIndex = new Map(wanted.map((i, k) => [i, vectors[k] ?? []]))
      yield* messageIndex.storeEmbeddings(
        conversationId,
        model,
        pending.map((message, i) => ({ seq: message.seq, vector: byIndex.get(i) ?? [] }))
      )
      yield* Metrics.messagesEmbedded(Effect.succeed(wanted.length))
      return pending.length === batchSize
    })

  const index = (conversationId: ConversationId): Effect.Effect<void> =>
    Effect.gen(function*() {
      let more = true
      while (more) {
        const outcome = yield* Effect.either(indexBatch(conversationId))
        if (Either.isRight(outcome)) {
          more = outcome.right
          continue
        }
        const failure = outcome.left
        // A store failure is the store's to report; the model's is counted here.
        if (typeof failure === "string" || failure._tag !== "RepositoryError") {
          yield* failures("index")(Effect.succeed(1))
        }
        yield* Effect.logWarning("embedding messages failed; they stay pending").pipe(
          Effect.annotateLogs({ conversationId, model, error: describe(outcome.left) })
        )
        more = false
      }
    }).pipe(Effect.withSpan("HybridRecall.index", { attributes: { conversationId } }))

  /** The nearest messages by meaning: the query's vector, then the store's scan of the vectors. */
  const nearest = (conversationId: ConversationId, query: MessageIndex.SearchQuery) =>
    Effect.flatMap(
      embedder.embed(query.text),
      (vector) =>
        messageIndex.searchEmbeddings(conversationId, { model, vector, before: query.before, limit: query.limit })
    )

  const search = (conversationId: ConversationId, query: MessageIndex.SearchQuery) =>
    Effect.gen(function*() {
      // The search by meaning has `queryTimeoutMillis` in all (the model's answer and the store's
      // scan); past it, or failed, the context is served with the lexical hits alone.
      const [lexical, semantic] = yield* Effect.all([
        messageIndex.searchMessages(conversationId, query),
        Effect.either(
          nearest(conversationId, query).pipe(
            Effect.disconnect,
            Effect.timeoutFail({
              duration: Duration.millis(options.queryTimeoutMillis),
              onTimeout: () => `no answer in ${options.queryTimeoutMillis} ms`
            })
          )
        )
      ], { concurrency: 2 })
      if (Either.isLeft(semantic)) {
        yield* failures("query")(Effect.succeed(1))
        yield* Effect.logWarning("the search by meaning failed; recall is lexical for this context").pipe(
          Effect.annotateLogs({ conversationId, model, error: describe(semantic.left) })
        )
        return lexical
      }
      return fuse([lexical, semantic.right], query.limit)
    }).pipe(Effect.withSpan("HybridRecall.search", { attributes: { conversationId } }))

  return { index, search }
}

/** A failure as one line for the log: a tagged error's tag and message, or the text. */
const describe = (error: string | { readonly _tag: string; readonly message: string }): string =>
  typeof error === "string" ? error : `${error._tag}: ${error.message}`
