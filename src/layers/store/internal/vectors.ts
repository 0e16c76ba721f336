/**
 * Message vectors for hybrid recall, as every store keeps them: normalised to unit length on the
 * way in (so cosine similarity is a dot product), and, for the in-memory store, the index of one
 * conversation.
 */
import type { MessageIndex } from "../../../services/MessageIndex.js"
import { clampLimit } from "./search.js"

/**
 * `vector` scaled to unit length; empty when it has no direction (empty, all zeros) or holds a
 * number that is not finite: such a message is marked done and never found.
 */
export const normalize = (vector: ReadonlyArray<number>): Float32Array => {
  let norm = 0
  for (const x of vector) {
    if (!Number.isFinite(x)) return new Float32Array(0)
    norm += x * x
  }
  if (norm === 0 || !Number.isFinite(norm)) return new Float32Array(0)
  const scale = 1 / Math.sqrt(norm)
  const out = new Float32Array(vector.length)
  for (let i = 0; i < vector.length; i++) out[i] = (vector[i] ?? 0) * scale
  return out
}

/** The dot product over the dimensions both vectors have. */
export const dot = (a: Float32Array, b: Float32Array): number => {
  const n = Math.min(a.length, b.length)
  let sum = 0
  for (let i = 0; i < n; i++) sum += (a[i] ?? 0) * (b[i] ?? 0)
  return sum
}

/** A user-wide search's `scanLimit` as a count of seqs: at least 1; NaN is 1. */
export const clampScan = (scanLimit: number): number =>
  Number.isNaN(scanLimit) ? 1 : Math.max(1, Math.min(Number.MAX_SAFE_INTEGER, Math.floor(scanLimit)))

/** The best `limit` hits, best first; ties go to the newer message. */
export const best = (hits: Array<MessageIndex.SearchHit>, limit: number): Array<MessageIndex.SearchHit> =>
  hits.sort((x, y) => y.score - x.score || y.seq - x.seq).slice(0, clampLimit(limit))

/** The vectors of one model in one conversation. */
interface ModelVectors {
  /** The newest seq embedded: messages after it are pending. */
  upTo: number
  readonly vectors: Map<number, Float32Array>
}

/**
 * The vectors of one conversation of the in-memory store, by model. Searches scan them (bounded by
 * one conversation); the store drops those of pruned messages (`retain`).
 */
export class VectorIndex {
  private readonly models = new Map<string, ModelVectors>()

  /** The newest seq embedded under `model` (0 when none). */
  upTo(model: string): number {
    return this.models.get(model)?.upTo ?? 0
  }

  /** Stores vectors (normalised), replacing those of the same seqs. */
  put(model: string, embeddings: ReadonlyArray<MessageIndex.Embedding>): void {
    let entry = this.models.get(model)
    if (entry === undefined) {
      entry = { upTo: 0, vectors: new Map() }
      this.models.set(model, entry)
    }
    for (const { seq, vector } of embeddings) {
      entry.vectors.set(seq, normalize(vector))
      if (seq > entry.upTo) entry.upTo = seq
    }
  }

  /** Keeps only the vectors of the seqs `keep` accepts. */
  retain(keep: (seq: number) => boolean): void {
    for (const entry of this.models.values()) {
      for (const seq of entry.vectors.keys()) if (!keep(seq)) entry.vectors.delete(seq)
    }
  }

  /**
   * The vectors below `query.before` (and above `query.after`, when given) of the query's length
   * closest to `query.vector`, best first.
   */
  search(query: MessageIndex.VectorQuery & { readonly after?: number }): Array<MessageIndex.SearchHit> {
    const entry = this.models.get(query.model)
    const target = normalize(query.vector)
    if (entry === undefined || target.length === 0) return []
    const after = query.after ?? 0
    const hits: Array<MessageIndex.SearchHit> = []
    for (const [seq, vector] of entry.vectors) {
      // Only vectors of the query's length compare: one of another length is another model's.
      if (seq >= query.before || seq <= after || vector.length !== target.length) continue
      hits.push({ seq, score: dot(vector, target) })
    }
    return best(hits, query.limit)
  }
}
