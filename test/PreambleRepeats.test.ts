/**
 * What a context without a query leaves out of its preamble when the turns it shows say it: the
 * lines of the summary they say as written, and a date heading left with no line under it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { TokenCounter } from "../src/services/TokenCounter.js"
import { withoutShown } from "../src/strategies/internal/context/preamble.js"
import { emptyPreamble } from "../src/strategies/internal/context/window.js"
import { turnOf, user } from "./fixtures/said.js"

const conversationId = ConversationId.make("preamble-repeats")

const preamble = (summary: string) => ({ ...emptyPreamble, summary, tokens: 100, summarizedUpTo: 10 })

describe("the preamble without what the turns shown say", () => {
  it.effect("a date heading goes with the lines under it; one that dates nothing left goes too", () =>
    Effect.gen(function*() {
      const counter = yield* TokenCounter
      const summary = [
        "[2025-01-05]",
        "User: my boiler is playing up again",
        "[2025-01-09]",
        "User: the boiler finally died this morning",
        "User: the new one is booked for January 14"
      ].join("\n")
      const shown = [turnOf(conversationId, [user("Well, my boiler is playing up again. Cold.")], 2)]
      const left = yield* withoutShown(counter, preamble(summary), shown)
      assert.strictEqual(
        left.summary,
        ["[2025-01-09]", "User: the boiler finally died this morning", "User: the new one is booked for January 14"]
          .join("\n")
      )
      // Every dated line said by a shown turn: no summary at all, not its headings alone.
      const all = [
        turnOf(conversationId, [user("my boiler is playing up again")], 2),
        turnOf(
          conversationId,
          [user("the boiler finally died this morning, and the new one is booked for January 14")],
          3
        )
      ]
      assert.isNull((yield* withoutShown(counter, preamble(summary), all)).summary)
      // Nothing said by the turns: the preamble as it was, headings and all.
      const none = yield* withoutShown(counter, preamble(summary), [turnOf(conversationId, [user("Hi")], 2)])
      assert.strictEqual(none.summary, summary)
    }).pipe(Effect.provide(ApproximateTokenCounter.layer)))
})
