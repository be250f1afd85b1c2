package api

import (
	"github.com/gin-gonic/gin"

	"netmon/app/api/router"
	"netmon/app/auth"
	"netmon/store"
)

type idIn struct {
	ID int64 `path:"id" min:"1" doc:"numeric id"`
}

type userCreateIn struct {
	Body auth.UserCreate `body:"json"`
}

type userUpdateIn struct {
	ID   int64           `path:"id" min:"1" doc:"user id"`
	Body auth.UserUpdate `body:"json"`
}

type tokenCreateIn struct {
	Body auth.TokenCreate `body:"json"`
}

func (s *Server) listUsers(c *gin.Context, _ *router.NoInput) ([]auth.UserView, error) {
	return s.deps.Auth.ListUsers(c, callerOf(c))
}

func (s *Server) createUser(c *gin.Context, in *userCreateIn) (auth.UserView, error) {
	return s.deps.Auth.CreateUser(c, callerOf(c), in.Body)
}

func (s *Server) updateUser(c *gin.Context, in *userUpdateIn) (auth.UserView, error) {
	return s.deps.Auth.UpdateUser(c, callerOf(c), in.ID, in.Body)
}

func (s *Server) deleteUser(c *gin.Context, in *idIn) (OKResult, error) {
	return OKResult{OK: true}, s.deps.Auth.DeleteUser(c, callerOf(c), in.ID)
}

func (s *Server) listTokens(c *gin.Context, _ *router.NoInput) ([]auth.TokenView, error) {
	return s.deps.Auth.ListTokens(c, callerOf(c))
}

func (s *Server) createToken(c *gin.Context, in *tokenCreateIn) (auth.TokenCreated, error) {
	return s.deps.Auth.CreateToken(c, callerOf(c), in.Body)
}

func (s *Server) deleteToken(c *gin.Context, in *idIn) (OKResult, error) {
	return OKResult{OK: true}, s.deps.Auth.DeleteToken(c, callerOf(c), in.ID)
}

type auditIn struct {
	Limit    int    `query:"limit" min:"1" max:"1000" default:"100" doc:"most recent events to return"`
	Actor    string `query:"actor" doc:"exact username"`
	Action   string `query:"action" doc:"exact action, or a prefix ending in * (user.*)"`
	Resource string `query:"resource" doc:"substring of the target"`
	IP       string `query:"ip" doc:"exact client address"`
	Result   string `query:"result" enum:"ok,error,denied" doc:"outcome"`
	From     int64  `query:"from" min:"0" doc:"earliest ts, Unix seconds (inclusive)"`
	To       int64  `query:"to" min:"0" doc:"latest ts, Unix seconds (inclusive)"`
}

func (s *Server) listAudit(c *gin.Context, in *auditIn) ([]AuditEvent, error) {
	if in.From > 0 && in.To > 0 && in.From > in.To {
		return nil, invalidField("from", "query parameter \"from\" must not be after \"to\"")
	}
	list, err := s.deps.Audit.ListAudit(c, store.AuditFilter{
		Limit: in.Limit, Actor: in.Actor, Action: in.Action, Target: in.Resource,
		IP: in.IP, Result: in.Result, From: in.From, To: in.To,
	})
	return convertAll(list, auditEventOf), err
}

func (s *Server) verifyAudit(c *gin.Context, _ *router.NoInput) (AuditVerification, error) {
	v, err := s.deps.Audit.VerifyAudit(c)
	return auditVerificationOf(v), err
}
