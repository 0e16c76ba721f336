/**
 * `replay`: feeds a transcript to the memory turn by turn, as an agent would. After each turn it
 * waits for background summarization, and with recall on, asks the context with the next user
 * message as its query. Then it shows the next context and what the memory holds and cost.
 * `--json` prints the figures turn by turn, for scripts and tests. The strategy is recorded with
 * the conversation, for `context` and `inspect`. If the summarizer's breaker opens, the rest of
 * the transcript is stored and the replay ends with an error that says why.
 */
import { Clock, Console, Effect, Option, type Queue, Schema } from "effect"
import { relative } from "node:path"
import { fileURLToPath } from "node:url"
import { ConversationId } from "../domain/ConversationId.js"
import { ConversationStats } from "../domain/ConversationStats.js"
import { MemoryContext } from "../domain/MemoryContext.js"
import type { MemoryEvent } from "../domain/MemoryEvent.js"
import type { Message, MessageInput } from "../domain/Message.js"
import { UserId } from "../domain/UserId.js"
import { isAppendOnly } from "../layers/ai/internal/prefix.js"
import type * as ChatMemoryConfig from "../layers/ChatMemoryConfig.js"
import * as ChatMemoryLive from "../layers/ChatMemoryLive.js"
import { ChatMemoryService } from "../services/ChatMemoryService.js"
import { check } from "./Errors.js"
import * as Progress from "./Progress.js"
import * as Report from "./Report.js"
import * as Settings from "./Settings.js"
import { breakerOpened, type Stopped, summarizerStopped } from "./SummarizerStopped.js"
import * as Transcript from "./Transcript.js"

/** The conversation `npm start` replays. */
export const defaultTranscript = fileURLToPath(new URL("../../examples/conversation.jsonl", import.meta.url))

/** What the context held after one turn: enough to check the budget and the last K turns. */
interface TurnRecord {
  /** The conversation the turn was added to, and the turn's number in it. */
  readonly conversationId: string
  readonly turn: number
  readonly lastSeq: number
  readonly contextTokens: number
  readonly turnsShown: number
  readonly turnsCovered: number
  readonly turnsOmitted: number
  readonly omissionAnnounced: boolean
  readonly messagesOmitted: number
  readonly summarizedUpTo: number
  readonly summaryTruncated: boolean
  readonly systemCount: number
  readonly systemTokens: number
  readonly recentFromSeq: number | null
  readonly recentToSeq: number | null
  readonly recentCount: number
  /** The first seq of the last K turns, and their tokens. */
  readonly lastKFromSeq: number
  readonly lastKTokens: number
  /** Whether the context ends with the last K turns exactly as they were added. */
  readonly lastKVerbatim: boolean
  readonly prefixVersion: string
  /** Whether the rendered prompt only appends to the previous turn's. False on the first turn. */
  readonly appendOnly: boolean
  /** Turns recalled for the query, the next user message, and the tokens they take. */
  readonly turnsRecalled: number
  readonly recalledTokens: number
}

/** Whether `recent` ends with exactly the messages `fromSeq..` of `added`, unchanged. */
const endsVerbatim = (recent: ReadonlyArray<Message>, added: ReadonlyArray<Message>, fromSeq: number): boolean => {
  const expected = added.filter((m) => m.seq >= fromSeq)
  const shown = recent.filter((m) => m.seq >= fromSeq)
  return expected.length === shown.length &&
    expected.every((m, i) => shown[i]?.seq === m.seq && shown[i]?.role === m.role && shown[i]?.content === m.content)
}

const mean = (values: ReadonlyArray<number>): number =>
  values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length

/** A conversation of the transcript: the id it is stored under, and its turns. */
interface Conversation {
  readonly conversationId: string
  readonly turns: ReadonlyArray<ReadonlyArray<MessageInput>>
}

