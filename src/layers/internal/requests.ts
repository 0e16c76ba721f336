/**
 * The requests the service decodes at its edge, one per operation, and their decoders. A bad
 * argument fails with a `DataValidationError` naming its field before anything runs.
 */
import { Effect, Schema } from "effect"
import { ContextSettings } from "../../domain/ContextSettings.js"
import { ConversationId } from "../../domain/ConversationId.js"
import { ConversationSettings } from "../../domain/ConversationSettings.js"
import { MaxContentLength } from "../../domain/internal/messageLimits.js"
import { fromUntrusted, StorableString } from "../../domain/internal/storable.js"
import { UserId } from "../../domain/UserId.js"
import { decode } from "../../errors/internal/decode.js"
import { MaxInputsPerCall, MaxMessagesPerCall, MaxPageSize } from "../../services/ChatMemoryService.js"
import { decodePlainInputs, MessageInputs } from "../ai/MessageInputs.js"

export const AddMessagesRequest = Schema.Struct({
  conversationId: ConversationId,
  // The memory's messages, `@effect/ai` prompt messages and response parts, each read once, in a guard.
  messages: MessageInputs({ maxMessages: MaxMessagesPerCall, maxInputs: MaxInputsPerCall })
})

export const AddOptions = Schema.Struct({ options: fromUntrusted(Schema.Struct({ userId: Schema.optional(UserId) })) })

export const GetMessagesRequest = Schema.Struct({
  conversationId: ConversationId,
  // Exact, since an `undefined` member would print the raw input and run a hostile object's getters.
  options: Schema.optionalWith(
    fromUntrusted(Schema.Struct({
      limit: Schema.optional(Schema.Int.pipe(Schema.between(1, MaxPageSize))),
      before: Schema.optional(Schema.Int.pipe(Schema.positive())),
      userId: Schema.optional(UserId)
    })),
    { exact: true }
  )
})

export const ConversationRequest = Schema.Struct({ conversationId: ConversationId })

export const StatsRequest = ConversationRequest

export const SystemPromptRequest = Schema.Struct({
  conversationId: ConversationId,
  // `ConversationSettings.systemPrompts`' bounds, so that a stored prompt always reads back.
  text: Schema.String.pipe(
    Schema.minLength(1, { message: () => "must be a non-empty string" }),
    Schema.maxLength(MaxContentLength, { message: () => `must be at most ${MaxContentLength} characters` })
  )
})

export const GetContextRequest = Schema.Struct({
  conversationId: ConversationId,
  options: Schema.optionalWith(
    fromUntrusted(Schema.Struct({
      tokenBudget: Schema.optional(ContextSettings.fields.tokenBudget),
      query: Schema.optional(StorableString),
      userId: Schema.optional(UserId)
    })),
    { exact: true }
  )
})

export const SearchRequest = Schema.Struct({
  conversationId: ConversationId,
  query: StorableString,
  options: Schema.optionalWith(
    fromUntrusted(Schema.Struct({
      limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 50))),
      before: Schema.optional(Schema.Int.pipe(Schema.positive())),
      userId: Schema.optional(UserId)
    })),
    { exact: true }
  )
})

export const SetSettingsRequest = Schema.Struct({
  conversationId: ConversationId,
  settings: fromUntrusted(ConversationSettings)
})

export const AwaitIdleRequest = Schema.Struct({ conversationId: Schema.optionalWith(ConversationId, { exact: true }) })

export const isConversationId = Schema.is(ConversationId)

const decodeAddRequest = decode(AddMessagesRequest, "ChatMemoryService.addMessages", "")
/** Skips the guarded decoding for the common call: a valid id and plain `{ role, content }` messages. */
export const decodeAdd = (request: { readonly conversationId: unknown; readonly messages: unknown }) => {
  if (isConversationId(request.conversationId)) {
    const plain = decodePlainInputs(request.messages, Math.min(MaxMessagesPerCall, MaxInputsPerCall))
    if (plain !== undefined) return Effect.succeed({ conversationId: request.conversationId, messages: plain })
  }
  return decodeAddRequest(request)
}
export const decodeAddOptions = decode(AddOptions, "ChatMemoryService.addMessages", "")
export const decodeGet = decode(GetMessagesRequest, "ChatMemoryService.getMessages", "")
export const decodeClear = decode(ConversationRequest, "ChatMemoryService.clearMessages", "")
export const decodeContext = decode(GetContextRequest, "ChatMemoryService.getContext", "")
export const decodeSetSettings = decode(SetSettingsRequest, "ChatMemoryService.setSettings", "")
export const decodeGetSettings = decode(ConversationRequest, "ChatMemoryService.getSettings", "")
export const decodeSystemPrompt = decode(SystemPromptRequest, "ChatMemoryService.setSystemPrompt", "")
export const decodeSearch = decode(SearchRequest, "ChatMemoryService.searchMemory", "")
export const decodeIdle = decode(AwaitIdleRequest, "ChatMemoryService.awaitIdle", "")
export const decodeStats = decode(StatsRequest, "ChatMemoryService.stats", "")
