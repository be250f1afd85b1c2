// Shapes of the hub's API, named for the console. Every type that has an
// operation in the OpenAPI document is an alias of the generated
// src/api/openapi.ts (openapi-typescript over testdata/openapi/openapi.json,
// the golden copy of the hub's /api/openapi.json): a field the hub renames
// or drops fails vue-tsc here instead of rendering "undefined". Only what the
// document cannot describe is written by hand below: the /ws messages and
// the closed sets the spec names.
import type { components, operations } from './openapi'

type S = components['schemas']

export type StatusUser = S['StatusUser']
export type AuthStatus = S['AuthStatus']
export type Endpoint = S['EndpointStat']
export type PortStat = S['PortStat']
export type DomainStat = S['DomainStat']
export type SecondBucket = S['SecondBucket']
export type Snapshot = S['LiveSnapshot']
export type Connection = S['Connection']
export type NetInterface = S['HostInterface']
export type CaptureResult = S['CaptureResult']
export type RecordStatus = S['RecordingStatus']
export type RecordStop = S['RecordingStopped']
export type RecordFile = S['RecordingFile']
export type HistoryBucket = S['TrafficBucket']
export type HistoryResult = S['TrafficHistory']
export type CompareDay = S['TrafficDay']
export type CompareHour = S['TrafficHour']
export type Comparison = S['TrafficComparison']
/** {ok:true}: the answer of deletes such as DELETE /api/v1/agents/{id}. */
export type OKResult = S['OKResult']
/** One interface of an agent (spec 2.9 rates[]): rates between its last two batches. */
export type AgentRate = S['AgentInterfaceRate']
/** Agent list item (GET /api/v1/agents). */
export type Agent = S['Agent']
/** A socket of an agent's host as reported (wire.Connection). */
export type AgentConnection = S['AgentConnection']
/** GET /api/v1/agents/{id}: the agent and the connections of its last batch. */
export type AgentDetail = S['AgentDetail']
/** GET /api/v1/agents/{id}/history: all interfaces summed, bytes/s and packets/s. */
export type AgentHistoryItem = S['AgentSample']
export type FlowRow = S['FlowRow']
export type Conversation = S['Conversation']
export type SyslogRow = S['SyslogRow']
export type User = S['User']
export type ApiToken = S['APIToken']
export type ApiTokenCreated = S['APITokenCreated']
/** Enroll token as listed: never the secret. */
export type EnrollToken = S['EnrollToken']
/** POST /api/v1/enroll-tokens body. */
export type EnrollTokenCreate = S['EnrollTokenCreate']
/** The create answer: the ent_ secret, shown this once, and the new item. */
export type EnrollTokenCreated = S['EnrollTokenCreated']
export type AuditEvent = S['AuditEvent']
/** GET /api/v1/compliance/status. */
export type ComplianceStatus = S['ComplianceLogStatus']
/** A review record (GET|POST /api/v1/compliance/reviews). */
export type ComplianceReview = S['ComplianceReview']
/** An ISMS register entry (/api/v1/isms/{kind}). */
export type ISMSEntry = S['ISMSEntry']
export type AuditVerify = S['AuditVerification']
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
  /** the fleet summary read from the shared database (the distributed
   * tick), the caller's site's; absent until the hub has read one */
  fleet?: { agents_online: number; agents_total: number; rx_bps: number; tx_bps: number; pps: number; netflow_fps: number; ts: number }
}

/** An address's enrichment (GET /api/v1/flows/conversation src/dst). */
export type HostInfo = S['EndpointInfo']
export type ConversationDetail = S['ConversationDetail']
export type FlowEvent = S['FlowEvent']
export type EventPage = S['EventPage']
export type FlowSeries = S['FlowSeriesOut']
export type GeoStatus = S['GeoStatus']
export type GeoItem = S['GeoItem']
export type FlowExporter = S['FlowExporter']

// Devices and topology (issue 20).
export type DeviceItem = S['DeviceItem']
export type DeviceIface = S['DeviceInterface']
export type DeviceResource = S['DeviceResource']
export type IfaceRate = S['InterfaceRate']
export type DeviceVPN = S['VPNSample']
export type DeviceSDWAN = S['SDWANSample']
export type DevicePolicy = S['FirewallPolicyDelta']
export type ProbeReport = S['ProbeReport']
export type Topology = S['Topology']

// Alerting (issue 18).
export type AlertRecord = S['AlertEvent']
export type AlertEventPage = S['AlertEventPage']
export type Incident = S['Incident']
export type IncidentDetail = S['IncidentDetail']
export type NetworkHealth = S['NetworkHealth']
/** GET /api/v1/processes item (spec 2.9 process traffic item). */
export type ProcessItem = S['ProcessItem']
/** GET /api/v1/l7 item: TLS SNI / HTTP Host grouped by host, kind and process. */
export type L7Item = S['L7Item']
/** GET /api/v1/dns item: grouped by domain and process. */
export type DNSItem = S['DNSItem']
/** GET /api/v1/agents/{id}/processes/{name}. */
export type ProcessDetail = S['ProcessDetail']
export type ProcessDestination = S['ProcessDestination']
export type ProcessName = S['ProcessName']
export type UnattributedReason = S['UnattributedTraffic']

// Reports, schedules, archive and SLA targets (issue 31).
type ReportQuery = NonNullable<operations['getReport']['parameters']['query']>
/** GET /api/report type: traffic, enterprise or compliance. */
export type ReportType = NonNullable<ReportQuery['type']>
/** GET /api/report format: html or pdf. */
export type ReportFormat = NonNullable<ReportQuery['format']>
export type ReportSchedule = S['ReportSchedule']
export type ReportScheduleCreate = S['ReportScheduleCreate']
export type ReportArchiveEntry = S['ReportArchiveEntry']
export type SLATarget = S['SLATarget']
export type SLATargetCreate = S['SLATargetCreate']
/** GET /api/v1/sla/targets item: the target and its current measurement. */
export type SLATargetStatus = S['SLATargetStatus']

// Closed sets the hub declares once (app/api enums.go): the generated
// unions, and value lists for selects and query checks.
export type AlertKind = S['AlertKind']
export type AlertState = S['AlertState']
export type IncidentState = S['IncidentState']
export type FlowWindow = S['FlowWindow']
export type Role = S['Role']
export type Permission = S['Permission']
export { AlertKindValues, AlertStateValues, IncidentStateValues, FlowWindowValues, RoleValues, PermissionValues, INCIDENT_OPS } from './openapi'
