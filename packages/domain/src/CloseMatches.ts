// Names close to a mistyped one, for "did you mean": slash commands, configuration keys (the
// runtime's and plugins').

/** The optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps cost one. */
export const editDistance = (a: string, b: string): number => {
  const rows = a.length + 1
  const cols = b.length + 1
  const d: Array<Array<number>> = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0))
  )
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1)
      d[i]![j] = best
    }
  }
  return d[a.length]![b.length]!
}

/**
 * Names close to `typed`: within an edit distance of one per three characters (at least one, at
 * most three), starting with it, or ending with it after a `:` (`pdf` → `skill:pdf`). Closest first.
 */
export const closeMatches = (typed: string, names: Iterable<string>, limit = 5): ReadonlyArray<string> => {
  const allowed = Math.min(3, Math.max(1, Math.floor(typed.length / 3)))
  const scored: Array<{ name: string; score: number }> = []
  for (const name of names) {
    const tail = name.slice(name.lastIndexOf(":") + 1)
    // The distance is at least the difference in length: most names need no table.
    const near = (other: string) => Math.abs(other.length - typed.length) <= allowed
    const distance = Math.min(
      near(name) ? editDistance(typed, name) : Number.POSITIVE_INFINITY,
      near(tail) ? editDistance(typed, tail) : Number.POSITIVE_INFINITY
    )
    if (distance <= allowed) scored.push({ name, score: distance })
    else if (typed.length >= 2 && name.startsWith(typed)) scored.push({ name, score: allowed + 1 })
  }
  return scored
    .sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : 1))
    .slice(0, limit)
    .map((entry) => entry.name)
}
