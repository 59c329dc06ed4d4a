// The CLI reads and prints durations with the domain's one formatter and parser.
export { formatDuration, parseDuration } from "@alisio/domain/Durations"
