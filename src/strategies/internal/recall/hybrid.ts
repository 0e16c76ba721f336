/**
 * Hybrid recall: message vectors from an `@effect/ai` `EmbeddingModel`, and a search that fuses
 * the store's lexical ranking with the nearest messages by meaning (reciprocal rank fusion). A
 * background job embeds in batches after writes, never on the add path.
 *
 * An embedding model that fails, dies, hangs or answers unusable vectors never fails a write or a
 * context. Unusable means another count than asked, another dimension, or non-finite numbers. The
 * context gets lexical hits, a bad vector is never stored, and each fault is counted, published
 * and logged once.
 */
import type { EmbeddingModel } from "@effect/ai"
import { Cause, Clock, Data, Duration, Effect, Either, Metric, Option, Predicate, Ref } from "effect"
import type { ConversationId } from "../../../domain/ConversationId.js"
import { searchableText } from "../../../domain/internal/recall.js"
import { EmbeddingFailed, type MemoryEvent } from "../../../domain/MemoryEvent.js"
import type { UserId } from "../../../domain/UserId.js"

type EmbeddingFaultReason = EmbeddingFailed["reason"]
import type { RepositoryError } from "../../../errors/RepositoryError.js"
import type { MessageIndex } from "../../../services/MessageIndex.js"
import type { UserStore } from "../../../services/UserStore.js"
import * as Metrics from "../metrics.js"

/** Messages embedded per call to the model. */
export const batchSize = 64

/**
 * The most characters of one message embedded; its beginning stands for it. Embedding models take
 * a few thousand tokens at most, and a call over the limit fails the whole batch.
 */
export const maxEmbeddedChars = 8000

/** The longest background embedding rests after failed batches in a row. */
const maxRestMillis = 10 * 60 * 1000

/** The most of a user's newest messages a search across the user's conversations compares, by default. */
export const defaultUserScanLimit = 5000

/** The constant of reciprocal rank fusion: a hit at rank r (from 1) adds 1 / (k + r). */
export const fusionK = 60

const failures = (stage: "index" | "query") => Metric.tagged(Metrics.embeddingFailures, "stage", stage)

/**
 * Reciprocal rank fusion of rankings, best first. A message scores `1 / (fusionK + rank)` summed
 * over the rankings that hold it, a message being a `key`. Ties go to the newer seq.
 */
export const fuse = <H extends MessageIndex.SearchHit>(
  rankings: ReadonlyArray<ReadonlyArray<H>>,
  limit: number,
  key: (hit: H) => string | number = (hit) => hit.seq
): Array<H> => {
  const fused = new Map<string | number, { readonly hit: H; readonly score: number }>()
  for (const ranking of rankings) {
    ranking.forEach((hit, i) => {
      const k = key(hit)
      const held = fused.get(k)
      fused.set(k, { hit: held?.hit ?? hit, score: (held?.score ?? 0) + 1 / (fusionK + i + 1) })
    })
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || b.hit.seq - a.hit.seq)
    .slice(0, limit)
    .map(({ hit, score }) => ({ ...hit, score }))
}

/** A user-wide hit's key: its conversation and seq. */
const inConversation = (hit: UserStore.SearchHit) => `${hit.conversationId}\u0000${hit.seq}`

/** Why an embedding could not be used, for the texts concerned. */
export interface Fault {
  readonly reason: EmbeddingFaultReason
  /** One line. */
  readonly detail: string
  readonly messages: number
}

/** An unusable query vector, failed inside its timed call. */
class UnusableVector extends Data.TaggedError("UnusableVector")<{
  readonly reason: "dimension" | "non-finite"
  readonly detail: string
}> {}

/**
 * Why `vector` cannot be used among vectors of `dimension`, if it cannot. An unknown dimension
 * allows any length but 0. The type is only the model's promise, so the value is checked whole.
 */
export const vectorFault = (
  vector: ReadonlyArray<number> | undefined,
  dimension: number | undefined
): "dimension" | "non-finite" | undefined => {
  if (!Array.isArray(vector)) return "non-finite"
  if (dimension === undefined ? vector.length === 0 : vector.length !== dimension) return "dimension"
  for (const x of vector) if (!Number.isFinite(x)) return "non-finite"
  return undefined
}

