/**
 * Cutting a run of messages into turns, as the memory cuts the log: never between a tool call and
 * its result.
 */
import type { Message } from "../Message.js"
import type { Turn } from "../Turn.js"

const makeTurn = (messages: ReadonlyArray<Message>): Turn => {
  let tokenCount = 0
  for (const message of messages) tokenCount += message.tokenCount
  return {
    messages,
    tokenCount,
    firstSeq: messages[0]?.seq ?? 0,
    lastSeq: messages[messages.length - 1]?.seq ?? 0
  }
}

/**
 * The result of grouping a run of messages.
 */
export interface Grouped {
  readonly turns: ReadonlyArray<Turn>
  /**
   * Whether the first turn is whole. Only a partial read, one that does not start at the
   * conversation's first turn, can have a cut first turn. Its first turn is cut when it does not
   * start at a user message, or holds a tool result whose call lies before the run.
   */
  readonly firstTurnComplete: boolean
}
/**
 * Groups messages, ascending by seq, into turns. A new turn starts at each user message. A
 * boundary is skipped where a later tool result answers a call made before it, so the call and its
 * result stay in one turn. `summary` messages are records of the log, not conversation, and are
 * left out. Messages before the first user message form a turn of their own. With `partial`, the
 * run is a suffix of a longer log. A tool result whose call is not in the run then forbids every
 * boundary before it.
 */
export const groupTurns = (all: ReadonlyArray<Message>, options?: { readonly partial?: boolean }): Grouped => {
  const messages = all.filter((message) => message.role !== "summary")
  const n = messages.length
  // forbidden[i] > 0, after prefix sums, means no turn may start at index i. Most runs hold no tool
  // message, so no boundary is forbidden and nothing is allocated.
  let forbidden: Array<number> | undefined
  let callIndex: Map<string, number> | undefined
  let unresolved = -1
  for (let i = 0; i < n; i++) {
    const message = messages[i]
    if (message === undefined) continue
    const calls = message.metadata.toolCalls
    if (calls !== undefined) {
      callIndex ??= new Map()
      for (const call of calls) callIndex.set(call.id, i)
    }
    const answers = message.role === "tool" ? message.metadata.toolCallId : undefined
    if (answers === undefined) continue
    const call = callIndex?.get(answers)
    if (call !== undefined) {
      forbidden ??= new Array<number>(n + 1).fill(0)
      forbidden[call + 1] = (forbidden[call + 1] ?? 0) + 1
      forbidden[i + 1] = (forbidden[i + 1] ?? 0) - 1
    } else if (options?.partial === true) {
      unresolved = i
    }
  }
  const turns: Array<Turn> = []
  let current: Array<Message> = []
  let depth = 0
  for (let i = 0; i < n; i++) {
    const message = messages[i]
    if (message === undefined) continue
    depth += forbidden?.[i] ?? 0
    const boundary = message.role === "user" && depth === 0 && i > unresolved
    if (boundary && current.length > 0) {
      turns.push(makeTurn(current))
      current = []
    }
    current.push(message)
  }
  if (current.length > 0) turns.push(makeTurn(current))
  const first = messages[0]
  const firstTurnComplete = options?.partial !== true ||
    (unresolved < 0 && first !== undefined && first.role === "user")
  return { turns, firstTurnComplete }
}
/**
 * The messages of `turns`, in order. A plain loop: `Array.prototype.flatMap` costs several times
 * more on the read path.
 *
 * @since 0.1.0
 * @category utils
 */

export const messagesOf = (turns: ReadonlyArray<Turn>): Array<Message> => {
  const out: Array<Message> = []
  for (const turn of turns) for (const message of turn.messages) out.push(message)
  return out
}