const feed = (
  { conversationId, turns }: Conversation,
  userId: string | undefined,
  kRawTurns: number,
  events: Queue.Dequeue<MemoryEvent>,
  recall: boolean,
  progress: { readonly tracker: Progress.Progress; readonly before: number }
) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const user = { userId }
    const added: Array<Message> = []
    const turnStarts: Array<number> = []
    const turnTokens: Array<number> = []
    let systemTokens = 0
    let leading = true
    const records: Array<TurnRecord> = []
    let previous: MemoryContext | undefined
    let stopped: Stopped | undefined
    for (const [i, turn] of turns.entries()) {
      if (stopped !== undefined) {
        // The summarizer is paused. Store the rest as it comes, without waiting for summaries.
        yield* memory.addMessages(conversationId, turn.map(Transcript.toInput), user)
        continue
      }
      const stored = yield* memory.addMessages(conversationId, turn.map(Transcript.toInput), user)
      let tokens = 0
      for (const message of stored) {
        added.push(message)
        leading = leading && message.role === "system"
        if (leading) {
          systemTokens += message.tokenCount
          continue
        }
        if (turnStarts.length === i) turnStarts.push(message.seq)
        tokens += message.tokenCount
      }
      turnTokens.push(tokens)
      yield* memory.awaitIdle(conversationId)
      // With recall, the context is asked as an agent asks it, with the next user message as query.
      const next = recall ? turns[i + 1]?.find((message) => message.role === "user")?.content : undefined
      const context = yield* memory.getContext(conversationId, next === undefined ? user : { query: next, userId })
      const lastK = Math.max(0, i + 1 - kRawTurns)
      const lastKFromSeq = turnStarts[lastK] ?? added[added.length - 1]?.seq ?? 0
      records.push({
        conversationId,
        turn: i + 1,
        lastSeq: added[added.length - 1]?.seq ?? 0,
        contextTokens: context.tokenCount,
        turnsShown: context.turnsShown,
        turnsCovered: context.turnsCovered,
        turnsOmitted: context.turnsOmitted,
        omissionAnnounced: context.omissionAnnounced,
        messagesOmitted: context.messagesOmitted,
        summarizedUpTo: context.summarizedUpTo,
        summaryTruncated: context.summaryTruncated,
        systemCount: context.system.length,
        systemTokens,
        recentFromSeq: context.recent[0]?.seq ?? null,
        recentToSeq: context.recent[context.recent.length - 1]?.seq ?? null,
        recentCount: context.recent.length,
        lastKFromSeq,
        lastKTokens: turnTokens.slice(lastK).reduce((n, t) => n + t, 0),
        lastKVerbatim: endsVerbatim(context.recent, added, lastKFromSeq),
        prefixVersion: context.prefixVersion,
        appendOnly: previous !== undefined && isAppendOnly(previous, context),
        turnsRecalled: context.recalled.length,
        recalledTokens: context.recalledTokens
      })
      previous = context
      yield* progress.tracker.tick(progress.before + i + 1)
      const opened = yield* breakerOpened(events)
      if (Option.isSome(opened)) stopped = { turn: i + 1, event: opened.value }
    }
    yield* memory.awaitIdle(conversationId)
    // An event of the last turn may still be on its way: events reach subscribers asynchronously.
    yield* Effect.yieldNow()
    const late = stopped === undefined ? yield* breakerOpened(events) : Option.none()
    if (Option.isSome(late)) stopped = { turn: turns.length, event: late.value }
    return { records, stopped }
  })

/** Clears what an earlier replay left under the same id in a persistent store. */
const startOver = (conversationId: string) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const stats = yield* Effect.option(
      memory.stats(conversationId).pipe(Effect.catchTag("ConversationNotFoundError", () => Effect.fail(undefined)))
    )
    if (Option.isNone(stats)) return
    yield* memory.clearMessages(conversationId)
    yield* Console.error(
      `replay: cleared the earlier conversation "${conversationId}" (${stats.value.messagesStored} messages)`
    )
  })

