package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/temoto/robotstxt"
)

// robots reads each site's robots.txt once per crawl and tests URLs
// against it. Not safe for concurrent use.
type robots struct {
	get   Getter
	agent string
	sites map[string]robotsFile
}

// robotsFile is a site's robots.txt, or why it could not be read.
type robotsFile struct {
	data *robotstxt.RobotsData
	err  error
}

func newRobots(get Getter, agent string) *robots {
	return &robots{get: get, agent: agent, sites: map[string]robotsFile{}}
}

// check returns nil when the site's robots.txt lets the agent fetch the
// canonical URL u, ErrDisallowed when it does not, and another error when
// robots.txt could not be read (then nothing on the site is fetched).
//
// As Google reads robots.txt: 2xx is the rules, 4xx (404 and the rest) is
// no rules, 5xx and an unreachable site are a failure, and a file that
// does not parse disallows everything.
func (r *robots) check(ctx context.Context, u string) error {
	site := Site(u)
	f, ok := r.sites[site]
	if !ok {
		f = r.fetch(ctx, site)
		r.sites[site] = f
	}
	if f.err != nil {
		return f.err
	}
	pu, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("%q: %w", u, err)
	}
	if !f.data.TestAgent(pu.RequestURI(), r.agent) {
		return ErrDisallowed
	}
	return nil
}

func (r *robots) fetch(ctx context.Context, site string) robotsFile {
	resp, err := r.get.Get(ctx, site+"/robots.txt", nil)
	if err != nil {
		return robotsFile{err: fmt.Errorf("robots.txt could not be read: %w", err)}
	}
	switch {
	case resp.Status >= 200 && resp.Status <= 299:
		data, err := robotstxt.FromBytes(resp.Body)
		if err != nil {
			reason := err.Error()
			var pe *robotstxt.ParseError
			if errors.As(err, &pe) {
				msgs := make([]string, len(pe.Errs))
				for i, e := range pe.Errs {
					msgs[i] = e.Error()
				}
				reason = strings.Join(msgs, "; ")
			}
			return robotsFile{err: fmt.Errorf("robots.txt does not parse, so nothing on %s is fetched: %s", site, reason)}
		}
		return robotsFile{data: data}
	case resp.Status >= 400 && resp.Status <= 499:
		data, _ := robotstxt.FromStatusAndBytes(resp.Status, nil) // allow all
		return robotsFile{data: data}
	}
	return robotsFile{err: fmt.Errorf("robots.txt answered HTTP %d, so nothing on %s is fetched", resp.Status, site)}
}
