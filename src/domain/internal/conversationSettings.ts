/**
 * What a conversation's stored settings say.
 */
import { ConversationSettings } from "../ConversationSettings.js"

/**
 * Whether `settings` override nothing.
 */
export const isEmpty = (settings: ConversationSettings): boolean =>
  settings.tokenBudget === undefined && settings.kRawTurns === undefined && settings.view === undefined &&
  settings.strategy === undefined && settings.systemPrompts === undefined

/**
 * The settings of a conversation that overrides nothing.
 */
export const empty: ConversationSettings = new ConversationSettings({})
