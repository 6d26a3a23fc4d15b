/**
 * The scopes a token may carry (docs/protocol.md section 7) and the words the server says about them.
 * No dependency, so the CLI's `token` command can name them without loading zod.
 */
export const SCOPES = ['publish', 'consume', 'subscribe', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** Said beside every refused scope name: what the scopes are. */
export const SCOPE_LIST = `(the scopes: ${SCOPES.join(', ')})`;

export function isScope(name: string): name is Scope {
  return (SCOPES as readonly string[]).includes(name);
}

/** The names among `names` that are not scopes (a misspelt `publisher`), each as JSON text. */
export function unknownScopes(names: readonly string[]): string[] {
  return names.filter((n) => !isScope(n)).map((n) => JSON.stringify(n));
}

/** Edits (insert, delete, replace) between two short words. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * The scope a name that is not one was probably meant to be (`publisher`, `Subscribe_`, `pubilsh`),
 * or undefined: the same letters in another case or with punctuation around them, a scope with a
 * suffix, or two edits away. Names of other services' scopes (`openid`, `read:user`) match none.
 */
export function nearScope(name: string): Scope | undefined {
  if (isScope(name)) return undefined;
  const letters = name.toLowerCase().replace(/[^a-z]/g, '');
  if (letters.length < 4) return undefined;
  return SCOPES.find((scope) => letters === scope || letters.startsWith(scope) || editDistance(letters, scope) <= 2);
}

/**
 * The 403 sentence for a token without the scope a request needs: what it needs, the scopes the
 * token names (its own words, those the server does not know included) and, for a near miss of a
 * real scope, "did you mean".
 */
export function missingScopeMessage(needed: Scope, claimed: readonly string[]): string {
  const has = claimed.length === 0 ? 'it names no scope' : `it names ${claimed.map((n) => JSON.stringify(n)).join(', ')}`;
  const guesses = claimed.flatMap((n) => {
    const near = nearScope(n);
    return near ? [`did you mean "${near}" for ${JSON.stringify(n)}?`] : [];
  });
  return `This token lacks the ${needed} scope (${has}${guesses.length > 0 ? `; ${guesses.join(' ')}` : ''}).`;
}
