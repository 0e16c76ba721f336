/**
 * A store over another one whose every port fails chosen calls with a `RepositoryError` before
 * they reach it, as a store that lost its connection would (a failed write applied nothing, as the
 * contracts say), and counts every call it receives.
 */
import { Effect, HashMap, Option, Ref } from "effect"
import type { ConversationId } from "../../src/domain/ConversationId.js"
import { RepositoryError } from "../../src/errors/RepositoryError.js"
import type * as Store from "../../src/layers/store/Store.js"
import type { MessageIndex } from "../../src/services/MessageIndex.js"
import type { RepositoryService } from "../../src/services/RepositoryService.js"
import type { SettingsStore } from "../../src/services/SettingsStore.js"
import type { SummarizationLease } from "../../src/services/SummarizationLease.js"
import type { SummaryStore } from "../../src/services/SummaryStore.js"

/** The store's operations, in every port. */
export type Operation =
  | keyof RepositoryService.Service
  | keyof SummaryStore.Service
  | keyof SettingsStore.Service
  | keyof MessageIndex.Service
  | keyof SummarizationLease.Service

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

/** The wrapped store, and what it received. */
export interface FaultyStore {
  readonly store: Store.Store
  /** Calls received per operation, failed ones included. */
  readonly calls: Effect.Effect<HashMap.HashMap<Operation, number>>
  /** Failures injected per operation. */
  readonly failures: Effect.Effect<HashMap.HashMap<Operation, number>>
}

/**
 * Wraps every port of `inner`. `shouldFail` gets the operation and its call number (1 for the
 * first call of that operation) and decides whether the call fails.
 */
export const make = (
  inner: Store.Store,
  shouldFail: (operation: Operation, call: number) => Effect.Effect<boolean>
): Effect.Effect<FaultyStore> =>
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

    const { index, lease, repository, settings, summaries, users } = inner
    const store: Store.Store = {
      repository: {
        appendMessages: (conversationId, messages, options) =>
          Effect.zipRight(
            guard("appendMessages", conversationId),
            repository.appendMessages(conversationId, messages, options)
          ),
        getConversation: (conversationId) =>
          Effect.zipRight(guard("getConversation", conversationId), repository.getConversation(conversationId)),
        listMessages: (conversationId, query) =>
          Effect.zipRight(guard("listMessages", conversationId), repository.listMessages(conversationId, query)),
        countMessages: (conversationId, query) =>
          Effect.zipRight(guard("countMessages", conversationId), repository.countMessages(conversationId, query)),
        readWindow: (conversationId, query) =>
          Effect.zipRight(guard("readWindow", conversationId), repository.readWindow(conversationId, query)),
        readTurns: (conversationId, query) =>
          Effect.zipRight(guard("readTurns", conversationId), repository.readTurns(conversationId, query)),
        deleteConversation: (conversationId) =>
          Effect.zipRight(guard("deleteConversation", conversationId), repository.deleteConversation(conversationId))
      },
      summaries: {
        getSummaryState: (conversationId) =>
          Effect.zipRight(guard("getSummaryState", conversationId), summaries.getSummaryState(conversationId)),
        commitSummary: (commit) =>
          Effect.zipRight(guard("commitSummary", commit.conversationId), summaries.commitSummary(commit)),
        listSummarizations: (conversationId) =>
          Effect.zipRight(guard("listSummarizations", conversationId), summaries.listSummarizations(conversationId))
      },
      settings: {
        getSettings: (conversationId) =>
          Effect.zipRight(guard("getSettings", conversationId), settings.getSettings(conversationId)),
        setSettings: (conversationId, values) =>
          Effect.zipRight(guard("setSettings", conversationId), settings.setSettings(conversationId, values)),
        updateSettings: (conversationId, f) =>
          Effect.zipRight(guard("updateSettings", conversationId), settings.updateSettings(conversationId, f))
      },
      index: {
        searchMessages: (conversationId, query) =>
          Effect.zipRight(guard("searchMessages", conversationId), index.searchMessages(conversationId, query)),
        pendingEmbeddings: (conversationId, query) =>
          Effect.zipRight(guard("pendingEmbeddings", conversationId), index.pendingEmbeddings(conversationId, query)),
        storeEmbeddings: (conversationId, model, embeddings) =>
          Effect.zipRight(
            guard("storeEmbeddings", conversationId),
            index.storeEmbeddings(conversationId, model, embeddings)
          ),
        searchEmbeddings: (conversationId, query) =>
          Effect.zipRight(guard("searchEmbeddings", conversationId), index.searchEmbeddings(conversationId, query))
      },
      lease: {
        withLease: (conversationId, effect) =>
          Effect.zipRight(guard("withLease", conversationId), lease.withLease(conversationId, effect))
      },
      // The user port passes through: the faults under test are the conversation's.
      users
    }
    return { store, calls: Ref.get(calls), failures: Ref.get(failures) }
  })
