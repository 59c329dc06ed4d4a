// The modules shared with plugins that a run of Alisio loads anyway, and the domain: one chunk,
// cheap to load because its code is already there. See hostModules.ts.

import * as m_domain from "@alisio/domain"
import * as m_domain_ChildSession from "@alisio/domain/ChildSession"
import * as m_domain_CloseMatches from "@alisio/domain/CloseMatches"
import * as m_domain_Command from "@alisio/domain/Command"
import * as m_domain_Durations from "@alisio/domain/Durations"
import * as m_domain_Errors from "@alisio/domain/Errors"
import * as m_domain_Extensions from "@alisio/domain/Extensions"
import * as m_domain_Ids from "@alisio/domain/Ids"
import * as m_domain_LanguageModel from "@alisio/domain/LanguageModel"
import * as m_domain_Limits from "@alisio/domain/Limits"
import * as m_domain_Message from "@alisio/domain/Message"
import * as m_domain_OnFirstUse from "@alisio/domain/OnFirstUse"
import * as m_domain_Plugin from "@alisio/domain/Plugin"
import * as m_domain_RunEvent from "@alisio/domain/RunEvent"
import * as m_domain_SqlDatabase from "@alisio/domain/SqlDatabase"
import * as m_domain_Tool from "@alisio/domain/Tool"
import * as m_domain_Usage from "@alisio/domain/Usage"
import * as m_Array from "effect/Array"
import * as m_Brand from "effect/Brand"
import * as m_Cause from "effect/Cause"
import * as m_Chunk from "effect/Chunk"
import * as m_Clock from "effect/Clock"
import * as m_Config from "effect/Config"
import * as m_ConfigError from "effect/ConfigError"
import * as m_Console from "effect/Console"
import * as m_Context from "effect/Context"
import * as m_Data from "effect/Data"
import * as m_Deferred from "effect/Deferred"
import * as m_Duration from "effect/Duration"
import * as m_Effect from "effect/Effect"
import * as m_Either from "effect/Either"
import * as m_Equal from "effect/Equal"
import * as m_Exit from "effect/Exit"
import * as m_Fiber from "effect/Fiber"
import * as m_FiberMap from "effect/FiberMap"
import * as m_FiberRef from "effect/FiberRef"
import * as m_Function from "effect/Function"
import * as m_Hash from "effect/Hash"
import * as m_HashMap from "effect/HashMap"
import * as m_HashSet from "effect/HashSet"
import * as m_JSONSchema from "effect/JSONSchema"
import * as m_Layer from "effect/Layer"
import * as m_List from "effect/List"
import * as m_Match from "effect/Match"
import * as m_Number from "effect/Number"
import * as m_Option from "effect/Option"
import * as m_Order from "effect/Order"
import * as m_ParseResult from "effect/ParseResult"
import * as m_Predicate from "effect/Predicate"
import * as m_PubSub from "effect/PubSub"
import * as m_Queue from "effect/Queue"
import * as m_Random from "effect/Random"
import * as m_Record from "effect/Record"
import * as m_Redacted from "effect/Redacted"
import * as m_Ref from "effect/Ref"
import * as m_Schedule from "effect/Schedule"
import * as m_Schema from "effect/Schema"
import * as m_Scope from "effect/Scope"
import * as m_Stream from "effect/Stream"
import * as m_String from "effect/String"
import * as m_Struct from "effect/Struct"
import * as m_SubscriptionRef from "effect/SubscriptionRef"
import * as m_SynchronizedRef from "effect/SynchronizedRef"
import * as m_Tuple from "effect/Tuple"
import * as m_Types from "effect/Types"

export const coreModules: { readonly [specifier: string]: object } = {
  "effect/Array": m_Array,
  "effect/Brand": m_Brand,
  "effect/Cause": m_Cause,
  "effect/Chunk": m_Chunk,
  "effect/Clock": m_Clock,
  "effect/Config": m_Config,
  "effect/ConfigError": m_ConfigError,
  "effect/Console": m_Console,
  "effect/Context": m_Context,
  "effect/Data": m_Data,
  "effect/Deferred": m_Deferred,
  "effect/Duration": m_Duration,
  "effect/Effect": m_Effect,
  "effect/Either": m_Either,
  "effect/Equal": m_Equal,
  "effect/Exit": m_Exit,
  "effect/Fiber": m_Fiber,
  "effect/FiberMap": m_FiberMap,
  "effect/FiberRef": m_FiberRef,
  "effect/Function": m_Function,
  "effect/Hash": m_Hash,
  "effect/HashMap": m_HashMap,
  "effect/HashSet": m_HashSet,
  "effect/JSONSchema": m_JSONSchema,
  "effect/Layer": m_Layer,
  "effect/List": m_List,
  "effect/Match": m_Match,
  "effect/Number": m_Number,
  "effect/Option": m_Option,
  "effect/Order": m_Order,
  "effect/ParseResult": m_ParseResult,
  "effect/Predicate": m_Predicate,
  "effect/PubSub": m_PubSub,
  "effect/Queue": m_Queue,
  "effect/Random": m_Random,
  "effect/Record": m_Record,
  "effect/Redacted": m_Redacted,
  "effect/Ref": m_Ref,
  "effect/Schedule": m_Schedule,
  "effect/Schema": m_Schema,
  "effect/Scope": m_Scope,
  "effect/Stream": m_Stream,
  "effect/String": m_String,
  "effect/Struct": m_Struct,
  "effect/SubscriptionRef": m_SubscriptionRef,
  "effect/SynchronizedRef": m_SynchronizedRef,
  "effect/Tuple": m_Tuple,
  "effect/Types": m_Types,
  "@alisio/domain": m_domain,
  "@alisio/domain/ChildSession": m_domain_ChildSession,
  "@alisio/domain/CloseMatches": m_domain_CloseMatches,
  "@alisio/domain/Command": m_domain_Command,
  "@alisio/domain/Durations": m_domain_Durations,
  "@alisio/domain/Errors": m_domain_Errors,
  "@alisio/domain/Extensions": m_domain_Extensions,
  "@alisio/domain/Ids": m_domain_Ids,
  "@alisio/domain/LanguageModel": m_domain_LanguageModel,
  "@alisio/domain/Limits": m_domain_Limits,
  "@alisio/domain/Message": m_domain_Message,
  "@alisio/domain/OnFirstUse": m_domain_OnFirstUse,
  "@alisio/domain/Plugin": m_domain_Plugin,
  "@alisio/domain/RunEvent": m_domain_RunEvent,
  "@alisio/domain/SqlDatabase": m_domain_SqlDatabase,
  "@alisio/domain/Tool": m_domain_Tool,
  "@alisio/domain/Usage": m_domain_Usage
}
