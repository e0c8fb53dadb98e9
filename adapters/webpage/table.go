package webpage

import (
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// layoutTable reports whether a table lays out a page rather than holding
// data: role presentation or none, a single row, or a cell holding a
// table or a heading. Its cells are read as blocks in order.
func layoutTable(t *html.Node) bool {
	switch attr(t, "role") {
	case "presentation", "none":
		return true
	}
	rows := 0
	layout := false
	eachRow(t, func(tr *html.Node, _ bool) {
		rows++
		for c := tr.FirstChild; c != nil && !layout; c = c.NextSibling {
			if c.Type == html.ElementNode && (c.DataAtom == atom.Td || c.DataAtom == atom.Th) && holdsBlocks(c) {
				layout = true
			}
		}
	})
	return layout || rows <= 1
}

// holdsBlocks reports whether n holds a table or a heading.
func holdsBlocks(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c.DataAtom == atom.Table || headingLevel(c.DataAtom) > 0 || holdsBlocks(c) {
			return true
		}
	}
	return false
}

// eachRow calls f with every row of t (not of tables inside it), in
// order, saying whether the row is in the table's head.
func eachRow(t *html.Node, f func(tr *html.Node, head bool)) {
	for c := t.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch c.DataAtom {
		case atom.Tr:
			f(c, false)
		case atom.Thead, atom.Tbody, atom.Tfoot:
			for r := c.FirstChild; r != nil; r = r.NextSibling {
				if r.Type == html.ElementNode && r.DataAtom == atom.Tr {
					f(r, c.DataAtom == atom.Thead)
				}
			}
		}
	}
}

// cell is one column of a row: a cell spanning columns fills several,
// its text in the first only; a cell spanning rows repeats its text below.
type cell struct {
	text  string
	first bool
}

// table adds a data table: its caption as prose, then a Row per row. The
// head (thead, or th cells only before any other row) names the columns;
// a table that is all head is read as rows.
func (w *walker) table(t *html.Node) {
	for c := t.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.DataAtom == atom.Caption {
			w.out.add(Prose, inlineText(c))
		}
	}
	var head [][]cell // head rows, kept to name the columns
	var names []string
	var row []cell      // one row's cells, reused
	var below []rowSpan // per column: text still spanning down
	rows := 0
	eachRow(t, func(tr *html.Node, inHead bool) {
		var allTh bool
		row, allTh = expandRow(tr, &below, row[:0])
		if inHead || (rows == 0 && allTh) {
			head = append(head, slices.Clone(row))
			names = columnNames(head)
			return
		}
		rows++
		w.out.add(Row, rowText(names, row))
	})
	if rows == 0 {
		for _, r := range head {
			w.out.add(Row, rowText(nil, r))
		}
	}
}

type rowSpan struct {
	text  string
	rows  int
	first bool
}

// maxColumns bounds a row's width: a cell starting past it takes one
// column and spans nothing, so absurd colspans and rowspans cost no more
// than their text.
const maxColumns = 128

// expandRow lays a row's cells out in columns, with the cells of rows
// above that span down into it; allTh says whether its own cells are all
// th.
func expandRow(tr *html.Node, below *[]rowSpan, row []cell) ([]cell, bool) {
	allTh := true
	col := 0
	carry := func() {
		for col < len(*below) && (*below)[col].rows > 0 {
			(*below)[col].rows--
			row = append(row, cell{text: (*below)[col].text, first: (*below)[col].first})
			col++
		}
	}
	for c := tr.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || (c.DataAtom != atom.Td && c.DataAtom != atom.Th) {
			continue
		}
		allTh = allTh && c.DataAtom == atom.Th
		carry()
		text := inlineText(c)
		cols, rows := span(c, "colspan", maxColumns-col), span(c, "rowspan", 1000)
		if col >= maxColumns {
			cols, rows = 1, 1
		}
		for k := 0; k < cols; k++ {
			row = append(row, cell{text: text, first: k == 0})
			if rows > 1 {
				for len(*below) <= col {
					*below = append(*below, rowSpan{})
				}
				(*below)[col] = rowSpan{text: text, rows: rows - 1, first: k == 0}
			}
			col++
		}
	}
	carry()
	return row, allTh && len(row) > 0
}

// span is a cell's colspan or rowspan, 1 when missing or bad, at most
// limit (and at least 1).
func span(c *html.Node, key string, limit int) int {
	n, err := strconv.Atoi(strings.TrimSpace(attr(c, key)))
	if err != nil || n < 1 {
		return 1
	}
	return max(min(n, limit), 1)
}

// columnNames names each column from the head rows, outermost first ("Value
// min" under a "Value" spanning "min" and "max").
func columnNames(head [][]cell) []string {
	var names []string
	for _, row := range head {
		for i, c := range row {
			for len(names) <= i {
				names = append(names, "")
			}
			switch {
			case c.text == "" || strings.HasSuffix(names[i], c.text):
			case names[i] == "":
				names[i] = c.text
			default:
				names[i] += " " + c.text
			}
		}
	}
	return names
}

// rowText joins a row's cells: "Name: cell; Name: cell" when the columns
// have names, else "cell | cell". Empty cells are left out.
func rowText(names []string, row []cell) string {
	var parts []string
	for i, c := range row {
		if !c.first || c.text == "" {
			continue
		}
		if i < len(names) && names[i] != "" && names[i] != c.text {
			parts = append(parts, names[i]+": "+c.text)
		} else {
			parts = append(parts, c.text)
		}
	}
	if len(names) > 0 {
		return strings.Join(parts, "; ")
	}
	return strings.Join(parts, " | ")
}
