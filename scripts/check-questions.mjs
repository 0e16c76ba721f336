/**
 * Checks a questions file over a transcript of several conversations of one user (made by
 * `scripts/transcript.ts` from a text with `== <name>` lines): `node scripts/check-questions.mjs
 * examples/tutor.questions.json examples/renovation.questions.json`. Each question is asked in a
 * new conversation (`conversation`, a name the transcript does not hold) that starts after turn
 * `askedAfterTurn`. Turn N is the N-th user message of the transcript, counted across its
 * conversations, up to the next user message (tool calls' params included). Prints one line per
 * file; exits with 1 when a file has problems, listing them.
 */
import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"

const minConversations = 12
const minQuestions = 66
const minPerKind = 12
const kinds = ["profile", "plain", "corrected", "when", "multi-turn"]
const roles = new Set(["system", "user", "assistant", "tool"])

/** The messages of a transcript, or the problems that stop it being read. */
const readTranscript = (path, problems) => {
  const messages = []
  for (const [i, raw] of readFileSync(path, "utf8").split("\n").entries()) {
    if (raw.trim().length === 0) continue
    let message
    try {
      message = JSON.parse(raw)
    } catch {
      problems.push(`${path}:${i + 1}: not JSON`)
      continue
    }
    const where = `${path}:${i + 1}`
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      problems.push(`${where}: not a message`)
      continue
    }
    if (typeof message.conversation !== "string" || message.conversation.length === 0) {
      problems.push(`${where}: no conversation`)
    } else if (Object.keys(message)[0] !== "conversation") problems.push(`${where}: conversation is not the first field`)
    if (!roles.has(message.role)) problems.push(`${where}: role ${JSON.stringify(message.role)}`)
    if (typeof message.content !== "string") problems.push(`${where}: content is not text`)
    if (typeof message.createdAt !== "string" || Number.isNaN(Date.parse(message.createdAt))) {
      problems.push(`${where}: createdAt is not a date`)
    }
    messages.push({ ...message, line: i + 1 })
  }
  return messages
}

/** A message's text as a turn holds it: its content and its tool calls' params. */
const textOf = (message) =>
  [
    message.content ?? "",
    ...(message.metadata?.toolCalls ?? []).map((call) => JSON.stringify(call.params ?? {}))
  ].join("\n")

