/**
 * An `@effect/ai` `Prompt` given where the memory expects something else (messages, a user's text):
 * refused with one line that says what to pass instead.
 */
import * as Prompt from "@effect/ai/Prompt"
import { ParseResult, Schema } from "effect"

/** Whether `input` is an `@effect/ai` `Prompt` (a proxy whose trap throws is not). */
const isPrompt = (input: unknown): boolean => {
  try {
    return Prompt.isPrompt(input)
  } catch {
    return false
  }
}

/** `schema`, but a `Prompt` given in its place is refused with `reason`. */
export const refusingPrompt = <A, I>(schema: Schema.Schema<A, I>, reason: string): Schema.Schema<A, I> =>
  Schema.declare([schema], {
    decode: (inner) => {
      const decodeInner = ParseResult.decodeUnknown(inner)
      return (input, options, ast) =>
        isPrompt(input) ? ParseResult.fail(new ParseResult.Type(ast, input, reason)) : decodeInner(input, options)
    },
    encode: (inner) => ParseResult.encodeUnknown(inner)
  })
