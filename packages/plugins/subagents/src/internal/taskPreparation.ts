// A task's steps before its child runs: its place in the queue, the write lock or the git worktree
// it works in, and the spawn of its child session.
import * as path from "node:path"
import { ToolError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import type { PluginApiService } from "@alisio/domain/Plugin"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { SubagentsConfig } from "../SubagentsConfig.js"
import type { TaskRecord, WorktreeRecord } from "../TaskRecords.js"
import type { LiveTask } from "../Tasks.js"
import { addWorktree, type Repository, repositoryOf } from "../Worktrees.js"
import { modeOf, spawnOptions } from "./childSpec.js"
import type { Scheduler } from "./scheduler.js"
import type { Prepared } from "./taskEnding.js"
import type { WriteLocks } from "./writeLocks.js"

/** What `prepare` got done, read when it stopped half-way. */
export interface Progress {
  accepted: boolean
  value: Prepared
}

/** Queue, lock, worktree and spawn: everything before the child runs. */
export const makePrepare =
  (
    api: PluginApiService,
    config: SubagentsConfig,
    scheduler: Scheduler,
    locks: WriteLocks,
    save: (task: LiveTask, change: Partial<TaskRecord>) => Effect.Effect<void>,
    bySession: Map<string, LiveTask>
  ) =>
  (task: LiveTask, accepted: Deferred.Deferred<void, ToolError>, prepared: Progress) =>
    Effect.gen(function* () {
      const { record } = task
      const go = yield* scheduler
        .enter(
          { id: record.id, parent: record.parentSessionId as SessionId, root: record.rootSessionId as SessionId },
          record.background ? undefined : (record.parentSessionId as SessionId)
        )
        .pipe(Effect.tapError((refusal) => Deferred.fail(accepted, new ToolError({ message: refusal.message }))))
      yield* save(task, {})
      if (record.background) yield* api.sessions.expectNotice(record.parentSessionId as SessionId)
      prepared.accepted = true
      yield* Deferred.succeed(accepted, undefined)
      yield* Deferred.await(go)

      let mode = modeOf(config, task)
      let repository: Repository | undefined
      if (mode === "worktree") {
        repository = yield* repositoryOf(task.cwd)
        if (repository._tag === "Unavailable") {
          mode = "serial"
          prepared.value = {
            repository,
            workspaceNote:
              `Git worktrees were not available (${repository.reason}), so this writing subagent ran in the shared ` +
              "workspace, one writing subagent at a time."
          }
        }
      }
      let tree: WorktreeRecord | undefined
      let cwd: string | undefined
      if (mode === "worktree" && repository?._tag === "Repository") {
        prepared.value = { repository }
        const dir = path.join(api.paths.state, "worktrees", record.id)
        const branch = `alisio/${record.id}`
        const made = yield* Effect.either(addWorktree(repository.root, dir, branch, repository.head))
        if (made._tag === "Left") {
          // A branch named `alisio`, a locked or full repository: the task still runs, as without git.
          mode = "serial"
          prepared.value = {
            workspaceNote:
              `No git worktree could be made (${made.left.message}), so this writing subagent ran in the shared ` +
              "workspace, one writing subagent at a time."
          }
        } else {
          tree = {
            dir,
            branch,
            base: repository.head,
            ...(repository.branch === undefined ? {} : { baseBranch: repository.branch }),
            repoRoot: repository.root,
            target: task.cwd,
            state: "active"
          }
          cwd = repository.subdir === "" ? dir : path.join(dir, repository.subdir)
          yield* save(task, { worktree: tree })
        }
      }
      if (mode === "serial") {
        const key = repository?._tag === "Repository" ? repository.root : task.cwd
        yield* scheduler.blockedWhile(record.id, locks.hold(key, record.id, task.line))
      }
      const handle = yield* api.sessions.spawn(spawnOptions(config, task, cwd, tree)).pipe(
        Effect.tap((spawned) =>
          Effect.sync(() => {
            task.handle = spawned
            bySession.set(spawned.sessionId, task)
          })
        ),
        Effect.mapError((error) => {
          if (error._tag === "ChildSessionLimitError" && error.limit === "ended") {
            prepared.value = { ...prepared.value, parentEnded: true }
          }
          return new ToolError({ message: error.message })
        })
      )
      yield* scheduler.started(record.id, handle.sessionId)
      yield* save(task, {
        status: "running",
        sessionId: handle.sessionId,
        runId: handle.runId,
        startedAt: yield* Clock.currentTimeMillis
      })
      yield* Deferred.succeed(task.started, undefined)
    })
