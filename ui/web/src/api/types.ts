// Shapes of the hub's API, named for the console. Every type that has an
// operation in the OpenAPI document is an alias of the generated
// src/api/openapi.ts (openapi-typescript over testdata/openapi/openapi.json,
// the golden copy of the hub's /api/openapi.json): a field the hub renames
// or drops fails vue-tsc here instead of rendering "undefined". Only what the
// document cannot describe is written by hand below: the /ws messages and
// the closed sets the spec names.
import type { components } from './openapi'

type S = components['schemas']

export type StatusUser = S['StatusUser']
export type AuthStatus = S['AuthStatus']
export type Endpoint = S['CaptureEndpoint']
export type PortStat = S['CapturePort']
export type DomainStat = S['CaptureDomain']
export type SecondBucket = S['CaptureBucket']
export type Snapshot = S['CaptureSnapshot']
export type Connection = S['Connection']
export type NetInterface = S['SourceInterface']
export type CaptureResult = S['CaptureResult']
export type RecordStatus = S['RecordStatus']
export type RecordStop = S['RecordStopResponse']
export type RecordFile = S['RecordFileEntry']
export type HistoryBucket = S['HistoryBucket']
export type HistoryResult = S['HistoryResult']
export type CompareDay = S['HistoryDay']
export type CompareHour = S['HistoryHour']
export type Comparison = S['HistoryComparison']
/** {ok:true}: the answer of deletes such as DELETE /api/v1/agents/{id}. */
export type OKResult = S['OKResult']
/** One interface of an agent (spec 2.9 rates[]): rates between its last two batches. */
export type AgentRate = S['FleetRate']
/** Agent list item (GET /api/v1/agents). */
export type Agent = S['FleetAgentItem']
/** A socket of an agent's host as reported (wire.Connection). */
export type AgentConnection = S['WireConnection']
/** GET /api/v1/agents/{id}: the agent and the connections of its last batch. */
export type AgentDetail = S['FleetAgentDetail']
/** GET /api/v1/agents/{id}/history: all interfaces summed, bytes/s and packets/s. */
export type AgentHistoryItem = S['StoreAgentSample']
export type FlowRow = S['StoreFlowRow']
export type Conversation = S['StoreConversation']
export type SyslogRow = S['StoreSyslogRow']
export type User = S['AuthUserView']
export type ApiToken = S['AuthTokenView']
export type ApiTokenCreated = S['AuthTokenCreated']
/** Enroll token as listed: never the secret. */
export type EnrollToken = S['FleetEnrollTokenItem']
/** POST /api/v1/enroll-tokens body. */
export type EnrollTokenCreate = S['FleetEnrollTokenCreate']
/** The create answer: the ent_ secret, shown this once, and the new item. */
export type EnrollTokenCreated = S['FleetEnrollTokenCreated']
export type AuditEvent = S['StoreAuditEvent']
/** GET /api/v1/compliance/status. */
export type ComplianceStatus = S['ComplianceStatus']
/** A review record (GET|POST /api/v1/compliance/reviews). */
export type ComplianceReview = S['StoreComplianceReview']
/** An ISMS register entry (/api/v1/isms/{kind}). */
export type ISMSEntry = S['ISMSEntry']
export type AuditVerify = S['StoreAuditVerify']
export type Health = S['Health']

/** Attribution backends of spec section 1 ("Agent behaviour"). */
export type AttrMethod = 'ebpf' | 'pcap' | 'etw' | 'off'

/** The states an enroll token's `state` takes (spec 2.9). */
export type EnrollTokenState = 'active' | 'revoked' | 'expired' | 'exhausted'

/** An alert event as the /ws tick carries it (spec 6.1 alert_events[]). */
export interface AlertEvent {
  id: number
  ts: number
  kind: string
  key: string
  message: string
}

/** The /ws message sent each second (spec 6.1); WebSocket messages have no
 * OpenAPI operation, so this one is written here from the generated parts. */
export interface Tick {
  type: 'tick'
  stats: Snapshot
  /** the host's most active sockets, at most 200 */
  connections: Connection[] | null
  /** how many sockets the host has */
  connections_total: number
  alert_events: AlertEvent[] | null
  record: { recording: boolean; packets: number; bytes: number }
}

/** An address's enrichment (GET /api/v1/flows/conversation src/dst). */
export type HostInfo = S['EndpointInfo']
export type ConversationDetail = S['ConversationDetail']
export type FlowEvent = S['StoreEvent']
export type EventPage = S['EventPage']
export type FlowSeries = S['FlowSeriesOut']
export type GeoStatus = S['GeoStatus']
export type GeoItem = S['GeoItem']
export type FlowExporter = S['FlowsExporterStatus']

// Devices and topology (issue 20).
export type DeviceItem = S['DeviceItem']
export type DeviceIface = S['DeviceInterface']
export type DeviceResource = S['RecordResourceSample']
export type IfaceRate = S['StoreIfaceRate']
export type DeviceVPN = S['RecordVPNSample']
export type DeviceSDWAN = S['RecordSDWANSample']
export type DevicePolicy = S['RecordPolicyDelta']
export type ProbeReport = S['ProbeReport']
export type Topology = S['TopologyTopology']

// Alerting (issue 18).
export type AlertRecord = S['RecordAlertEvent']
export type AlertEventPage = S['AlertEventPage']
export type Incident = S['RecordIncident']
export type IncidentDetail = S['IncidentDetail']
export type NetworkHealth = S['NetworkHealth']
/** GET /api/v1/processes item (spec 2.9 process traffic item). */
export type ProcessItem = S['StoreProcessItem']
/** GET /api/v1/l7 item: TLS SNI / HTTP Host grouped by host, kind and process. */
export type L7Item = S['StoreL7Item']
/** GET /api/v1/dns item: grouped by domain and process. */
export type DNSItem = S['StoreDNSItem']
/** GET /api/v1/agents/{id}/processes/{name}. */
export type ProcessDetail = S['ProcviewDetail']
export type ProcessDestination = S['ProcviewDestination']
export type ProcessName = S['StoreProcessName']
export type UnattributedReason = S['StoreUnattributedReason']
