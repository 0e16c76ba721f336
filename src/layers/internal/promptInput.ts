/**
 * Refuses an `@effect/ai` `Prompt` given where the memory expects messages or a user's text. The
 * error says in one line what to pass instead.
 */
import * as Prompt from "@effect/ai/Prompt"
import { ParseResult, Schema } from "effect"

/** Whether `input` is an `@effect/ai` `Prompt`. A proxy whose trap throws is not. */
const isPrompt = (input: unknown): boolean => {
  try {
    return Prompt.isPrompt(input)
  } catch {
    return false
  }
}

/** `schema`, refusing a `Prompt` in its place with `reason`. */
export const refusingPrompt = <A, I>(schema: Schema.Schema<A, I>, reason: string): Schema.Schema<A, I> =>
  Schema.declare([schema], {
    decode: (inner) => {
      const decodeInner = ParseResult.decodeUnknown(inner)
      return (input, options, ast) =>
        isPrompt(input) ? ParseResult.fail(new ParseResult.Type(ast, input, reason)) : decodeInner(input, options)
    },
    encode: (inner) => ParseResult.encodeUnknown(inner)
  })
