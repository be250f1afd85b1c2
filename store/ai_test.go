package store_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/storetest"
)

func inTx(t *testing.T, db *store.DB, fn func(tx *store.Tx) error) {
	t.Helper()
	if err := db.InTx(t.Context(), fn); err != nil {
		t.Fatal(err)
	}
}

// TestAIProviders: a provider round-trips without and then with its
// sealed key; a taken name is ErrConflict; the bootstrap seed writes
// only into an empty table; update keeps the key; delete is final.
func TestAIProviders(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		temp := 0.2
		p := store.AIProvider{Name: "ollama", Kind: "local-a", BaseURL: "http://127.0.0.1:11434", DefaultModel: "qwen3:0.6b",
			Enabled: true, NoThink: true, MaxTokens: 512, Temperature: &temp, Pseudonymise: true, IsLocal: true,
			CreatedTS: 1795000000, UpdatedTS: 1795000000}
		var id int64
		inTx(t, db, func(tx *store.Tx) error {
			var err error
			if id, err = tx.InsertAIProvider(ctx, p); err != nil {
				return err
			}
			return tx.SetAIProviderKey(ctx, id, []byte{1, 2, 3})
		})
		p.ID, p.APIKey = id, []byte{1, 2, 3}
		got, err := db.AIProvider(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, p); diff != "" {
			t.Errorf("AIProvider (-got, +want):\n%s", diff)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error { _, err := tx.InsertAIProvider(ctx, p); return err })
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("second provider named %q: %v, want ErrConflict", p.Name, err)
		}
		var seeded int64
		inTx(t, db, func(tx *store.Tx) error {
			var err error
			seeded, err = tx.SeedAIProvider(ctx, store.AIProvider{Name: "bootstrap", Kind: "compat", BaseURL: "http://127.0.0.1:8000", CreatedTS: 1, UpdatedTS: 1})
			return err
		})
		if seeded != 0 {
			t.Errorf("seed into a table with a provider stored id %d", seeded)
		}
		p.Name, p.Temperature, p.Enabled, p.UpdatedTS = "ollama-lab", nil, false, 1795000100
		inTx(t, db, func(tx *store.Tx) error { return tx.UpdateAIProvider(ctx, p) })
		got, _ = db.AIProvider(ctx, id)
		if diff := cmp.Diff(got, p); diff != "" {
			t.Errorf("after update (-got, +want):\n%s", diff)
		}
		inTx(t, db, func(tx *store.Tx) error { return tx.DeleteAIProvider(ctx, id) })
		if _, err := db.AIProvider(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted provider: %v, want ErrNotFound", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteAIProvider(ctx, id) }); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second delete: %v, want ErrNotFound", err)
		}
		inTx(t, db, func(tx *store.Tx) error {
			var err error
			seeded, err = tx.SeedAIProvider(ctx, store.AIProvider{Name: "bootstrap", Kind: "compat", BaseURL: "http://127.0.0.1:8000", Enabled: true, CreatedTS: 1, UpdatedTS: 1})
			return err
		})
		list, err := db.AIProviders(ctx)
		if err != nil || len(list) != 1 || list[0].ID != seeded || list[0].Name != "bootstrap" || list[0].Temperature != nil {
			t.Errorf("after seeding an empty table: %+v, %v", list, err)
		}
	})
}

