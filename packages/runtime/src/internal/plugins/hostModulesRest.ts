// The rest of effect, shared with the plugins that import it: one chunk loaded on first use (the
// whole library, a few hundred milliseconds). See hostModules.ts.

import * as m_effect from "effect"
import * as m_Arbitrary from "effect/Arbitrary"
import * as m_BigDecimal from "effect/BigDecimal"
import * as m_BigInt from "effect/BigInt"
import * as m_Boolean from "effect/Boolean"
import * as m_Cache from "effect/Cache"
import * as m_Channel from "effect/Channel"
import * as m_ChildExecutorDecision from "effect/ChildExecutorDecision"
import * as m_ConfigProvider from "effect/ConfigProvider"
import * as m_ConfigProviderPathPatch from "effect/ConfigProviderPathPatch"
import * as m_Cron from "effect/Cron"
import * as m_DateTime from "effect/DateTime"
import * as m_DefaultServices from "effect/DefaultServices"
import * as m_Differ from "effect/Differ"
import * as m_Effectable from "effect/Effectable"
import * as m_Encoding from "effect/Encoding"
import * as m_Equivalence from "effect/Equivalence"
import * as m_ExecutionPlan from "effect/ExecutionPlan"
import * as m_ExecutionStrategy from "effect/ExecutionStrategy"
import * as m_FastCheck from "effect/FastCheck"
import * as m_FiberHandle from "effect/FiberHandle"
import * as m_FiberId from "effect/FiberId"
import * as m_FiberRefs from "effect/FiberRefs"
import * as m_FiberRefsPatch from "effect/FiberRefsPatch"
import * as m_FiberSet from "effect/FiberSet"
import * as m_FiberStatus from "effect/FiberStatus"
import * as m_GlobalValue from "effect/GlobalValue"
import * as m_Graph from "effect/Graph"
import * as m_GroupBy from "effect/GroupBy"
import * as m_HashRing from "effect/HashRing"
import * as m_HKT from "effect/HKT"
import * as m_Inspectable from "effect/Inspectable"
import * as m_Iterable from "effect/Iterable"
import * as m_KeyedPool from "effect/KeyedPool"
import * as m_LayerMap from "effect/LayerMap"
import * as m_Logger from "effect/Logger"
import * as m_LogLevel from "effect/LogLevel"
import * as m_LogSpan from "effect/LogSpan"
import * as m_Mailbox from "effect/Mailbox"
import * as m_ManagedRuntime from "effect/ManagedRuntime"
import * as m_MergeDecision from "effect/MergeDecision"
import * as m_MergeState from "effect/MergeState"
import * as m_MergeStrategy from "effect/MergeStrategy"
import * as m_Metric from "effect/Metric"
import * as m_MetricBoundaries from "effect/MetricBoundaries"
import * as m_MetricHook from "effect/MetricHook"
import * as m_MetricKey from "effect/MetricKey"
import * as m_MetricKeyType from "effect/MetricKeyType"
import * as m_MetricLabel from "effect/MetricLabel"
import * as m_MetricPair from "effect/MetricPair"
import * as m_MetricPolling from "effect/MetricPolling"
import * as m_MetricRegistry from "effect/MetricRegistry"
import * as m_MetricState from "effect/MetricState"
import * as m_Micro from "effect/Micro"
import * as m_ModuleVersion from "effect/ModuleVersion"
import * as m_MutableHashMap from "effect/MutableHashMap"
import * as m_MutableHashSet from "effect/MutableHashSet"
import * as m_MutableList from "effect/MutableList"
import * as m_MutableQueue from "effect/MutableQueue"
import * as m_MutableRef from "effect/MutableRef"
import * as m_NonEmptyIterable from "effect/NonEmptyIterable"
import * as m_Ordering from "effect/Ordering"
import * as m_PartitionedSemaphore from "effect/PartitionedSemaphore"
import * as m_Pipeable from "effect/Pipeable"
import * as m_Pool from "effect/Pool"
import * as m_Pretty from "effect/Pretty"
import * as m_PrimaryKey from "effect/PrimaryKey"
import * as m_RateLimiter from "effect/RateLimiter"
import * as m_RcMap from "effect/RcMap"
import * as m_RcRef from "effect/RcRef"
import * as m_Readable from "effect/Readable"
import * as m_RedBlackTree from "effect/RedBlackTree"
import * as m_RegExp from "effect/RegExp"
import * as m_Reloadable from "effect/Reloadable"
import * as m_Request from "effect/Request"
import * as m_RequestBlock from "effect/RequestBlock"
import * as m_RequestResolver from "effect/RequestResolver"
import * as m_Resource from "effect/Resource"
import * as m_Runtime from "effect/Runtime"
import * as m_RuntimeFlags from "effect/RuntimeFlags"
import * as m_RuntimeFlagsPatch from "effect/RuntimeFlagsPatch"
import * as m_ScheduleDecision from "effect/ScheduleDecision"
import * as m_ScheduleInterval from "effect/ScheduleInterval"
import * as m_ScheduleIntervals from "effect/ScheduleIntervals"
import * as m_Scheduler from "effect/Scheduler"
import * as m_SchemaAST from "effect/SchemaAST"
import * as m_ScopedCache from "effect/ScopedCache"
import * as m_ScopedRef from "effect/ScopedRef"
import * as m_Secret from "effect/Secret"
import * as m_SingleProducerAsyncInput from "effect/SingleProducerAsyncInput"
import * as m_Sink from "effect/Sink"
import * as m_SortedMap from "effect/SortedMap"
import * as m_SortedSet from "effect/SortedSet"
import * as m_STM from "effect/STM"
import * as m_Streamable from "effect/Streamable"
import * as m_StreamEmit from "effect/StreamEmit"
import * as m_StreamHaltStrategy from "effect/StreamHaltStrategy"
import * as m_Subscribable from "effect/Subscribable"
import * as m_Supervisor from "effect/Supervisor"
import * as m_Symbol from "effect/Symbol"
import * as m_TArray from "effect/TArray"
import * as m_Take from "effect/Take"
import * as m_TDeferred from "effect/TDeferred"
import * as m_TestAnnotation from "effect/TestAnnotation"
import * as m_TestAnnotationMap from "effect/TestAnnotationMap"
import * as m_TestAnnotations from "effect/TestAnnotations"
import * as m_TestClock from "effect/TestClock"
import * as m_TestConfig from "effect/TestConfig"
import * as m_TestContext from "effect/TestContext"
import * as m_TestLive from "effect/TestLive"
import * as m_TestServices from "effect/TestServices"
import * as m_TestSized from "effect/TestSized"
import * as m_TMap from "effect/TMap"
import * as m_TPriorityQueue from "effect/TPriorityQueue"
import * as m_TPubSub from "effect/TPubSub"
import * as m_TQueue from "effect/TQueue"
import * as m_TRandom from "effect/TRandom"
import * as m_TReentrantLock from "effect/TReentrantLock"
import * as m_TRef from "effect/TRef"
import * as m_Tracer from "effect/Tracer"
import * as m_Trie from "effect/Trie"
import * as m_TSemaphore from "effect/TSemaphore"
import * as m_TSet from "effect/TSet"
import * as m_TSubscriptionRef from "effect/TSubscriptionRef"
import * as m_Unify from "effect/Unify"
import * as m_UpstreamPullRequest from "effect/UpstreamPullRequest"
import * as m_UpstreamPullStrategy from "effect/UpstreamPullStrategy"
import * as m_Utils from "effect/Utils"