/** The length most of the usable vectors have; none when two lengths are as common. */
const commonLength = (vectors: ReadonlyArray<ReadonlyArray<number>>): number | undefined => {
  const counts = new Map<number, number>()
  for (const vector of vectors) {
    if (vectorFault(vector, undefined) === undefined) counts.set(vector.length, (counts.get(vector.length) ?? 0) + 1)
  }
  const ranked = [...counts].sort((a, b) => b[1] - a[1])
  const [first, second] = ranked
  return first === undefined || (second !== undefined && second[1] === first[1]) ? undefined : first[0]
}

/** A value of unknown shape (an error, a defect) as one line for the log and the event. */
const oneLine = (value: unknown): string => {
  const text = Predicate.hasProperty(value, "message") && typeof value.message === "string"
    ? (Predicate.hasProperty(value, "_tag") && typeof value._tag === "string"
      ? `${value._tag}: ${value.message}`
      : value.message)
    : String(value)
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > 300 ? `${line.slice(0, 300)}…` : line
}

/**
 * The fault of a call that did not answer: a failure of the model or the store's scan, a timeout,
 * a defect, or an interruption from inside the call. The caller's own interruption never gets
 * here, as an interrupted fiber runs no error handler.
 */
const faultOf = (cause: Cause.Cause<unknown>, timeout: Duration.Duration, messages: number): Fault => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (Cause.isTimeoutException(error)) {
      return { reason: "timeout", detail: `no answer in ${Duration.format(timeout)}`, messages }
    }
    if (error instanceof UnusableVector) return { reason: error.reason, detail: error.detail, messages }
    const store = Predicate.isTagged(error, "RepositoryError")
    return { reason: store ? "store" : "failed", detail: oneLine(error), messages }
  }
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect)) return { reason: "defect", detail: oneLine(defect.value), messages }
  return { reason: "interrupted", detail: "the call was interrupted", messages }
}

/**
 * Runs a call to the model within `timeout`, giving its answer or the fault. A defect or an
 * interruption inside the call is a fault like a failure, and never ends the caller.
 */
const guarded = <A, E>(
  call: Effect.Effect<A, E>,
  timeout: Duration.Duration,
  messages: number
): Effect.Effect<Either.Either<A, Fault>> =>
  call.pipe(
    // `EmbeddingModel`'s batched requests cannot be interrupted in flight. Disconnected, a call
    // past its timeout ends in the background, and the caller goes on at once.
    Effect.disconnect,
    Effect.timeout(timeout),
    Effect.sandbox,
    Effect.either,
    Effect.map(Either.mapLeft((cause) => faultOf(cause, timeout, messages)))
  )

/** How one background batch ended. */
type Batch =
  | { readonly _tag: "stored"; readonly more: boolean }
  | { readonly _tag: "failed"; readonly fault: Fault }

/** Hybrid recall over one store and one embedding model. */
export interface Hybrid {
  /**
   * Embeds the conversation's pending messages, a batch at a time, until none is pending. A batch
   * that fails, times out or answers unusably ends the run, and is counted, published and logged
   * once. Its messages stay pending for a later write, and background embedding rests a while.
   */
  readonly embed: (conversationId: ConversationId) => Effect.Effect<void>
  /** The lexical hits fused with the nearest by meaning. Lexical alone when that search fails or is slow. */
  readonly search: (
    conversationId: ConversationId,
    query: MessageIndex.SearchQuery
  ) => Effect.Effect<ReadonlyArray<MessageIndex.SearchHit>, RepositoryError>
  /** The same across a user's conversations. */
  readonly searchUser: (
    userId: UserId,
    query: UserStore.SearchQuery
  ) => Effect.Effect<ReadonlyArray<UserStore.SearchHit>, RepositoryError>
}

