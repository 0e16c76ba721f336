/**
 * Searching a conversation's past by turns: what `ChatMemoryService.searchMemory`, the recall
 * toolkit and a context's recalled block are made of. The store finds the messages that match a
 * query (`MessageIndex.searchMessages`, or a ranking over it); each is widened to its whole turn (a
 * tool call with its results), all of them read from the log in one read
 * (`RepositoryService.readTurns`).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { ConversationId } from "../domain/ConversationId.js"
import type { Message } from "../domain/Message.js"
import { MaxQueryLength, RecalledTurn } from "../domain/Recall.js"
import { groupTurns, type Turn } from "../domain/Turn.js"
import type { RepositoryError } from "../errors/RepositoryError.js"
import type { MessageIndex } from "../services/MessageIndex.js"
import type { RepositoryService } from "../services/RepositoryService.js"

/** How far around a hit the first read of its turn reaches, in messages each way. */
const firstReach = 16

/**
 * The whole turn that holds message `seq`, from the messages around it, within `(0, bound)`;
 * undefined when the message is not part of a turn (a summary record) or is gone. Reads further
 * when the turn reaches past what was read.
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

/**
 * How a search finds messages: the store's `searchMessages` or a ranking over it.
 *
 * @since 0.1.0
 * @category models
 */
export type MessageSearch = (
  conversationId: ConversationId,
  query: MessageIndex.SearchQuery
) => Effect.Effect<ReadonlyArray<MessageIndex.SearchHit>, RepositoryError>

const toRecalled = (turn: Turn, score: number): RecalledTurn | undefined => {
  const first = turn.messages[0]
  return first === undefined ? undefined : new RecalledTurn({
    fromSeq: turn.firstSeq,
    toSeq: turn.lastSeq,
    createdAt: first.createdAt,
    score,
    messages: turn.messages,
    tokenCount: turn.tokenCount
  }, { disableValidation: true })
}

/**
 * Whether the messages of a turn read by `RepositoryService.readTurns` are a turn as `groupTurns`
 * cuts the log: every tool result answers a call of the turn, and every call is answered in it.
 * Otherwise a user message fell between a call and its result, and the turn reaches further.
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

/**
 * The turns that end before `before` and best match `query` (its first `MaxQueryLength`
 * characters), best first, at most `limit`: each message hit is widened to its whole turn, and a
 * turn hit twice counts once, with its best score. An unknown conversation has none. The messages
 * are found by `search`: the store's lexical search (`MessageIndex.searchMessages`), or hybrid
 * recall's fusion of it with a search by meaning. The hits' turns come from one read of the log
 * (`RepositoryService.readTurns`); a turn whose tool call and result a user message separates is
 * read again around its hit, as `groupTurns` cuts it.
 *
 * @since 0.1.0
 * @category search
 */
export const searchTurns = (
  repository: RepositoryService.Service,
  conversationId: ConversationId,
  options: { readonly query: string; readonly before: number; readonly limit: number },
  search: MessageSearch
): Effect.Effect<Array<RecalledTurn>, RepositoryError> =>
  Effect.gen(function*() {
    if (options.before <= 1 || options.query.trim().length === 0 || options.limit < 1) return []
    const hits = yield* search(conversationId, {
      text: options.query.slice(0, MaxQueryLength),
      before: options.before,
      limit: Math.min(100, options.limit * 3)
    })
    if (hits.length === 0) return []
    const read = yield* repository.readTurns(conversationId, {
      seqs: hits.map((hit) => hit.seq),
      before: options.before,
      limit: options.limit
    }).pipe(Effect.catchTag("ConversationNotFoundError", () => Effect.succeed([])))
    const found: Array<RecalledTurn> = []
    for (const hit of hits) {
      if (found.length >= options.limit) break
      if (found.some((turn) => turn.fromSeq <= hit.seq && hit.seq <= turn.toSeq)) continue
      const messages = read.find((turn) => turn.some((message) => message.seq === hit.seq))
      if (messages === undefined) continue
      const turn = selfContained(messages)
        ? groupTurns(messages).turns[0]
        : yield* turnAt(repository, conversationId, hit.seq, options.before).pipe(
          Effect.catchTag("ConversationNotFoundError", () => Effect.succeed(undefined))
        )
      const recalled = turn === undefined ? undefined : toRecalled(turn, hit.score)
      if (recalled !== undefined && !found.some((other) => overlaps(other, recalled))) found.push(recalled)
    }
    return found
  })

const overlaps = (a: RecalledTurn, b: RecalledTurn): boolean => a.fromSeq <= b.toSeq && b.fromSeq <= a.toSeq
