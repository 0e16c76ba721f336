/**
 * The OpenAI models the adapters use when none is configured, in a module of their own so that the
 * configuration can name them without loading the OpenAI client.
 */

/** The summarizer model when none is configured: a small, cheap one. */
export const summarizer = "gpt-4o-mini"

/** The embedding model when none is configured. */
export const embeddings = "text-embedding-3-small"
