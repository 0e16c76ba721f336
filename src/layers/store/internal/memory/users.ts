/**
 * The in-memory store's user port (`UserStore`): the facts about each user, and the reads and
 * writes that span a user's conversations.
 */
import { DateTime, Effect, HashMap, Option, Ref } from "effect"
import type { ConversationId } from "../../../../domain/ConversationId.js"
import { UserErasure } from "../../../../domain/UserErasure.js"
import type { UserFact } from "../../../../domain/UserFact.js"
import type { UserId } from "../../../../domain/UserId.js"
import { MergeResult, UserStore } from "../../../../services/UserStore.js"
import { clampLimit } from "../search.js"
import { clampScan } from "../vectors.js"
import { newUser, turnRange } from "./conversations.js"
import { type Conversation, readable, type Snapshot, type State } from "./state.js"
import { entries, liveFacts, sortedByRecency } from "./userViews.js"

/** Whether `fact` replaces `current`: said later, or at the same time and merged later. */
const replaces = (fact: UserFact, current: UserFact | undefined): boolean =>
  current === undefined || !DateTime.lessThan(fact.saidAt, current.saidAt)

/** The conversation if it exists and is the user's. */
const ownConversation = (snapshot: Snapshot, userId: UserId, conversationId: ConversationId) =>
  Option.filter(HashMap.get(snapshot.conversations, conversationId), (c) => c.info.userId === userId)

/** The user port over the store's data. */
export const make = ({ ref }: State): UserStore.Service =>
  UserStore.of({
    getFacts: (userId) => Effect.map(Ref.get(ref), (snapshot) => liveFacts(snapshot, userId)),

    mergeFacts: (userId, facts, cursor) =>
      Ref.modify(ref, (snapshot): readonly [UserStore.MergeResult, Snapshot] => {
        let conversations = snapshot.conversations
        if (cursor !== undefined) {
          const conversation = ownConversation(snapshot, userId, cursor.conversationId)
          if (
            Option.isNone(conversation) || conversation.value.info.factsCursor !== cursor.expected ||
            (cursor.incarnation !== undefined && conversation.value.info.incarnation !== cursor.incarnation)
          ) {
            return [MergeResult.Stale(), snapshot]
          }
          conversations = HashMap.set(conversations, cursor.conversationId, {
            ...conversation.value,
            info: { ...conversation.value.info, factsCursor: cursor.next }
          })
        }
        const user = Option.getOrElse(HashMap.get(snapshot.users, userId), newUser)
        let known = user.facts
        const applied: Array<UserFact> = []
        for (const fact of facts) {
          if (!replaces(fact, Option.getOrUndefined(HashMap.get(known, fact.key)))) continue
          known = HashMap.set(known, fact.key, fact)
          applied.push(fact)
        }
        return [
          MergeResult.Merged({ applied }),
          { ...snapshot, conversations, users: HashMap.set(snapshot.users, userId, { ...user, facts: known }) }
        ]
      }),

    listConversations: (userId, query) =>
      Effect.map(Ref.get(ref), (snapshot) =>
        entries(snapshot, userId, {
          limit: Math.max(0, Math.min(1000, Math.floor(query.limit))),
          before: query.before,
          after: query.after,
          factsPending: query.factsPending
        })),

    searchMessages: (userId, query) =>
      Effect.map(Ref.get(ref), (snapshot) =>
        Option.match(HashMap.get(snapshot.users, userId), {
          onNone: () => [],
          // Synced with this snapshot, synchronously: no other fiber sees a half-updated index.
          onSome: (user) => user.search.search(sortedByRecency(snapshot, userId), query)
        })),

    searchEmbeddings: (userId, query) =>
      Effect.map(Ref.get(ref), (snapshot) => {
        // Each conversation's nearest among its newest seqs, the latest said first, until `scanLimit`
        // seqs are covered. Ties keep that order, then go to the newer seq.
        const hits: Array<UserStore.SearchHit & { readonly rank: number }> = []
        let room = clampScan(query.scanLimit)
        for (const [rank, conversation] of sortedByRecency(snapshot, userId).entries()) {
          if (room <= 0) break
          const { conversationId, lastSeq } = conversation.info
          const before = conversationId === query.current?.conversationId ? query.current.before : Infinity
          for (const hit of conversation.vectors.search({ ...query, before, after: lastSeq - room })) {
            hits.push({ conversationId, seq: hit.seq, score: hit.score, rank })
          }
          room -= lastSeq
        }
        return hits.sort((x, y) => y.score - x.score || x.rank - y.rank || y.seq - x.seq)
          .slice(0, clampLimit(query.limit))
          .map(({ conversationId, score, seq }) => ({ conversationId, seq, score }))
      }),

    readTurns: (userId, query) =>
      Effect.map(Ref.get(ref), (snapshot) => {
        const seen = new Set<string>()
        const turns: Array<UserStore.ConversationTurn> = []
        for (const hit of query.hits) {
          if (turns.length >= query.limit) break
          const conversation = ownConversation(snapshot, userId, hit.conversationId)
          if (Option.isNone(conversation) || !Number.isSafeInteger(hit.seq)) continue
          const turn = turnOf(conversation.value, hit.seq)
          if (turn === undefined || seen.has(`${hit.conversationId}\u0000${turn.start}`)) continue
          seen.add(`${hit.conversationId}\u0000${turn.start}`)
          turns.push({ conversationId: hit.conversationId, messages: turn.messages })
        }
        return turns
      }),

    erase: (userId) =>
      Ref.modify(ref, (snapshot): readonly [UserErasure, Snapshot] => {
        const found = HashMap.get(snapshot.users, userId)
        if (Option.isNone(found)) {
          return [new UserErasure({ userId, conversations: 0, messages: 0, facts: 0 }), snapshot]
        }
        const user = found.value
        let conversations = snapshot.conversations
        let settings = snapshot.settings
        let count = 0
        let messages = 0
        for (const id of user.conversations) {
          const conversation = ownConversation(snapshot, userId, id)
          if (Option.isNone(conversation)) continue
          count += 1
          messages += conversation.value.info.messageCount
          conversations = HashMap.remove(conversations, id)
          settings = HashMap.remove(settings, id)
        }
        // Facts that hold: a removal is kept as a fact without a value, and is not one.
        let facts = 0
        for (const fact of HashMap.values(user.facts)) if (fact.value !== null) facts += 1
        const erasure = new UserErasure({ userId, conversations: count, messages, facts })
        return [erasure, { ...snapshot, conversations, settings, users: HashMap.remove(snapshot.users, userId) }]
      })
  })

/** The whole turn holding message `seq` of the conversation, past its leading system messages. */
const turnOf = (conversation: Conversation, seq: number) => {
  const { info, messages } = conversation
  const index = messages.indexAfter(seq - 1)
  const message = messages.at(index)
  const floor = messages.indexAfter(info.systemPrefixSeq)
  if (index < floor || message?.seq !== seq || message.role === "summary") return undefined
  const [start, end] = turnRange(messages, index, floor, messages.size)
  return { start, messages: messages.slice(start, end, readable).filter((m) => m.role !== "summary") }
}
