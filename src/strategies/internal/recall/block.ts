/**
 * A context with recall: the archived turns that best match the current query, whole and
 * verbatim, after the recent turns within a share of the budget. The block's room comes from what
 * the context leaves, and from the oldest shown turns the summary covers, never the newest K. So
 * recall never opens a gap. The context is assembled once.
 */
import { Clock, Effect } from "effect"
import type { ConversationId } from "../../../domain/ConversationId.js"
import { recalledHeading, turnLabel } from "../../../domain/internal/recall.js"
import { messageLine } from "../../../domain/internal/transcript.js"
import { groupTurns, messagesOf } from "../../../domain/internal/turns.js"
import { MemoryContext } from "../../../domain/MemoryContext.js"
import type { Message } from "../../../domain/Message.js"
import { type RecalledTurn } from "../../../domain/RecalledTurn.js"
import { type Turn } from "../../../domain/Turn.js"
import type { RepositoryService } from "../../../services/RepositoryService.js"
import type { TokenCounter } from "../../../services/TokenCounter.js"
import { withLabels } from "../dates.js"
import * as Metrics from "../metrics.js"
import { searchTurns, type Source } from "./search.js"

/** What recall needs from a strategy: how to build its context within a budget. */
export interface RecallSettings {
  readonly query: string
  /** The budget of the whole context, recalled block included. */
  readonly budget: number
  /** The share of `budget` the recalled block may take. */
  readonly share: number
  /** Turns the recent part keeps whenever they fit. Recall never takes their room. */
  readonly minTurns: number
  /** At most this many recalled turns. */
  readonly limit: number
  /** Where turns are found, given the seq below which the current conversation is searched. */
  readonly source: (before: number) => Source
}

/**
 * A context with recall. The strategy's context is built once, in the whole budget, with its
 * whole policy and fallbacks. Then the best matches before the kept turns come back, best first,
 * while the block fits its room. The room is at most `share` of the budget. It comes from what
 * the context leaves and from the oldest shown turns the summary covers. It never takes one of the
 * newest `minTurns`, nor a shown turn the search ranks above a candidate (see `pick`). Just enough
 * covered turns make way for the block. Turns the summary does not cover stay shown: recall never
 * omits a turn. Without a match, the context is the one the whole budget gives.
 *
 * The block is not tokenized again: its tokens are bounded from its messages' stored counts
 * (`blockTokens`).
 */
export const withRecall = <E>(
  repository: RepositoryService.Service,
  counter: TokenCounter.Service,
  conversationId: ConversationId,
  settings: RecallSettings,
  build: Effect.Effect<MemoryContext, E>
): Effect.Effect<MemoryContext, E | RepositoryService.Errors> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const base = yield* build
    const reserve = Math.floor(settings.share * settings.budget)
    const free = settings.budget - base.tokenCount
    const grouped = groupTurns(base.recent).turns
    // The turns that may make way for the block: the oldest shown, covered by the shown summary
    // or facts, and not among the newest `minTurns`.
    let covered = 0
    while (
      (base.summary !== null || base.facts.length > 0) && covered < grouped.length - settings.minTurns &&
      (grouped[covered]?.lastSeq ?? Number.POSITIVE_INFINITY) <= base.summarizedUpTo
    ) covered += 1
    // Counted as the context counted them, with their date labels when it shows them.
    const shown = base.dated && covered > 0
      ? [...(yield* withLabels(grouped.slice(0, covered), counter.count)), ...grouped.slice(covered)]
      : grouped
    let recalled: ReadonlyArray<RecalledTurn> = []
    let blockTokens = 0
    if (Math.min(reserve, free + sumTokens(shown.slice(0, covered))) > 0) {
      const before = shown[covered]?.firstSeq ?? Number.MAX_SAFE_INTEGER
      const found = yield* searchTurns(repository, settings.source(before), conversationId, {
        query: settings.query,
        before,
        limit: settings.limit
      })
      const picked = yield* pick(counter, found, { shown, movable: covered, free, reserve })
      recalled = picked.turns
      blockTokens = picked.tokens
    }
    const dropped = dropFor(shown, free, blockTokens)
    yield* Metrics.recallLatency(Effect.succeed((yield* Clock.currentTimeMillis) - started))
    yield* Metrics.recalledTurns(Effect.succeed(recalled.length))
    return new MemoryContext({
      ...base,
      recent: dropped === 0 ? base.recent : messagesOf(shown.slice(dropped)),
      tokenCount: base.tokenCount - sumTokens(shown.slice(0, dropped)) + blockTokens,
      turnsShown: base.turnsShown - dropped,
      turnsCovered: base.turnsCovered - dropped,
      recalled,
      recalledTokens: blockTokens
    }, { disableValidation: true })
  })

