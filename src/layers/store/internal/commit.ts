/**
 * What an applied summary commit writes, shared by every store.
 */
import type { DateTime } from "effect"
import { Message } from "../../../domain/Message.js"
import * as SummaryState from "../../../domain/SummaryState.js"
import type { RepositoryService } from "../../../services/RepositoryService.js"
import type { SummaryStore } from "../../../services/SummaryStore.js"

/**
 * Whether a commit's expected state is the current one: its cursor, version and, when given, the
 * conversation's incarnation.
 */
export const isExpected = (
  commit: SummaryStore.SummaryCommit,
  state: SummaryState.SummaryState,
  info: RepositoryService.ConversationInfo
): boolean =>
  state.cursor === commit.expected.cursor && state.version === commit.expected.version &&
  (commit.expected.incarnation === undefined || commit.expected.incarnation === info.incarnation)

/** The values a commit writes when it is applied as `version`. */
export interface CommitValues {
  readonly state: SummaryState.SummaryState
  readonly record: SummaryState.SummarizationRecord
  /** The `summary` message appended after `lastSeq`, if the commit asks for one. */
  readonly summaryMessage: Message | undefined
}

/** A commit's new summary state, summarization record and linked summary message. */
export const commitValues = (
  commit: SummaryStore.SummaryCommit,
  options: { readonly version: number; readonly lastSeq: number; readonly now: DateTime.Utc }
): CommitValues => {
  const { conversationId } = commit
  const { lastSeq, now, version } = options
  return {
    state: new SummaryState.SummaryState({
      conversationId,
      narrative: commit.narrative,
      facts: commit.facts,
      layers: commit.layers ?? [],
      cursor: commit.cursor,
      version,
      updatedAt: now
    }, { disableValidation: true }),
    record: new SummaryState.SummarizationRecord({
      ...commit.record,
      conversationId,
      version,
      createdAt: now,
      summaryMessageSeq: commit.summaryMessage === undefined ? null : lastSeq + 1
    }, { disableValidation: true }),
    summaryMessage: commit.summaryMessage === undefined ? undefined : new Message({
      conversationId,
      seq: lastSeq + 1,
      role: "summary",
      content: commit.summaryMessage.content,
      metadata: { summaryMetadataId: version },
      tokenCount: commit.summaryMessage.tokenCount,
      createdAt: now
    }, { disableValidation: true })
  }
}
