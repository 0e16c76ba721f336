/**
 * Word lists of the offline skill: small, closed classes of English words that carry no value of
 * their own. Written as strings, one list per class.
 */

const list = (text: string): ReadonlyArray<string> => text.split(/\s+/).filter((word) => word.length > 0)

/** Articles, pronouns, auxiliaries, prepositions and the like, common to both uses below. */
export const functionWords = list(
  "a an and any are as at be but by can could did do does for from had has have he her here his " +
    "how i if in is it its just let my no not of ok okay on or our please so that the their then " +
    "there these they this those thanks to we what when where which who will with would yes you " +
    "your also after before until all both each every one sure got new user assistant tool"
)

/** Months, weekdays and words of time. */
export const calendarWords = list(
  "afternoon april august day days december evening february friday january july june last march " +
    "may monday month morning next november october saturday september sunday thursday today " +
    "tomorrow tonight tuesday wednesday week weeks year yesterday"
)

/** Words that open a sentence (greetings, replies): a capitalized pair starting with one is no name. */
export const openers = list(
  "good great hi once she thank why since two perfect sounds understood noted welcome hello dear " +
    "regards best sorry unfortunately absolutely correct right done confirmed booked old system " +
    "summary"
)

/** Verbs, fillers and contractions without their apostrophe: they say nothing of what a value is. */
export const keyNoise = list(
  "about am been being him into me more now out over some than them up us was were while still " +
    "only should shall might must need needs get let's i'm we're it's that's you're i'll we'll " +
    "there's per via very really around approximately about roughly exactly same current value " +
    "number says said called named like through between under within ive weve youve theyve ill well " +
    "itll theyll youll id wed youd im were thats theres lets dont doesnt didnt cant wont isnt arent " +
    "wasnt go goes went gone come came tell told say make made take took give gave put see saw know " +
    "knew think want keep kept set use used send sent call ask asked look find found show shown try " +
    "run ran pay paid bill billed open close add move check confirm note notes mean means include " +
    "includes here's heres something anything everything nothing thing things way part why far less " +
    // Counts say how many, not what: "€1,350.00 for three days" is no "three".
    "two three four five six seven eight nine ten eleven twelve twenty thirty hundred thousand"
)
