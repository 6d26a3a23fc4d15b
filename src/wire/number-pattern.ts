/**
 * A regular expression for the decimal strings of whole numbers from `min` (0 or 1) to `max`,
 * digits only, at most as many digits as `max` has (leading zeros included). The server parses
 * query numbers with it, and the JSON Schemas publish the same pattern, so the two agree on every
 * string (test/wire/schema-boundaries.test.ts), where "a string of digits, then a range check" cannot be
 * written as a JSON Schema.
 */
export function wholeNumberPattern(min: 0 | 1, max: number): RegExp {
  if (!Number.isSafeInteger(max) || max < 1) throw new Error(`max must be a safe integer of 1 or more, not ${max}`);
  const digits = String(max);
  const n = digits.length;
  // Shorter than max: any digits. As long as max: not above it, digit by digit.
  const alternatives = n > 1 ? [`[0-9]{1,${n - 1}}`] : [];
  for (let i = 0; i < n; i++) {
    const d = Number(digits[i]);
    if (d === 0) continue;
    const rest = n - i - 1;
    alternatives.push(`${digits.slice(0, i)}[0-${d - 1}]${rest > 0 ? `[0-9]{${rest}}` : ''}`);
  }
  alternatives.push(digits);
  return new RegExp(`^${min === 1 ? '(?!0+$)' : ''}(?:${alternatives.join('|')})$`);
}
