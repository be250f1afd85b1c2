// Shapes of the hub's API (spec section 2; testdata/openapi/openapi.json).

export interface StatusUser {
  username: string
  role: string
  site: string
  actor_type: string
}

export interface AuthStatus {
  required: boolean
  authenticated: boolean
  user?: StatusUser
  sso: boolean
  multi_site: boolean
  /** authentication off and the hub reachable beyond this machine */
  exposed?: boolean
}

export interface Endpoint {
  ip: string
  hostname: string
  local: boolean
  country: string
  asn: string
  in: number
  out: number
  total: number
  packets: number
}

export interface PortStat {
  port: number
  name: string
  bytes: number
  packets: number
}

export interface DomainStat {
  domain: string
  queries: number
  responses: number
  ips: string[] | null
}

export interface SecondBucket {
  ts: number
  in: number
  out: number
  local: number
  packets: number
}

export interface Snapshot {
  running: boolean
  device: string
  error?: string
  total_packets: number
  total_bytes: number
  dropped: number
  bps_in: number
  bps_out: number
  bps_local: number
  pps: number
  protocols: Record<string, number> | null
  top_endpoints: Endpoint[] | null
  top_ports: PortStat[] | null
  top_domains: DomainStat[] | null
  history: SecondBucket[] | null
}

export interface Connection {
  proto: string
  local_addr: string
  remote_addr: string
  status: string
  pid: number
  process: string
  count?: number
  country?: string
  asn?: string
}

export interface AlertEvent {
  id: number
  ts: number
  kind: string
  key: string
  message: string
}

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

export interface NetInterface {
  name: string
  hw_addr: string
  mtu: number
  up: boolean
  loopback: boolean
  can_sniff: boolean
  addresses: string[] | null
  rx_bytes: number
  tx_bytes: number
  rx_packets: number
  tx_packets: number
}

export interface CaptureResult {
  ok: boolean
  error?: string
}

export interface RecordStatus {
  recording: boolean
  file: string
  packets: number
  bytes: number
  error?: string
}

export interface RecordStop {
  ok: boolean
  file: string
  packets: number
  bytes: number
}

export interface RecordFile {
  name: string
  bytes: number
  mod_time: number
}

export interface HistoryBucket {
  ts: number
  in: number
  out: number
  local: number
  pps: number
}

export interface HistoryResult {
  range_minutes: number
  db_bytes: number
  totals: {
    avg_bps_in: number
    avg_bps_out: number
    peak_bps_in: number
    peak_bps_out: number
    seconds: number
    samples: number
  }
  buckets: HistoryBucket[] | null
}

export interface CompareDay {
  day: number
  avg_bps_in: number
  avg_bps_out: number
  peak_bps_in: number
  peak_bps_out: number
  samples: number
}

export interface CompareHour {
  hour: number
  bps_in: number
  bps_out: number
}

export interface Comparison {
  days: CompareDay[] | null
  today_hours: CompareHour[] | null
  yesterday_hours: CompareHour[] | null
}

/** {ok:true}: the answer of deletes such as DELETE /api/v1/agents/{id}. */
export interface OKResult {
  ok: boolean
}

/** One interface of an agent (spec 2.9 rates[]): rates between its last two batches. */
export interface AgentRate {
  name: string
  /** bits per second received */
  rx_bps: number
  /** bits per second sent */
  tx_bps: number
  /** packets per second, both directions */
  pps: number
  /** cumulative counters as reported */
  rx_bytes: number
  tx_bytes: number
  rx_packets: number
  tx_packets: number
}

export type AttrMethod = 'ebpf' | 'pcap' | 'etw' | 'off'

/** Agent list item (GET /api/v1/agents; fleet.AgentItem). */
export interface Agent {
  id: number
  name: string
  site: string
  /** telemetry within three intervals */
  online: boolean
  /** ts of the last batch, Unix seconds (0: none yet) */
  last_seen: number
  version: string
  remote_ip: string
  os: string
  arch: string
  protocol_version: number
  enrolled_at: number
  attr_method: AttrMethod
  /** the pcap interface (pcap only) */
  attr_iface: string
  /** why attribution is off or failed */
  attr_note: string
  rates: AgentRate[]
  conns: number
  /** batches the agent reported discarding from its full offline queue */
  dropped: number
  /** expiry of the last client certificate issued, Unix seconds (0: none) */
  cert_not_after: number
}

/** A socket of an agent's host as reported (wire.Connection). */
export interface AgentConnection {
  proto: string
  local_addr: string
  remote_addr: string
  status: string
  pid: number
  process: string
}

/** GET /api/v1/agents/{id}: the agent and the connections of its last batch. */
export interface AgentDetail {
  agent: Agent
  connections: AgentConnection[]
}

/** GET /api/v1/agents/{id}/history: all interfaces summed, bytes/s and packets/s. */
export interface AgentHistoryItem {
  ts: number
  in: number
  out: number
  local: number
  pps: number
}

export interface FlowRow {
  ts: number
  device: string
  src: string
  dst: string
  src_port: number
  dst_port: number
  proto: number
  packets: number
  octets: number
  flows?: number
  first_seen?: number
}

export interface Conversation {
  src: string
  dst: string
  src_port: number
  dst_port: number
  proto: number
  packets: number
  octets: number
  flows: number
  first_seen: number
  last_seen: number
}

export interface SyslogRow {
  id: number
  ts: number
  host: string
  severity: number
  tag: string
  message: string
  facility?: number
  source?: string
}

export interface User {
  id: number
  username: string
  role: string
  site: string
  enabled: boolean
  sso?: boolean
}

export interface ApiToken {
  id: number
  name: string
  role: string
  site: string
  created_by: string
  created_at: number
  last_used: number
}

export interface ApiTokenCreated extends ApiToken {
  token: string
}

export type EnrollTokenState = 'active' | 'revoked' | 'expired' | 'exhausted'

/** Enroll token as listed (fleet.EnrollTokenItem): never the secret. */
export interface EnrollToken {
  id: number
  name: string
  site: string
  created_at: number
  created_by: string
  /** Unix seconds; 0 = never */
  expires_at: number
  last_used: number
  revoked: boolean
  revoked_at: number
  /** 0 = unlimited */
  max_uses: number
  uses: number
  /** source prefixes allowed to enroll with it; empty: any */
  allowed_cidrs: string[]
  state: EnrollTokenState
}

/** POST /api/v1/enroll-tokens body (fleet.EnrollTokenCreate). */
export interface EnrollTokenCreate {
  name: string
  site?: string
  /** omitted or 0: 1 day; -1: never; else 1-3650 */
  expires_in_days?: number
  /** omitted: 1; 0: unlimited */
  max_uses?: number
  allowed_cidrs?: string[]
}

/** The create answer: the ent_ secret, shown this once, and the new item. */
export interface EnrollTokenCreated {
  ok: boolean
  id: number
  token: string
  item: EnrollToken
}

export interface AuditEvent {
  id: number
  ts: number
  username: string
  role: string
  action: string
  target: string
  detail: string
  ip: string
  prev_hash: string
  hash: string
  actor_type?: string
  request_id?: string
  user_agent?: string
  result?: string
  before_json?: string
  after_json?: string
}

export interface AuditVerify {
  ok: boolean
  broken_at: number
  checked: number
}

export interface Health {
  version: string
  protocol_version: number
}
