import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { ConversationNotFoundError } from "../src/errors/ConversationNotFoundError.js"
import { DataValidationError } from "../src/errors/DataValidationError.js"
import { RepositoryError } from "../src/errors/RepositoryError.js"
import { SkillExecutionError } from "../src/errors/SkillExecutionError.js"

describe("errors", () => {
  it("carry data and say what happened", () => {
    const cases: ReadonlyArray<readonly [Error & { readonly _tag: string }, string]> = [
      [
        new DataValidationError({
          operation: "ChatMemoryService.addMessages",
          path: "messages[1].role",
          reason: "bad"
        }),
        "ChatMemoryService.addMessages: invalid messages[1].role: bad"
      ],
      [new ConversationNotFoundError({ conversationId: "c-1" }), "Conversation not found: \"c-1\""],
      [
        new RepositoryError({ operation: "appendMessages", conversationId: "c-1" }),
        "Store failure during appendMessages (conversation \"c-1\")"
      ],
      [
        new SkillExecutionError({ skillId: "openai/summarize@1", reason: "RateLimited", retryable: true }),
        "Skill openai/summarize@1 failed (RateLimited, retryable)"
      ]
    ]
    for (const [error, message] of cases) {
      assert.instanceOf(error, Error)
      assert.strictEqual(error.message, message)
    }
  })

  it.effect("are yieldable and catchable by tag, and encode to plain data", () =>
    Effect.gen(function*() {
      const caught = yield* Effect.fail(new ConversationNotFoundError({ conversationId: "x" })).pipe(
        Effect.catchTag("ConversationNotFoundError", (e) => Effect.succeed(e.conversationId))
      )
      assert.strictEqual(caught, "x")
      const encoded = Schema.encodeSync(DataValidationError)(
        new DataValidationError({ operation: "op", path: "p", reason: "r" })
      )
      assert.deepStrictEqual(encoded, { _tag: "DataValidationError", operation: "op", path: "p", reason: "r" })
    }))
})
