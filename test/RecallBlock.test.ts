/**
 * The recalled block's tokens, bounded from the stored counts of its messages (no stored message
 * is tokenized again for a context): never below what the counter counts in the block as sent,
 * with either counter and either label, and only a few tokens per message above it.
 */
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, FastCheck as fc } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import { recalledText } from "../src/domain/internal/recall.js"
import { groupTurns } from "../src/domain/internal/turns.js"
import { Message } from "../src/domain/Message.js"
import { RecalledTurn } from "../src/domain/RecalledTurn.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import * as ExactTokenCounter from "../src/layers/tokens/ExactTokenCounter.js"
import type { TokenCounter } from "../src/services/TokenCounter.js"
import { blockTokens } from "../src/strategies/internal/recall/block.js"
import { conversation, type ConversationSpec } from "./fixtures/arbitraries.js"

const counters: ReadonlyArray<readonly [string, TokenCounter.Service]> = [
  ["approximate", ApproximateTokenCounter.make],
  ["exact o200k", ExactTokenCounter.make]
]

/** Texts where a tokenizer's pieces meet the block's frame: spaces, line breaks of every kind, punctuation. */
const edgy = fc.array(
  fc.constantFrom(
    " ",
    "  ",
    "\n",
    "\r\n",
    "\n\n",
    "\u2028",
    "\u0085",
    "\t",
    "'s",
    ":",
    "[",
    "]",
    "{",
    "\"",
    "a",
    "1",
    "é",
    "😀"
  ),
  { maxLength: 40 }
).map((parts) => parts.join(""))

/** The turns of a generated conversation as recalled turns, with counts stored by `counter`, some contents edgy. */
const recalledTurns = (
  counter: TokenCounter.Service,
  spec: ConversationSpec,
  edges: ReadonlyArray<string>,
  hour: number
) =>
  Effect.gen(function*() {
    const messages: Array<Message> = []
    for (const [i, input] of spec.turns.flat().entries()) {
      const edge = edges[i] ?? ""
      const content = `${edge}${input.content}${edge}`
      const calls = input.metadata?.toolCalls
      // Tool calls' params hold edgy text too (JSON keeps U+2028 and U+2029 as they are).
      const metadata = calls === undefined ? input.metadata ?? {} : {
        ...input.metadata,
        toolCalls: calls.map((call) => ({ ...call, params: { query: `${edge}${JSON.stringify(call.params)}` } }))
      }
      messages.push(
        new Message({
          conversationId: ConversationId.make("block"),
          seq: i + 1,
          role: input.role,
          content,
          metadata,
          tokenCount: yield* counter.countMessage({ content, metadata }),
          createdAt: DateTime.unsafeMake(Date.UTC(2026, 3, 18, hour % 24, i % 60))
        }, { disableValidation: true })
      )
    }
    return groupTurns(messages).turns.flatMap((turn) => {
      const first = turn.messages[0]
      return first === undefined ? [] : [
        new RecalledTurn({
          fromSeq: turn.firstSeq,
          toSeq: turn.lastSeq,
          createdAt: first.createdAt,
          score: 1,
          messages: turn.messages,
          tokenCount: turn.tokenCount
        }, { disableValidation: true })
      ]
    })
  })

describe("the recalled block's tokens", () => {
  for (const [name, counter] of counters) {
    it.effect.prop(
      `${name}: the bound from stored counts is never below the block as sent, and at most a few tokens a message above it`,
      {
        spec: conversation({ minTurns: 1, maxTurns: 6 }),
        edges: fc.array(edgy, { maxLength: 12 }),
        hour: fc.nat({ max: 23 })
      },
      ({ edges, hour, spec }) =>
        Effect.gen(function*() {
          const turns = yield* recalledTurns(counter, spec, edges, hour)
          const bound = yield* blockTokens(counter, turns)
          const messages = turns.reduce((n, turn) => n + turn.messages.length, 0)
          // A tool call shows as `[calls name params]`, stored as JSON with its id and keys; a label
          // without its date is shorter than the dated one the bound counts; the bound allows a token
          // for the indent after each line break, which a run of breaks may merge away.
          const breaksIn = (text: string) => text.match(/\r\n|[\n\r\v\f\u0085\u2028\u2029]/g)?.length ?? 0
          const breaks = turns.reduce(
            (n, turn) =>
              n + turn.messages.reduce((k, m) =>
                k + breaksIn(m.content) + breaksIn(JSON.stringify(m.metadata.toolCalls ?? [])), 0),
            0
          )
          const calls = turns.reduce(
            (n, turn) => n + turn.messages.reduce((k, m) => k + (m.metadata.toolCalls?.length ?? 0), 0),
            0
          )
          for (const dated of [true, false]) {
            const sent = yield* counter.countMessage({ content: recalledText(turns, { dated }) })
            assert.isAtLeast(bound, sent, `dated: ${dated}`)
            assert.isAtMost(bound, sent + 10 * messages + 8 * turns.length + 16 * calls + 2 * breaks, `dated: ${dated}`)
          }
        }),
      { fastCheck: { numRuns: 150 } }
    )
  }
})
