/**
 * `@effect/ai`'s `Chat.Persistence` over the memory. An app written against `Chat` swaps in this
 * layer and keeps its code.
 *
 * ```ts
 * const persistence = yield* Chat.Persistence
 * const chat = yield* persistence.getOrCreate("conversation-42")
 * const response = yield* chat.generateText({ prompt: line, toolkit: MyToolkit })
 * ```
 *
 * Calls run one at a time per chat id in a process, each in a `Chat` of its own. A call sends the
 * memory's context for its user text (the recall query), then its new messages. The exchange (new
 * messages, the model's answer, tool calls and results) is then stored in one `addMessages`. The
 * whole history is never rewritten, so calls from two processes interleave whole exchanges. New
 * messages the memory would refuse are refused before the model is called. A user message's file
 * parts go to the model, not to the memory, which stores text.
 *
 * A call without a user message (the tool loop's `prompt: []`) continues the turn. It resends what
 * the chat's last call sent and got back, while that exchange is in the stored conversation,
 * whatever other calls stored since. A chat without a last exchange of its own (a fresh
 * `getOrCreate`, another process) gets the memory's context for the conversation's last turn, then
 * that turn whole, read from the log. `streamText` stores its exchange once the model's finish part
 * has come through, even if the consumer stops reading there.
 *
 * `history` holds the memory's context for the chat, without recall. It is refreshed after each
 * call, so it never grows past the budget. `save` stores what the app appended to it. An emptied
 * history clears the conversation, the `Chat` way to start over; other edits are not kept. A chat
 * exists once something of it is stored, so `get` of an unwritten chat fails with
 * `ChatNotFoundError`. A finite time to live is refused: the memory keeps a conversation until it
 * is cleared.
 *
 * @since 0.2.0
 */
import * as Chat from "@effect/ai/Chat"
import * as Prompt from "@effect/ai/Prompt"
import { PersistenceBackingError } from "@effect/experimental/Persistence"
import {
  Array as Arr,
  Channel,
  Chunk,
  DateTime,
  Duration,
  Effect,
  Layer,
  Option,
  RcMap,
  Ref,
  Scope,
  Stream
} from "effect"
import type { Message } from "../domain/Message.js"
import { DataValidationError } from "../errors/DataValidationError.js"
import { ChatMemoryService } from "../services/ChatMemoryService.js"
import type { PromptOptions } from "./ai/ContextPrompt.js"
import { checkInputs, contextPrompt, editOf, kept, userText, withTurn } from "./internal/chatPersistence.js"

/**
 * The options of the layer.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** The context's token budget for each call; the strategy's by default. */
  readonly tokenBudget?: number | undefined
  /** The prompt role of the facts and summary messages (see `ContextPrompt.PromptOptions`). */
  readonly recordRole?: PromptOptions["recordRole"]
  /** The user a chat belongs to, if any. Its context then shows the user's facts. */
  readonly userOf?: ((chatId: string) => string | undefined) | undefined
}

/** A call under way: the `Chat` it runs in, what that chat started with, the app's unsaved additions. */
interface Turn {
  readonly chat: Chat.Service
  readonly initial: Prompt.Prompt
  readonly appended: ReadonlyArray<Prompt.Message>
}

/** What a chat's last call sent and got back, and the last message it stored. */
interface Sent {
  readonly prompt: Prompt.Prompt
  /** The last message it stored. */
  readonly last: Message
}

/** Messages read per page, and at most, to find the start of the turn a call continues. */
const turnPage = 50
const turnBound = 1_000

/** A finite time to live is refused: the memory keeps a conversation until it is cleared. */
const checkTimeToLive = (operation: string, timeToLive: Duration.DurationInput | undefined) =>
  timeToLive === undefined || !Duration.isFinite(Duration.decode(timeToLive))
    ? Effect.void
    : Effect.fail(PersistenceBackingError.make(
      operation,
      new DataValidationError({
        operation,
        path: "options.timeToLive",
        reason: "is not supported by the memory's Chat.Persistence: a conversation is kept until it is " +
          "cleared (empty the chat's history and save it); leave it out"
      })
    ))

