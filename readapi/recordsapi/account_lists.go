package recordsapi

import (
	"errors"
	"html/template"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/projections/lists"
	"github.com/arr-dev/arr/projections/monitors"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/readapi/httpx"
)

// maxListUpload caps a list file uploaded on the account page.
const maxListUpload = 4 << 20

// mountAccountLists registers the records account page's lists section:
//
//	GET  /account/lists         the account's lists and the import form
//	POST /account/lists         import a CSV list (multipart: file, name)
//	POST /account/contact-data/erase  destroy the account's data key
func (s *server) mountAccountLists(r gin.IRouter) error {
	t, err := template.ParseFS(templateFiles, "templates/lists.html")
	if err != nil {
		return err
	}
	now := s.d.App.Now
	if now == nil {
		now = time.Now
	}
	g := r.Group("/account", httpx.Session(s.d.App.Queries.Identities, now))
	g.GET("/lists", handle(func(c *gin.Context) error {
		if _, ok := httpx.SessionOf(c); !ok {
			c.Redirect(http.StatusSeeOther, "/account")
			return nil
		}
		return s.listsPage(c, t, http.StatusOK, c.Query("notice"), "")
	}))
	// ?notice=imported&list=ID shows how the list just imported matched.
	req := g.Group("", httpx.RequireSession(fail))
	req.POST("/lists", handle(func(c *gin.Context) error { return s.importList(c, t) }))
	req.POST("/contact-data/erase", handle(s.eraseContact))
	req.POST("/monitors", handle(func(c *gin.Context) error { return s.createMonitor(c, t) }))
	req.POST("/monitors/:id/delete", handle(s.deleteMonitor))
	return nil
}

type listsView struct {
	Email, CSRF, Notice, Error string
	Lists                      []lists.ListInfo
	CanImport                  bool
	MaxRows                    int
	Monitors                   []monitors.Monitor
	// Created is a monitor just created, with its secret: shown once.
	Created *commands.CreatedMonitor
	// Match is how the list just imported matched.
	Match *lists.MatchSummary
}

func (s *server) listsPage(c *gin.Context, t *template.Template, status int, notice, errMsg string) error {
	return s.listsPageWith(c, t, status, notice, errMsg, nil)
}

func (s *server) listsPageWith(c *gin.Context, t *template.Template, status int, notice, errMsg string, created *commands.CreatedMonitor) error {
	p, _ := httpx.SessionOf(c)
	ls, err := s.lists.Lists(c.Request.Context(), p.AccountID)
	if err != nil {
		return err
	}
	ms, _, err := s.d.App.Queries.Monitors.List(c.Request.Context(), p.AccountID, false, maxLimit, 0)
	if err != nil {
		return err
	}
	acct, err := s.d.App.Queries.Identities.Account(c.Request.Context(), p.AccountID)
	if err != nil {
		return err
	}
	var match *lists.MatchSummary
	if id, err := uuid.Parse(c.Query("list")); err == nil && notice == "imported" {
		if sum, err := s.lists.Summary(c.Request.Context(), p.AccountID, id); err == nil {
			match = &sum
		}
	}
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Header("Cache-Control", "no-store")
	c.Header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
	c.Status(status)
	_ = t.Execute(c.Writer, listsView{Email: acct.Email, CSRF: httpx.CSRFToken(c), Notice: notice, Error: errMsg, Lists: ls,
		CanImport: s.d.App.Queries.Contacts != nil, MaxRows: commands.MaxListRows, Monitors: ms, Created: created, Match: match})
	return nil
}

