/**
 * The data of the in-memory store, shared by the ports it implements: every conversation (its
 * log, counters, summary state, records, search index and vectors) and the settings, in one `Ref`,
 * so that one update changes all of them together; and how messages are stored and read out.
 */
import type { Chunk, DateTime, HashSet } from "effect"
import { Effect, HashMap, Option, Ref } from "effect"
import type { ConversationId } from "../../../../domain/ConversationId.js"
import type * as ConversationSettings from "../../../../domain/ConversationSettings.js"
import { Message, type MessageMetadata } from "../../../../domain/Message.js"
import type * as SummaryState from "../../../../domain/SummaryState.js"
import type { UserFact } from "../../../../domain/UserFact.js"
import type { UserId } from "../../../../domain/UserId.js"
import { ConversationNotFoundError } from "../../../../errors/ConversationNotFoundError.js"
import type { RepositoryService } from "../../../../services/RepositoryService.js"
import type { MessageLog } from "../log.js"
import type { SearchIndex } from "../searchIndex.js"
import type { UserSearchIndex } from "../userSearchIndex.js"
import type { VectorIndex } from "../vectors.js"

/** Everything the store holds. */
export interface Snapshot {
  readonly conversations: HashMap.HashMap<ConversationId, Conversation>
  /** Kept apart from the conversations: an id may hold settings before its first message. */
  readonly settings: HashMap.HashMap<ConversationId, ConversationSettings.ConversationSettings>
  /** What spans each user's conversations. */
  readonly users: HashMap.HashMap<UserId, User>
  /** The last incarnation given to a conversation (`ConversationInfo.incarnation`). */
  readonly incarnations: number
}

/**
 * A user: the facts known about the user, by key (removals kept), the user's conversations, and
 * the index of their messages, brought up to date when the user's conversations are searched.
 */
export interface User {
  readonly facts: HashMap.HashMap<string, UserFact>
  readonly conversations: HashSet.HashSet<ConversationId>
  readonly search: UserSearchIndex
}

/** One conversation: its log and everything kept beside it, deleted with it. */
export interface Conversation {
  readonly info: RepositoryService.ConversationInfo
  /** Ascending by seq; gaps only where messages were pruned. */
  readonly messages: MessageLog
  readonly state: SummaryState.SummaryState
  readonly records: Chunk.Chunk<SummaryState.SummarizationRecord>
  /** The conversation's search index, brought up to date when it is searched or pruned (`sync`). */
  readonly search: SearchIndex
  /** The conversation's message vectors, by embedding model. */
  readonly vectors: VectorIndex
  /** When its latest message was said: the latest `createdAt` of its messages. */
  readonly lastSaidAt: DateTime.Utc
}

/** The store's data and the reads every port makes of it. */
export interface State {
  readonly ref: Ref.Ref<Snapshot>
  /** The conversation, or `ConversationNotFoundError`. */
  readonly find: (conversationId: ConversationId) => Effect.Effect<Conversation, ConversationNotFoundError>
  /** Runs `f` on the conversation's current snapshot (synchronously); none when it does not exist. */
  readonly withConversation: <A>(
    conversationId: ConversationId,
    f: (conversation: Conversation) => A
  ) => Effect.Effect<Option.Option<A>>
  /**
   * The conversation's search index, brought up to the current snapshot; none for a conversation
   * that does not exist. Syncing is synchronous, so no other fiber sees a half-updated index.
   */
  readonly indexed: (conversationId: ConversationId) => Effect.Effect<Option.Option<SearchIndex>>
}

/** An empty store. */
export const make: Effect.Effect<State> = Effect.map(
  Ref.make<Snapshot>({
    conversations: HashMap.empty(),
    settings: HashMap.empty(),
    users: HashMap.empty(),
    incarnations: 0
  }),
  (ref): State => {
    const withConversation = <A>(conversationId: ConversationId, f: (conversation: Conversation) => A) =>
      Effect.flatMap(
        Ref.get(ref),
        ({ conversations }) => Effect.sync(() => Option.map(HashMap.get(conversations, conversationId), f))
      )
    return {
      ref,
      find: (conversationId) =>
        Effect.flatMap(
          Ref.get(ref),
          ({ conversations }) =>
            Option.match(HashMap.get(conversations, conversationId), {
              onNone: () => Effect.fail(new ConversationNotFoundError({ conversationId })),
              onSome: Effect.succeed
            })
        ),
      withConversation,
      indexed: (conversationId) =>
        withConversation(conversationId, (conversation) => {
          conversation.search.sync(conversation.messages, conversation.info.systemPrefixSeq)
          return conversation.search
        })
    }
  }
)

/** No messages of any role. */
export const noMessages: RepositoryService.PerRole = { system: 0, user: 0, assistant: 0, tool: 0, summary: 0 }

/** The metadata of most messages: none, shared by them, and frozen so that no reader can add to it. */
export const noMetadata: MessageMetadata = Object.freeze({})

/** Most messages carry no metadata: then there is nothing to canonicalise or clone. */
export const isEmpty = (metadata: MessageMetadata): boolean =>
  metadata === noMetadata || Object.keys(metadata).length === 0

/**
 * A message as stored, and as readers get it: frozen, so that a stored message is shared with
 * every reader without a copy and no reader can change it (`Reflect.set` fails). The store's
 * metadata objects are never given out (see `readable`).
 */
export const stored = (message: Message): Message => Object.freeze(message)

/**
 * A message as a reader gets it: the stored message itself when it has no metadata, otherwise a
 * copy with its own copy of the metadata (mutable JSON), so that no caller can change what is
 * stored by changing what it read (the SQL stores build fresh objects from each row, too).
 */
export const readable = (message: Message): Message =>
  isEmpty(message.metadata) ? message : new Message({
    conversationId: message.conversationId,
    seq: message.seq,
    role: message.role,
    content: message.content,
    metadata: structuredClone(message.metadata),
    tokenCount: message.tokenCount,
    createdAt: message.createdAt
  }, { disableValidation: true })
