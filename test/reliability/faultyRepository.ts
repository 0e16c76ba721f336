/**
 * A `RepositoryService` over another one that fails chosen calls with a `RepositoryError` before
 * they reach it, as a store that lost its connection would (a failed write applied nothing, as the
 * repository contract says), and counts every call it receives.
 */
import { Effect, HashMap, Option, Ref } from "effect"
import type { ConversationId } from "../../src/domain/ConversationId.js"
import { RepositoryError } from "../../src/errors/RepositoryError.js"
import type { RepositoryService } from "../../src/services/RepositoryService.js"

/** The repository's operations. */
export type Operation = keyof RepositoryService.Service

/** The operations that write. */
export const writes: ReadonlyArray<Operation> = [
  "appendMessages",
  "commitSummary",
  "deleteConversation",
  "setSettings",
  "storeEmbeddings"
]

/** The `cause` of every injected failure, so that a test can tell them from real store failures. */
export const injected = "injected store fault"

/** Whether a `RepositoryError` is one this wrapper injected. */
export const isInjected = (error: RepositoryError): boolean => error.cause === injected

/** The wrapped repository, and what it received. */
export interface FaultyRepository {
  readonly service: RepositoryService.Service
  /** Calls received per operation, failed ones included. */
  readonly calls: Effect.Effect<HashMap.HashMap<Operation, number>>
  /** Failures injected per operation. */
  readonly failures: Effect.Effect<HashMap.HashMap<Operation, number>>
}

/**
 * Wraps `inner`. `shouldFail` gets the operation and its call number (1 for the first call of that
 * operation) and decides whether the call fails.
 */
export const make = (
  inner: RepositoryService.Service,
  shouldFail: (operation: Operation, call: number) => Effect.Effect<boolean>
): Effect.Effect<FaultyRepository> =>
  Effect.gen(function*() {
    const calls = yield* Ref.make(HashMap.empty<Operation, number>())
    const failures = yield* Ref.make(HashMap.empty<Operation, number>())
    const increment = (map: HashMap.HashMap<Operation, number>, operation: Operation) =>
      HashMap.set(map, operation, Option.getOrElse(HashMap.get(map, operation), () => 0) + 1)

    const guard = (operation: Operation, conversationId: ConversationId) =>
      Effect.gen(function*() {
        const call = yield* Ref.modify(calls, (map) => {
          const next = increment(map, operation)
          return [Option.getOrElse(HashMap.get(next, operation), () => 0), next] as const
        })
        if (!(yield* shouldFail(operation, call))) return
        yield* Ref.update(failures, (map) => increment(map, operation))
        return yield* new RepositoryError({ operation, conversationId, cause: injected })
      })

    const service: RepositoryService.Service = {
      appendMessages: (conversationId, messages) =>
        Effect.zipRight(guard("appendMessages", conversationId), inner.appendMessages(conversationId, messages)),
      getConversation: (conversationId) =>
        Effect.zipRight(guard("getConversation", conversationId), inner.getConversation(conversationId)),
      listMessages: (conversationId, query) =>
        Effect.zipRight(guard("listMessages", conversationId), inner.listMessages(conversationId, query)),
      countMessages: (conversationId, query) =>
        Effect.zipRight(guard("countMessages", conversationId), inner.countMessages(conversationId, query)),
      readWindow: (conversationId, query) =>
        Effect.zipRight(guard("readWindow", conversationId), inner.readWindow(conversationId, query)),
      deleteConversation: (conversationId) =>
        Effect.zipRight(guard("deleteConversation", conversationId), inner.deleteConversation(conversationId)),
      getSettings: (conversationId) =>
        Effect.zipRight(guard("getSettings", conversationId), inner.getSettings(conversationId)),
      setSettings: (conversationId, settings) =>
        Effect.zipRight(guard("setSettings", conversationId), inner.setSettings(conversationId, settings)),
      getSummaryState: (conversationId) =>
        Effect.zipRight(guard("getSummaryState", conversationId), inner.getSummaryState(conversationId)),
      commitSummary: (commit) =>
        Effect.zipRight(guard("commitSummary", commit.conversationId), inner.commitSummary(commit)),
      listSummarizations: (conversationId) =>
        Effect.zipRight(guard("listSummarizations", conversationId), inner.listSummarizations(conversationId)),
      searchMessages: (conversationId, query) =>
        Effect.zipRight(guard("searchMessages", conversationId), inner.searchMessages(conversationId, query)),
      pendingEmbeddings: (conversationId, query) =>
        Effect.zipRight(guard("pendingEmbeddings", conversationId), inner.pendingEmbeddings(conversationId, query)),
      storeEmbeddings: (conversationId, model, embeddings) =>
        Effect.zipRight(
          guard("storeEmbeddings", conversationId),
          inner.storeEmbeddings(conversationId, model, embeddings)
        ),
      searchEmbeddings: (conversationId, query) =>
        Effect.zipRight(guard("searchEmbeddings", conversationId), inner.searchEmbeddings(conversationId, query)),
      withSummarizationLock: (conversationId, effect) =>
        Effect.zipRight(
          guard("withSummarizationLock", conversationId),
          inner.withSummarizationLock(conversationId, effect)
        )
    }
    return { service, calls: Ref.get(calls), failures: Ref.get(failures) }
  })