/** Hybrid recall over a store's index and user port, with vectors stored under `options.model`. */
export const makeHybrid = (
  ports: { readonly index: MessageIndex.Service; readonly users: UserStore.Service },
  embedder: EmbeddingModel.Service,
  options: {
    readonly model: string
    readonly queryTimeout: Duration.Duration
    readonly batchTimeout: Duration.Duration
    /** The most of a user's newest messages a search across the user's conversations compares. */
    readonly userScanLimit: number
    readonly publish: (event: MemoryEvent) => Effect.Effect<void>
  }
): Effect.Effect<Hybrid> =>
  Effect.gen(function*() {
    const { batchTimeout, model, queryTimeout } = options
    const { index: messageIndex, users } = ports
    const batchTimeoutMillis = Duration.toMillis(batchTimeout)
    // The model's vector length, learned from its first usable batch in this process. A vector of
    // another length is never stored nor searched with. Stores also compare only vectors of one
    // length, so a model changed under the same name poisons no search.
    const dimension = yield* Ref.make<number | undefined>(undefined)
    // After failed batches, background embedding rests until `until` (clock millis). A down or
    // hung model costs one timeout per rest, not one per write.
    const rest = yield* Ref.make({ failures: 0, until: 0 })

    // A search across a user's conversations made for none has no conversation: it is counted and
    // logged, not published.
    const report = (
      conversationId: ConversationId | undefined,
      stage: "index" | "query",
      fault: Fault,
      message: string
    ) =>
      Effect.all([
        failures(stage)(Effect.succeed(1)),
        conversationId === undefined
          ? Effect.void
          : options.publish(new EmbeddingFailed({ conversationId, stage, ...fault })),
        Effect.logWarning(message).pipe(
          Effect.annotateLogs({
            ...(conversationId === undefined ? {} : { conversationId }),
            model,
            reason: fault.reason,
            messages: fault.messages,
            detail: fault.detail
          })
        )
      ], { discard: true })

    /** One batch: stored, and whether more may be pending, or the fault that stopped it. */
    const indexBatch = (conversationId: ConversationId) =>
      Effect.gen(function*() {
        const pending = yield* messageIndex.pendingEmbeddings(conversationId, { model, limit: batchSize })
        if (pending.length === 0) return { _tag: "stored", more: false } satisfies Batch
        const texts = pending.map((message) => searchableText(message).slice(0, maxEmbeddedChars))
        const wanted = texts.flatMap((text, i) => (text.trim().length > 0 ? [i] : []))
        let vectors: ReadonlyArray<ReadonlyArray<number>> = []
        if (wanted.length > 0) {
          const answer = yield* guarded(
            embedder.embedMany(wanted.map((i) => texts[i] ?? "")),
            batchTimeout,
            wanted.length
          )
          if (Either.isLeft(answer)) return { _tag: "failed", fault: answer.left } satisfies Batch
          vectors = answer.right
        }
        if (!Array.isArray(vectors) || vectors.length !== wanted.length) {
          const count = Array.isArray(vectors) ? vectors.length : 0
          const fault: Fault = {
            reason: "count",
            detail: `${count} vectors for ${wanted.length} texts`,
            messages: wanted.length
          }
          return { _tag: "failed", fault } satisfies Batch
        }
        const known = yield* Ref.get(dimension)
        const reference = known ?? commonLength(vectors)
        const verdicts = vectors.map((vector) => vectorFault(vector, reference))
        const usable = verdicts.filter((verdict) => verdict === undefined).length
        if (wanted.length > 0 && (usable === 0 || reference === undefined)) {
          // Nothing is usable, or no length is the model's: the call failed as a whole. Its
          // messages are tried again later.
          const reason = reference === undefined && usable > 0
            ? "dimension"
            : verdicts.find((verdict) => verdict !== undefined) ?? "dimension"
          const lengths = [...new Set(vectors.map((vector) => (Array.isArray(vector) ? vector.length : 0)))]
          const fault: Fault = {
            reason,
            detail: reason === "dimension"
              ? `vectors of lengths ${lengths.join(", ")}` +
                (known === undefined ? ", none most common" : `, not ${known}`)
              : `no vector of the ${wanted.length} holds only finite numbers`,
            messages: wanted.length
          }
          return { _tag: "failed", fault } satisfies Batch
        }
        // A message with nothing to embed, or an unusable vector, is stored without one. It is
        // done, and found by its words only.
        const position = new Map(wanted.map((i, k) => [i, k]))
        yield* messageIndex.storeEmbeddings(
          conversationId,
          model,
          pending.map((message, i) => {
            const k = position.get(i)
            const vector = k === undefined || verdicts[k] !== undefined ? [] : vectors[k] ?? []
            return { seq: message.seq, vector, createdAt: message.createdAt }
          })
        )
        if (reference !== undefined) yield* Ref.update(dimension, (current) => current ?? reference)
        yield* Metrics.messagesEmbedded(Effect.succeed(usable))
        for (const reason of ["dimension", "non-finite"] as const) {
          const bad = verdicts.filter((verdict) => verdict === reason).length
          if (bad === 0) continue
          yield* report(
            conversationId,
            "index",
            {
              reason,
              messages: bad,
              detail: reason === "dimension"
                ? `${bad} of ${wanted.length} vectors not of length ${reference}`
                : `${bad} of ${wanted.length} vectors with numbers that are not finite`
            },
            "the embedding model answered unusable vectors; those messages are kept without one"
          )
        }
        return { _tag: "stored", more: pending.length === batchSize } satisfies Batch
      })

    const resting = Effect.zipWith(Clock.currentTimeMillis, Ref.get(rest), (now, current) => now < current.until)

    const rested = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Ref.update(rest, (current) => ({
        failures: current.failures + 1,
        until: now + Math.min(batchTimeoutMillis * 2 ** Math.min(current.failures, 20), maxRestMillis)
      })))

    const embed = (conversationId: ConversationId): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (yield* resting) {
          return yield* Effect.logDebug("the embedding model rests after failures; messages stay pending").pipe(
            Effect.annotateLogs({ conversationId, model })
          )
        }
        while (true) {
          const outcome = yield* Effect.either(indexBatch(conversationId))
          if (Either.isLeft(outcome)) {
            // A store failure is the store's to report: logged here, not counted as the model's.
            return yield* Effect.logWarning("embedding messages failed on the store; they stay pending").pipe(
              Effect.annotateLogs({ conversationId, model, error: oneLine(outcome.left) })
            )
          }
          const batch = outcome.right
          if (batch._tag === "failed") {
            yield* rested
            return yield* report(
              conversationId,
              "index",
              batch.fault,
              "embedding messages failed; they stay pending"
            )
          }
          yield* Ref.set(rest, { failures: 0, until: 0 })
          if (!batch.more) return
        }
      }).pipe(Effect.withSpan("HybridRecall.index", { attributes: { conversationId } }))

    /** The nearest messages by meaning: the query's vector, then the store's `scan` with it. */
    const nearest = <H>(
      text: string,
      scan: (vector: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<H>, RepositoryError>
    ) =>
      Effect.flatMap(Ref.get(dimension), (known) =>
        guarded(
          Effect.flatMap(embedder.embed(text), (
            vector
          ): Effect.Effect<ReadonlyArray<H>, RepositoryError | UnusableVector> => {
            const bad = vectorFault(vector, known)
            if (bad === undefined) return scan(vector)
            return Effect.fail(
              new UnusableVector({
                reason: bad,
                detail: bad === "dimension"
                  ? `a query vector of length ${Array.isArray(vector) ? vector.length : 0}, not ${
                    known ?? "at least 1"
                  }`
                  : "a query vector with numbers that are not finite"
              })
            )
          }),
          queryTimeout,
          1
        ))

    /**
     * The `lexical` hits fused with the nearest by meaning. The search by meaning has
     * `queryTimeout` for the model and the store's scan together. Past it, failed or unusable, the
     * context gets the lexical hits alone.
     */
    const fused = <H extends MessageIndex.SearchHit>(
      conversationId: ConversationId | undefined,
      lexical: Effect.Effect<ReadonlyArray<H>, RepositoryError>,
      semantic: Effect.Effect<Either.Either<ReadonlyArray<H>, Fault>>,
      limit: number,
      key?: (hit: H) => string | number
    ) =>
      Effect.gen(function*() {
        const [words, meaning] = yield* Effect.all([lexical, semantic], { concurrency: 2 })
        if (Either.isLeft(meaning)) {
          yield* report(
            conversationId,
            "query",
            meaning.left,
            "the search by meaning failed; recall is lexical for this context"
          )
          return words
        }
        return fuse([words, meaning.right], limit, key)
      })

    const search = (conversationId: ConversationId, query: MessageIndex.SearchQuery) =>
      fused(
        conversationId,
        messageIndex.searchMessages(conversationId, query),
        nearest(query.text, (vector) =>
          messageIndex.searchEmbeddings(conversationId, {
            model,
            vector,
            before: query.before,
            limit: query.limit
          })),
        query.limit
      ).pipe(Effect.withSpan("HybridRecall.search", { attributes: { conversationId } }))

    const searchUser = (userId: UserId, query: UserStore.SearchQuery) =>
      fused(
        query.current?.conversationId,
        users.searchMessages(userId, query),
        nearest(query.text, (vector) =>
          users.searchEmbeddings(userId, {
            model,
            vector,
            limit: query.limit,
            scanLimit: options.userScanLimit,
            ...(query.current === undefined ? {} : { current: query.current })
          })),
        query.limit,
        inConversation
      ).pipe(Effect.withSpan("HybridRecall.searchUser"))

    return { embed, search, searchUser }
  })
