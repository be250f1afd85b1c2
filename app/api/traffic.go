package api

import (
	"time"

	"github.com/gin-gonic/gin"

	"netmon/app/history"
)

type historyIn struct {
	Minutes int `query:"minutes" min:"1" max:"10080" default:"60" doc:"length of the window ending now, in minutes (at most 7 days)"`
}

type compareIn struct {
	Days int `query:"days" min:"2" max:"30" default:"7" doc:"number of local days, today included"`
}

func (s *Server) history(c *gin.Context, in *historyIn) (history.Result, error) {
	return history.History(c, s.deps.History, in.Minutes, time.Now())
}

func (s *Server) compare(c *gin.Context, in *compareIn) (history.Comparison, error) {
	return history.Compare(c, s.deps.History, in.Days, time.Now(), time.Local)
}
