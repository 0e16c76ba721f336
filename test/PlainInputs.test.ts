/**
 * The fast path of `addMessages`' decoding (`decodePlainInputs`) against the guarded decoding
 * (`MessageInputs`): whenever the fast path answers, it answers as the schema does, and it answers
 * for every list of plain, valid `{ role, content }` messages.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either, FastCheck as fc, Schema } from "effect"
import { MaxContentLength } from "../src/domain/internal/messageLimits.js"
import { decodePlainInputs, MessageInputs } from "../src/layers/ai/MessageInputs.js"

const maxMessages = 50
const decodeGuarded = Schema.decodeUnknownEither(MessageInputs({ maxMessages, maxInputs: maxMessages }))

/** Content that is valid, empty, or holds what a store refuses (NUL, unpaired surrogates). */
const content = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }),
  fc.constantFrom("", "\u0000", "a\uD800", "\uDC00b", "ok \uD83D\uDE00", " ", "\n")
)

const role = fc.constantFrom("system", "user", "assistant", "tool", "summary", "User", "", 3)

/** An input a caller might pass: plain messages, with extra keys, metadata, odd prototypes, or not objects. */
const input = fc.oneof(
  { weight: 6, arbitrary: fc.record({ role, content }) },
  { weight: 1, arbitrary: fc.record({ role, content, extra: fc.constant(1) }) },
  { weight: 1, arbitrary: fc.record({ role, content, metadata: fc.constant({ modelVariant: "m" }) }) },
  { weight: 1, arbitrary: fc.record({ role }) },
  { weight: 1, arbitrary: fc.record({ role, content }).map((m) => Object.assign(Object.create(null), m)) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, "text", 7, []) }
)

describe("decodePlainInputs", () => {
  it("answers, when it answers, exactly as MessageInputs decodes", () => {
    fc.assert(
      fc.property(fc.array(input, { maxLength: 8 }), (inputs) => {
        const fast = decodePlainInputs(inputs, maxMessages)
        if (fast === undefined) return
        const guarded = decodeGuarded(inputs)
        assert.isTrue(Either.isRight(guarded), "the fast path accepted what the schema refuses")
        if (Either.isRight(guarded)) assert.deepStrictEqual(fast, guarded.right)
      }),
      { numRuns: 2000 }
    )
  })

  it("answers for every list of plain, valid messages", () => {
    const valid = fc.record({
      role: fc.constantFrom("system", "user", "assistant"),
      // Printable ASCII: no NUL, no surrogates.
      content: fc.string({
        minLength: 1,
        maxLength: 40,
        unit: fc.integer({ min: 32, max: 126 }).map((c) => String.fromCharCode(c))
      })
    })
    fc.assert(
      fc.property(fc.array(valid, { maxLength: 8 }), (inputs) => {
        const fast = decodePlainInputs(inputs, maxMessages)
        assert.isDefined(fast)
        assert.deepStrictEqual(fast, Either.getOrThrow(decodeGuarded(inputs)))
      }),
      { numRuns: 500 }
    )
  })

  it("leaves to the schema what it must refuse or explain", () => {
    const tooLong = "x".repeat(MaxContentLength + 1)
    const throwing = {
      role: "user",
      get content(): string {
        throw new Error("a getter that throws")
      }
    }
    const cases: ReadonlyArray<unknown> = [
      [{ role: "user", content: tooLong }],
      [throwing],
      Array.from({ length: maxMessages + 1 }, () => ({ role: "user", content: "hi" })),
      [{ role: "tool", content: "result" }],
      "not a list"
    ]
    for (const inputs of cases) assert.isUndefined(decodePlainInputs(inputs, maxMessages))
  })
})