// createMonitor is POST /account/monitors (list_id, url, layers): the page
// again, showing the new monitor's secret once (never in a URL).
func (s *server) createMonitor(c *gin.Context, t *template.Template) error {
	p, _ := httpx.SessionOf(c)
	listID, err := uuid.Parse(c.PostForm("list_id"))
	if err != nil {
		return s.listsPage(c, t, http.StatusBadRequest, "", "choose one of your lists to watch")
	}
	res, err := s.d.App.Commands.CreateMonitor.Handle(c.Request.Context(), commands.CreateMonitor{AccountID: p.AccountID, ListID: listID,
		URL: c.PostForm("url"), Layers: c.PostForm("layers"), Metadata: httpx.CommandMetadata(c, "session:"+p.SessionID.String())})
	if errors.Is(err, domain.ErrInvalid) || errors.Is(err, domain.ErrNotFound) {
		return s.listsPage(c, t, httpx.ProblemOf(err).Status, "", httpx.ProblemOf(err).Message)
	}
	if err != nil {
		return err
	}
	if s.d.App.WaitFor != nil {
		if err := s.d.App.WaitFor(c.Request.Context(), monitors.Name, res.Position); err != nil {
			return err
		}
	}
	return s.listsPageWith(c, t, http.StatusCreated, "monitor-created", "", &res)
}

// deleteMonitor is POST /account/monitors/{id}/delete.
func (s *server) deleteMonitor(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return domain.NotFound("monitor_not_found", "no monitor %s in this account", c.Param("id"))
	}
	pos, err := s.d.App.Commands.DeleteMonitor.Handle(c.Request.Context(), commands.DeleteMonitor{AccountID: p.AccountID, MonitorID: id,
		Metadata: httpx.CommandMetadata(c, "session:"+p.SessionID.String())})
	if err != nil {
		return err
	}
	if s.d.App.WaitFor != nil && pos > 0 {
		if err := s.d.App.WaitFor(c.Request.Context(), monitors.Name, pos); err != nil {
			return err
		}
	}
	c.Redirect(http.StatusSeeOther, "/account/lists?notice=monitor-deleted")
	return nil
}

func (s *server) importList(c *gin.Context, t *template.Template) error {
	p, _ := httpx.SessionOf(c)
	fh, err := c.FormFile("file")
	if err != nil {
		return s.listsPage(c, t, http.StatusBadRequest, "", "choose a CSV file to import")
	}
	if fh.Size > maxListUpload {
		return s.listsPage(c, t, http.StatusRequestEntityTooLarge, "", "the file is over 4 MiB; import it with `arr import list`")
	}
	f, err := fh.Open()
	if err != nil {
		return err
	}
	defer f.Close()
	var m *commands.ListMapping
	if js := strings.TrimSpace(c.PostForm("mapping")); js != "" {
		mm, err := commands.ReadListMapping(strings.NewReader(js))
		if err != nil {
			return s.listsPage(c, t, http.StatusBadRequest, "", httpx.ProblemOf(err).Message)
		}
		m = &mm
	}
	l, err := commands.ParseListFileWith(io.LimitReader(f, maxListUpload), m)
	if err != nil {
		return s.listsPage(c, t, http.StatusBadRequest, "", err.Error())
	}
	name := c.PostForm("name")
	if name == "" {
		name = fh.Filename
	}
	res, err := s.d.App.Commands.ImportList.Handle(c.Request.Context(), commands.ImportList{AccountID: p.AccountID, Name: name, List: l,
		Metadata: httpx.CommandMetadata(c, "session:"+p.SessionID.String())})
	if errors.Is(err, domain.ErrInvalid) {
		return s.listsPage(c, t, http.StatusBadRequest, "", httpx.ProblemOf(err).Message)
	}
	if err != nil {
		return err
	}
	if s.d.App.WaitFor != nil {
		if err := s.d.App.WaitFor(c.Request.Context(), lists.Name, res.Position); err != nil {
			return err
		}
	}
	c.Redirect(http.StatusSeeOther, "/account/lists?notice=imported&list="+res.ListID.String())
	return nil
}

func (s *server) eraseContact(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	pos, err := s.d.App.Commands.EraseContactData.Handle(c.Request.Context(), commands.EraseContactData{AccountID: p.AccountID,
		Metadata: httpx.CommandMetadata(c, "session:"+p.SessionID.String())})
	if err != nil {
		return err
	}
	if s.d.App.WaitFor != nil {
		if err := s.d.App.WaitFor(c.Request.Context(), lists.Name, pos); err != nil {
			return err
		}
	}
	c.Redirect(http.StatusSeeOther, "/account/lists?notice=erased")
	return nil
}