const check = (file) => {
  const problems = []
  const data = JSON.parse(readFileSync(file, "utf8"))
  if (typeof data.transcript !== "string") return { problems: [`${file}: no transcript`] }
  if (!Array.isArray(data.questions)) return { problems: [`${file}: no questions`] }
  const transcript = resolve(dirname(file), data.transcript)
  const messages = readTranscript(transcript, problems)

  // Conversations: contiguous blocks, each opening with the system prompt.
  const conversations = []
  const seen = new Set()
  for (const message of messages) {
    const last = conversations.at(-1)
    if (last !== undefined && last.name === message.conversation) continue
    if (seen.has(message.conversation)) {
      problems.push(`${transcript}:${message.line}: conversation ${message.conversation} is not one block`)
    }
    if (message.role !== "system") {
      problems.push(`${transcript}:${message.line}: conversation ${message.conversation} does not open with the system prompt`)
    }
    seen.add(message.conversation)
    conversations.push({ name: message.conversation, firstTurn: undefined, lastTurn: undefined })
  }
  if (conversations.length < minConversations) {
    problems.push(`${transcript}: ${conversations.length} conversations, fewer than ${minConversations}`)
  }
  for (const [i, message] of messages.entries()) {
    if (i > 0 && Date.parse(message.createdAt) < Date.parse(messages[i - 1].createdAt)) {
      problems.push(`${transcript}:${message.line}: createdAt goes back in time`)
    }
  }

  // Turns: from a user message to the next one, across conversations.
  const turns = []
  let block = -1
  for (const message of messages) {
    if (block < 0 || conversations[block].name !== message.conversation) block += 1
    if (message.role === "user") {
      turns.push({ user: message, text: [], conversation: block })
      conversations[block].firstTurn ??= turns.length
      conversations[block].lastTurn = turns.length
    }
    turns.at(-1)?.text.push(textOf(message))
  }
  for (const conversation of conversations) {
    if (conversation.firstTurn === undefined) problems.push(`${transcript}: conversation ${conversation.name} has no turns`)
  }
  const turnText = (from, to) => turns.slice(from - 1, to).map((turn) => turn.text.join("\n")).join("\n")
  const lastTurns = new Set(conversations.map((c) => c.lastTurn))

  const counts = Object.fromEntries(kinds.map((kind) => [kind, 0]))
  const ids = new Set()
  const askedIn = new Map()
  for (const q of data.questions) {
    const where = `${file}: ${q.id}`
    const kind = q.kind ?? "plain"
    if (typeof q.id !== "string" || ids.has(q.id)) problems.push(`${where}: id missing or repeated`)
    ids.add(q.id)
    if (!kinds.includes(kind) || q.kind === "plain") problems.push(`${where}: kind ${JSON.stringify(q.kind)}`)
    else counts[kind] += 1
    if (typeof q.question !== "string" || q.question.length === 0) problems.push(`${where}: no question`)
    if (!("factKey" in q)) problems.push(`${where}: no factKey`)
    if (!Array.isArray(q.answers) || q.answers.length === 0 || q.answers.some((a) => typeof a !== "string" || a === "")) {
      problems.push(`${where}: answers are not a list of text`)
      continue
    }
    if (typeof q.conversation !== "string" || q.conversation.length === 0) problems.push(`${where}: no conversation`)
    else if (seen.has(q.conversation)) problems.push(`${where}: conversation ${q.conversation} is in the transcript`)
    const { statedAtTurn: stated, lastStatedTurn: last, askedAfterTurn: asked, supersededAtTurn: superseded } = q
    if (![stated, last, asked].every((n) => Number.isInteger(n) && n >= 1 && n <= turns.length)) {
      problems.push(`${where}: a turn is not between 1 and ${turns.length}`)
      continue
    }
    if (stated > last) problems.push(`${where}: statedAtTurn ${stated} after lastStatedTurn ${last}`)
    if (asked < last) problems.push(`${where}: asked after turn ${asked}, before its answer's turn ${last}`)
    if (!lastTurns.has(asked)) problems.push(`${where}: turn ${asked} does not end a conversation`)
    if (askedIn.has(q.conversation) && askedIn.get(q.conversation) !== asked) {
      problems.push(`${where}: conversation ${q.conversation} is asked after two different turns`)
    }
    askedIn.set(q.conversation, asked)
    if (superseded !== null && superseded !== undefined) {
      if (!Number.isInteger(superseded) || superseded <= last || superseded > asked) {
        problems.push(`${where}: supersededAtTurn ${superseded} is not after its answer and before the question`)
      }
      if (kind === "corrected") problems.push(`${where}: a corrected question asks for the current value`)
    }
    if (kind === "when") {
      const date = turns[stated - 1].user.createdAt.slice(0, 10)
      if (q.answers.length !== 1 || q.answers[0] !== date) {
        problems.push(`${where}: answer ${JSON.stringify(q.answers)} is not turn ${stated}'s date ${date}`)
      }
      continue
    }
    const text = turnText(stated, last)
    for (const answer of q.answers) {
      if (!text.includes(answer)) problems.push(`${where}: ${JSON.stringify(answer)} is not in turns ${stated}..${last}`)
    }
    if (kind === "multi-turn") {
      if (turns[stated - 1].conversation === turns[last - 1].conversation) {
        problems.push(`${where}: turns ${stated} and ${last} are in one conversation`)
      }
      const first = q.answers.filter((a) => turnText(stated, stated).includes(a))
      const second = q.answers.filter((a) => turnText(last, last).includes(a))
      if (q.answers.length < 2 || first.length === 0 || second.length === 0 || (first.length === 1 && second.length === 1 && first[0] === second[0])) {
        problems.push(`${where}: turns ${stated} and ${last} do not each hold one of its answers`)
      }
    }
  }
  const total = data.questions.length
  if (total < minQuestions) problems.push(`${file}: ${total} questions, fewer than ${minQuestions}`)
  for (const kind of kinds) {
    if (counts[kind] < minPerKind) problems.push(`${file}: ${counts[kind]} ${kind} questions, fewer than ${minPerKind}`)
  }
  const askPoints = [...new Set(data.questions.map((q) => q.askedAfterTurn))].sort((a, b) => a - b)
  const summary = `${conversations.length} conversations, ${turns.length} turns, ${messages.length} messages, ${total} questions (${
    kinds.map((kind) => `${kind} ${counts[kind]}`).join(", ")
  }), asked after turns ${askPoints.join(", ")}`
  return { problems, summary }
}

const files = process.argv.slice(2)
if (files.length === 0) {
  console.error("usage: node scripts/check-questions.mjs <questions.json>...")
  process.exit(2)
}
let failed = false
for (const file of files) {
  let result
  try {
    result = check(file)
  } catch (error) {
    result = { problems: [`${file}: ${error.message}`] }
  }
  if (result.problems.length === 0) {
    console.log(`${file}: ok, ${result.summary}`)
  } else {
    failed = true
    console.log(`${file}: ${result.problems.length} problems${result.summary ? `, ${result.summary}` : ""}`)
    for (const problem of result.problems) console.log(`  ${problem}`)
  }
}
process.exit(failed ? 1 : 0)
