// The one mapping of Node's file-system error codes for the runtime's state (database, blobs,
// remembered choices): what went wrong, in the terms of `StoreError` / `BlobError` reasons.

/** What a failed file-system call means for the person: no space, no permission, or something else. */
export type ErrnoReason = "disk_full" | "read_only" | "io"

/** The `code` of a Node system error (`ENOENT`, `EACCES`…), if it has one. */
export const errnoCode = (error: unknown): string | undefined => {
  const code = typeof error === "object" && error !== null ? (error as { readonly code?: unknown }).code : undefined
  return typeof code === "string" ? code : undefined
}

export const errnoReason = (error: unknown): ErrnoReason => {
  switch (errnoCode(error)) {
    case "ENOSPC":
    case "EDQUOT":
      return "disk_full"
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return "read_only"
    default:
      return "io"
  }
}

/** The error's own words, for the end of a message. */
export const errorDetail = (error: unknown): string => (error instanceof Error ? error.message : String(error))
