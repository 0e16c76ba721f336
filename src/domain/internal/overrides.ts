/**
 * Settings laid over others: a call's over a conversation's over a strategy's.
 */
import type { ContextSettings, Overrides } from "../ContextSettings.js"

/**
 * `settings` with the overrides that are set in place of its own values.
 */
export const withOverrides = <A extends Pick<ContextSettings, keyof Overrides>>(
  settings: A,
  overrides: Overrides | undefined
): A =>
  overrides === undefined ? settings : {
    ...settings,
    tokenBudget: overrides.tokenBudget ?? settings.tokenBudget,
    kRawTurns: overrides.kRawTurns ?? settings.kRawTurns,
    view: overrides.view ?? settings.view
  }
