/**
 * A context with recall: the archived turns that best match the current query, whole and
 * verbatim, added after the recent turns within a share of the budget taken from them (never below
 * K turns).
 */
import { Clock, Effect } from "effect"
import type { ConversationId } from "../../../domain/ConversationId.js"
import { MemoryContext } from "../../../domain/MemoryContext.js"
import { recalledText, type RecalledTurn } from "../../../domain/Recall.js"
import type { RepositoryService } from "../../../services/RepositoryService.js"
import type { TokenCounter } from "../../../services/TokenCounter.js"
import { type MessageSearch, searchTurns } from "../../Recall.js"
import * as Metrics from "../metrics.js"

/** What recall needs from a strategy: how to build its context within a budget. */
export interface RecallSettings {
  readonly query: string
  /** The budget of the whole context, recalled block included. */
  readonly budget: number
  /** The share of `budget` recall may take from the recent turns. */
  readonly share: number
  /** Turns the recent part keeps whenever they fit: recall never takes their room. */
  readonly minTurns: number
  /** At most this many recalled turns. */
  readonly limit: number
  /** How messages are found: the store's lexical search, or hybrid recall's fusion of it. */
  readonly search: MessageSearch
}

/**
 * A context with recall: the strategy's context built in what recall leaves, then the turns that
 * best match the query and lie before the recent turns shown, best first while the block fits.
 * Room recall does not use goes back to the recent turns (a second build, from which recalled
 * turns now shown are dropped). Without a match the context is the one the whole budget gives.
 */
export const withRecall = <E>(
  repository: RepositoryService.Service,
  counter: TokenCounter.Service,
  conversationId: ConversationId,
  settings: RecallSettings,
  builders: {
    /** The strategy's context in a budget, with its whole policy (fallbacks included). */
    readonly build: (budget: number) => Effect.Effect<MemoryContext, E>
    /** The same, assembled again in another budget (no fallback run twice). */
    readonly rebuild: (budget: number) => Effect.Effect<MemoryContext, E>
  }
): Effect.Effect<MemoryContext, E | RepositoryService.Errors> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const reserve = Math.floor(settings.share * settings.budget)
    const { build, rebuild } = builders
    let base = yield* build(settings.budget - reserve)
    if (base.turnsShown < settings.minTurns && reserve > 0) {
      // The newest K turns did not fit beside the reserve: they win over recall.
      const whole = yield* rebuild(settings.budget)
      if (whole.turnsShown > base.turnsShown) base = whole
    }
    const firstShown = base.recent[0]?.seq ?? Number.MAX_SAFE_INTEGER
    // The block never takes more than its share, nor room the context already uses.
    const room = Math.min(reserve, settings.budget - base.tokenCount)
    const candidates = room <= 0 ? [] : yield* searchTurns(repository, conversationId, {
      query: settings.query,
      before: firstShown,
      limit: settings.limit
    }, settings.search)
    const picked = yield* pick(counter, candidates, room)
    let context = base
    let recalled = picked.turns
    if (picked.tokens < settings.budget - base.tokenCount) {
      // Give what recall left unused back to the recent turns.
      const wider = yield* rebuild(settings.budget - picked.tokens)
      const widerFirst = wider.recent[0]?.seq ?? Number.MAX_SAFE_INTEGER
      if (wider.tokenCount + picked.tokens <= settings.budget) {
        context = wider
        recalled = picked.turns.filter((turn) => turn.toSeq < widerFirst)
      }
    }
    const blockTokens = recalled.length === picked.turns.length
      ? picked.tokens
      : recalled.length === 0
      ? 0
      : yield* counter.countMessage({ content: recalledText(recalled) })
    yield* Metrics.recallLatency(Effect.succeed((yield* Clock.currentTimeMillis) - started))
    yield* Metrics.recalledTurns(Effect.succeed(recalled.length))
    return new MemoryContext({
      ...context,
      tokenBudget: settings.budget,
      tokenCount: context.tokenCount + blockTokens,
      recalled,
      recalledTokens: blockTokens
    }, { disableValidation: true })
  })

/**
 * The best candidates whose block fits `room` tokens: taken best first, each kept only if the
 * block with it still fits (so a long turn does not stop shorter ones after it).
 */
const pick = (counter: TokenCounter.Service, candidates: ReadonlyArray<RecalledTurn>, room: number) =>
  Effect.gen(function*() {
    let turns: Array<RecalledTurn> = []
    let tokens = 0
    for (const candidate of candidates) {
      const next = [...turns, candidate]
      const nextTokens = yield* counter.countMessage({ content: recalledText(next) })
      if (nextTokens > room) continue
      turns = next
      tokens = nextTokens
    }
    return { turns, tokens }
  })
