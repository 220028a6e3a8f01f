/**
 * "a" or "an" before a word, by how it is said: "an order", "a refund", "a user", "an hour",
 * "an SMS". English spelling is not sound, so the rule reads the start of the word and keeps the
 * common exceptions; a kind like `order` or `x-ray-scan` gets the article a reader expects.
 */

/** Starts with a vowel letter but a consonant sound: "a user", "a one-off", "a euro". */
const CONSONANT_SOUND = /^(u[bcfhjkmnrst][aeiou]|uni|use|usu|ure|uri|url|eu|ew|one|once|ouija)/i;
/** Starts with a consonant letter but a vowel sound: "an hour", "an honest", "an heir". */
const VOWEL_SOUND = /^(hour|honest|honou?r|heir)/i;
/** Letters said with a vowel sound when spelled out, for initialisms ("an SMS", "an HTTP call"). */
const SPELLED_VOWEL = /^[aefhilmnorsx]/i;

/** The indefinite article for `word`: "an" for "order", "a" for "refund". */
export function articleFor(word: string): "a" | "an" {
  const trimmed = word.trim();
  if (trimmed === "") return "a";
  if (VOWEL_SOUND.test(trimmed)) return "an";
  // An initialism without a vowel (SMS, HTTP, MD5), or one letter and a separator (x-ray), is read
  // letter by letter; capitals with a vowel (SHA, NATO) are read as a word.
  if (/^[B-DF-HJ-NP-TV-Z][B-DF-HJ-NP-TV-Z0-9]+\b/.test(trimmed) || /^[a-z](?:[-_.\s]|$)/i.test(trimmed)) return SPELLED_VOWEL.test(trimmed) ? "an" : "a";
  if (CONSONANT_SOUND.test(trimmed)) return "a";
  return /^[aeiou]/i.test(trimmed) ? "an" : "a";
}

/** `word` with its article: "an order", "a refund"; `capital` for the start of a sentence. */
export const withArticle = (word: string, capital = false): string => {
  const article = articleFor(word);
  return `${capital ? article[0]!.toUpperCase() + article.slice(1) : article} ${word}`;
};
