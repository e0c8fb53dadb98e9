package accountweb

import (
	"fmt"
	"time"

	"github.com/arr-dev/arr/projections/callusage"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
)

// chartDays is how many days the account page's chart shows.
const chartDays = 30

// chart is an SVG bar chart of calls per day, laid out in Go so the
// template only places numbers (no script, no style attributes).
type chart struct {
	Days                                      int
	Width, Height, PlotX, LabelX, PlotTopText int
	PlotBottom, AxisText                      int
	From, To, Note                            string
	Total, Max                                int64
	Bars                                      []bar
}

type bar struct {
	X, Y, W, H string
	Day        string
	Calls      int64
}

// layoutChart places one bar per day, scaled to the busiest day.
func layoutChart(days []callusage.DailyCalls) chart {
	c := chart{Days: len(days), Width: 640, Height: 200, PlotX: 44, LabelX: 38, PlotTopText: 18, PlotBottom: 170, AxisText: 190}
	const top = 14
	for _, d := range days {
		c.Total += d.Calls
		c.Max = max(c.Max, d.Calls)
	}
	if len(days) == 0 {
		return c
	}
	c.From, c.To = days[0].Day, days[len(days)-1].Day
	slot := float64(c.Width-c.PlotX) / float64(len(days))
	scale := float64(c.PlotBottom-top) / float64(max(c.Max, 1))
	for i, d := range days {
		h := float64(d.Calls) * scale
		if d.Calls > 0 && h < 1 {
			h = 1
		}
		c.Bars = append(c.Bars, bar{
			X: fmt.Sprintf("%.2f", float64(c.PlotX)+float64(i)*slot+slot*0.125), W: fmt.Sprintf("%.2f", slot*0.75),
			Y: fmt.Sprintf("%.2f", float64(c.PlotBottom)-h), H: fmt.Sprintf("%.2f", h), Day: d.Day, Calls: d.Calls,
		})
	}
	return c
}

// usageChart reads this service's calls of the last 30 days from the usage
// read model. Without one (or when it cannot be read) the chart shows
// zeros and says why.
func (w *web) usageChart(c *gin.Context, accountID uuid.UUID) chart {
	now := w.now()
	zeros := func() []callusage.DailyCalls {
		out := make([]callusage.DailyCalls, chartDays)
		day := now.Truncate(24 * time.Hour)
		for i := range out {
			out[i] = callusage.DailyCalls{Day: day.AddDate(0, 0, i-(chartDays-1)).Format("2006-01-02")}
		}
		return out
	}
	if w.d.App.Queries.Usage == nil {
		ch := layoutChart(zeros())
		ch.Note = "This server does not record callusage."
		return ch
	}
	all, err := w.d.App.Queries.Usage.Account(c.Request.Context(), accountID, chartDays, now)
	if err != nil {
		w.log.Warn("reading usage for the account page", "err", err, "request_id", c.GetString("request_id"))
		ch := layoutChart(zeros())
		ch.Note = "Usage could not be read just now."
		return ch
	}
	var mine []callusage.DailyCalls
	for _, d := range all {
		if d.Service == w.svc {
			mine = append(mine, d)
		}
	}
	return layoutChart(mine)
}