/**
 * `Chat.Persistence` over the `ChatMemoryService` in context. `Chat`'s generate methods have no
 * error channel for their store. So a memory failure during a call is a defect carrying the typed
 * error, as in `Chat.makePersisted`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = Effect.fnUntraced(function*(options: Options = {}) {
  const memory = yield* ChatMemoryService
  // One permit per chat id, shared by every chat of that id in this process.
  const locks = yield* RcMap.make({ lookup: (_: string) => Effect.makeSemaphore(1), idleTimeToLive: "1 minute" })

  /** Holds the chat's permit until the scope closes. */
  const acquire = (chatId: string): Effect.Effect<void, never, Scope.Scope> =>
    Effect.flatMap(
      RcMap.get(locks, chatId),
      (semaphore) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.zipRight(restore(semaphore.take(1)), Effect.addFinalizer(() => semaphore.release(1)))
        )
    )

  /** `self` with the chat's permit, in a scope of its own so the app's `Scope` is untouched. */
  const locked = <A, E, R>(chatId: string, self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.acquireUseRelease(
      Scope.make(),
      (scope) => Effect.zipRight(Scope.extend(acquire(chatId), scope), self),
      (scope, exit) => Scope.close(scope, exit)
    )

  const contextFor = (chatId: string, query: string | undefined) =>
    memory.getContext(chatId, { query, tokenBudget: options.tokenBudget, userId: options.userOf?.(chatId) })

  /**
   * The conversation's last turn, from its last user message to the end, read back a page at a
   * time. Empty when the log holds no user message within `turnBound` messages of its end.
   */
  const lastTurn = (chatId: string) =>
    Effect.gen(function*() {
      const userId = options.userOf?.(chatId)
      let after: ReadonlyArray<Message> = []
      let before: number | undefined = undefined
      while (after.length < turnBound) {
        const page: ReadonlyArray<Message> = yield* memory.getMessages(chatId, { limit: turnPage, before, userId })
        const start = Arr.findLastIndex(page, (message) => message.role === "user")
        if (Option.isSome(start)) return [...page.slice(start.value), ...after]
        const first = page[0]
        if (first === undefined || page.length < turnPage) return []
        after = [...page, ...after]
        before = first.seq
      }
      return []
    }).pipe(Effect.catchTag("ConversationNotFoundError", () => Effect.succeed([])))

  const clear = (chatId: string) =>
    memory.clearMessages(chatId).pipe(Effect.catchTag("ConversationNotFoundError", () => Effect.void))

  /** Stores `messages` as the memory keeps them, in one `addMessages`, returning the last stored, if any. */
  const store = (chatId: string, messages: ReadonlyArray<Prompt.Message>) =>
    messages.length === 0
      ? Effect.succeed(Option.none<Message>())
      : Effect.map(
        memory.addMessages(chatId, messages.map(kept), { userId: options.userOf?.(chatId) }),
        (stored) => Option.fromNullable(stored.at(-1))
      )

  /**
   * Whether `previous`, a chat's last exchange, is still in the stored conversation: the log holds
   * the message it stored last, at its seq, as written. A conversation cleared and written again
   * holds another there (or none), whoever cleared it.
   */
  const sameLife = (chatId: string, previous: Sent) =>
    memory.getMessages(chatId, { before: previous.last.seq + 1, limit: 1, userId: options.userOf?.(chatId) }).pipe(
      Effect.map(Arr.some((message) =>
        message.seq === previous.last.seq && message.content === previous.last.content &&
        message.role === previous.last.role && DateTime.Equivalence(message.createdAt, previous.last.createdAt)
      )),
      Effect.catchTag("ConversationNotFoundError", () => Effect.succeed(false))
    )

  const toPersisted = (chatId: string) =>
    Effect.gen(function*() {
      // This `Chat` holds and exports the history. Each call runs in a `Chat` of its own.
      const base = yield* Chat.empty
      const synced = yield* Ref.make(Prompt.empty)
      // Discarded when this chat clears the conversation, or saves: it then continues no exchange.
      const sent = yield* Ref.make(Option.none<Sent>())

      /** Sets `history` to the memory's context for the chat. */
      const refresh = Effect.flatMap(contextFor(chatId, undefined), (context) => {
        const prompt = contextPrompt(context, false, options)
        return Effect.zipRight(Ref.set(synced, prompt), Ref.set(base.history, prompt))
      })

      const editOfHistory = Effect.zipWith(Ref.get(synced), Ref.get(base.history), editOf)

      /**
       * The prompt a call without user message continues. It is what this chat last sent and got
       * back, while that exchange is in the stored conversation: its turn, whatever other calls
       * stored since (its answer is stored after theirs). A chat without one gets the memory's
       * context for the conversation's last turn, then that turn whole, read from the log, even
       * when it is over the budget, since the model must see the calls it made.
       */
      const continued = Effect.gen(function*() {
        const previous = yield* Ref.get(sent)
        if (Option.isSome(previous) && (yield* sameLife(chatId, previous.value))) return previous.value.prompt
        const turn = yield* lastTurn(chatId)
        if (!Arr.isNonEmptyReadonlyArray(turn)) {
          return contextPrompt(yield* contextFor(chatId, undefined), false, options)
        }
        const context = yield* contextFor(chatId, Arr.headNonEmpty(turn).content)
        return contextPrompt(withTurn(context, turn), true, options)
      })

      /**
       * The `Chat` a call runs in: the memory's context for the call's user text, or the turn it
       * continues. The app's unsaved additions to `history` follow and are stored with the exchange.
       */
      const begin = (method: string, raw: Prompt.RawInput) =>
        Effect.gen(function*() {
          const edit = yield* editOfHistory
          const appended = edit._tag === "Appended" ? edit.messages : []
          const added = Prompt.make(raw).content
          yield* checkInputs(`Chat.${method}`, appended, (yield* Ref.get(synced)).content.length, added)
          if (edit._tag === "Cleared") {
            yield* clear(chatId)
            yield* Ref.set(sent, Option.none())
          }
          if (edit._tag === "Rewritten") {
            yield* Effect.logWarning(
              `Chat.${method}: history was changed, not appended to; the memory keeps the conversation as stored`
            ).pipe(Effect.annotateLogs({ chatId }))
          }
          const fresh = [...appended, ...added]
          const start = fresh.some((message) => message.role === "user")
            ? contextPrompt(yield* contextFor(chatId, userText(fresh)), false, options)
            : yield* continued
          const initial = Prompt.merge(start, appended)
          return { chat: yield* Chat.fromPrompt(initial), initial, appended }
        })

      /** Stores the call's exchange in one `addMessages`, then refreshes `history`. */
      const finish = (turn: Turn) =>
        Effect.gen(function*() {
          const after = yield* Ref.get(turn.chat.history)
          const last = yield* store(chatId, [...turn.appended, ...after.content.slice(turn.initial.content.length)])
          yield* Ref.set(sent, Option.map(last, (last) => ({ prompt: after, last })))
          yield* refresh
        })

      /** One call: the chat's permit, its context, the model, the exchange stored. */
      const exchange = <A, E, R>(
        method: string,
        raw: Prompt.RawInput,
        call: (chat: Chat.Service) => Effect.Effect<A, E, R>
      ): Effect.Effect<A, E, R> =>
        locked(
          chatId,
          Effect.gen(function*() {
            const turn = yield* Effect.orDie(begin(method, raw))
            const result = yield* call(turn.chat)
            yield* Effect.orDie(finish(turn))
            return result
          })
        ).pipe(Effect.withSpan(`ChatPersistence.${method}`, { attributes: { chatId } }))

      const save = locked(
        chatId,
        Effect.gen(function*() {
          const edit = yield* editOfHistory
          switch (edit._tag) {
            case "None":
              return
            case "Cleared":
              yield* clear(chatId)
              break
            case "Appended":
              yield* store(chatId, edit.messages)
              break
            case "Rewritten":
              return yield* new DataValidationError({
                operation: "Chat.save",
                path: "history",
                reason: "was changed, not appended to: the memory's log is append-only (empty the history to clear " +
                  "the chat)"
              })
          }
          yield* Ref.set(sent, Option.none())
          yield* refresh
        })
      ).pipe(
        Effect.mapError((error) => PersistenceBackingError.make("Chat.save", error)),
        Effect.withSpan("ChatPersistence.save", { attributes: { chatId } })
      )

      yield* refresh
      const persisted: Chat.Persisted = {
        id: chatId,
        history: base.history,
        export: base.export,
        exportJson: base.exportJson,
        save,
        generateText: (options) => exchange("generateText", options.prompt, (chat) => chat.generateText(options)),
        generateObject: (options) => exchange("generateObject", options.prompt, (chat) => chat.generateObject(options)),
        // The store is the release of the stream's own channel, as `Chat.streamText` sets its history:
        // a stream's finalizer nested in `Stream.unwrap` loses its defect when the consumer stops early.
        streamText: (options) =>
          Stream.fromChannel(Channel.acquireUseRelease(
            // The scope holding the chat's permit, and the call's turn once the finish part came.
            Effect.all({ scope: Scope.make(), finished: Ref.make(Option.none<Turn>()) }),
            ({ finished, scope }) =>
              Stream.toChannel(Stream.unwrap(Effect.gen(function*() {
                yield* Scope.extend(acquire(chatId), scope)
                const turn = yield* Effect.orDie(begin("streamText", options.prompt))
                return turn.chat.streamText(options).pipe(
                  Stream.mapChunksEffect((parts) =>
                    Chunk.some(parts, (part) => part.type === "finish")
                      ? Effect.as(Ref.set(finished, Option.some(turn)), parts)
                      : Effect.succeed(parts)
                  )
                )
              }))),
            // Stored once the finish part has come through, also when the consumer stops reading there;
            // a stream that failed or was interrupted before it stores nothing. This runs after `Chat`
            // has set its history. The permit is given back whatever happened.
            ({ finished, scope }, exit) =>
              Effect.ensuring(
                Effect.flatMap(
                  Ref.get(finished),
                  Option.match({ onNone: () => Effect.void, onSome: (turn) => Effect.orDie(finish(turn)) })
                ),
                Scope.close(scope, exit)
              )
          )).pipe(Stream.withSpan("ChatPersistence.streamText", { attributes: { chatId } }))
      }
      return persisted
    })

  const get = Effect.fn("ChatPersistence.get")(
    function*(chatId: string, options?: { readonly timeToLive?: Duration.DurationInput | undefined }) {
      yield* checkTimeToLive("Chat.Persistence.get", options?.timeToLive)
      const found = yield* memory.getMessages(chatId, { limit: 1 }).pipe(
        Effect.as(true),
        Effect.catchTag("ConversationNotFoundError", () => Effect.succeed(false)),
        Effect.mapError((error) => PersistenceBackingError.make("Chat.Persistence.get", error))
      )
      if (!found) return yield* new Chat.ChatNotFoundError({ chatId })
      return yield* toPersisted(chatId).pipe(
        Effect.mapError((error) => PersistenceBackingError.make("Chat.Persistence.get", error))
      )
    }
  )

  const getOrCreate = Effect.fn("ChatPersistence.getOrCreate")(
    function*(chatId: string, options?: { readonly timeToLive?: Duration.DurationInput | undefined }) {
      yield* checkTimeToLive("Chat.Persistence.getOrCreate", options?.timeToLive)
      // Nothing to create: the conversation starts with its first stored message.
      return yield* toPersisted(chatId).pipe(
        Effect.mapError((error) => PersistenceBackingError.make("Chat.Persistence.getOrCreate", error))
      )
    }
  )

  return Chat.Persistence.of({ get, getOrCreate })
})

/**
 * `Chat.Persistence` over the memory, in place of `Chat.layerPersisted` and its backing.
 *
 * @example
 * ```ts
 * import { Chat } from "@effect/ai"
 * import { Effect, Layer } from "effect"
 * import { ChatMemory } from "effect-chat-memory"
 * import * as ChatPersistence from "effect-chat-memory/ChatPersistence"
 *
 * // The app's code, written against Chat.Persistence, stays as it is.
 * export const reply = (chatId: string, line: string) =>
 *   Effect.gen(function*() {
 *     const chat = yield* (yield* Chat.Persistence).getOrCreate(chatId)
 *     const response = yield* chat.generateText({ prompt: line })
 *     return response.text
 *   })
 *
 * // Before: `Chat.layerPersisted({ storeId: "chats" })` over a key-value backing, the whole history
 * // rewritten on every call. After: the memory's context on each call, each exchange appended once.
 * export const Chats = ChatPersistence.layer({ tokenBudget: 3000, userOf: (chatId) => chatId.split(":")[0] }).pipe(
 *   Layer.provide(ChatMemory.layerConfig())
 * )
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<Chat.Persistence, never, ChatMemoryService> =>
  Layer.scoped(Chat.Persistence, make(options))
