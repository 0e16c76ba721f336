/**
 * Searching a conversation's past by turns. The index finds the messages that match a query. Each
 * is widened to its whole turn, tool calls with their results, in one read of the log.
 */
import { Effect } from "effect"
import type { ConversationId } from "../../../domain/ConversationId.js"
import { MaxQueryLength } from "../../../domain/internal/recall.js"
import { wordPairs } from "../../../domain/internal/searchTerms.js"
import { groupTurns } from "../../../domain/internal/turns.js"
import type { Message } from "../../../domain/Message.js"
import { RecalledTurn } from "../../../domain/RecalledTurn.js"
import { type Turn } from "../../../domain/Turn.js"
import type { UserId } from "../../../domain/UserId.js"
import type { RepositoryError } from "../../../errors/RepositoryError.js"
import type { MessageIndex } from "../../../services/MessageIndex.js"
import type { RepositoryService } from "../../../services/RepositoryService.js"
import type { UserStore } from "../../../services/UserStore.js"
import {
  asks,
  asksWhen,
  dateBoost,
  neighbourWeight,
  phraseShare,
  phraseWeight,
  statesDate,
  withoutFrame
} from "./ranking.js"

/** How far around a hit the first read of its turn reaches, in messages each way. */
const firstReach = 16

/**
 * The whole turn that holds message `seq`, within `(0, bound)`. Undefined when the message is gone
 * or in no turn, like a summary record. Reads further when the turn reaches past what was read.
 */
const turnAt = (
  repository: RepositoryService.Service,
  conversationId: ConversationId,
  seq: number,
  bound: number
) =>
  Effect.gen(function*() {
    let back = firstReach
    let ahead = firstReach
    for (let attempt = 0; attempt < 4; attempt++) {
      const after = Math.max(0, seq - back)
      const before = Math.min(bound, seq + ahead + 1)
      const messages = yield* repository.listMessages(conversationId, { after, before })
      const grouped = groupTurns(messages, { partial: after > 0 })
      const index = grouped.turns.findIndex((turn) => turn.firstSeq <= seq && seq <= turn.lastSeq)
      const turn = grouped.turns[index]
      if (turn === undefined || turn.messages.every((message) => message.seq !== seq)) return undefined
      const whole = (index > 0 || grouped.firstTurnComplete) && (index < grouped.turns.length - 1 || before >= bound)
      if (whole) return turn
      if (index === 0 && !grouped.firstTurnComplete) back *= 4
      if (index === grouped.turns.length - 1 && before < bound) ahead *= 4
    }
    return undefined
  })

const toRecalled = (
  turn: Turn,
  score: number,
  conversationId: ConversationId | undefined
): RecalledTurn | undefined => {
  const first = turn.messages[0]
  return first === undefined ? undefined : new RecalledTurn({
    ...(conversationId === undefined ? {} : { conversationId }),
    fromSeq: turn.firstSeq,
    toSeq: turn.lastSeq,
    createdAt: first.createdAt,
    score,
    messages: turn.messages,
    tokenCount: turn.tokenCount
  }, { disableValidation: true })
}

/**
 * Whether a turn read by `readTurns` is a turn as `groupTurns` cuts the log: every tool result
 * answers a call of the turn, and every call is answered in it. Otherwise a user message fell
 * between a call and its result, and the turn reaches further.
 */
const selfContained = (messages: ReadonlyArray<Message>): boolean => {
  const calls = new Set<string>()
  const answered = new Set<string>()
  for (const message of messages) {
    for (const call of message.metadata.toolCalls ?? []) calls.add(call.id)
    const answers = message.role === "tool" ? message.metadata.toolCallId : undefined
    if (answers === undefined) continue
    if (!calls.has(answers)) return false
    answered.add(answers)
  }
  return answered.size === calls.size
}

/** What a search of turns asks. */
export interface TurnsQuery {
  readonly query: string
  /** Only turns of the current conversation that end before this seq. */
  readonly before: number
  readonly limit: number
  /** `false`: by words only, even on an index that also searches by meaning. */
  readonly meaning?: boolean | undefined
}

/** A message found, in the conversation it was said in. */
interface Hit {
  readonly conversationId: ConversationId
  readonly seq: number
  readonly score: number
}

/** A turn read, in the conversation it was said in. */
interface TurnRead {
  readonly conversationId: ConversationId
  readonly messages: ReadonlyArray<Message>
}