const run = (
  path: string,
  messages: number,
  conversations: ReadonlyArray<Conversation>,
  userId: string | undefined,
  json: boolean,
  options: ChatMemoryConfig.Options
) =>
  Effect.gen(function*() {
    const turnCount = conversations.reduce((n, c) => n + c.turns.length, 0)
    const configuration = Settings.describe(options)
    const kRawTurns = configuration.kRawTurns ?? 1
    const memory = yield* ChatMemoryService
    // Checked before anything is cleared: a bad id must not cost the earlier replay.
    if (userId !== undefined) yield* check(UserId, "--user", userId)
    for (const { conversationId } of conversations) yield* check(ConversationId, "conversation id", conversationId)
    for (const { conversationId } of conversations) {
      yield* startOver(conversationId)
      // Recorded, so `context` and `inspect` read the conversation with the strategy that wrote it.
      const settings = yield* memory.getSettings(conversationId)
      yield* memory.setSettings(conversationId, yield* Settings.withStrategy(settings, configuration.strategy))
    }
    const started = yield* Clock.currentTimeMillis
    const tracker = yield* Progress.make("replay", turnCount, "turns")
    const records: Array<TurnRecord> = []
    let stopped: Stopped | undefined
    for (const conversation of conversations) {
      if (stopped !== undefined) {
        // The summarizer is paused. The rest is stored without waiting for summaries.
        for (const turn of conversation.turns) {
          yield* memory.addMessages(conversation.conversationId, turn.map(Transcript.toInput), { userId })
        }
        continue
      }
      const fed = yield* Effect.scoped(
        Effect.flatMap(memory.subscribe, (events) =>
          feed(conversation, userId, kRawTurns, events, configuration.recall !== "off", {
            tracker,
            before: records.length
          }))
      )
      records.push(...fed.records)
      if (fed.stopped !== undefined) {
        stopped = { ...fed.stopped, turn: records.length }
      }
    }
    yield* tracker.finish
    const last = conversations[conversations.length - 1]?.conversationId ?? "replay"
    if (stopped !== undefined) {
      const stats = yield* memory.stats(last)
      return yield* Effect.flatMap(
        summarizerStopped(stopped, options, last, {
          turns: turnCount,
          messagesStored: stats.messagesStored,
          summarizedUpTo: stats.summarizedUpTo
        }),
        Effect.fail
      )
    }
    const conversationId = last
    const perTurn = records
    const elapsedMs = (yield* Clock.currentTimeMillis) - started
    const context = yield* memory.getContext(conversationId, { userId })
    const stats = yield* memory.stats(conversationId)
    const largest = Math.max(
      0,
      ...perTurn.map((t) =>
        t.contextTokens
      )
    )
    // The last K turns must be there whenever they fit beside the leading system messages.
    const budget = configuration.tokenBudget
    const fitting = perTurn.filter((t) => budget === null || t.systemTokens + t.lastKTokens <= budget)
    const verbatim = fitting.filter((t) => t.lastKVerbatim).length
    const tooLarge = perTurn.length - fitting.length
    const prefixKept = perTurn.filter((t, i) => i > 0 && t.prefixVersion === perTurn[i - 1]?.prefixVersion).length
    const omittedAt = perTurn.filter((t) => t.turnsOmitted > 0).length
    const shownPath = relative(process.cwd(), path) || path
    const summarizes = configuration.strategy === "summarization" || configuration.strategy === "hierarchical"
    if (json) {
      // The memory built both values from valid parts, so encoding them cannot fail.
      const encodedStats = yield* Effect.orDie(Schema.encode(ConversationStats)(stats))
      const encodedContext = yield* Effect.orDie(Schema.encode(MemoryContext)(context))
      return yield* Console.log(JSON.stringify(
        {
          transcript: shownPath,
          conversationId,
          userId: userId ?? null,
          conversations: conversations.map((c) => c.conversationId),
          configuration,
          budget: configuration.tokenBudget,
          kRawTurns,
          turns: turnCount,
          messages,
          elapsedMs,
          largestContextTokens: largest,
          turnsOmitted: context.turnsOmitted,
          prefixKept,
          stats: encodedStats,
          perTurn,
          context: encodedContext
        },
        null,
        2
      ))
    }
    yield* Console.log(`Context for the next model call (${Report.contextLine(context)}):\n`)
    yield* Console.log(Report.context(context))
    const k = Settings.optionName(Settings.variables.kRawTurns)
    const budgetFlag = Settings.optionName(Settings.variables.tokenBudget)
    yield* Console.log("\nSettings:")
    yield* Console.log(Report.table(Settings.rows(options)))
    yield* Console.log("\nFigures:")
    yield* Console.log(Report.table([
      [
        "transcript",
        `${shownPath} (${turnCount} turns, ${messages} messages` +
        (conversations.length > 1 ? `, ${conversations.length} conversations; the context is the last one's)` : ")")
      ],
      ...(userId === undefined ? [] : [["user", userId] as const]),
      ["messages stored", stats.messagesStored],
      ["tokens stored", stats.tokensStored],
      [
        "context now",
        `${stats.contextTokens} of ${context.tokenBudget ?? "unbounded"} tokens (${budgetFlag}); ` +
        `the largest at any turn: ${largest}`
      ],
      ["tokens stored per context token", Report.ratio(stats.compressionRatio)],
      ...(summarizes
        ? [
          ["summaries made", stats.summarizations] as const,
          [
            "summarizer tokens",
            `${stats.summarizerInputTokens} read, ${stats.summarizerOutputTokens} written`
          ] as const,
          [
            "summary covers",
            `messages up to #${stats.summarizedUpTo}; ${stats.lagMessages} newer messages (${stats.lagTokens} tokens) ` +
            "not summarized yet"
          ] as const
        ]
        : []),
      ["turns shown now", stats.turnsShown],
      [
        "turns left out",
        `${stats.turnsOmitted} now (neither shown nor summarized); ` +
        (omittedAt === 0
          ? `none after any of the ${perTurn.length} turns`
          : `some after ${omittedAt} of the ${perTurn.length} turns`)
      ],
      ...(summarizes && configuration.recall !== "off"
        ? [
          [
            "older turns recalled",
            `${mean(perTurn.map((t) => t.turnsRecalled)).toFixed(1)} a turn on average (${
              mean(perTurn.map((t) => t.recalledTokens)).toFixed(0)
            } tokens), searched for with the next user message`
          ] as const
        ]
        : []),
      ...(summarizes
        ? [
          [
            "prompt only added to",
            `at ${prefixKept} of ${Math.max(0, perTurn.length - 1)} turns (what a provider's prompt cache reuses; ` +
            `${Settings.optionName(Settings.variables.view)} stable keeps it longer)`
          ] as const,
          [
            "summaries cut to the cap",
            `${stats.summariesTruncated} (over ${configuration.summaryTokenCap} tokens even when asked again; ` +
            `${Settings.optionName(Settings.variables.summaryTokenCap)})`
          ] as const
        ]
        : []),
      [
        "newest turns shown word for word",
        `the last ${kRawTurns} (${k}), after ${verbatim} of the ${fitting.length} turns where they fit the budget` +
        (tooLarge === 0 ? "" : ` (${tooLarge} too large to fit)`)
      ],
      ["time", `${Report.duration(elapsedMs)} (${(elapsedMs / Math.max(1, perTurn.length)).toFixed(1)} ms a turn)`]
    ]))
  })

