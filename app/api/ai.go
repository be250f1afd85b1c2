package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/app/ai"
	"netmon/app/ai/prompt"
	"netmon/app/api/router"
	"netmon/app/errs"
	"netmon/store"
)

// Assistant is the advisory assistant (*ai.Service): it validates,
// stores, streams and audits; these handlers translate.
type Assistant interface {
	Enabled() bool
	Status(ctx context.Context) (ai.Status, error)
	Presets() []ai.Preset
	ListProviders(ctx context.Context) ([]ai.Provider, error)
	CreateProvider(ctx context.Context, who store.AuditActor, in ai.ProviderInput) (ai.Provider, error)
	UpdateProvider(ctx context.Context, who store.AuditActor, id int64, in ai.ProviderInput) (ai.Provider, error)
	DeleteProvider(ctx context.Context, who store.AuditActor, id int64) error
	TestProvider(ctx context.Context, id int64) (ai.ProviderTest, error)
	Models(ctx context.Context, id int64) ([]string, error)
	CreateConversation(ctx context.Context, who store.AuditActor, site string, in ai.ConversationInput) (int64, error)
	ListConversations(ctx context.Context, f ai.ListFilter) ([]ai.Conversation, error)
	GetConversation(ctx context.Context, site string, id int64) (ai.ConversationDetail, error)
	ArchiveConversation(ctx context.Context, site string, id int64) error
	Preview(ctx context.Context, site string, id int64) (prompt.Preview, error)
	Begin(ctx context.Context, who store.AuditActor, site string, id int64, in ai.MessageInput) (*ai.Turn, error)
}

// aiOn answers 404 when the assistant is off (spec 4.5: only with -ai).
func (s *Server) aiOn() error {
	if s.deps.AI == nil || !s.deps.AI.Enabled() {
		return errs.NotFoundf("the AI assistant is off on this hub (start the hub with -ai)")
	}
	return nil
}

func (s *Server) aiStatus(c *gin.Context, _ *router.NoInput) (ai.Status, error) {
	if s.deps.AI == nil {
		return ai.Status{Enabled: false}, nil
	}
	return s.deps.AI.Status(c)
}

// PresetList is GET /api/v1/ai/presets.
type PresetList struct {
	Presets []ai.Preset `json:"presets"`
}

func (s *Server) aiPresets(_ *gin.Context, _ *router.NoInput) (PresetList, error) {
	if err := s.aiOn(); err != nil {
		return PresetList{}, err
	}
	return PresetList{Presets: s.deps.AI.Presets()}, nil
}

func (s *Server) aiListProviders(c *gin.Context, _ *router.NoInput) ([]ai.Provider, error) {
	if err := s.aiOn(); err != nil {
		return nil, err
	}
	return s.deps.AI.ListProviders(c)
}

type aiProviderIn struct {
	Body ai.ProviderInput `body:"json"`
}

func (s *Server) aiCreateProvider(c *gin.Context, in *aiProviderIn) (ai.Provider, error) {
	if err := s.aiOn(); err != nil {
		return ai.Provider{}, err
	}
	return s.deps.AI.CreateProvider(c, auditActor(c), in.Body)
}

type aiIDIn struct {
	ID int64 `path:"id" min:"1" doc:"id"`
}

type aiProviderUpdateIn struct {
	ID   int64            `path:"id" min:"1" doc:"provider id"`
	Body ai.ProviderInput `body:"json"`
}

func (s *Server) aiUpdateProvider(c *gin.Context, in *aiProviderUpdateIn) (ai.Provider, error) {
	if err := s.aiOn(); err != nil {
		return ai.Provider{}, err
	}
	return s.deps.AI.UpdateProvider(c, auditActor(c), in.ID, in.Body)
}

func (s *Server) aiDeleteProvider(c *gin.Context, in *aiIDIn) (OKResult, error) {
	if err := s.aiOn(); err != nil {
		return OKResult{}, err
	}
	if err := s.deps.AI.DeleteProvider(c, auditActor(c), in.ID); err != nil {
		return OKResult{}, err
	}
	return OKResult{OK: true}, nil
}

func (s *Server) aiTestProvider(c *gin.Context, in *aiIDIn) (ai.ProviderTest, error) {
	if err := s.aiOn(); err != nil {
		return ai.ProviderTest{}, err
	}
	return s.deps.AI.TestProvider(c, in.ID)
}

// ModelList is GET /api/v1/ai/providers/{id}/models.
type ModelList struct {
	Models []string `json:"models"`
}

