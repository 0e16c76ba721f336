/**
 * `UserMemoryService` over the store's user port. Input is validated at the edge. Erasing a user
 * first stops the background work of the user's conversations.
 */
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import type { ConversationEntry } from "../../domain/ConversationEntry.js"
import { ConversationId } from "../../domain/ConversationId.js"
import { FactCategory } from "../../domain/Fact.js"
import { Identifier, StorableString } from "../../domain/internal/storable.js"
import { UserFact } from "../../domain/UserFact.js"
import { UserId } from "../../domain/UserId.js"
import { decode } from "../../errors/internal/decode.js"
import { MemoryManagementStrategy } from "../../services/MemoryManagementStrategy.js"
import { RepositoryService } from "../../services/RepositoryService.js"
import { UserMemoryService } from "../../services/UserMemoryService.js"
import { UserStore } from "../../services/UserStore.js"
import { EmbeddingJobs, searchTurns } from "../../strategies/Recall.js"

const UserRequest = Schema.Struct({ userId: UserId })

const ListRequest = Schema.Struct({
  userId: UserId,
  options: Schema.optionalWith(
    Schema.Struct({
      limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 1000))),
      before: Schema.optional(Schema.DateTimeUtc),
      // The last entry of the previous page, as it was listed: its other fields are not read.
      after: Schema.optional(
        Schema.Struct({
          lastSaidAt: Schema.Union(Schema.DateTimeUtcFromSelf, Schema.DateTimeUtc),
          conversationId: ConversationId
        }).annotations({ parseOptions: { onExcessProperty: "ignore" } })
      )
    }),
    { exact: true }
  )
})

const SetFactsRequest = Schema.Struct({
  userId: UserId,
  facts: Schema.Array(Schema.Struct({
    key: Identifier,
    value: StorableString,
    category: Schema.optional(FactCategory)
  })).pipe(Schema.maxItems(1000))
})

const RemoveFactsRequest = Schema.Struct({ userId: UserId, keys: Schema.Array(Identifier).pipe(Schema.maxItems(1000)) })

const SearchRequest = Schema.Struct({
  userId: UserId,
  query: StorableString,
  options: Schema.optionalWith(
    Schema.Struct({ limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 50))) }),
    { exact: true }
  )
})

/** The page size of the conversations an erasure lists to stop their work. */
const erasurePage = 1000

/** Builds the service over the store's user port, the log and the strategy. */
export const make = Effect.gen(function*() {
  const users = yield* UserStore
  const repository = yield* RepositoryService
  const strategy = yield* MemoryManagementStrategy
  const embedding = Option.getOrUndefined(yield* Effect.serviceOption(EmbeddingJobs))
  const decodeUser = (operation: string) => decode(UserRequest, `UserMemoryService.${operation}`, "")
  const decodeList = decode(ListRequest, "UserMemoryService.listConversations", "")
  const decodeSet = decode(SetFactsRequest, "UserMemoryService.setFacts", "")
  const decodeRemove = decode(RemoveFactsRequest, "UserMemoryService.removeFacts", "")
  const decodeSearch = decode(SearchRequest, "UserMemoryService.search", "")

  /** Facts the app states now. */
  const stated = (
    facts: ReadonlyArray<
      { readonly key: string; readonly value: string | null; readonly category?: FactCategory | undefined }
    >
  ) =>
    Effect.map(DateTime.now, (now) =>
      facts.map((fact) =>
        new UserFact({
          key: fact.key,
          value: fact.value,
          category: fact.category ?? "ENTITY",
          saidAt: now,
          source: null
        }, { disableValidation: true })
      ))

  return UserMemoryService.of({
    listConversations: Effect.fn("UserMemoryService.listConversations")(function*(userId, options) {
      const request = yield* decodeList(options === undefined ? { userId } : { userId, options })
      return yield* users.listConversations(request.userId, {
        limit: request.options?.limit ?? 20,
        before: request.options?.before,
        after: request.options?.after
      })
    }),

    getFacts: Effect.fn("UserMemoryService.getFacts")(function*(userId) {
      const request = yield* decodeUser("getFacts")({ userId })
      return yield* users.getFacts(request.userId)
    }),

    setFacts: Effect.fn("UserMemoryService.setFacts")(function*(userId, facts) {
      const request = yield* decodeSet({ userId, facts })
      const merged = yield* users.mergeFacts(request.userId, yield* stated(request.facts))
      return merged._tag === "Merged" ? merged.applied : []
    }),

    removeFacts: Effect.fn("UserMemoryService.removeFacts")(function*(userId, keys) {
      const request = yield* decodeRemove({ userId, keys })
      yield* users.mergeFacts(request.userId, yield* stated(request.keys.map((key) => ({ key, value: null }))))
    }),

    search: Effect.fn("UserMemoryService.search")(function*(userId, query, options) {
      const request = yield* decodeSearch(options === undefined ? { userId, query } : { userId, query, options })
      return yield* searchTurns(repository, { users, userId: request.userId }, {
        query: request.query,
        before: Number.MAX_SAFE_INTEGER,
        limit: request.options?.limit ?? 5
      })
    }),

    erase: Effect.fn("UserMemoryService.erase")(function*(userId) {
      const request = yield* decodeUser("erase")({ userId })
      // Each conversation's background work stops first, so none writes after the erasure.
      let after: ConversationEntry | undefined
      while (true) {
        const page = yield* users.listConversations(request.userId, { limit: erasurePage, after })
        for (const entry of page) {
          yield* strategy.forget(entry.conversationId)
          if (embedding !== undefined) yield* embedding.forget(entry.conversationId)
        }
        after = page.at(-1)
        if (page.length < erasurePage || after === undefined) break
      }
      const erasure = yield* users.erase(request.userId)
      yield* Effect.logInfo("user erased").pipe(
        Effect.annotateLogs({ conversations: erasure.conversations, messages: erasure.messages, facts: erasure.facts })
      )
      return erasure
    })
  })
})

/**
 * The user's operations as a layer over the store's user port, the log and the strategy.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = Layer.effect(UserMemoryService, make)
