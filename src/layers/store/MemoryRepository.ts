/**
 * The in-memory `RepositoryService`: a real implementation kept in a `Ref`, for tests, embedded
 * use and as the repository users compose in their own tests.
 *
 * @since 0.1.0
 */
import { Chunk, DateTime, Effect, HashMap, HashSet, Layer, Option, Ref, Schema } from "effect"
import type { ConversationId } from "../../domain/ConversationId.js"
import * as ConversationSettings from "../../domain/ConversationSettings.js"
import { Message, MessageMetadata, type NewMessage } from "../../domain/Message.js"
import * as SummaryState from "../../domain/SummaryState.js"
import { canonicalJson } from "../../domain/Text.js"
import { ConversationNotFoundError } from "../../errors/ConversationNotFoundError.js"
import { CommitResult, RepositoryService } from "../../services/RepositoryService.js"
import { commitValues } from "./internal/commit.js"
import { MessageLog } from "./internal/log.js"
import { isSearchable } from "./internal/search.js"
import { SearchIndex } from "./internal/searchIndex.js"
import { VectorIndex } from "./internal/vectors.js"

interface Store {
  readonly conversations: HashMap.HashMap<ConversationId, Conversation>
  /** Kept apart from the conversations: an id may hold settings before its first message. */
  readonly settings: HashMap.HashMap<ConversationId, ConversationSettings.ConversationSettings>
}

interface Conversation {
  readonly info: RepositoryService.ConversationInfo
  /** Ascending by seq; gaps only where messages were pruned. */
  readonly messages: MessageLog
  readonly state: SummaryState.SummaryState
  readonly records: Chunk.Chunk<SummaryState.SummarizationRecord>
  /** The conversation's search index, brought up to date when it is searched or pruned (`sync`). */
  readonly search: SearchIndex
  /** The conversation's message vectors, by embedding model. */
  readonly vectors: VectorIndex
}

const noMessages: RepositoryService.PerRole = { system: 0, user: 0, assistant: 0, tool: 0, summary: 0 }

/** The index range `[start, end)` of the messages with `after < seq < before`. */
const rangeOf = (
  messages: MessageLog,
  query: { readonly after?: number | undefined; readonly before?: number | undefined }
): readonly [number, number] => {
  const start = query.after === undefined ? 0 : messages.indexAfter(query.after)
  const end = query.before === undefined ? messages.size : messages.indexAfter(query.before - 1)
  return [start, Math.max(start, end)]
}

const isMetadata = Schema.is(MessageMetadata)

/** The metadata of most messages: none, shared by them, and frozen so that no reader can add to it. */
const noMetadata: MessageMetadata = Object.freeze({})

/** Most messages carry no metadata: then there is nothing to canonicalise or clone. */
const isEmpty = (metadata: MessageMetadata): boolean => metadata === noMetadata || Object.keys(metadata).length === 0

/**
 * Metadata as stored: a fresh copy in the canonical form the SQL stores return (`jsonb` key
 * order, no -0, no undefined properties), so that every store answers alike; none if it is not
 * `MessageMetadata`.
 */
const canonicalMetadata = (metadata: MessageMetadata): Option.Option<MessageMetadata> => {
  if (isEmpty(metadata)) return Option.some(noMetadata)
  const canonical = canonicalJson(metadata)
  return isMetadata(canonical) ? Option.some(canonical) : Option.none()
}

/**
 * A message as stored, and as readers get it: frozen, so that a stored message is shared with
 * every reader without a copy and no reader can change it (`Reflect.set` fails). The store's
 * metadata objects are never given out (see `readable`).
 */
const stored = (message: Message): Message => Object.freeze(message)

/**
 * A message as a reader gets it: the stored message itself when it has no metadata, otherwise a
 * copy with its own copy of the metadata (mutable JSON), so that no caller can change what is
 * stored by changing what it read (the SQL stores build fresh objects from each row, too).
 */
const readable = (message: Message): Message =>
  isEmpty(message.metadata) ? message : new Message({
    conversationId: message.conversationId,
    seq: message.seq,
    role: message.role,
    content: message.content,
    metadata: structuredClone(message.metadata),
    tokenCount: message.tokenCount,
    createdAt: message.createdAt
  }, { disableValidation: true })

/** Settings as a reader gets them: a fresh copy, as for messages. */
const copySettings = (settings: ConversationSettings.ConversationSettings): ConversationSettings.ConversationSettings =>
  new ConversationSettings.ConversationSettings({ ...settings }, { disableValidation: true })

