/**
 * The BM25 index of all of a user's conversations in the in-memory store: one index, as the SQL
 * stores keep one posting list per term and user, so that a search reads each term's postings
 * once, not once per conversation.
 */
import type { ConversationId } from "../../../domain/ConversationId.js"
import type { RepositoryService } from "../../../services/RepositoryService.js"
import type { MessageLog } from "./log.js"
import { LogFollower, Postings } from "./postings.js"
import * as Search from "./search.js"

/** A conversation of the user as a search sees it in its snapshot. */
export interface Searched {
  readonly info: Pick<
    RepositoryService.ConversationInfo,
    "conversationId" | "incarnation" | "systemPrefixSeq" | "messageCount"
  >
  readonly messages: MessageLog
}

/** What a search looks for, and the conversation it is made for (only its seqs below `before`). */
export interface Query {
  readonly text: string
  readonly limit: number
  readonly current?: { readonly conversationId: ConversationId; readonly before: number } | undefined
}

/** A document of the index: a message of one of the user's conversations. */
interface Document {
  readonly part: Part
  readonly seq: number
  /** Its id in the index. */
  readonly id: number
}

/** A conversation value of the user, as the index follows it. */
class Part {
  readonly follower = new LogFollower()
  /** The short id of each seq handed on and not dropped. */
  readonly shortIds = new Map<number, number>()
  /** The last sync that found the conversation among the user's. */
  stamp = 0
  /** The conversation's place among the user's, the one said last first. */
  order = 0

  constructor(readonly conversationId: ConversationId) {}
}

/**
 * The mutable index of one user record's conversations (a user erased and written again gets a new
 * one). A search syncs it with the conversations of its snapshot, as `SearchIndex` syncs one
 * conversation: the new messages are added, the pruned ones dropped, and the conversations no
 * longer among the user's (deleted, written again, erased) dropped whole.
 */
export class UserSearchIndex {
  private readonly index = new Postings()
  /** The conversation values followed, by incarnation. */
  private readonly parts = new Map<number, Part>()
  /** Each document by its short id (the postings' key). */
  private readonly documents = new Map<number, Document>()
  private nextId = 1
  private syncs = 0
  /** The conversations last synced with: the same list of the same snapshot is a no-op. */
  private synced: ReadonlyArray<Searched> | undefined
  private ordered: ReadonlyArray<Part> = []

  /**
   * The best matches of `query` over `conversations` (the user's, the one said last first), ranked
   * as one conversation of all their messages would rank them. Best first; ties go to the newer,
   * then to the conversation said last. Messages that hold only common terms are looked for among
   * the user's newest `Search.recentSpan` messages, `Search.recentCandidates` in all.
   */
  search(
    conversations: ReadonlyArray<Searched>,
    query: Query
  ): Array<{ readonly conversationId: ConversationId; readonly seq: number; readonly score: number }> {
    const parts = this.sync(conversations)
    const current = query.current
    // Only the current conversation's seqs below its bound are searched: the rest is shown.
    const beforeOf = (part: Part) =>
      current?.conversationId === part.conversationId
        ? (Number.isNaN(current.before) ? 0 : current.before)
        : Number.MAX_SAFE_INTEGER
    const plan = this.index.plan(query.text)
    if (plan === undefined) return []
    const candidates = this.index.rare(plan, (shortId) => {
      const document = this.documents.get(shortId)
      return document !== undefined && document.seq < beforeOf(document.part)
    })
    if (plan.common.length > 0) {
      let recent = 0
      let newer = 0
      for (const [p, part] of parts.entries()) {
        if (recent >= Search.recentCandidates || newer >= Search.recentSpan) break
        newer += conversations[p]?.info.messageCount ?? 0
        const before = beforeOf(part)
        if (before <= 1) continue
        recent += part.follower.addNewest(
          plan,
          before,
          (seq) => part.shortIds.get(seq),
          candidates,
          Search.recentCandidates - recent
        )
      }
    }
    const hits: Array<{ readonly part: Part; readonly seq: number; readonly score: number }> = []
    for (const shortId of candidates) {
      const document = this.documents.get(shortId)
      if (document === undefined) continue
      hits.push({ part: document.part, seq: document.seq, score: this.index.score(plan, shortId) })
    }
    hits.sort((x, y) => y.score - x.score || y.seq - x.seq || x.part.order - y.part.order)
    return hits.slice(0, Search.clampLimit(query.limit)).map((hit) => ({
      conversationId: hit.part.conversationId,
      seq: hit.seq,
      score: hit.score
    }))
  }

  /** Brings the index up to `conversations`; their parts, in the same order. */
  private sync(conversations: ReadonlyArray<Searched>): ReadonlyArray<Part> {
    if (this.synced === conversations) return this.ordered
    const stamp = ++this.syncs
    let dropped = false
    this.ordered = conversations.map(({ info, messages }, order) => {
      const part = this.partOf(info)
      part.stamp = stamp
      part.order = order
      const removed = part.follower.sync(
        messages,
        info.systemPrefixSeq,
        (seq, text) => this.add(part, seq, text),
        (seq) => this.drop(part, seq)
      )
      dropped ||= removed
      return part
    })
    if (this.parts.size > conversations.length) {
      for (const [incarnation, part] of this.parts) {
        if (part.stamp === stamp) continue
        for (const seq of part.shortIds.keys()) this.drop(part, seq)
        this.parts.delete(incarnation)
        dropped = true
      }
    }
    // A posting left behind would still count in its term's document frequency.
    if (dropped) this.index.compact()
    this.synced = conversations
    return this.ordered
  }

  /** The part that follows the conversation value, made on its first sync. */
  private partOf(info: Searched["info"]): Part {
    const known = this.parts.get(info.incarnation)
    if (known !== undefined) return known
    const part = new Part(info.conversationId)
    this.parts.set(info.incarnation, part)
    return part
  }

  private add(part: Part, seq: number, text: string): void {
    const id = this.nextId++
    const shortId = this.index.addMessage(id, text)
    if (shortId === undefined) return
    part.shortIds.set(seq, shortId)
    this.documents.set(shortId, { part, seq, id })
  }

  private drop(part: Part, seq: number): void {
    const shortId = part.shortIds.get(seq)
    const document = shortId === undefined ? undefined : this.documents.get(shortId)
    if (shortId === undefined || document === undefined) return
    this.index.discard(document.id)
    part.shortIds.delete(seq)
    this.documents.delete(shortId)
  }
}
