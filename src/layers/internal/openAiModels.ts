/**
 * The OpenAI models the adapters use by default. This module lets the configuration name them
 * without loading the OpenAI client.
 */

/** The summarizer model when none is configured: a small, cheap one. */
export const summarizer = "gpt-4o-mini"

/** The embedding model when none is configured. */
export const embeddings = "text-embedding-3-small"
