package flows

import (
	"encoding/json"
	"net/netip"

	"netmon/collectors/flows/netflow"
	"netmon/store/record"
)

// templateBody is the JSON body of a stored template (record.FlowTemplate).
type templateBody struct {
	Options bool            `json:"options"`
	Fields  []netflow.Field `json:"fields"`
}

// encodeTemplates turns templates into rows to store.
func encodeTemplates(ts []netflow.Template) ([]record.FlowTemplate, error) {
	out := make([]record.FlowTemplate, 0, len(ts))
	for _, t := range ts {
		body, err := json.Marshal(templateBody{Options: t.Options, Fields: t.Fields})
		if err != nil {
			return nil, err
		}
		out = append(out, record.FlowTemplate{Exporter: t.Exporter.String(), Domain: int64(t.Domain), ID: int(t.ID), Version: int(t.Version), Body: string(body)})
	}
	return out, nil
}

// decodeTemplates turns stored rows back into templates. A row this
// version cannot read is skipped, not fatal: the exporter resends its
// templates within minutes.
func decodeTemplates(rows []record.FlowTemplate) []netflow.Template {
	var out []netflow.Template
	for _, r := range rows {
		var b templateBody
		addr, err := netip.ParseAddr(r.Exporter)
		if err != nil || json.Unmarshal([]byte(r.Body), &b) != nil {
			continue
		}
		out = append(out, netflow.Template{Exporter: addr, Domain: uint32(r.Domain), ID: uint16(r.ID), Version: uint16(r.Version), Options: b.Options, Fields: b.Fields})
	}
	return out
}
