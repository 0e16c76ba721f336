/**
 * The in-memory store's conversation log (`RepositoryService`). It appends, reads ranges, windows
 * and turns, counts, and deletes whole conversations.
 */
import { Chunk, DateTime, Effect, Either, HashMap, HashSet, Option, Ref, Schema } from "effect"
import type { ConversationId } from "../../../../domain/ConversationId.js"
import { empty as emptySettings } from "../../../../domain/internal/conversationSettings.js"
import { fromUntrusted, MaxJsonDepth } from "../../../../domain/internal/storable.js"
import { initial } from "../../../../domain/internal/summaryState.js"
import { Message, MessageMetadata, type NewMessage } from "../../../../domain/Message.js"
import type { UserId } from "../../../../domain/UserId.js"
import { ConversationNotFoundError } from "../../../../errors/ConversationNotFoundError.js"
import { DataValidationError } from "../../../../errors/DataValidationError.js"
import { RepositoryService } from "../../../../services/RepositoryService.js"
import { MessageLog } from "../log.js"
import { SearchIndex } from "../searchIndex.js"
import { UserSearchIndex } from "../userSearchIndex.js"
import { VectorIndex } from "../vectors.js"
import { windowStart } from "../window.js"
import {
  type Conversation,
  isEmpty,
  noMessages,
  noMetadata,
  readable,
  type Snapshot,
  type State,
  stored,
  type User
} from "./state.js"
import { entries, liveFacts } from "./userViews.js"

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

// The guarded copy of `fromUntrusted`, as deep as metadata nests. Tool call params sit at level 4
// and hold up to `MaxJsonDepth` levels of their own.
const canonicalCopy = Schema.decodeUnknownOption(fromUntrusted(Schema.Unknown, { maxDepth: MaxJsonDepth + 8 }))

/**
 * Metadata as stored: a fresh copy in the form the SQL stores return (`jsonb` key order, no -0, no
 * undefined properties). None if it is not `MessageMetadata`.
 */
const canonicalMetadata = (metadata: MessageMetadata): Option.Option<MessageMetadata> => {
  if (isEmpty(metadata)) return Option.some(noMetadata)
  return Option.filter(canonicalCopy(metadata), isMetadata)
}

const slice = (messages: MessageLog, start: number, end: number): Array<Message> => messages.slice(start, end, readable)

const notSummary = (message: Message): boolean => message.role !== "summary"

/**
 * The index range `[start, end)` of the turn that holds the message at `index`. It runs back to a
 * user message or to `floor` (the first message after the system prefix), and on to the next user
 * message or to `ceiling`.
 */
export const turnRange = (
  messages: MessageLog,
  index: number,
  floor: number,
  ceiling: number
): readonly [number, number] => {
  let start = index
  while (start > floor && messages.at(start)?.role !== "user") start -= 1
  let end = index + 1
  while (end < ceiling && messages.at(end)?.role !== "user") end += 1
  return [start, end]
}