/** What `replay` was asked. */
export interface Input {
  readonly transcript: Option.Option<string>
  readonly conversation: string
  readonly user: Option.Option<string>
  readonly json: boolean
  readonly flags: Settings.Flags
}

/** The user a transcript of several conversations is replayed as, unless `--user` names one. */
export const defaultUser = "replay-user"

/**
 * `replay`: reads the transcript, then feeds it to the memory. Bad input fails before the store
 * opens. A transcript of several conversations is stored as conversations of one user, each under
 * `<conversation>-<its name>`.
 */
export const replay = ({ conversation, flags, json, transcript, user }: Input) =>
  Effect.gen(function*() {
    const options = yield* Settings.resolve(flags)
    const path = Option.getOrElse(transcript, () => defaultTranscript)
    const entries = yield* Transcript.readEntries(path)
    const turns = Transcript.conversationTurnsOf(entries)
    const several = turns.some((turn) => turn.conversation !== null)
    const conversations: Array<Conversation> = []
    for (const turn of turns) {
      const conversationId = turn.conversation === null ? conversation : `${conversation}-${turn.conversation}`
      const current = conversations[conversations.length - 1]
      if (current?.conversationId === conversationId) {
        conversations[conversations.length - 1] = { conversationId, turns: [...current.turns, turn.messages] }
      } else conversations.push({ conversationId, turns: [turn.messages] })
    }
    const userId = Option.getOrElse(user, () => several ? defaultUser : undefined)
    yield* run(path, entries.length, conversations, userId, json, options).pipe(
      Effect.provide(ChatMemoryLive.layer(options))
    )
  })
