/**
 * What a context shows of the conversation's user: the facts known about the user, and the user's
 * latest other conversations. Each fits its room, counted as the message that carries it.
 */
import { Effect } from "effect"
import type { ContextSettings } from "../../../domain/ContextSettings.js"
import type { ConversationEntry } from "../../../domain/ConversationEntry.js"
import { digestText, userFactsText } from "../../../domain/internal/contextText.js"
import { MemoryContext } from "../../../domain/MemoryContext.js"
import type { UserFact } from "../../../domain/UserFact.js"
import type { UserId } from "../../../domain/UserId.js"
import type { RepositoryService } from "../../../services/RepositoryService.js"
import type { TokenCounter } from "../../../services/TokenCounter.js"

/** The user sections of a context, as shown. */
export interface UserSections {
  readonly userId: UserId
  readonly facts: ReadonlyArray<UserFact>
  readonly digest: ReadonlyArray<ConversationEntry>
  /** Tokens of the two messages that carry them. */
  readonly tokens: number
}

/** How many of the user's other conversations a read lists at most. */
export const digestLimit = 10

/** The shares of the budget a conversation of a user keeps for the user sections. */
type Shares = Pick<ContextSettings, "tokenBudget" | "userFactsTokenBudget" | "digestTokenBudget">

/**
 * The room the planner keeps for the user sections. The turns fold as if the budget were that
 * much smaller, so the sections never push a turn out.
 */
export const userReserve = (settings: Shares, info: Pick<RepositoryService.ConversationInfo, "userId">): number =>
  info.userId === null
    ? 0
    : Math.floor(settings.tokenBudget * (settings.userFactsTokenBudget + settings.digestTokenBudget))

/** The first items, in order, whose message (`render`) takes at most `room` tokens. */
const fitting = <A>(
  counter: TokenCounter.Service,
  items: ReadonlyArray<A>,
  room: number,
  render: (items: ReadonlyArray<A>) => string
) =>
  Effect.gen(function*() {
    if (items.length === 0 || room <= 0) return { items: [], tokens: 0 }
    // Count the lines one by one, the heading with the first. Then count the message as sent,
    // dropping its last lines while it is over.
    let count = 0
    let used = yield* counter.countMessage({ content: render([]) })
    const heading = yield* counter.count(render([]))
    for (const item of items) {
      const line = (yield* counter.count(render([item]))) - heading
      if (used + line > room) break
      used += line
      count += 1
    }
    while (count > 0) {
      const tokens = yield* counter.countMessage({ content: render(items.slice(0, count)) })
      if (tokens <= room) return { items: items.slice(0, count), tokens }
      count -= 1
    }
    return { items: [], tokens: 0 }
  })

/** The user sections within their rooms, the latest facts and conversations first. */
export const userSections = (
  counter: TokenCounter.Service,
  sections: RepositoryService.UserSections,
  rooms: { readonly facts: number; readonly digest: number }
): Effect.Effect<UserSections> =>
  Effect.gen(function*() {
    const facts = yield* fitting(counter, sections.facts, rooms.facts, userFactsText)
    const digest = yield* fitting(counter, sections.digest, rooms.digest, digestText)
    return {
      userId: sections.userId,
      facts: facts.items,
      digest: digest.items,
      tokens: facts.tokens + digest.tokens
    }
  })

/** The rooms of the user sections in a conversation under way: their shares of the budget. */
export const shareRooms = (settings: Shares) => ({
  facts: Math.floor(settings.tokenBudget * settings.userFactsTokenBudget),
  digest: Math.floor(settings.tokenBudget * settings.digestTokenBudget)
})

/** `context` with the user sections before it, counted in its tokens, in the whole `budget`. */
export const withUser = (context: MemoryContext, user: UserSections, budget: number): MemoryContext =>
  new MemoryContext({
    ...context,
    userId: user.userId,
    userFacts: user.facts,
    digest: user.digest,
    tokenCount: context.tokenCount + user.tokens,
    tokenBudget: budget
  }, { disableValidation: true })
