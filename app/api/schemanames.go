package api

import (
	"netmon/app/ai"
	"netmon/app/ai/prompt"
	"reflect"

	"netmon/agentmode/wire"
	"netmon/alerting"
	"netmon/alerting/health"
	"netmon/alerting/notify"
	"netmon/app/auth"
	"netmon/app/compliance"
	"netmon/app/fleet/agents"
	"netmon/app/fleet/enroll"
	"netmon/app/fleet/intake"
	"netmon/app/history"
	"netmon/app/procview"
	"netmon/app/reports"
	"netmon/app/topology"
	"netmon/capture"
	"netmon/capture/pcaprec"
	"netmon/capture/source"
	"netmon/collectors/flows"
	"netmon/collectors/geo"
)

// schemaNames is the schema name of every type a body reaches, declared
// here, in one table, rather than derived from Go packages: the names are
// the public contract (the console's generated types and every client's
// use them), so a Go type moving between packages must not rename them.
// router.Render refuses a type this table lacks, and TestSchemaNames
// refuses a name that is the old package-derived one.
//
// A table rather than a method on each type: most of these types belong
// to packages that know nothing of HTTP (store, capture, the agent wire
// protocol), and the names are the API's decision, reviewed in one place.
func schemaNames() map[reflect.Type]string {
	m := map[reflect.Type]string{}
	for _, e := range []schemaEntry{
		// app/api's own bodies.
		named[AgentSample]("AgentSample"),
		named[AlertEvent]("AlertEvent"),
		named[AlertEventDetail]("AlertEventDetail"),
		named[AlertEventPage]("AlertEventPage"),
		named[AlertEventShort]("AlertEventShort"),
		named[AlertNote]("AlertNote"),
		named[AlertNoteBody]("AlertNoteBody"),
		named[AlertSilence]("AlertSilence"),
		named[AlertSilenceCreate]("AlertSilenceCreate"),
		named[AnomalyBaseline]("AnomalyBaseline"),
		named[AuditEvent]("AuditEvent"),
		named[AuditVerification]("AuditVerification"),
		named[AuthErrorBody]("AuthErrorBody"),
		named[AuthStatus]("AuthStatus"),
		named[BandView]("BandView"),
		named[BaselinePoint]("BaselinePoint"),
		named[CaptureResult]("CaptureResult"),
		named[CaptureStart]("CaptureStart"),
		named[ChannelTestResult]("ChannelTestResult"),
		named[ComplianceReview]("ComplianceReview"),
		named[Connection]("Connection"),
		named[Conversation]("Conversation"),
		named[ConversationDetail]("ConversationDetail"),
		named[Decision]("Decision"),
		named[health.Deduction]("Deduction"),
		named[DeviceCreate]("DeviceCreate"),
		named[DeviceItem]("DeviceItem"),
		named[DNSItem]("DNSItem"),
		named[EndpointInfo]("EndpointInfo"),
		named[Enrichment]("Enrichment"),
		named[ErrorBody]("ErrorBody"),
		named[EventPage]("EventPage"),
		named[FlowEvent]("FlowEvent"),
		named[FlowRow]("FlowRow"),
		named[FlowSeriesOut]("FlowSeriesOut"),
		named[GeoItem]("GeoItem"),
		named[GeoStatus]("GeoStatus"),
		named[Health]("Health"),
		named[Incident]("Incident"),
		named[IncidentDetail]("IncidentDetail"),
		named[ISMSEntry]("ISMSEntry"),
		named[ISMSEntryIn]("ISMSEntryIn"),
		named[L7Item]("L7Item"),
		named[ListInfo]("ListInfo"),
		named[LoginResult]("LoginResult"),
		named[health.NetworkHealth]("NetworkHealth"),
		named[OKResult]("OKResult"),
		named[ProbeEndpoint]("ProbeEndpoint"),
		named[ProbeReport]("ProbeReport"),
		named[ProcessItem]("ProcessItem"),
		named[Readiness]("Readiness"),
		named[RecordStarted]("RecordingStarted"),
		named[ReviewCreate]("ReviewCreate"),
		named[SeriesLine]("SeriesLine"),
		named[StatusUser]("StatusUser"),
		named[SyslogRow]("SyslogRow"),
		named[ThreatIntel]("ThreatIntel"),
		named[UplinkBody]("UplinkBody"),
		named[WeekBandView]("WeekBandView"),

		// agentmode/wire
		named[wire.CertRequest]("AgentCertRequest"),
		named[wire.CertResponse]("AgentCertResponse"),
		named[wire.Connection]("AgentConnection"),
		named[wire.DNSObservation]("DNSObservation"),
		named[wire.Hello]("AgentHello"),
		named[wire.HelloResponse]("AgentHelloResponse"),
		named[wire.Interface]("AgentInterface"),
		named[wire.L7Observation]("L7Observation"),
		named[wire.ProcessTraffic]("ProcessTraffic"),
		named[wire.Remote]("ProcessRemote"),
		named[wire.TelemetryResponse]("TelemetryResponse"),
		named[wire.UnattributedReason]("AgentUnattributedTraffic"),

		// alerting
		named[alerting.AnomalyRule]("AnomalyRule"),
		named[alerting.BandwidthRule]("BandwidthRule"),
		named[alerting.Deviation]("AnomalyDeviation"),
		named[alerting.FWVendorRule]("FirewallRules"),
		named[alerting.IOCRule]("IOCRule"),
		named[alerting.IfaceRule]("InterfaceRule"),
		named[alerting.NewProcRule]("NewProcessRule"),
		named[alerting.NewTargetRule]("NewTargetRule"),
		named[alerting.Notifiers]("Notifiers"),
		named[alerting.PortsRule]("PortsRule"),
		named[alerting.SIEM]("SIEMConnector"),
		named[alerting.Settings]("AlertSettings"),

		// alerting/notify
		named[notify.Route]("AlertRoute"),

		// app/auth
		named[auth.LoginRequest]("LoginRequest"),
		named[auth.TokenCreate]("APITokenCreate"),
		named[auth.TokenCreated]("APITokenCreated"),
		named[auth.TokenView]("APIToken"),
		named[auth.UserCreate]("UserCreate"),
		named[auth.UserUpdate]("UserUpdate"),
		named[auth.UserView]("User"),

		// app/compliance
		named[compliance.Asset]("ISMSAsset"),
		named[compliance.Risk]("ISMSRisk"),
		named[compliance.SoAEntry]("SoAEntry"),
		named[compliance.Status]("ComplianceLogStatus"),
		named[compliance.StatusConfig]("ComplianceLogConfig"),
		named[compliance.StatusDaily]("ComplianceDailySeal"),
		named[compliance.StatusHourly]("ComplianceHourlyCheckpoint"),

		// app/fleet/agents
		named[agents.AgentDetail]("AgentDetail"),
		named[agents.AgentItem]("Agent"),

		// app/fleet/enroll
		named[enroll.EnrollTokenCreate]("EnrollTokenCreate"),
		named[enroll.EnrollTokenCreated]("EnrollTokenCreated"),
		named[enroll.EnrollTokenItem]("EnrollToken"),

		// app/fleet/intake
		named[intake.Batch]("TelemetryBatch"),
		named[intake.Rate]("AgentInterfaceRate"),

		// app/history
		named[history.Bucket]("TrafficBucket"),
		named[history.Comparison]("TrafficComparison"),
		named[history.Day]("TrafficDay"),
		named[history.Hour]("TrafficHour"),
		named[history.Result]("TrafficHistory"),
		named[history.Totals]("TrafficTotals"),

		// app/procview
		named[procview.Bucket]("ProcessBucket"),
		named[procview.Destination]("ProcessDestination"),
		named[procview.Detail]("ProcessDetail"),
		named[procview.Name]("ProcessName"),
		named[procview.Reason]("UnattributedTraffic"),
		named[procview.RelatedAlert]("ProcessAlert"),
		named[procview.Spike]("ProcessSpike"),
		named[procview.Summary]("ProcessSummary"),
		named[procview.Timeline]("ProcessTimeline"),

		// app/reports
		named[reports.ArchiveEntry]("ReportArchiveEntry"),
		named[reports.Schedule]("ReportSchedule"),
		named[reports.ScheduleInput]("ReportScheduleCreate"),
		named[reports.SLATarget]("SLATarget"),
		named[reports.SLATargetInput]("SLATargetCreate"),
		named[reports.TargetStatus]("SLATargetStatus"),
		// app/topology
		named[topology.AgentNode]("TopologyAgent"),
		named[topology.DeviceNode]("TopologyDevice"),
		named[topology.Link]("NetworkLink"),
		named[topology.Topology]("Topology"),

		// capture
		named[capture.Bucket]("SecondBucket"),
		named[capture.Domain]("DomainStat"),
		named[capture.Endpoint]("EndpointStat"),
		named[capture.Port]("PortStat"),
		named[capture.Snapshot]("LiveSnapshot"),

		// capture/pcaprec
		named[pcaprec.FileEntry]("RecordingFile"),
		named[pcaprec.Status]("RecordingStatus"),
		named[pcaprec.StopResponse]("RecordingStopped"),

		// capture/source
		named[source.Interface]("HostInterface"),

		// collectors/flows
		named[flows.ExporterStatus]("FlowExporter"),

		// collectors/geo
		named[geo.DatabaseInfo]("GeoDatabase"),

		// app/api's device series (bodies_devices.go)
		named[DeviceInterface]("DeviceInterface"),
		named[InterfaceRate]("InterfaceRate"),
		named[PolicyDelta]("FirewallPolicyDelta"),
		named[ResourceSample]("DeviceResource"),
		named[SDWANSample]("SDWANSample"),
		named[VPNSample]("VPNSample"),
		named[AlertDelivery]("AlertDelivery"),
		// The assistant (issue 32).
		named[ai.Conversation]("AssistantConversation"),
		named[ai.ConversationDetail]("AssistantConversationDetail"),
		named[ai.ConversationInput]("AssistantConversationCreate"),
		named[ai.Message]("AssistantMessage"),
		named[ai.MessageInput]("AssistantMessagePost"),
		named[ai.Preset]("AssistantPreset"),
		named[ai.Provider]("LLMProvider"),
		named[ai.ProviderInput]("LLMProviderWrite"),
		named[ai.ProviderTest]("LLMProviderTest"),
		named[ai.Status]("AssistantStatus"),
		named[prompt.Field]("AssistantContextField"),
		named[prompt.Mapping]("AssistantPseudonym"),
		named[prompt.Preview]("AssistantContextPreview"),
		named[prompt.PreviewFact]("AssistantContextFact"),
		named[CreatedID]("CreatedID"),
		named[ModelList]("LLMModelList"),
		named[PresetList]("AssistantPresetList"),
	} {
		m[e.t] = e.name
	}
	return m
}

// schemaEntry is one row of schemaNames.
type schemaEntry struct {
	t    reflect.Type
	name string
}

func named[T any](name string) schemaEntry { return schemaEntry{reflect.TypeFor[T](), name} }