func (s *Server) aiModels(c *gin.Context, in *aiIDIn) (ModelList, error) {
	if err := s.aiOn(); err != nil {
		return ModelList{}, err
	}
	m, err := s.deps.AI.Models(c, in.ID)
	return ModelList{Models: m}, err
}

type aiConversationListIn struct {
	Scope    string `query:"scope" enum:"fleet,agent,incident,anomaly,device" doc:"only conversations on this scope kind"`
	Ref      string `query:"ref" doc:"only conversations on this scope object (agent, incident, alert event or device id)"`
	Source   string `query:"source" enum:"user,triage,nightly" doc:"only conversations started by an operator, by triage or by the nightly summary"`
	Archived bool   `query:"archived" doc:"true: the archived conversations (kept 90 days) instead of the active ones"`
	Limit    int    `query:"limit" min:"1" max:"1000" default:"200" doc:"most recently updated first"`
}

func (s *Server) aiListConversations(c *gin.Context, in *aiConversationListIn) ([]ai.Conversation, error) {
	if err := s.aiOn(); err != nil {
		return nil, err
	}
	return s.deps.AI.ListConversations(c, ai.ListFilter{Site: ownSite(c), Scope: in.Scope, Ref: in.Ref, Source: in.Source,
		Archived: in.Archived, Limit: in.Limit})
}

type aiConversationCreateIn struct {
	Body ai.ConversationInput `body:"json"`
}

// CreatedID is {ok, id}.
type CreatedID struct {
	OK bool  `json:"ok"`
	ID int64 `json:"id"`
}

func (s *Server) aiCreateConversation(c *gin.Context, in *aiConversationCreateIn) (CreatedID, error) {
	if err := s.aiOn(); err != nil {
		return CreatedID{}, err
	}
	id, err := s.deps.AI.CreateConversation(c, auditActor(c), ownSite(c), in.Body)
	if err != nil {
		return CreatedID{}, err
	}
	return CreatedID{OK: true, ID: id}, nil
}

func (s *Server) aiGetConversation(c *gin.Context, in *aiIDIn) (ai.ConversationDetail, error) {
	if err := s.aiOn(); err != nil {
		return ai.ConversationDetail{}, err
	}
	return s.deps.AI.GetConversation(c, ownSite(c), in.ID)
}

func (s *Server) aiArchiveConversation(c *gin.Context, in *aiIDIn) (OKResult, error) {
	if err := s.aiOn(); err != nil {
		return OKResult{}, err
	}
	if err := s.deps.AI.ArchiveConversation(c, ownSite(c), in.ID); err != nil {
		return OKResult{}, err
	}
	return OKResult{OK: true}, nil
}

func (s *Server) aiPreview(c *gin.Context, in *aiIDIn) (prompt.Preview, error) {
	if err := s.aiOn(); err != nil {
		return prompt.Preview{}, err
	}
	return s.deps.AI.Preview(c, ownSite(c), in.ID)
}

type aiMessageIn struct {
	ID   int64           `path:"id" min:"1" doc:"conversation id"`
	Body ai.MessageInput `body:"json"`
}

// sseWriteTimeout bounds one event's write: a client that stops reading
// is cut off like any other slow client, and its answer ends partial.
const sseWriteTimeout = 10 * time.Second

// aiPostMessage streams the answer as server-sent events (spec 6.2).
// Every check that can fail with a status happens in Begin, before the
// 200 and the first event; after it, failures are {error} events.
func (s *Server) aiPostMessage(c *gin.Context, in *aiMessageIn) error {
	if err := s.aiOn(); err != nil {
		return err
	}
	// The body read to its end: only then does net/http watch the
	// connection and cancel the request's context when the client goes
	// away, which is what stops the provider's call on Cancel.
	_, _ = io.Copy(io.Discard, c.Request.Body)
	turn, err := s.deps.AI.Begin(c, auditActor(c), ownSite(c), in.ID, in.Body)
	if err != nil {
		return err
	}
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // a reverse proxy must not hold the stream back
	h.Set("X-Netmon-Conversation-Id", jsonInt(turn.ConversationID()))
	c.Writer.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(c.Writer)
	emit := func(ev ai.Event) error {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		_ = rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
		if _, err := c.Writer.Write(append(append([]byte("data: "), b...), '\n', '\n')); err != nil {
			return err
		}
		return rc.Flush()
	}
	// The headers go at once: the client knows the question was accepted
	// before the provider's first byte.
	_ = rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	_ = rc.Flush()
	turn.Stream(c.Request.Context(), emit)
	_ = rc.SetWriteDeadline(time.Time{})
	return nil
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