/**
 * Settings as stored: their encoded form decoded again, so that only the schema's fields are kept,
 * as the SQL stores keep them.
 */
const storableSettings = (settings: ConversationSettings.ConversationSettings) =>
  Effect.flatMap(
    Schema.encode(ConversationSettings.ConversationSettings)(settings),
    Schema.decode(ConversationSettings.ConversationSettings)
  ).pipe(
    // The port takes valid settings (the class validates on construction): anything else came past
    // the type system.
    Effect.catchTag("ParseError", (error) => Effect.dieMessage(`setSettings: invalid settings: ${error.message}`))
  )

const slice = (messages: MessageLog, start: number, end: number): Array<Message> => messages.slice(start, end, readable)

/**
 * Builds an empty in-memory repository.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<RepositoryService.Service> = Effect.gen(function*() {
  const store = yield* Ref.make<Store>({ conversations: HashMap.empty(), settings: HashMap.empty() })
  const locks = yield* Ref.make(HashSet.empty<ConversationId>())

  /**
   * The conversation's search index, brought up to the current snapshot; none for a conversation
   * that does not exist. Syncing is synchronous, so no other fiber sees a half-updated index.
   */
  const indexed = (conversationId: ConversationId) =>
    Effect.flatMap(
      Ref.get(store),
      ({ conversations }) =>
        Effect.sync(() =>
          Option.map(HashMap.get(conversations, conversationId), (conversation) => {
            conversation.search.sync(conversation.messages, conversation.info.systemPrefixSeq)
            return conversation.search
          })
        )
    )

  /** Runs `f` on the conversation's current snapshot (synchronously); none when it does not exist. */
  const withConversation = <A>(conversationId: ConversationId, f: (conversation: Conversation) => A) =>
    Effect.flatMap(
      Ref.get(store),
      ({ conversations }) => Effect.sync(() => Option.map(HashMap.get(conversations, conversationId), f))
    )

  const find = (conversationId: ConversationId) =>
    Effect.flatMap(
      Ref.get(store),
      ({ conversations }) =>
        Option.match(HashMap.get(conversations, conversationId), {
          onNone: () => Effect.fail(new ConversationNotFoundError({ conversationId })),
          onSome: Effect.succeed
        })
    )

  return RepositoryService.of({
    appendMessages: Effect.fnUntraced(function*(conversationId, newMessages) {
      const now = yield* DateTime.now
      const prepared: Array<NewMessage> = []
      for (const message of newMessages) {
        const metadata = canonicalMetadata(message.metadata)
        // The port takes validated metadata: anything else came past the type system.
        if (Option.isNone(metadata)) return yield* Effect.dieMessage("appendMessages: metadata is not MessageMetadata")
        prepared.push({ ...message, metadata: metadata.value })
      }
      const appended = yield* Ref.modify(store, (snapshot): readonly [RepositoryService.AppendResult, Store] => {
        const existing = HashMap.get(snapshot.conversations, conversationId)
        if (newMessages.length === 0) {
          const messageCount = Option.match(existing, { onNone: () => 0, onSome: (c) => c.info.messageCount })
          return [{ messages: [], messageCount }, snapshot]
        }
        const current: Conversation = Option.getOrElse(existing, () => ({
          info: {
            conversationId,
            lastSeq: 0,
            messageCount: 0,
            roleCounts: noMessages,
            tokenCount: 0,
            systemPrefixSeq: 0,
            firstTurnRole: null,
            createdAt: now,
            updatedAt: now
          },
          messages: MessageLog.empty(),
          state: SummaryState.initial(conversationId),
          records: Chunk.empty(),
          search: new SearchIndex(),
          vectors: new VectorIndex()
        }))
        let { firstTurnRole, lastSeq, systemPrefixSeq, tokenCount } = current.info
        const roleCounts = { ...current.info.roleCounts }
        const added: Array<Message> = []
        for (const message of prepared) {
          lastSeq += 1
          roleCounts[message.role] += 1
          if (message.role === "system" && systemPrefixSeq === lastSeq - 1) systemPrefixSeq = lastSeq
          else if (firstTurnRole === null) firstTurnRole = message.role
          tokenCount += message.tokenCount
          added.push(stored(
            new Message({
              conversationId,
              seq: lastSeq,
              role: message.role,
              content: message.content,
              metadata: message.metadata,
              tokenCount: message.tokenCount,
              createdAt: message.createdAt
            }, { disableValidation: true })
          ))
        }
        const messageCount = current.info.messageCount + added.length
        const next: Conversation = {
          ...current,
          info: {
            ...current.info,
            lastSeq,
            systemPrefixSeq,
            firstTurnRole,
            tokenCount,
            messageCount,
            roleCounts,
            updatedAt: now
          },
          messages: current.messages.append(added)
        }
        return [
          { messages: added.map(readable), messageCount },
          { ...snapshot, conversations: HashMap.set(snapshot.conversations, conversationId, next) }
        ]
      })
      return appended
    }),

    getConversation: Effect.fnUntraced(function*(conversationId) {
      return (yield* find(conversationId)).info
    }),

    listMessages: Effect.fnUntraced(function*(conversationId, query) {
      const { messages } = yield* find(conversationId)
      const [start, end] = rangeOf(messages, query)
      const limit = query.limit ?? Number.POSITIVE_INFINITY
      return query.from === "newest"
        ? slice(messages, Math.max(start, end - limit), end)
        : slice(messages, start, Math.min(end, start + limit))
    }),

    countMessages: Effect.fnUntraced(function*(conversationId, query) {
      const { messages } = yield* find(conversationId)
      const [start, end] = rangeOf(messages, query)
      const counts = { total: end - start, tokenCount: 0, ...noMessages }
      for (let i = start; i < end; i++) {
        const message = messages.at(i)
        if (message === undefined) break
        counts[message.role] += 1
        counts.tokenCount += message.tokenCount
      }
      return counts
    }),

    readWindow: Effect.fnUntraced(function*(conversationId, query) {
      const { info, messages, state } = yield* find(conversationId)
      const after = query.after === "cursor" ? Math.max(state.cursor, info.systemPrefixSeq) : info.systemPrefixSeq
      const [start, end] = rangeOf(messages, { after })
      // Reading further back costs nothing here (no round trip to save, unlike `windowPageSize` on
      // the SQL stores): read just the newest messages that hold more than the limit, back to a
      // user message, where a turn may start.
      let first = end
      let tokens = 0
      while (first > start && tokens <= query.tokenLimit) {
        first -= 1
        const message = messages.at(first)
        if (message !== undefined && message.role !== "summary") tokens += message.tokenCount
      }
      while (first > start && messages.at(first)?.role !== "user") first -= 1
      return {
        info,
        state,
        system: slice(messages, 0, messages.indexAfter(info.systemPrefixSeq)),
        after,
        recent: slice(messages, first, end),
        reachedStart: first === start
      }
    }),

    deleteConversation: Effect.fnUntraced(function*(conversationId) {
      // Messages and settings go together; an id that holds either is found.
      const removed = yield* Ref.modify(
        store,
        ({ conversations, settings }): readonly [boolean, Store] =>
          HashMap.has(conversations, conversationId) || HashMap.has(settings, conversationId)
            ? [true, {
              conversations: HashMap.remove(conversations, conversationId),
              settings: HashMap.remove(settings, conversationId)
            }]
            : [false, { conversations, settings }]
      )
      if (!removed) return yield* new ConversationNotFoundError({ conversationId })
    }),

    getSettings: Effect.fnUntraced(function*(conversationId) {
      const { settings } = yield* Ref.get(store)
      return Option.match(HashMap.get(settings, conversationId), {
        onNone: () => ConversationSettings.empty,
        onSome: copySettings
      })
    }),

    setSettings: Effect.fnUntraced(function*(conversationId, settings) {
      const stored = yield* storableSettings(settings)
      // The empty settings are stored as none: the id then holds nothing but what its log holds.
      yield* Ref.update(store, (snapshot) => ({
        ...snapshot,
        settings: ConversationSettings.isEmpty(stored)
          ? HashMap.remove(snapshot.settings, conversationId)
          : HashMap.set(snapshot.settings, conversationId, stored)
      }))
      return copySettings(stored)
    }),

    getSummaryState: Effect.fnUntraced(function*(conversationId) {
      return (yield* find(conversationId)).state
    }),

    commitSummary: Effect.fnUntraced(function*(commit) {
      const { conversationId } = commit
      const now = yield* DateTime.now
      const outcome = yield* Ref.modify(
        store,
        (
          snapshot
        ): readonly [Option.Option<Option.Option<RepositoryService.CommitResult>>, Store] => {
          const found = HashMap.get(snapshot.conversations, conversationId)
          if (Option.isNone(found)) return [Option.none(), snapshot]
          const current = found.value
          const { state, info } = current
          if (state.cursor !== commit.expected.cursor || state.version !== commit.expected.version) {
            return [Option.some(Option.some(CommitResult.Stale({ current: state }))), snapshot]
          }
          if (commit.cursor < state.cursor || commit.cursor > info.lastSeq) {
            return [Option.some(Option.none()), snapshot]
          }
          const version = state.version + 1
          const written = commitValues(commit, { version, lastSeq: info.lastSeq, now })
          let messages = current.messages
          let { lastSeq, messageCount, tokenCount } = info
          const roleCounts = { ...info.roleCounts }
          if (commit.prune === true) {
            messages = messages.filter((m) => {
              if (m.seq <= info.systemPrefixSeq || m.seq > written.state.cursor || m.role === "summary") return true
              messageCount -= 1
              roleCounts[m.role] -= 1
              tokenCount -= m.tokenCount
              return false
            })
          }
          if (written.summaryMessage !== undefined) {
            lastSeq += 1
            messageCount += 1
            roleCounts.summary += 1
            tokenCount += written.summaryMessage.tokenCount
            messages = messages.append([stored(written.summaryMessage)])
          }
          const next: Conversation = {
            info: { ...info, lastSeq, messageCount, roleCounts, tokenCount, updatedAt: now },
            messages,
            state: written.state,
            records: Chunk.append(current.records, written.record),
            search: current.search,
            vectors: current.vectors
          }
          return [
            Option.some(Option.some(CommitResult.Committed({ state: written.state, record: written.record }))),
            { ...snapshot, conversations: HashMap.set(snapshot.conversations, conversationId, next) }
          ]
        }
      )
      if (Option.isNone(outcome)) return yield* new ConversationNotFoundError({ conversationId })
      // A prune drops its messages from the index at once (not at the next search): the memory they
      // held is released.
      if (commit.prune === true) {
        yield* indexed(conversationId)
        yield* withConversation(
          conversationId,
          (conversation) => conversation.vectors.retain((seq) => conversation.messages.has(seq))
        )
      }
      // A cursor behind the current one or past the last message is a bug of the caller (the
      // strategies compute it from messages they read), not a condition to recover from.
      if (Option.isNone(outcome.value)) {
        return yield* Effect.dieMessage(
          `commitSummary: cursor ${commit.cursor} outside [${commit.expected.cursor}, lastSeq]`
        )
      }
      return outcome.value.value
    }),

    listSummarizations: Effect.fnUntraced(function*(conversationId) {
      return Chunk.toReadonlyArray((yield* find(conversationId)).records)
    }),

    searchMessages: Effect.fnUntraced(function*(conversationId, query) {
      return Option.match(yield* indexed(conversationId), {
        onNone: (): ReadonlyArray<RepositoryService.SearchHit> => [],
        onSome: (index) => index.search(query)
      })
    }),

    pendingEmbeddings: Effect.fnUntraced(function*(conversationId, query) {
      const found = yield* withConversation(conversationId, (conversation) => {
        const out: Array<Message> = []
        const limit = Math.max(1, Math.floor(query.limit))
        const messages = conversation.messages
        for (let i = messages.indexAfter(conversation.vectors.upTo(query.model)); i < messages.size; i++) {
          const message = messages.at(i)
          if (message === undefined) break
          if (!isSearchable(message, conversation.info.systemPrefixSeq)) continue
          out.push(readable(message))
          if (out.length >= limit) break
        }
        return out
      })
      return Option.getOrElse(found, (): ReadonlyArray<Message> => [])
    }),

    storeEmbeddings: Effect.fnUntraced(function*(conversationId, model, embeddings) {
      yield* withConversation(
        conversationId,
        (conversation) =>
          conversation.vectors.put(model, embeddings.filter(({ seq }) => conversation.messages.has(seq)))
      )
    }),

    searchEmbeddings: Effect.fnUntraced(function*(conversationId, query) {
      const found = yield* withConversation(conversationId, (conversation) => conversation.vectors.search(query))
      return Option.getOrElse(found, (): ReadonlyArray<RepositoryService.SearchHit> => [])
    }),

    withSummarizationLock: (conversationId, effect) =>
      Effect.acquireUseRelease(
        Ref.modify(locks, (held) =>
          HashSet.has(held, conversationId) ? [false, held] : [true, HashSet.add(held, conversationId)]),
        (acquired) => (acquired ? Effect.asSome(effect) : Effect.succeedNone),
        (acquired) => (acquired ? Ref.update(locks, HashSet.remove(conversationId)) : Effect.void)
      ).pipe(Effect.withSpan("MemoryRepository.withSummarizationLock", { attributes: { conversationId } }))
  })
})

/**
 * A layer with a fresh, empty in-memory repository.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<RepositoryService> = Layer.effect(RepositoryService, make)
