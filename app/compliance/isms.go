package compliance

import (
	"fmt"
	"regexp"
	"strconv"
)

// ISMS records (spec 4.10 /api/v1/isms/*): the three registers an ISO
// 27001:2022 audit asks for first. An asset register (what is protected),
// a risk register with its treatment (what could go wrong and what is
// done about it, tied to the Annex A controls that treat it) and the
// Statement of Applicability (each Annex A control: applicable or not and
// why, and how far implemented). Validation lives here; the store keeps
// the records and app/api audits each change.

// ISMS kinds (the {kind} of the routes).
const (
	ISMSAsset = "assets"
	ISMSRisk  = "risks"
	ISMSSoA   = "soa"
)

// Asset is one entry of the asset register.
type Asset struct {
	Name           string `json:"name" doc:"what it is (1-200 characters)"`
	Type           string `json:"type" enum:"hardware,software,data,service,people,site"`
	Owner          string `json:"owner" doc:"accountable person or role"`
	Classification string `json:"classification" enum:"public,internal,confidential,restricted"`
	Location       string `json:"location"`
	Notes          string `json:"notes"`
}

// Risk is one entry of the risk register. Score is likelihood x impact
// (1-25), computed.
type Risk struct {
	Title      string   `json:"title"`
	Assets     []string `json:"assets" doc:"refs of the assets at risk"`
	Likelihood int      `json:"likelihood" min:"1" max:"5"`
	Impact     int      `json:"impact" min:"1" max:"5"`
	Score      int      `json:"score" doc:"likelihood x impact, computed"`
	Treatment  string   `json:"treatment" enum:"mitigate,accept,transfer,avoid"`
	Controls   []string `json:"controls" doc:"ISO 27001:2022 Annex A control ids that treat it (A.5.1 … A.8.34)"`
	Owner      string   `json:"owner"`
	Status     string   `json:"status" enum:"open,treated,accepted,closed"`
	Due        string   `json:"due" doc:"YYYY-MM-DD or empty"`
}

// SoAEntry is one line of the Statement of Applicability; its ref is the
// Annex A control id.
type SoAEntry struct {
	Applicable    bool   `json:"applicable"`
	Justification string `json:"justification" doc:"why it is (not) applicable; required when not applicable"`
	Implemented   string `json:"implemented" enum:"no,partial,yes"`
	Evidence      string `json:"evidence" doc:"where the evidence is (document, ticket, netmon evidence bundle)"`
}

// annexA is the number of controls of each ISO/IEC 27001:2022 Annex A
// theme: 5 organizational (37), 6 people (8), 7 physical (14), 8
// technological (34) — 93 in all.
var annexA = map[int]int{5: 37, 6: 8, 7: 14, 8: 34}

var reControl = regexp.MustCompile(`^A\.([5-8])\.([1-9][0-9]?)$`)

// AnnexAControls lists the 93 control ids in order.
func AnnexAControls() []string {
	var out []string
	for theme := 5; theme <= 8; theme++ {
		for i := 1; i <= annexA[theme]; i++ {
			out = append(out, "A."+strconv.Itoa(theme)+"."+strconv.Itoa(i))
		}
	}
	return out
}

// ValidControl reports whether id is an Annex A 2022 control id.
func ValidControl(id string) bool {
	m := reControl.FindStringSubmatch(id)
	if m == nil {
		return false
	}
	theme, _ := strconv.Atoi(m[1])
	n, _ := strconv.Atoi(m[2])
	return n <= annexA[theme]
}

var reDay = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// FieldError names the invalid field of an ISMS record.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func oneOf(v string, allowed ...string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// ValidateAsset checks an asset register entry.
func ValidateAsset(a *Asset) error {
	switch {
	case a.Name == "" || len(a.Name) > 200:
		return &FieldError{"name", "1 to 200 characters"}
	case !oneOf(a.Type, "hardware", "software", "data", "service", "people", "site"):
		return &FieldError{"type", "hardware, software, data, service, people or site"}
	case !oneOf(a.Classification, "public", "internal", "confidential", "restricted"):
		return &FieldError{"classification", "public, internal, confidential or restricted"}
	case len(a.Owner)+len(a.Location) > 400 || len(a.Notes) > 4000:
		return &FieldError{"notes", "too long"}
	}
	return nil
}

// ValidateRisk checks a risk and computes its score.
func ValidateRisk(r *Risk) error {
	switch {
	case r.Title == "" || len(r.Title) > 200:
		return &FieldError{"title", "1 to 200 characters"}
	case r.Likelihood < 1 || r.Likelihood > 5:
		return &FieldError{"likelihood", "1 to 5"}
	case r.Impact < 1 || r.Impact > 5:
		return &FieldError{"impact", "1 to 5"}
	case !oneOf(r.Treatment, "mitigate", "accept", "transfer", "avoid"):
		return &FieldError{"treatment", "mitigate, accept, transfer or avoid"}
	case !oneOf(r.Status, "open", "treated", "accepted", "closed"):
		return &FieldError{"status", "open, treated, accepted or closed"}
	case r.Due != "" && !reDay.MatchString(r.Due):
		return &FieldError{"due", "YYYY-MM-DD"}
	case r.Treatment == "mitigate" && len(r.Controls) == 0:
		return &FieldError{"controls", "a mitigated risk names the Annex A controls that treat it"}
	}
	for _, c := range r.Controls {
		if !ValidControl(c) {
			return &FieldError{"controls", fmt.Sprintf("%q is not an ISO 27001:2022 Annex A control id (A.5.1 … A.8.34)", c)}
		}
	}
	if r.Assets == nil {
		r.Assets = []string{}
	}
	if r.Controls == nil {
		r.Controls = []string{}
	}
	r.Score = r.Likelihood * r.Impact
	return nil
}

// ValidateSoA checks a Statement of Applicability line for control ref.
func ValidateSoA(ref string, s *SoAEntry) error {
	switch {
	case !ValidControl(ref):
		return &FieldError{"ref", "the ref of an SoA entry is its Annex A control id (A.5.1 … A.8.34)"}
	case !s.Applicable && s.Justification == "":
		return &FieldError{"justification", "a control excluded from the SoA needs its justification"}
	case !oneOf(s.Implemented, "no", "partial", "yes"):
		return &FieldError{"implemented", "no, partial or yes"}
	case len(s.Justification)+len(s.Evidence) > 4000:
		return &FieldError{"justification", "too long"}
	}
	return nil
}
