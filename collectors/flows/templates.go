package flows

import (
	"encoding/json"
	"net/netip"

	"netmon/collectors/flows/netflow"
)

// StoredTemplate is a v9/IPFIX template as a database row keeps it: the
// key columns and a JSON body of the rest. The hub's TemplateStore maps
// it to the store's row type; the body's format is this package's.
type StoredTemplate struct {
	Exporter string
	Domain   int64
	ID       int
	Version  int
	Body     string
}

// templateBody is the JSON body of a StoredTemplate.
type templateBody struct {
	Options bool            `json:"options"`
	Fields  []netflow.Field `json:"fields"`
}

// EncodeTemplates turns templates into rows to store.
func EncodeTemplates(ts []netflow.Template) ([]StoredTemplate, error) {
	out := make([]StoredTemplate, 0, len(ts))
	for _, t := range ts {
		body, err := json.Marshal(templateBody{Options: t.Options, Fields: t.Fields})
		if err != nil {
			return nil, err
		}
		out = append(out, StoredTemplate{Exporter: t.Exporter.String(), Domain: int64(t.Domain), ID: int(t.ID), Version: int(t.Version), Body: string(body)})
	}
	return out, nil
}

// DecodeTemplates turns stored rows back into templates. A row this
// version cannot read is skipped, not fatal: the exporter resends its
// templates within minutes.
func DecodeTemplates(rows []StoredTemplate) []netflow.Template {
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
