/**
 * The SQL store's compare-and-set of the summary state, as one transaction body.
 */
import { DateTime, Effect, Option } from "effect"
import { ConversationNotFoundError } from "../../../../errors/ConversationNotFoundError.js"
import { CommitResult, type SummaryStore } from "../../../../services/SummaryStore.js"
import { commitValues, isExpected } from "../commit.js"
import * as Rows from "./rows.js"
import type { Statements } from "./statements.js"

/**
 * Applies a commit; run it in a transaction. The conversation row is locked first, so the check of
 * the expected state and the writes after it see no concurrent change.
 */
export const applyCommit = (statements: Statements) =>
  Effect.fnUntraced(
    function*(commit: SummaryStore.SummaryCommit, now: DateTime.Utc) {
      const { conversationId } = commit
      const row = yield* statements.lockConversation(conversationId)
      if (Option.isNone(row)) return yield* new ConversationNotFoundError({ conversationId })
      const info = Rows.toInfo(conversationId, row.value)
      const state = Rows.toState(conversationId, row.value)
      if (!isExpected(commit, state, info)) {
        return CommitResult.Stale({ current: state })
      }
      // A cursor behind the current one or past the last message is a caller's bug, not a condition
      // to recover from. The strategies compute it from messages they read.
      if (commit.cursor < state.cursor || commit.cursor > info.lastSeq) {
        return yield* Effect.dieMessage(
          `commitSummary: cursor ${commit.cursor} outside [${commit.expected.cursor}, lastSeq]`
        )
      }
      const version = state.version + 1
      const written = commitValues(commit, { version, lastSeq: info.lastSeq, now })
      let { lastSeq, messageCount, tokenCount } = info
      const roleCounts = { ...info.roleCounts }
      if (commit.prune === true) {
        // Keeps the leading system messages, the buffer after the new cursor, and summary messages.
        const pruned = yield* statements.deleteCovered({
          id: conversationId,
          prefix: info.systemPrefixSeq,
          cursor: commit.cursor
        })
        for (const counts of pruned) {
          messageCount -= counts.total
          tokenCount -= counts.token_count
          for (const role of ["system", "user", "assistant", "tool", "summary"] as const) {
            roleCounts[role] -= counts[role]
          }
        }
      }
      if (written.summaryMessage !== undefined) {
        lastSeq += 1
        messageCount += 1
        roleCounts.summary += 1
        tokenCount += written.summaryMessage.tokenCount
        yield* statements.insertMessages(conversationId, [written.summaryMessage], info.userId)
      }
      const nextInfo = { ...info, lastSeq, messageCount, roleCounts, tokenCount, updatedAt: now }
      yield* statements.updateConversation(nextInfo, written.state, DateTime.toDateUtc(now))
      yield* statements.insertRecord(written.record, info.userId)
      return CommitResult.Committed({ state: written.state, record: written.record })
    }
  )
