/**
 * The contract of the message index (`MessageIndex`): the lexical search of a conversation's
 * messages (`SearchContract`) and the embeddings with their search by similarity
 * (`EmbeddingContract`).
 */
import type { Vitest } from "@effect/vitest"
import type * as Store from "../../src/layers/store/Store.js"
import { embeddingContract } from "./EmbeddingContract.js"
import { searchContract } from "./SearchContract.js"

/** Registers the index's contract in a suite whose layer provides a store. */
export const messageIndexContract = (it: Vitest.MethodsNonLive<Store.Ports>) => {
  searchContract(it)
  embeddingContract(it)
}