/**
 * Where turns are searched: one conversation, or every conversation of its user. The current
 * conversation is searched only below `before`.
 */
export interface Source {
  readonly search: (text: string, limit: number) => Effect.Effect<ReadonlyArray<Hit>, RepositoryError>
  /** The whole turns that hold the named messages. The current conversation's are cut at `before`. */
  readonly readTurns: (
    refs: ReadonlyArray<{ readonly conversationId: ConversationId; readonly seq: number }>,
    limit: number
  ) => Effect.Effect<ReadonlyArray<TurnRead>, RepositoryError>
}

/** Turns of one conversation: its index and its log. */
export const conversationSource = (
  repository: RepositoryService.Service,
  index: MessageIndex.Service,
  conversationId: ConversationId,
  options: { readonly before: number; readonly meaning?: boolean | undefined }
): Source => ({
  search: (text, limit) =>
    options.before <= 1 ? Effect.succeed([]) : Effect.map(
      index.searchMessages(conversationId, {
        text,
        before: options.before,
        limit,
        ...(options.meaning === undefined ? {} : { meaning: options.meaning })
      }),
      (hits) => hits.map((hit) => ({ conversationId, seq: hit.seq, score: hit.score }))
    ),
  readTurns: (refs, limit) =>
    repository.readTurns(conversationId, { seqs: refs.map((ref) => ref.seq), before: options.before, limit }).pipe(
      Effect.map((turns) => turns.map((messages) => ({ conversationId, messages }))),
      Effect.catchTag("ConversationNotFoundError", () => Effect.succeed([]))
    )
})

/**
 * Turns of every conversation of a user, in one search and one read. The current conversation's
 * are cut at `before`; the others' are whole.
 */
export const userSource = (
  users: UserStore.Service,
  userId: UserId,
  conversationId: ConversationId | undefined,
  options: { readonly before: number; readonly meaning?: boolean | undefined }
): Source => ({
  search: (text, limit) =>
    users.searchMessages(userId, {
      text,
      limit,
      ...(conversationId === undefined ? {} : { current: { conversationId, before: options.before } }),
      ...(options.meaning === undefined ? {} : { meaning: options.meaning })
    }),
  readTurns: (refs, limit) =>
    Effect.map(users.readTurns(userId, { hits: refs, limit }), (turns) =>
      turns.flatMap((turn) => {
        if (turn.conversationId !== conversationId) return [turn]
        const messages = turn.messages.filter((message) => message.seq < options.before)
        return messages.length === 0 ? [] : [{ conversationId, messages }]
      }))
})

/**
 * The turns from `source` that best match `query`, best first, at most `limit`. Only the query's
 * first `MaxQueryLength` characters count. Each hit is widened to its whole turn. A turn hit twice
 * counts once, with its best score. A turn of another conversation is labelled with its id.
 *
 * The source searches the query without a frame like "when did I tell you". The hits' turns, and
 * the turn after each, come from one read. A turn split by a user message between a tool call and
 * its result is read again around its hit. The turns are then ranked again, the same on every
 * store (`ranking.ts`):
 * - for a question asking when, a turn that states a date or a time weighs `1 + dateBoost` times;
 * - a turn that leaves its matter to the next one brings it, at `neighbourWeight` times its score;
 * - a turn that holds pairs of the query's words in their order weighs up to `1 + phraseWeight` times.
 */