// TestAIConversations: site scoping (another site's id is ErrNotFound),
// the list filters, archive, messages in order, the latest complete
// analyses, and the prune of conversations archived before a time.
func TestAIConversations(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		conv := func(kind, ref, site, source string, ts int64) int64 {
			var id int64
			inTx(t, db, func(tx *store.Tx) error {
				var err error
				id, err = tx.InsertAIConversation(ctx, store.AIConversation{ScopeKind: kind, ScopeRef: ref, Site: site, Source: source,
					ProviderID: 7, Model: "m", CreatedBy: "alice", CreatedTS: ts, UpdatedTS: ts, Pseudonymised: true})
				return err
			})
			return id
		}
		a := conv("agent", "3", "istanbul", "user", 100)
		b := conv("incident", "9", "ankara", "triage", 200)
		f := conv("fleet", "", "", "nightly", 300)
		msg := func(id int64, role, content, errText string, partial bool, ts int64) {
			inTx(t, db, func(tx *store.Tx) error {
				_, err := tx.InsertAIMessage(ctx, store.AIMessage{ConversationID: id, Role: role, Content: content, TokensIn: 10, TokensOut: 5, Error: errText, Partial: partial, CreatedTS: ts})
				return err
			})
		}
		msg(a, "context", "facts", "", false, 101)
		msg(a, "user", "why?", "", false, 101)
		msg(a, "assistant", "because ip-1", "", false, 102)
		msg(b, "assistant", "cut", "client went away", true, 201)
		msg(f, "assistant", "the day", "", false, 301)

		for _, tc := range []struct {
			kind, ref, source string
			want              bool
		}{{"incident", "9", "triage", true}, {"incident", "9", "user", false}, {"incident", "8", "triage", false}} {
			if got, err := db.HasAIConversation(ctx, tc.kind, tc.ref, tc.source); err != nil || got != tc.want {
				t.Errorf("HasAIConversation(%s, %s, %s) = %v, %v; want %v", tc.kind, tc.ref, tc.source, got, err, tc.want)
			}
		}
		if _, err := db.AIConversation(ctx, "ankara", a); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("istanbul's conversation read from ankara: %v, want ErrNotFound", err)
		}
		c, err := db.AIConversation(ctx, "istanbul", a)
		if err != nil || c.ScopeRef != "3" || c.Pseudonyms != "{}" || !c.Pseudonymised {
			t.Errorf("AIConversation: %+v, %v", c, err)
		}
		c.Title, c.ContextSHA256, c.ContextBytes, c.Pseudonyms, c.UpdatedTS = "why?", "abc", 1234, `{"x":1}`, 150
		inTx(t, db, func(tx *store.Tx) error { return tx.UpdateAIConversation(ctx, c) })
		c.Title = "second title is ignored"
		inTx(t, db, func(tx *store.Tx) error { return tx.UpdateAIConversation(ctx, c) })
		c, _ = db.AIConversation(ctx, "", a)
		if c.Title != "why?" || c.ContextBytes != 1234 || c.Pseudonyms != `{"x":1}` || c.UpdatedTS != 150 {
			t.Errorf("after update: %+v", c)
		}

		ids := func(f store.AIConversationFilter) []int64 {
			list, err := db.AIConversations(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			out := []int64{}
			for _, c := range list {
				out = append(out, c.ID)
			}
			return out
		}
		for _, tc := range []struct {
			name string
			f    store.AIConversationFilter
			want []int64
		}{
			{"all active, newest first", store.AIConversationFilter{}, []int64{f, b, a}},
			{"site", store.AIConversationFilter{Site: "istanbul"}, []int64{a}},
			{"scope", store.AIConversationFilter{ScopeKind: "incident", ScopeRef: "9"}, []int64{b}},
			{"source", store.AIConversationFilter{Source: "nightly"}, []int64{f}},
			{"limit", store.AIConversationFilter{Limit: 1}, []int64{f}},
			{"archived: none yet", store.AIConversationFilter{Archived: true}, []int64{}},
		} {
			if diff := cmp.Diff(ids(tc.f), tc.want); diff != "" {
				t.Errorf("%s (-got, +want):\n%s", tc.name, diff)
			}
		}
		msgs, err := db.AIMessages(ctx, a)
		if err != nil || len(msgs) != 3 || msgs[0].Role != "context" || msgs[2].Content != "because ip-1" {
			t.Errorf("AIMessages: %+v, %v", msgs, err)
		}
		latest, err := db.LatestAIAnalyses(ctx, "", 0, 1000, 3)
		if err != nil || len(latest) != 2 || latest[0].Conversation.ID != f || latest[1].Message.Content != "because ip-1" {
			t.Errorf("LatestAIAnalyses (the partial answer is no analysis): %+v, %v", latest, err)
		}
		if latest, _ := db.LatestAIAnalyses(ctx, "", 102, 301, 3); len(latest) != 1 || latest[0].Message.CreatedTS != 102 {
			t.Errorf("LatestAIAnalyses in [102, 301): %+v", latest)
		}
		if latest, _ := db.LatestAIAnalyses(ctx, "istanbul", 0, 1000, 3); len(latest) != 1 || latest[0].Conversation.ID != a {
			t.Errorf("LatestAIAnalyses of istanbul: %+v", latest)
		}

		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.ArchiveAIConversation(ctx, "ankara", a, 500) }); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("archive from another site: %v, want ErrNotFound", err)
		}
		inTx(t, db, func(tx *store.Tx) error { return tx.ArchiveAIConversation(ctx, "istanbul", a, 500) })
		inTx(t, db, func(tx *store.Tx) error { return tx.ArchiveAIConversation(ctx, "", b, 900) })
		inTx(t, db, func(tx *store.Tx) error { return tx.ArchiveAIConversation(ctx, "", a, 700) }) // keeps 500
		if diff := cmp.Diff(ids(store.AIConversationFilter{Archived: true}), []int64{b, a}); diff != "" {
			t.Errorf("archived (-got, +want):\n%s", diff)
		}
		n, err := db.PruneAIConversations(ctx, 600)
		if err != nil || n != 1 {
			t.Errorf("prune before 600: %d, %v; want 1", n, err)
		}
		if _, err := db.AIConversation(ctx, "", a); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("pruned conversation: %v", err)
		}
		if msgs, _ := db.AIMessages(ctx, a); len(msgs) != 0 {
			t.Errorf("pruned conversation kept %d messages", len(msgs))
		}
		if diff := cmp.Diff(ids(store.AIConversationFilter{Archived: true}), []int64{b}); diff != "" {
			t.Errorf("archived after prune (-got, +want):\n%s", diff)
		}
	})
}