const sumTokens = (turns: ReadonlyArray<Turn>): number => turns.reduce((sum, turn) => sum + turn.tokenCount, 0)

// Every line break a message's line may hold. `messageLine` indents the line after each.
const lineBreak = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g

/** A message's line without its content and tool calls: the speaker, e.g. `Assistant (mini): `. */
const speakerOf = (message: Message): string =>
  messageLine({
    ...message,
    content: "",
    metadata: {
      ...(message.metadata.modelVariant === undefined ? {} : { modelVariant: message.metadata.modelVariant }),
      ...(message.metadata.toolName === undefined ? {} : { toolName: message.metadata.toolName })
    }
  })

/**
 * The line breaks of a message's line: its content's, and those JSON leaves in its tool calls'
 * params (U+2028, U+2029).
 */
const lineBreaks = (message: Message): number => {
  let breaks = message.content.match(lineBreak)?.length ?? 0
  for (const call of message.metadata.toolCalls ?? []) {
    breaks += JSON.stringify(call.params).match(lineBreak)?.length ?? 0
  }
  return breaks
}

/**
 * A bound on the tokens one recalled turn adds to the block. No stored message is tokenized again.
 * The bound is the sum of:
 * - its frame (label and speakers), counted as one short text;
 * - each message's stored count: its content, its tool calls as JSON (shown shorter in the
 *   block), and `MessageOverhead` for the line break and joins around it;
 * - a token per line break of a message's line, as the block indents the line after each;
 * - 1 for the blank line before the turn.
 */
const turnTokens = (counter: TokenCounter.Service, turn: RecalledTurn): Effect.Effect<number> => {
  let stored = 1
  const frame = [turnLabel(turn)]
  for (const message of turn.messages) {
    stored += message.tokenCount + lineBreaks(message)
    frame.push(speakerOf(message))
  }
  return Effect.map(counter.count(frame.join("\n")), (tokens) => tokens + stored)
}

/**
 * The tokens of the block of `turns`: each turn's `turnTokens`, plus its heading as a message.
 * `countMessage(recalledText(turns))` never exceeds it. That holds exactly for the approximate
 * counter, whose count of a text is at most the sum of its parts'. It is tested on the exact counter.
 */
export const blockTokens = (
  counter: TokenCounter.Service,
  turns: ReadonlyArray<RecalledTurn>
): Effect.Effect<number> =>
  Effect.gen(function*() {
    let tokens = yield* counter.countMessage({ content: recalledHeading(turns) })
    for (const turn of turns) tokens += yield* turnTokens(counter, turn)
    return tokens
  })

/** How many of the oldest shown turns make way for a block of `tokens`, as few as will do. */
const dropFor = (shown: ReadonlyArray<Turn>, free: number, tokens: number): number => {
  let dropped = 0
  let room = free
  while (tokens > 0 && room < tokens && dropped < shown.length) room += shown[dropped++]?.tokenCount ?? 0
  return dropped
}

/**
 * The block: the candidates best first, each kept only if the block still fits with it. So a long
 * turn does not stop shorter ones after it. The block must fit `reserve`, and what the context
 * leaves plus the oldest `movable` shown turns. A candidate the context shows stays there. No
 * turn from it on makes way for a worse candidate, so a better match is never pushed out. A
 * candidate that earlier picks pushed out joins the block like any other.
 */
const pick = (
  counter: TokenCounter.Service,
  candidates: ReadonlyArray<RecalledTurn>,
  context: {
    readonly shown: ReadonlyArray<Turn>
    readonly movable: number
    readonly free: number
    readonly reserve: number
  }
) =>
  Effect.gen(function*() {
    const { free, reserve, shown } = context
    const turns: Array<RecalledTurn> = []
    if (candidates.length === 0) return { turns, tokens: 0 }
    const heading = yield* counter.countMessage({ content: recalledHeading(candidates) })
    let tokens = heading
    let movable = context.movable
    for (const candidate of candidates) {
      // A turn of another conversation is never one of those shown.
      const at = candidate.conversationId !== undefined
        ? -1
        : shown.findIndex((turn) => turn.firstSeq <= candidate.toSeq && candidate.fromSeq <= turn.lastSeq)
      if (at >= dropFor(shown, free, turns.length === 0 ? 0 : tokens)) {
        movable = Math.min(movable, at)
        continue
      }
      const next = tokens + (yield* turnTokens(counter, candidate))
      if (next > reserve || next > free + sumTokens(shown.slice(0, movable))) continue
      turns.push(candidate)
      tokens = next
    }
    return { turns, tokens: turns.length === 0 ? 0 : tokens }
  })
