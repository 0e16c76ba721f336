import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { Buffer } from "node:buffer"
import { utf8Length } from "../src/domain/internal/utf8.js"

describe("utf8Length", () => {
  it.prop("is the length of the string encoded in UTF-8, lone surrogates written as U+FFFD", [
    fc.string({ unit: "binary", maxLength: 64 })
  ], ([s]) => {
    assert.strictEqual(utf8Length(s), Buffer.byteLength(s, "utf8"))
  })

  it("counts one byte to four, and a lone surrogate as three", () => {
    assert.deepStrictEqual(
      ["a", "é", "€", "😀", "\uD83D", "\uDE00", "\uD83Dx"].map(utf8Length),
      [1, 2, 3, 4, 3, 3, 4]
    )
  })
})