export const restModules: { readonly [specifier: string]: object } = {
  effect: m_effect,
  "effect/Arbitrary": m_Arbitrary,
  "effect/BigDecimal": m_BigDecimal,
  "effect/BigInt": m_BigInt,
  "effect/Boolean": m_Boolean,
  "effect/Cache": m_Cache,
  "effect/Channel": m_Channel,
  "effect/ChildExecutorDecision": m_ChildExecutorDecision,
  "effect/ConfigProvider": m_ConfigProvider,
  "effect/ConfigProviderPathPatch": m_ConfigProviderPathPatch,
  "effect/Cron": m_Cron,
  "effect/DateTime": m_DateTime,
  "effect/DefaultServices": m_DefaultServices,
  "effect/Differ": m_Differ,
  "effect/Effectable": m_Effectable,
  "effect/Encoding": m_Encoding,
  "effect/Equivalence": m_Equivalence,
  "effect/ExecutionPlan": m_ExecutionPlan,
  "effect/ExecutionStrategy": m_ExecutionStrategy,
  "effect/FastCheck": m_FastCheck,
  "effect/FiberHandle": m_FiberHandle,
  "effect/FiberId": m_FiberId,
  "effect/FiberRefs": m_FiberRefs,
  "effect/FiberRefsPatch": m_FiberRefsPatch,
  "effect/FiberSet": m_FiberSet,
  "effect/FiberStatus": m_FiberStatus,
  "effect/GlobalValue": m_GlobalValue,
  "effect/Graph": m_Graph,
  "effect/GroupBy": m_GroupBy,
  "effect/HKT": m_HKT,
  "effect/HashRing": m_HashRing,
  "effect/Inspectable": m_Inspectable,
  "effect/Iterable": m_Iterable,
  "effect/KeyedPool": m_KeyedPool,
  "effect/LayerMap": m_LayerMap,
  "effect/LogLevel": m_LogLevel,
  "effect/LogSpan": m_LogSpan,
  "effect/Logger": m_Logger,
  "effect/Mailbox": m_Mailbox,
  "effect/ManagedRuntime": m_ManagedRuntime,
  "effect/MergeDecision": m_MergeDecision,
  "effect/MergeState": m_MergeState,
  "effect/MergeStrategy": m_MergeStrategy,
  "effect/Metric": m_Metric,
  "effect/MetricBoundaries": m_MetricBoundaries,
  "effect/MetricHook": m_MetricHook,
  "effect/MetricKey": m_MetricKey,
  "effect/MetricKeyType": m_MetricKeyType,
  "effect/MetricLabel": m_MetricLabel,
  "effect/MetricPair": m_MetricPair,
  "effect/MetricPolling": m_MetricPolling,
  "effect/MetricRegistry": m_MetricRegistry,
  "effect/MetricState": m_MetricState,
  "effect/Micro": m_Micro,
  "effect/ModuleVersion": m_ModuleVersion,
  "effect/MutableHashMap": m_MutableHashMap,
  "effect/MutableHashSet": m_MutableHashSet,
  "effect/MutableList": m_MutableList,
  "effect/MutableQueue": m_MutableQueue,
  "effect/MutableRef": m_MutableRef,
  "effect/NonEmptyIterable": m_NonEmptyIterable,
  "effect/Ordering": m_Ordering,
  "effect/PartitionedSemaphore": m_PartitionedSemaphore,
  "effect/Pipeable": m_Pipeable,
  "effect/Pool": m_Pool,
  "effect/Pretty": m_Pretty,
  "effect/PrimaryKey": m_PrimaryKey,
  "effect/RateLimiter": m_RateLimiter,
  "effect/RcMap": m_RcMap,
  "effect/RcRef": m_RcRef,
  "effect/Readable": m_Readable,
  "effect/RedBlackTree": m_RedBlackTree,
  "effect/RegExp": m_RegExp,
  "effect/Reloadable": m_Reloadable,
  "effect/Request": m_Request,
  "effect/RequestBlock": m_RequestBlock,
  "effect/RequestResolver": m_RequestResolver,
  "effect/Resource": m_Resource,
  "effect/Runtime": m_Runtime,
  "effect/RuntimeFlags": m_RuntimeFlags,
  "effect/RuntimeFlagsPatch": m_RuntimeFlagsPatch,
  "effect/STM": m_STM,
  "effect/ScheduleDecision": m_ScheduleDecision,
  "effect/ScheduleInterval": m_ScheduleInterval,
  "effect/ScheduleIntervals": m_ScheduleIntervals,
  "effect/Scheduler": m_Scheduler,
  "effect/SchemaAST": m_SchemaAST,
  "effect/ScopedCache": m_ScopedCache,
  "effect/ScopedRef": m_ScopedRef,
  "effect/Secret": m_Secret,
  "effect/SingleProducerAsyncInput": m_SingleProducerAsyncInput,
  "effect/Sink": m_Sink,
  "effect/SortedMap": m_SortedMap,
  "effect/SortedSet": m_SortedSet,
  "effect/StreamEmit": m_StreamEmit,
  "effect/StreamHaltStrategy": m_StreamHaltStrategy,
  "effect/Streamable": m_Streamable,
  "effect/Subscribable": m_Subscribable,
  "effect/Supervisor": m_Supervisor,
  "effect/Symbol": m_Symbol,
  "effect/TArray": m_TArray,
  "effect/TDeferred": m_TDeferred,
  "effect/TMap": m_TMap,
  "effect/TPriorityQueue": m_TPriorityQueue,
  "effect/TPubSub": m_TPubSub,
  "effect/TQueue": m_TQueue,
  "effect/TRandom": m_TRandom,
  "effect/TReentrantLock": m_TReentrantLock,
  "effect/TRef": m_TRef,
  "effect/TSemaphore": m_TSemaphore,
  "effect/TSet": m_TSet,
  "effect/TSubscriptionRef": m_TSubscriptionRef,
  "effect/Take": m_Take,
  "effect/TestAnnotation": m_TestAnnotation,
  "effect/TestAnnotationMap": m_TestAnnotationMap,
  "effect/TestAnnotations": m_TestAnnotations,
  "effect/TestClock": m_TestClock,
  "effect/TestConfig": m_TestConfig,
  "effect/TestContext": m_TestContext,
  "effect/TestLive": m_TestLive,
  "effect/TestServices": m_TestServices,
  "effect/TestSized": m_TestSized,
  "effect/Tracer": m_Tracer,
  "effect/Trie": m_Trie,
  "effect/Unify": m_Unify,
  "effect/UpstreamPullRequest": m_UpstreamPullRequest,
  "effect/UpstreamPullStrategy": m_UpstreamPullStrategy,
  "effect/Utils": m_Utils
}