export const searchTurns = (
  repository: RepositoryService.Service,
  source: Source,
  conversationId: ConversationId | undefined,
  options: TurnsQuery
): Effect.Effect<Array<RecalledTurn>, RepositoryError> =>
  Effect.gen(function*() {
    if (options.query.trim().length === 0 || options.limit < 1) return []
    const text = withoutFrame(options.query.slice(0, MaxQueryLength))
    const hits = yield* source.search(text, Math.min(100, options.limit * 3))
    if (hits.length === 0) return []
    // Each hit's turn and the turn after it, in one read. A turn that only asks is answered by the
    // next one.
    const read = yield* source.readTurns(
      hits.flatMap((
        hit
      ) => [hit, ...neighbourSeqs(hit.seq).map((seq) => ({ conversationId: hit.conversationId, seq }))]),
      options.limit * 3
    )
    // The hits' turns, each once with its best score. A dated turn ranks first for a "when" question.
    const when = asksWhen(options.query)
    const pairs = wordPairs(text)
    const ranked: Array<{ readonly turn: Turn; readonly at: number; readonly score: number }> = []
    const holds = (other: { readonly turn: Turn; readonly at: number }, hit: Hit) =>
      read[other.at]?.conversationId === hit.conversationId && other.turn.firstSeq <= hit.seq &&
      hit.seq <= other.turn.lastSeq
    for (const hit of hits) {
      if (ranked.some((item) => holds(item, hit))) continue
      const at = read.findIndex((turn) =>
        turn.conversationId === hit.conversationId && turn.messages.some((message) => message.seq === hit.seq)
      )
      const found = read[at]
      if (found === undefined) continue
      const bound = hit.conversationId === conversationId ? options.before : Number.MAX_SAFE_INTEGER
      const turn = selfContained(found.messages)
        ? groupTurns(found.messages).turns[0]
        : yield* turnAt(repository, hit.conversationId, hit.seq, bound).pipe(
          Effect.catchTag("ConversationNotFoundError", () => Effect.succeed(undefined))
        )
      if (turn === undefined || ranked.some((other) => sameTurn(read, other, at, turn))) continue
      ranked.push({ turn, at, score: when && statesDate(turn) ? hit.score * (1 + dateBoost) : hit.score })
    }
    // A turn that holds the query's words in order grows. Only turns that could then reach the
    // first `limit` are read for it.
    const floor = ranked.map(({ score }) => score).sort((x, y) => y - x)[options.limit - 1] ?? 0
    const phrased = pairs.length === 0 ? ranked : ranked.map((item) =>
      item.score * (1 + phraseWeight) < floor
        ? item
        : { ...item, score: item.score * (1 + phraseWeight * phraseShare(item.turn, pairs)) }
    )
    // The turn after one that asks joins it, scored below it.
    const candidates: Array<{ readonly turn: Turn; readonly at: number; readonly score: number }> = [...phrased]
    for (const { at, score, turn } of phrased) {
      const next = asks(turn) ? adjacent(read, at, turn.lastSeq) : undefined
      if (next !== undefined) candidates.push({ turn: next.turn, at: next.at, score: score * neighbourWeight })
    }
    candidates.sort((x, y) => y.score - x.score)
    const found: Array<RecalledTurn> = []
    for (const { at, score, turn } of candidates) {
      if (found.length >= options.limit) break
      const from = read[at]?.conversationId
      const recalled = toRecalled(turn, score, from === conversationId ? undefined : from)
      if (recalled !== undefined && !found.some((other) => overlaps(other, recalled))) found.push(recalled)
    }
    return found
  })

/**
 * The seqs read besides a hit's: the two after it. In a plain chat, they reach the next turn
 * whichever message of its turn the hit is.
 */
const neighbourSeqs = (seq: number): ReadonlyArray<number> => [seq + 1, seq + 2]

/**
 * The turn read right after the one at `index` in its conversation. It must start right after the
 * seq `edge`, or with one summary message between.
 */
const adjacent = (
  read: ReadonlyArray<TurnRead>,
  index: number,
  edge: number
): { readonly turn: Turn; readonly at: number } | undefined => {
  const conversationId = read[index]?.conversationId
  for (let at = 0; at < read.length; at++) {
    const candidate = read[at]
    if (candidate === undefined || candidate.conversationId !== conversationId || !selfContained(candidate.messages)) {
      continue
    }
    const turn = groupTurns(candidate.messages).turns[0]
    if (turn !== undefined && turn.firstSeq - edge >= 1 && turn.firstSeq - edge <= 2) return { turn, at }
  }
  return undefined
}

/** Whether a ranked turn and `turn`, read at `at`, overlap in one conversation. */
const sameTurn = (
  read: ReadonlyArray<TurnRead>,
  other: { readonly turn: Turn; readonly at: number },
  at: number,
  turn: Turn
): boolean =>
  read[other.at]?.conversationId === read[at]?.conversationId && other.turn.firstSeq <= turn.lastSeq &&
  turn.firstSeq <= other.turn.lastSeq

const overlaps = (a: RecalledTurn, b: RecalledTurn): boolean =>
  a.conversationId === b.conversationId && a.fromSeq <= b.toSeq && b.fromSeq <= a.toSeq
