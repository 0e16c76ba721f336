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
  Either,
  Layer,
  Option,
  ParseResult,
  RcMap,
  Ref,
  Schema,
  Scope,
  Stream
} from "effect"
import { MemoryContext } from "../domain/MemoryContext.js"
import type { Message } from "../domain/Message.js"
import { DataValidationError } from "../errors/DataValidationError.js"
import { formatPath } from "../errors/internal/decode.js"
import { ChatMemoryService, MaxInputsPerCall, MaxMessagesPerCall } from "../services/ChatMemoryService.js"
import { type PromptOptions, toPromptMessages } from "./ai/ContextPrompt.js"
import { MessageInputs } from "./ai/MessageInputs.js"

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

/** What the app did to `history` since the memory last set it. */
type Edit =
  | { readonly _tag: "None" }
  | { readonly _tag: "Cleared" }
  | { readonly _tag: "Appended"; readonly messages: ReadonlyArray<Prompt.Message> }
  | { readonly _tag: "Rewritten" }

const sameMessage = (a: Prompt.Message | undefined, b: Prompt.Message | undefined): boolean =>
  a === b || JSON.stringify(a) === JSON.stringify(b)

const editOf = (synced: Prompt.Prompt, history: Prompt.Prompt): Edit => {
  if (history === synced) return { _tag: "None" }
  if (history.content.length === 0) return synced.content.length === 0 ? { _tag: "None" } : { _tag: "Cleared" }
  if (history.content.length < synced.content.length) return { _tag: "Rewritten" }
  for (let i = 0; i < synced.content.length; i++) {
    if (!sameMessage(synced.content[i], history.content[i])) return { _tag: "Rewritten" }
  }
  return history.content.length === synced.content.length
    ? { _tag: "None" }
    : { _tag: "Appended", messages: history.content.slice(synced.content.length) }
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

/**
 * A message as the memory keeps it. The memory stores text, so a user message's file parts are
 * left out. A message of files alone keeps a note of each, so that its turn keeps its user message.
 */
const kept = (message: Prompt.Message): Prompt.Message => {
  if (message.role !== "user" || !message.content.some((part) => part.type === "file")) return message
  const texts = message.content.flatMap((part) => (part.type === "text" ? [part] : []))
  const notes = message.content.flatMap((part) =>
    part.type === "file" ? [Prompt.makePart("text", { text: `[a file, ${part.mediaType}, not kept]` })] : []
  )
  return Prompt.makeMessage("user", { content: texts.length > 0 ? texts : notes })
}

const decodeInputs = Schema.decodeUnknownEither(
  MessageInputs({ maxMessages: MaxMessagesPerCall, maxInputs: MaxInputsPerCall }),
  { errors: "first", onExcessProperty: "error" }
)

/**
 * Refuses, before the model is called, the new messages `addMessages` would refuse after it: the
 * app's unsaved additions to `history` (from index `at`), then the prompt's messages. The error
 * names the field where the app wrote it.
 */
const checkInputs = (
  operation: string,
  appended: ReadonlyArray<Prompt.Message>,
  at: number,
  added: ReadonlyArray<Prompt.Message>
): Effect.Effect<void, DataValidationError> =>
  Either.match(decodeInputs([...appended, ...added].map(kept)), {
    onRight: () => Effect.void,
    onLeft: (error) => {
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
      const path = issue?.path ?? []
      const [index, ...rest] = path
      return Effect.fail(
        new DataValidationError({
          operation,
          path: typeof index !== "number"
            ? formatPath(path, "prompt")
            : formatPath(
              rest,
              index < appended.length ? `history[${at + index}]` : `prompt[${index - appended.length}]`
            ),
          reason: issue?.message ?? "is invalid"
        })
      )
    }
  })

/** The text of the user messages among `messages`, if any: the recall query of a call. */
const userText = (messages: ReadonlyArray<Prompt.Message>): string | undefined => {
  const texts = messages.flatMap((message) =>
    message.role === "user" ? message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])) : []
  )
  return texts.length === 0 ? undefined : texts.join("\n")
}

/**
 * The context as a prompt. The recalled block is rendered last, before a new user message. A call
 * that continues a turn gets it before the turn's user message instead. The turn's tool calls,
 * their results and the call's new messages then stay together at the end.
 */
const contextPrompt = (context: MemoryContext, continuing: boolean, options: Options): Prompt.Prompt => {
  const messages = toPromptMessages(context, { recordRole: options.recordRole })
  const recalled = context.recalled.length > 0 && continuing ? messages.pop() : undefined
  if (recalled === undefined) return Prompt.make(messages)
  const recentStart = messages.length - context.recent.filter((message) => message.role !== "summary").length
  let at = messages.length
  for (let i = messages.length - 1; i >= recentStart && at === messages.length; i--) {
    if (messages[i]?.role === "user") at = i
  }
  messages.splice(at, 0, recalled)
  return Prompt.make(messages)
}

/**
 * The context with the turn a call continues shown whole, last. What the context showed of the
 * turn is left out of `recent` and `recalled`, so nothing is sent twice. A turn the context left
 * out no longer counts as omitted, so the omission note does not name it.
 */
const withTurn = (context: MemoryContext, turn: Arr.NonEmptyReadonlyArray<Message>): MemoryContext => {
  const start = Arr.headNonEmpty(turn).seq
  const shown = context.recent.some((message) => message.seq >= start)
  const omitted = shown ? [] : turn.filter((message) => message.seq > context.summarizedUpTo)
  return new MemoryContext({
    ...context,
    recent: [...context.recent.filter((message) => message.seq < start), ...turn],
    recalled: context.recalled.filter((recalled) => recalled.conversationId !== undefined || recalled.toSeq < start),
    turnsOmitted: omitted.length > 0 ? Math.max(0, context.turnsOmitted - 1) : context.turnsOmitted,
    messagesOmitted: Math.max(0, context.messagesOmitted - omitted.length)
  })
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
