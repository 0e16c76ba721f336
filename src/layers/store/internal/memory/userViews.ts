/**
 * What the in-memory store's reads show of a user: the facts known, the user's conversations by
 * recency, and their entries as a list shows them. Each is worked out once per value it reads (a
 * set of facts, a snapshot, a conversation value), since every context of the user reads them.
 */
import { DateTime, HashMap, Option } from "effect"
import { ConversationEntry } from "../../../../domain/ConversationEntry.js"
import type { ConversationId } from "../../../../domain/ConversationId.js"
import { leadingCodePoints } from "../../../../domain/internal/utf8.js"
import type { UserFact } from "../../../../domain/UserFact.js"
import type { UserId } from "../../../../domain/UserId.js"
import type { Conversation, Snapshot } from "./state.js"

/** Each set of facts, sorted: a set never changes, and every context of the user reads it. */
const sortedFacts = new WeakMap<HashMap.HashMap<string, UserFact>, ReadonlyArray<UserFact>>()

/** The facts about the user not removed, the latest said first (ties: by key). */
export const liveFacts = (snapshot: Snapshot, userId: UserId): ReadonlyArray<UserFact> => {
  const user = HashMap.get(snapshot.users, userId)
  if (Option.isNone(user)) return []
  const known = sortedFacts.get(user.value.facts)
  if (known !== undefined) return known
  const facts: Array<UserFact> = []
  for (const fact of HashMap.values(user.value.facts)) if (fact.value !== null) facts.push(fact)
  facts.sort((a, b) =>
    DateTime.toEpochMillis(b.saidAt) - DateTime.toEpochMillis(a.saidAt) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
  )
  sortedFacts.set(user.value.facts, facts)
  return facts
}

/** The longest `ConversationEntry.about`. */
const aboutLength = 200

/** What a conversation was about: the start of its first user message. */
const aboutOf = (conversation: Conversation): string => {
  const messages = conversation.messages
  for (let i = 0; i < messages.size; i++) {
    const message = messages.at(i)
    if (message?.role === "user") return leadingCodePoints(message.content, aboutLength)
  }
  return ""
}

/**
 * Each snapshot's users' conversations, the latest said first. A snapshot never changes, and a
 * user-scoped context reads the order twice (recall and digest).
 */
const recency = new WeakMap<Snapshot, Map<UserId, ReadonlyArray<Conversation>>>()

/**
 * The user's conversations, the latest said first (ties: by id): the same array for the same
 * snapshot, so a reader can tell an unchanged snapshot by it.
 */
export const sortedByRecency = (snapshot: Snapshot, userId: UserId): ReadonlyArray<Conversation> => {
  let users = recency.get(snapshot)
  if (users === undefined) {
    users = new Map()
    recency.set(snapshot, users)
  }
  const cached = users.get(userId)
  if (cached !== undefined) return cached
  const user = HashMap.get(snapshot.users, userId)
  const found: Array<{ readonly conversation: Conversation; readonly at: number }> = []
  if (Option.isSome(user)) {
    for (const id of user.value.conversations) {
      const conversation = HashMap.get(snapshot.conversations, id)
      if (Option.isNone(conversation) || conversation.value.info.userId !== userId) continue
      found.push({ conversation: conversation.value, at: DateTime.toEpochMillis(conversation.value.lastSaidAt) })
    }
  }
  const sorted = found.sort((a, b) =>
    b.at - a.at || (a.conversation.info.conversationId < b.conversation.info.conversationId ? -1 : 1)
  ).map(({ conversation }) => conversation)
  users.set(userId, sorted)
  return sorted
}

/** Where a page of a user's conversations starts: after this one, in the order they are listed. */
export interface After {
  readonly lastSaidAt: DateTime.Utc
  readonly conversationId: ConversationId
}

/** Whether `conversation` is listed after `after`: said before it, or at the same time with a later id. */
const listedAfter = (conversation: Conversation, after: After): boolean => {
  const at = conversation.lastSaidAt.epochMillis
  return at < after.lastSaidAt.epochMillis ||
    (at === after.lastSaidAt.epochMillis && conversation.info.conversationId > after.conversationId)
}

/**
 * The user's conversations, the latest said first (ties: by id). With `before`, those said before
 * it; with `after`, those listed after it.
 */
const byRecency = (
  snapshot: Snapshot,
  userId: UserId,
  query: {
    readonly before?: DateTime.Utc | undefined
    readonly after?: After | undefined
    readonly exclude?: ConversationId
    readonly factsPending?: boolean | undefined
  } = {}
): ReadonlyArray<Conversation> =>
  sortedByRecency(snapshot, userId).filter((conversation) =>
    conversation.info.conversationId !== query.exclude &&
    (query.factsPending !== true || conversation.info.factsCursor < conversation.info.lastSeq) &&
    (query.before === undefined || DateTime.lessThan(conversation.lastSaidAt, query.before)) &&
    (query.after === undefined || listedAfter(conversation, query.after))
  )

/** Each conversation value's entry: a value never changes, and every context of its user lists it. */
const listed = new WeakMap<Conversation, ConversationEntry>()

/** The user's conversations, the latest said first (ties: by id), as a list shows them. */
export const entries = (
  snapshot: Snapshot,
  userId: UserId,
  query: {
    readonly limit: number
    readonly before?: DateTime.Utc | undefined
    readonly after?: After | undefined
    readonly exclude?: ConversationId
    readonly factsPending?: boolean | undefined
  }
): ReadonlyArray<ConversationEntry> => {
  if (query.limit <= 0) return []
  return byRecency(snapshot, userId, query).slice(0, query.limit).map((conversation) => {
    const known = listed.get(conversation)
    if (known !== undefined) return known
    const entry = new ConversationEntry({
      conversationId: conversation.info.conversationId,
      userId,
      startedAt: conversation.info.createdAt,
      lastSaidAt: conversation.lastSaidAt,
      messageCount: conversation.info.messageCount,
      about: aboutOf(conversation)
    }, { disableValidation: true })
    listed.set(conversation, entry)
    return entry
  })
}