/** The log over the store's data. */
export const make = ({ find, ref }: State): RepositoryService.Service =>
  RepositoryService.of({
    appendMessages: Effect.fnUntraced(function*(conversationId, newMessages, options) {
      const now = yield* DateTime.now
      const prepared: Array<NewMessage> = []
      for (const message of newMessages) {
        const metadata = canonicalMetadata(message.metadata)
        // The port takes validated metadata: anything else came past the type system.
        if (Option.isNone(metadata)) return yield* Effect.dieMessage("appendMessages: metadata is not MessageMetadata")
        prepared.push({ ...message, metadata: metadata.value })
      }
      const userId = options?.userId
      const appended = yield* Ref.modify(ref, (snapshot): readonly [
        Either.Either<RepositoryService.AppendResult, UserId>,
        Snapshot
      ] => {
        const existing = HashMap.get(snapshot.conversations, conversationId)
        const owner = Option.match(existing, { onNone: () => null, onSome: (c) => c.info.userId })
        if (userId !== undefined && owner !== null && owner !== userId) return [Either.left(owner), snapshot]
        if (newMessages.length === 0) {
          const messageCount = Option.match(existing, { onNone: () => 0, onSome: (c) => c.info.messageCount })
          return [Either.right({ messages: [], messageCount, userId: owner }), snapshot]
        }
        // A conversation starts when its first message was said (`ConversationInfo.createdAt`).
        const start = newMessages[0]?.createdAt ?? now
        // A new conversation takes the next incarnation: never one an earlier life of its id had.
        const incarnations = Option.isSome(existing) ? snapshot.incarnations : snapshot.incarnations + 1
        const current = Option.getOrElse(existing, () => emptyConversation(conversationId, start, incarnations))
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
            userId: owner ?? userId ?? null,
            lastSeq,
            systemPrefixSeq,
            firstTurnRole,
            tokenCount,
            messageCount,
            roleCounts,
            updatedAt: now
          },
          messages: current.messages.append(added),
          lastSaidAt: added.reduce((latest, m) => DateTime.max(latest, m.createdAt), current.lastSaidAt)
        }
        const bound = next.info.userId
        return [
          Either.right({ messages: added.map(readable), messageCount, userId: bound }),
          {
            ...snapshot,
            incarnations,
            conversations: HashMap.set(snapshot.conversations, conversationId, next),
            users: bound === null || owner !== null
              ? snapshot.users
              : HashMap.set(snapshot.users, bound, withConversation(snapshot.users, bound, conversationId))
          }
        ]
      })
      if (Either.isLeft(appended)) {
        return yield* new DataValidationError({
          operation: "RepositoryService.appendMessages",
          path: "userId",
          reason: "the conversation belongs to another user"
        })
      }
      return appended.right
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
      const snapshot = yield* Ref.get(ref)
      const conversation = HashMap.get(snapshot.conversations, conversationId)
      if (Option.isNone(conversation)) {
        if (query.userId === undefined) return yield* new ConversationNotFoundError({ conversationId })
        // A new conversation of the user named: what it starts from, from the same snapshot.
        const fresh = emptyConversation(conversationId, yield* DateTime.now, 0)
        return {
          info: { ...fresh.info, userId: query.userId },
          state: fresh.state,
          settings: Option.getOrElse(HashMap.get(snapshot.settings, conversationId), () => emptySettings),
          system: [],
          after: 0,
          recent: [],
          reachedStart: true,
          user: {
            userId: query.userId,
            facts: liveFacts(snapshot, query.userId),
            digest: entries(snapshot, query.userId, { limit: query.digest ?? 0, exclude: conversationId })
          }
        }
      }
      const { info, messages, state } = conversation.value
      const after = query.after === "cursor" ? Math.max(state.cursor, info.systemPrefixSeq) : info.systemPrefixSeq
      const [start, end] = rangeOf(messages, { after })
      // No round trip to save here: read just the newest messages past the limit, back to a user
      // message.
      const first = windowStart((i) => messages.at(i), start, end, query.tokenLimit).index
      return {
        info,
        state,
        settings: Option.getOrElse(HashMap.get(snapshot.settings, conversationId), () => emptySettings),
        system: slice(messages, 0, messages.indexAfter(info.systemPrefixSeq)),
        after,
        recent: slice(messages, first, end),
        reachedStart: first === start,
        user: info.userId === null ? null : {
          userId: info.userId,
          facts: liveFacts(snapshot, info.userId),
          digest: entries(snapshot, info.userId, { limit: query.digest ?? 0, exclude: conversationId })
        }
      }
    }),

    readTurns: Effect.fnUntraced(function*(conversationId, query) {
      const { info, messages } = yield* find(conversationId)
      const floor = messages.indexAfter(info.systemPrefixSeq)
      const ceiling = query.before === undefined ? messages.size : rangeOf(messages, { before: query.before })[1]
      const limit = query.limit ?? Number.POSITIVE_INFINITY
      // Turn start index → end index, in the order the seqs ask for them.
      const ranges = new Map<number, number>()
      for (const seq of query.seqs) {
        if (ranges.size >= limit) break
        if (!Number.isSafeInteger(seq)) continue
        const index = messages.indexAfter(seq - 1)
        const message = messages.at(index)
        if (index < floor || index >= ceiling || message?.seq !== seq || message.role === "summary") continue
        const [start, end] = turnRange(messages, index, floor, ceiling)
        if (!ranges.has(start)) ranges.set(start, end)
      }
      return [...ranges].sort(([a], [b]) => a - b).map(([start, end]) => slice(messages, start, end).filter(notSummary))
    }),

    deleteConversation: Effect.fnUntraced(function*(conversationId) {
      // Messages and settings go together; the rest lives in the conversation. An id that holds
      // either is found.
      const removed = yield* Ref.modify(
        ref,
        (snapshot): readonly [boolean, Snapshot] => {
          const { conversations, settings, users } = snapshot
          if (!HashMap.has(conversations, conversationId) && !HashMap.has(settings, conversationId)) {
            return [false, snapshot]
          }
          const owner = Option.getOrNull(Option.map(HashMap.get(conversations, conversationId), (c) => c.info.userId))
          return [true, {
            ...snapshot,
            conversations: HashMap.remove(conversations, conversationId),
            settings: HashMap.remove(settings, conversationId),
            users: owner === null ? users : HashMap.modify(users, owner, (user) => ({
              ...user,
              conversations: HashSet.remove(user.conversations, conversationId)
            }))
          }]
        }
      )
      if (!removed) return yield* new ConversationNotFoundError({ conversationId })
    })
  })

/** A conversation before its first message, in its life `incarnation`. */
const emptyConversation = (conversationId: ConversationId, now: DateTime.Utc, incarnation: number): Conversation => ({
  info: {
    conversationId,
    incarnation,
    userId: null,
    factsCursor: 0,
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
  state: initial(conversationId),
  records: Chunk.empty(),
  search: new SearchIndex(),
  vectors: new VectorIndex(),
  lastSaidAt: now
})

/** A user with no facts and no conversation, and an index of its own. */
export const newUser = (): User => ({
  facts: HashMap.empty(),
  conversations: HashSet.empty(),
  search: new UserSearchIndex()
})

/** The user's record with one more conversation. */
const withConversation = (
  users: HashMap.HashMap<UserId, User>,
  userId: UserId,
  conversationId: ConversationId
): User => {
  const user = Option.getOrElse(HashMap.get(users, userId), newUser)
  return { ...user, conversations: HashSet.add(user.conversations, conversationId) }
}
