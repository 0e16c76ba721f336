/**
 * What erasing a user removed.
 *
 * @since 0.2.0
 */
import { Schema } from "effect"
import { UserId } from "./UserId.js"

/**
 * What erasing a user removed in one transaction. That is every conversation of the user, with its
 * messages, summaries, settings and vectors, and every fact about the user.
 *
 * @since 0.2.0
 * @category schemas
 */
export class UserErasure extends Schema.Class<UserErasure>("UserErasure")({
  userId: UserId,
  conversations: Schema.NonNegativeInt,
  messages: Schema.NonNegativeInt,
  /** The facts about the user that held: a fact removed earlier is not counted. */
  facts: Schema.NonNegativeInt
}) {}
